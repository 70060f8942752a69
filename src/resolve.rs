//! The two resolvers, in the vendor's order of checks.
//!
//! `get_memory_image` checks, in this order, and each comment below names its check:
//!
//! 1. **index bound**: `idx > 37` → code 1, before anything else is read;
//! 2. **removed flag**: `NRTUCODE_MPLUS_ON_MARIANA` equal to `1` → code 8;
//! 3. **auto flavor**: flavor 0 becomes the key `NEURON_UCODE_FLAVOR` selects;
//! 4. **empty slot**: a slot without descriptors (MAVERICK's 36) → code 2;
//! 5. **flavor scan**: the first descriptor with that key, in table order; none → code 2
//!    (the scan's answer is precomputed at compile time in `crate::descriptor_index`);
//! 6. **region bound**: region outside 0..=3 → code 2 (after the scan, as the vendor does);
//! 7. **NULL getter**: the descriptor exists but its image is not in this build → code 3;
//! 8. success: the bytes (empty for a boundary cursor).
//!
//! `get_hwdecode_table`: index bound → 1; kind bound → 2; NULL getter → 2.
//! The raw entry points take the C integers, so every out-of-range value gets the vendor's
//! answer; the typed ones take enums and share the implementation.

use crate::catalog::{HWDECODE_LIST, IMAGE_LIST};
use crate::descriptor_index::{DESCRIPTOR_AT, DESCRIPTOR_REGIONS, EMPTY_SLOT, FLAVOR_SPAN};
use crate::env::{Env, FLAVOR_VAR, REMOVED_FLAG_VAR, auto_flavor, removed_flag_trips};
use crate::{Flavor, ImageIndex, ProfKind, Region, ResolveErr};

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
    let flavor = before_tables(idx, IMAGE_LIST.len(), flavor, env)?;
    lookup_image(idx, region, flavor)
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
    let regions = match scan {
        Scan::EmptySlot => return Err(ResolveErr::EmptySlot),
        Scan::NotFound => return Err(ResolveErr::FlavorNotFound),
        Scan::Found(regions) => regions,
    };
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
/// The scan's answer comes precomputed from the index (`crate::descriptor_index`): one load gives the
/// descriptor, or the empty-slot / not-found answer the scan would give, in the scan's order.
#[inline]
const fn lookup_image(idx: u32, region: i32, flavor: i32) -> Result<&'static [u8], ResolveErr> {
    let idx = idx as usize;
    if idx >= DESCRIPTOR_AT.len() {
        return Err(ResolveErr::IndexOutOfRange);
    }
    // A negative flavor wraps to a huge one: outside the span, like every non-key.
    let key = flavor as u32 as usize;
    let at = if key < FLAVOR_SPAN {
        DESCRIPTOR_AT[idx][key]
    } else {
        DESCRIPTOR_AT[idx][0]
    } as usize;
    let scan = if at < DESCRIPTOR_REGIONS.len() {
        Scan::Found(&DESCRIPTOR_REGIONS[at])
    } else if at == EMPTY_SLOT as usize {
        Scan::EmptySlot
    } else {
        Scan::NotFound
    };
    after_scan(scan, region)
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
    // The index (`crate::descriptor_index`) against the vendor's scan; here, not beside the
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
