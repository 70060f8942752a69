//! Fuzzes the partition reader: `Partition::parse`, `verify` with the committed test key (the
//! seeds are signed with it, so mutations of their blob bytes reach the resolvers through the
//! signature) or the unsigned test door, then every resolver over a grid of arguments and
//! environments, the digest check of every blob and a verified copy, and every resolver into a
//! buffer (`Blob::load_into`: copy-check, or check then decode-check a deflate blob). Nothing may panic; every
//! refusal must be a typed `FormatError`, `TrustError` or `LoadError`. Properties: every decoded length `parse` lets
//! through is within the format's bounds (1 MiB a blob, deflate's 1032:1, 64 MiB in all), so
//! sizing a buffer from it is safe; and once the signature and the stored digests hold (a
//! mutated stored byte under a valid signature must fail `check_blobs`), every blob decodes
//! and verifies. Seeds: `cargo xtask fuzz` (small partitions from
//! `nrtucode-pack`'s `partition_fuzz_seeds` example).
#![no_main]

use libfuzzer_sys::fuzz_target;
use nrtucode::NoEnv;
use nrtucode::digest::SoftSha256;
use nrtucode::partition::{Codec, Loader, Partition, Policy, PublicKey, format};

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
    let untrusted = parsed.untrusted_tables();
    let _ = untrusted.check_stored_digests(&mut SoftSha256::new());
    let mut decoded_total = 0usize;
    for n in untrusted.blob_ids() {
        let e = untrusted
            .toc_entry(n)
            .expect("every entry of a parsed partition");
        let (stored, decoded) = (e.stored_len as usize, e.decoded_len as usize);
        assert!(
            decoded <= format::MAX_BLOB_LEN,
            "{n}: decoded_len {decoded}"
        );
        if e.codec == Codec::Deflate {
            assert!(
                decoded <= stored * format::DEFLATE_MAX_RATIO,
                "{n}: over the ceiling"
            );
        } else {
            assert_eq!((stored, e.stored_sha256), (decoded, e.sha256), "{n}");
        }
        decoded_total += decoded;
        let _ = untrusted.first_use(n);
    }
    assert!(decoded_total <= format::MAX_DECODED_TOTAL);
    // The same calls over a verified partition and over an unsigned one (two types, one body).
    macro_rules! exercise {
        ($verified:expr) => {{
            let verified = $verified;
            let envs: [&[(&str, &str)]; 3] = [
                &[],
                &[("NEURON_UCODE_FLAVOR", "debug")],
                &[("NRTUCODE_MPLUS_ON_MARIANA", "1")],
            ];
            let mut hasher = SoftSha256::new();
            for idx in [0, 4, 7, 13, 21, 31, 36, 37, 38, u32::MAX] {
                for region in [-1, 0, 1, 2, 3, 4] {
                    for flavor in [0, 1, 2, 3, 17, 19, -1] {
                        if let Ok(blob) = verified.get_memory_image(idx, region, flavor, &envs[0]) {
                            let _ = blob.check(&mut hasher);
                            let _ = blob.bytes();
                        }
                    }
                }
                for env in envs {
                    let _ = verified.get_memory_image(idx, 1, 0, env);
                }
                for kind in [-1, 0, 1, 2] {
                    let _ = verified.get_hwdecode_table(idx, kind);
                }
                let _ = verified.tables().descriptors(idx).count();
                let _ = verified.tables().prof_getters(idx);
            }
            let mut loader = Box::new(Loader::new());
            // Into a buffer (stored: copy-check; deflate: check, then decode-check), never past the
            // blob, nothing left behind on a refusal.
            let mut out = vec![0xa5u8; 0x1000];
            for idx in [0, 7, 13, 37] {
                for region in 0..4 {
                    let Ok(blob) = verified.get_memory_image(idx, region, 1, &NoEnv) else {
                        continue;
                    };
                    match blob.load_into(&mut out, &mut loader) {
                        Ok(bytes) => {
                            let n = bytes.len();
                            assert!(out[n..].iter().all(|&b| b == 0xa5), "written past the blob");
                        }
                        Err(_) => assert!(out.iter().all(|&b| b == 0 || b == 0xa5)),
                    }
                    out.fill(0xa5);
                }
                for kind in [0, 1] {
                    if let Ok(blob) = verified.get_hwdecode_table(idx, kind) {
                        let _ = blob.load_into(&mut out, &mut loader);
                    }
                    out.fill(0xa5);
                }
            }
        }};
    }
    match parsed.verify(&TEST_KEY, &policy) {
        Ok(v) => {
            exercise!(v);
            // Authenticated stored bytes decode: a blob whose stream matches its signed digest
            // is the packer's, so it decodes and verifies; a changed one never reaches the
            // inflater. (An unsigned partition's check gives no checked type.)
            let mut loader = Box::new(Loader::new());
            if let Ok(checked) = v.check_blobs(&mut SoftSha256::new()) {
                for n in checked.tables().blob_ids() {
                    let blob = checked.blob(n).expect("every entry");
                    let mut out = vec![0u8; blob.len()];
                    blob.load_into(&mut out, &mut loader)
                        .expect("signed, stored digest held: the blob decodes and verifies");
                }
            }
        }
        Err(_) => match parsed.insecure_trust_unsigned(&policy) {
            Ok(v) => {
                exercise!(v);
                let _ = v.check_blobs(&mut SoftSha256::new());
            }
            Err(_) => {}
        },
    }
});
