//! The partition handle API from C (`tests/c/partition_test.c`), three times: built plainly,
//! under AddressSanitizer + UndefinedBehaviorSanitizer, and under ThreadSanitizer (the test
//! program runs ten threads on one handle and on handles of their own).
//!
//! The Rust library is not instrumented: TSan sees neither its locks (std's futex-based
//! `RwLock` and `OnceLock`) nor its loads and stores, only the `memcpy` / `malloc` calls it
//! intercepts, so it would report the registry's writes made under the write lock as races. The
//! TSan run links the shared library and tells TSan to ignore what is called from it
//! (`called_from_lib:`, TSan's way for uninstrumented libraries): it checks the C side, the
//! program's threads sharing one handle and the bytes it returned.
//!
//! The partitions are packed here from the fixtures (the bytes this library embeds by default)
//! with `nrtucode-pack`, signed with the committed test key, then spoiled one way each: unsigned,
//! signed by another key, a signed byte changed, a stored blob's byte changed, a compressed
//! stream's byte changed, a compressed blob's signed length one byte past its stream, truncated.
//! The C program opens each, checks the refusal's code and message, and compares the handle's
//! answers with the library's own embedded ones.

mod common;

use common::{CRATE_DIR, NATIVE_LIBS, deps_dir, gcc};
use std::path::{Path, PathBuf};
use std::process::Command;

use nrtucode::partition::{BlobId, Codec, Partition, TableClass, format};
use nrtucode_pack::{Blobs, Compression, PackOptions, SigningKey, pack_with, sign_partition};

const TEST_KEY: &str = include_str!("../../../keys/test-ed25519.pem");
const TEST_KEY_PUB: &str = include_str!("../../../keys/test-ed25519.pub.pem");
fn pack(class: TableClass, compression: Compression, key: Option<&SigningKey>) -> Vec<u8> {
    let options = PackOptions {
        security_counter: 3,
        key,
    };
    pack_with(&Blobs::fixtures(class), &options, compression)
        .expect("pack the fixtures")
        .0
}

/// `bytes` with one byte of the first blob of `codec` (its stored bytes) changed.
fn spoil_blob(mut bytes: Vec<u8>, codec: Codec) -> Vec<u8> {
    let tables = Partition::parse(&bytes).expect("parses").untrusted_tables();
    let entry = tables
        .blob_ids()
        .filter_map(|id: BlobId| tables.toc_entry(id))
        .find(|e| e.codec == codec && e.stored_len > 16)
        .expect("a blob of that codec");
    let at = entry.offset as usize + 7;
    bytes[at] ^= 0x40;
    bytes
}

/// `bytes` (a partition `key` signed) with its first compressed blob's decoded length one byte
/// longer than its stream gives, signed again: authentic, and it does not decode.
fn short_stream(mut bytes: Vec<u8>, key: &SigningKey) -> Vec<u8> {
    let count = |at: usize| usize::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]));
    let toc_count = count(format::H_TOC_COUNT);
    let [_, toc, _, _] = format::layout(count(format::H_DESC_COUNT), toc_count).expect("layout");
    let entry = (0..toc_count)
        .map(|n| toc + n * format::TOC_LEN)
        .find(|&e| bytes[e + format::T_CODEC] == format::CODEC_DEFLATE)
        .expect("a compressed blob");
    let len = &mut bytes[entry + format::T_DECODED_LEN..][..4];
    let longer = u32::from_le_bytes(len.try_into().expect("4 bytes")) + 1;
    len.copy_from_slice(&longer.to_le_bytes());
    sign_partition(&mut bytes, key).expect("a partition");
    bytes
}

/// Writes every partition the C program opens into `dir`.
fn write_partitions(dir: &Path) {
    let key = SigningKey::from_pem(TEST_KEY).expect("test key");
    let other = SigningKey::generate();
    let full = pack(TableClass::Full, Compression::Stored, Some(&key));
    let deflate = pack(TableClass::Full, Compression::Deflate, Some(&key));
    let mut bad_signature = full.clone();
    bad_signature[format::H_SECURITY_COUNTER] ^= 1;
    let files: [(&str, Vec<u8>); 10] = [
        ("full.part", full.clone()),
        ("full-deflate.part", deflate.clone()),
        (
            "front.part",
            pack(TableClass::Front, Compression::Stored, Some(&key)),
        ),
        (
            "unsigned.part",
            pack(TableClass::Full, Compression::Stored, None),
        ),
        (
            "other-key.part",
            pack(TableClass::Full, Compression::Stored, Some(&other)),
        ),
        ("bad-signature.part", bad_signature),
        ("damaged-blob.part", spoil_blob(full.clone(), Codec::Stored)),
        (
            "damaged-stream.part",
            spoil_blob(deflate.clone(), Codec::Deflate),
        ),
        ("short-stream.part", short_stream(deflate, &key)),
        ("truncated.part", full[..full.len() / 2].to_vec()),
    ];
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).expect("write a partition");
    }
    std::fs::write(dir.join("key.pub.pem"), TEST_KEY_PUB).expect("write the key");
    std::fs::write(dir.join("key.raw"), key.public_key().as_bytes()).expect("write the key");
    std::fs::write(dir.join("test-ed25519.pem"), TEST_KEY).expect("write the private key");
}

/// How the C program links the library.
enum Link {
    /// The static library.
    Static,
    /// The shared library, installed under its SONAME in a directory the rpath names.
    Shared,
}

/// Builds the C program with `flags` against the library and runs it over `dir`.
fn build_and_run(work: &Path, dir: &Path, name: &str, flags: &[&str], link: Link) {
    let include = Path::new(CRATE_DIR).join("include");
    let source = Path::new(CRATE_DIR).join("tests/c/partition_test.c");
    let staticlib = deps_dir().join("libnrtucode_capi.a");
    let cdylib = deps_dir().join("libnrtucode_capi.so");
    for lib in [&staticlib, &cdylib] {
        assert!(lib.exists(), "{} not built", lib.display());
    }
    let lib_dir = work.join("lib");
    std::fs::create_dir_all(&lib_dir).expect("lib dir");
    for file in ["libnrtucode.so.0", "libnrtucode_capi.so"] {
        std::fs::copy(&cdylib, lib_dir.join(file)).expect("install the shared library");
    }
    let (search, rpath) = (
        format!("-L{}", lib_dir.display()),
        format!("-Wl,-rpath,{}", lib_dir.display()),
    );
    let suppressions = work.join("tsan.supp");
    std::fs::write(
        &suppressions,
        "# The uninstrumented Rust library: its locks are invisible to TSan.\n\
         called_from_lib:libnrtucode.so.0\n",
    )
    .expect("write the suppressions");
    let exe = work.join(name);
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "-std=c99".as_ref(),
        "-Wall".as_ref(),
        "-Wextra".as_ref(),
        "-Werror".as_ref(),
        "-g".as_ref(),
        "-I".as_ref(),
        include.as_os_str(),
    ];
    args.extend(flags.iter().map(std::ffi::OsStr::new));
    args.extend([source.as_os_str(), "-o".as_ref(), exe.as_os_str()]);
    match link {
        Link::Static => {
            args.push(staticlib.as_os_str());
            args.extend(NATIVE_LIBS.iter().map(std::ffi::OsStr::new));
        }
        Link::Shared => {
            for arg in [
                search.as_str(),
                "-lnrtucode_capi",
                rpath.as_str(),
                "-lpthread",
            ] {
                args.push(arg.as_ref());
            }
        }
    }
    gcc(&args);
    let class = if nrtucode_capi::FRONT {
        "front"
    } else {
        "full"
    };
    let out = Command::new(&exe)
        .arg(dir)
        .arg(class)
        .env_remove("NRTUCODE_MPLUS_ON_MARIANA")
        .env_remove("NEURON_UCODE_FLAVOR")
        // Any report fails the run; a leak report too.
        .env(
            "ASAN_OPTIONS",
            "detect_leaks=1:abort_on_error=0:exitcode=90",
        )
        .env(
            "UBSAN_OPTIONS",
            "print_stacktrace=1:halt_on_error=1:exitcode=91",
        )
        .env("LD_LIBRARY_PATH", &lib_dir)
        .env(
            "TSAN_OPTIONS",
            format!(
                "halt_on_error=1:exitcode=92:suppressions={}",
                suppressions.display()
            ),
        )
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    print!("{name}: {stdout}");
    assert!(out.status.success(), "{name}: {stdout}\n{stderr}");
    let summary = stdout
        .lines()
        .find_map(|l| l.strip_prefix("partition_c: "))
        .expect("summary line");
    let passed: u32 = summary
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .expect("passed count");
    assert!(passed > 5000, "{name}: only {passed} checks ran");
    assert!(summary.ends_with(" 0 failed"), "{name}: {summary}");
    assert!(
        !stderr.contains("Sanitizer"),
        "{name}: a sanitizer reported:\n{stderr}"
    );
}

/// The directory of partitions, packed once for the three runs (packing with deflate is the
/// slow part of this test) and kept under `CARGO_TARGET_TMPDIR` (written again by every run),
/// and a work directory of `name`'s own, removed when the test ends.
fn work_dir(name: &str) -> (tempfile::TempDir, PathBuf) {
    static PARTITIONS: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let library = if nrtucode_capi::FRONT {
        "front"
    } else {
        "full"
    };
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = PARTITIONS.get_or_init(|| {
        let dir = tmp.join(format!("capi-partitions-{library}"));
        std::fs::create_dir_all(&dir).expect("partitions dir");
        write_partitions(&dir);
        dir
    });
    let work = tempfile::Builder::new()
        .prefix(&format!("capi-{name}-{library}-"))
        .tempdir_in(tmp)
        .expect("work dir");
    (work, dir.clone())
}

#[test]
#[cfg(target_os = "linux")]
#[cfg_attr(miri, ignore = "runs gcc and a C program")]
#[cfg_attr(
    feature = "partition",
    ignore = "compares with the embedded answers; a build with feature partition answers from NRTUCODE_PARTITION (tests/install_c.rs checks it)"
)]
fn the_handle_api_from_c() {
    let (work, dir) = work_dir("partition");
    build_and_run(work.path(), &dir, "partition_test", &["-O1"], Link::Static);
}

#[test]
#[cfg(target_os = "linux")]
#[cfg_attr(miri, ignore = "runs gcc and a C program")]
#[cfg_attr(
    feature = "partition",
    ignore = "compares with the embedded answers; a build with feature partition answers from NRTUCODE_PARTITION (tests/install_c.rs checks it)"
)]
fn the_handle_api_from_c_under_asan_and_ubsan() {
    let (work, dir) = work_dir("partition-asan");
    build_and_run(
        work.path(),
        &dir,
        "partition_test_asan",
        &[
            "-O1",
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer",
        ],
        Link::Static,
    );
}

#[test]
#[cfg(target_os = "linux")]
#[cfg_attr(miri, ignore = "runs gcc and a C program")]
#[cfg_attr(
    feature = "partition",
    ignore = "compares with the embedded answers; a build with feature partition answers from NRTUCODE_PARTITION (tests/install_c.rs checks it)"
)]
fn the_handle_api_from_c_under_tsan() {
    let (work, dir) = work_dir("partition-tsan");
    build_and_run(
        work.path(),
        &dir,
        "partition_test_tsan",
        &["-O1", "-fsanitize=thread"],
        Link::Shared,
    );
}
