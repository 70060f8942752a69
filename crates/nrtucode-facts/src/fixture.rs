//! The built-in fixture set: deterministic stand-ins for the vendor blobs.
//!
//! Real firmware cannot be shipped, so every blob the resolvers reach is replaced by bytes that
//! are ours, derived only from the facts:
//!
//! * a memory-image fixture is the ASCII line `NRTUCODE FIXTURE <SYMBOL>\n` (SYMBOL without
//!   `_get`) followed by filler from a SplitMix64 stream seeded with the FNV-1a hash of SYMBOL,
//!   cut to the size in the facts;
//! * a profiler fixture is a valid PROF blob: a CAM of 64 × 16-byte records whose armed count is
//!   the vendor's, ending in the wildcard, and a parallel TABLE of 64 × 128-byte records with as
//!   many populated records. The stream is seeded with the vendor blob's sha256 prefix, so blobs
//!   that are identical in the vendor binary are identical here too;
//! * a boundary cursor is empty.
//!
//! The output depends on nothing but the getter row and the fact tables: same input, same bytes.

use crate::facts::{Getter, prof_blob};

/// Size of a PROF_CAM blob.
pub const PROF_CAM_SIZE: usize = 0x400;
/// Size of a PROF_TABLE blob.
pub const PROF_TABLE_SIZE: usize = 0x2000;
/// Records in a PROF_CAM / PROF_TABLE blob.
pub const PROF_RECORDS: usize = 64;
/// Bytes of one PROF_CAM record.
pub const CAM_RECORD_SIZE: usize = 16;
/// Bytes of one PROF_TABLE record.
pub const TABLE_RECORD_SIZE: usize = 128;

/// CAM records the facts pin down: (CAM sha256 prefix, slot, opcode, mask).
const PINNED_CAM_RECORDS: [(&str, usize, u32, u32); 3] = [
    ("8fd7e422", 0, 0x01, 0xff),    // CAYMAN: slot 0 arms opcode 0x01
    ("8fd7e422", 13, 0x21, 0xff),   // CAYMAN: slot 13 arms ACTIVATE (0x21)
    ("ca588683", 43, 0x1e3, 0x1ff), // MARIANA DVE: the one 9-bit match
];

/// The fixture bytes of one getter: empty for a cursor, a PROF blob for a profiler row, a
/// headed filler blob otherwise.
///
/// # Panics
/// For a profiler row without profiler facts, which the facts tests rule out.
pub fn fixture_bytes(getter: &Getter) -> Vec<u8> {
    if !getter.real || getter.size == 0 {
        return Vec::new();
    }
    if getter.is_prof() {
        let facts = prof_blob(getter.gen_name, getter.engine)
            .unwrap_or_else(|| panic!("no profiler facts for {}", getter.symbol));
        let bytes = match getter.region {
            "CAM" => prof_cam(facts.cam_sha256_prefix, facts.cam_armed),
            _ => prof_table(facts.table_sha256_prefix, facts.table_populated),
        };
        assert_eq!(bytes.len(), getter.size, "{}", getter.symbol);
        return bytes;
    }
    memory_image(getter.stem(), getter.size)
}

/// The header line every non-empty memory-image fixture starts with.
pub fn header(stem: &str) -> String {
    format!("NRTUCODE FIXTURE {stem}\n")
}

fn memory_image(stem: &str, size: usize) -> Vec<u8> {
    let mut out = header(stem).into_bytes();
    out.truncate(size);
    let mut rng = SplitMix64::from_label(stem);
    while out.len() < size {
        let word = rng.next().to_le_bytes();
        let take = (size - out.len()).min(8);
        out.extend_from_slice(&word[..take]);
    }
    out
}

/// A PROF_CAM blob with `armed` records armed (the last one the wildcard).
fn prof_cam(seed: &str, armed: usize) -> Vec<u8> {
    assert!((1..=PROF_RECORDS).contains(&armed), "armed count {armed}");
    let pinned: Vec<_> = PINNED_CAM_RECORDS
        .iter()
        .filter(|(prefix, slot, _, _)| *prefix == seed && *slot + 1 < armed)
        .collect();
    let mut rng = SplitMix64::from_label(&format!("PROF_CAM {seed}"));
    // A shuffled pool of 8-bit opcodes, minus the pinned ones, so armed opcodes are distinct.
    let mut pool: Vec<u32> = (1..=0xff)
        .filter(|op| !pinned.iter().any(|p| p.2 == *op))
        .collect();
    for i in (1..pool.len()).rev() {
        let j = (rng.next() % (i as u64 + 1)) as usize;
        pool.swap(i, j);
    }
    let mut pool = pool.into_iter();
    let mut out = vec![0u8; PROF_CAM_SIZE];
    for slot in 0..armed {
        let (opcode, mask) = if slot + 1 == armed {
            (0, 0) // the wildcard catch-all
        } else if let Some(p) = pinned.iter().find(|p| p.1 == slot) {
            (p.2, p.3)
        } else {
            (pool.next().unwrap_or(0xff), 0xff)
        };
        let record = &mut out[slot * CAM_RECORD_SIZE..(slot + 1) * CAM_RECORD_SIZE];
        record[0..4].copy_from_slice(&opcode.to_le_bytes());
        record[4..8].copy_from_slice(&mask.to_le_bytes());
        record[8..12].copy_from_slice(&1u32.to_le_bytes());
    }
    out
}

/// A PROF_TABLE blob with `populated` populated records (only bytes 0x00..0x18 used).
fn prof_table(seed: &str, populated: usize) -> Vec<u8> {
    assert!(
        (1..=PROF_RECORDS).contains(&populated),
        "populated {populated}"
    );
    let mut rng = SplitMix64::from_label(&format!("PROF_TABLE {seed}"));
    let mut out = vec![0u8; PROF_TABLE_SIZE];
    for slot in 0..populated {
        let record = &mut out[slot * TABLE_RECORD_SIZE..(slot + 1) * TABLE_RECORD_SIZE];
        let class = 1 + (rng.next() % 7) as u32;
        let control = slot + 1 == populated || rng.next() % 5 == 0;
        if !control {
            record[0x00..0x04].copy_from_slice(&(rng.next() as u32 | 1).to_le_bytes());
            record[0x04..0x08].copy_from_slice(&(rng.next() as u32).to_le_bytes());
            let desc = [rng.next().to_le_bytes(), rng.next().to_le_bytes()].concat();
            record[0x08..0x14].copy_from_slice(&desc[..12]);
        }
        record[0x14..0x18].copy_from_slice(&class.to_le_bytes());
    }
    out
}

/// SplitMix64 over a 64-bit FNV-1a seed: tiny, portable, and fully determined by its label.
struct SplitMix64(u64);

impl SplitMix64 {
    fn from_label(label: &str) -> Self {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in label.bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
        Self(hash)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{getters, prof_blobs};

    fn u32_at(bytes: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn fixtures_have_the_facts_sizes_and_headers() {
        for g in getters().iter().filter(|g| g.is_resolver_reachable()) {
            let bytes = fixture_bytes(g);
            assert_eq!(bytes.len(), g.size, "{}", g.symbol);
            if g.real && !g.is_prof() {
                assert!(
                    bytes.starts_with(header(g.stem()).as_bytes()),
                    "{}",
                    g.symbol
                );
            }
        }
    }

    #[test]
    fn fixtures_are_deterministic_and_distinct() {
        let all = getters();
        let a = &all[0];
        assert_eq!(fixture_bytes(a), fixture_bytes(a));
        let b = &all[1];
        assert_ne!(fixture_bytes(a)[64..128], fixture_bytes(b)[64..128]);
    }

    #[test]
    fn prof_fixtures_follow_the_documented_format() {
        for facts in prof_blobs() {
            let cam = prof_cam(facts.cam_sha256_prefix, facts.cam_armed);
            let table = prof_table(facts.table_sha256_prefix, facts.table_populated);
            for slot in 0..PROF_RECORDS {
                let at = slot * CAM_RECORD_SIZE;
                let (op, mask, en, res) = (
                    u32_at(&cam, at),
                    u32_at(&cam, at + 4),
                    u32_at(&cam, at + 8),
                    u32_at(&cam, at + 12),
                );
                assert_eq!(res, 0);
                assert_eq!(en, u32::from(slot < facts.cam_armed));
                if slot + 1 == facts.cam_armed {
                    assert_eq!((op, mask), (0, 0), "wildcard");
                } else if slot < facts.cam_armed {
                    assert!(mask == 0xff || mask == 0x1ff);
                    assert_ne!(op, 0);
                } else {
                    assert_eq!((op, mask), (0, 0));
                }
                let record = &table[slot * TABLE_RECORD_SIZE..(slot + 1) * TABLE_RECORD_SIZE];
                let populated = record.iter().any(|b| *b != 0);
                assert_eq!(populated, slot < facts.table_populated);
                assert!(record[0x18..].iter().all(|b| *b == 0));
            }
        }
    }

    #[test]
    fn pinned_records_land_where_the_facts_say() {
        let cam = prof_cam("8fd7e422", 47);
        assert_eq!(u32_at(&cam, 13 * 16), 0x21);
        let dve = prof_cam("ca588683", 48);
        assert_eq!(
            (u32_at(&dve, 43 * 16), u32_at(&dve, 43 * 16 + 4)),
            (0x1e3, 0x1ff)
        );
    }
}
