//! `NRTUCODE_BLOB_DIR`: a blob directory replaces the fixtures byte for byte, and a directory
//! that lacks a blob the selected features need, or holds one of the wrong size or content,
//! fails the build naming the blob. Each case runs `cargo check` on this crate in the nested
//! runs' shared target directory (the build script and the const evaluation of the blob statics
//! both run there); the blob directories live in a scratch directory removed when the test ends.

mod nested_cargo;

use std::path::{Path, PathBuf};

use nrtucode_facts::facts::in_front_library;
use nrtucode_facts::hex::lower_hex;
use nrtucode_facts::{
    Getter, GetterId, Manifest, ManifestHeader, ManifestRow, fixture_bytes, getters,
};
use sha2::{Digest, Sha256};

const ALL_WITH_DIGEST: &str = "gen-sunda,gen-cayman,gen-mariana,gen-mariana-plus,gen-maverick,\
     flavor-perf,flavor-debug,flavor-test,flavor-dkl-perf,flavor-dkl-debug,flavor-dkl-test,digest";

/// Writes a blob directory `scratch/name` holding the fixture bytes of the getters `keep`
/// accepts.
fn write_dir(scratch: &Path, name: &str, keep: impl Fn(&Getter) -> bool) -> (PathBuf, Manifest) {
    let dir = scratch.join(name);
    std::fs::create_dir(&dir).unwrap();
    let mut rows = Vec::new();
    for g in getters()
        .iter()
        .filter(|g| g.is_resolver_reachable() && keep(g))
    {
        let bytes = fixture_bytes(g);
        let sha256 = lower_hex(&Sha256::digest(&bytes));
        let file = (!bytes.is_empty()).then(|| format!("{sha256}.bin"));
        if let Some(file) = &file {
            std::fs::write(dir.join(file), &bytes).unwrap();
        }
        rows.push(ManifestRow {
            id: GetterId::from(g),
            size: g.size as u64,
            sha256,
            blob_va: g.blob_va,
            file,
        });
    }
    let manifest = Manifest {
        header: ManifestHeader {
            source: "fixtures".into(),
            source_size: 0,
            source_sha256: "0".repeat(64),
            build_id: "unknown".into(),
        },
        rows,
    };
    std::fs::write(dir.join("manifest.tsv"), manifest.render()).unwrap();
    (dir, manifest)
}

/// `cargo check -p nrtucode` with `NRTUCODE_BLOB_DIR=dir`; returns success and stderr.
fn check_with(dir: &Path, features: Option<&str>) -> (bool, String) {
    let mut cmd = nested_cargo::cargo();
    cmd.args(["check", "-p", "nrtucode", "--locked", "--quiet"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NRTUCODE_BLOB_DIR", dir);
    if let Some(features) = features {
        cmd.args(["--no-default-features", "--features", features]);
    }
    let out = cmd.output().expect("run cargo");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn blob_directories_are_embedded_or_rejected_by_name() {
    let scratch = nested_cargo::scratch("blob-dir");
    let scratch = scratch.path();
    // A complete directory builds.
    let (complete, _) = write_dir(scratch, "complete", |_| true);
    let (ok, stderr) = check_with(&complete, None);
    assert!(ok, "{stderr}");

    // A relative path is refused, saying what it would have read; cargo's `[env]` with
    // `relative = true` in a project's .cargo/config.toml names one relative to the project.
    let (ok, stderr) = check_with(Path::new("complete"), None);
    assert!(!ok);
    assert!(
        stderr.contains("must be an absolute path, not 'complete'"),
        "{stderr}"
    );
    let package = Path::new(env!("CARGO_MANIFEST_DIR")).join("complete");
    assert!(stderr.contains(&package.display().to_string()), "{stderr}");
    // A missing blob fails the build and names it.
    let missing = "MARIANA_NX_PE_TEST_DRAM_get";
    let (dir, _) = write_dir(scratch, "missing", |g| g.symbol != missing);
    let (ok, stderr) = check_with(&dir, None);
    assert!(!ok);
    assert!(stderr.contains(missing), "{stderr}");
    let project = scratch.join("env-project");
    std::fs::create_dir_all(project.join(".cargo")).unwrap();
    std::fs::write(
        project.join(".cargo/config.toml"),
        "[env]\nNRTUCODE_BLOB_DIR = { value = \"../missing\", relative = true }\n",
    )
    .unwrap();
    let out = nested_cargo::cargo()
        .args([
            "check",
            "-p",
            "nrtucode",
            "--locked",
            "--quiet",
            "--manifest-path",
        ])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .current_dir(&project)
        .env_remove("NRTUCODE_BLOB_DIR")
        .output()
        .expect("run cargo");
    // The directory it names (lacking one blob) is the one read.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains(missing), "{stderr}");

    // A blob of the wrong size fails the build and names it.
    let (dir, manifest) = write_dir(scratch, "short", |_| true);
    let victim = manifest.row("CAYMAN_NX_ACT_PERF_IRAM_get").unwrap();
    let path = dir.join(victim.file.as_ref().unwrap());
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
    let (ok, stderr) = check_with(&dir, None);
    assert!(!ok);
    assert!(stderr.contains("CAYMAN_NX_ACT_PERF_IRAM_get"), "{stderr}");

    // A blob of the right size but the wrong content (a bad copy, bit rot) fails the build,
    // naming the blob and the file, with or without feature `digest`.
    let (dir, manifest) = write_dir(scratch, "corrupt", |_| true);
    let victim = manifest.row("MAVERICK_NX_SP_PERF_SRAM_get").unwrap();
    let file = victim.file.as_ref().unwrap();
    let path = dir.join(file);
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    for features in [None, Some(ALL_WITH_DIGEST)] {
        let (ok, stderr) = check_with(&dir, features);
        assert!(!ok, "{features:?}");
        assert!(stderr.contains("MAVERICK_NX_SP_PERF_SRAM_get"), "{stderr}");
        assert!(stderr.contains(file.as_str()), "{stderr}");
        assert!(stderr.contains("SHA-256"), "{stderr}");
    }

    // A duplicate row (another blob of the same size for the same getter) fails the build
    // with the message `nrtucode check` gives: one reading of a directory everywhere.
    let (dir, mut manifest) = write_dir(scratch, "duplicate", |_| true);
    let victim = "CAYMAN_NX_ACT_PROF_TABLE_get";
    let row = manifest.row(victim).unwrap().clone();
    let twin = manifest
        .rows
        .iter()
        .find(|r| r.size == row.size && r.sha256 != row.sha256)
        .expect("another blob of the same size")
        .clone();
    manifest.rows.insert(
        0,
        ManifestRow {
            sha256: twin.sha256,
            file: twin.file,
            ..row
        },
    );
    std::fs::write(dir.join("manifest.tsv"), manifest.render()).unwrap();
    let (ok, stderr) = check_with(&dir, None);
    assert!(!ok, "a directory with two rows for {victim} built");
    let check = nrtucode_facts::blob_dir::check_blob_dir(&dir).unwrap_err();
    for problem in &check.problems {
        assert!(
            stderr.contains(&problem.to_string()),
            "{problem} in {stderr}"
        );
    }
    assert!(
        stderr.contains(&format!("{victim} has more than one row")),
        "{stderr}"
    );

    // A front-library directory (PERF + DKL_PERF of four generations) builds with the front
    // selection, and is rejected by the full one, which needs blobs it lacks.
    let (dir, _) = write_dir(scratch, "front", in_front_library);
    let (ok, stderr) = check_with(&dir, Some("front"));
    assert!(ok, "{stderr}");
    let (ok, stderr) = check_with(&dir, None);
    assert!(!ok);
    assert!(
        stderr.contains("_DEBUG_") || stderr.contains("MAVERICK_"),
        "{stderr}"
    );
}
