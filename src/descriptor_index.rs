//! The lookup index of the image resolver, computed at compile time from [`IMAGE_LIST`].
//!
//! The vendor finds a descriptor by a linear scan of the slot's flavor keys. The answer of that
//! scan depends only on the slot and the raw flavor, so it is precomputed: [`DESCRIPTOR_AT`]
//! maps (slot, raw flavor) to a descriptor number (or to "empty slot" / "not found"), and
//! [`DESCRIPTOR_REGIONS`] holds every descriptor's four getters. A lookup is two bounds checks
//! and two loads instead of a scan with data-dependent branches, for 760 bytes of index; the
//! answers and the order of the checks stay the vendor's (tested against the scan below).

use crate::ImageIndex;
use crate::catalog::{DESCRIPTOR_COUNT, IMAGE_LIST};
use crate::table::Regions;

/// Raw flavors below this can be keys (the largest key is 19); every other raw flavor, negative
/// ones included, finds no descriptor, like flavor 0 (never a key: 0 is resolved before).
pub(crate) const FLAVOR_SPAN: usize = 20;
/// [`DESCRIPTOR_AT`] entry of the empty slot: the vendor answers code 2 before any scan.
pub(crate) const EMPTY_SLOT: u8 = u8::MAX;
/// [`DESCRIPTOR_AT`] entry of a flavor with no descriptor in a populated slot: code 2.
pub(crate) const NOT_FOUND: u8 = u8::MAX - 1;

static_assertions::const_assert!(DESCRIPTOR_COUNT < NOT_FOUND as usize);

/// The four getters of every descriptor, slot after slot in the vendor's scan order (twin slots
/// repeat the same getters, so they keep returning the same pointers).
pub(crate) static DESCRIPTOR_REGIONS: [Regions; DESCRIPTOR_COUNT] = {
    let mut all = [[None; 4]; DESCRIPTOR_COUNT];
    let mut n = 0;
    let mut slot = 0;
    while slot < ImageIndex::COUNT {
        let descriptors = IMAGE_LIST[slot].descriptors();
        let mut d = 0;
        while d < descriptors.len() {
            all[n] = *descriptors[d].regions();
            n += 1;
            d += 1;
        }
        slot += 1;
    }
    all
};

/// `DESCRIPTOR_AT[idx][flavor]`: the number in [`DESCRIPTOR_REGIONS`] of the descriptor the
/// vendor's scan finds in slot `idx` for the raw `flavor` (below [`FLAVOR_SPAN`]; column 0
/// answers every other raw flavor), or [`EMPTY_SLOT`] / [`NOT_FOUND`].
pub(crate) static DESCRIPTOR_AT: [[u8; FLAVOR_SPAN]; ImageIndex::COUNT] = {
    let mut index = [[NOT_FOUND; FLAVOR_SPAN]; ImageIndex::COUNT];
    let mut first = 0; // number of the slot's first descriptor
    let mut slot = 0;
    while slot < ImageIndex::COUNT {
        let descriptors = IMAGE_LIST[slot].descriptors();
        let mut flavor = 0;
        while flavor < FLAVOR_SPAN {
            index[slot][flavor] = if descriptors.is_empty() {
                EMPTY_SLOT
            } else {
                // The vendor's scan: the first descriptor whose key equals the flavor.
                let mut at = NOT_FOUND;
                let mut d = descriptors.len();
                while d > 0 {
                    d -= 1;
                    if descriptors[d].flavor() as usize == flavor {
                        at = (first + d) as u8;
                    }
                }
                at
            };
            flavor += 1;
        }
        // Flavor 0 is never a key, so column 0 holds the answer for every raw flavor outside
        // the span.
        assert!(index[slot][0] == EMPTY_SLOT || index[slot][0] == NOT_FOUND);
        first += descriptors.len();
        slot += 1;
    }
    index
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Region;
    use crate::{ResolveErr, get_memory_image_const};

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
