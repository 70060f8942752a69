//! Boundary cursors carry the vendor's address: every one of the facts' 161 cursor getters
//! resolves to an empty slice whose pointer is the place its address in `crates/nrtucode-facts/tables/getters.tsv`
//! names, relative to the same image's other blobs (one past the end of DRAM, one past the end
//! of SRAM, or the start of DRAM), never a placeholder.

use std::collections::BTreeMap;

use crate::common::{embedded, model};
use nrtucode::{ImageIndex, NoEnv, get_memory_image};
use nrtucode_facts::{Getter, image_slots};

/// Where a cursor's address lies relative to its image's blobs, per the facts, in the order the
/// issue lists them (the one SRAM cursor that is also the start of EXTRAM counts as the end of
/// DRAM).
fn place(cursor: &Getter, dram: &Getter, sram: &Getter) -> Option<(&'static str, i32)> {
    let end = |g: &Getter| g.blob_va + g.size as u64;
    if dram.size > 0 && cursor.blob_va == end(dram) {
        Some(("end of DRAM", 1))
    } else if sram.size > 0 && cursor.blob_va == end(sram) {
        Some(("end of SRAM", 2))
    } else if dram.size > 0 && cursor.blob_va == dram.blob_va {
        Some(("start of DRAM", 1))
    } else {
        None
    }
}

#[test]
fn every_cursor_points_where_the_facts_say() {
    let model = model();
    // Cursor symbol -> the place it resolved to (twin slots resolve the same getter twice).
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for slot in image_slots() {
        for &key in &slot.flavor_keys {
            let idx = slot.idx as usize;
            let dram = model.image_getter(idx, key, 1);
            let sram = model.image_getter(idx, key, 2);
            for region in 0..4 {
                let cursor = model.image_getter(idx, key, region);
                if cursor.real || !embedded(cursor) {
                    continue;
                }
                let what = cursor.symbol;
                let answer = get_memory_image(slot.idx, region as i32, key as i32, &NoEnv)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(answer.is_empty(), "{what}");
                let (name, neighbour_region) =
                    place(cursor, dram, sram).unwrap_or_else(|| panic!("{what}: no place"));
                let neighbour = get_memory_image(slot.idx, neighbour_region, key as i32, &NoEnv)
                    .unwrap_or_else(|e| panic!("{what}: neighbour {e}"));
                assert!(!neighbour.is_empty(), "{what}: the neighbour is real");
                let expected = if name.starts_with("end") {
                    neighbour.as_ptr_range().end
                } else {
                    neighbour.as_ptr()
                };
                assert_eq!(answer.as_ptr(), expected, "{what}: {name}");
                assert_ne!(
                    answer.as_ptr(),
                    core::ptr::NonNull::<u8>::dangling().as_ptr()
                );
                seen.insert(what, name);
            }
        }
    }
    let all_embedded = model_cursors().iter().all(embedded);
    if all_embedded {
        // Every cursor of the facts is reachable from the image list and was checked.
        assert_eq!(seen.len(), 161);
        let count = |name: &str| seen.values().filter(|v| **v == name).count();
        assert_eq!(count("end of DRAM"), 151);
        assert_eq!(count("end of SRAM"), 5);
        assert_eq!(count("start of DRAM"), 5);
    } else {
        assert_eq!(
            seen.len(),
            model_cursors().iter().filter(|g| embedded(g)).count()
        );
    }
}

fn model_cursors() -> Vec<Getter> {
    nrtucode_facts::getters()
        .into_iter()
        .filter(|g| g.is_resolver_reachable() && !g.real)
        .collect()
}

#[test]
fn twin_slots_share_cursor_pointers() {
    for (a, b) in ImageIndex::TWINS.map(|(a, b)| (a.raw(), b.raw())) {
        for region in 0..4 {
            for flavor in [1, 2, 3] {
                let first = get_memory_image(a, region, flavor, &NoEnv).map(<[u8]>::as_ptr);
                let second = get_memory_image(b, region, flavor, &NoEnv).map(<[u8]>::as_ptr);
                assert_eq!(first, second, "{a}/{b} region {region} flavor {flavor}");
            }
        }
    }
}
