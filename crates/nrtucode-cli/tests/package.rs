//! `nrtucode package` and `nrtucode inspect` of an update package, as a user types them: a
//! package from one signed pack to another (the blobs compressed in the new one, so their
//! stored bytes differ), read back to the new partition byte for byte, inspected alone and
//! over its base (verified there as a partition file is), and the refusals (another base, a
//! package where a partition is read, an output that is an input, no key) with their exit
//! codes, writing nothing.

mod partition_common;
use partition_common::{key, nrtucode, public, text};

use std::path::Path;

use nrtucode_pack::apply_package;

fn pack(dir: &Path, out: &str, counter: &str, compress: &str) {
    let key = key();
    let args = [
        "pack",
        "--fixtures",
        "front",
        "--key",
        key.to_str().unwrap(),
        "--security-counter",
        counter,
        "--compress",
        compress,
        "-o",
        out,
    ];
    let done = nrtucode(&args, dir);
    assert!(done.status.success(), "{}", text(&done.stderr));
}

#[test]
fn a_package_gives_the_new_partition_and_inspects_verified_over_its_base() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pack(d, "a.part", "1", "none");
    pack(d, "b.part", "2", "deflate");
    let pub_key = public();
    let pub_key = pub_key.to_str().unwrap();
    let args = [
        "package",
        "--base",
        "a.part",
        "--new",
        "b.part",
        "--public-key",
        pub_key,
    ];
    let done = nrtucode(&[&args[..], &["-o", "u.pkg"]].concat(), d);
    assert!(done.status.success(), "{}", text(&done.stderr));
    assert!(
        text(&done.stdout).contains("blobs carried"),
        "{}",
        text(&done.stdout)
    );
    let (a, b, pkg) = (
        std::fs::read(d.join("a.part")).unwrap(),
        std::fs::read(d.join("b.part")).unwrap(),
        std::fs::read(d.join("u.pkg")).unwrap(),
    );
    assert_eq!(apply_package(&a, &pkg).unwrap(), b);
    assert!(pkg.len() <= b.len() + nrtucode::update::package::HEADER_LEN);

    // Alone: what it holds, nothing vouched for.
    let shown = nrtucode(&["inspect", "u.pkg", "--json"], d);
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(doc["format"], "nrtucode-inspect-package/1");
    assert_eq!(doc["total_len"], b.len());
    assert_eq!(doc["package_len"], pkg.len());
    let blobs =
        doc["carried"]["blobs"].as_u64().unwrap() + doc["copied"]["blobs"].as_u64().unwrap();
    if doc["kind"] == "delta" {
        assert_eq!(blobs, 65);
    }
    assert!(doc["partition"].is_null());

    // Over its base: the partition it gives, verified.
    let over = nrtucode(
        &[
            "inspect",
            "u.pkg",
            "--base",
            "a.part",
            "--public-key",
            pub_key,
        ],
        d,
    );
    assert!(over.status.success(), "{}", text(&over.stderr));
    assert!(
        text(&over.stdout).contains("VERIFIED"),
        "{}",
        text(&over.stdout)
    );

    // Over another base: refused, 65.
    let wrong = nrtucode(
        &[
            "inspect",
            "u.pkg",
            "--base",
            "b.part",
            "--public-key",
            pub_key,
        ],
        d,
    );
    assert_eq!(wrong.status.code(), Some(65), "{}", text(&wrong.stdout));
    assert!(text(&wrong.stderr).contains("made for another partition"));

    // A package where a partition is read: refused, named for what it is.
    let resolve = nrtucode(
        &[
            "resolve",
            "7",
            "0",
            "--partition",
            "u.pkg",
            "--public-key",
            pub_key,
        ],
        d,
    );
    assert_eq!(resolve.status.code(), Some(65));
    assert!(
        text(&resolve.stderr).contains("an update package"),
        "{}",
        text(&resolve.stderr)
    );

    // The output is an input: 73, the input unchanged; no key: 64, nothing written.
    let same = nrtucode(&[&args[..], &["-o", "a.part"]].concat(), d);
    assert_eq!(same.status.code(), Some(73), "{}", text(&same.stderr));
    assert_eq!(std::fs::read(d.join("a.part")).unwrap(), a);
    let keyless = [
        "package", "--base", "a.part", "--new", "b.part", "-o", "v.pkg",
    ];
    let keyless = nrtucode(&keyless, d);
    assert_eq!(keyless.status.code(), Some(64), "{}", text(&keyless.stderr));
    assert!(!d.join("v.pkg").exists());
}
