//! Feature `digest`: every embedded blob verifies against the SHA-256 recorded at build time
//! (in both blob modes: CI runs this with the fixtures and with a carved blob directory), the
//! recorded digests are the digests of the source bytes, and corruption is caught.
#![cfg(feature = "digest")]

use nrtucode::catalog::{
    BLOB_SOURCE, BlobSource, DISTINCT_BLOB_COUNT, EMBEDDED_BLOB_BYTES, image_entries, prof_entries,
};
use nrtucode::digest::{
    CheckError, EMPTY_SHA256, Sha256Digest, Sha256Hasher, SoftSha256, check_blob, check_blob_with,
    check_sha256, copy_blob_checked, copy_blob_checked_with, copy_checked, embedded_blobs,
    expected_sha256, expected_sha256_const,
};
use nrtucode_facts::{fixture_bytes, getters};
use sha2::{Digest, Sha256};

fn sha256(bytes: &[u8]) -> Sha256Digest {
    Sha256::digest(bytes).into()
}

#[test]
fn the_table_lists_each_distinct_blob_once_with_its_digest() {
    let table = embedded_blobs();
    assert_eq!(table.len(), DISTINCT_BLOB_COUNT);
    assert_eq!(
        table.iter().map(|b| b.bytes().len()).sum::<usize>(),
        EMBEDDED_BLOB_BYTES
    );
    for blob in table {
        // Computed here by an independent sha2 call over the embedded bytes.
        assert_eq!(blob.sha256(), &sha256(blob.bytes()));
        assert!(format!("{blob:?}").contains(&format!("<{} bytes>", blob.bytes().len())));
    }
}

#[test]
#[cfg_attr(
    not(nrtucode_fixtures),
    ignore = "compares with the fixture generator's bytes; a blob directory's files are checked \
              against its manifest's SHA-256 by the build script instead"
)]
fn recorded_digests_are_those_of_the_source_bytes() {
    // The fixture generator is the source in fixture mode: its bytes, hashed here, must be the
    // recorded digest of the blob a getter resolves to.
    assert_eq!(BLOB_SOURCE, BlobSource::Fixtures);
    let mut checked = 0;
    for entry in image_entries() {
        let Some(blob @ [_, ..]) = entry.blob else {
            continue;
        };
        let getter = getters()
            .into_iter()
            .find(|g| {
                g.gen_name == entry.slot.generation.name()
                    && g.engine == entry.slot.engine.name()
                    && g.class == entry.slot.class.name()
                    && g.variant == entry.flavor.variant_name(entry.slot.generation)
                    && g.region == entry.region.name()
            })
            .expect("a getter row for every image entry");
        assert_eq!(
            expected_sha256(blob).unwrap(),
            &sha256(&fixture_bytes(&getter))
        );
        checked += 1;
    }
    assert_eq!(checked > 0, DISTINCT_BLOB_COUNT != 0);
}

#[test]
fn every_embedded_blob_verifies_in_place_and_by_copy() {
    let mut buffer = vec![0u8; 1 << 20];
    let mut verified = 0;
    for blob in image_entries()
        .filter_map(|e| e.blob)
        .chain(prof_entries().filter_map(|e| e.blob))
    {
        check_blob(blob).unwrap();
        let written = copy_blob_checked(blob, &mut buffer).unwrap();
        assert_eq!(written, blob.len());
        assert_eq!(&buffer[..written], blob);
        verified += 1;
    }
    // DISTINCT_BLOB_COUNT is 0 in a build that embeds no blob (`--no-default-features
    // --features partition`), where clippy calls the comparison always true.
    #[allow(clippy::absurd_extreme_comparisons)]
    let all_verified = verified >= DISTINCT_BLOB_COUNT;
    assert!(all_verified);
}

#[test]
#[cfg_attr(
    nrtucode_embeds_nothing,
    ignore = "needs an embedded blob; the cargo features of this build select none"
)]
fn a_one_bit_flip_is_caught() {
    let blob = embedded_blobs()
        .iter()
        .map(|b| b.bytes())
        .max_by_key(|b| b.len())
        .expect("this build embeds a blob");
    let expected = expected_sha256(blob).unwrap();
    let mut hasher = SoftSha256::new();
    for bit in [0, 7, blob.len() * 4 + 3, blob.len() * 8 - 1] {
        let mut copy = blob.to_vec();
        copy[bit / 8] ^= 1 << (bit % 8);
        // In place.
        let err = check_sha256(&copy, expected, &mut hasher).unwrap_err();
        assert_eq!(err, CheckError::Mismatch);
        assert_ne!(&sha256(&copy), expected);
        // While copying: the destination is zeroed again, not left holding the bad bytes.
        let mut dst = vec![0xa5u8; blob.len() + 8];
        let err = copy_checked(&copy, &mut dst, expected, &mut hasher).unwrap_err();
        assert_eq!(err, CheckError::Mismatch);
        assert!(dst[..blob.len()].iter().all(|&b| b == 0));
        assert!(dst[blob.len()..].iter().all(|&b| b == 0xa5));
        // The intact bytes pass through the same hasher.
        assert_eq!(
            copy_checked(blob, &mut dst, expected, &mut hasher),
            Ok(blob.len())
        );
    }
    assert!(
        CheckError::Mismatch
            .to_string()
            .starts_with("SHA-256 mismatch")
    );
}

#[test]
#[cfg_attr(
    nrtucode_embeds_nothing,
    ignore = "needs an embedded blob; the cargo features of this build select none"
)]
fn slices_that_are_not_embedded_blobs_are_refused() {
    let blob = embedded_blobs()
        .first()
        .map(|b| b.bytes())
        .expect("this build embeds a blob");
    let copy = blob.to_vec();
    assert_eq!(
        check_blob(&copy),
        Err(CheckError::NotEmbedded { len: blob.len() })
    );
    // A sub-slice of a blob is not the blob.
    assert!(matches!(
        check_blob(&blob[1..]),
        Err(CheckError::NotEmbedded { .. })
    ));
    // A cursor (empty) is trivially intact.
    assert_eq!(expected_sha256(&[]), Ok(&EMPTY_SHA256));
    assert_eq!(check_blob(&[]), Ok(()));
    let mut dst = [7u8; 4];
    assert_eq!(copy_blob_checked(&[], &mut dst), Ok(0));
    assert_eq!(dst, [7; 4]);
}

#[test]
#[cfg_attr(
    nrtucode_embeds_nothing,
    ignore = "needs an embedded blob; the cargo features of this build select none"
)]
fn a_short_destination_is_refused_untouched() {
    let blob = embedded_blobs()
        .first()
        .map(|b| b.bytes())
        .expect("this build embeds a blob");
    let mut dst = vec![0x5au8; blob.len() - 1];
    assert_eq!(
        copy_blob_checked(blob, &mut dst),
        Err(CheckError::BufferTooSmall {
            needed: blob.len(),
            available: blob.len() - 1
        })
    );
    assert!(dst.iter().all(|&b| b == 0x5a));
}

/// A stand-in for a hardware SHA block: counts what it is fed, and can be made faulty.
struct CountingHasher {
    inner: SoftSha256,
    fed: usize,
    resets: usize,
    faulty: bool,
}

impl Sha256Hasher for CountingHasher {
    fn reset(&mut self) {
        self.resets += 1;
        self.fed = 0;
        self.inner.reset();
    }
    fn update(&mut self, bytes: &[u8]) {
        self.fed += bytes.len();
        self.inner.update(bytes);
    }
    fn finish(&mut self) -> Sha256Digest {
        let mut digest = self.inner.finish();
        if self.faulty {
            digest[0] ^= 1;
        }
        digest
    }
}

#[test]
#[cfg_attr(
    nrtucode_embeds_nothing,
    ignore = "needs an embedded blob; the cargo features of this build select none"
)]
fn a_custom_hasher_replaces_the_software_one() {
    let blob = embedded_blobs()
        .first()
        .map(|b| b.bytes())
        .expect("this build embeds a blob");
    let mut hw = CountingHasher {
        inner: SoftSha256::new(),
        fed: 0,
        resets: 0,
        faulty: false,
    };
    check_blob_with(blob, &mut hw).unwrap();
    assert_eq!((hw.fed, hw.resets), (blob.len(), 1));
    let mut dst = vec![0u8; blob.len()];
    assert_eq!(
        copy_blob_checked_with(blob, &mut dst, &mut hw),
        Ok(blob.len())
    );
    assert_eq!((hw.fed, hw.resets), (blob.len(), 2));
    // The answer is the hasher's: a faulty block fails every blob.
    hw.faulty = true;
    assert!(matches!(
        check_blob_with(blob, &mut hw),
        Err(CheckError::Mismatch)
    ));
}

#[test]
fn the_const_lookup_finds_digests_by_content() {
    for blob in embedded_blobs() {
        assert_eq!(expected_sha256_const(blob.bytes()), Some(*blob.sha256()));
        // By content: a copy is found too (its digest is the same, by definition).
        let copy = blob.bytes().to_vec();
        assert_ne!(copy.as_ptr(), blob.bytes().as_ptr());
        assert_eq!(expected_sha256_const(&copy), Some(*blob.sha256()));
    }
    assert_eq!(expected_sha256_const(&[]), Some(EMPTY_SHA256));
    if let Some(blob) = embedded_blobs().first() {
        let mut changed = blob.bytes().to_vec();
        changed[0] ^= 0x80;
        assert_eq!(expected_sha256_const(&changed), None);
    }
}

#[cfg(all(feature = "gen-cayman", feature = "flavor-perf"))]
mod at_compile_time {
    use super::*;
    use nrtucode::{Flavor, ImageIndex, Region, image};

    const IRAM: &[u8] = image!(ImageIndex::CAYMAN_NX_ACT, Region::Iram, Flavor::Perf);
    const IRAM_SHA256: Sha256Digest = match expected_sha256_const(IRAM) {
        Some(digest) => digest,
        None => panic!("CAYMAN NX ACT PERF IRAM is embedded"),
    };

    #[test]
    fn a_const_digest_checks_a_const_blob() {
        assert_eq!(expected_sha256(IRAM), Ok(&IRAM_SHA256));
        let mut device = vec![0u8; IRAM.len()];
        assert_eq!(
            copy_checked(IRAM, &mut device, &IRAM_SHA256, &mut SoftSha256::new()),
            Ok(IRAM.len())
        );
    }
}
