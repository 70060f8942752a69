//! The generated const tables (`src/catalog/generated.rs`) against the fact TSVs, read
//! independently of the generator.

use std::collections::HashSet;

use crate::common::{Model, embedded};
use nrtucode::catalog::{
    DESCRIPTOR_COUNT, DISTINCT_BLOB_COUNT, EMBEDDED_BLOB_BYTES, PROFILER_SLOTS, image_entries,
    prof_entries,
};
use nrtucode::catalog::{HWDECODE_LIST, IMAGE_LIST};
use nrtucode::table::BlobState;
use nrtucode::{ImageIndex, ProfKind, Region};
use nrtucode_facts::{getters, hwdecode_slots, image_slots};

#[test]
fn every_slot_has_the_vendor_identity_and_key_order() {
    let facts = image_slots();
    assert_eq!(IMAGE_LIST.len(), facts.len());
    for (slot, fact) in IMAGE_LIST.iter().zip(&facts) {
        match (slot.id(), fact.gen_name) {
            (None, None) => assert!(slot.descriptors().is_empty()),
            (Some(id), Some(generation)) => {
                assert_eq!(id.generation.name(), generation, "slot {}", fact.idx);
                assert_eq!(Some(id.class.name()), fact.class, "slot {}", fact.idx);
                assert_eq!(Some(id.engine.name()), fact.engine, "slot {}", fact.idx);
            }
            other => panic!("slot {}: {other:?}", fact.idx),
        }
        let keys: Vec<u32> = slot
            .descriptors()
            .iter()
            .map(|d| d.flavor().raw() as u32)
            .collect();
        assert_eq!(keys, fact.flavor_keys, "slot {}", fact.idx);
    }
    assert_eq!(DESCRIPTOR_COUNT, 102);
}

#[test]
fn every_getter_matches_its_facts_row_and_feature_selection() {
    let model = Model::new();
    let mut seen = 0;
    for entry in image_entries() {
        let key = entry.flavor.raw() as u32;
        let getter = model.image_getter(entry.index.as_usize(), key, entry.region as usize);
        let expected = if !embedded(getter) {
            BlobState::Null
        } else if getter.real {
            BlobState::Real(getter.size)
        } else {
            BlobState::Cursor
        };
        assert_eq!(BlobState::of(entry.blob), expected, "{}", getter.symbol);
        seen += 1;
    }
    assert_eq!(seen, 102 * 4);
}

#[test]
#[cfg_attr(
    not(nrtucode_fixtures),
    ignore = "a carved build is checked against its manifest by the build script and `nrtucode check`"
)]
fn fixture_build_embeds_exactly_the_generated_bytes() {
    let model = Model::new();
    let mut checked = HashSet::new();
    for entry in image_entries() {
        let Some(bytes) = entry.blob else { continue };
        let getter = model.image_getter(
            entry.index.as_usize(),
            entry.flavor.raw() as u32,
            entry.region as usize,
        );
        if checked.insert(getter.symbol) {
            assert!(
                bytes == nrtucode_facts::fixture_bytes(getter).as_slice(),
                "{}",
                getter.symbol
            );
        }
    }
    let expected = getters()
        .iter()
        .filter(|g| g.is_resolver_reachable() && !g.is_prof() && embedded(g))
        .count();
    assert_eq!(checked.len(), expected);
}

#[test]
fn hwdecode_list_matches_the_facts() {
    let facts = hwdecode_slots();
    let all = getters();
    for entry in prof_entries() {
        let fact = &facts[entry.index.as_usize()];
        let symbol = match entry.kind {
            ProfKind::Cam => fact.cam,
            ProfKind::Table => fact.table,
        };
        let getter = symbol.map(|s| all.iter().find(|g| g.symbol == s).expect("in the facts"));
        match getter {
            Some(g) if embedded(g) => {
                let bytes = entry.blob.expect("populated");
                assert_eq!(bytes.len(), g.size);
                if cfg!(nrtucode_fixtures) {
                    assert!(bytes == nrtucode_facts::fixture_bytes(g).as_slice());
                }
            }
            _ => assert_eq!(entry.blob, None, "slot {}", fact.idx),
        }
    }
    let populated: Vec<u8> = facts
        .iter()
        .filter(|f| f.cam.is_some())
        .map(|f| f.idx as u8)
        .collect();
    assert_eq!(populated, PROFILER_SLOTS);
    assert_eq!(HWDECODE_LIST.len(), 38);
}

#[test]
fn twin_sp_slots_alias_the_same_blobs() {
    for (a, b) in ImageIndex::TWINS {
        let (a, b) = (&IMAGE_LIST[a.as_usize()], &IMAGE_LIST[b.as_usize()]);
        assert_eq!(a.id(), b.id());
        for (da, db) in a.descriptors().iter().zip(b.descriptors()) {
            for region in Region::ALL {
                let (x, y) = (da.region(region), db.region(region));
                assert_eq!(x.map(<[u8]>::as_ptr), y.map(<[u8]>::as_ptr));
                assert_eq!(x.map(<[u8]>::len), y.map(<[u8]>::len));
            }
        }
    }
}

#[test]
fn second_q7_pool_slots_alias_the_first_slots_perf_debug_test() {
    for (first, twin) in [(13, 14), (21, 22), (29, 30)] {
        for desc in IMAGE_LIST[twin].descriptors() {
            let original = IMAGE_LIST[first]
                .find_raw(desc.flavor().raw())
                .expect("same key in the first slot");
            for region in Region::ALL {
                assert_eq!(
                    desc.region(region).map(<[u8]>::as_ptr),
                    original.region(region).map(<[u8]>::as_ptr),
                    "slot {twin} {:?} {region:?}",
                    desc.flavor()
                );
            }
        }
    }
}

#[test]
fn identical_contents_are_embedded_once() {
    // Distinct real blob contents according to the facts: memory images are all distinct in
    // the fixture set; profiler blobs are identical where their sha256 prefixes are.
    let all = getters();
    let selected: Vec<_> = all
        .iter()
        .filter(|g| g.is_resolver_reachable() && g.real && embedded(g))
        .collect();
    let images = selected.iter().filter(|g| !g.is_prof()).count();
    let mut prof_contents = HashSet::new();
    for g in selected.iter().filter(|g| g.is_prof()) {
        let facts = nrtucode_facts::facts::prof_blob(g.gen_name, g.engine).expect("facts");
        let prefix = if g.region == "CAM" {
            facts.cam_sha256_prefix
        } else {
            facts.table_sha256_prefix
        };
        prof_contents.insert((g.region, prefix));
    }
    if cfg!(nrtucode_fixtures) {
        assert_eq!(DISTINCT_BLOB_COUNT, images + prof_contents.len());
    } else {
        // Both constants are 0 in a build that embeds no blob (`--no-default-features
        // --features partition`), where clippy calls the comparisons always true.
        #[allow(clippy::absurd_extreme_comparisons)]
        let within = DISTINCT_BLOB_COUNT <= images + prof_contents.len();
        assert!(within);
    }
    let total: usize = selected.iter().map(|g| g.size).sum();
    #[allow(clippy::absurd_extreme_comparisons)]
    let bytes_within = EMBEDDED_BLOB_BYTES <= total;
    assert!(bytes_within);
    // The pointers agree: identical CAYMAN CAM blobs share one address.
    if cfg!(all(feature = "gen-cayman", nrtucode_fixtures)) {
        let act = nrtucode::resolve_hwdecode(ImageIndex::CAYMAN_NX_ACT, ProfKind::Cam).unwrap();
        let pe = nrtucode::resolve_hwdecode(ImageIndex::CAYMAN_NX_PE, ProfKind::Cam).unwrap();
        assert_eq!(act.as_ptr(), pe.as_ptr());
    }
}

#[test]
fn debug_output_does_not_dump_blobs() {
    let text = format!("{:?}", IMAGE_LIST[7].descriptors()[0]);
    assert!(text.len() < 200, "{text}");
    assert!(text.contains("bytes>") || text.contains("NULL"), "{text}");
}

#[test]
fn facts_spell_regions_and_generations_as_the_core_names_them() {
    // The facts crate names regions and generations as the TSVs spell them; the core's enums
    // are the one name table everything else uses. They must agree, in order.
    let core_regions: Vec<&str> = Region::ALL.iter().map(|r| r.name()).collect();
    assert_eq!(core_regions, nrtucode_facts::facts::REGIONS);
    let core_generations: Vec<&str> = nrtucode::Generation::ALL.iter().map(|g| g.name()).collect();
    let fact_generations: Vec<&str> = nrtucode_facts::facts::GENERATIONS
        .iter()
        .map(|(name, _)| *name)
        .collect();
    assert_eq!(core_generations, fact_generations);
}
