//! ELF files read with `object` (no `readelf` text): edit a template's external flash,
//! compare what two builds put into flash, split a consumer's size into code, metadata and
//! payload, list sections, PT_LOAD headers and symbols.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use object::elf::{
    PT_LOAD, SHF_ALLOC, SHF_EXECINSTR, SHF_WRITE, STT_FILE, STT_OBJECT, STT_SECTION,
};
use object::read::elf::{ElfFile, FileHeader, ProgramHeader};
use object::{Object, ObjectSection, ObjectSymbol, SectionFlags, SectionKind, SymbolKind};

/// The template's external-flash section.
const SECTION: &str = ".nrtucode_blobs";

fn parse<'a>(path: &Path, data: &'a [u8]) -> Result<object::File<'a>, String> {
    object::File::parse(data).map_err(|e| format!("{} is not an ELF file: {e}", path.display()))
}

/// An ELF section's `sh_flags` (0 for other formats).
fn sh_flags(s: &object::Section) -> u64 {
    match s.flags() {
        SectionFlags::Elf { sh_flags, .. } => sh_flags.0,
        _ => 0,
    }
}

/// (name, middle load address) of the first image a boot log says was verified
/// (`[LEVEL] [image ]NAME verified: N bytes from 0xADDR…`).
fn first_verified(log: &str) -> Option<(String, u64)> {
    log.lines().find_map(|line| {
        let mut line = line.trim();
        for level in ["TRACE", "DEBUG", "INFO", "WARN", "ERROR"] {
            if let Some(rest) = line
                .strip_prefix(level)
                .filter(|r| r.starts_with(char::is_whitespace))
            {
                line = rest.trim_start();
                break;
            }
        }
        let line = line.strip_prefix("image ").unwrap_or(line);
        let (name, rest) = line.split_once(" verified: ")?;
        let (bytes, addr) = rest.split_once(" bytes from 0x")?;
        // Up to the first character that is not a hex digit (", copy checked", " to …").
        let addr = &addr[..addr
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(addr.len())];
        let addr = u64::from_str_radix(addr, 16).ok()?;
        (!name.is_empty()).then_some((name.to_string(), addr + bytes.parse::<u64>().ok()? / 2))
    })
}

/// The bytes of `input`, the file range of its `.nrtucode_blobs` and that section's address.
fn blobs_section(input: &Path) -> Result<(Vec<u8>, std::ops::Range<usize>, u64), String> {
    let data = crate::files::read(input)?;
    let file = parse(input, &data)?;
    let section = (file.section_by_name(SECTION))
        .filter(|s| s.kind() != SectionKind::UninitializedData)
        .ok_or_else(|| format!("{} has no PROGBITS section {SECTION}", input.display()))?;
    let (offset, size) = (section.file_range())
        .ok_or_else(|| format!("{SECTION} of {} has no file bytes", input.display()))?;
    let addr = section.address();
    let range = usize::try_from(offset).ok().zip(usize::try_from(size).ok());
    let range = (range.and_then(|(o, n)| Some(o..o.checked_add(n)?)))
        .filter(|r| r.end <= data.len())
        .ok_or_else(|| format!("{SECTION} runs past the end of {}", input.display()))?;
    Ok((data, range, addr))
}

/// Writes `output`: `input` with the middle byte of the first image `log` says was verified
/// flipped (as a bad write leaves it); returns that image's name.
pub fn flip_verified(input: &Path, output: &Path, log: &str) -> Result<String, String> {
    let (mut data, range, addr) = blobs_section(input)?;
    let (name, target) = first_verified(log).ok_or("the log names no verified image")?;
    let at = (target.checked_sub(addr))
        .and_then(|o| usize::try_from(o).ok()?.checked_add(range.start))
        .filter(|at| range.contains(at));
    let outside = || {
        format!(
            "{target:#x} is outside {SECTION} ({addr:#x}+{:#x})",
            range.len()
        )
    };
    data[at.ok_or_else(outside)?] ^= 0xFF;
    crate::files::write(output, &data)?;
    eprintln!("    flipped the byte at {target:#x}, inside {name}");
    Ok(name)
}

/// Writes `output`: `input` with every byte of `.nrtucode_blobs` 0xFF (an erased NOR flash).
pub fn erase(input: &Path, output: &Path) -> Result<(), String> {
    let (mut data, range, _) = blobs_section(input)?;
    data[range].fill(0xFF);
    crate::files::write(output, &data)
}

/// (load address, file size, bytes) of every PT_LOAD segment with file bytes.
fn loadable(path: &Path, data: &[u8]) -> Result<Vec<(u64, u64, Vec<u8>)>, String> {
    let loads = loads_in(path, data)?;
    let loads = loads.into_iter().filter(|l| l.filesz != 0);
    loads
        .map(|l| {
            let range = usize::try_from(l.offset)
                .ok()
                .zip(usize::try_from(l.filesz).ok());
            let bytes = range.and_then(|(o, n)| data.get(o..o.checked_add(n)?));
            let bytes = bytes
                .ok_or_else(|| format!("a segment of {} runs past its end", path.display()))?;
            Ok((l.paddr, l.filesz, bytes.to_vec()))
        })
        .collect()
}

/// Compares what builds `a` and `b` put into flash: `Ok` when the loadable segments are identical.
/// Also says whether the whole ELFs are, and else which stored sections differ.
pub fn segments(a: &Path, b: &Path) -> Result<(), String> {
    let (data_a, data_b) = (crate::files::read(a)?, crate::files::read(b)?);
    let (seg_a, seg_b) = (loadable(a, &data_a)?, loadable(b, &data_b)?);
    let list = |s: &[(u64, u64, Vec<u8>)]| {
        let shown: Vec<String> = s
            .iter()
            .map(|s| format!("{:#010x}+{:#x}", s.0, s.1))
            .collect();
        shown.join(", ")
    };
    let shape = |s: &[(u64, u64, Vec<u8>)]| s.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>();
    let differ: Vec<String> = if shape(&seg_a) != shape(&seg_b) {
        let (a, b) = (list(&seg_a), list(&seg_b));
        vec![format!(
            "loadable segments differ in address or size:\n  A: {a}\n  B: {b}"
        )]
    } else {
        let pairs = seg_a.iter().zip(&seg_b);
        let differ = pairs.filter_map(|((addr, size, x), (_, _, y))| {
            let first = x.iter().zip(y).position(|(p, q)| p != q)?;
            let n = x.iter().zip(y).filter(|(p, q)| p != q).count();
            let at = addr + first as u64;
            Some(format!(
                "segment at {addr:#010x} ({size} B): {n} bytes differ, first at {at:#010x}"
            ))
        });
        differ.collect()
    };
    for line in &differ {
        println!("{line}");
    }
    if differ.is_empty() {
        let total: u64 = seg_a.iter().map(|s| s.1).sum();
        let n = seg_a.len();
        println!(
            "loadable segments identical: {n} segments, {total} bytes {}",
            list(&seg_a)
        );
    }
    if data_a == data_b {
        println!("whole ELF identical");
    } else {
        // Each stored section's bytes by name (the first of a name).
        let stored = |path: &Path, data: &[u8]| -> Result<BTreeMap<String, Vec<u8>>, String> {
            let file = parse(path, data)?;
            let sections = file.sections().collect::<Vec<_>>();
            let stored = sections
                .iter()
                .rev()
                .filter(|s| s.kind() != SectionKind::UninitializedData);
            Ok(stored
                .filter_map(|s| Some((s.name().ok()?.to_string(), s.data().ok()?.to_vec())))
                .collect())
        };
        let (sec_a, sec_b) = (stored(a, &data_a)?, stored(b, &data_b)?);
        let names: BTreeSet<&String> = sec_a.keys().chain(sec_b.keys()).collect();
        let names: Vec<&str> = names
            .into_iter()
            .filter(|n| sec_a.get(*n) != sec_b.get(*n))
            .map(String::as_str)
            .collect();
        println!("whole ELF differs (not loaded) in: {}", names.join(", "));
    }
    match differ.is_empty() {
        true => Ok(()),
        false => Err("the loadable segments differ".into()),
    }
}

/// Bytes covered by the union of `ranges`.
fn union(mut ranges: Vec<(u64, u64)>) -> u64 {
    ranges.sort();
    let (mut total, mut end) = (0, 0);
    for (a, b) in ranges {
        if b > end {
            total += b - a.max(end);
            end = b;
        }
    }
    total
}

/// How a thumbv7em consumer's flash splits ([`size_of`]), in bytes: every allocated section
/// (`alloc`), `code`, the panic machinery's functions (`panic`), `payload` (of `blobs` statics),
/// `metadata`; and (bytes, name) of every function in `.text*`, largest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeReport {
    pub label: String,
    pub alloc: u64,
    pub code: u64,
    pub panic: u64,
    pub payload: u64,
    pub blobs: usize,
    pub metadata: u64,
    pub functions: Vec<(u64, String)>,
}

/// Splits the thumbv7em consumer ELF at `path` into code, metadata and payload.
///
/// Payload = the union of the `BLOB_*` statics (one per distinct blob, from build.rs); metadata
/// = every other byte of allocated .rodata/.data (the const tables, their anonymous
/// allocations, alignment padding); code = .text minus the consumer's own `_start`.
pub fn size_of(path: &Path, label: &str) -> Result<SizeReport, String> {
    let data = crate::files::read(path)?;
    let file = parse(path, &data)?;
    let (mut alloc, mut data_bytes, mut text) = (0, 0, 0);
    let (mut data_secs, mut text_secs) = (Vec::new(), Vec::new());
    for s in file.sections() {
        let name = s.name().unwrap_or("");
        if sh_flags(&s) & SHF_ALLOC.0 != 0 {
            alloc += s.size();
            if name.starts_with(".rodata") || name.starts_with(".data") {
                data_secs.push(s.index());
                data_bytes += s.size();
            }
        }
        if name.starts_with(".text") {
            text_secs.push(s.index());
            text += s.size();
        }
    }
    let (mut blobs, mut functions) = (Vec::new(), Vec::new());
    let (mut harness, mut panic) = (0, 0);
    for sym in file.symbols() {
        let name = sym.name().unwrap_or("");
        let sec = sym.section_index();
        if sec.is_some_and(|i| data_secs.contains(&i)) && name.contains("BLOB_") {
            blobs.push((sym.address(), sym.address() + sym.size()));
        }
        if sym.kind() == SymbolKind::Text {
            if name == "_start" {
                harness += sym.size();
            }
            if name.contains("panic") || name.contains("rust_begin_unwind") {
                panic += sym.size();
            }
            if sec.is_some_and(|i| text_secs.contains(&i)) {
                functions.push((sym.size(), name.to_string()));
            }
        }
    }
    functions.sort_by(|a, b| b.cmp(a));
    let (count, payload) = (blobs.len(), union(blobs));
    Ok(SizeReport {
        label: label.to_string(),
        alloc,
        code: text.saturating_sub(harness),
        panic,
        payload,
        blobs: count,
        metadata: data_bytes.saturating_sub(payload),
        functions,
    })
}

/// One PT_LOAD program header: what a programmer writes (`filesz` bytes from file `offset` at
/// the load address `paddr`) and where it runs (`vaddr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Load {
    pub vaddr: u64,
    pub paddr: u64,
    pub filesz: u64,
    pub offset: u64,
}

fn loads_of<Elf: FileHeader<Endian = object::Endianness>>(
    data: &[u8],
) -> object::Result<Vec<Load>> {
    let file = ElfFile::<Elf>::parse(data)?;
    let e = file.endian();
    let loads = file
        .elf_program_headers()
        .iter()
        .filter(|p| p.p_type(e) == PT_LOAD);
    Ok(loads
        .map(|p| Load {
            vaddr: p.p_vaddr(e).into(),
            paddr: p.p_paddr(e).into(),
            filesz: p.p_filesz(e).into(),
            offset: p.p_offset(e).into(),
        })
        .collect())
}

/// Every PT_LOAD program header of the ELF `path`, in file order (what `readelf -l` lists).
pub fn loads(path: &Path) -> Result<Vec<Load>, String> {
    loads_in(path, &crate::files::read(path)?)
}

fn loads_in(path: &Path, data: &[u8]) -> Result<Vec<Load>, String> {
    match object::FileKind::parse(data) {
        Ok(object::FileKind::Elf32) => loads_of::<object::elf::FileHeader32<_>>(data),
        Ok(object::FileKind::Elf64) => loads_of::<object::elf::FileHeader64<_>>(data),
        _ => return Err(format!("{} is not an ELF file", path.display())),
    }
    .map_err(|e| format!("{}: {e}", path.display()))
}

/// The bytes the PT_LOAD segments of `path` write below `limit` (by load address): what a
/// board's internal flash holds when external flash or RAM starts at `limit`.
pub fn loaded_below(path: &Path, limit: u64) -> Result<u64, String> {
    Ok(loads(path)?
        .iter()
        .filter(|l| l.paddr < limit)
        .map(|l| l.filesz)
        .sum())
}

/// One section of an ELF: its name, address, size in memory and whether it takes memory on the
/// device (`SHF_ALLOC`).
#[derive(Clone, Debug)]
pub struct Section {
    pub name: String,
    pub addr: u64,
    pub size: u64,
    pub alloc: bool,
}

/// The sections of the ELF `path` (what `readelf -S` lists, without the null section).
pub fn sections(path: &Path) -> Result<Vec<Section>, String> {
    let data = crate::files::read(path)?;
    let file = parse(path, &data)?;
    let named = file
        .sections()
        .filter(|s| s.name().is_ok_and(|n| !n.is_empty()));
    Ok(named
        .map(|s| Section {
            name: s.name().unwrap_or("").to_string(),
            addr: s.address(),
            size: s.size(),
            alloc: sh_flags(&s) & SHF_ALLOC.0 != 0,
        })
        .collect())
}

/// One defined symbol of an ELF's symbol table ([`symbols`]: the name demangled), its value
/// (`addr`: a Thumb function's has bit 0 set) and `st_size`, and what `nm`'s letter would say
/// of it: `object` is `STT_OBJECT`, `code` in an allocated executable section (`t`/`T`),
/// `rodata` in an allocated, read-only, non-executable one with file bytes (`r`/`R`); neither
/// when weak.
#[derive(Clone, Debug)]
pub struct Symbol {
    pub name: String,
    pub addr: u64,
    pub size: u64,
    pub object: bool,
    pub code: bool,
    pub rodata: bool,
}

/// The defined symbols of `path` (no section or file symbols), names demangled (Rust's legacy
/// and v0 manglings); with `hash`, legacy names keep their `::h…` hash as the last path
/// component, as LLVM's demangler shows them (without: as binutils' does).
pub fn symbols(path: &Path, hash: bool) -> Result<Vec<Symbol>, String> {
    let data = crate::files::read(path)?;
    let file = parse(path, &data)?;
    let mut out = Vec::new();
    for sym in file.symbols() {
        let object::SymbolFlags::Elf { st_info, .. } = sym.flags() else {
            continue;
        };
        let (st_type, raw) = (st_info.st_type(), sym.name().unwrap_or(""));
        if sym.is_undefined() || st_type == STT_SECTION || st_type == STT_FILE || raw.is_empty() {
            continue;
        }
        let demangled = rustc_demangle::demangle(raw);
        let name = if hash {
            format!("{demangled}")
        } else {
            format!("{demangled:#}")
        };
        let section = match sym.section() {
            object::SymbolSection::Section(i) if !sym.is_weak() => file.section_by_index(i).ok(),
            _ => None,
        };
        let flags = section.as_ref().map_or(0, sh_flags);
        let alloc = flags & SHF_ALLOC.0 != 0;
        let code = alloc && flags & SHF_EXECINSTR.0 != 0;
        let nobits = section.is_some_and(|s| s.kind() == SectionKind::UninitializedData);
        let rodata = alloc && !code && !nobits && flags & SHF_WRITE.0 == 0;
        let (addr, size, object) = (sym.address(), sym.size(), st_type == STT_OBJECT);
        out.push(Symbol {
            name,
            addr,
            size,
            object,
            code,
            rodata,
        });
    }
    Ok(out)
}

/// The functions and statics of `path` that rustc orders by their crate hashes: the names (hash
/// left out) held by more than one allocated symbol. rustc lays out the items of a codegen unit
/// sorted by symbol name, and a legacy-mangled name is its path then a hash of the instance,
/// built from the crates' `-C metadata`; two items of one path (one generic function
/// instantiated twice, say `defmt::export::fmt::<A>` and `::<B>`) are ordered by those hashes
/// alone, and cargo's hash of a path dependency outside the workspace is its absolute path.
/// Empty: every item has a path of its own, and the layout does not depend on the hashes.
pub fn ordered_by_hash(path: &Path) -> Result<Vec<String>, String> {
    let mut seen = BTreeMap::<String, usize>::new();
    for sym in symbols(path, false)? {
        // ARM mapping symbols ($t, $d) and assembler locals are not items.
        if (sym.code || sym.object) && !sym.name.starts_with(['$', '.']) {
            *seen.entry(sym.name).or_default() += 1;
        }
    }
    Ok(seen
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(name, n)| format!("{name} ({n} symbols)"))
        .collect())
}

/// The GNU build ID of the ELF file at `path`, in lower-case hex.
pub fn gnu_build_id(path: &Path) -> Result<String, String> {
    let data = crate::files::read(path)?;
    let file = parse(path, &data)?;
    match file.build_id() {
        Ok(Some(id)) if !id.is_empty() => Ok(nrtucode_facts::hex::lower_hex(id)),
        Ok(_) => Err(format!("{} has no GNU build ID", path.display())),
        Err(e) => Err(format!("{}: its build ID note: {e}", path.display())),
    }
}

/// The `text` column of binutils' `size` (Berkeley format): the bytes of every allocated
/// section that is code or read-only (`(sh_flags, size)` per section).
pub fn berkeley_text(sections: impl IntoIterator<Item = (u64, u64)>) -> u64 {
    let (alloc, write, exec) = (SHF_ALLOC.0, SHF_WRITE.0, SHF_EXECINSTR.0);
    let text = sections
        .into_iter()
        .filter(|(f, _)| f & alloc != 0 && (f & exec != 0 || f & write == 0));
    text.map(|(_, size)| size).sum()
}

/// The `text` column `size FILE` prints for the ELF at `path`.
pub fn text_size(path: &Path) -> Result<u64, String> {
    let data = crate::files::read(path)?;
    let file = parse(path, &data)?;
    Ok(berkeley_text(
        file.sections().map(|s| (sh_flags(&s), s.size())),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read-only static of this test binary, found by name below.
    static MARKER: [u8; 32] = *b"xtask elf test: a read-only stat";

    #[cfg(target_os = "linux")]
    #[test]
    fn the_symbols_sections_and_loads_of_this_test_binary() {
        let me = std::env::current_exe().unwrap();
        assert_eq!(std::hint::black_box(&MARKER)[0], b'x');
        let symbols = symbols(&me, false).unwrap();
        let this = (symbols.iter())
            .find(|s| {
                s.name
                    .ends_with("tests::the_symbols_sections_and_loads_of_this_test_binary")
            })
            .expect("this test's function");
        assert!(this.code && this.size > 0 && !this.object && !this.rodata);
        let marker = symbols
            .iter()
            .find(|s| s.name == "xtask::elf::tests::MARKER")
            .expect("the marker static");
        assert!(marker.rodata && !marker.code && marker.object && marker.size == 32);
        // With the hash, a legacy name keeps `::h…` as its last component.
        let hashed = symbols_with_hash(&me);
        assert!(
            hashed
                .iter()
                .any(|n| n.starts_with("xtask::elf::tests::MARKER::h"))
        );
        let sections = sections(&me).unwrap();
        assert!(
            sections
                .iter()
                .any(|s| s.name == ".text" && s.alloc && s.size > 0)
        );
        assert!(sections.iter().any(|s| s.name == ".symtab" && !s.alloc));
        let total: u64 = loads(&me).unwrap().iter().map(|l| l.filesz).sum();
        assert!(total > 0);
        assert_eq!(loaded_below(&me, u64::MAX).unwrap(), total);
        assert_eq!(loaded_below(&me, 0).unwrap(), 0);
    }

    fn symbols_with_hash(path: &Path) -> Vec<String> {
        symbols(path, true)
            .unwrap()
            .into_iter()
            .map(|s| s.name)
            .collect()
    }

    #[test]
    fn the_first_verified_image_is_found_in_both_boards_logs() {
        // The RISC-V loader's line: the address is followed by a comma.
        let riscv = "boot\nCAYMAN_NX_ACT IRAM verified: 100 bytes from 0x81000000, copy checked\n";
        assert_eq!(
            first_verified(riscv),
            Some(("CAYMAN_NX_ACT IRAM".into(), 0x8100_0032))
        );
        // The Arm template's defmt line: a level, "image ", then " to 0x…".
        let arm = "INFO  image CAYMAN_NX_ACT Perf DRAM verified: 10 bytes from 0x21013dc0 to 0x20018000\n";
        assert_eq!(
            first_verified(arm),
            Some(("CAYMAN_NX_ACT Perf DRAM".into(), 0x2101_3dc5))
        );
        assert_eq!(first_verified("nothing verified here\n"), None);
    }

    #[test]
    fn berkeley_text_counts_allocated_code_and_read_only_sections() {
        let (a, w, x) = (SHF_ALLOC.0, SHF_WRITE.0, SHF_EXECINSTR.0);
        let sections = [
            (a | x, 100),   // .text
            (a, 20),        // .rodata, .ARM.exidx
            (a | w, 4000),  // .data: size's data column
            (0, 9000),      // .comment, .symtab: not loaded
            (a | w | x, 3), // writable code still counts as text
        ];
        assert_eq!(berkeley_text(sections), 123);
        assert_eq!(union(vec![(0, 10), (5, 15), (20, 30)]), 25);
    }
}
