//! Malformed inputs: each gives its typed error, none panics.
//!
//! The inputs are the front look-alike (-O2, unstripped, so the bytes to corrupt can be found
//! by symbol) with one structure corrupted at a time.

mod common;

use nrtucode_carve::Elf;
use nrtucode_carve::{CarveError, carve_bytes};
use nrtucode_lookalike::{LibraryBuild, OptLevel};

fn front() -> Vec<u8> {
    common::lib(LibraryBuild::Front, OptLevel::O2, false).bytes()
}

fn le64(d: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(d[at..at + 8].try_into().unwrap())
}

fn put64(d: &mut [u8], at: usize, v: u64) {
    d[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// File offset of the `.symtab` entry of `name`.
fn symtab_entry(d: &[u8], name: &str) -> usize {
    let elf = Elf::parse(d).unwrap();
    let symtab = elf.sections().iter().find(|s| s.name == ".symtab").unwrap();
    let strtab = &elf.sections()[symtab.link as usize];
    (0..symtab.size as usize / 24)
        .map(|i| symtab.offset as usize + 24 * i)
        .find(|&at| {
            let st_name = u32::from_le_bytes(d[at..at + 4].try_into().unwrap()) as usize;
            let start = strtab.offset as usize + st_name;
            d[start..].split(|b| *b == 0).next().unwrap() == name.as_bytes()
        })
        .unwrap_or_else(|| panic!("no symbol {name}"))
}

fn symbol_va(d: &[u8], name: &str) -> u64 {
    le64(d, symtab_entry(d, name) + 8)
}

fn file_offset(d: &[u8], va: u64) -> usize {
    Elf::parse(d).unwrap().offset_of(va, 1, "test").unwrap()
}

/// File offset of the `.rela.dyn` entry whose `r_offset` is `va`.
fn rela_entry(d: &[u8], va: u64) -> usize {
    let elf = Elf::parse(d).unwrap();
    let rela = elf
        .sections()
        .iter()
        .find(|s| s.name == ".rela.dyn")
        .unwrap();
    (0..rela.size as usize / 24)
        .map(|i| rela.offset as usize + 24 * i)
        .find(|&at| le64(d, at) == va)
        .unwrap_or_else(|| panic!("no relocation at {va:#x}"))
}

fn carve(d: &[u8]) -> Result<(), CarveError> {
    carve_bytes(d, "test.so").map(|_| ())
}

#[test]
fn the_unmodified_input_carves() {
    carve(&front()).unwrap();
}

#[test]
fn empty_and_non_elf_files() {
    assert_eq!(carve(&[]), Err(CarveError::Empty));
    assert!(matches!(
        carve(b"MZ\x90\x00"),
        Err(CarveError::NotElf { .. })
    ));
    assert!(matches!(carve(b"\x7fEL"), Err(CarveError::NotElf { .. })));
    // One hex format in the message: what was found like what was expected.
    let e = carve(b"/* A C file */").unwrap_err().to_string();
    assert!(
        e.contains("offset 0 holds 2f2a2041, expected 7f454c46"),
        "{e}"
    );
}

#[test]
fn truncated_headers() {
    let d = front();
    for len in [4, 16, 40, 63] {
        assert!(
            matches!(carve(&d[..len]), Err(CarveError::Truncated { .. })),
            "{len}"
        );
    }
    // A whole ELF header but the section header table is gone.
    let e = carve(&d[..4096]).unwrap_err();
    assert!(
        matches!(&e, CarveError::Truncated { what, .. } if what.contains("header table")),
        "{e}"
    );
    // Cut inside the data: a section runs past the end.
    let e = carve(&d[..d.len() / 2]).unwrap_err();
    assert!(matches!(e, CarveError::Truncated { .. }), "{e}");
}

#[test]
fn wrong_class_endianness_type_and_machine() {
    let mut d = front();
    d[4] = 1; // ELFCLASS32
    assert_eq!(carve(&d), Err(CarveError::WrongClass { class: 1 }));
    let mut d = front();
    d[5] = 2; // big-endian
    assert_eq!(carve(&d), Err(CarveError::WrongEndian { data: 2 }));
    let mut d = front();
    d[0x12..0x14].copy_from_slice(&183u16.to_le_bytes()); // EM_AARCH64
    assert_eq!(carve(&d), Err(CarveError::WrongMachine { machine: 183 }));
    let mut d = front();
    d[0x10..0x12].copy_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    assert_eq!(carve(&d), Err(CarveError::NotSharedObject { e_type: 2 }));
}

#[test]
fn table_outside_any_section() {
    let mut d = front();
    let at = symtab_entry(&d, "image_list");
    put64(&mut d, at + 8, 0x7000_0000_0000);
    let e = carve(&d).unwrap_err();
    assert!(
        matches!(&e, CarveError::Unmapped { va: 0x7000_0000_0000, what, .. } if what.contains("image_list")),
        "{e}"
    );
}

#[test]
fn table_symbol_of_the_wrong_size() {
    let mut d = front();
    let at = symtab_entry(&d, "hwdecode_table_list");
    put64(&mut d, at + 16, 0x100);
    assert!(matches!(
        carve(&d),
        Err(CarveError::BadTable {
            table: "hwdecode_table_list",
            ..
        })
    ));
}

#[test]
fn relocation_pointing_outside_the_file() {
    let mut d = front();
    let slot = symbol_va(&d, "image_list") + 7 * 16 + 8;
    let at = rela_entry(&d, slot);
    put64(&mut d, at + 16, 0x7fff_0000_0000); // r_addend
    let e = carve(&d).unwrap_err();
    assert_eq!(
        e,
        CarveError::RelocOutsideFile {
            what: "image_list[7].table".into(),
            slot_va: slot,
            target: 0x7fff_0000_0000
        }
    );
}

#[test]
fn unrelocated_non_zero_pointer() {
    let mut d = front();
    let slot = symbol_va(&d, "hwdecode_table_list") + 7 * 16;
    let at = rela_entry(&d, slot);
    put64(&mut d, at, slot + 0x1000_0000); // move the relocation away
    let off = file_offset(&d, slot);
    put64(&mut d, off, 0x1234);
    let e = carve(&d).unwrap_err();
    assert!(
        matches!(e, CarveError::UnrelocatedPointer { value: 0x1234, .. }),
        "{e}"
    );
}

#[test]
fn getter_that_is_not_a_stub() {
    let mut d = front();
    let va = symbol_va(&d, "CAYMAN_NX_ACT_PERF_IRAM_get");
    let off = file_offset(&d, va);
    d[off..off + 4].copy_from_slice(&[0x55, 0x48, 0x89, 0xe5]); // push rbp; mov rbp, rsp
    let e = carve(&d).unwrap_err();
    assert!(
        matches!(e, CarveError::NotAStub { va: v, .. } if v == va),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains(&format!("getter CAYMAN_NX_ACT_PERF_IRAM_get at VA {va:#x}")),
        "{e}"
    );
}

#[test]
fn size_beyond_the_file_end() {
    let mut d = front();
    let va = symbol_va(&d, "CAYMAN_NX_ACT_PERF_IRAM_get");
    let off = file_offset(&d, va);
    let code = &d[off..off + 32];
    let imm = code
        .windows(3)
        .position(|w| w == [0x48, 0xc7, 0x06])
        .expect("movq $imm,(%rsi)")
        + 3;
    d[off + imm..off + imm + 4].copy_from_slice(&0x7fff_fff0u32.to_le_bytes());
    let e = carve(&d).unwrap_err();
    assert!(
        matches!(&e, CarveError::PastSectionEnd { len: 0x7fff_fff0, what, .. } if what.contains("CAYMAN_NX_ACT_PERF_IRAM_get")),
        "{e}"
    );
}

#[test]
fn absurd_counts() {
    let mut d = front();
    let entry = symbol_va(&d, "image_list") + 7 * 16;
    let off = file_offset(&d, entry);
    put64(&mut d, off, 1 << 40);
    assert!(matches!(
        carve(&d),
        Err(CarveError::AbsurdCount {
            slot: 7,
            count: 0x100_0000_0000,
            ..
        })
    ));
}

#[test]
fn unknown_flavor_key() {
    let mut d = front();
    let desc = {
        let entry = symbol_va(&d, "image_list") + 7 * 16 + 8;
        le64(&d, rela_entry(&d, entry) + 16)
    };
    let off = file_offset(&d, desc);
    put64(&mut d, off, 5);
    assert!(matches!(
        carve(&d),
        Err(CarveError::UnknownFlavorKey {
            slot: 7,
            key: 5,
            ..
        })
    ));
}

#[test]
fn stripped_library_without_resolvers() {
    let mut d = common::lib(LibraryBuild::Front, OptLevel::O2, true).bytes();
    for name in [
        &b"nrtucode_get_memory_image"[..],
        b"nrtucode_get_hwdecode_table",
    ] {
        let at = d.windows(name.len()).position(|w| w == name).unwrap();
        d[at] = b'X';
    }
    let e = carve(&d).unwrap_err();
    assert!(
        matches!(
            e,
            CarveError::TableNotFound {
                table: "image_list",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn corrupted_bytes_never_panic() {
    // A deterministic sweep: cut the file at many lengths and flip bytes in the headers,
    // the tables and the getters; every outcome is Ok or a typed error.
    let d = front();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for i in 1..20 {
        let _ = carve(&d[..d.len() * i / 20]);
    }
    let hot: Vec<usize> = {
        let image = file_offset(&d, symbol_va(&d, "image_list"));
        let stub = file_offset(&d, symbol_va(&d, "CAYMAN_NX_ACT_PERF_IRAM_get"));
        let shoff = le64(&d, 0x28) as usize;
        vec![0, 0x40, image, stub, shoff]
    };
    for _ in 0..100 {
        let mut m = d.clone();
        for _ in 0..4 {
            let base = hot[(next() % hot.len() as u64) as usize];
            let at = (base + (next() % 0x300) as usize).min(m.len() - 1);
            m[at] = next() as u8;
        }
        let _ = carve(&m);
    }
}

/// A refused library's error carries the bytes the carve read, so that a caller diagnosing it
/// never opens the file again (the file may have changed since, or be a device by now).
#[test]
fn a_refused_file_hands_back_the_bytes_it_was_read_as() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lib.so");
    let mut d = front();
    // Cut in half: its sections run past its end.
    d.truncate(d.len() / 2);
    std::fs::write(&path, &d).unwrap();
    let Err(nrtucode_carve::FileError::Carve { data, .. }) = nrtucode_carve::carve_file(&path)
    else {
        panic!("a truncated library is refused by the carve");
    };
    assert_eq!(&*data, d.as_slice());
    std::fs::write(&path, b"changed since").unwrap();
    assert_eq!(
        &*data,
        d.as_slice(),
        "the bytes are the ones read, not the file's now"
    );
    assert_eq!(
        format!("{data:?}"),
        format!("LibraryBytes({} bytes)", d.len())
    );
}
