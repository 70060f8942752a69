//! Hand-built shared objects of a few KB (`carve::tiny_elf`): every getter shape the
//! interpreter must follow, both hash styles, RELA and RELR, tables found by symbol and through
//! the resolvers (plain and large code model), with and without a section header table. Each
//! carves to exactly the blobs it was built with, and the program-header path gives the same
//! manifest rows as the section-header path.

use nrtucode_carve::carve_bytes;
use nrtucode_carve::{CarveError, Found};
use nrtucode_facts::ManifestRow;
use nrtucode_test_elf::{
    GetterShape, HashStyle, TinyElf, blob, getter_symbol, remove_section_headers,
};

fn variants() -> Vec<TinyElf> {
    let mut out = Vec::new();
    for (i, shape) in GetterShape::ALL.iter().enumerate() {
        for hash in [HashStyle::Gnu, HashStyle::Sysv] {
            for (relr, table_symbols, large) in [
                (false, true, false),
                (true, false, false),
                (false, false, true),
            ] {
                // Each region gets a different shape so that every shape meets every region.
                let mut getters = [*shape; 4];
                getters[1] = GetterShape::ALL[(i + 1) % GetterShape::ALL.len()];
                out.push(TinyElf {
                    getters,
                    table_symbols,
                    large_model_resolvers: large,
                    hash,
                    relr,
                    section_headers: true,
                });
            }
        }
    }
    out
}

/// Carves `data` and checks the four getters against what the builder put in.
fn check(label: &str, data: &[u8], spec: &TinyElf) -> Vec<ManifestRow> {
    let carve = carve_bytes(data, "tiny.so").unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(carve.getters.len(), 4, "{label}");
    for region in 0..4 {
        let g = carve
            .getters
            .iter()
            .find(|g| g.name.symbol == getter_symbol(region))
            .unwrap_or_else(|| panic!("{label}: no {}", getter_symbol(region)));
        assert_eq!(
            carve.blob(data, g).unwrap(),
            &blob(region)[..],
            "{label} {region}"
        );
    }
    let how = if spec.table_symbols {
        Found::Symbol
    } else {
        Found::Resolver("nrtucode_get_memory_image")
    };
    assert_eq!(carve.tables.image_list_found, how, "{label}");
    carve.manifest().rows
}

#[test]
fn every_shape_carves_with_and_without_section_headers() {
    for spec in variants() {
        let label = format!("{spec:?}");
        let data = spec.build();
        assert!(data.len() < 8192, "{label}: {} bytes", data.len());
        let with = check(&label, &data, &spec);
        let mut bare = data.clone();
        assert!(remove_section_headers(&mut bare));
        let without = check(&format!("{label} without section headers"), &bare, &spec);
        assert_eq!(with, without, "{label}");
        let built_bare = TinyElf {
            section_headers: false,
            ..spec.clone()
        }
        .build();
        assert_eq!(check(&label, &built_bare, &spec), with, "{label}");
    }
}

#[test]
fn the_build_id_comes_from_pt_note_without_section_headers() {
    let mut data = TinyElf::default().build();
    let with = carve_bytes(&data, "t.so").unwrap().header.build_id;
    remove_section_headers(&mut data);
    let without = carve_bytes(&data, "t.so").unwrap();
    assert_eq!(with, "b1d05eed00112233");
    assert_eq!(without.header.build_id, with);
    assert!(
        without.notes.iter().any(|n| n.contains("program headers")),
        "{:?}",
        without.notes
    );
}

#[test]
fn a_broken_dynamic_section_is_a_typed_error() {
    let spec = TinyElf {
        section_headers: false,
        ..TinyElf::default()
    };
    let data = spec.build();
    // DT_SYMTAB (the first entry of .dynamic at 0x1000) pointing outside every segment.
    let mut bad = data.clone();
    bad[0x1008..0x1010].copy_from_slice(&0x7fff_0000u64.to_le_bytes());
    let e = carve_bytes(&bad, "t.so").unwrap_err();
    assert!(
        matches!(&e, CarveError::Unmapped { what, .. } if what == "DT_SYMTAB"),
        "{e}"
    );
    // Without any hash table the symbol count is unknown.
    let mut bad = data.clone();
    for entry in (0x1000..0x1100).step_by(16) {
        let tag = u64::from_le_bytes(bad[entry..entry + 8].try_into().unwrap());
        if tag == 0x6fff_fef5 {
            bad[entry..entry + 8].copy_from_slice(&0x6fff_fef0u64.to_le_bytes());
        }
    }
    let e = carve_bytes(&bad, "t.so").unwrap_err().to_string();
    assert!(e.contains("symbol count is unknown"), "{e}");
    // A getter that calls something other than a profiling hook names the call.
    let spec = TinyElf {
        getters: [GetterShape::Fentry; 4],
        ..TinyElf::default()
    };
    let mut data = spec.build();
    let at = data.windows(11).position(|w| w == b"__fentry__\0").unwrap();
    data[at..at + 10].copy_from_slice(b"__mallocX_");
    let e = carve_bytes(&data, "t.so").unwrap_err().to_string();
    assert!(e.contains("calls __mallocX_") && e.contains("call"), "{e}");
}

/// A carve whose [`nrtucode_carve::Cancel`] is set leaves nothing behind (not even the parent
/// directories it would have made) and fails saying so; the same carve without the token
/// writes the directory.
#[test]
fn a_cancelled_carve_writes_nothing() {
    use nrtucode_carve::{Cancel, FileError, PublishError, carve_into_dir_cancellable};
    let tmp = tempfile::tempdir().unwrap();
    let lib = tmp.path().join("libnrtucode.so");
    std::fs::write(&lib, TinyElf::default().build()).unwrap();
    let out = tmp.path().join("a/blobs");
    let cancel = Cancel::new();
    cancel.cancel();
    let e = carve_into_dir_cancellable(&lib, &out, &cancel).unwrap_err();
    assert!(
        matches!(e, FileError::Publish(PublishError::Cancelled { .. })),
        "{e}"
    );
    assert!(!tmp.path().join("a").exists(), "{e}");
    let carved = carve_into_dir_cancellable(&lib, &out, &Cancel::new()).unwrap();
    assert!(!carved.0.getters.is_empty());
    assert!(out.join("manifest.tsv").is_file());
}
