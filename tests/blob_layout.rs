//! What a bare-metal loader relies on besides the answers: every embedded blob starts on a
//! `BLOB_ALIGN` boundary, sits alone in its `.rodata.nrtucode.<STEM>` input section on ELF, and
//! no `Debug` output of a public type dumps blob bytes.

use std::collections::BTreeSet;

mod nested_cargo;

use nrtucode::catalog::{BLOB_ALIGN, BLOB_SECTION_PREFIX, HWDECODE_LIST, IMAGE_LIST};
use nrtucode::catalog::{DISTINCT_BLOB_COUNT, EMBEDDED_BLOB_BYTES, image_entries, prof_entries};
use nrtucode::prof::{CamView, TableView};

/// Every real (non-empty) blob the tables name, with its address.
fn real_blobs() -> Vec<&'static [u8]> {
    image_entries()
        .filter_map(|e| e.blob)
        .chain(prof_entries().filter_map(|e| e.blob))
        .filter(|b| !b.is_empty())
        .collect()
}

#[test]
fn every_blob_is_aligned_to_blob_align() {
    assert_eq!(BLOB_ALIGN, 16);
    let blobs = real_blobs();
    if DISTINCT_BLOB_COUNT != 0 {
        assert!(!blobs.is_empty());
    }
    for blob in blobs {
        assert_eq!(
            blob.as_ptr() as usize % BLOB_ALIGN,
            0,
            "a {}-byte blob at {:p}",
            blob.len(),
            blob.as_ptr()
        );
    }
}

#[test]
fn debug_never_prints_blob_bytes() {
    // A dumped blob is at least hundreds of numbers; a described one is a few dozen characters.
    let short = |what: &str, text: String| {
        assert!(text.len() < 400, "{what} prints {} characters", text.len());
        text
    };
    let mut described = 0;
    for entry in image_entries() {
        let text = short("ImageEntry", format!("{entry:?}"));
        if let Some(blob @ [_, ..]) = entry.blob {
            assert!(text.contains(&format!("<{} bytes>", blob.len())), "{text}");
            described += 1;
        }
    }
    for entry in prof_entries() {
        let text = short("ProfEntry", format!("{entry:?}"));
        if let Some(blob) = entry.blob {
            assert!(text.contains(&format!("<{} bytes>", blob.len())), "{text}");
            described += 1;
        }
    }
    assert_eq!(described > 0, DISTINCT_BLOB_COUNT != 0);
    for slot in IMAGE_LIST {
        // Up to six descriptors of four regions each.
        let text = format!("{slot:?}");
        assert!(
            text.len() < 2_000,
            "ImageSlot prints {} characters",
            text.len()
        );
        for desc in slot.descriptors() {
            short("ImageDesc", format!("{desc:?}"));
        }
    }
    for slot in HWDECODE_LIST {
        short("ProfSlot", format!("{slot:?}"));
    }
    let full = format!("{IMAGE_LIST:?}{HWDECODE_LIST:?}");
    assert!(
        full.len() < 60_000,
        "the tables print {} characters",
        full.len()
    );

    let cam = [0u8; nrtucode::prof::CAM_SIZE];
    let table = [0u8; nrtucode::prof::TABLE_SIZE];
    let cam = CamView::new(&cam).unwrap();
    let table = TableView::new(&table).unwrap();
    assert_eq!(format!("{cam:?}"), "CamView { bytes: <1024 bytes> }");
    assert_eq!(format!("{table:?}"), "TableView { bytes: <8192 bytes> }");
    let record = table.record(0).unwrap();
    let text = short("TableRecord", format!("{record:?}"));
    assert!(text.contains("<128 bytes>"), "{text}");
}

/// The `.rodata.nrtucode.*` input sections of the core's own object code: one per distinct
/// blob, as long as the blob, with unique names. Built in the nested runs' shared target
/// directory (`tests/nested_cargo`): nested runs there take its lock one at a time, and no other
/// test of this binary builds the rlib, so the rlib read is the one just built with this test's
/// features.
#[cfg(target_os = "linux")]
#[test]
fn each_blob_has_its_own_named_input_section() {
    use std::process::Command;

    let target = nested_cargo::target_dir();
    let mut features = Vec::new();
    for (on, name) in [
        (cfg!(feature = "gen-sunda"), "gen-sunda"),
        (cfg!(feature = "gen-cayman"), "gen-cayman"),
        (cfg!(feature = "gen-mariana"), "gen-mariana"),
        (cfg!(feature = "gen-mariana-plus"), "gen-mariana-plus"),
        (cfg!(feature = "gen-maverick"), "gen-maverick"),
        (cfg!(feature = "flavor-perf"), "flavor-perf"),
        (cfg!(feature = "flavor-debug"), "flavor-debug"),
        (cfg!(feature = "flavor-test"), "flavor-test"),
        (cfg!(feature = "flavor-dkl-perf"), "flavor-dkl-perf"),
        (cfg!(feature = "flavor-dkl-debug"), "flavor-dkl-debug"),
        (cfg!(feature = "flavor-dkl-test"), "flavor-dkl-test"),
    ] {
        if on {
            features.push(name);
        }
    }
    let status = nested_cargo::cargo()
        .args(["build", "-p", "nrtucode", "--lib", "--locked", "--quiet"])
        .args(["--no-default-features", "--features", &features.join(",")])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("run cargo");
    assert!(status.success());
    let rlib = target.join("debug/libnrtucode.rlib");
    let out = Command::new("readelf")
        .args(["-SW"])
        .arg(&rlib)
        .output()
        .expect("readelf (binutils) is needed");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let mut names = BTreeSet::new();
    let mut bytes = 0;
    for line in text.lines() {
        let Some(at) = line.find(BLOB_SECTION_PREFIX) else {
            continue;
        };
        let mut fields = line[at..].split_whitespace();
        let name = fields.next().unwrap();
        // name, type, address, offset, size
        let size = usize::from_str_radix(fields.nth(3).unwrap(), 16).unwrap();
        assert!(names.insert(name.to_owned()), "{name} twice");
        assert!(
            line.contains(" A ") || line.contains(" AM "),
            "not read-only alloc: {line}"
        );
        bytes += size;
    }
    assert_eq!(names.len(), DISTINCT_BLOB_COUNT, "{names:?}");
    assert_eq!(bytes, EMBEDDED_BLOB_BYTES);
    if DISTINCT_BLOB_COUNT != 0 {
        assert!(
            names.iter().any(|n| n.ends_with("CAYMAN_NX_ACT_PERF_IRAM"))
                || !cfg!(all(feature = "gen-cayman", feature = "flavor-perf"))
        );
    }
}
