//! Golden-output tests for `list`, `resolve` and `prof`. Set `UPDATE_GOLDEN=1` to rewrite the
//! files under `tests/golden/` from the current output (then review the diff).
//!
//! The outputs hash the embedded blobs, so they are only meaningful for the built-in fixture
//! set; a build with `NRTUCODE_BLOB_DIR` skips the comparison.

use std::path::PathBuf;
use std::process::Command;

use nrtucode::NoEnv;
use nrtucode::catalog::{BLOB_SOURCE, BlobSource};
use nrtucode_cli::commands::resolve::{Query, Show, resolve};
use nrtucode_cli::commands::{list, prof};

fn golden(name: &str, actual: &str) {
    if BLOB_SOURCE != BlobSource::Fixtures {
        eprintln!(
            "{name}: blobs from NRTUCODE_BLOB_DIR, golden files describe the fixtures; skipped"
        );
        return;
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_GOLDEN=1)", path.display()));
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b);
        panic!(
            "{} differs from the output (first differing line {:?}); rerun with UPDATE_GOLDEN=1 and review the diff",
            path.display(),
            line.map(|l| l + 1)
        );
    }
}

#[test]
fn list_table() {
    golden("list.txt", &list::render(None, false));
}

#[test]
fn list_json_one_generation() {
    let json = list::render(Some("mariana-plus"), true);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(
        v["entries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["generation"] == "MARIANA_PLUS")
    );
    golden("list-mariana-plus.json", &json);
}

#[test]
fn resolve_cases() {
    let cases: [(&str, Query, Show); 8] = [
        (
            "7 iram --flavor perf --sha256 --hex 48",
            Query::Image {
                idx: 7,
                region: 0,
                flavor: 1,
            },
            Show {
                hex: Some(48),
                sha256: true,
            },
        ),
        (
            "7 sram --flavor perf --sha256",
            Query::Image {
                idx: 7,
                region: 2,
                flavor: 1,
            },
            Show {
                hex: None,
                sha256: true,
            },
        ),
        (
            "34 sram --flavor 1 --sha256",
            Query::Image {
                idx: 34,
                region: 2,
                flavor: 1,
            },
            Show {
                hex: None,
                sha256: true,
            },
        ),
        (
            "38 0",
            Query::Image {
                idx: 38,
                region: 0,
                flavor: 1,
            },
            Show::default(),
        ),
        (
            "36 0 --flavor 1",
            Query::Image {
                idx: 36,
                region: 0,
                flavor: 1,
            },
            Show::default(),
        ),
        (
            "7 4 --flavor 1",
            Query::Image {
                idx: 7,
                region: 4,
                flavor: 1,
            },
            Show::default(),
        ),
        (
            "9 --prof table --sha256",
            Query::Prof { idx: 9, kind: 1 },
            Show {
                hex: None,
                sha256: true,
            },
        ),
        (
            "9 --prof 2",
            Query::Prof { idx: 9, kind: 2 },
            Show::default(),
        ),
    ];
    let mut out = String::new();
    for (args, q, show) in cases {
        let r = resolve(q, show, &NoEnv);
        out.push_str(&format!(
            "$ nrtucode resolve {args}\n{}{}exit {}\n\n",
            r.stdout, r.stderr, r.code
        ));
    }
    golden("resolve.txt", &out);
}

#[test]
fn prof_table_and_json() {
    let human = prof::render(16, false);
    assert_eq!(human.code, 0, "{}", human.stderr);
    golden("prof-16.txt", &human.stdout);
    let json = prof::render(7, true);
    assert_eq!(json.code, 0);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["armed"], 47);
    assert_eq!(v["records"][13]["opcode"], 0x21);
    golden("prof-7.json", &json.stdout);
    let none = prof::render(0, false);
    assert_eq!((none.code, none.stdout.as_str()), (2, ""));
}

/// The binary's exit codes: the resolver's code for `resolve`, 1 for errors, 2 for usage.
#[test]
fn binary_exit_codes() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_nrtucode"))
            .args(args)
            .env_remove("NRTUCODE_MPLUS_ON_MARIANA")
            .env_remove("NEURON_UCODE_FLAVOR")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert_eq!(run(&["resolve", "7", "iram"]).0, Some(0));
    assert_eq!(run(&["resolve", "38", "iram"]).0, Some(1));
    assert_eq!(run(&["resolve", "36", "dram"]).0, Some(2));
    assert_eq!(run(&["resolve", "0", "--prof", "cam"]).0, Some(2));
    assert_eq!(run(&["resolve", "7", "iram", "--prof", "cam"]).0, Some(2)); // usage
    let out = Command::new(env!("CARGO_BIN_EXE_nrtucode"))
        .args(["resolve", "23", "0", "--flavor", "1"])
        .env("NRTUCODE_MPLUS_ON_MARIANA", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(8));
    let (code, stderr) = run(&["carve", "/nonexistent/lib.so", "--out", "/tmp/none"]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("/nonexistent/lib.so"), "{stderr}");
    let dir = tempfile::tempdir().unwrap();
    let (code, stderr) = run(&["verify", dir.path().to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("manifest.tsv"), "{stderr}");
}
