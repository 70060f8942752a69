//! The library record: what this library is, what it answers from and what it trusts, readable
//! from its file without loading it (`nrtucode inspect libnrtucode.so`, or `readelf -p
//! .nrtucode_library libnrtucode.so`).
//!
//! Format `nrtucode-library/1`: [`RECORD_LEN`] bytes in the ELF section `.nrtucode_library`
//! ([`SECTION`]), UTF-8 text lines `name=value` each ended by `\n`, the first line the format's
//! name, NUL bytes after the last line. The names, in this order:
//!
//! | name | value |
//! | --- | --- |
//! | `version` | the crate's version (`0.3.0`) |
//! | `features` | the enabled features of `full`, `front`, `partition`, comma-separated |
//! | `blob_source` | `embedded` (blobs in the library) or `partition` (the signed partition named at run time) |
//! | `blob_origin` | `embedded` only: where the blobs came from (`fixtures`, or the carved library's build ID) |
//! | `partition_variable` | `partition` only: the environment variable naming the partition file, `NRTUCODE_PARTITION` |
//! | `key` | `partition` only: the ed25519 public key built into this library, 64 hex digits |
//! | `test_key` | `partition` only: `yes` when it is the repository's test key (`NRTUCODE_PARTITION_KEY=test`), else `no` |
//! | `min_security_counter` | `partition` only: the lowest security counter accepted |
//! | `class` | the table class answered: `full` or `front` |
//!
//! A reader ignores a name it does not know; a change a reader of version 1 would misread
//! (a name's meaning, a value's form) takes a new format name. Built at compile time (an
//! overflow of [`RECORD_LEN`] fails the build); ELF targets only, whose section names are
//! free (Mach-O, COFF, XCOFF and wasm name sections their own ways: the record is then in the
//! default data section, found by no section name).

/// The record's ELF section.
pub const SECTION: &str = ".nrtucode_library";

/// The record's format, its first line.
pub const FORMAT: &str = "nrtucode-library/1";

/// The record's size: its lines, then NUL bytes.
pub const RECORD_LEN: usize = 512;

/// The record, in its own section; `nrtucode_library_report` refers to it, so the linker keeps
/// it (a cdylib is linked with `--gc-sections`).
//
// The attribute is `unsafe` because a section name can place data where the linker expects
// code or a special table; `.nrtucode_library` is a name of this library's own that no linker
// script or runtime gives a meaning, and it holds immutable bytes nothing but readers of the
// file look at.
#[cfg_attr(
    not(any(
        target_vendor = "apple",
        target_os = "windows",
        target_os = "uefi",
        target_os = "aix",
        target_family = "wasm"
    )),
    unsafe(link_section = ".nrtucode_library")
)]
#[used]
pub static LIBRARY_RECORD: [u8; RECORD_LEN] = record();

/// The record of this build.
const fn record() -> [u8; RECORD_LEN] {
    let mut w = Writer::new();
    w.text(FORMAT);
    w.text("\nversion=");
    w.text(env!("CARGO_PKG_VERSION"));
    w.text("\nfeatures=");
    let mut first = true;
    let features: [(bool, &str); 3] = [
        (cfg!(feature = "full"), "full"),
        (cfg!(feature = "front"), "front"),
        (cfg!(feature = "partition"), "partition"),
    ];
    let mut i = 0;
    while i < features.len() {
        if features[i].0 {
            if !first {
                w.text(",");
            }
            w.text(features[i].1);
            first = false;
        }
        i += 1;
    }
    w.text("\n");
    source(&mut w);
    w.bytes
}

/// The partition-backed build's lines: the source and what it trusts.
#[cfg(feature = "partition")]
const fn source(w: &mut Writer) {
    use crate::from_env_partition::{PARTITION_KEY, PARTITION_POLICY, TEST_KEY};
    w.text("blob_source=partition\npartition_variable=");
    w.text(crate::from_env::PARTITION_VAR);
    w.text("\nkey=");
    w.hex(PARTITION_KEY.as_bytes());
    w.text(if TEST_KEY {
        "\ntest_key=yes"
    } else {
        "\ntest_key=no"
    });
    w.text("\nmin_security_counter=");
    w.decimal(PARTITION_POLICY.min_security_counter);
    w.text("\nclass=");
    w.text(PARTITION_POLICY.expected_class.name());
    w.text("\n");
}

/// The build with embedded blobs' lines: where they came from.
#[cfg(not(feature = "partition"))]
const fn source(w: &mut Writer) {
    w.text("blob_source=embedded\nblob_origin=");
    w.text(nrtucode::catalog::BLOB_ORIGIN);
    w.text(if crate::FRONT {
        "\nclass=front\n"
    } else {
        "\nclass=full\n"
    });
}

/// Writes the record's bytes at compile time.
struct Writer {
    bytes: [u8; RECORD_LEN],
    len: usize,
}

impl Writer {
    const fn new() -> Self {
        Self {
            bytes: [0; RECORD_LEN],
            len: 0,
        }
    }

    /// Appends `text` (past [`RECORD_LEN`], the index fails the build).
    const fn text(&mut self, text: &str) {
        let text = text.as_bytes();
        let mut i = 0;
        while i < text.len() {
            self.bytes[self.len] = text[i];
            self.len += 1;
            i += 1;
        }
    }

    /// Appends `bytes` in lowercase hex.
    #[cfg_attr(not(feature = "partition"), allow(dead_code))]
    const fn hex(&mut self, bytes: &[u8]) {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut i = 0;
        while i < bytes.len() {
            self.bytes[self.len] = DIGITS[(bytes[i] >> 4) as usize];
            self.bytes[self.len + 1] = DIGITS[(bytes[i] & 0xf) as usize];
            self.len += 2;
            i += 1;
        }
    }

    /// Appends `n` in decimal.
    #[cfg_attr(not(feature = "partition"), allow(dead_code))]
    const fn decimal(&mut self, n: u32) {
        let mut digits = [0u8; 10];
        let (mut n, mut count) = (n, 0);
        loop {
            digits[count] = b'0' + (n % 10) as u8;
            count += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        while count > 0 {
            count -= 1;
            self.bytes[self.len] = digits[count];
            self.len += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines of the record, up to its NUL fill.
    fn lines() -> Vec<(String, String)> {
        let end = LIBRARY_RECORD
            .iter()
            .position(|&b| b == 0)
            .expect("NUL-filled");
        assert!(LIBRARY_RECORD[end..].iter().all(|&b| b == 0));
        let text = core::str::from_utf8(&LIBRARY_RECORD[..end]).expect("UTF-8");
        let mut lines = text.split_terminator('\n');
        assert_eq!(lines.next(), Some(FORMAT));
        assert!(text.ends_with('\n'), "{text}");
        lines
            .map(|line| {
                let (name, value) = line.split_once('=').expect("name=value");
                (name.to_owned(), value.to_owned())
            })
            .collect()
    }

    #[test]
    fn the_record_names_the_version_the_features_and_the_source() {
        let lines = lines();
        let get = |name: &str| {
            lines
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("version"), Some(env!("CARGO_PKG_VERSION")));
        let features = get("features").expect("features");
        assert_eq!(
            features.split(',').any(|f| f == "full"),
            cfg!(feature = "full")
        );
        if cfg!(feature = "partition") {
            assert_eq!(get("blob_source"), Some("partition"));
            assert_eq!(get("partition_variable"), Some("NRTUCODE_PARTITION"));
            let key = get("key").expect("key");
            assert_eq!(key.len(), 64);
            assert!(matches!(get("test_key"), Some("yes" | "no")));
            assert!(
                get("min_security_counter")
                    .expect("counter")
                    .parse::<u32>()
                    .is_ok()
            );
        } else {
            assert_eq!(get("blob_source"), Some("embedded"));
            assert_eq!(get("blob_origin"), Some(nrtucode::catalog::BLOB_ORIGIN));
            assert_eq!(
                get("class"),
                Some(if crate::FRONT { "front" } else { "full" })
            );
            assert_eq!(get("key"), None);
        }
    }

    #[test]
    fn numbers_and_hex_are_written_in_full() {
        let mut w = Writer::new();
        w.decimal(0);
        w.text(" ");
        w.decimal(4_294_967_295);
        w.text(" ");
        w.hex(&[0x00, 0x0f, 0xa5, 0xff]);
        assert_eq!(&w.bytes[..w.len], b"0 4294967295 000fa5ff");
    }
}
