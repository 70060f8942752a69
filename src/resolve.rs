//! The two resolvers, in the vendor's order of checks.
//!
//! `get_memory_image` checks, in this order, and each comment below names its check:
//!
//! 1. **index bound**: `idx > 37` → code 1, before anything else is read;
//! 2. **removed flag**: `NRTUCODE_MPLUS_ON_MARIANA` equal to `1` → code 8;
//! 3. **auto flavor**: flavor 0 becomes the key `NEURON_UCODE_FLAVOR` selects;
//! 4. **empty slot**: a slot without descriptors (MAVERICK's 36) → code 2;
//! 5. **flavor scan**: the first descriptor with that key, in table order; none → code 2
//!    (the scan's answer is precomputed at compile time in `crate::resolve::descriptor_index`);
//! 6. **region bound**: region outside 0..=3 → code 2 (after the scan, as the vendor does);
//! 7. **NULL getter**: the descriptor exists but its image is not in this build → code 3;
//! 8. success: the bytes (empty for a boundary cursor).
//!
//! `get_hwdecode_table`: index bound → 1; kind bound → 2; NULL getter → 2.
//! The raw entry points take the C integers, so every out-of-range value gets the vendor's
//! answer; the typed ones take enums and share the implementation.

mod descriptor_index;

use crate::catalog::{HWDECODE_LIST, IMAGE_LIST};
use crate::env::{Env, FLAVOR_VAR, REMOVED_FLAG_VAR, auto_flavor, removed_flag_trips};
use crate::{Flavor, ImageIndex, ProfKind, Region, ResolveErr};
use descriptor_index::{DESCRIPTOR_AT, DESCRIPTOR_REGIONS, EMPTY_SLOT, FLAVOR_SPAN};

/// Resolves a firmware image region, reading the environment through `env`.
///
/// Arguments are the vendor's C integers: `idx` the flat (generation, engine) index 0..=37,
/// `region` 0 IRAM, 1 DRAM, 2 SRAM, 3 EXTRAM, `flavor` 0 auto (from `NEURON_UCODE_FLAVOR`),
/// 1 PERF/RELEASE, 2 DEBUG, 3 TEST, 17/18/19 dynamic-kernel-load. A boundary cursor resolves to
/// an empty slice (code 0) at the vendor's address (one past the end of the same image's DRAM or
/// SRAM blob, or the start of its DRAM blob), a getter not in this build to
/// [`ResolveErr::NullGetter`] (code 3).
///
/// ```
/// use nrtucode::{get_memory_image, NoEnv, ResolveErr};
/// let iram = get_memory_image(7, 0, 1, &NoEnv)?; // CAYMAN NX ACT, IRAM, PERF
/// assert_eq!(iram.len(), 0x13dc0);
/// assert_eq!(get_memory_image(38, 0, 1, &NoEnv), Err(ResolveErr::IndexOutOfRange));
/// assert_eq!(get_memory_image(36, 0, 1, &NoEnv).unwrap_err().code(), 2);
/// # Ok::<(), ResolveErr>(())
/// ```
pub fn get_memory_image<E: Env + ?Sized>(
    idx: u32,
    region: i32,
    flavor: i32,
    env: &E,
) -> Result<&'static [u8], ResolveErr> {
    memory_image(&Embedded, idx, region, flavor, env)
}

/// Where the resolver body ([`memory_image`], [`hwdecode_table`]) reads the vendor's tables
/// from: the tables embedded in this build ([`Embedded`]), or a verified partition's index
/// (`crate::partition`). A storage answers the flavor scan for a slot and a resolved flavor,
/// and makes the answer of the getter the body's checks picked; the checks themselves and
/// their order are the body's, written once.
pub(crate) trait Storage {
    /// A getter as the storage holds it (`None` beside it: NULL).
    type Getter: Copy;
    /// A descriptor's four region getters, with whatever the storage keeps beside them.
    type Row;
    /// A slot's two profiler getters, likewise.
    type ProfRow;
    /// What a lookup answers: bytes, or a blob's handle.
    type Answer<'s>
    where
        Self: 's;
    /// The number of `image_list` (and `hwdecode_table_list`) slots.
    const SLOTS: usize;

    /// Empty slot and flavor scan of slot `idx` (below [`Self::SLOTS`]) for the resolved
    /// `flavor`.
    fn find(&self, idx: u32, flavor: i32) -> Find<'_, Self::Row>;
    /// The four region getters of `row`.
    fn regions(row: &Self::Row) -> &[Option<Self::Getter>; 4];
    /// The answer of `getter`, picked from `row` at `at` (below 4); `Err(null)` if it names
    /// nothing (never, for a storage whose getters were checked when it was made).
    fn answer<'s>(
        &'s self,
        row: &'s Self::Row,
        getter: Self::Getter,
        at: usize,
        null: ResolveErr,
    ) -> Result<Self::Answer<'s>, ResolveErr>;
    /// Empty slot, flavor scan, region bound and NULL getter by the vendor's scan, for what
    /// [`find`](Self::find) leaves to it ([`Find::Scan`]).
    fn by_scan(&self, idx: u32, region: i32, flavor: i32) -> Result<Self::Answer<'_>, ResolveErr>;
    /// The profiler getters of slot `idx`; `None` past the last slot.
    fn prof_row(&self, idx: u32) -> Option<&Self::ProfRow>;
    /// The PROF_CAM and PROF_TABLE getters of `row`.
    fn prof_getters(row: &Self::ProfRow) -> &[Option<Self::Getter>; 2];
    /// The answer of `getter`, picked from `row` at `at` (below 2).
    fn prof_answer<'s>(
        &'s self,
        row: &'s Self::ProfRow,
        getter: Self::Getter,
        at: usize,
    ) -> Result<Self::Answer<'s>, ResolveErr>;
}

/// What a storage's flavor scan found ([`Storage::find`]).
pub(crate) enum Find<'t, R> {
    /// The slot has no descriptors.
    EmptySlot,
    /// No descriptor of the slot has the key.
    NotFound,
    /// The first descriptor with the key.
    Found(&'t R),
    /// The storage leaves this slot and key to the vendor's scan ([`Storage::by_scan`]): a
    /// partition's key outside the six vendor keys (never for the embedded tables).
    #[cfg_attr(not(feature = "partition"), allow(dead_code))]
    Scan,
}

/// [`get_memory_image`]'s body over any storage: index bound, removed flag, auto flavor, the
/// storage's scan, region bound, NULL getter, in the vendor's order (the module docs).
#[inline(always)]
pub(crate) fn memory_image<'s, S: Storage, E: Env + ?Sized>(
    storage: &'s S,
    idx: u32,
    region: i32,
    flavor: i32,
    env: &E,
) -> Result<S::Answer<'s>, ResolveErr> {
    let flavor = before_tables(idx, S::SLOTS, flavor, env)?;
    // Empty slot and flavor scan (the storage's), each answered here, in one match: the
    // answer is made in one place after the region checks, so that the hot path merges with
    // no answer in memory; the vendor's scan (cold, out of line) makes its own.
    let row = match storage.find(idx, flavor) {
        Find::Found(row) => row,
        Find::EmptySlot => return Err(ResolveErr::EmptySlot),
        Find::NotFound => return Err(ResolveErr::FlavorNotFound),
        Find::Scan => return storage.by_scan(idx, region, flavor),
    };
    let getter = region_getter(S::regions(row), region)?;
    storage.answer(row, getter, region as u32 as usize, ResolveErr::NullGetter)
}

/// [`get_hwdecode_table`]'s body over any storage: index bound, kind bound, NULL getter.
#[inline(always)]
pub(crate) fn hwdecode_table<S: Storage>(
    storage: &S,
    idx: u32,
    kind: i32,
) -> Result<S::Answer<'_>, ResolveErr> {
    let Some(row) = storage.prof_row(idx) else {
        return Err(ResolveErr::IndexOutOfRange);
    };
    let getter = prof_pick(S::prof_getters(row), kind)?;
    storage.prof_answer(row, getter, kind as u32 as usize)
}

/// The vendor's two resolvers over one storage of its tables: the tables embedded in this
/// build ([`Embedded`]), or a partition (`nrtucode::partition`'s `VerifiedPartition`,
/// `CheckedPartition`, and on a host `LoadedPartition`). Each answers through the same body of
/// checks; a caller generic over `Resolver` serves either.
///
/// ```
/// use nrtucode::{Embedded, NoEnv, Resolver};
/// // Any storage that answers bytes: the embedded tables, or a host's `LoadedPartition`.
/// fn iram_len<R: for<'s> Resolver<Answer<'s> = &'s [u8]>>(tables: &R) -> Option<usize> {
///     tables.get_memory_image(7, 0, 1, &NoEnv).ok().map(<[u8]>::len)
/// }
/// assert_eq!(iram_len(&Embedded), Some(0x13dc0));
/// ```
pub trait Resolver {
    /// What a lookup answers: the bytes (`&[u8]`), or a partition blob's handle.
    type Answer<'s>
    where
        Self: 's;

    /// [`get_memory_image`] over these tables: the same arguments, order of checks,
    /// environment reads and codes (1, 2, 3, 8).
    fn get_memory_image<E: Env + ?Sized>(
        &self,
        idx: u32,
        region: i32,
        flavor: i32,
        env: &E,
    ) -> Result<Self::Answer<'_>, ResolveErr>;

    /// [`get_hwdecode_table`] over these tables (codes 1 and 2).
    fn get_hwdecode_table(&self, idx: u32, kind: i32) -> Result<Self::Answer<'_>, ResolveErr>;

    /// Typed [`get_memory_image`](Self::get_memory_image).
    #[inline]
    fn resolve_image<E: Env + ?Sized>(
        &self,
        idx: ImageIndex,
        region: Region,
        flavor: Flavor,
        env: &E,
    ) -> Result<Self::Answer<'_>, ResolveErr> {
        self.get_memory_image(idx.raw(), region.raw(), flavor.raw(), env)
    }

    /// Typed [`get_hwdecode_table`](Self::get_hwdecode_table).
    #[inline]
    fn resolve_hwdecode(
        &self,
        idx: ImageIndex,
        kind: ProfKind,
    ) -> Result<Self::Answer<'_>, ResolveErr> {
        self.get_hwdecode_table(idx.raw(), kind.raw())
    }
}

/// The resolvers of a type whose tables are a [`Storage`], written once: its inherent
/// `get_memory_image`, `get_hwdecode_table` and their typed forms (callable without importing
/// a trait) and its [`Resolver`] implementation, each a call of the one body
/// ([`memory_image`], [`hwdecode_table`]) over `$storage` (an expression of `self`), its answer
/// mapped by `$map`.
///
/// `resolver_api!(impl['a] VerifiedPartition<'a>, 's => Blob<'a>, |p| &p.0, |b| b, "docs")`.
#[cfg(feature = "partition")]
macro_rules! resolver_api {
    (
        impl[$($generics:tt)*] $ty:ty,
        $s:lifetime => $answer:ty,
        |$this:ident| $storage:expr,
        |$found:ident| $map:expr,
        $answers:literal
    ) => {
        impl<$($generics)*> $ty {
            #[doc = concat!(
                "[`crate::get_memory_image`] over these tables: the same arguments, order of ",
                "checks, environment reads and codes (1, 2, 3, 8), answering ",
                $answers
            )]
            #[inline]
            pub fn get_memory_image<$s, E: $crate::Env + ?Sized>(
                &$s self,
                idx: u32,
                region: i32,
                flavor: i32,
                env: &E,
            ) -> Result<$answer, $crate::ResolveErr> {
                let $this = self;
                $crate::resolve::memory_image($storage, idx, region, flavor, env)
                    .map(|$found| $map)
            }

            /// Typed [`get_memory_image`](Self::get_memory_image).
            #[inline]
            pub fn resolve_image<$s, E: $crate::Env + ?Sized>(
                &$s self,
                idx: $crate::ImageIndex,
                region: $crate::Region,
                flavor: $crate::Flavor,
                env: &E,
            ) -> Result<$answer, $crate::ResolveErr> {
                self.get_memory_image(idx.raw(), region.raw(), flavor.raw(), env)
            }

            #[doc = concat!(
                "[`crate::get_hwdecode_table`] over these tables (codes 1 and 2), answering ",
                $answers
            )]
            #[inline]
            pub fn get_hwdecode_table<$s>(
                &$s self,
                idx: u32,
                kind: i32,
            ) -> Result<$answer, $crate::ResolveErr> {
                let $this = self;
                $crate::resolve::hwdecode_table($storage, idx, kind).map(|$found| $map)
            }

            /// Typed [`get_hwdecode_table`](Self::get_hwdecode_table).
            #[inline]
            pub fn resolve_hwdecode<$s>(
                &$s self,
                idx: $crate::ImageIndex,
                kind: $crate::ProfKind,
            ) -> Result<$answer, $crate::ResolveErr> {
                self.get_hwdecode_table(idx.raw(), kind.raw())
            }
        }

        impl<$($generics)*> $crate::Resolver for $ty {
            type Answer<$s>
                = $answer
            where
                Self: $s;

            #[inline]
            fn get_memory_image<$s, E: $crate::Env + ?Sized>(
                &$s self,
                idx: u32,
                region: i32,
                flavor: i32,
                env: &E,
            ) -> Result<$answer, $crate::ResolveErr> {
                <$ty>::get_memory_image(self, idx, region, flavor, env)
            }

            #[inline]
            fn get_hwdecode_table<$s>(
                &$s self,
                idx: u32,
                kind: i32,
            ) -> Result<$answer, $crate::ResolveErr> {
                <$ty>::get_hwdecode_table(self, idx, kind)
            }
        }
    };
}
#[cfg(feature = "partition")]
pub(crate) use resolver_api;

/// The tables embedded in this build, as a [`Resolver`]: the free functions
/// ([`get_memory_image`], [`get_hwdecode_table`]) answer through it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Embedded;

impl Storage for Embedded {
    type Getter = &'static [u8];
    type Row = crate::table::Regions;
    type ProfRow = crate::table::ProfPair;
    type Answer<'s> = &'static [u8];
    const SLOTS: usize = IMAGE_LIST.len();

    #[inline(always)]
    fn find(&self, idx: u32, flavor: i32) -> Find<'_, Self::Row> {
        match find_embedded(idx, flavor) {
            Scan::Found(row) => Find::Found(row),
            Scan::EmptySlot => Find::EmptySlot,
            Scan::NotFound => Find::NotFound,
        }
    }

    #[inline(always)]
    fn regions(row: &Self::Row) -> &[Option<Self::Getter>; 4] {
        row
    }

    #[inline(always)]
    fn answer<'s>(
        &'s self,
        _: &'s Self::Row,
        getter: Self::Getter,
        _: usize,
        _: ResolveErr,
    ) -> Result<&'static [u8], ResolveErr> {
        Ok(getter)
    }

    #[inline(always)]
    fn by_scan(&self, _: u32, _: i32, _: i32) -> Result<&'static [u8], ResolveErr> {
        Err(ResolveErr::FlavorNotFound) // never: `find` answers every slot and key
    }

    #[inline(always)]
    fn prof_row(&self, idx: u32) -> Option<&Self::ProfRow> {
        HWDECODE_LIST.get(idx as usize).map(|slot| slot.pair())
    }

    #[inline(always)]
    fn prof_getters(row: &Self::ProfRow) -> &[Option<Self::Getter>; 2] {
        row
    }

    #[inline(always)]
    fn prof_answer<'s>(
        &'s self,
        _: &'s Self::ProfRow,
        getter: Self::Getter,
        _: usize,
    ) -> Result<&'static [u8], ResolveErr> {
        Ok(getter)
    }
}

/// Answers `&'s [u8]` like a partition's bytes, so that a caller generic over [`Resolver`]
/// takes both; the bytes are `'static` (the free functions answer them so).
impl Resolver for Embedded {
    type Answer<'s> = &'s [u8];

    #[inline]
    fn get_memory_image<E: Env + ?Sized>(
        &self,
        idx: u32,
        region: i32,
        flavor: i32,
        env: &E,
    ) -> Result<&[u8], ResolveErr> {
        memory_image(self, idx, region, flavor, env)
    }

    #[inline]
    fn get_hwdecode_table(&self, idx: u32, kind: i32) -> Result<&[u8], ResolveErr> {
        hwdecode_table(self, idx, kind)
    }
}

/// Index bound, removed flag and auto flavor: the checks the vendor makes before it reads any
/// table, shared by every storage of the tables (the embedded ones here, a partition in
/// `crate::partition`). `slots` is the number of `image_list` slots; returns the resolved
/// flavor key.
#[inline(always)]
pub(crate) fn before_tables<E: Env + ?Sized>(
    idx: u32,
    slots: usize,
    flavor: i32,
    env: &E,
) -> Result<i32, ResolveErr> {
    // Index bound, before anything else.
    if idx as usize >= slots {
        return Err(ResolveErr::IndexOutOfRange);
    }
    // Removed flag and auto flavor. Reading the flavor variable in the same
    // pass as the flag changes no answer: the flag still wins.
    let (tripped, flavor) = if flavor == 0 {
        let mut answer = (false, 0);
        env.visit_two_vars(REMOVED_FLAG_VAR, FLAVOR_VAR, &mut |flag, value| {
            answer = (removed_flag_trips(flag), auto_flavor(value));
        });
        answer
    } else {
        let mut tripped = false;
        env.visit_var(REMOVED_FLAG_VAR, &mut |flag| {
            tripped = removed_flag_trips(flag)
        });
        (tripped, flavor)
    };
    if tripped {
        env.removed_flag_notice();
        #[cfg(feature = "defmt")]
        defmt::warn!("nrtucode: NRTUCODE_MPLUS_ON_MARIANA=1 is a removed flag (code 8)");
        return Err(ResolveErr::RemovedFlag);
    }
    Ok(flavor)
}

/// What the empty-slot check and the flavor scan found in one slot, in any storage: the
/// input of [`after_scan`].
#[derive(Clone, Copy)]
pub(crate) enum Scan<'t, G: Copy> {
    /// The slot has no descriptors.
    EmptySlot,
    /// No descriptor of the slot has the key.
    NotFound,
    /// The first descriptor with the key: its four region getters (`None`: NULL).
    Found(&'t [Option<G>; 4]),
}

/// Empty slot, flavor scan, region bound and NULL getter, in the vendor's order, over the
/// descriptor a storage's scan found: the one body both storages answer through.
#[inline(always)]
pub(crate) const fn after_scan<G: Copy>(scan: Scan<'_, G>, region: i32) -> Result<G, ResolveErr> {
    match scan {
        Scan::EmptySlot => Err(ResolveErr::EmptySlot),
        Scan::NotFound => Err(ResolveErr::FlavorNotFound),
        Scan::Found(regions) => region_getter(regions, region),
    }
}

/// Region bound and NULL getter over the four getters of the descriptor the flavor scan found.
#[inline(always)]
pub(crate) const fn region_getter<G: Copy>(
    regions: &[Option<G>; 4],
    region: i32,
) -> Result<G, ResolveErr> {
    // Region bound, after the scan; a negative region wraps to a huge one.
    let region = region as u32 as usize;
    if region >= Region::ALL.len() {
        return Err(ResolveErr::RegionOutOfRange);
    }
    match regions[region] {
        Some(getter) => Ok(getter),
        None => Err(ResolveErr::NullGetter),
    }
}

/// Kind bound and NULL getter of the profiler lane over one slot's pair (after the index
/// bound), shared by both storages.
#[inline(always)]
pub(crate) const fn prof_pick<G: Copy>(pair: &[Option<G>; 2], kind: i32) -> Result<G, ResolveErr> {
    let Some(kind) = ProfKind::from_raw(kind) else {
        return Err(ResolveErr::KindOutOfRange);
    };
    match pair[kind as usize] {
        Some(getter) => Ok(getter),
        None => Err(ResolveErr::NoProfiler),
    }
}

/// [`get_memory_image`] with nothing set in the environment, usable in `const` contexts.
///
/// ```
/// use nrtucode::get_memory_image_const;
/// const IRAM: &[u8] = match get_memory_image_const(7, 0, 0) {
///     Ok(bytes) => bytes,
///     Err(_) => panic!("CAYMAN NX ACT IRAM is embedded"),
/// };
/// static_assertions::const_assert_eq!(IRAM.len(), 0x13dc0);
/// ```
pub const fn get_memory_image_const(
    idx: u32,
    region: i32,
    flavor: i32,
) -> Result<&'static [u8], ResolveErr> {
    if idx as usize >= IMAGE_LIST.len() {
        return Err(ResolveErr::IndexOutOfRange);
    }
    let flavor = if flavor == 0 {
        auto_flavor(None)
    } else {
        flavor
    };
    lookup_image(idx, region, flavor)
}

/// Empty slot, flavor scan, region bound, NULL getter (the module docs list the order).
/// `flavor` is already resolved.
///
/// The scan's answer comes precomputed from the index (`crate::resolve::descriptor_index`): one load gives the
/// descriptor, or the empty-slot / not-found answer the scan would give, in the scan's order.
#[inline]
const fn lookup_image(idx: u32, region: i32, flavor: i32) -> Result<&'static [u8], ResolveErr> {
    if idx as usize >= DESCRIPTOR_AT.len() {
        return Err(ResolveErr::IndexOutOfRange);
    }
    after_scan(find_embedded(idx, flavor), region)
}

/// The embedded tables' empty-slot check and flavor scan, from the precomputed index
/// (`crate::resolve::descriptor_index`): one load gives the descriptor, or the empty-slot / not-found
/// answer the scan would give, in the scan's order. `idx` is below the slot count (an index
/// past it answers "not found"); `flavor` is resolved.
#[inline(always)]
const fn find_embedded(idx: u32, flavor: i32) -> Scan<'static, &'static [u8]> {
    let idx = idx as usize;
    if idx >= DESCRIPTOR_AT.len() {
        return Scan::NotFound;
    }
    // A negative flavor wraps to a huge one: outside the span, like every non-key.
    let key = flavor as u32 as usize;
    let at = if key < FLAVOR_SPAN {
        DESCRIPTOR_AT[idx][key]
    } else {
        DESCRIPTOR_AT[idx][0]
    } as usize;
    if at < DESCRIPTOR_REGIONS.len() {
        Scan::Found(&DESCRIPTOR_REGIONS[at])
    } else if at == EMPTY_SLOT as usize {
        Scan::EmptySlot
    } else {
        Scan::NotFound
    }
}

/// Resolves a HW instruction-decode profiler table: `kind` 0 PROF_CAM, 1 PROF_TABLE.
///
/// ```
/// use nrtucode::{get_hwdecode_table, ResolveErr};
/// assert_eq!(get_hwdecode_table(7, 0).map(<[u8]>::len), Ok(0x400));
/// assert_eq!(get_hwdecode_table(7, 2), Err(ResolveErr::KindOutOfRange)); // code 2, not 1
/// assert_eq!(get_hwdecode_table(0, 0), Err(ResolveErr::NoProfiler)); // SUNDA: none
/// ```
pub const fn get_hwdecode_table(idx: u32, kind: i32) -> Result<&'static [u8], ResolveErr> {
    let idx = idx as usize;
    if idx >= HWDECODE_LIST.len() {
        return Err(ResolveErr::IndexOutOfRange);
    }
    prof_pick(HWDECODE_LIST[idx].pair(), kind)
}

/// Typed [`get_memory_image`].
///
/// ```
/// use nrtucode::{resolve_image, Flavor, ImageIndex, NoEnv, Region};
/// let sram = resolve_image(ImageIndex::MAVERICK_NX_SP, Region::Sram, Flavor::Perf, &NoEnv)?;
/// assert!(!sram.is_empty()); // MAVERICK SP keeps its code in SRAM
/// # Ok::<(), nrtucode::ResolveErr>(())
/// ```
pub fn resolve_image<E: Env + ?Sized>(
    idx: ImageIndex,
    region: Region,
    flavor: Flavor,
    env: &E,
) -> Result<&'static [u8], ResolveErr> {
    get_memory_image(idx.raw(), region.raw(), flavor.raw(), env)
}

/// Typed [`get_memory_image_const`].
pub const fn resolve_image_const(
    idx: ImageIndex,
    region: Region,
    flavor: Flavor,
) -> Result<&'static [u8], ResolveErr> {
    get_memory_image_const(idx.raw(), region.raw(), flavor.raw())
}

/// Typed [`get_hwdecode_table`].
pub const fn resolve_hwdecode(
    idx: ImageIndex,
    kind: ProfKind,
) -> Result<&'static [u8], ResolveErr> {
    get_hwdecode_table(idx.raw(), kind.raw())
}

#[cfg(test)]
mod tests {
    // The index (`crate::resolve::descriptor_index`) against the vendor's scan; here, not beside the
    // index, so that the index's module needs nothing of this one.
    use super::*;
    use crate::Region;

    /// The vendor's algorithm, directly over the slots: empty slot, linear flavor scan, region
    /// bound, NULL getter.
    fn by_scan(idx: u32, region: i32, flavor: i32) -> Result<&'static [u8], ResolveErr> {
        let slot = IMAGE_LIST
            .get(idx as usize)
            .ok_or(ResolveErr::IndexOutOfRange)?;
        if slot.descriptors().is_empty() {
            return Err(ResolveErr::EmptySlot);
        }
        let desc = slot.find_raw(flavor).ok_or(ResolveErr::FlavorNotFound)?;
        let region = Region::from_raw(region).ok_or(ResolveErr::RegionOutOfRange)?;
        desc.region(region).ok_or(ResolveErr::NullGetter)
    }

    #[test]
    fn the_index_answers_like_the_scan() {
        let flavors = (-3..=25).chain([i32::MIN, i32::MAX, 255, 256, 0x1_0001, -17]);
        let mut hits = 0;
        for flavor in flavors {
            if flavor == 0 {
                continue; // resolved from the environment before the lookup
            }
            for idx in (0..40).chain([u32::MAX]) {
                for region in [-1, 0, 1, 2, 3, 4, i32::MIN, i32::MAX] {
                    let index = get_memory_image_const(idx, region, flavor);
                    let scan = by_scan(idx, region, flavor);
                    assert_eq!(index, scan, "{idx} {region} {flavor}");
                    assert_eq!(
                        index.map(<[u8]>::as_ptr),
                        scan.map(<[u8]>::as_ptr),
                        "{idx} {region} {flavor}"
                    );
                    hits += usize::from(index.is_ok());
                }
            }
        }
        // Every present getter of every descriptor was reached (NULL getters of a reduced build
        // answer code 3 and are not hits).
        let present = crate::catalog::image_entries()
            .filter(|e| e.blob.is_some())
            .count();
        assert_eq!(hits, present);
    }
}
