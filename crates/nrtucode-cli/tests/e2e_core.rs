//! End to end: carve the look-alikes, build the core crate with `NRTUCODE_BLOB_DIR` pointing at
//! the carved directory, and run the core crate's tests whose answers depend on the blobs
//! against it (the full carve with feature `digest`, so every carved blob is checked against its
//! manifest digest; the front carve with the front feature selection). Then build this tool the same way and check that
//! `nrtucode list --json` reports exactly the carved hashes.
//!
//! The nested cargo uses the target directory every nested run of the workspace's tests shares
//! (`tests/nested_cargo` at the repository's root, under `CARGO_TARGET_TMPDIR`), so it never waits
//! for the lock of the cargo running this test and builds the dependencies the core's own nested
//! runs built already; it is reused between runs.

// The look-alike builds the carve library's tests share (cached under cargo's target tmp).
#[path = "../../nrtucode-carve/tests/common/mod.rs"]
mod common;
#[path = "../../../tests/nested_cargo/mod.rs"]
mod nested_cargo;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use nrtucode_carve::carve_bytes;
use nrtucode_carve::{check_dir, write_blob_dir};
use nrtucode_lookalike::{LibraryBuild, OptLevel};

/// The core's feature that selects exactly the front library's images.
const FRONT_FEATURES: &str = "front";

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn carve_into(lib: &common::Lib, dir: &Path) {
    let data = lib.bytes();
    let carve = carve_bytes(&data, lib.variant.library_name()).unwrap();
    write_blob_dir(&carve, &data, dir).unwrap();
    let report = check_dir(dir);
    assert!(report.is_ok(), "{}: {:?}", lib.label(), report.problems);
}

fn cargo(blob_dir: &Path, args: &[&str]) -> std::process::Output {
    let out = nested_cargo::cargo()
        .current_dir(workspace_root())
        .args(args)
        .env("NRTUCODE_BLOB_DIR", blob_dir)
        .env_remove("NRTUCODE_MPLUS_ON_MARIANA")
        .env_remove("NEURON_UCODE_FLAVOR")
        .output()
        .expect("run cargo");
    assert!(
        out.status.success(),
        "cargo {} with NRTUCODE_BLOB_DIR={} failed:\n{}\n{}",
        args.join(" "),
        blob_dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn core_crate_built_from_carved_directories_passes_its_resolver_suite() {
    let tmp = tempfile::tempdir().unwrap();
    // Stripped inputs: the positional names must be the vendor symbols build.rs looks up.
    let full = tmp.path().join("full");
    carve_into(common::lib(LibraryBuild::Full, OptLevel::Os, true), &full);
    let front = tmp.path().join("front");
    carve_into(common::lib(LibraryBuild::Front, OptLevel::O2, true), &front);

    // The core's test binaries whose answers depend on the embedded bytes: the unit tests,
    // the resolvers, the model and the blob origin; with `digest`, every carved blob against
    // its manifest row (tests/digest.rs). The others answer the same whatever the blobs are, or
    // build blobs of their own, and run in README's test command over the fixtures:
    // `blob_dir` and `const_macro` (nested builds of their own directories, or with
    // NRTUCODE_BLOB_DIR removed), `blob_layout` (the alignment and section of each blob, a
    // property of the build, not of the bytes; a nested build in a target directory of its
    // own), `loaded_partition` (packs the fixtures), `std_env` (the environment), `nopanic`.
    const SUITE: [&str; 7] = [
        "--lib",
        "--test",
        "resolvers",
        "--test",
        "model",
        "--test",
        "blob_origin",
    ];
    let mut full_args = vec!["test", "-p", "nrtucode", "-q", "--features", "digest"];
    full_args.extend(SUITE);
    full_args.extend(["--test", "digest"]);
    cargo(&full, &full_args);
    let mut front_args = vec!["test", "-p", "nrtucode", "-q", "--no-default-features"];
    front_args.extend(["--features", FRONT_FEATURES]);
    front_args.extend(SUITE);
    cargo(&front, &front_args);

    // The tool built on the carved directory lists the carved bytes.
    let out = cargo(
        &full,
        &["run", "-q", "-p", "nrtucode-cli", "--", "list", "--json"],
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["blob_source"], "directory");
    let manifest = nrtucode_facts::Manifest::parse(
        &std::fs::read_to_string(full.join("manifest.tsv")).unwrap(),
    )
    .unwrap();
    let carved: BTreeMap<&str, &str> = manifest
        .rows
        .iter()
        .map(|r| (r.symbol.as_str(), r.sha256.as_str()))
        .collect();
    let mut checked = 0;
    for e in doc["entries"].as_array().unwrap() {
        // The empty slot 36's profiler entries have no symbol and no bytes.
        let Some(symbol) = e["symbol"].as_str() else {
            assert!(e["sha256"].is_null() && e["slot"] == 36, "{e}");
            continue;
        };
        if let Some(sha) = e["sha256"].as_str() {
            assert_eq!(Some(&sha), carved.get(symbol), "{symbol}");
            checked += 1;
        }
    }
    assert_eq!(checked, 408 + 30);
}
