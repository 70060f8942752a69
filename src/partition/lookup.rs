//! The resolvers over a [`VerifiedPartition`], through the same body of checks as the embedded
//! tables (`crate::resolve`: `before_tables`, `after_scan`, `prof_pick`), answering a [`Blob`]
//! handle; and the whole-partition digest check.
//!
//! A lookup reads the index verification built (`super::index`): the row of (slot, key), then
//! the getter and its stored bytes, made into the handle as they are (no table-of-contents
//! read, no bounds check); only a raw flavor that is none of the six vendor keys, in a slot
//! holding such a key, scans the slot's bytes instead (`by_scan`, the vendor's scan).

use super::blob::{Blob, BlobId};
use super::error::LoadError;
use super::format::SLOT_COUNT;
use super::index::{COLUMN_OF, Column, EMPTY_SLOT, Index, NOT_FOUND, Packed, Stored};
use super::tables::{Getter, Tables};
use super::trust::VerifiedPartition;
use crate::digest::Sha256Hasher;
use crate::env::Env;
use crate::resolve::{Scan, after_scan, before_tables, prof_pick};
use crate::{Flavor, ImageIndex, ProfKind, Region, ResolveErr};

impl<'a> VerifiedPartition<'a> {
    /// The handle of a getter and its answer's stored bytes.
    #[inline(always)]
    const fn handle(&self, (getter, stored): (Packed, &'a [u8])) -> Blob<'a> {
        Blob {
            stored,
            toc: self.toc,
            getter,
        }
    }

    /// Empty slot, flavor scan, region bound and NULL getter by the vendor's scan of the slot's
    /// bytes, for what the index leaves to it (a key outside the six vendor keys): the
    /// handle. `flavor` is resolved and `idx` below the slot count.
    #[cold]
    #[inline(never)]
    fn by_scan(&self, idx: u32, region: i32, flavor: i32) -> Result<Blob<'a>, ResolveErr> {
        scan_getter(&self.tables(), idx, region, flavor).map(|answer| self.handle(answer))
    }

    /// [`crate::get_memory_image`] over this partition: the same arguments, order of checks,
    /// environment reads and codes (1, 2, 3, 8), answering the blob's handle; its bytes come
    /// through [`Blob::check`] or [`Blob::load_into`].
    #[inline]
    pub fn get_memory_image<E: Env + ?Sized>(
        &self,
        idx: u32,
        region: i32,
        flavor: i32,
        env: &E,
    ) -> Result<Blob<'a>, ResolveErr> {
        // `Index::image_getter`'s body, written out: through that call (a closure for the
        // scan) the Cortex-M4 build spends 5.6 more instructions a lookup (`cargo xtask cost
        // --what lookup`). Its tests compare the two.
        let flavor = before_tables(idx, SLOT_COUNT, flavor, env)?;
        // `idx` is below the slot count (`before_tables`), so this check folds away.
        let Some(at) = self.index.at.get(idx as usize) else {
            return Err(ResolveErr::IndexOutOfRange);
        };
        // A negative flavor wraps to a huge one: column 0, like every raw flavor that is no key.
        let column = match COLUMN_OF.get(flavor as u32 as usize) {
            Some(&column) => column,
            None => Column::Other,
        };
        let at = at[column as usize];
        // The index's answer is made into the handle here, in registers; the scan (cold, out
        // of line) makes its own, so that the hot path merges with no answer in memory.
        let row = self.index.rows.get(usize::from(at));
        let scan = match row {
            Some(row) => Scan::Found(&row.getters),
            None if at == EMPTY_SLOT => Scan::EmptySlot,
            None if at == NOT_FOUND => Scan::NotFound,
            None => return self.by_scan(idx, region, flavor),
        };
        let getter = after_scan(scan, region)?;
        match row {
            Some(row) => Ok(self.handle(row.pick(getter, region as u32 as usize))),
            None => Err(ResolveErr::NullGetter), // never: no getter without a row
        }
    }

    /// Typed [`get_memory_image`](Self::get_memory_image).
    #[inline]
    pub fn resolve_image<E: Env + ?Sized>(
        &self,
        idx: ImageIndex,
        region: Region,
        flavor: Flavor,
        env: &E,
    ) -> Result<Blob<'a>, ResolveErr> {
        self.get_memory_image(idx.raw(), region.raw(), flavor.raw(), env)
    }

    /// [`crate::get_hwdecode_table`] over this partition (codes 1 and 2), answering the blob's
    /// handle.
    #[inline]
    pub fn get_hwdecode_table(&self, idx: u32, kind: i32) -> Result<Blob<'a>, ResolveErr> {
        Ok(self.handle(self.index.hwdecode_getter(idx, kind)?))
    }

    /// Typed [`get_hwdecode_table`](Self::get_hwdecode_table).
    #[inline]
    pub fn resolve_hwdecode(
        &self,
        idx: ImageIndex,
        kind: ProfKind,
    ) -> Result<Blob<'a>, ResolveErr> {
        self.get_hwdecode_table(idx.raw(), kind.raw())
    }

    /// The whole blob of table-of-contents entry `blob` (what a getter naming it answers), for
    /// a host that checks or loads every blob by number; `None` past the table of contents.
    pub fn blob(&self, blob: BlobId) -> Option<Blob<'a>> {
        self.tables().blob(Getter::Blob(blob))
    }

    /// The whole partition's digests, once: the stored bytes of every blob hashed in place with
    /// `hasher` (a compressed blob's stream included) against the signed digests of the stored
    /// bytes. The first mismatch. After it held, over memory nobody can change since, every
    /// stored blob's [`Blob::unchecked_in_place`] bytes are the signed ones (a compressed blob
    /// is checked again, decoded, by [`Blob::load_into`]).
    pub fn check_blobs<H: Sha256Hasher + ?Sized>(&self, hasher: &mut H) -> Result<(), LoadError> {
        self.tables().check_stored_digests(hasher)
    }
}

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

impl<'a, S: Stored<'a>> Index<S> {
    /// The getter [`crate::get_memory_image`]'s checks (index bound, removed flag, auto flavor,
    /// empty slot, flavor scan, region bound, NULL getter) pick, from the index, or from `scan`
    /// (given the resolved flavor; `idx` below the slot count) where the index leaves it to the
    /// vendor's scan. Shared by [`VerifiedPartition`] and, on a host, `CheckedPartition`.
    #[cfg(any(feature = "std", test))]
    #[inline(always)]
    pub(super) fn image_getter<E: Env + ?Sized>(
        &self,
        idx: u32,
        region: i32,
        flavor: i32,
        env: &E,
        scan: impl FnOnce(u32, i32, i32) -> Result<(Packed, S), ResolveErr>,
    ) -> Result<(Packed, S), ResolveErr> {
        let flavor = before_tables(idx, SLOT_COUNT, flavor, env)?;
        // `idx` is below the slot count (`before_tables`), so this check folds away.
        let Some(at) = self.at.get(idx as usize) else {
            return Err(ResolveErr::IndexOutOfRange);
        };
        // A negative flavor wraps to a huge one: column 0, like every raw flavor that is no key.
        let column = match COLUMN_OF.get(flavor as u32 as usize) {
            Some(&column) => column,
            None => Column::Other,
        };
        let at = at[column as usize];
        // The cold paths give a getter too, so that the caller makes its answer in one place
        // (made in two, it would be merged through memory).
        let row = self.rows.get(usize::from(at));
        let found = match row {
            Some(row) => Scan::Found(&row.getters),
            None if at == EMPTY_SLOT => Scan::EmptySlot,
            None if at == NOT_FOUND => Scan::NotFound,
            None => return scan(idx, region, flavor),
        };
        let getter = after_scan(found, region)?;
        match row {
            Some(row) => Ok(row.pick(getter, region as u32 as usize)),
            None => Err(ResolveErr::NullGetter), // never: no getter without a row
        }
    }

    /// The getter [`crate::get_hwdecode_table`]'s checks (index bound, kind bound, NULL getter)
    /// pick.
    #[inline(always)]
    pub(super) fn hwdecode_getter(&self, idx: u32, kind: i32) -> Result<(Packed, S), ResolveErr> {
        let Some(row) = self.prof.get(idx as usize) else {
            return Err(ResolveErr::IndexOutOfRange);
        };
        let getter = prof_pick(&row.getters, kind)?;
        Ok(row.pick(getter, kind as u32 as usize))
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
        let mut put = |at: usize, b: &[u8]| out[at..at + b.len()].copy_from_slice(b);
        put(H_MAGIC, &MAGIC);
        put(H_VERSION, &VERSION.to_le_bytes());
        put(H_HEADER_LEN, &(HEADER_LEN as u16).to_le_bytes());
        put(H_TOTAL_LEN, &(total as u32).to_le_bytes());
        put(H_BLOBS_OFF, &(blobs_off as u32).to_le_bytes());
        put(H_CLASS, &[CLASS_FULL, SOURCE_NO_BUILD_ID]);
        put(H_SLOT_COUNT, &(SLOT_COUNT as u16).to_le_bytes());
        put(H_DESC_COUNT, &(desc_count as u16).to_le_bytes());
        put(H_PROF_COUNT, &(SLOT_COUNT as u16).to_le_bytes());
        put(H_TOC_COUNT, &(toc as u16).to_le_bytes());
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
        Partition::parse(bytes)
            .expect("a valid partition")
            .check_policy(&policy)
            .expect("the policy holds")
    }

    /// Everything a handle is, to the addresses of its bytes.
    fn same<'a>(a: Result<Blob<'a>, ResolveErr>, b: Result<Blob<'a>, ResolveErr>) -> bool {
        fn parts(r: Result<Blob<'_>, ResolveErr>) -> Result<Parts<'_>, ResolveErr> {
            r.map(|b| {
                let ptrs = (b.stored.as_ptr(), b.toc.as_ptr(), b.toc.len());
                let place = b.unchecked_in_place().map(|s| (s.as_ptr(), s.len()));
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
                    let shared = p
                        .index
                        .image_getter(idx, region, flavor, &NoEnv, |i, r, f| {
                            scan_getter(&p.tables(), i, r, f)
                        })
                        .map(|answer| p.handle(answer));
                    assert!(same(index, shared), "{idx} {region} {flavor}");
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
