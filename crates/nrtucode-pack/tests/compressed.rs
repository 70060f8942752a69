//! Partitions packed with `Compression::Deflate`: every answer through `Blob::load_into` and its
//! raw forms equals the embedded tables' (decode-verify for a deflate blob, copy-verify for a
//! stored one); what is kept as deflate; refusals (short buffer, a flipped byte of a compressed
//! blob, a wrong decoded length) with nothing left behind.

use nrtucode::digest::SoftSha256;
use nrtucode::partition::{
    Blob, BlobId, Codec, LoadError, Loader, Partition, Policy, TableClass, Tables, TocEntry,
    VerifiedPartition,
};
use nrtucode::{Flavor, ImageIndex, NoEnv, ProfKind, Region};
use nrtucode_pack::{Blobs, Compression, PackOptions, SigningKey, Summary, pack_with};

const TEST_KEY: &str = include_str!("../../../keys/test-ed25519.pem");

fn packed(class: TableClass, compression: Compression) -> (Vec<u8>, Summary) {
    let key = SigningKey::from_pem(TEST_KEY).expect("the committed test key");
    pack_with(
        &Blobs::fixtures(class),
        &PackOptions {
            security_counter: 0,
            key: Some(&key),
        },
        compression,
    )
    .expect("pack")
}

fn verified(bytes: &[u8], class: TableClass) -> VerifiedPartition<'_> {
    let key = SigningKey::from_pem(TEST_KEY).unwrap().public_key();
    let policy = Policy {
        min_security_counter: 0,
        expected_class: class,
    };
    Partition::parse(bytes)
        .unwrap()
        .verify(&key, &policy)
        .unwrap()
}

/// The entries (codec, stored length, decoded length) of a partition.
fn codecs(p: &VerifiedPartition<'_>) -> Vec<(Codec, u32, u32)> {
    p.tables()
        .blob_ids()
        .map(|n| {
            let e = p.tables().toc_entry(n).unwrap();
            (e.codec, e.stored_len, e.decoded_len)
        })
        .collect()
}

/// The fixture images are near-random and stay stored; the PROF blobs (mostly empty records)
/// are kept as deflate; the partition is smaller by what they save; and the summary says so.
#[test]
fn deflate_keeps_only_what_saves_space() {
    let (plain, none) = packed(TableClass::Full, Compression::Stored);
    let (small, summary) = packed(TableClass::Full, Compression::Deflate);
    assert_eq!(none, Summary::default());
    let (p, q) = (
        verified(&plain, TableClass::Full),
        verified(&small, TableClass::Full),
    );
    let (a, b) = (codecs(&p), codecs(&q));
    assert_eq!(a.len(), b.len());
    let mut deflated = 0;
    for (n, ((_, stored, decoded), (codec, c_stored, c_decoded))) in a.iter().zip(&b).enumerate() {
        assert_eq!(decoded, c_decoded, "blob {n}");
        let n16 = BlobId::new(n as u16);
        assert_eq!(
            p.tables().toc_entry(n16).unwrap().sha256,
            q.tables().toc_entry(n16).unwrap().sha256,
            "blob {n}: the digest is of the decoded bytes, whatever the codec"
        );
        match *codec {
            Codec::Deflate => {
                deflated += 1;
                assert!(c_stored.div_ceil(16) < stored.div_ceil(16), "blob {n}");
            }
            Codec::Stored => assert_eq!(c_stored, stored, "blob {n}"),
            other => panic!("blob {n}: codec {other:?}"),
        }
    }
    assert_eq!(deflated, 14, "the 14 distinct PROF blobs");
    assert_eq!((summary.blobs, summary.compressed), (a.len(), 14));
    // Smaller by what compression saved, give or take each blob's alignment padding.
    let saved = summary.decoded_bytes - summary.stored_bytes;
    assert!(
        plain.len() - small.len() <= saved + 16 * 14,
        "{} vs {saved}",
        plain.len() - small.len()
    );
    assert!(
        plain.len() - small.len() + 16 * 14 >= saved,
        "{} vs {saved}",
        plain.len() - small.len()
    );
    assert!(
        summary
            .to_string()
            .starts_with("deflate: 14 of 177 blobs compressed, "),
        "{summary}"
    );
    // Packing is still deterministic.
    assert_eq!(packed(TableClass::Full, Compression::Deflate).0, small);
}

/// What a stored pack's blob answers, checked in place (a cursor: its empty slice).
fn in_place(blob: Blob<'_>) -> &[u8] {
    blob.check(&mut SoftSha256::new())
        .expect("a stored pack's blob checks")
}

/// Every (slot, region, flavor) and profiler table: `load_into` over the compressed pack gives
/// what the stored pack of the same class answers in place, checked (which round_trip.rs
/// compares with the embedded tables), code or bytes, into a buffer whose bytes past the blob
/// stay untouched; for the full class, also the embedded answer itself. A deflate blob has no
/// bytes in place (`check` refuses it); a stored one still does.
fn compare_everything(class: TableClass) {
    let (plain_bytes, _) = packed(class, Compression::Stored);
    let (bytes, _) = packed(class, Compression::Deflate);
    let (plain, p) = (verified(&plain_bytes, class), verified(&bytes, class));
    let mut loader = Box::new(Loader::new());
    let mut out = vec![0u8; 0x40000];
    let (mut answers, mut decoded) = (0, 0);
    let mut compare =
        |what: &str,
         expected: Result<Blob<'_>, nrtucode::ResolveErr>,
         got: Result<Blob<'_>, nrtucode::ResolveErr>,
         embedded: Option<Result<&'static [u8], nrtucode::ResolveErr>>| {
            answers += 1;
            let expected = expected.map(in_place);
            if let Some(embedded) = embedded {
                assert_eq!(expected, embedded, "{what}");
            }
            match (expected, got) {
                (Ok(e), Ok(g)) => {
                    out.fill(0xa5);
                    let loaded = g.load_into(&mut out, &mut loader).expect(what);
                    assert_eq!(loaded, e, "{what}");
                    assert!(out[e.len()..].iter().all(|&b| b == 0xa5), "{what}");
                    if g.cursor().is_none() && g.codec() == Codec::Deflate {
                        decoded += 1;
                        assert_eq!(
                            g.check(&mut SoftSha256::new()),
                            Err(LoadError::NotStored {
                                blob: g.id(),
                                codec: Codec::Deflate
                            }),
                            "{what}"
                        );
                    } else {
                        assert_eq!(in_place(g), e, "{what}");
                    }
                }
                (Err(e), Err(g)) => assert_eq!(g, e, "{what}"),
                (e, g) => panic!("{what}: stored pack {e:?}, compressed {g:?}"),
            }
        };
    for idx in ImageIndex::ALL {
        for region in Region::ALL {
            for flavor in Flavor::ALL.into_iter().filter(|f| *f != Flavor::Auto) {
                compare(
                    &format!("{idx:?} {region:?} {flavor:?}"),
                    plain.resolve_image(idx, region, flavor, &NoEnv),
                    p.resolve_image(idx, region, flavor, &NoEnv),
                    (class == TableClass::Full)
                        .then(|| nrtucode::resolve_image(idx, region, flavor, &NoEnv)),
                );
            }
        }
        for kind in ProfKind::ALL {
            compare(
                &format!("{idx:?} {kind:?}"),
                plain.resolve_hwdecode(idx, kind),
                p.resolve_hwdecode(idx, kind),
                (class == TableClass::Full).then(|| nrtucode::resolve_hwdecode(idx, kind)),
            );
        }
    }
    assert_eq!(answers, 38 * 4 * 6 + 38 * 2);
    assert!(decoded > 0, "{decoded} decoded");
}

#[test]
fn full_compressed_partition_answers_like_the_embedded_tables() {
    compare_everything(TableClass::Full);
}

#[test]
fn front_compressed_partition_answers_like_the_front_library() {
    compare_everything(TableClass::Front);
}

/// The first deflate blob: its handle's number and entry.
fn first_deflate(tables: Tables<'_>) -> (BlobId, TocEntry) {
    tables
        .blob_ids()
        .find_map(|n| {
            let e = tables.toc_entry(n)?;
            (e.codec == Codec::Deflate).then_some((n, e))
        })
        .expect("a deflate blob")
}

fn unsigned_policy() -> Policy {
    Policy {
        min_security_counter: 0,
        expected_class: TableClass::Full,
    }
}

#[test]
fn a_short_buffer_gets_the_size_needed_and_nothing_written() {
    let (bytes, _) = packed(TableClass::Full, Compression::Deflate);
    let p = verified(&bytes, TableClass::Full);
    let (n, e) = first_deflate(p.tables());
    let decoded_len = e.decoded_len as usize;
    let mut out = vec![0xa5u8; decoded_len - 1];
    assert_eq!(
        p.blob(n).unwrap().load_into(&mut out, &mut Loader::new()),
        Err(LoadError::BufferTooSmall {
            needed: decoded_len,
            available: decoded_len - 1
        })
    );
    assert!(out.iter().all(|&b| b == 0xa5));
    assert_eq!(
        p.blob(BlobId::new(60000)),
        None,
        "no blob past the table of contents"
    );
}

/// A flipped byte inside a compressed blob (an unsigned pack, so that only the blob changes):
/// refused by the digest of the stored bytes, naming the blob, before the decoder reads any of
/// it: nothing is written to the buffer.
#[test]
fn a_flipped_byte_of_a_compressed_blob_is_refused_naming_it() {
    let (mut bytes, _) = pack_with(
        &Blobs::fixtures(TableClass::Full),
        &PackOptions::default(),
        Compression::Deflate,
    )
    .unwrap();
    let (n, e) = first_deflate(
        Partition::parse(&bytes)
            .unwrap()
            .insecure_trust_unsigned(&unsigned_policy())
            .unwrap()
            .tables(),
    );
    let (offset, stored_len, decoded_len) = (
        e.offset as usize,
        e.stored_len as usize,
        e.decoded_len as usize,
    );
    let mut loader = Box::new(Loader::new());
    for at in [
        offset,
        offset + 1,
        offset + stored_len / 2,
        offset + stored_len - 1,
    ] {
        bytes[at] ^= 0x10;
        let p = Partition::parse(&bytes)
            .unwrap()
            .insecure_trust_unsigned(&unsigned_policy())
            .unwrap();
        let mut out = vec![0xa5u8; decoded_len + 8];
        let got = p
            .blob(n)
            .unwrap()
            .load_into(&mut out, &mut loader)
            .map(|_| ());
        assert_eq!(
            got,
            Err(LoadError::StoredDigestMismatch { blob: n }),
            "byte {at}"
        );
        assert!(out.iter().all(|&b| b == 0xa5), "byte {at}: written");
        let message = got.unwrap_err().to_string();
        assert!(message.starts_with(&format!("{n}: ")), "{message}");
        assert_eq!(
            p.check_blobs(&mut SoftSha256::new()),
            Err(LoadError::StoredDigestMismatch { blob: n }),
            "byte {at}"
        );
        bytes[at] ^= 0x10;
    }
}

/// The defect of format version 1: a changed bit of a compressed stream that still decodes
/// to the same bytes (here a padding bit after the final block) passed every check of a
/// signed partition, the decoded digest included. Such a change exists (the decoder alone
/// accepts it), and the signed digest of the stored bytes now refuses it, in `check_blobs` and
/// before decoding.
#[test]
fn a_change_to_a_compressed_stream_that_decodes_the_same_is_refused() {
    let (mut bytes, _) = packed(TableClass::Full, Compression::Deflate);
    let entries: Vec<(BlobId, TocEntry)> = {
        let p = verified(&bytes, TableClass::Full);
        let t = p.tables();
        t.blob_ids()
            .filter_map(|n| t.toc_entry(n).map(|e| (n, e)))
            .filter(|(_, e)| e.codec == Codec::Deflate)
            .collect()
    };
    let mut inflater = Box::new(nrtucode::deflate::Inflater::new());
    // The first (blob, byte, bit) whose flip the decoder alone cannot tell.
    let silent = entries.iter().find_map(|&(n, e)| {
        let (offset, decoded_len) = (e.offset as usize, e.decoded_len as usize);
        let stream = &bytes[offset..offset + e.stored_len as usize];
        let last = stream.len() - 1;
        (0..8).find_map(|bit| {
            let mut changed = stream.to_vec();
            changed[last] ^= 1 << bit;
            let mut out = vec![0u8; decoded_len];
            nrtucode::deflate::decode_checked(
                &changed,
                decoded_len,
                &e.sha256,
                &mut out,
                &mut inflater,
            )
            .is_ok()
            .then_some((n, offset + last, bit))
        })
    });
    let (n, at, bit) = silent.expect("a compressed stream with padding bits after its final block");
    bytes[at] ^= 1 << bit;
    let p = verified(&bytes, TableClass::Full); // the signature still holds
    let refused = Err(LoadError::StoredDigestMismatch { blob: n });
    assert_eq!(p.check_blobs(&mut SoftSha256::new()).map(|_| ()), refused);
    let blob = p.blob(n).unwrap();
    let mut out = vec![0xa5u8; blob.len()];
    assert_eq!(
        blob.load_into(&mut out, &mut Loader::new()).map(|_| ()),
        refused
    );
    assert!(
        out.iter().all(|&b| b == 0xa5),
        "decoded before it was authenticated"
    );
}
