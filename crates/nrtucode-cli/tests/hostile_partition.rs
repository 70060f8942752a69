//! Hostile partitions against the tool's readers (`inspect`, and `list`/`resolve` with
//! `--partition`): authenticate, then parse, then decode. A decoded length nothing vouched for
//! sizes no buffer; a changed stored byte of a compressed stream is refused even where it
//! decodes to the same bytes; a failed signature means no digest is checked and nothing is
//! decoded; and a file inspected without a key never reads as valid.

mod partition_common;
use partition_common::{key, nrtucode, public, text};

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use nrtucode::deflate::{Inflater, decode_checked};
use nrtucode::partition::{Codec, Partition, format};

/// The full fixtures packed with deflate into `dir/NAME`, signed with the test key or not.
fn pack(dir: &Path, name: &str, signed: bool) -> PathBuf {
    let out = dir.join(name);
    let mut args: Vec<std::ffi::OsString> = vec![
        "pack".into(),
        "--fixtures".into(),
        "full".into(),
        "--compress".into(),
        "deflate".into(),
        "-o".into(),
        out.clone().into(),
    ];
    if signed {
        args.extend(["--key".into(), key().into()]);
    } else {
        args.push("--unsigned".into());
    }
    let o = nrtucode(&args, dir);
    assert!(o.status.success(), "{}", text(&o.stderr));
    out
}

/// (entry number, its byte offset in the file, offset of its stored bytes, stored length,
/// decoded length, decoded digest) of every deflate entry.
fn deflate_entries(bytes: &[u8]) -> Vec<(u16, usize, usize, usize, usize, [u8; 32])> {
    let p = Partition::parse(bytes).expect("an intact pack parses");
    let [_, toc_off, _, _] = format::layout(p.descriptor_count(), p.blob_count()).unwrap();
    let t = p.untrusted_tables();
    t.blob_ids()
        .filter_map(|n| {
            let e = t.toc_entry(n)?;
            (e.codec == Codec::Deflate).then_some((
                n.raw(),
                toc_off + n.index() * format::TOC_LEN,
                e.offset as usize,
                e.stored_len as usize,
                e.decoded_len as usize,
                e.sha256,
            ))
        })
        .collect()
}

/// A decoded length of 4 GiB (which a reader sizing from it would try to allocate, and abort
/// on: "memory allocation of 4294967295 bytes failed") or 600 MB (a deflate bomb) is refused by the structure check, by every reader, with
/// the reason, before anything is sized from it: exit 65, never a signal.
#[test]
fn an_unvouched_decoded_length_sizes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    for signed in [true, false] {
        let part = pack(t, if signed { "s.part" } else { "u.part" }, signed);
        let intact = std::fs::read(&part).unwrap();
        let (_, entry_at, ..) = deflate_entries(&intact)[0];
        for decoded_len in [u32::MAX, 600_000_000] {
            let mut bytes = intact.clone();
            let at = entry_at + format::T_DECODED_LEN;
            bytes[at..at + 4].copy_from_slice(&decoded_len.to_le_bytes());
            let bad = t.join("bad.part");
            std::fs::write(&bad, &bytes).unwrap();
            let mut runs: Vec<Vec<std::ffi::OsString>> = vec![
                vec!["inspect".into(), bad.clone().into()],
                vec![
                    "inspect".into(),
                    bad.clone().into(),
                    "--public-key".into(),
                    public().into(),
                ],
            ];
            if signed {
                runs.push(vec![
                    "list".into(),
                    "--partition".into(),
                    bad.clone().into(),
                    "--public-key".into(),
                    public().into(),
                ]);
            } else {
                runs.push(vec![
                    "list".into(),
                    "--partition".into(),
                    bad.clone().into(),
                    "--insecure-skip-signature".into(),
                ]);
            }
            for args in runs {
                let o = nrtucode(&args, t);
                let said = format!("{}{}", text(&o.stdout), text(&o.stderr));
                assert_eq!(o.status.code(), Some(65), "{args:?} {decoded_len}: {said}");
                assert!(
                    said.contains("decoded_len is over the largest blob"),
                    "{args:?}: {said}"
                );
            }
        }
    }
}

/// The first change of one bit of a compressed stream's last byte (a padding bit after its
/// final block) that the decoder cannot tell from the original: (file offset, bit).
fn silent_flip(bytes: &[u8]) -> Option<(usize, u8)> {
    let mut inflater = Box::new(Inflater::new());
    deflate_entries(bytes)
        .into_iter()
        .find_map(|(_, _, offset, stored, decoded, sha256)| {
            let last = offset + stored - 1;
            (0..8).find_map(|bit| {
                let mut stream = bytes[offset..offset + stored].to_vec();
                *stream.last_mut()? ^= 1 << bit;
                let mut out = vec![0u8; decoded];
                decode_checked(&stream, decoded, &sha256, &mut out, &mut inflater)
                    .is_ok()
                    .then_some((last, bit))
            })
        })
}

/// A changed byte of a compressed stream that still inflates to the same output (a bit after
/// the end code, which no decoder reads): the stored bytes' signed digest refuses it, in
/// `inspect` and in `resolve`.
#[test]
fn a_changed_stored_byte_that_decodes_the_same_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let part = pack(t, "s.part", true);
    let mut bytes = std::fs::read(&part).unwrap();
    let (at, bit) = silent_flip(&bytes).expect("a stream with padding bits after its final block");
    bytes[at] ^= 1 << bit;
    std::fs::write(&part, &bytes).unwrap();
    let o = nrtucode(
        &[
            OsStr::new("inspect"),
            part.as_os_str(),
            OsStr::new("--public-key"),
            public().as_os_str(),
        ],
        t,
    );
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(65), "{out}");
    assert!(out.contains("signature") && out.contains("ok"), "{out}");
    assert!(out.contains("compressed bytes"), "{out}");
    let o = nrtucode(
        &[
            OsStr::new("resolve"),
            OsStr::new("7"),
            OsStr::new("iram"),
            OsStr::new("--partition"),
            part.as_os_str(),
            OsStr::new("--public-key"),
            public().as_os_str(),
        ],
        t,
    );
    assert_eq!(o.status.code(), Some(65), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("compressed bytes"),
        "{}",
        text(&o.stderr)
    );
}

/// After a failed signature no digest is checked and nothing is decoded: a partition with a
/// changed signed byte and a broken deflate stream is refused for its signature alone.
#[test]
fn a_failed_signature_checks_no_digest_and_decodes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let part = pack(t, "s.part", true);
    let mut bytes = std::fs::read(&part).unwrap();
    let (_, _, offset, stored, ..) = deflate_entries(&bytes)[0];
    bytes[offset + stored / 2] ^= 0x10; // the stream, not signed directly
    bytes[format::H_SECURITY_COUNTER] ^= 1; // a signed byte
    std::fs::write(&part, &bytes).unwrap();
    let o = nrtucode(
        &[
            OsStr::new("inspect"),
            part.as_os_str(),
            OsStr::new("--public-key"),
            public().as_os_str(),
            OsStr::new("--json"),
        ],
        t,
    );
    assert_eq!(o.status.code(), Some(65));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["verdict"], "refused");
    assert!(
        v["checks"]["signature"]
            .as_str()
            .unwrap()
            .starts_with("bad signature"),
        "{v}"
    );
    assert_eq!(
        v["checks"]["digests"],
        "not checked: the signature did not verify"
    );
    assert!(
        v["error"].as_str().unwrap().starts_with("bad signature"),
        "{v}"
    );
}

/// `inspect PART --json` without a key, which must exit 0: its document and its stderr.
fn inspect_without_a_key(part: &Path, dir: &Path) -> (serde_json::Value, String) {
    let o = nrtucode(
        &[
            OsStr::new("inspect"),
            part.as_os_str(),
            OsStr::new("--json"),
        ],
        dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v = serde_json::from_slice(&o.stdout).unwrap();
    (v, text(&o.stderr))
}

/// Without `--public-key`, a tampered signed file reads as nothing valid: no field says valid,
/// the verdict says the signature was not checked, in JSON, in the text's first row and on
/// stderr.
#[test]
fn a_file_inspected_without_a_key_never_reads_as_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let part = pack(t, "s.part", true);
    let mut bytes = std::fs::read(&part).unwrap();
    bytes[format::H_SECURITY_COUNTER] ^= 1; // the signature no longer holds
    std::fs::write(&part, &bytes).unwrap();
    let (v, stderr) = inspect_without_a_key(&part, t);
    assert_eq!(v["format"], "nrtucode-inspect/3");
    assert_eq!(v["verdict"], "signature not checked");
    assert!(v.get("valid").is_none(), "{v}");
    assert!(
        v["checks"]["signature"]
            .as_str()
            .unwrap()
            .starts_with("NOT CHECKED"),
        "{v}"
    );
    assert!(
        v["checks"]["digests"]
            .as_str()
            .unwrap()
            .contains("nothing decoded"),
        "{v}"
    );
    assert!(
        stderr.contains("warning") && stderr.contains("signature not checked"),
        "{stderr}"
    );
    let o = nrtucode(&[OsStr::new("inspect"), part.as_os_str()], t);
    let first = text(&o.stdout);
    let first = first
        .lines()
        .find(|l| l.contains("verdict"))
        .unwrap_or_default()
        .to_owned();
    assert!(first.contains("SIGNATURE NOT CHECKED"), "{first}");
}

/// Without `--public-key`, `inspect` decodes nothing (authenticate, then decode), so on an
/// unsigned partition whose deflate stream is broken, with `stored_sha256` written for the
/// broken bytes, it exits 0 saying the signature was not checked and nothing was decoded
/// (`inspect --help` says so); `list --insecure-skip-signature`, which takes the unsigned
/// partition as trusted and decodes every blob, refuses it.
#[test]
fn without_a_key_inspect_decodes_nothing_and_the_insecure_reader_decodes_everything() {
    use nrtucode::digest::{Sha256Hasher, SoftSha256};
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let part = pack(t, "u.part", false);
    let mut bytes = std::fs::read(&part).unwrap();
    let (_, entry_at, offset, stored, ..) = deflate_entries(&bytes)[0];
    bytes[offset..offset + stored].fill(0xff); // not a deflate stream any more
    let mut h = SoftSha256::new();
    h.update(&bytes[offset..offset + stored]);
    let at = entry_at + format::T_STORED_SHA256;
    bytes[at..at + 32].copy_from_slice(&h.finish());
    std::fs::write(&part, &bytes).unwrap();

    let (v, _) = inspect_without_a_key(&part, t);
    assert_eq!(v["verdict"], "signature not checked", "{v}");
    let digests = v["checks"]["digests"].as_str().unwrap();
    assert!(digests.contains("nothing decoded"), "{v}");

    let o = nrtucode(
        &[
            OsStr::new("list"),
            OsStr::new("--partition"),
            part.as_os_str(),
            OsStr::new("--insecure-skip-signature"),
        ],
        t,
    );
    assert_eq!(o.status.code(), Some(65), "{}", text(&o.stderr));

    let o = nrtucode(&[OsStr::new("inspect"), OsStr::new("--help")], t);
    let help = text(&o.stdout);
    assert!(
        help.contains("without --public-key") && help.contains("nothing is decoded"),
        "{help}"
    );
}
