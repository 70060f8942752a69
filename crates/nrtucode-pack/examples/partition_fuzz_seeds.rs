//! Writes small partitions for the `partition` fuzz target (`cargo xtask fuzz`): the full and front
//! tables of the fixtures with every blob replaced by the 32 bytes of its SHA-256 (distinct
//! blobs stay distinct; both digests recomputed, the layout redone), unsigned and signed with the
//! committed test key; and the same with every blob made compressible (its 32 bytes repeated 8
//! times) and stored as raw deflate (codec 1) but those a cursor points into (a cursor needs a
//! stored blob), for the resolvers into a buffer. Usage:
//! `cargo run -p nrtucode-pack --example partition_fuzz_seeds -- DIR`.

use nrtucode::partition::format::*;
use nrtucode::partition::{Getter, Partition, TableClass};
use nrtucode_pack::{Blobs, PackOptions, SigningKey, pack};
use sha2::{Digest, Sha256};

fn le32(b: &[u8], at: usize) -> usize {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize
}

/// `full` with each blob replaced by at most `keep` (<= 32) bytes of its SHA-256, re-laid out
/// and signed with `key`; with `deflate`, each such blob repeated 8 times and kept as raw
/// deflate, but those a cursor points into.
fn shrink(full: &[u8], keep: usize, key: Option<&SigningKey>, deflate: bool) -> Vec<u8> {
    let tables = Partition::parse(full).unwrap().untrusted_tables();
    let cursor_targets: std::collections::BTreeSet<usize> = (0..SLOT_COUNT as u32)
        .flat_map(|idx| tables.descriptors(idx))
        .flat_map(|(_, regions)| regions.into_iter().flatten())
        .filter_map(|g| match g {
            Getter::CursorStart(n) | Getter::CursorEnd(n) => Some(n.index()),
            Getter::Blob(_) => None,
        })
        .collect();
    let toc_count =
        u16::from_le_bytes(full[H_TOC_COUNT..H_TOC_COUNT + 2].try_into().unwrap()) as usize;
    let desc_count =
        u16::from_le_bytes(full[H_DESC_COUNT..H_DESC_COUNT + 2].try_into().unwrap()) as usize;
    let [_, toc_off, sig_off, blobs_off] = layout(desc_count, toc_count).unwrap();
    let mut out = full[..blobs_off].to_vec();
    let mut at = blobs_off;
    let mut blobs = Vec::new();
    for n in 0..toc_count {
        let e = toc_off + n * TOC_LEN;
        let (offset, len) = (le32(full, e + T_OFFSET), le32(full, e + T_STORED_LEN));
        let digest = Sha256::digest(&full[offset..offset + len]);
        let cut = &digest[..len.min(keep)];
        let deflate = deflate && !cursor_targets.contains(&n);
        let decoded = if deflate { cut.repeat(8) } else { cut.to_vec() };
        let bytes = if deflate {
            out[e + T_CODEC] = CODEC_DEFLATE;
            nrtucode_deflate::compress_deflate(&decoded)
        } else {
            decoded.clone()
        };
        out[e + T_OFFSET..e + T_OFFSET + 4].copy_from_slice(&(at as u32).to_le_bytes());
        out[e + T_STORED_LEN..e + T_STORED_LEN + 4]
            .copy_from_slice(&(bytes.len() as u32).to_le_bytes());
        out[e + T_DECODED_LEN..e + T_DECODED_LEN + 4]
            .copy_from_slice(&(decoded.len() as u32).to_le_bytes());
        out[e + T_SHA256..e + T_SHA256 + 32].copy_from_slice(&Sha256::digest(&decoded));
        out[e + T_STORED_SHA256..e + T_STORED_SHA256 + 32].copy_from_slice(&Sha256::digest(&bytes));
        let end = at + bytes.len();
        blobs.push((at, bytes));
        at = align_up(end).unwrap();
    }
    out.resize(at, 0);
    for (offset, bytes) in blobs {
        out[offset..offset + bytes.len()].copy_from_slice(&bytes);
    }
    out[H_TOTAL_LEN..H_TOTAL_LEN + 4].copy_from_slice(&(at as u32).to_le_bytes());
    if let Some(key) = key {
        let signature = key.sign(&out[..sig_off]);
        out[sig_off..sig_off + SIG_LEN].copy_from_slice(&signature);
    }
    out
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .expect("usage: partition_fuzz_seeds DIR");
    std::fs::create_dir_all(&dir).unwrap();
    let key = SigningKey::from_pem(include_str!("../../../keys/test-ed25519.pem")).unwrap();
    for class in [TableClass::Full, TableClass::Front] {
        for signed in [false, true] {
            let options = PackOptions {
                security_counter: 1,
                key: signed.then_some(&key),
            };
            let bytes = pack(&Blobs::fixtures(class), &options).unwrap();
            for deflate in [false, true] {
                let seed = shrink(&bytes, 32, options.key, deflate);
                let parsed = Partition::parse(&seed).expect("a seed parses");
                assert_eq!(parsed.is_signed(), signed);
                let name = format!(
                    "{dir}/{}-{}{}.part",
                    class.name(),
                    if signed { "signed" } else { "unsigned" },
                    if deflate { "-deflate" } else { "" }
                );
                std::fs::write(&name, &seed).unwrap();
                println!("{name}: {} bytes", seed.len());
            }
        }
    }
}
