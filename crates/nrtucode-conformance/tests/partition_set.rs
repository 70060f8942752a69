//! The partition conformance set, as another implementation runs it: the program
//! `partition-conformance-set` writes it into a directory, and this repository's reader must
//! give every verdict of `cases.tsv` and every answer of `requests.tsv`, reading only the
//! directory.

use std::collections::BTreeSet;
use std::path::Path;

use nrtucode::digest::{Sha256Hasher, SoftSha256};
use nrtucode::partition::{
    BlobId, Cursor, FormatError, LoadError, Loader, Partition, Policy, PublicKey, TableClass,
    TrustError, VerifiedPartition,
};

/// The refusal of one of the three steps, each with its own error.
#[derive(Debug)]
enum Refused {
    Format(FormatError),
    Trust(TrustError),
    Load(LoadError),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Format(e) => e.fmt(f),
            Refused::Trust(e) => e.fmt(f),
            Refused::Load(e) => e.fmt(f),
        }
    }
}

/// The name of a variant as its `Debug` spells it (`TooShort { .. }`: `TooShort`).
fn variant(debug: &str) -> String {
    debug
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect()
}

fn lower_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The rows of a TSV manifest, checked against its header, as maps of column to value.
fn rows(dir: &Path, file: &str, header: &[&str]) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(dir.join(file)).expect(file);
    let mut lines = text.lines();
    let found: Vec<&str> = lines.next().expect("a header").split('\t').collect();
    assert_eq!(found, header, "{file}'s header");
    lines
        .map(|line| {
            let cells: Vec<String> = line.split('\t').map(str::to_owned).collect();
            assert_eq!(cells.len(), header.len(), "{file}: {line}");
            cells
        })
        .collect()
}

/// The error's name as the manifest spells it (`FormatError::BadHeader`), and its detail.
fn name_and_detail(error: &Refused) -> (String, String) {
    let (kind, debug) = match error {
        Refused::Format(e) => ("FormatError", format!("{e:?}")),
        Refused::Trust(e) => ("TrustError", format!("{e:?}")),
        Refused::Load(e) => ("LoadError", format!("{e:?}")),
    };
    let detail = match error {
        Refused::Format(FormatError::BadHeader { field }) => (*field).to_owned(),
        Refused::Format(
            FormatError::Table { table, .. } | FormatError::ClassContradicted { table, .. },
        ) => table.name().to_owned(),
        Refused::Load(LoadError::Decode { failure, .. }) => variant(&format!("{failure:?}")),
        _ => "-".to_owned(),
    };
    (format!("{kind}::{}", variant(&debug)), detail)
}

fn policy(min: &str, class: &str) -> Policy {
    Policy {
        min_security_counter: min.parse().expect("a counter"),
        expected_class: match class {
            "full" => TableClass::Full,
            "front" => TableClass::Front,
            other => panic!("class {other}"),
        },
    }
}

/// Parse, verify, then load every blob: the step that refused and why, or `accept`.
fn judge(bytes: &[u8], key: &PublicKey, policy: &Policy) -> Result<(), (&'static str, Refused)> {
    let p = Partition::parse(bytes).map_err(|e| ("parse", Refused::Format(e)))?;
    let v = p
        .verify(key, policy)
        .map_err(|e| ("verify", Refused::Trust(e)))?;
    let mut loader = Box::new(Loader::new());
    let mut out = vec![0u8; 1 << 20];
    for id in v.tables().blob_ids() {
        let blob = v.blob(id).expect("every entry");
        blob.load_into(&mut out, &mut loader)
            .map_err(|e| ("blobs", Refused::Load(e)))?;
    }
    Ok(())
}

/// The environment of a request: `unset`, or `=` and the value.
fn env_value(cell: &str) -> Option<&[u8]> {
    match cell {
        "unset" => None,
        v => Some(v.strip_prefix('=').expect("unset or =value").as_bytes()),
    }
}

/// The answer of a request, as the manifest spells it.
fn answer(v: &VerifiedPartition<'_>, row: &[String]) -> String {
    let int = |i: usize| -> i64 { row[i].parse().expect("an integer") };
    let mut env: Vec<(&str, &[u8])> = Vec::new();
    if let Some(value) = env_value(&row[5]) {
        env.push(("NEURON_UCODE_FLAVOR", value));
    }
    if let Some(value) = env_value(&row[6]) {
        env.push(("NRTUCODE_MPLUS_ON_MARIANA", value));
    }
    let idx = u32::try_from(int(2)).expect("idx is unsigned");
    let arg = i32::try_from(int(3)).expect("an int");
    let result = match row[1].as_str() {
        "image" => v.get_memory_image(idx, arg, i32::try_from(int(4)).unwrap(), env.as_slice()),
        "prof" => v.get_hwdecode_table(idx, arg),
        other => panic!("lane {other}"),
    };
    let blob = match result {
        Err(e) => return format!("code {}", e.code()),
        Ok(blob) => blob,
    };
    let id = blob.id().raw();
    let mut out = vec![0u8; 1 << 20];
    let mut loader = Box::new(Loader::new());
    match (blob.cursor(), blob.load_into(&mut out, &mut loader)) {
        (Some(Cursor::Start), Ok([])) => format!("cursor-start {id}"),
        (Some(Cursor::End), Ok([])) => format!("cursor-end {id}"),
        (None, Ok(bytes)) => {
            let mut h = SoftSha256::new();
            h.update(bytes);
            format!("blob {id} {} {}", bytes.len(), lower_hex(&h.finish()))
        }
        (None, Err(e)) if e.blob() == Some(BlobId::new(id)) => format!("refused {id}"),
        other => panic!("{row:?}: {other:?}"),
    }
}

#[test]
fn the_reader_gives_every_verdict_and_answer_of_the_set() {
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_partition-conformance-set"))
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let hex = std::fs::read_to_string(dir.path().join("public-key.hex")).unwrap();
    let key_bytes: Vec<u8> = (0..32)
        .map(|i| u8::from_str_radix(&hex.trim()[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let key = PublicKey::from_bytes(key_bytes.try_into().unwrap());

    let cases = rows(
        dir.path(),
        "cases.tsv",
        &[
            "file",
            "min_security_counter",
            "expected_class",
            "verdict",
            "step",
            "reason",
            "detail",
            "about",
        ],
    );
    let mut reasons = BTreeSet::new();
    let mut accepted = Vec::new();
    for row in &cases {
        let bytes = std::fs::read(dir.path().join(&row[0])).expect(&row[0]);
        let got = judge(&bytes, &key, &policy(&row[1], &row[2]));
        match (row[3].as_str(), got) {
            ("accept", Ok(())) => accepted.push(row[0].clone()),
            ("refuse", Err((step, error))) => {
                let (reason, detail) = name_and_detail(&error);
                assert_eq!(
                    [step, reason.as_str(), detail.as_str()],
                    [row[4].as_str(), row[5].as_str(), row[6].as_str()],
                    "{}: {error}",
                    row[0]
                );
                reasons.insert(reason);
            }
            (verdict, got) => panic!("{}: expected {verdict}, got {got:?}", row[0]),
        }
    }
    // Small, and covering every step and the canonical-layout refusals.
    assert!((30..=60).contains(&cases.len()), "{} cases", cases.len());
    assert_eq!(
        accepted,
        [
            "tiny.part",
            "fixtures-full.part",
            "fixtures-full-deflate.part",
            "blob-of-1-mib.part",
            "named-by-a-cursor-only.part",
            "tiny-front.part",
            "front-null-getters-outside.part",
            "hand-written-stream.part"
        ]
    );
    for reason in [
        "FormatError::UnreferencedBlob",
        "FormatError::DuplicateBlob",
        "FormatError::CursorOntoCompressed",
        "FormatError::ClassContradicted",
        "TrustError::BadSignature",
        "LoadError::DigestMismatch",
        "LoadError::StoredDigestMismatch",
    ] {
        assert!(reasons.contains(reason), "{reason}: {reasons:?}");
    }

    let requests = rows(
        dir.path(),
        "requests.tsv",
        &[
            "file",
            "lane",
            "idx",
            "region_or_kind",
            "flavor",
            "NEURON_UCODE_FLAVOR",
            "NRTUCODE_MPLUS_ON_MARIANA",
            "answer",
            "about",
        ],
    );
    assert!(requests.len() >= 40, "{} requests", requests.len());
    let files: BTreeSet<&str> = requests.iter().map(|r| r[0].as_str()).collect();
    let mut codes = BTreeSet::new();
    for file in files {
        let bytes = std::fs::read(dir.path().join(file)).unwrap();
        let case = cases.iter().find(|c| c[0] == file).expect("a case");
        let v = Partition::parse(&bytes)
            .unwrap()
            .verify(&key, &policy(&case[1], &case[2]))
            .unwrap();
        for row in requests.iter().filter(|r| r[0] == file) {
            assert_eq!(answer(&v, row), row[7], "{file}: {} ({row:?})", row[8]);
            if let Some(code) = row[7].strip_prefix("code ") {
                codes.insert(code.to_owned());
            }
        }
    }
    assert_eq!(
        codes,
        BTreeSet::from(["1", "2", "3", "8"].map(str::to_owned))
    );
}
