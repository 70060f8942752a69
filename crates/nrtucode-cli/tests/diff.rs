//! `nrtucode diff OLD NEW`, end to end through the binary, on look-alike libraries built by
//! `nrtucode-lookalike` (gcc): two builds that differ in a known set of blobs are reported as
//! differing in exactly that set, with the ground truth's old digests and the new bytes'
//! digests; a library, its carved directory and its partition are the same; a rebuilt library
//! with the same blobs says so; the full and front tables differ in shape; failures exit with
//! the tool's codes, never 1.

mod partition_common;
use partition_common::{key, nrtucode, public, text};

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use nrtucode_lookalike::{
    LibraryBuild, OptLevel, Options, TruthRow, build_shared_object, ground_truth, write_sources,
};
use sha2::{Digest, Sha256};

macro_rules! run {
    ($cwd:expr, $($arg:expr),* $(,)?) => {
        nrtucode(&[$(std::ffi::OsStr::new(&$arg)),*], $cwd)
    };
}

/// Builds the look-alike of `opts` in `dir/name` (gcc), returning the library's path.
fn build(dir: &Path, name: &str, opts: &Options) -> PathBuf {
    let src = dir.join(format!("{name}-src"));
    let written = write_sources(&src, opts).expect("write the look-alike's C");
    let lib = dir.join(name);
    build_shared_object(&written.c_source, &lib, OptLevel::O2, false)
        .expect("gcc builds the look-alike");
    lib
}

/// Where `needle` occurs in `hay`: its only offset, or `None` when it is absent or repeated.
fn only_offset(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let mut found = hay
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle);
    let (first, _) = found.next()?;
    found.next().is_none().then_some(first)
}

/// The diff's JSON document.
fn json(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).unwrap_or_else(|e| panic!("{e}: {}", text(out)))
}

/// The symbols the document reports with `status`.
fn symbols_with(doc: &serde_json::Value, status: &str) -> BTreeSet<String> {
    doc["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == status)
        .map(|c| c["symbol"].as_str().unwrap().to_owned())
        .collect()
}

/// Three blobs of the front look-alike to change (of two generations, two regions, a DKL), each
/// found exactly once in the library's bytes (the profiler tables are not: their copies are
/// alike).
fn chosen(truth: &[TruthRow], lib: &[u8]) -> Vec<(String, usize, Vec<u8>)> {
    let wanted = |row: &&TruthRow, prefix: &str, suffix: &str| {
        row.getter.symbol.starts_with(prefix)
            && row.getter.symbol.ends_with(suffix)
            && row.bytes.len() >= 64
    };
    let picks: Vec<&TruthRow> = [
        ("CAYMAN_", "_IRAM_get"),
        ("SUNDA_", "_DRAM_get"),
        ("MARIANA_", "_DYNAMIC_KERNEL_LOAD_PERF_DRAM_get"),
    ]
    .into_iter()
    .map(|(prefix, suffix)| {
        truth
            .iter()
            .find(|r| wanted(r, prefix, suffix) && only_offset(lib, &r.bytes).is_some())
            .unwrap_or_else(|| panic!("a {prefix}*{suffix} blob found once in the library"))
    })
    .collect();
    picks
        .into_iter()
        .map(|r| {
            (
                r.getter.symbol.to_owned(),
                only_offset(lib, &r.bytes).unwrap(),
                r.bytes.clone(),
            )
        })
        .collect()
}

#[test]
fn two_builds_differ_in_exactly_the_blobs_changed() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let old = build(t, "old.so", &Options::new(LibraryBuild::Front));
    let old_bytes = std::fs::read(&old).unwrap();
    let truth = ground_truth(LibraryBuild::Front);
    let changes = chosen(&truth, &old_bytes);
    assert!(changes.len() == 3 && changes.iter().map(|c| &c.0).collect::<BTreeSet<_>>().len() == 3);
    // The new drop: the same build with one byte of each chosen blob changed.
    let mut new_bytes = old_bytes.clone();
    let mut expected_new_sha = std::collections::BTreeMap::new();
    for (symbol, offset, bytes) in &changes {
        let mid = bytes.len() / 2;
        new_bytes[offset + mid] ^= 0x5a;
        let mut changed = bytes.clone();
        changed[mid] ^= 0x5a;
        expected_new_sha.insert(
            symbol.clone(),
            nrtucode_facts::hex::lower_hex(&Sha256::digest(&changed)),
        );
    }
    let new = t.join("new.so");
    std::fs::write(&new, &new_bytes).unwrap();

    let o = run!(t, "diff", old, new, "--json");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let doc = json(&o.stdout);
    let expected: BTreeSet<String> = changes.iter().map(|c| c.0.clone()).collect();
    assert_eq!(symbols_with(&doc, "changed"), expected);
    assert!(symbols_with(&doc, "added").is_empty() && symbols_with(&doc, "removed").is_empty());
    assert_eq!(doc["shape"].as_array().unwrap().len(), 0);
    assert_eq!(doc["equal"], false);
    // Each change: the ground truth's old bytes, the changed bytes' digest, the same size.
    for c in doc["changes"].as_array().unwrap() {
        let symbol = c["symbol"].as_str().unwrap();
        let row = truth.iter().find(|r| r.getter.symbol == symbol).unwrap();
        assert_eq!(c["old"]["sha256"], row.sha256.as_str(), "{symbol}");
        assert_eq!(
            c["new"]["sha256"],
            expected_new_sha[symbol].as_str(),
            "{symbol}"
        );
        assert_eq!(c["old"]["size"], row.bytes.len(), "{symbol}");
        assert_eq!(c["new"]["size"], row.bytes.len(), "{symbol}");
    }
    // The totals and the groups add up to what was listed.
    let changed_places = doc["changes"].as_array().unwrap().len();
    assert_eq!(doc["totals"]["changed"], changed_places);
    let group_changed: u64 = doc["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["changed"].as_u64().unwrap())
        .sum();
    assert_eq!(group_changed, changed_places as u64);
    let all: u64 = ["added", "removed", "changed", "unchanged"]
        .iter()
        .map(|k| doc["totals"][k].as_u64().unwrap())
        .sum();
    assert_eq!(all, 484, "every getter of both tables, counted once");

    // The text output names them too, and the other way round they are changed as well.
    let o = run!(t, "diff", new, old);
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    for symbol in &expected {
        assert!(out.contains(symbol.as_str()), "{symbol}: {out}");
    }
    assert!(
        out.contains(&format!("0 added, 0 removed, {changed_places} changed")),
        "{out}"
    );

    // The library, its carved directory and its partition hold the same blobs.
    assert!(
        run!(t, "carve", old, "--out", t.join("blobs"))
            .status
            .success()
    );
    let o = run!(t, "pack", old, "-o", t.join("old.part"), "--key", key());
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = run!(t, "diff", old, t.join("blobs"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    let o = run!(
        t,
        "diff",
        t.join("blobs"),
        t.join("old.part"),
        "--public-key",
        public()
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("the files differ"));
    // And the partition of the old drop against the new library: the same three.
    let o = run!(
        t,
        "diff",
        t.join("old.part"),
        new,
        "--public-key",
        public(),
        "--json"
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(symbols_with(&json(&o.stdout), "changed"), expected);
}

#[test]
fn a_rebuilt_library_with_the_same_blobs_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let a = build(t, "a.so", &Options::new(LibraryBuild::Front));
    let b = build(
        t,
        "b.so",
        &Options::new(LibraryBuild::Front)
            .with_prefix("rebuilt_")
            .unwrap(),
    );
    assert_ne!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let o = run!(t, "diff", a, b, "--json");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let doc = json(&o.stdout);
    assert_eq!(doc["equal"], true);
    assert_eq!(doc["files_identical"], false);
    assert_ne!(doc["old"]["build_id"], doc["new"]["build_id"]);
    assert_eq!(doc["changes"].as_array().unwrap().len(), 0);
    let o = run!(t, "diff", a, b);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        text(&o.stdout).contains("the same blobs and tables; the files differ"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn the_full_and_front_tables_differ_in_blobs_and_shape() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    for class in ["full", "front"] {
        let o = run!(
            t,
            "pack",
            "--fixtures",
            class,
            "-o",
            format!("{class}.part"),
            "--unsigned"
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    let o = run!(
        t,
        "diff",
        "full.part",
        "front.part",
        "--insecure-skip-signature",
        "--json"
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let doc = json(&o.stdout);
    assert_eq!(doc["totals"]["added"], 0);
    assert_eq!(doc["totals"]["changed"], 0);
    assert!(doc["totals"]["removed"].as_u64().unwrap() > 0);
    // What the front tables drop is what the facts leave out of the front library.
    let front_symbols: BTreeSet<&str> = nrtucode_facts::getters()
        .iter()
        .filter(|g| g.is_resolver_reachable() && nrtucode_facts::facts::in_front_library(g))
        .map(|g| g.symbol)
        .collect();
    for symbol in symbols_with(&doc, "removed") {
        assert!(!front_symbols.contains(symbol.as_str()), "{symbol}");
    }
    let shape = doc["shape"].as_array().unwrap();
    assert!(!shape.is_empty());
    assert!(
        shape
            .iter()
            .all(|s| s["table"] == "hwdecode_table_list" && s["new"] == serde_json::json!([])),
        "{shape:?}"
    );
    assert!(
        text(
            &run!(
                t,
                "diff",
                "full.part",
                "front.part",
                "--insecure-skip-signature"
            )
            .stdout
        )
        .contains("table shape: 3 slots differ")
    );
}

#[test]
fn failures_exit_with_the_tools_codes_never_one() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let o = run!(
        t,
        "pack",
        "--fixtures",
        "front",
        "-o",
        "a.part",
        "--key",
        key()
    );
    assert!(o.status.success());
    std::fs::write(t.join("junk"), b"neither").unwrap();
    // (args, exit code, a word of the message)
    let cases: [(&[&str], i32, &str); 5] = [
        (&["diff", "missing", "a.part"], 66, "missing"),
        (&["diff", "junk", "a.part"], 65, "neither a library"),
        (&["diff", "a.part", "a.part"], 64, "needs --public-key"),
        (
            &["diff", "a.part", "a.part", "--insecure-skip-signature"],
            65,
            "signed",
        ),
        (&["diff", "a.part"], 64, "required"),
    ];
    for (args, code, word) in cases {
        let o = nrtucode(args, t);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains(word),
            "{args:?}: {}",
            text(&o.stderr)
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    // Under --json a failure is a JSON error object too.
    let o = run!(t, "diff", "missing", "a.part", "--json");
    assert_eq!(o.status.code(), Some(66));
    let error: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(error["format"], "nrtucode-error/1");
    assert_eq!(error["exit_code"], 66);
    let o = run!(t, "diff", "a.part", "a.part", "--public-key", public());
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stdout).contains("the same: identical files"));
}

#[test]
fn partitions_signed_by_different_keys_each_verify_with_the_key_their_header_names() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    assert!(
        run!(t, "key", "generate", "-o", "other.pem")
            .status
            .success()
    );
    let o = run!(t, "key", "public", "other.pem", "-o", "other.pub.pem");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let pack = |out: &str, key: &dyn AsRef<std::ffi::OsStr>| {
        let o = run!(t, "pack", "--fixtures", "front", "-o", out, "--key", key);
        assert!(o.status.success(), "{}", text(&o.stderr));
    };
    pack("old.part", &key());
    pack("new.part", &"other.pem");
    let o = run!(
        t,
        "pack",
        "--fixtures",
        "front",
        "-o",
        "unsigned.part",
        "--unsigned"
    );
    assert!(o.status.success(), "{}", text(&o.stderr));

    // Both keys, in either order: the same blobs and tables, the files differ.
    for keys in [
        [public(), t.join("other.pub.pem")],
        [t.join("other.pub.pem"), public()],
    ] {
        let o = run!(
            t,
            "diff",
            "old.part",
            "new.part",
            "--public-key",
            &keys[0],
            "--public-key",
            &keys[1]
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        assert!(
            text(&o.stdout).contains("the files differ"),
            "{}",
            text(&o.stdout)
        );
    }
    // One key: the other partition is refused by the reader, naming both key IDs.
    let o = run!(t, "diff", "old.part", "new.part", "--public-key", public());
    assert_eq!(o.status.code(), Some(65));
    assert!(text(&o.stderr).contains("new.part"), "{}", text(&o.stderr));
    // Two keys, neither the one a partition names: refused, every key ID listed.
    let other = t.join("other.pub.pem");
    let o = run!(
        t,
        "diff",
        "new.part",
        "old.part",
        "--public-key",
        &other,
        "--public-key",
        &other
    );
    assert_eq!(o.status.code(), Some(65));
    let err = text(&o.stderr);
    assert!(
        err.contains("old.part: signed by key ID ")
            && err.contains("which none of the 2 --public-key keys has"),
        "{err}"
    );
    // An unsigned partition is refused as unsigned, whatever keys are given.
    let o = run!(
        t,
        "diff",
        "unsigned.part",
        "old.part",
        "--public-key",
        public(),
        "--public-key",
        &other
    );
    assert_eq!(o.status.code(), Some(65));
    assert!(text(&o.stderr).contains("unsigned"), "{}", text(&o.stderr));
}
