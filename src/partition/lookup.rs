//! The resolvers over a [`VerifiedPartition`]: its index is a storage (`crate::resolve::Storage`)
//! of the one resolver body the embedded tables answer through (`crate::resolve::memory_image`,
//! `hwdecode_table`), answering a [`Blob`] handle.
//!
//! A lookup reads the index verification built (`super::index`): the row of (slot, key), then
//! the getter and its stored bytes, made into the handle as they are (no table-of-contents
//! read, no bounds check); only a raw flavor that is none of the six vendor keys, in a slot
//! holding such a key, scans the slot's bytes instead (`by_scan`, the vendor's scan).

use super::blob::Blob;
use super::entry::BlobId;
use super::entry::Getter;
use super::entry::Packed;
use super::format::SLOT_COUNT;
use super::index::{COLUMN_OF, Column, EMPTY_SLOT, Index, NOT_FOUND, Row, Stored};
use super::parse::Partition;
use super::tables::Tables;
#[cfg(feature = "insecure-unsigned")]
use super::trust::UnsignedPartition;
use super::trust::{CheckedPartition, Trusted, VerifiedPartition};
use crate::ResolveErr;
use crate::resolve::{Find, Scan, Storage, after_scan};

impl<'a> Trusted<'a> {
    /// The handle of a getter and its answer's stored bytes.
    #[inline(always)]
    const fn handle(&self, (getter, stored): (Packed, &'a [u8])) -> Blob<'a> {
        Blob {
            stored,
            toc: self.toc,
            getter,
            checked: false,
        }
    }

    /// The whole blob of table-of-contents entry `blob`; `None` past the table of contents.
    pub(super) fn blob(&self, blob: BlobId) -> Option<Blob<'a>> {
        self.tables().blob(Getter::Blob(blob))
    }

    /// Its tables, read only (trusted).
    pub(super) const fn tables(&self) -> Tables<'a> {
        Tables { p: self.p }
    }
}

/// A partition type whose lookup index (`super::index`) is a storage of the resolver body
/// (`crate::resolve::Storage`, implemented once below for every such type): what it holds
/// beside each getter, and how it makes the answer of a getter it picked.
pub(crate) trait Indexed {
    /// What the index holds beside each getter ([`Stored`]).
    type Stored: Copy;
    /// What a lookup answers.
    type Answer<'s>
    where
        Self: 's;

    /// The lookup index, built once.
    fn index(&self) -> &Index<Self::Stored>;

    /// The answer of `getter` and what the index holds beside it; `Err(null)` if it names
    /// nothing (never: parse checked every getter).
    fn make(
        &self,
        getter: Packed,
        stored: Self::Stored,
        null: ResolveErr,
    ) -> Result<Self::Answer<'_>, ResolveErr>;

    /// The vendor's scan of the slot's bytes, for what the index leaves to it (a key outside
    /// the six vendor keys). `flavor` is resolved and `idx` below the slot count.
    fn by_scan(&self, idx: u32, region: i32, flavor: i32) -> Result<Self::Answer<'_>, ResolveErr>;
}

/// Every indexed partition type is a storage of the resolver body: the index answers the
/// flavor scan (or leaves it to [`Indexed::by_scan`]), the type makes the answer.
impl<T: Indexed> Storage for T {
    type Getter = Packed;
    type Row = Row<T::Stored, 4>;
    type ProfRow = Row<T::Stored, 2>;
    type Answer<'s>
        = T::Answer<'s>
    where
        Self: 's;
    const SLOTS: usize = SLOT_COUNT;

    #[inline(always)]
    fn find(&self, idx: u32, flavor: i32) -> Find<'_, Self::Row> {
        self.index().find(idx, flavor)
    }

    #[inline(always)]
    fn regions(row: &Self::Row) -> &[Option<Packed>; 4] {
        &row.getters
    }

    #[inline(always)]
    fn answer<'s>(
        &'s self,
        row: &'s Self::Row,
        getter: Packed,
        at: usize,
        null: ResolveErr,
    ) -> Result<T::Answer<'s>, ResolveErr> {
        let (getter, stored) = row.pick(getter, at);
        self.make(getter, stored, null)
    }

    #[inline(always)]
    fn by_scan(&self, idx: u32, region: i32, flavor: i32) -> Result<T::Answer<'_>, ResolveErr> {
        Indexed::by_scan(self, idx, region, flavor)
    }

    #[inline(always)]
    fn prof_row(&self, idx: u32) -> Option<&Self::ProfRow> {
        self.index().prof.get(idx as usize)
    }

    #[inline(always)]
    fn prof_getters(row: &Self::ProfRow) -> &[Option<Packed>; 2] {
        &row.getters
    }

    #[inline(always)]
    fn prof_answer<'s>(
        &'s self,
        row: &'s Self::ProfRow,
        getter: Packed,
        at: usize,
    ) -> Result<T::Answer<'s>, ResolveErr> {
        let (getter, stored) = row.pick(getter, at);
        self.make(getter, stored, ResolveErr::NoProfiler)
    }
}

/// A verified partition's index, each getter with its answer's stored bytes: the answer is an
/// unchecked handle (the type marks it, after the merge of the index's path and the scan's, so
/// that the mark is a constant).
impl<'a> Indexed for Trusted<'a> {
    type Stored = &'a [u8];
    type Answer<'s>
        = Blob<'a>
    where
        Self: 's;

    #[inline(always)]
    fn index(&self) -> &Index<&'a [u8]> {
        &self.index
    }

    #[inline(always)]
    fn make(
        &self,
        getter: Packed,
        stored: &'a [u8],
        _: ResolveErr,
    ) -> Result<Blob<'a>, ResolveErr> {
        Ok(self.handle((getter, stored)))
    }

    #[cold]
    #[inline(never)]
    fn by_scan(&self, idx: u32, region: i32, flavor: i32) -> Result<Blob<'a>, ResolveErr> {
        scan_getter(&self.tables(), idx, region, flavor).map(|answer| self.handle(answer))
    }
}

/// The resolvers and accessors of a trusted partition type: the one body
/// (`crate::resolve::resolver_api`) over its index, the handles marked checked or not by the
/// type.
macro_rules! trusted_api {
    ($ty:ident, $checked:expr, $answers:literal) => {
        crate::resolve::resolver_api!(
            impl['a] $ty<'a>,
            's => Blob<'a>,
            |this| &this.0,
            |blob| blob.marked($checked),
            $answers
        );

        impl<'a> $ty<'a> {
            /// The whole blob of table-of-contents entry `blob` (what a getter naming it
            /// answers), for a host that reads every blob by number; `None` past the table of
            /// contents.
            pub fn blob(&self, blob: BlobId) -> Option<Blob<'a>> {
                self.0.blob(blob).map(|blob| blob.marked($checked))
            }

            /// The partition's header fields and counts.
            pub const fn partition(&self) -> &Partition<'a> {
                &self.0.p
            }

            /// Its tables, read only (trusted).
            pub const fn tables(&self) -> Tables<'a> {
                self.0.tables()
            }
        }
    };
}

trusted_api!(
    VerifiedPartition,
    false,
    "the blob's handle (its bytes come through [`Blob::check`] or [`Blob::load_into`])."
);
#[cfg(feature = "insecure-unsigned")]
trusted_api!(
    UnsignedPartition,
    false,
    "the blob's handle (its bytes come through [`Blob::check`] or [`Blob::load_into`])."
);
trusted_api!(
    CheckedPartition,
    true,
    "the blob's handle (a stored blob's bytes are [`Blob::bytes`], hashed once already)."
);

/// Empty slot, flavor scan, region bound and NULL getter by the vendor's scan of `tables`'
/// bytes: the getter, held like the index's. `flavor` is resolved and `idx` below the slot
/// count.
pub(super) fn scan_getter<'a, S: Stored<'a>>(
    tables: &Tables<'a>,
    idx: u32,
    region: i32,
    flavor: i32,
) -> Result<(Packed, S), ResolveErr> {
    let found = tables.scan(idx as usize, flavor);
    let scan = match &found {
        Ok(regions) => Scan::Found(regions),
        Err(true) => Scan::EmptySlot,
        Err(false) => Scan::NotFound,
    };
    // A getter that cannot be held names no table-of-contents entry (never, after parse): no
    // record answers it either, so it gets the NULL getter's code.
    S::of(tables, after_scan(scan, region)?).ok_or(ResolveErr::NullGetter)
}

impl<S> Index<S> {
    /// The empty-slot check and the flavor scan from the index: the row of slot `idx`'s first
    /// descriptor with the resolved `flavor`'s key, "empty slot", "not found", or
    /// [`Find::Scan`] where the index leaves the slot to the vendor's scan (a key outside the
    /// six vendor keys). `idx` is below the slot count.
    #[inline(always)]
    pub(super) fn find(&self, idx: u32, flavor: i32) -> Find<'_, Row<S, 4>> {
        let Some(at) = self.at.get(idx as usize) else {
            return Find::NotFound; // never: `idx` is below the slot count
        };
        // A negative flavor wraps to a huge one: column 0, like every raw flavor that is no key.
        let column = match COLUMN_OF.get(flavor as u32 as usize) {
            Some(&column) => column,
            None => Column::Other,
        };
        let at = at[column as usize];
        match self.rows.get(usize::from(at)) {
            Some(row) => Find::Found(row),
            None if at == EMPTY_SLOT => Find::EmptySlot,
            None if at == NOT_FOUND => Find::NotFound,
            None => Find::Scan,
        }
    }
}

#[cfg(test)]
mod tests {
    //! The index against the vendor's scan of the bytes (`by_scan`, the lookup before the
    //! index), over partitions built here: every (slot, raw flavor, region) and every
    //! profiler (slot, kind), with the same handle to the byte (the same addresses).
    extern crate std;

    use std::vec::Vec;

    use super::super::format::*;
    use super::super::parse::Partition;
    use super::super::{Policy, TableClass};
    use super::*;
    use crate::NoEnv;
    use crate::resolve::{before_tables, prof_pick};

    /// A getter as stored: (kind, table-of-contents number).
    type RawGetter = (u8, u16);

    /// An unsigned partition of these slots (descriptors: key and four getters), profiler
    /// getters and `toc` stored blobs of 16 bytes (byte `n` of blob `b` is `b + n`).
    fn build(
        slots: &[Vec<(i32, [RawGetter; 4])>; SLOT_COUNT],
        prof: &[[RawGetter; 2]; SLOT_COUNT],
        toc: usize,
    ) -> Vec<u8> {
        let desc_count: usize = slots.iter().map(Vec::len).sum();
        let [prof_off, toc_off, _, blobs_off] = layout(desc_count, toc).unwrap();
        let total = blobs_off + 16 * toc;
        let mut out = std::vec![0u8; total];
        write_test_header(&mut out, total, blobs_off, desc_count, toc);
        let mut put = |at: usize, b: &[u8]| out[at..at + b.len()].copy_from_slice(b);
        let getter = |(kind, n): RawGetter| {
            let [a, b] = n.to_le_bytes();
            [kind, 0, a, b]
        };
        let mut d = 0;
        for (slot, descs) in slots.iter().enumerate() {
            let first = if descs.is_empty() { 0 } else { d as u16 };
            put(SLOTS_OFF + slot * SLOT_LEN, &first.to_le_bytes());
            put(
                SLOTS_OFF + slot * SLOT_LEN + 2,
                &(descs.len() as u16).to_le_bytes(),
            );
            for (key, getters) in descs {
                let at = DESCS_OFF + d * DESC_LEN;
                put(at, &key.to_le_bytes());
                for (r, g) in getters.iter().enumerate() {
                    put(at + 4 + r * GETTER_LEN, &getter(*g));
                }
                d += 1;
            }
        }
        for (slot, pair) in prof.iter().enumerate() {
            for (k, g) in pair.iter().enumerate() {
                put(prof_off + slot * PROF_LEN + k * GETTER_LEN, &getter(*g));
            }
        }
        for b in 0..toc {
            let at = toc_off + b * TOC_LEN;
            let offset = (blobs_off + 16 * b) as u32;
            put(at + T_OFFSET, &offset.to_le_bytes());
            put(at + T_STORED_LEN, &16u32.to_le_bytes());
            put(at + T_DECODED_LEN, &16u32.to_le_bytes());
            let bytes: Vec<u8> = (0..16).map(|n| (b + n) as u8).collect();
            put(blobs_off + 16 * b, &bytes);
            // Distinct blobs have distinct digests (parse refuses the same blob twice).
            put(at + T_SHA256, &[b as u8]);
            put(at + T_STORED_SHA256, &[b as u8]);
        }
        out
    }

    fn verified(bytes: &[u8]) -> VerifiedPartition<'_> {
        let policy = Policy {
            min_security_counter: 0,
            expected_class: TableClass::Full,
        };
        let p = Partition::parse(bytes).expect("a valid partition");
        p.check_policy(&policy).expect("the policy holds");
        VerifiedPartition(Trusted::of(p))
    }

    /// Everything a handle is, to the addresses of its bytes.
    fn same<'a>(a: Result<Blob<'a>, ResolveErr>, b: Result<Blob<'a>, ResolveErr>) -> bool {
        fn parts(r: Result<Blob<'_>, ResolveErr>) -> Result<Parts<'_>, ResolveErr> {
            r.map(|b| {
                let ptrs = (b.stored.as_ptr(), b.toc.as_ptr(), b.toc.len());
                let place = (b.codec() == super::super::Codec::Stored)
                    .then_some((b.stored.as_ptr(), b.stored.len()));
                (b, ptrs, place)
            })
        }
        parts(a) == parts(b)
    }

    type Parts<'a> = (
        Blob<'a>,
        (*const u8, *const u8, usize),
        Option<(*const u8, usize)>,
    );

    /// The blob `getter` names, from the table of contents (the lookup before the index).
    fn answer<'a>(
        p: &VerifiedPartition<'a>,
        getter: Getter,
        null: ResolveErr,
    ) -> Result<Blob<'a>, ResolveErr> {
        p.tables().blob(getter).ok_or(null)
    }

    /// The lookup before the index, as it was: index bound, environment, the scan of the
    /// bytes, the handle from the table of contents by the getter's number.
    fn by_scan<'a>(
        p: &VerifiedPartition<'a>,
        idx: u32,
        region: i32,
        flavor: i32,
    ) -> Result<Blob<'a>, ResolveErr> {
        let flavor = before_tables(idx, SLOT_COUNT, flavor, &NoEnv)?;
        let found = p.tables().scan(idx as usize, flavor);
        let scan = match &found {
            Ok(regions) => Scan::Found(regions),
            Err(true) => Scan::EmptySlot,
            Err(false) => Scan::NotFound,
        };
        answer(p, after_scan(scan, region)?, ResolveErr::NullGetter)
    }

    const FLAVORS: [i32; 16] = [
        0,
        1,
        2,
        3,
        17,
        18,
        19,
        4,
        16,
        20,
        -1,
        -17,
        0x1_0001,
        257,
        i32::MIN,
        i32::MAX,
    ];
    const REGIONS: [i32; 8] = [-1, 0, 1, 2, 3, 4, i32::MIN, i32::MAX];

    /// What `blob` reads from its table-of-contents record (found when asked) is its entry's.
    fn same_record(p: &VerifiedPartition<'_>, blob: Blob<'_>) {
        let entry = p.tables().toc_entry(blob.id()).expect("an entry");
        assert_eq!(blob.codec(), entry.codec);
        assert_eq!(blob.decoded_len(), entry.decoded_len as usize);
        assert_eq!(blob.sha256(), entry.sha256);
        assert_eq!(blob.stored_sha256(), entry.stored_sha256);
        let len = if blob.cursor().is_some() {
            0
        } else {
            entry.decoded_len
        };
        assert_eq!(blob.len(), len as usize);
    }

    /// Every answer of `p`, the index's against the scan's; the number of hits.
    fn compare(p: &VerifiedPartition<'_>) -> usize {
        let mut hits = 0;
        for idx in (0..SLOT_COUNT as u32 + 2).chain([u32::MAX]) {
            for flavor in FLAVORS {
                for region in REGIONS {
                    let index = p.get_memory_image(idx, region, flavor, &NoEnv);
                    if let Ok(blob) = index {
                        same_record(p, blob);
                    }
                    let scan = by_scan(p, idx, region, flavor);
                    assert!(
                        same(index, scan),
                        "{idx} {region} {flavor}: {index:?} {scan:?}"
                    );
                    hits += usize::from(index.is_ok());
                }
            }
            for kind in [-1, 0, 1, 2, i32::MAX] {
                let index = p.get_hwdecode_table(idx, kind);
                let scan = match p.tables().prof_getters(idx) {
                    None => Err(ResolveErr::IndexOutOfRange),
                    Some(pair) => {
                        prof_pick(&pair, kind).and_then(|g| answer(p, g, ResolveErr::NoProfiler))
                    }
                };
                assert!(same(index, scan), "{idx} {kind}: {index:?} {scan:?}");
            }
        }
        hits
    }

    /// A small deterministic generator (xorshift64*).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// Hostile but valid: slots with several descriptors of one key (the first wins), keys
    /// outside the vendor's six (the scan answers those), empty slots, NULL getters, cursors,
    /// a getter on the last table-of-contents entry.
    #[test]
    fn the_index_answers_what_the_scan_answers() {
        let keys = [1, 2, 3, 17, 18, 19, 4, -5, 0x1_0001, i32::MIN, i32::MAX, 20];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut hits = 0;
        for case in 0..200 {
            let toc = 1 + rng.below(6);
            let getter = |rng: &mut Rng, cursors: bool| -> RawGetter {
                match rng.below(5) {
                    0 => (GETTER_NULL, 0),
                    k if cursors => (k.min(3) as u8, rng.below(toc) as u16),
                    _ => (GETTER_BLOB, rng.below(toc) as u16),
                }
            };
            let slots: [Vec<(i32, [RawGetter; 4])>; SLOT_COUNT] = core::array::from_fn(|_| {
                // Every fourth slot empty; a few long ones.
                let n = match rng.below(8) {
                    0 | 1 => 0,
                    7 => 8 + rng.below(8),
                    _ => 1 + rng.below(4),
                };
                let vendor_only = case % 2 == 0; // half the partitions: the six keys only
                (0..n)
                    .map(|_| {
                        let key = keys[rng.below(if vendor_only { 6 } else { keys.len() })];
                        (key, core::array::from_fn(|_| getter(&mut rng, true)))
                    })
                    .collect()
            });
            // The first profiler getters name every blob (parse refuses one no getter names).
            let prof = core::array::from_fn(|slot| match slot < toc {
                true => [(GETTER_BLOB, slot as u16), getter(&mut rng, false)],
                false => core::array::from_fn(|_| getter(&mut rng, false)),
            });
            let bytes = build(&slots, &prof, toc);
            hits += compare(&verified(&bytes));
        }
        assert!(hits > 10_000, "{hits}");
    }

    /// The extremes: no descriptor at all (every slot empty), and every slot full of one key.
    #[test]
    fn empty_and_crowded_partitions_answer_like_the_scan() {
        let none = core::array::from_fn(|_| Vec::new());
        let prof = [[(GETTER_NULL, 0); 2]; SLOT_COUNT];
        assert_eq!(compare(&verified(&build(&none, &prof, 0))), 0);
        let g = |n| (GETTER_BLOB, n);
        let crowded = core::array::from_fn(|s| {
            (0..26u16)
                .map(|d| {
                    (
                        if d < 20 { 2 } else { -2 },
                        [g(d), g(d + 1), (GETTER_CURSOR_END, d), (GETTER_NULL, 0)],
                    )
                })
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .skip(s % 7)
                .collect()
        });
        let prof = [[g(0), (GETTER_NULL, 0)]; SLOT_COUNT];
        assert!(compare(&verified(&build(&crowded, &prof, 27))) > 0);
    }
}
