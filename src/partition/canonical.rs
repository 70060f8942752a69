//! The last of [`Partition::parse`]'s checks, over tables already checked one by one: what
//! makes a partition the one `nrtucode pack` writes for its input (`docs/partition.md`, "What a
//! reader checks", step 7).
//!
//! - every table-of-contents entry is named by at least one getter (no unreferenced blob);
//! - no two entries hold the same blob (the same SHA-256 of the decoded bytes): identical
//!   blobs are one entry, named by every getter that returns them;
//! - a cursor points into a stored blob (codec 0): its answer is an address at a boundary of
//!   the blob's bytes in place, which a compressed blob does not have;
//! - a front partition (class 2) has non-NULL getters only where the front tables have them:
//!   image getters of SUNDA to MARIANA_PLUS with flavor key 1 (PERF/RELEASE) or 17
//!   (DKL_PERF), profiler getters of SUNDA to MARIANA_PLUS. A full partition (class 1) may
//!   have a NULL getter anywhere (the vendor's full tables have some), so its getters cannot
//!   contradict it.
//!
//! No allocation: a bit per entry (512 bytes for the 4096 entries the format allows) marks the
//! entries named. The duplicate check compares each pair of digests, their first 8 bytes first:
//! 15,576 pairs for the 177 blobs of the full fixtures, n(n-1)/2 in general (8,386,560 at the
//! format's limit); on the Cortex-M4 `parse` costs 421,338 instructions over the fixtures, most
//! of it this (`cargo xtask cost --what partition`).

use super::bytes::{byte, le16, le32};
use super::entry::BlobId;
use super::error::{FormatError, TableName};
use super::format::*;
use super::header::TableClass;
use super::parse::Partition;
use crate::{Generation, ImageIndex};

/// The flavor keys whose images the front tables keep: PERF/RELEASE and DKL_PERF.
const FRONT_KEYS: [u32; 2] = [1, 17];

/// One bit per table-of-contents entry the format allows.
struct Named([u32; MAX_TOC / 32]);

impl Named {
    fn mark(&mut self, n: usize) {
        if let Some(word) = self.0.get_mut(n / 32) {
            *word |= 1 << (n % 32);
        }
    }

    fn is_marked(&self, n: usize) -> bool {
        self.0
            .get(n / 32)
            .is_some_and(|word| word & (1 << (n % 32)) != 0)
    }
}

/// Per slot, whether the front tables have getters in it (its generation is one of SUNDA to
/// MARIANA_PLUS), computed at compile time.
const FRONT_SLOTS: [bool; SLOT_COUNT] = {
    let mut front = [false; SLOT_COUNT];
    let mut slot = 0;
    while slot < SLOT_COUNT && slot < ImageIndex::ALL.len() {
        front[slot] = matches!(
            ImageIndex::ALL[slot].generation(),
            Generation::Sunda | Generation::Cayman | Generation::Mariana | Generation::MarianaPlus
        );
        slot += 1;
    }
    front
};

/// Whether the front tables have getters in slot `slot`.
fn front_generation(slot: usize) -> bool {
    FRONT_SLOTS.get(slot).copied().unwrap_or(false)
}

/// A table-of-contents record's SHA-256 of the decoded bytes, with its first 8 bytes as a
/// number (compared first).
fn digest_of(record: &[u8]) -> Option<(u64, &[u8])> {
    let digest = record.get(T_SHA256..T_SHA256 + 32)?;
    let head = u64::from_ne_bytes(*digest.first_chunk::<8>()?);
    Some((head, digest))
}

fn entry_u16(n: usize) -> u16 {
    // Entries are counted in u16 (1024 descriptors, 4096 blobs at most).
    u16::try_from(n).unwrap_or(u16::MAX)
}

impl Partition<'_> {
    /// The kind and table-of-contents index of the getter at `at` (checked by `parse` before).
    fn getter_at(&self, at: usize) -> (u8, usize) {
        let kind = byte(self.bytes, at).unwrap_or(GETTER_NULL);
        let index = le16(self.bytes, at + 2).map_or(0, usize::from);
        (kind, index)
    }

    /// The codec of table-of-contents entry `n`.
    fn codec_of(&self, n: usize) -> Option<u8> {
        byte(
            self.bytes,
            self.layout.toc_off.checked_add(n.checked_mul(TOC_LEN)?)? + T_CODEC,
        )
    }

    /// The checks of this module's documentation, in its order per getter (descriptors in
    /// slot order, then profiler slots), then the entries no getter named, then duplicates.
    pub(super) fn check_canonical(&self, class: TableClass) -> Result<(), FormatError> {
        let front = class == TableClass::Front;
        let mut named = Named([0; MAX_TOC / 32]);
        for slot in 0..SLOT_COUNT {
            let at = SLOTS_OFF + slot * SLOT_LEN;
            let first = le16(self.bytes, at).map_or(0, usize::from);
            let count = le16(self.bytes, at + 2).map_or(0, usize::from);
            for d in first..first.saturating_add(count) {
                let desc = DESCS_OFF + d * DESC_LEN;
                let key = le32(self.bytes, desc).unwrap_or(0);
                let front_has = front_generation(slot) && FRONT_KEYS.contains(&key);
                for r in 0..4 {
                    let (kind, index) = self.getter_at(desc + 4 + r * GETTER_LEN);
                    if kind == GETTER_NULL {
                        continue;
                    }
                    named.mark(index);
                    let cursor = kind == GETTER_CURSOR_START || kind == GETTER_CURSOR_END;
                    if cursor && self.codec_of(index) != Some(CODEC_STORED) {
                        return Err(FormatError::CursorOntoCompressed {
                            descriptor: entry_u16(d),
                            blob: BlobId::new(entry_u16(index)),
                        });
                    }
                    if front && !front_has {
                        return Err(FormatError::ClassContradicted {
                            table: TableName::Descriptors,
                            entry: entry_u16(d),
                        });
                    }
                }
            }
        }
        for slot in 0..SLOT_COUNT {
            for k in 0..2 {
                let (kind, index) =
                    self.getter_at(self.layout.prof_off + slot * PROF_LEN + k * GETTER_LEN);
                if kind == GETTER_NULL {
                    continue;
                }
                named.mark(index);
                if front && !front_generation(slot) {
                    return Err(FormatError::ClassContradicted {
                        table: TableName::ProfList,
                        entry: entry_u16(slot),
                    });
                }
            }
        }
        if let Some(n) = (0..self.layout.toc_count).find(|&n| !named.is_marked(n)) {
            return Err(FormatError::UnreferencedBlob {
                blob: BlobId::new(entry_u16(n)),
            });
        }
        self.check_distinct()
    }

    /// No two entries record the same SHA-256 of the decoded bytes: each entry's digest against
    /// every earlier one's, their first 8 bytes compared first.
    fn check_distinct(&self) -> Result<(), FormatError> {
        let records = self.toc_records();
        for (n, record) in records.chunks_exact(TOC_LEN).enumerate().skip(1) {
            let Some((head, this)) = digest_of(record) else {
                continue;
            };
            let same =
                |earlier: &[u8]| digest_of(earlier).is_some_and(|(h, d)| h == head && d == this);
            if let Some(first) = records.chunks_exact(TOC_LEN).take(n).position(same) {
                return Err(FormatError::DuplicateBlob {
                    blob: BlobId::new(entry_u16(n)),
                    first: BlobId::new(entry_u16(first)),
                });
            }
        }
        Ok(())
    }
}
