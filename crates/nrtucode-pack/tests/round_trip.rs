//! Packs the fixtures (full and front), reads them back through `nrtucode::partition`, and
//! compares every answer with the embedded tables; then every refusal.

use nrtucode::digest::SoftSha256;
use nrtucode::partition::{
    BlobId, BlobUse, Codec, FormatError, LoadError, Loader, Partition, Policy, PublicKey,
    TableClass, TableName, TrustError, format,
};
use nrtucode::update::Refusal;
use nrtucode::{Generation, ImageIndex, NoEnv, Region, ResolveErr};
use nrtucode_pack::{Blobs, PackOptions, SigningKey, pack, public_key_from_pem, public_key_pem};

const TEST_KEY: &str = include_str!("../../../keys/test-ed25519.pem");
const TEST_PUB: &str = include_str!("../../../keys/test-ed25519.pub.pem");

fn key() -> SigningKey {
    SigningKey::from_pem(TEST_KEY).expect("the committed test key")
}

fn policy(class: TableClass) -> Policy {
    Policy {
        min_security_counter: 0,
        expected_class: class,
    }
}

fn packed(class: TableClass, counter: u32) -> Vec<u8> {
    let key = key();
    pack(
        &Blobs::fixtures(class),
        &PackOptions {
            security_counter: counter,
            key: Some(&key),
        },
    )
    .expect("pack")
}

/// Where an empty slice lies among its image's non-empty regions: (region, start|end) pairs.
fn place(ptr: usize, regions: &[Option<(usize, usize)>; 4]) -> Vec<(usize, &'static str)> {
    let mut out = Vec::new();
    for (r, reg) in regions.iter().enumerate() {
        if let Some((p, len)) = reg.filter(|(_, l)| *l > 0) {
            if ptr == p {
                out.push((r, "start"));
            }
            if ptr == p + len {
                out.push((r, "end"));
            }
        }
    }
    out
}

/// What the embedded full tables answer, reduced to `class`: the front library has NULL
/// getters outside PERF/RELEASE and DKL_PERF of SUNDA to MARIANA_PLUS.
fn expected_image(
    class: TableClass,
    idx: u32,
    region: i32,
    flavor: i32,
    env: &[(&str, &str)],
) -> Result<&'static [u8], ResolveErr> {
    let answer = nrtucode::get_memory_image(idx, region, flavor, env)?;
    let effective = match nrtucode::Request::image(idx, region, flavor).with_effective_flavor(env) {
        nrtucode::Request::Image { flavor, .. } => flavor,
        nrtucode::Request::Prof { .. } => unreachable!(),
    };
    let maverick =
        ImageIndex::from_raw(idx).map(ImageIndex::generation) == Some(Generation::Maverick);
    if class == TableClass::Front && (maverick || !matches!(effective, 1 | 17)) {
        return Err(ResolveErr::NullGetter);
    }
    Ok(answer)
}

fn compare_everything(class: TableClass) {
    let bytes = packed(class, 0);
    let key = public_key_from_pem(TEST_PUB).unwrap();
    let p = Partition::parse(&bytes)
        .unwrap()
        .verify(&key, &policy(class))
        .unwrap();
    p.check_blobs(&mut SoftSha256::new()).unwrap();
    let mut hasher = SoftSha256::new();
    let envs: [&[(&str, &str)]; 4] = [
        &[],
        &[("NEURON_UCODE_FLAVOR", "debug")],
        &[("NEURON_UCODE_FLAVOR", "TEST")],
        &[("NRTUCODE_MPLUS_ON_MARIANA", "1")],
    ];
    let idxs = (0..=40).chain([u32::MAX, 1 << 31]);
    let regions = [i32::MIN, -1, 0, 1, 2, 3, 4, i32::MAX];
    let flavors = [
        i32::MIN,
        -1,
        0,
        1,
        2,
        3,
        4,
        16,
        17,
        18,
        19,
        20,
        255,
        i32::MAX,
    ];
    let mut answers = 0;
    for env in envs {
        for idx in idxs.clone() {
            for flavor in flavors {
                let mut ours = [None; 4];
                let mut theirs = [None; 4];
                for region in regions {
                    let got = p
                        .get_memory_image(idx, region, flavor, env)
                        .map(|b| b.check(&mut hasher).expect("a signed blob checks"));
                    let want = expected_image(class, idx, region, flavor, env);
                    assert_eq!(
                        got, want,
                        "{class:?} idx {idx} region {region} flavor {flavor} {env:?}"
                    );
                    if let (Ok(g), Ok(w), Ok(r)) = (got, want, usize::try_from(region)) {
                        if r < 4 {
                            ours[r] = Some((g.as_ptr() as usize, g.len()));
                            theirs[r] = Some((w.as_ptr() as usize, w.len()));
                        }
                        assert_eq!(g.as_ptr() as usize % 16 * usize::from(!g.is_empty()), 0);
                    }
                    answers += 1;
                }
                // Every cursor lies where the embedded one lies among its image's regions.
                for r in 0..4 {
                    if let (Some((gp, 0)), Some((wp, 0))) = (ours[r], theirs[r]) {
                        let (a, b) = (place(gp, &ours), place(wp, &theirs));
                        assert!(
                            !a.is_empty() && a == b,
                            "cursor {idx} {r} {flavor}: {a:?} vs {b:?}"
                        );
                    }
                }
            }
        }
    }
    for idx in (0..=40).chain([u32::MAX]) {
        for kind in [-1, 0, 1, 2, i32::MAX] {
            let got = p
                .get_hwdecode_table(idx, kind)
                .map(|b| b.check(&mut hasher).expect("a signed blob checks"));
            let mut want = nrtucode::get_hwdecode_table(idx, kind);
            let maverick =
                ImageIndex::from_raw(idx).map(ImageIndex::generation) == Some(Generation::Maverick);
            if class == TableClass::Front && maverick && want.is_ok() {
                want = Err(ResolveErr::NoProfiler);
            }
            assert_eq!(got, want, "hwdecode {idx} {kind}");
        }
    }
    assert!(answers > 10_000);
}

#[test]
fn full_partition_answers_like_the_embedded_tables() {
    compare_everything(TableClass::Full);
}

#[test]
fn front_partition_answers_like_the_front_library() {
    compare_everything(TableClass::Front);
}

#[test]
fn identical_blobs_are_stored_once_and_twins_share_pointers() {
    let bytes = packed(TableClass::Full, 0);
    let p = Partition::parse(&bytes).unwrap();
    assert_eq!(p.blob_count(), nrtucode::catalog::DISTINCT_BLOB_COUNT);
    assert_eq!(p.descriptor_count(), 102);
    let v = p
        .verify(&key().public_key(), &policy(TableClass::Full))
        .unwrap();
    let a = v.get_memory_image(4, 0, 1, &NoEnv).unwrap();
    let b = v.get_memory_image(5, 0, 1, &NoEnv).unwrap();
    assert_eq!(a.id(), b.id());
    let mut h = SoftSha256::new();
    assert_eq!(
        a.check(&mut h).unwrap().as_ptr(),
        b.check(&mut h).unwrap().as_ptr()
    );
}

#[test]
fn packing_is_deterministic() {
    assert_eq!(packed(TableClass::Full, 7), packed(TableClass::Full, 7));
    assert_ne!(packed(TableClass::Full, 7), packed(TableClass::Full, 8));
}

#[test]
fn the_committed_test_keys_are_a_pair() {
    assert_eq!(key().public_key(), public_key_from_pem(TEST_PUB).unwrap());
    assert_eq!(public_key_pem(&key().public_key()).trim(), TEST_PUB.trim());
}

fn unsigned(class: TableClass) -> Vec<u8> {
    pack(&Blobs::fixtures(class), &PackOptions::default()).unwrap()
}

#[test]
fn every_refusal_has_its_error() {
    let good = packed(TableClass::Full, 5);
    let key = key().public_key();
    let pol = policy(TableClass::Full);
    let verify = |b: &[u8], pol: &Policy| -> Result<(), Refusal> {
        Partition::parse(b)?.verify(&key, pol)?;
        Ok(())
    };
    let format = |e: FormatError| Err(Refusal::Format(e));
    let trust = |e: TrustError| Err(Refusal::Trust(e));
    assert_eq!(verify(&good, &pol), Ok(()));

    // Structure.
    assert_eq!(
        verify(&good[..10], &pol),
        format(FormatError::Truncated {
            needed: 96,
            available: 10
        })
    );
    assert!(matches!(
        verify(&good[..good.len() - 1], &pol),
        Err(Refusal::Format(FormatError::Truncated { .. }))
    ));
    assert_eq!(verify(&[0xff; 4096], &pol), format(FormatError::Erased));
    let mut bad = good.clone();
    bad[0] = b'X';
    assert_eq!(verify(&bad, &pol), format(FormatError::BadMagic));
    let mut bad = good.clone();
    // Version 1 (one digest per blob, of the decoded bytes) is no longer read, nor any other.
    for version in [1, format::VERSION + 1] {
        bad[format::H_VERSION..format::H_VERSION + 2].copy_from_slice(&version.to_le_bytes());
        assert_eq!(
            verify(&bad, &pol),
            format(FormatError::UnsupportedVersion { found: version })
        );
    }
    // A longer region (the rest of a flash partition) is fine.
    let mut longer = good.clone();
    longer.extend([0xff; 100]);
    assert_eq!(verify(&longer, &pol), Ok(()));

    // Signature, key, counter, class.
    let mut bad = good.clone();
    bad[format::H_SECURITY_COUNTER] = 9; // a signed byte
    assert_eq!(verify(&bad, &pol), trust(TrustError::BadSignature));
    let other = SigningKey::generate().public_key();
    assert_eq!(
        Partition::parse(&good).unwrap().verify(&other, &pol),
        Err(TrustError::UnknownKey {
            found: key.key_id()
        })
    );
    // A key with the right ID but not the signer's key cannot be made; a wrong signature can.
    let mut bad = good.clone();
    let p = Partition::parse(&good).unwrap();
    let [_, _, sig, _] = format::layout(p.descriptor_count(), p.blob_count()).unwrap();
    bad[sig] ^= 1;
    assert_eq!(verify(&bad, &pol), trust(TrustError::BadSignature));
    let strict = Policy {
        min_security_counter: 6,
        ..pol
    };
    assert_eq!(
        verify(&good, &strict),
        trust(TrustError::Rollback {
            found: 5,
            minimum: 6
        })
    );
    assert_eq!(
        verify(&good, &policy(TableClass::Front)),
        trust(TrustError::WrongClass {
            found: TableClass::Full,
            expected: TableClass::Front
        })
    );

    // Unsigned partitions: only through the loudly named door.
    let u = unsigned(TableClass::Front);
    assert_eq!(
        verify(&u, &policy(TableClass::Front)),
        trust(TrustError::Unsigned)
    );
    let trusted = Partition::parse(&u)
        .unwrap()
        .insecure_trust_unsigned(&policy(TableClass::Front));
    assert!(trusted.is_ok());
    assert_eq!(
        Partition::parse(&good)
            .unwrap()
            .insecure_trust_unsigned(&pol),
        Err(TrustError::Signed)
    );
}

#[test]
fn a_changed_blob_byte_is_a_digest_mismatch_naming_the_blob() {
    let mut bytes = packed(TableClass::Full, 0);
    let p = Partition::parse(&bytes).unwrap();
    let last = bytes.len() - 1;
    let _ = p;
    // The first blob starts at blobs_off: change its first byte (not signed: the digest says).
    let blobs_off =
        u32::from_le_bytes(bytes[format::H_BLOBS_OFF..][..4].try_into().unwrap()) as usize;
    bytes[blobs_off] ^= 0x20;
    assert!(last > blobs_off);
    let key = key().public_key();
    let v = Partition::parse(&bytes)
        .unwrap()
        .verify(&key, &policy(TableClass::Full))
        .unwrap();
    let err = v.check_blobs(&mut SoftSha256::new()).unwrap_err();
    let blob0 = BlobId::new(0);
    assert_eq!(err, LoadError::DigestMismatch { blob: blob0 });
    // The message names the blob; its first user is the caller's to show.
    assert!(
        err.to_string().starts_with("blob 0: SHA-256 mismatch"),
        "{err}"
    );
    assert_eq!(
        v.tables().first_use(blob0),
        Some(BlobUse::Image {
            idx: 0,
            flavor: 1,
            region: Region::Iram
        })
    );
    // Every checked way refuses it: in place, and the copy (which zeroes what it wrote).
    let iram = v.get_memory_image(0, 0, 1, &NoEnv).unwrap();
    assert_eq!(iram.check(&mut SoftSha256::new()), Err(err));
    let mut dst = vec![0xa5u8; iram.len()];
    assert_eq!(
        iram.load_into(&mut dst, &mut Loader::new()).map(|_| ()),
        Err(err)
    );
    assert!(dst.iter().all(|&b| b == 0));
    // A good blob copies; a short buffer is refused before anything is written.
    let dram = v.get_memory_image(0, 1, 1, &NoEnv).unwrap();
    let mut dst = vec![0u8; dram.len()];
    let copied = dram
        .load_into(&mut dst, &mut Loader::new())
        .unwrap()
        .to_vec();
    assert_eq!(&copied[..], dram.check(&mut SoftSha256::new()).unwrap());
    assert_eq!(
        dram.load_into(&mut [0u8; 1], &mut Loader::new()),
        Err(LoadError::BufferTooSmall {
            needed: dram.len(),
            available: 1
        })
    );
}

#[test]
fn a_compressed_blob_is_not_readable_in_place() {
    // Mark blob 0 as deflate in an unsigned pack.
    let mut bytes = unsigned(TableClass::Full);
    let p = Partition::parse(&bytes).unwrap();
    let [_, toc_off, _, _] = format::layout(p.descriptor_count(), p.blob_count()).unwrap();
    bytes[toc_off + format::T_CODEC] = format::CODEC_DEFLATE;
    let v = Partition::parse(&bytes)
        .unwrap()
        .insecure_trust_unsigned(&policy(TableClass::Full))
        .unwrap();
    let blob = v.get_memory_image(0, 0, 1, &NoEnv).unwrap();
    let blob0 = BlobId::new(0);
    assert_eq!(blob.codec(), Codec::Deflate);
    assert_eq!(blob.bytes(), None);
    assert_eq!(
        blob.check(&mut SoftSha256::new()),
        Err(LoadError::NotStored {
            blob: blob0,
            codec: Codec::Deflate
        })
    );
    bytes[toc_off + format::T_CODEC] = 7;
    assert_eq!(
        Partition::parse(&bytes).map(drop),
        Err(FormatError::UnknownCodec {
            blob: blob0,
            codec: 7
        })
    );
}

#[test]
fn broken_tables_are_refused_by_parse() {
    let good = unsigned(TableClass::Full);
    // A descriptor's getter pointing past the table of contents.
    let mut bad = good.clone();
    let at = format::DESCS_OFF + 4 + 2; // first descriptor, IRAM getter, index
    bad[at] = 0xff;
    bad[at + 1] = 0xff;
    assert!(matches!(
        Partition::parse(&bad),
        Err(FormatError::Table {
            table: TableName::Descriptors,
            entry: 0,
            ..
        })
    ));
    // A slot claiming more descriptors than there are.
    let mut bad = good.clone();
    bad[format::SLOTS_OFF + 37 * 4 + 2] = 200;
    assert!(matches!(
        Partition::parse(&bad),
        Err(FormatError::Table {
            table: TableName::ImageList,
            ..
        })
    ));
    // Every single-byte change of the tables is either refused or still answers without
    // panicking.
    let p = Partition::parse(&good).unwrap();
    let [_, _, tables_end, _] = format::layout(p.descriptor_count(), p.blob_count()).unwrap();
    // One copy, each byte flipped and flipped back (a copy of the 9.7 MB partition per flip
    // took most of this test's time).
    let mut bad = good.clone();
    for at in 0..tables_end {
        for flip in [0x01u8, 0x80, 0xff] {
            bad[at] ^= flip;
            if let Ok(p) = Partition::parse(&bad)
                && let Ok(v) = p.insecure_trust_unsigned(&policy(p.class()))
            {
                for idx in [0, 7, 13, 36, 37, 38] {
                    for flavor in [0, 1, 2, 17] {
                        let _ = v.get_memory_image(idx, 1, flavor, &NoEnv);
                    }
                    let _ = v.get_hwdecode_table(idx, 1);
                }
            }
            bad[at] ^= flip;
        }
    }
    assert_eq!(bad, good);
}

#[test]
fn the_public_key_const_is_rust() {
    let text = nrtucode_pack::public_key_rust(&key().public_key(), "NRTUCODE_KEY");
    assert!(text.contains("pub const NRTUCODE_KEY: nrtucode::partition::PublicKey"));
    assert_eq!(text.matches("0x").count(), 32);
    let _: PublicKey = key().public_key();
}

#[test]
fn a_partition_file_reads_and_answers_on_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.part");
    std::fs::write(&path, packed(TableClass::Front, 2)).unwrap();
    let file = nrtucode::partition::PartitionFile::read(&path).unwrap();
    let p = file
        .parse()
        .unwrap()
        .verify(&key().public_key(), &policy(TableClass::Front))
        .unwrap();
    assert_eq!(
        p.get_memory_image(13, 0, 17, &NoEnv)
            .map(|b| b.check(&mut SoftSha256::new()).unwrap()),
        nrtucode::get_memory_image(13, 0, 17, &NoEnv)
    );
    assert!(nrtucode::partition::PartitionFile::read(dir.path()).is_err());
}
