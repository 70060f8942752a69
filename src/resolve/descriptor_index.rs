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
