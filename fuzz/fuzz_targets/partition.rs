//! Fuzzes the partition reader: `Partition::parse`, `verify` with the committed test key (the
//! seeds are signed with it, so mutations of their blob bytes reach the resolvers through the
//! signature) or the unsigned test door, then every resolver over a grid of arguments and
//! environments, the digest check of every blob and a verified copy, and every resolver into a
//! buffer (`*_into`: copy-verify, or decode-verify a deflate blob). Nothing may panic; every
//! refusal must be a typed `PartitionError`. Properties: every decoded length `parse` lets
//! through is within the format's bounds (1 MiB a blob, deflate's 1032:1, 64 MiB in all), so
//! sizing a buffer from it is safe; and once the signature and the stored digests hold (a
//! mutated stored byte under a valid signature must fail `check_blobs`), every blob decodes
//! and verifies. Seeds: `cargo xtask fuzz` (small partitions from
//! `nrtucode-pack`'s `partition_fuzz_seeds` example).
#![no_main]

use libfuzzer_sys::fuzz_target;
use nrtucode::NoEnv;
use nrtucode::partition::{Getter, Partition, Policy, PublicKey, format};

/// The committed test key's public half (keys/test-ed25519.pub.pem).
const TEST_KEY: PublicKey = PublicKey::from_bytes([
    0xa5, 0x2b, 0x06, 0x5e, 0x4a, 0xf1, 0x12, 0x7f, 0x79, 0x52, 0xae, 0xd7, 0x20, 0x71, 0x39, 0xf3,
    0x24, 0xa3, 0x29, 0x48, 0xea, 0xd0, 0x0a, 0xf3, 0x62, 0xbb, 0x81, 0x00, 0x2c, 0xa4, 0x4d, 0xc9,
]);

fuzz_target!(|data: &[u8]| {
    let Ok(parsed) = Partition::parse(data) else {
        return;
    };
    let policy = Policy {
        min_security_counter: 0,
        expected_class: parsed.class(),
    };
    let _ = parsed.untrusted_check_blobs();
    let mut decoded_total = 0usize;
    for n in 0..parsed.blob_count() as u16 {
        let e = parsed.untrusted_toc_entry(n).expect("every entry of a parsed partition");
        let (stored, decoded) = (e.stored_len as usize, e.decoded_len as usize);
        assert!(decoded <= format::MAX_BLOB_LEN, "blob {n}: decoded_len {decoded}");
        if e.codec == format::CODEC_DEFLATE {
            assert!(decoded <= stored * format::DEFLATE_MAX_RATIO, "blob {n}: over the ceiling");
        } else {
            assert_eq!((stored, e.stored_sha256), (decoded, e.sha256), "blob {n}");
        }
        decoded_total += decoded;
    }
    assert!(decoded_total <= format::MAX_DECODED_TOTAL);
    let verified = match parsed.verify(&TEST_KEY, &policy) {
        Ok(v) => v,
        Err(_) => match parsed.trust_unsigned_for_testing(&policy) {
            Ok(v) => v,
            Err(_) => return,
        },
    };
    let envs: [&[(&str, &str)]; 3] = [
        &[],
        &[("NEURON_UCODE_FLAVOR", "debug")],
        &[("NRTUCODE_MPLUS_ON_MARIANA", "1")],
    ];
    let mut dst = [0u8; 64];
    for idx in [0, 4, 7, 13, 21, 31, 36, 37, 38, u32::MAX] {
        for region in [-1, 0, 1, 2, 3, 4] {
            for flavor in [0, 1, 2, 3, 17, 19, -1] {
                if let Ok(bytes) = verified.get_memory_image(idx, region, flavor, &envs[0]) {
                    let _ = verified.copy_verified(bytes, &mut dst);
                }
            }
        }
        for env in envs {
            let _ = verified.get_memory_image(idx, 1, 0, env);
        }
        for kind in [-1, 0, 1, 2] {
            let _ = verified.get_hwdecode_table(idx, kind);
        }
        let _ = verified.descriptors(idx).count();
        let _ = verified.prof_getters(idx);
    }
    // Authenticated stored bytes decode: a blob whose stream matches its signed digest is the
    // packer's, so it decodes and verifies; a changed one never reaches the inflater.
    let mut inflater = Box::new(nrtucode::deflate::Inflater::new());
    if verified.check_blobs().is_ok() && parsed.is_signed() {
        for n in 0..parsed.blob_count() as u16 {
            let e = verified.toc_entry(n).expect("every entry");
            let mut out = vec![0u8; e.decoded_len as usize];
            let mut hasher = nrtucode::verify::SoftSha256::new();
            verified
                .getter_into_with(Getter::Blob(n), &mut out, &mut inflater, &mut hasher)
                .expect("signed, stored digest held: the blob decodes and verifies");
        }
    }
    let _ = verified.get_memory_image(7, 0, 1, &NoEnv);
    // Into a buffer (stored: copy-verify; deflate: decode-verify), never past the blob.
    let mut out = vec![0xa5u8; 0x1000];
    for idx in [0, 7, 13, 37] {
        for region in 0..4 {
            match verified.get_memory_image_into(idx, region, 1, &NoEnv, &mut out, &mut inflater) {
                Ok(bytes) => {
                    let n = bytes.len();
                    assert!(out[n..].iter().all(|&b| b == 0xa5), "written past the blob");
                }
                Err(_) => assert!(out.iter().all(|&b| b == 0 || b == 0xa5)),
            }
            out.fill(0xa5);
        }
        for kind in [0, 1] {
            let _ = verified.get_hwdecode_table_into(idx, kind, &mut out, &mut inflater);
            out.fill(0xa5);
        }
    }
});
