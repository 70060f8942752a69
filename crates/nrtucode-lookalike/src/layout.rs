//! The look-alike's contents as data: which blobs, getter stubs, descriptors and table entries a
//! [`LibraryBuild`] has, in the vendor's order. The C emitter ([`crate::generate_c`]) and the ground
//! truth ([`crate::ground_truth`]) both read this layout.

use nrtucode_facts::facts::{REGIONS, variant_for_key};
use nrtucode_facts::{Getter, fixture_bytes, getters, hwdecode_slots, image_slots};

use crate::LibraryBuild;

/// One blob array of the look-alike (one per linked real getter; the vendor never shares one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobLayout {
    /// The C array name, `blob_<STEM>`.
    pub array: String,
    /// The getter that returns the whole array.
    pub getter: Getter,
    /// The fixture bytes.
    pub bytes: Vec<u8>,
}

/// One getter stub of the look-alike.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GetterLayout {
    /// The facts row (its `symbol` is the C function name).
    pub getter: Getter,
    /// The blob array the stub points into, `None` only if the library has no blob at all.
    pub array: Option<String>,
    /// Byte offset into `array` (0, or the array length for an end-of-blob cursor).
    pub offset: usize,
    /// The size the stub writes (the size in the facts).
    pub size: usize,
}

/// One flavor descriptor: a key and the four region getters (`None` = NULL).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DescLayout {
    /// The flavor key (1/2/3 or 17/18/19).
    pub flavor_key: u32,
    /// IRAM, DRAM, SRAM, EXTRAM getter symbols.
    pub getters: [Option<&'static str>; 4],
}

/// One `image_list` slot: its descriptors in vendor order (empty for slot 36).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotLayout {
    /// Flat index.
    pub idx: u32,
    /// The descriptors.
    pub descs: Vec<DescLayout>,
}

/// Everything a look-alike library contains.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Which vendor library it mirrors.
    pub library: LibraryBuild,
    /// Blob arrays in vendor `.rodata` order.
    pub blobs: Vec<BlobLayout>,
    /// Linked getters in vendor `.text` order.
    pub getters: Vec<GetterLayout>,
    /// The 38 `image_list` slots.
    pub image_list: Vec<SlotLayout>,
    /// The 38 `hwdecode_table_list` entries: (PROF_CAM, PROF_TABLE) getter symbols.
    pub hwdecode: Vec<[Option<&'static str>; 2]>,
}

fn blob_array_name(getter: &Getter) -> String {
    format!("blob_{}", getter.stem())
}

/// Builds the layout of a library from the facts.
pub fn layout(library: LibraryBuild) -> Layout {
    let mut linked: Vec<Getter> = getters().into_iter().filter(|g| library.links(g)).collect();
    linked.sort_by_key(|g| g.accessor_va);

    let mut reals: Vec<&Getter> = linked.iter().filter(|g| g.real && g.size > 0).collect();
    reals.sort_by_key(|g| g.blob_va);
    let blobs: Vec<BlobLayout> = reals
        .iter()
        .map(|g| BlobLayout {
            array: blob_array_name(g),
            getter: (*g).clone(),
            bytes: fixture_bytes(g),
        })
        .collect();

    let getter_layouts = linked
        .iter()
        .map(|g| {
            let (array, offset) = if g.real && g.size > 0 {
                (Some(blob_array_name(g)), 0)
            } else {
                cursor_target(g, &blobs)
            };
            GetterLayout {
                getter: g.clone(),
                array,
                offset,
                size: g.size,
            }
        })
        .collect();

    let is_linked = |sym: &str| linked.iter().any(|g| g.symbol == sym);
    let image_list = image_slots()
        .into_iter()
        .map(|slot| {
            let descs = match (slot.gen_name, slot.class, slot.engine) {
                (Some(gen_name), Some(class), Some(engine)) => slot
                    .flavor_keys
                    .iter()
                    .map(|&key| {
                        let variant_name = variant_for_key(gen_name, key);
                        let getters = REGIONS.map(|region| {
                            let row = linked.iter().find(|g| {
                                g.gen_name == gen_name
                                    && g.class == class
                                    && g.engine == engine
                                    && Some(g.variant) == variant_name
                                    && g.region == region
                            });
                            row.map(|g| g.symbol)
                        });
                        DescLayout {
                            flavor_key: key,
                            getters,
                        }
                    })
                    .collect(),
                _ => Vec::new(),
            };
            SlotLayout {
                idx: slot.idx,
                descs,
            }
        })
        .collect();

    let hwdecode = hwdecode_slots()
        .into_iter()
        .map(|s| [s.cam, s.table].map(|sym| sym.filter(|sym| is_linked(sym))))
        .collect();

    Layout {
        library,
        blobs,
        getters: getter_layouts,
        image_list,
        hwdecode,
    }
}

/// Where a boundary cursor points. In the vendor binary its address is both a place in its own
/// image (one past the end of a region's blob, or the start of one) and often the start of
/// the next image's blob; separate C arrays are not adjacent, so the look-alike keeps the place
/// in the cursor's own image: the same image's blob that ends there, else the one that starts
/// there. Otherwise: any blob that starts there, else one that ends there, else (its
/// neighbour is not linked in this library) the nearest blob boundary of the library.
fn cursor_target(cursor: &Getter, blobs: &[BlobLayout]) -> (Option<String>, usize) {
    let va = cursor.blob_va;
    let same_image = |b: &&BlobLayout| {
        let g = &b.getter;
        (g.gen_name, g.class, g.engine, g.variant)
            == (cursor.gen_name, cursor.class, cursor.engine, cursor.variant)
    };
    if let Some(b) = blobs
        .iter()
        .filter(same_image)
        .find(|b| b.getter.blob_va + b.getter.size as u64 == va)
    {
        return (Some(b.array.clone()), b.bytes.len());
    }
    if let Some(b) = blobs
        .iter()
        .filter(same_image)
        .find(|b| b.getter.blob_va == va)
    {
        return (Some(b.array.clone()), 0);
    }
    if let Some(b) = blobs.iter().find(|b| b.getter.blob_va == va) {
        return (Some(b.array.clone()), 0);
    }
    if let Some(b) = blobs
        .iter()
        .find(|b| b.getter.blob_va + b.getter.size as u64 == va)
    {
        return (Some(b.array.clone()), b.bytes.len());
    }
    let nearest = blobs
        .iter()
        .flat_map(|b| {
            let start = b.getter.blob_va;
            let end = start + b.getter.size as u64;
            [
                (start.abs_diff(va), b, 0),
                (end.abs_diff(va), b, b.bytes.len()),
            ]
        })
        .min_by_key(|(distance, _, _)| *distance);
    match nearest {
        Some((_, b, offset)) => (Some(b.array.clone()), offset),
        None => (None, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrtucode::ImageIndex;

    #[test]
    fn full_layout_has_the_vendor_shape() {
        let m = layout(LibraryBuild::Full);
        assert_eq!(m.getters.len(), 354);
        assert_eq!(m.blobs.len(), 193);
        assert_eq!(m.image_list.len(), ImageIndex::COUNT);
        assert_eq!(m.hwdecode.len(), ImageIndex::COUNT);
        let descs: usize = m.image_list.iter().map(|s| s.descs.len()).sum();
        assert_eq!(descs, 102);
        let refs: usize = m
            .image_list
            .iter()
            .flat_map(|s| &s.descs)
            .map(|d| d.getters.iter().filter(|g| g.is_some()).count())
            .sum();
        assert_eq!(refs, 408, "every descriptor has four getters");
        assert_eq!(m.hwdecode.iter().filter(|e| e[0].is_some()).count(), 15);
        assert!(m.image_list[36].descs.is_empty());
        assert!(m.getters.iter().all(|g| g.array.is_some()));
    }

    #[test]
    fn sp_slots_share_getters_and_second_q7_slot_uses_base_getters() {
        let m = layout(LibraryBuild::Full);
        for (a, b) in ImageIndex::TWINS.map(|(a, b)| (a.as_usize(), b.as_usize())) {
            assert_eq!(m.image_list[a].descs, m.image_list[b].descs, "{a}/{b}");
        }
        for (first, second) in [(13, 14), (21, 22), (29, 30)] {
            for d in &m.image_list[second].descs {
                let same = m.image_list[first]
                    .descs
                    .iter()
                    .find(|x| x.flavor_key == d.flavor_key)
                    .expect("key in first Q7 slot");
                assert_eq!(same.getters, d.getters);
            }
        }
        assert_eq!(
            m.image_list[7].descs[0].getters[0],
            Some("CAYMAN_NX_ACT_PERF_IRAM_get")
        );
    }

    #[test]
    fn front_layout_links_only_perf_dkl_perf_and_no_maverick() {
        let m = layout(LibraryBuild::Front);
        assert!(m.getters.iter().all(|g| g.getter.gen_name != "MAVERICK"));
        assert!(
            m.getters
                .iter()
                .all(|g| matches!(g.getter.variant, "RELEASE" | "PERF" | "DKL_PERF" | "PROF"))
        );
        let populated: Vec<usize> = (0..ImageIndex::COUNT)
            .filter(|&i| m.hwdecode[i][0].is_some())
            .collect();
        let expected: Vec<usize> = (7..=10).chain(15..=18).chain(23..=26).collect();
        assert_eq!(populated, expected);
        for slot in &m.image_list {
            for d in &slot.descs {
                let linked = d.getters.iter().any(|g| g.is_some());
                let gen_maverick = slot.idx >= 31;
                assert_eq!(
                    linked,
                    !gen_maverick && matches!(d.flavor_key, 1 | 17),
                    "{} {}",
                    slot.idx,
                    d.flavor_key
                );
            }
        }
        // Descriptor counts stay the vendor's in the front library too.
        let descs: usize = m.image_list.iter().map(|s| s.descs.len()).sum();
        assert_eq!(descs, 102);
    }

    #[test]
    fn cursors_point_at_a_neighbouring_blob() {
        for library in LibraryBuild::ALL {
            let m = layout(library);
            for gm in m.getters.iter().filter(|g| !g.getter.real) {
                let array = gm.array.as_deref().expect("cursor target");
                let blob = m.blobs.iter().find(|b| b.array == array).expect("blob");
                assert!(gm.offset == 0 || gm.offset == blob.bytes.len());
                assert_eq!(gm.size, 0);
            }
        }
    }
}
