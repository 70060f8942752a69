//! Carving the look-alike libraries: every build ({full, front} x {-O2, -Os} x {unstripped,
//! `strip --strip-all`}) gives exactly the generator's ground truth.

mod common;

use std::collections::BTreeMap;

use nrtucode_carve::carve_bytes;
use nrtucode_carve::{Found, NamedBy, check_dir, compare, write_blob_dir};
use nrtucode_facts::Manifest;
use nrtucode_lookalike::{LibraryBuild, OptLevel, ground_truth};

/// The manifest rows with `blob_va` cleared (addresses differ between builds).
fn rows_without_addresses(m: &Manifest) -> Vec<nrtucode_facts::ManifestRow> {
    m.rows
        .iter()
        .cloned()
        .map(|mut r| {
            r.blob_va = 0;
            r
        })
        .collect()
}

#[test]
fn every_lookalike_carves_to_the_ground_truth() {
    for lib in common::libs() {
        let data = lib.bytes();
        let carve = carve_bytes(&data, "lib.so").unwrap_or_else(|e| panic!("{}: {e}", lib.label()));
        let truth: BTreeMap<&str, (usize, String)> = ground_truth(lib.variant)
            .iter()
            .map(|t| (t.getter.symbol, (t.getter.size, t.sha256.clone())))
            .collect();
        let carved: BTreeMap<&str, (usize, String)> = carve
            .getters
            .iter()
            .map(|g| (g.name.symbol.as_str(), (g.size as usize, g.sha256.clone())))
            .collect();
        assert_eq!(carved, truth, "{}", lib.label());
        // The facts agree with every carved size, and each carved blob is the fixture.
        assert_eq!(
            compare(&carve.header, &carve.getters),
            vec![],
            "{}",
            lib.label()
        );
        common::assert_blobs_are_the_truth(&carve, &data, &ground_truth(lib.variant), &lib.label());
        let how = if lib.stripped {
            Found::Resolver("nrtucode_get_memory_image")
        } else {
            Found::Symbol
        };
        assert_eq!(carve.tables.image_list_found, how, "{}", lib.label());
        let named = if lib.stripped {
            NamedBy::Position
        } else {
            NamedBy::Symbol
        };
        assert!(
            carve.getters.iter().all(|g| g.named_by == named),
            "{}",
            lib.label()
        );
        assert!(carve.notes.is_empty(), "{}: {:?}", lib.label(), carve.notes);
    }
}

#[test]
fn stripped_and_unstripped_carves_give_the_same_rows() {
    for variant in LibraryBuild::ALL {
        for opt in [OptLevel::O2, OptLevel::Os] {
            let a = carve_bytes(&common::lib(variant, opt, false).bytes(), "x").unwrap();
            let b = carve_bytes(&common::lib(variant, opt, true).bytes(), "x").unwrap();
            assert_eq!(a.tables.image_list, b.tables.image_list);
            assert_eq!(a.tables.hwdecode_list, b.tables.hwdecode_list);
            let (ma, mb) = (a.manifest(), b.manifest());
            assert_eq!(ma.rows, mb.rows, "{variant:?} {opt:?}");
            // Only provenance differs: strip changes the file, not the build ID.
            assert_ne!(ma.header.source_sha256, mb.header.source_sha256);
            assert_eq!(ma.header.build_id, mb.header.build_id);
            assert_ne!(ma.header.build_id, "unknown");
        }
    }
}

#[test]
fn optimisation_level_changes_addresses_not_blobs() {
    for variant in LibraryBuild::ALL {
        let a = carve_bytes(&common::lib(variant, OptLevel::O2, false).bytes(), "x").unwrap();
        let b = carve_bytes(&common::lib(variant, OptLevel::Os, false).bytes(), "x").unwrap();
        assert_eq!(
            rows_without_addresses(&a.manifest()),
            rows_without_addresses(&b.manifest())
        );
    }
}

#[test]
fn front_library_null_getters_are_the_unlinked_ones() {
    let carve = carve_bytes(
        &common::lib(LibraryBuild::Front, OptLevel::O2, true).bytes(),
        "x",
    )
    .unwrap();
    assert!(
        carve
            .null_getters
            .iter()
            .any(|s| s == "CAYMAN_NX_ACT_DEBUG_IRAM_get")
    );
    assert!(
        carve
            .null_getters
            .iter()
            .any(|s| s.starts_with("MAVERICK_"))
    );
    assert!(!carve.getters.iter().any(|g| g.name.gen_name == "MAVERICK"));
    assert!(
        !carve
            .null_getters
            .iter()
            .any(|s| s == "CAYMAN_NX_ACT_PERF_IRAM_get")
    );
    // 12 profiler slots x 2 kinds.
    assert_eq!(
        carve
            .getters
            .iter()
            .filter(|g| g.name.variant == "PROF")
            .count(),
        24
    );
}

#[test]
fn blob_directories_are_deterministic_and_verify() {
    let lib = common::lib(LibraryBuild::Full, OptLevel::Os, true);
    let data = lib.bytes();
    let carve = carve_bytes(&data, "libnrtucode_internal.so").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    write_blob_dir(&carve, &data, &a).unwrap();
    // An earlier carve (of another library) is replaced whole: none of its blobs remain.
    let tiny = nrtucode_test_elf::TinyElf::default().build();
    let earlier = carve_bytes(&tiny, "tiny.so").unwrap();
    write_blob_dir(&earlier, &tiny, &b).unwrap();
    assert_eq!(
        std::fs::read_dir(&b).unwrap().count(),
        earlier.distinct_blobs() + 1
    );
    let again = carve_bytes(&data, "libnrtucode_internal.so").unwrap();
    write_blob_dir(&again, &data, &b).unwrap();
    let listing = |d: &std::path::Path| {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(listing(&a), listing(&b));
    assert_eq!(listing(&a).len(), carve.distinct_blobs() + 1);
    let report = check_dir(&a);
    assert!(report.is_ok(), "{:?}", report.problems);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
}
