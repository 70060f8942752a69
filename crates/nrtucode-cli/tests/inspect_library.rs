//! `nrtucode inspect libnrtucode.so`: the partition-backed C library built from
//! `crates/nrtucode-capi` (`cargo build -p nrtucode-capi --no-default-features --features
//! partition`, into a target directory of its own under cargo's temporary directory), once with
//! the test key named (`NRTUCODE_PARTITION_KEY=test`) and once with a key generated here; the
//! CLI reads each library's record from its file and says the blob source, the key built into
//! it (its ID, whether it is the test key) and the build. Ignored by default, since it builds
//! the C library: CI runs it with `cargo test -p nrtucode-cli --test inspect_library --
//! --ignored`. Linux only (the record is an ELF section).
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const NRTUCODE: &str = env!("CARGO_BIN_EXE_nrtucode");

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds the partition-backed C library with `key` as `NRTUCODE_PARTITION_KEY` and copies it
/// to `dir/NAME` (the next build overwrites cargo's file).
fn build_library(key: &std::ffi::OsStr, dir: &Path, name: &str) -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("inspect-library");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "build",
            "--quiet",
            "-p",
            "nrtucode-capi",
            "--no-default-features",
            "--features",
            "partition",
        ])
        .current_dir(root())
        .env("CARGO_TARGET_DIR", &target)
        .env("NRTUCODE_PARTITION_KEY", key)
        .env_remove("NRTUCODE_PARTITION_MIN_COUNTER")
        .env_remove("NRTUCODE_PARTITION_CLASS")
        .output()
        .expect("run cargo");
    assert!(
        out.status.success(),
        "the C library did not build:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let copy = dir.join(name);
    std::fs::copy(target.join("debug/libnrtucode_capi.so"), &copy).expect("copy the library");
    copy
}

fn nrtucode(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(NRTUCODE)
        .args(args)
        .output()
        .expect("run nrtucode")
}

/// The key ID `nrtucode inspect` gives a partition signed with the private key `key`.
fn key_id_of(key: &Path, dir: &Path) -> String {
    let part = dir.join(format!(
        "{}.part",
        key.file_stem().unwrap().to_string_lossy()
    ));
    let o = nrtucode(&[
        "pack".as_ref(),
        "--fixtures".as_ref(),
        "full".as_ref(),
        "--key".as_ref(),
        key.as_os_str(),
        "-o".as_ref(),
        part.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = nrtucode(&["inspect".as_ref(), part.as_os_str(), "--json".as_ref()]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    doc["header"]["key_id"]
        .as_str()
        .expect("a key ID")
        .to_owned()
}

#[test]
#[ignore = "builds the partition-backed C library (twice, two keys) and needs binutils' objcopy: CI runs it with --ignored"]
fn inspect_reads_what_a_partition_backed_library_trusts_and_answers_from() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let dir = dir.path();
    let root = root();

    // Built with the test key named.
    let test_lib = build_library("test".as_ref(), dir, "libnrtucode-test.so");
    let o = nrtucode(&["inspect".as_ref(), test_lib.as_os_str()]);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    let test_id = key_id_of(&root.join("keys/test-ed25519.pem"), dir);
    for said in [
        "blob source: the signed partition named at run time by NRTUCODE_PARTITION (no blob in the library)\n".to_owned(),
        format!("key built into this library: key ID {test_id} (the repository's TEST key"),
        "features: partition\n".to_owned(),
        format!("library: the nrtucode C library {} ", env!("CARGO_PKG_VERSION")),
        "minimum security counter: 1\n".to_owned(),
        "table class: full\n".to_owned(),
    ] {
        assert!(out.contains(&said), "{said:?} not in:\n{out}");
    }
    assert!(
        err.contains("the key built into this library is the repository's TEST key"),
        "{err}"
    );

    // Built with a key of the user's own: its ID, not the test key's, and no warning.
    let private = dir.join("mine.pem");
    let public = dir.join("mine.pub.pem");
    let o = nrtucode(&[
        "key".as_ref(),
        "generate".as_ref(),
        "-o".as_ref(),
        private.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = nrtucode(&[
        "key".as_ref(),
        "public".as_ref(),
        private.as_os_str(),
        "-o".as_ref(),
        public.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let own_lib = build_library(public.as_os_str(), dir, "libnrtucode-own.so");
    let o = nrtucode(&["inspect".as_ref(), own_lib.as_os_str(), "--json".as_ref()]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let own_id = key_id_of(&private, dir);
    assert_ne!(own_id, test_id);
    assert_eq!(doc["format"], "nrtucode-inspect-library/1");
    assert_eq!(doc["blob_source"], "partition");
    assert_eq!(doc["partition_variable"], "NRTUCODE_PARTITION");
    assert_eq!(doc["key_id"], own_id.as_str());
    assert_eq!(doc["test_key"], false);
    assert_eq!(doc["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(doc["features"], serde_json::json!(["partition"]));

    // A partition's checks are refused for a library: a usage error.
    let o = nrtucode(&[
        "inspect".as_ref(),
        own_lib.as_os_str(),
        "--public-key".as_ref(),
        public.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(64));
    assert!(o.stdout.is_empty());

    // The record removed (a library of an older build, or not from nrtucode-capi): refused,
    // saying so, not read as a partition.
    let stripped = dir.join("libstripped.so");
    let o = Command::new("objcopy")
        .arg("--remove-section")
        .arg(".nrtucode_library")
        .arg(&own_lib)
        .arg(&stripped)
        .output()
        .expect("run objcopy (binutils)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = nrtucode(&["inspect".as_ref(), stripped.as_os_str()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(65), "{err}");
    assert!(
        err.contains("a shared library with no nrtucode library record"),
        "{err}"
    );
}
