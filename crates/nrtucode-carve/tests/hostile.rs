//! Hostile and unlucky input: a section table that disagrees with the program
//! headers the loader maps, and getter symbols a manifest cannot hold. The carve either reads
//! exactly what the loader maps or fails with a typed error naming the disagreement; what it
//! writes, the manifest parser reads back.

mod common;

use std::sync::OnceLock;

use nrtucode_carve::{CarveError, Elf, carve_bytes};
use nrtucode_facts::Manifest;
use nrtucode_lookalike::{LibraryBuild, OptLevel};
use nrtucode_test_elf::TinyElf;
use proptest::prelude::*;

/// The file offset of the section header of `name`.
fn section_header(data: &[u8], name: &str) -> usize {
    let elf = Elf::parse(data).unwrap();
    let index = elf.sections().iter().position(|s| s.name == name).unwrap();
    let shoff = u64::from_le_bytes(data[0x28..0x30].try_into().unwrap()) as usize;
    shoff + 64 * index
}

fn add64(data: &mut [u8], at: usize, delta: u64) {
    let v = u64::from_le_bytes(data[at..at + 8].try_into().unwrap());
    data[at..at + 8].copy_from_slice(&v.wrapping_add(delta).to_le_bytes());
}

/// `sh_addr`, `sh_offset` and `sh_size` within a section header.
const SH_ADDR: usize = 0x10;
const SH_OFFSET: usize = 0x18;
const SH_SIZE: usize = 0x20;

#[test]
fn a_section_header_off_from_its_segment_is_refused_naming_both() {
    let intact = TinyElf::default().build();
    assert!(carve_bytes(&intact, "tiny.so").is_ok());
    for (field, delta) in [(SH_OFFSET, 0x10), (SH_ADDR, 0x10), (SH_SIZE, 0x400)] {
        let mut data = intact.clone();
        let at = section_header(&data, ".rodata") + field;
        add64(&mut data, at, delta);
        let e = carve_bytes(&data, "tiny.so").unwrap_err();
        let CarveError::SectionSegmentMismatch {
            ref section,
            ref segment,
            ..
        } = e
        else {
            panic!("field {field:#x}: {e}");
        };
        assert_eq!(section, ".rodata", "{e}");
        assert!(segment.starts_with("PT_LOAD #0"), "{e}");
        let text = e.to_string();
        assert!(
            text.contains("sh_offset") && text.contains("p_offset"),
            "{text}"
        );
    }
}

proptest! {
    /// Whatever section header field is moved by whatever amount, the carve gives the intact
    /// file's getters and bytes or an error: never other bytes.
    #[test]
    fn a_moved_section_never_gives_other_bytes(
        section in prop::sample::select(vec![".text", ".rodata", ".dynamic", ".got", ".dynsym"]),
        field in prop::sample::select(vec![SH_ADDR, SH_OFFSET, SH_SIZE]),
        delta in prop_oneof![1u64..0x100, (1u64..0x100).prop_map(|d| d.wrapping_neg())],
    ) {
        let intact = TinyElf::default().build();
        let expected = carve_bytes(&intact, "tiny.so").unwrap().manifest();
        let mut data = intact.clone();
        let at = section_header(&data, section) + field;
        add64(&mut data, at, delta);
        if let Ok(carve) = carve_bytes(&data, "tiny.so") {
            let got = carve.manifest();
            prop_assert_eq!(&got.rows, &expected.rows);
        }
    }
}

/// The getter symbol [`renamed`] replaces.
const SYMBOL: &str = "CAYMAN_NX_ACT_PERF_IRAM_get";

/// The front look-alike (-O2, unstripped: its getters have symbols) with [`SYMBOL`] replaced
/// by `symbol` of the same length wherever its name is stored.
fn renamed(symbol: &[u8]) -> Vec<u8> {
    static FRONT: OnceLock<Vec<u8>> = OnceLock::new();
    let front = FRONT.get_or_init(|| common::lib(LibraryBuild::Front, OptLevel::O2, false).bytes());
    assert_eq!(SYMBOL.len(), symbol.len());
    let needle = format!("{SYMBOL}\0").into_bytes();
    let mut data = front.clone();
    let mut found = 0;
    let mut at = 0;
    while let Some(pos) = data[at..]
        .windows(needle.len())
        .position(|w| w == needle.as_slice())
    {
        data[at + pos..at + pos + symbol.len()].copy_from_slice(symbol);
        at += pos + needle.len();
        found += 1;
    }
    assert!(found > 0, "no {SYMBOL} in the front look-alike");
    data
}

#[test]
fn a_symbol_with_a_tab_or_newline_is_refused_at_carve_time() {
    let forged = format!("X\n# build_id\t{}", "0".repeat(SYMBOL.len() - 13));
    for symbol in [
        SYMBOL.replacen('_', "\t", 1),
        SYMBOL.replacen('_', "\n", 1),
        forged,
    ] {
        match carve_bytes(&renamed(symbol.as_bytes()), "tiny.so") {
            Err(CarveError::UnwritableSymbol { .. }) => {}
            Err(e) => panic!("{symbol:?}: {e}"),
            Ok(carve) => {
                // What is written must be read back as written.
                let manifest = carve.manifest();
                assert_eq!(
                    Manifest::parse(&manifest.render()).as_ref(),
                    Ok(&manifest),
                    "{symbol:?}"
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Any symbol the carve accepts is read back as written; a source name with any character
    /// round-trips through the header's escapes.
    #[test]
    fn what_the_carve_writes_its_parser_reads(
        symbol in "[A-Za-z0-9_#\t\n\r\\\\ ]{27}",
        source in "\\PC*|[\t\n\r\\\\#x]{0,8}",
    ) {
        if let Ok(mut carve) = carve_bytes(&renamed(symbol.as_bytes()), "tiny.so") {
            carve.header.source = source;
            let manifest = carve.manifest();
            prop_assert_eq!(Manifest::parse(&manifest.render()), Ok(manifest));
        }
    }
}
