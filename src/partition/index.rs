//! [`Index`]: what [`VerifiedPartition`](super::VerifiedPartition) precomputes once, when it is
//! made, so that a lookup is the embedded tables' two loads instead of a scan of the bytes.
//!
//! The vendor finds a descriptor by a linear scan of its slot's flavor keys; the answer depends
//! only on the slot and the key, and a verified partition's tables never change. So, like the
//! embedded tables' `crate::resolve::descriptor_index`, the index maps (slot, key column) to a row (or
//! to "empty slot" / "not found"), and a row holds the four getters of the first descriptor
//! with that key; the profiler getters likewise. Each getter is held [`Packed`] with its
//! blob's codec, and beside it ([`Stored`]) a [`VerifiedPartition`](super::VerifiedPartition)
//! holds its answer's stored bytes in place, found and bounds-checked once, here, so that a
//! lookup reads no table-of-contents record and checks no bound; a `CheckedPartition`, which
//! answers from bytes it owns, holds nothing beside it. A column is one of the six
//! keys the vendor uses ([`Flavor::KEYS`]); column 0 answers every other raw flavor, and in a
//! slot with a descriptor whose key is none of the six (a valid partition may have any
//! non-zero key) it answers [`SCAN`]: that lookup scans the bytes as before. Every answer is
//! the scan's (tested in `tests` below against [`Tables::scan`] and [`Tables::prof_pair`]).
//!
//! Fixed size, no allocation, whatever the partition holds: a verified partition's
//! `Index<&[u8]>` is 10,148 bytes on a 32-bit target (266 of row numbers, then 988 getters of
//! 10: a packed getter and a slice), 18,208 on a 64-bit one; `Index<()>` is 2,242 bytes on
//! every target.

use super::entry::{Getter, Packed};
use super::format::{MAX_TOC, SLOT_COUNT};
use super::tables::Tables;
use crate::Flavor;

/// Key columns: column 0 for every raw flavor that is not one of [`Flavor::KEYS`], then one
/// per key.
pub(super) const COLUMNS: usize = 1 + Flavor::KEYS.len();
/// Most rows an index can need: one per key column of every slot.
pub(super) const ROWS: usize = SLOT_COUNT * Flavor::KEYS.len();
/// [`Index::at`] entry of an empty slot (code 2 before any scan).
pub(super) const EMPTY_SLOT: u8 = u8::MAX;
/// [`Index::at`] entry of a key no descriptor of the (populated) slot has (code 2).
pub(super) const NOT_FOUND: u8 = u8::MAX - 1;
/// [`Index::at`] entry the index does not answer: the lookup scans the slot's bytes (column 0
/// of a slot holding a key outside [`Flavor::KEYS`]).
pub(super) const SCAN: u8 = u8::MAX - 2;

static_assertions::const_assert!(ROWS < SCAN as usize);
// A packed getter holds a table-of-contents number in 12 bits.
static_assertions::const_assert!(MAX_TOC <= 1 << 12);

/// The column of a raw flavor below [`FLAVOR_SPAN`] (every other raw flavor: column 0).
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Column {
    Other = 0,
    Perf,
    Debug,
    Test,
    DklPerf,
    DklDebug,
    DklTest,
}

/// Raw flavors below this may have a column of their own (the largest key is 19).
pub(super) const FLAVOR_SPAN: usize = 20;

/// The column of `key`: [`Column::Other`] for every key that is not one of [`Flavor::KEYS`].
pub(super) const fn column(key: i32) -> Column {
    match Flavor::from_raw(key) {
        Some(Flavor::Perf) => Column::Perf,
        Some(Flavor::Debug) => Column::Debug,
        Some(Flavor::Test) => Column::Test,
        Some(Flavor::DklPerf) => Column::DklPerf,
        Some(Flavor::DklDebug) => Column::DklDebug,
        Some(Flavor::DklTest) => Column::DklTest,
        Some(Flavor::Auto) | None => Column::Other,
    }
}

/// [`column`] of every raw flavor below [`FLAVOR_SPAN`]: one load instead of a match.
pub(super) const COLUMN_OF: [Column; FLAVOR_SPAN] = {
    let mut all = [Column::Other; FLAVOR_SPAN];
    let mut k = 0;
    while k < FLAVOR_SPAN {
        all[k] = column(k as i32);
        k += 1;
    }
    all
};

/// What an [`Index`] holds for each getter besides the [`Packed`] getter: the answer's stored
/// bytes in place (`&[u8]`, in a [`VerifiedPartition`](super::VerifiedPartition)), or nothing
/// (`()`: a `LoadedPartition`, which answers from bytes it owns, and a
/// [`StreamedPartition`](super::StreamedPartition), whose blobs are on a flash read through its
/// driver). Made once, by
/// [`Index::build`], from the parsed tables.
pub(crate) trait Stored<'a>: Copy {
    /// What a NULL getter holds.
    const NONE: Self;
    /// `getter` of `tables` packed, and what is held beside it; `None` if it names no entry or
    /// does not pack (never, after parse).
    fn of(tables: &Tables<'a>, getter: Getter) -> Option<(Packed, Self)>;
}

impl<'a> Stored<'a> for () {
    const NONE: Self = ();
    fn of(tables: &Tables<'a>, getter: Getter) -> Option<(Packed, Self)> {
        Some((tables.packed(getter)?, ()))
    }
}

impl<'a> Stored<'a> for &'a [u8] {
    const NONE: Self = &[];
    fn of(tables: &Tables<'a>, getter: Getter) -> Option<(Packed, Self)> {
        let answer = tables.answer(getter)?;
        Some((answer.getter, answer.stored))
    }
}

/// `N` getters (`None`: NULL) and, beside each, what its owner answers from ([`Stored`]): two
/// arrays rather than an array of pairs, so that no getter is padded to a word.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Row<S, const N: usize> {
    /// The getters, packed.
    pub(super) getters: [Option<Packed>; N],
    /// Beside each getter, its answer's stored bytes (or nothing).
    pub(super) stored: [S; N],
}

impl<S: Copy, const N: usize> Row<S, N> {
    /// The answer of the getter `getter` picked from this row: the getter and its stored bytes.
    /// `getter` is one of [`getters`](Self::getters), as `crate::resolve::after_scan` or
    /// `prof_pick` found it at `at`, which they checked is below `N`: the remainder changes
    /// nothing, and leaves no bound to check (`N` is 4 or 2: a mask).
    #[inline(always)]
    pub(super) fn pick(&self, getter: Packed, at: usize) -> (Packed, S) {
        (getter, self.stored[at % N])
    }
}

impl<'a, S: Stored<'a>, const N: usize> Row<S, N> {
    /// No getter at all.
    const NULL: Self = Row {
        getters: [None; N],
        stored: [S::NONE; N],
    };

    /// The row of `getters`; `None` if one cannot be held (never, after parse).
    fn of(tables: &Tables<'a>, getters: [Option<Getter>; N]) -> Option<Self> {
        let mut row = Self::NULL;
        for ((packed, stored), getter) in row.getters.iter_mut().zip(&mut row.stored).zip(getters) {
            if let Some(getter) = getter {
                let (p, s) = S::of(tables, getter)?;
                (*packed, *stored) = (Some(p), s);
            }
        }
        Some(row)
    }
}

/// The lookup index of a verified partition (built once by [`Index::build`]), each getter
/// held with `S` beside it ([`Stored`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Index<S> {
    /// `at[slot][column]`: the row of the first descriptor of `slot` with that column's key,
    /// or [`EMPTY_SLOT`], [`NOT_FOUND`], [`SCAN`].
    pub(super) at: [[u8; COLUMNS]; SLOT_COUNT],
    /// The rows: the four region getters of a descriptor, in slot order.
    pub(super) rows: [Row<S, 4>; ROWS],
    /// `prof[slot]`: the PROF_CAM and PROF_TABLE getters.
    pub(super) prof: [Row<S, 2>; SLOT_COUNT],
}

impl<'a, S: Stored<'a>> Index<S> {
    /// The index of `tables` (parsed: every getter names an entry of the table of contents).
    /// Made where the caller keeps it and filled there ([`fill`](Self::fill)), so that its
    /// bytes are not copied through a second frame.
    #[inline(always)]
    pub(super) fn build(tables: &Tables<'a>) -> Self {
        let mut index = Index {
            at: [[NOT_FOUND; COLUMNS]; SLOT_COUNT],
            rows: [Row::NULL; ROWS],
            prof: [Row::NULL; SLOT_COUNT],
        };
        index.fill(tables);
        index
    }

    /// Fills an index with no row yet (as [`build`](Self::build) makes it) from `tables`.
    /// Reads each descriptor's key once and the getters of the first descriptor of each key.
    /// Out of line: it runs once, at verification.
    #[inline(never)]
    fn fill(&mut self, tables: &Tables<'a>) {
        let index = self;
        let mut next = 0usize;
        for (slot, (at, prof)) in index.at.iter_mut().zip(&mut index.prof).enumerate() {
            let (first, count) = tables.slot(slot).unwrap_or((0, 0));
            if count == 0 {
                *at = [EMPTY_SLOT; COLUMNS];
            }
            for d in first..first + count {
                let (key, getters) = tables.descriptor(d).unwrap_or((0, [None; 4]));
                let column = column(key);
                let cell = &mut at[column as usize];
                if column == Column::Other {
                    *cell = SCAN; // a key of its own: the scan answers this slot's others
                } else if *cell == NOT_FOUND {
                    // The first descriptor with this key: the scan stops at it.
                    *cell = match (index.rows.get_mut(next), Row::of(tables, getters)) {
                        (Some(row), Some(held)) => {
                            *row = held;
                            next += 1;
                            (next - 1) as u8
                        }
                        _ => SCAN, // never (at most six rows a slot, numbers below 4096)
                    };
                }
            }
            *prof = Row::of(tables, tables.prof_pair(slot)).unwrap_or(Row::NULL);
        }
    }
}

// `Index<()>`: 2,242 bytes on every target (bytes and `u16`s only). `Index<&[u8]>`: the row
// numbers (padded to a word), then 988 getters of a `u16` and a slice.
static_assertions::const_assert_eq!(core::mem::size_of::<Index<()>>(), 2242);
#[cfg(target_pointer_width = "32")]
static_assertions::const_assert_eq!(core::mem::size_of::<Index<&'static [u8]>>(), 10_148);
#[cfg(target_pointer_width = "64")]
static_assertions::const_assert_eq!(core::mem::size_of::<Index<&'static [u8]>>(), 18_208);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_raw_flavor_has_its_column() {
        for (k, c) in COLUMN_OF.iter().enumerate() {
            assert!(*c == column(k as i32));
        }
        for (i, key) in Flavor::KEYS.into_iter().enumerate() {
            assert_eq!(column(key.raw()) as usize, i + 1);
        }
        for k in [0, 4, 16, 20, -1, i32::MIN, i32::MAX] {
            assert!(column(k) == Column::Other);
        }
    }
}
