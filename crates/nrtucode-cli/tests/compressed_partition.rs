//! `nrtucode pack --compress deflate` end to end through the binary: it prints the ratio, the
//! partition answers `list`, `resolve` and `prof` exactly as the embedded tables (the compressed
//! profiler tables decoded and checked once when it is read), `inspect` decode-checks every
//! compressed blob and exits 65 naming one whose bytes changed.

mod partition_common;
use partition_common::{nrtucode, root, text};

use std::ffi::OsStr;

#[test]
fn a_compressed_partition_answers_like_the_embedded_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let key = root().join("keys/test-ed25519.pem");
    let public = root().join("keys/test-ed25519.pub.pem");
    let part = t.join("full.part");
    let o = nrtucode(
        &[
            OsStr::new("pack"),
            OsStr::new("--fixtures"),
            OsStr::new("full"),
            OsStr::new("--compress"),
            OsStr::new("deflate"),
            OsStr::new("--key"),
            key.as_os_str(),
            OsStr::new("-o"),
            part.as_os_str(),
        ],
        t,
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let ratio = out.lines().nth(1).unwrap_or_default();
    assert!(
        ratio.starts_with("deflate: 14 of 177 blobs compressed, ") && ratio.ends_with(" %)"),
        "{out}"
    );
    let cases: &[&[&str]] = &[
        &["list", "--json"],
        &["resolve", "7", "iram", "--flavor", "perf", "--sha256"],
        &["resolve", "7", "--prof", "table", "--sha256"],
        &["resolve", "7", "--prof", "cam", "--hex=64"],
        &["resolve", "36", "iram", "--flavor", "perf"],
        &["prof", "7"],
        &["prof", "16", "--json"],
    ];
    for case in cases {
        let mut with: Vec<&OsStr> = case.iter().map(OsStr::new).collect();
        with.extend([
            OsStr::new("--partition"),
            part.as_os_str(),
            OsStr::new("--public-key"),
            public.as_os_str(),
        ]);
        let (a, b) = (nrtucode(&with, t), nrtucode(case, t));
        assert_eq!(
            a.status.code(),
            b.status.code(),
            "{case:?}: {}",
            text(&a.stderr)
        );
        assert_eq!(text(&a.stdout), text(&b.stdout), "{case:?}");
        assert_eq!(text(&a.stderr), text(&b.stderr), "{case:?}");
    }
    let o = nrtucode(
        &[
            OsStr::new("inspect"),
            part.as_os_str(),
            OsStr::new("--public-key"),
            public.as_os_str(),
        ],
        t,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
}

#[test]
fn inspect_decode_checks_compressed_blobs() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let part = t.join("u.part");
    let o = nrtucode(
        &[
            OsStr::new("pack"),
            OsStr::new("--fixtures"),
            OsStr::new("front"),
            OsStr::new("--compress"),
            OsStr::new("deflate"),
            OsStr::new("--unsigned"),
            OsStr::new("-o"),
            part.as_os_str(),
        ],
        t,
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let json = nrtucode(
        &[
            OsStr::new("inspect"),
            part.as_os_str(),
            OsStr::new("--json"),
        ],
        t,
    );
    assert_eq!(json.status.code(), Some(0), "{}", text(&json.stdout));
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let entry = doc["toc"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["codec"] == 1)
        .expect("a deflate blob");
    let (blob, at) = (
        entry["blob"].as_u64().unwrap(),
        entry["offset"].as_u64().unwrap() + entry["stored_len"].as_u64().unwrap() / 2,
    );
    let mut bytes = std::fs::read(&part).unwrap();
    bytes[at as usize] ^= 0x10;
    std::fs::write(&part, bytes).unwrap();
    let o = nrtucode(&[OsStr::new("inspect"), part.as_os_str()], t);
    assert_eq!(o.status.code(), Some(65), "{}", text(&o.stdout));
    assert!(
        text(&o.stdout).contains(&format!("blob {blob} ")),
        "{}",
        text(&o.stdout)
    );
    // Reading it for answers refuses it the same way.
    let o = nrtucode(
        &[
            OsStr::new("prof"),
            OsStr::new("7"),
            OsStr::new("--partition"),
            part.as_os_str(),
            OsStr::new("--insecure-skip-signature"),
        ],
        t,
    );
    assert_eq!(o.status.code(), Some(65), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains(&format!("blob {blob} ")),
        "{}",
        text(&o.stderr)
    );
}
