//! `nrtucode inspect libnrtucode.so`: what a C library built from `nrtucode-capi` answers from
//! and trusts, read from its file (never loaded): the library record in its `.nrtucode_library`
//! section (format `nrtucode-library/1`, documented in the capi crate's `library_record` module
//! and in docs/c-abi.md), read through `object`'s ELF reader from the bytes the CLI's one
//! reader (`input`) read. It says the build (version, features), the blob source (blobs
//! embedded in the library, and their origin; or the signed partition named at run time by
//! `NRTUCODE_PARTITION`), and for a partition-backed library the key built into it (its key ID,
//! whether it is the repository's test key), the minimum security counter and the table class.
//!
//! JSON (`--json`), one object, keys in this order:
//!
//! ```text
//! { "format": "nrtucode-inspect-library/1", "file": "...", "record": "nrtucode-library/1",
//!   "version": "0.3.0", "features": ["partition"],
//!   "blob_source": "embedded" | "partition", "blob_origin": "fixtures" | null,
//!   "partition_variable": "NRTUCODE_PARTITION" | null,
//!   "key_id": "<16 hex>" | null, "key": "<64 hex>" | null, "test_key": true | false | null,
//!   "min_security_counter": 1 | null, "class": "full" | "front" }
//! ```
//!
//! Exit 0 when the record is read (a library trusting the test key also warns on stderr), 65
//! when the record is of another format or malformed, naming the fault.

use std::path::Path;
use std::process::ExitCode;

use nrtucode::partition::PublicKey;
use nrtucode_facts::hex::{bytes_of_hex, lower_hex};
use object::{Object as _, ObjectSection as _};
use serde::Serialize;

use crate::shared::error::Error;
use crate::shared::exit::Exit;
use crate::shared::output::Mode;
use crate::shared::output::{err_line, out_fmt};
use crate::shared::trust::TrustArgs;

/// The record's section in the library.
const SECTION: &str = ".nrtucode_library";

/// The record's format, its first line.
const RECORD_FORMAT: &str = "nrtucode-library/1";

/// The largest record read: the capi writes 512 bytes; a section larger than this is refused.
const MAX_RECORD_BYTES: usize = 4096;

/// What a library's record says, as `inspect` shows it.
#[derive(Debug, PartialEq, Eq, Serialize)]
pub(crate) struct LibraryDoc {
    format: &'static str,
    file: String,
    record: &'static str,
    version: String,
    features: Vec<String>,
    blob_source: String,
    blob_origin: Option<String>,
    partition_variable: Option<String>,
    key_id: Option<String>,
    key: Option<String>,
    test_key: Option<bool>,
    min_security_counter: Option<u32>,
    class: String,
}

/// The record of the ELF file `elf` (named `file`), when it has the section: `None` for an
/// ELF that is not a shared library and has no record (or that `object` does not read: the
/// flashable-form reader says why), an error for a shared library without a record (not a
/// partition either) and for a record of another format or a malformed one.
pub(crate) fn read(file: &str, elf: &[u8]) -> Option<Result<LibraryDoc, String>> {
    let object = object::File::parse(elf).ok()?;
    let Some(section) = object.section_by_name(SECTION) else {
        return (object.kind() == object::ObjectKind::Dynamic).then(|| {
            Err(format!(
                "a shared library with no nrtucode library record ({SECTION}): not a C library \
                 built from nrtucode-capi (an older build has none), and a library, not a \
                 partition: nrtucode pack {file} -o PART packs a vendor library's blobs"
            ))
        });
    };
    Some(
        section
            .data()
            .map_err(|e| format!("{SECTION}: {e}"))
            .and_then(|data| parse(file, data)),
    )
}

/// The record in `data` (the section's bytes).
fn parse(file: &str, data: &[u8]) -> Result<LibraryDoc, String> {
    if data.len() > MAX_RECORD_BYTES {
        return Err(format!(
            "{SECTION}: {} bytes, more than the {MAX_RECORD_BYTES} a library record may have",
            data.len()
        ));
    }
    let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let text = std::str::from_utf8(&data[..end])
        .map_err(|e| format!("{SECTION}: not UTF-8 at offset {}", e.valid_up_to()))?;
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    if first != RECORD_FORMAT {
        return Err(format!(
            "{SECTION}: a library record of format {first:?}; this nrtucode reads {RECORD_FORMAT}"
        ));
    }
    let mut fields: Vec<(&str, &str)> = Vec::new();
    for (n, line) in lines.enumerate() {
        let (name, value) = line
            .split_once('=')
            .ok_or_else(|| format!("{SECTION}: line {}: not name=value: {line:?}", n + 2))?;
        fields.push((name, value));
    }
    let get = |name: &str| {
        fields
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| (*v).to_owned())
    };
    let need = |name: &str| get(name).ok_or_else(|| format!("{SECTION}: no {name}"));
    let blob_source = need("blob_source")?;
    let partition = match blob_source.as_str() {
        "partition" => true,
        "embedded" => false,
        other => {
            return Err(format!(
                "{SECTION}: blob_source {other:?} is neither embedded nor partition"
            ));
        }
    };
    let (key, key_id, test_key, min_security_counter) = if partition {
        let key = need("key")?;
        let bytes: [u8; 32] = bytes_of_hex(&key)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| format!("{SECTION}: key {key:?} is not 64 hex digits"))?;
        let key_id = lower_hex(&PublicKey::from_bytes(bytes).key_id());
        let test_key = match need("test_key")?.as_str() {
            "yes" => true,
            "no" => false,
            other => {
                return Err(format!(
                    "{SECTION}: test_key {other:?} is neither yes nor no"
                ));
            }
        };
        let counter = need("min_security_counter")?;
        let counter = counter
            .parse()
            .map_err(|_| format!("{SECTION}: min_security_counter {counter:?} is not a number"))?;
        (Some(key), Some(key_id), Some(test_key), Some(counter))
    } else {
        (None, None, None, None)
    };
    Ok(LibraryDoc {
        format: "nrtucode-inspect-library/1",
        file: file.to_owned(),
        record: RECORD_FORMAT,
        version: need("version")?,
        features: need("features")?
            .split(',')
            .filter(|f| !f.is_empty())
            .map(str::to_owned)
            .collect(),
        blob_origin: if partition { None } else { get("blob_origin") },
        partition_variable: if partition {
            Some(need("partition_variable")?)
        } else {
            None
        },
        blob_source,
        key_id,
        key,
        test_key,
        min_security_counter,
        class: need("class")?,
    })
}

/// The text form.
fn text(doc: &LibraryDoc) -> String {
    let mut out = format!(
        "file: {}\nlibrary: the nrtucode C library {} (record {})\nfeatures: {}\n",
        doc.file,
        doc.version,
        doc.record,
        doc.features.join(", ")
    );
    match (&doc.partition_variable, &doc.key_id) {
        (Some(variable), Some(key_id)) => {
            out.push_str(&format!(
                "blob source: the signed partition named at run time by {variable} (no blob in the library)\n"
            ));
            let test = if doc.test_key == Some(true) {
                " (the repository's TEST key: anyone can sign a partition it accepts)"
            } else {
                ""
            };
            out.push_str(&format!(
                "key built into this library: key ID {key_id}{test}\nkey (ed25519): {}\n",
                doc.key.as_deref().unwrap_or_default()
            ));
            if let Some(n) = doc.min_security_counter {
                out.push_str(&format!("minimum security counter: {n}\n"));
            }
        }
        _ => out.push_str(&format!(
            "blob source: blobs embedded in this library ({})\n",
            doc.blob_origin.as_deref().unwrap_or("origin not recorded")
        )),
    }
    out.push_str(&format!("table class: {}\n", doc.class));
    out
}

/// Prints `doc` (text or JSON); warns when the library trusts the test key. The partition's
/// checks (`--public-key`, `--min-security-counter`, `--memory-map`) are refused for a library:
/// a usage error (64).
pub(crate) fn show(
    path: &Path,
    doc: &LibraryDoc,
    trust: &TrustArgs,
    memory_map: Option<&Path>,
    json: bool,
) -> ExitCode {
    for (given, flag) in [
        (!trust.public_key.is_empty(), "--public-key"),
        (
            trust.min_security_counter.is_some(),
            "--min-security-counter",
        ),
        (trust.class.is_some(), "--class"),
        (trust.insecure_skip_signature, "--insecure-skip-signature"),
        (memory_map.is_some(), "--memory-map"),
    ] {
        if given {
            return Mode::json(json).fail(Error::new(
                Exit::Usage,
                format!(
                    "{}: a C library (its record names the key built into it): {flag} is for a partition",
                    path.display()
                ),
            ));
        }
    }
    if json {
        let s = crate::shared::output::json_document(doc);
        out_fmt!("{s}");
    } else {
        out_fmt!("{}", text(doc));
    }
    if doc.test_key == Some(true) {
        err_line!(
            "nrtucode: warning: {}: the key built into this library is the repository's TEST key (built with NRTUCODE_PARTITION_KEY=test): for tests only",
            path.display()
        );
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "a52b065e4af1127f7952aed7207139f324a32948ead00af362bb81002ca44dc9";

    fn partition_record() -> String {
        format!(
            "nrtucode-library/1\nversion=0.3.0\nfeatures=partition\nblob_source=partition\npartition_variable=NRTUCODE_PARTITION\nkey={KEY}\ntest_key=yes\nmin_security_counter=2\nclass=full\n\0\0\0"
        )
    }

    #[test]
    fn a_partition_backed_record_names_the_key_its_id_and_the_variable() {
        let doc = parse("lib.so", partition_record().as_bytes()).expect("a record");
        let bytes: [u8; 32] = bytes_of_hex(KEY).unwrap().try_into().unwrap();
        let id = lower_hex(&PublicKey::from_bytes(bytes).key_id());
        assert_eq!(doc.key_id.as_deref(), Some(id.as_str()));
        assert_eq!(doc.test_key, Some(true));
        assert_eq!(doc.min_security_counter, Some(2));
        assert_eq!(doc.features, ["partition"]);
        let said = text(&doc);
        assert!(
            said.contains(&format!(
                "key built into this library: key ID {id} (the repository's TEST key"
            )),
            "{said}"
        );
        assert!(
            said.contains("named at run time by NRTUCODE_PARTITION"),
            "{said}"
        );
    }

    #[test]
    fn an_embedded_record_names_the_blobs_origin() {
        let record = b"nrtucode-library/1\nversion=0.3.0\nfeatures=full\nblob_source=embedded\nblob_origin=fixtures\nclass=full\n\0";
        let doc = parse("lib.so", record).expect("a record");
        assert_eq!(doc.key, None);
        assert_eq!(doc.blob_origin.as_deref(), Some("fixtures"));
        assert!(text(&doc).contains("blob source: blobs embedded in this library (fixtures)"));
    }

    #[test]
    fn a_record_of_another_format_or_malformed_is_refused_naming_the_fault() {
        let record = partition_record();
        for (bad, said) in [
            (
                record.replace("library/1", "library/2"),
                "format \"nrtucode-library/2\"",
            ),
            (
                record.replace("test_key=yes", "test_key=maybe"),
                "test_key \"maybe\"",
            ),
            (record.replace(&KEY[..2], "zz"), "not 64 hex digits"),
            (
                record.replace("min_security_counter=2\n", ""),
                "no min_security_counter",
            ),
            (
                record.replace("class=full\n", "class full\n"),
                "line 9: not name=value",
            ),
            ("x".repeat(5000), "more than the 4096"),
        ] {
            let e = parse("lib.so", bad.as_bytes()).expect_err(said);
            assert!(e.contains(said), "{e} / {said}");
        }
        let e = parse("lib.so", b"nrtucode-library/1\n\xff").expect_err("not UTF-8");
        assert!(e.contains("not UTF-8 at offset 19"), "{e}");
    }
}
