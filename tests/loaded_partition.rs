//! A Rust host's way to a partition file: `PartitionFile::open` reads it, verifies it and checks
//! every blob once; the `LoadedPartition` lives in a `static OnceLock` and answers from many
//! threads at once, exactly the embedded tables' bytes. And what it refuses at open.

use std::path::Path;
use std::sync::OnceLock;

use nrtucode::digest::SoftSha256;
use nrtucode::partition::{
    BlobUse, LoadError, LoadedPartition, OpenError, PartitionFile, Policy, TableClass, Trust,
    TrustError, format,
};
use nrtucode::{ImageIndex, NoEnv, ResolveErr};
use nrtucode_pack::{Blobs, Compression, PackOptions, SigningKey, pack_with};

const TEST_KEY: &str = include_str!("../keys/test-ed25519.pem");

fn key() -> SigningKey {
    SigningKey::from_pem(TEST_KEY).expect("the committed test key")
}

const POLICY: Policy = Policy {
    min_security_counter: 2,
    expected_class: TableClass::Full,
};

/// The full fixtures, signed with the test key, counter 2, written to `path`.
fn write(path: &Path, compression: Compression) -> Vec<u8> {
    let key = key();
    let options = PackOptions {
        security_counter: 2,
        key: Some(&key),
    };
    let (bytes, _) = pack_with(&Blobs::fixtures(TableClass::Full), &options, compression)
        .expect("pack the fixtures");
    std::fs::write(path, &bytes).unwrap();
    bytes
}

/// Every answer of `p` against the embedded tables (the same fixtures), to the byte: image
/// lookups over every slot, region and raw flavor that matters, and every profiler lookup.
/// The number of answers that were bytes.
fn every_answer_is_embedded<T: Trust>(p: &LoadedPartition<T>) -> usize {
    let mut hits = 0;
    for idx in (0..ImageIndex::ALL.len() as u32 + 1).chain([u32::MAX]) {
        for flavor in [1, 2, 3, 17, 18, 19, 4, -1] {
            for region in [-1, 0, 1, 2, 3, 4] {
                let ours = p.get_memory_image(idx, region, flavor, &NoEnv);
                let embedded = nrtucode::get_memory_image(idx, region, flavor, &NoEnv);
                assert_eq!(ours, embedded, "{idx} {region} {flavor}");
                hits += usize::from(ours.is_ok_and(|b| !b.is_empty()));
            }
        }
        for kind in [-1, 0, 1, 2] {
            let ours = p.get_hwdecode_table(idx, kind);
            assert_eq!(
                ours,
                nrtucode::get_hwdecode_table(idx, kind),
                "{idx} {kind}"
            );
            hits += usize::from(ours.is_ok());
        }
    }
    hits
}

/// The host's pattern: one `static`, opened by whichever thread comes first, answering every
/// thread from the same memory (the same addresses), stored and deflate blobs alike.
#[test]
fn a_static_checked_partition_answers_many_threads_with_the_embedded_bytes() {
    static FIRMWARE: OnceLock<LoadedPartition> = OnceLock::new();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nrtucode.part");
    write(&path, Compression::Deflate);
    let public = key().public_key();
    let firmware =
        || FIRMWARE.get_or_init(|| PartitionFile::open(&path, &public, &POLICY).expect("opens"));
    // Eight threads at once: whichever comes first opens it, the others wait for it.
    let barrier = std::sync::Barrier::new(8);
    let threads: Vec<(usize, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    let p = firmware();
                    let iram = p.get_memory_image(7, 0, 1, &NoEnv).unwrap();
                    (every_answer_is_embedded(p), iram.as_ptr() as usize)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let (hits, address) = threads[0];
    assert!(hits > 200, "{hits}");
    assert!(threads.iter().all(|&t| t == (hits, address)), "{threads:?}");
    // Deleting the file changes nothing: what answers was read and checked at open.
    drop(dir);
    assert_eq!(
        firmware().get_hwdecode_table(7, 1),
        nrtucode::get_hwdecode_table(7, 1)
    );
}

/// Many threads at once on one `LoadedPartition` (not one after the other).
#[test]
fn concurrent_lookups_agree() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.part");
    write(&path, Compression::Stored);
    let p = PartitionFile::open(&path, &key().public_key(), &POLICY).expect("opens");
    let barrier = std::sync::Barrier::new(6);
    let counts: Vec<usize> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..6)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    every_answer_is_embedded(&p)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(
        counts.iter().all(|&c| c == counts[0] && c > 200),
        "{counts:?}"
    );
    assert_eq!(p.class(), TableClass::Full);
}

/// Everything is checked at open: a flipped byte of any blob, a key that is not the signer's,
/// a counter below the minimum, and a file that is not there are refused by `open`, by name.
#[test]
fn open_refuses_what_does_not_check() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.part");
    let bytes = write(&path, Compression::Deflate);
    let public = key().public_key();
    let p = PartitionFile::open(&path, &public, &POLICY).expect("opens");
    let tables = p.tables();

    // The last blob's last stored byte, flipped: the signature still holds (blobs are outside
    // it), its digest does not.
    let last = tables.blob_ids().last().unwrap();
    let entry = tables.toc_entry(last).unwrap();
    let mut flipped = bytes.clone();
    flipped[(entry.offset + entry.stored_len - 1) as usize] ^= 1;
    std::fs::write(&path, &flipped).unwrap();
    match PartitionFile::open(&path, &public, &POLICY) {
        Err(
            e @ OpenError::Blob {
                error: LoadError::DigestMismatch { blob } | LoadError::StoredDigestMismatch { blob },
                first_use: Some(user),
            },
        ) => {
            assert_eq!(blob, last);
            assert_eq!(Some(user), tables.first_use(last));
            let said = e.to_string();
            assert!(said.starts_with(&format!("{last} (")), "{said}");
            assert!(said.contains("SHA-256 mismatch"), "{said}");
            assert!(matches!(user, BlobUse::Image { .. } | BlobUse::Prof { .. }));
        }
        other => panic!("{other:?}"),
    }

    std::fs::write(&path, &bytes).unwrap();
    let other = SigningKey::generate();
    assert!(matches!(
        PartitionFile::open(&path, &other.public_key(), &POLICY),
        Err(OpenError::Trust(TrustError::UnknownKey { .. }))
    ));
    let strict = Policy {
        min_security_counter: 3,
        ..POLICY
    };
    assert!(matches!(
        PartitionFile::open(&path, &public, &strict),
        Err(OpenError::Trust(TrustError::Rollback {
            found: 2,
            minimum: 3
        }))
    ));
    let mut cut = bytes.clone();
    cut.truncate(format::HEADER_LEN + 10);
    std::fs::write(&path, &cut).unwrap();
    assert!(matches!(
        PartitionFile::open(&path, &public, &POLICY),
        Err(OpenError::Format(_))
    ));
    assert!(matches!(
        PartitionFile::open(dir.path().join("absent.part"), &public, &POLICY),
        Err(OpenError::Io(_))
    ));
    // A profiler lookup the fixtures have no table for is the embedded code.
    assert_eq!(p.get_hwdecode_table(0, 0), Err(ResolveErr::NoProfiler));
}

/// Every non-empty blob it answers starts at a multiple of `BLOB_ALIGN`, stored (in the file's
/// bytes) or decoded (in its own buffer), from a file and from a copy of bytes in memory; the
/// decoded buffer holds each compressed blob once, rounded up to the alignment.
#[test]
fn every_blob_is_aligned_and_each_compressed_one_decoded_once() {
    let align = nrtucode::catalog::BLOB_ALIGN;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.part");
    let public = key().public_key();
    for compression in [Compression::Stored, Compression::Deflate] {
        let bytes = write(&path, compression);
        // One byte in: a copy must move the bytes to an aligned address.
        let shifted = [&[0u8][..], &bytes].concat();
        for p in [
            PartitionFile::open(&path, &public, &POLICY).expect("opens"),
            LoadedPartition::verify_copy(&shifted[1..], &public, &POLICY).expect("opens"),
        ] {
            let tables = p.tables();
            let (mut decoded, mut blobs) = (0usize, 0usize);
            for id in tables.blob_ids() {
                let entry = tables.toc_entry(id).unwrap();
                if entry.codec != nrtucode::partition::Codec::Stored {
                    decoded = (decoded + entry.decoded_len as usize).next_multiple_of(align);
                }
                let blob = p.blob_bytes(id).expect("a checked blob");
                assert_eq!(blob.len(), entry.decoded_len as usize, "{id}");
                if !blob.is_empty() {
                    assert_eq!(blob.as_ptr().align_offset(align), 0, "{id} {compression:?}");
                    blobs += 1;
                }
            }
            assert!(blobs > 10, "{blobs}");
            assert_eq!(p.decoded_len(), decoded);
            assert_eq!(compression == Compression::Stored, decoded == 0);
            assert!(every_answer_is_embedded(&p) > 200);
        }
    }
}

/// `VerifiedPartition::check_blobs` then `CheckedPartition::check_decoding` (what `inspect`
/// and `provision` run) refuse what `PartitionFile::verify` refuses, with the same error, and
/// pass what it passes.
#[test]
fn check_blobs_and_decoding_refuse_what_verify_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.part");
    let public = key().public_key();
    let bytes = write(&path, Compression::Deflate);
    let good = PartitionFile::from_bytes(bytes.clone());
    assert_eq!(
        good.parse()
            .unwrap()
            .verify(&public, &POLICY)
            .unwrap()
            .check_blobs(&mut SoftSha256::new())
            .and_then(|c| c.check_decoding()),
        Ok(())
    );
    let p = PartitionFile::open(&path, &public, &POLICY).expect("opens");
    let tables = p.tables();
    let mut refused = 0;
    for id in tables.blob_ids() {
        let entry = tables.toc_entry(id).unwrap();
        if entry.stored_len == 0 {
            continue;
        }
        let mut flipped = bytes.clone();
        flipped[entry.offset as usize] ^= 0x80;
        let file = PartitionFile::from_bytes(flipped);
        let verified = file.parse().unwrap().verify(&public, &POLICY).unwrap();
        let checked = verified
            .check_blobs(&mut SoftSha256::new())
            .and_then(|c| c.check_decoding())
            .expect_err("a flipped byte");
        assert_eq!(checked.blob(), Some(id));
        match file.clone().verify(&public, &POLICY) {
            Err(OpenError::Blob { error, .. }) => assert_eq!(error, checked),
            other => panic!("{other:?}"),
        }
        refused += 1;
    }
    assert!(refused > 10, "{refused}");
}

/// An unsigned pack opened through the insecure door is its own type, `LoadedPartition<Unverified>`
/// (a function taking `LoadedPartition` refuses it at compile time: the doc test of
/// `Unverified`), says so when printed, and answers the embedded bytes; the door refuses a
/// signed file (that one is verified), and a verified partition turned unverified answers the same.
#[cfg(feature = "insecure-unsigned")]
#[test]
fn an_unsigned_partition_is_loaded_as_unverified_and_never_as_verified() {
    use nrtucode::partition::Unverified;

    let (unsigned, _) = pack_with(
        &Blobs::fixtures(TableClass::Full),
        &PackOptions {
            security_counter: 2,
            key: None,
        },
        Compression::Deflate,
    )
    .expect("pack the fixtures unsigned");
    let p: LoadedPartition<Unverified> = PartitionFile::from_bytes(unsigned.clone())
        .insecure_trust_unsigned(&POLICY)
        .expect("an unsigned pack, trusted by choice");
    let printed = format!("{p:?}");
    assert!(
        printed.starts_with("LoadedPartition<Unverified>("),
        "{printed}"
    );
    let hits = every_answer_is_embedded(&p);
    assert!(hits > 0);

    let public = key().public_key();
    assert!(matches!(
        PartitionFile::from_bytes(unsigned).verify(&public, &POLICY),
        Err(OpenError::Trust(TrustError::Unsigned))
    ));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signed.part");
    let signed = write(&path, Compression::Stored);
    assert!(matches!(
        PartitionFile::from_bytes(signed.clone()).insecure_trust_unsigned(&POLICY),
        Err(OpenError::Trust(TrustError::Signed))
    ));
    let verified = PartitionFile::from_bytes(signed)
        .verify(&public, &POLICY)
        .expect("verifies");
    assert!(format!("{verified:?}").starts_with("LoadedPartition("));
    let forgotten: LoadedPartition<Unverified> = verified.into();
    assert_eq!(every_answer_is_embedded(&forgotten), hits);
}
