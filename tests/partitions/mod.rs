//! Signed partitions made for the update tests from a packed one: every blob rewritten by a
//! function of its entry number and bytes (both digests recomputed, the layout redone), then
//! signed again (as `crates/nrtucode-pack/examples/partition_fuzz_seeds.rs`).
#![allow(dead_code)] // each test binary uses part of it

use embedded_storage::nor_flash::NorFlash;
use nrtucode::partition::format::*;
use nrtucode::partition::{PublicKey, TableClass};
use nrtucode::update::mem_flash::MemFlash;
use nrtucode::update::{Config, Layout};
use nrtucode_pack::{SigningKey, sign_partition};
use sha2::{Digest, Sha256};

/// The little-endian `u32` at `at`, as a `usize`.
pub fn le32(b: &[u8], at: usize) -> usize {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize
}

/// `full` (a partition of stored blobs) with blob `n`'s bytes replaced by `blob(n, bytes)`,
/// the security counter set to `counter`, signed with `key`. The new bytes must keep distinct
/// blobs distinct, and be at least a byte.
pub fn rewrite(
    full: &[u8],
    counter: u32,
    key: &SigningKey,
    mut blob: impl FnMut(usize, &[u8]) -> Vec<u8>,
) -> Vec<u8> {
    let toc_count = u16::from_le_bytes(full[H_TOC_COUNT..H_TOC_COUNT + 2].try_into().unwrap());
    let desc_count = u16::from_le_bytes(full[H_DESC_COUNT..H_DESC_COUNT + 2].try_into().unwrap());
    let [_, toc_off, _, blobs_off] = layout(desc_count as usize, toc_count as usize).unwrap();
    let mut out = full[..blobs_off].to_vec();
    let mut at = blobs_off;
    let mut blobs = Vec::new();
    for n in 0..toc_count as usize {
        let e = toc_off + n * TOC_LEN;
        let (offset, len) = (le32(full, e + T_OFFSET), le32(full, e + T_STORED_LEN));
        let bytes = blob(n, &full[offset..offset + len]);
        out[e + T_OFFSET..e + T_OFFSET + 4].copy_from_slice(&(at as u32).to_le_bytes());
        for field in [T_STORED_LEN, T_DECODED_LEN] {
            out[e + field..e + field + 4].copy_from_slice(&(bytes.len() as u32).to_le_bytes());
        }
        for field in [T_SHA256, T_STORED_SHA256] {
            out[e + field..e + field + 32].copy_from_slice(&Sha256::digest(&bytes));
        }
        let end = at + bytes.len();
        blobs.push((at, bytes));
        at = align_up(end).unwrap();
    }
    out.resize(at, 0);
    for (offset, bytes) in blobs {
        out[offset..offset + bytes.len()].copy_from_slice(&bytes);
    }
    out[H_TOTAL_LEN..H_TOTAL_LEN + 4].copy_from_slice(&(at as u32).to_le_bytes());
    out[H_SECURITY_COUNTER..H_SECURITY_COUNTER + 4].copy_from_slice(&counter.to_le_bytes());
    sign_partition(&mut out, key).unwrap();
    out
}

/// `full` with each blob replaced by at most `keep` (<= 32) bytes of its SHA-256, so that
/// distinct blobs stay distinct; its security counter kept.
pub fn shrink(full: &[u8], keep: usize, key: &SigningKey) -> Vec<u8> {
    let counter = le32(full, H_SECURITY_COUNTER) as u32;
    rewrite(full, counter, key, |_, bytes| {
        Sha256::digest(bytes)[..bytes.len().min(keep)].to_vec()
    })
}

/// Two slots of `slot_len` bytes (a multiple of the erase size), A at 0 and B after it, the
/// state's two sectors after B; the partitions signed with `key`, of `class`.
pub fn two_slots(slot_len: usize, key: PublicKey, class: TableClass) -> Config {
    let layout = Layout {
        slot_a: 0,
        slot_b: slot_len as u32,
        slot_len: slot_len as u32,
        state: 2 * slot_len as u32,
    };
    Config { layout, key, class }
}

/// A QSPI NOR (1-byte reads, 4-byte writes, 4 KiB erase) with two slots of `slot_len` bytes
/// (rounded up to the erase size; A at 0, B after it, the state after B), `slot_a` written into
/// slot A, and its `Config` for front partitions signed with `key`.
pub fn qspi_with(slot_a: &[u8], slot_len: usize, key: PublicKey) -> (MemFlash<1, 4, 4096>, Config) {
    let slot_len = slot_len.next_multiple_of(4096);
    let mut flash = MemFlash::<1, 4, 4096>::erased(2 * slot_len + 2 * 4096);
    let mut image = slot_a.to_vec();
    image.resize(slot_a.len().next_multiple_of(4), 0xff);
    flash.write(0, &image).unwrap();
    (flash, two_slots(slot_len, key, TableClass::Front))
}
