//! ELF files read with `object` (no `readelf` text), each once ([`read`]: its sections, symbols
//! and PT_LOAD headers), and what the tasks ask of them: the flash a board loads, a consumer's
//! size split into code, metadata and payload, what two builds put into flash; and a template's
//! external flash edited.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::Path;

use object::elf::{PT_LOAD, SHF_ALLOC, SHF_EXECINSTR, SHF_WRITE};
use object::read::elf::{ElfFile, FileHeader, ProgramHeader, SectionHeader};
use object::{Object, ObjectSection, ObjectSymbol, SectionKind, SymbolKind, SymbolSection};

/// The template's external-flash section.
const SECTION: &str = ".nrtucode_blobs";

/// An ELF file as the tasks read it: its bytes, its named sections, its defined symbols (no
/// section or file symbols), every PT_LOAD program header in file order (what `readelf -l`
/// lists) and its GNU build ID in lower-case hex.
pub struct Elf {
    pub data: Vec<u8>,
    pub sections: Vec<Section>,
    pub symbols: Vec<Symbol>,
    pub loads: Vec<Load>,
    pub build_id: Option<String>,
}

/// One section of an ELF (what `readelf -S` lists, without the null section): its name,
/// address, size in memory, `sh_flags`, and the file bytes it holds (none: NOBITS, or past the
/// end of the file).
#[derive(Clone, Debug)]
pub struct Section {
    pub name: String,
    pub addr: u64,
    pub size: u64,
    pub flags: u64,
    pub bytes: Option<Range<usize>>,
}

/// One defined symbol: its name demangled as binutils' `nm -C` shows it (Rust's legacy and v0
/// manglings, the legacy hash left out), its value (`addr`: a Thumb function's has bit 0 set),
/// `st_size`, whether it is a function (`STT_FUNC`) or an `object` (`STT_OBJECT`), its section
/// (an index into [`Elf::sections`]), and what `nm`'s letter would say of it: `code` in an
/// allocated executable section (`t`/`T`), `rodata` in an allocated, read-only,
/// non-executable one with file bytes (`r`/`R`); neither when weak.
#[derive(Clone, Debug)]
pub struct Symbol {
    pub name: String,
    pub addr: u64,
    pub size: u64,
    pub function: bool,
    pub object: bool,
    pub section: Option<usize>,
    pub code: bool,
    pub rodata: bool,
}

/// One PT_LOAD program header: what a programmer writes (`filesz` bytes, `bytes` of the file,
/// at the load address `paddr`) and where it runs (`vaddr`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Load {
    pub vaddr: u64,
    pub paddr: u64,
    pub filesz: u64,
    pub bytes: Option<Range<usize>>,
}

impl Section {
    /// Whether the section takes memory on the device (`SHF_ALLOC`).
    pub fn alloc(&self) -> bool {
        self.flags & SHF_ALLOC.0 != 0
    }

    /// Whether binutils' `size` (Berkeley format) counts it as `text`: allocated, and code or
    /// read-only.
    fn text(&self) -> bool {
        self.alloc() && (self.flags & SHF_EXECINSTR.0 != 0 || self.flags & SHF_WRITE.0 == 0)
    }
}

/// Reads the ELF file at `path` (32- or 64-bit).
pub fn read(path: &Path) -> Result<Elf, String> {
    let data = crate::files::read(path)?;
    let bad = |e| format!("{} is not a readable ELF file: {e}", path.display());
    let parts = match object::File::parse(&*data).map_err(bad)? {
        object::File::Elf32(file) => parts(&file),
        object::File::Elf64(file) => parts(&file),
        _ => return Err(format!("{} is not an ELF file", path.display())),
    };
    let (sections, symbols, loads, build_id) = parts.map_err(bad)?;
    Ok(Elf {
        data,
        sections,
        symbols,
        loads,
        build_id,
    })
}

type Parts = (Vec<Section>, Vec<Symbol>, Vec<Load>, Option<String>);

fn parts<E: FileHeader<Endian = object::Endianness>>(
    file: &ElfFile<'_, E>,
) -> object::Result<Parts> {
    let (e, len) = (file.endian(), file.data().len());
    // `offset + size` as a range of the file, if it lies inside it.
    let range = |offset: u64, size: u64| {
        let start = usize::try_from(offset).ok()?;
        let end = start.checked_add(usize::try_from(size).ok()?)?;
        (end <= len).then_some(start..end)
    };
    let (mut sections, mut at) = (Vec::new(), BTreeMap::new());
    for s in file.sections() {
        let name = s.name()?;
        if !name.is_empty() {
            at.insert(s.index().0, sections.len());
            let stored = s
                .file_range()
                .filter(|_| s.kind() != SectionKind::UninitializedData);
            sections.push(Section {
                name: name.to_string(),
                addr: s.address(),
                size: s.size(),
                flags: s.elf_section_header().sh_flags(e).0,
                bytes: stored.and_then(|(offset, size)| range(offset, size)),
            });
        }
    }
    let mut symbols = Vec::new();
    for s in file.symbols() {
        let raw = s.name().unwrap_or("");
        if s.is_undefined()
            || matches!(s.kind(), SymbolKind::Section | SymbolKind::File)
            || raw.is_empty()
        {
            continue;
        }
        let section = match s.section() {
            SymbolSection::Section(i) => at.get(&i.0).copied(),
            _ => None,
        };
        let home = section.filter(|_| !s.is_weak()).map(|i| &sections[i]);
        let flags = home.map_or(0, |h| h.flags);
        let code = flags & SHF_ALLOC.0 != 0 && flags & SHF_EXECINSTR.0 != 0;
        let stored = home.is_some_and(|h| h.bytes.is_some());
        symbols.push(Symbol {
            name: format!("{:#}", rustc_demangle::demangle(raw)),
            addr: s.address(),
            size: s.size(),
            function: s.kind() == SymbolKind::Text,
            object: s.kind() == SymbolKind::Data,
            section,
            code,
            rodata: flags & SHF_ALLOC.0 != 0 && !code && stored && flags & SHF_WRITE.0 == 0,
        });
    }
    let headers = file.elf_program_headers().iter();
    let loads = headers.filter(|p| p.p_type(e) == PT_LOAD).map(|p| Load {
        vaddr: p.p_vaddr(e).into(),
        paddr: p.p_paddr(e).into(),
        filesz: p.p_filesz(e).into(),
        bytes: range(p.p_offset(e).into(), p.p_filesz(e).into()),
    });
    let build_id = file.build_id().ok().flatten().filter(|id| !id.is_empty());
    let build_id = build_id.map(nrtucode_facts::hex::lower_hex);
    Ok((sections, symbols, loads.collect(), build_id))
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

impl Elf {
    /// The first section named `name`.
    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// The bytes the PT_LOAD segments write below `limit` (by load address): what a board's
    /// internal flash holds when external flash or RAM starts at `limit`.
    pub fn loaded_below(&self, limit: u64) -> u64 {
        let below = self.loads.iter().filter(|l| l.paddr < limit);
        below.map(|l| l.filesz).sum()
    }

    /// The `text` column of binutils' `size FILE` (Berkeley format).
    pub fn text_size(&self) -> u64 {
        let text = self.sections.iter().filter(|s| s.text());
        text.map(|s| s.size).sum()
    }

    /// (load address, bytes) of every PT_LOAD segment with file bytes.
    fn loadable(&self) -> Result<Vec<(u64, &[u8])>, String> {
        let loads = self.loads.iter().filter(|l| l.filesz != 0);
        let bytes = |l: &Load| Some((l.paddr, &self.data[l.bytes.clone()?]));
        (loads.map(bytes).collect::<Option<_>>())
            .ok_or_else(|| "a segment runs past the end".into())
    }

    /// Each stored section's bytes by name (the first of a name).
    fn stored(&self) -> BTreeMap<&str, &[u8]> {
        let stored = self.sections.iter().rev();
        let bytes = stored.filter_map(|s| Some((s.name.as_str(), s.bytes.clone()?)));
        bytes.map(|(name, at)| (name, &self.data[at])).collect()
    }
}

/// The bytes of `input`, the file range of its `.nrtucode_blobs` and that section's address.
fn blobs_section(input: &Path) -> Result<(Vec<u8>, Range<usize>, u64), String> {
    let elf = read(input)?;
    let section = (elf.section(SECTION))
        .ok_or_else(|| format!("{} has no section {SECTION}", input.display()))?;
    let range = (section.bytes.clone())
        .ok_or_else(|| format!("{SECTION} of {} has no bytes in the file", input.display()))?;
    let addr = section.addr;
    Ok((elf.data, range, addr))
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

/// Compares what builds `a` and `b` put into flash: `Ok` when the loadable segments are identical.
/// Also says whether the whole ELFs are, and else which stored sections differ.
pub fn segments(a: &Path, b: &Path) -> Result<(), String> {
    let (elf_a, elf_b) = (read(a)?, read(b)?);
    let seg_a = (elf_a.loadable()).map_err(|e| format!("{}: {e}", a.display()))?;
    let seg_b = (elf_b.loadable()).map_err(|e| format!("{}: {e}", b.display()))?;
    let list = |s: &[(u64, &[u8])]| {
        let shown: Vec<String> = (s.iter())
            .map(|(at, x)| format!("{at:#010x}+{:#x}", x.len()))
            .collect();
        shown.join(", ")
    };
    let same_shape = seg_a.len() == seg_b.len()
        && (seg_a.iter().zip(&seg_b)).all(|(x, y)| x.0 == y.0 && x.1.len() == y.1.len());
    let differ: Vec<String> = if !same_shape {
        let (a, b) = (list(&seg_a), list(&seg_b));
        vec![format!(
            "loadable segments differ in address or size:\n  A: {a}\n  B: {b}"
        )]
    } else {
        let pairs = seg_a.iter().zip(&seg_b);
        let differ = pairs.filter_map(|((addr, x), (_, y))| {
            let bytes: Vec<usize> = (0..x.len()).filter(|&i| x[i] != y[i]).collect();
            let (size, n, at) = (x.len(), bytes.len(), addr + *bytes.first()? as u64);
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
        let total: usize = seg_a.iter().map(|s| s.1.len()).sum();
        let n = seg_a.len();
        println!(
            "loadable segments identical: {n} segments, {total} bytes {}",
            list(&seg_a)
        );
    }
    if elf_a.data == elf_b.data {
        println!("whole ELF identical");
    } else {
        let (sec_a, sec_b) = (elf_a.stored(), elf_b.stored());
        let names: BTreeSet<&str> = sec_a.keys().chain(sec_b.keys()).copied().collect();
        let names: Vec<&str> = names
            .into_iter()
            .filter(|n| sec_a.get(n) != sec_b.get(n))
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

/// How a thumbv7em consumer's flash splits ([`Elf::size_report`]), in bytes: every allocated
/// section (`alloc`), `code`, the panic machinery's functions (`panic`), `payload` (of `blobs`
/// statics), `metadata`; and (bytes, name) of every function in `.text*`, largest first.
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

impl Elf {
    /// Splits a thumbv7em consumer into code, metadata and payload.
    ///
    /// Payload = the union of the `BLOB_*` statics (one per distinct blob, from build.rs);
    /// metadata = every other byte of allocated .rodata/.data (the const tables, their anonymous
    /// allocations, alignment padding); code = .text minus the consumer's own `_start`.
    pub fn size_report(&self, label: &str) -> SizeReport {
        let data: fn(&Section) -> bool =
            |s| s.alloc() && (s.name.starts_with(".rodata") || s.name.starts_with(".data"));
        let text: fn(&Section) -> bool = |s| s.name.starts_with(".text");
        let sum = |keep: fn(&Section) -> bool| -> u64 {
            self.sections
                .iter()
                .filter(|s| keep(s))
                .map(|s| s.size)
                .sum()
        };
        let in_section = |s: &Symbol, keep: fn(&Section) -> bool| {
            s.section.is_some_and(|i| keep(&self.sections[i]))
        };
        let (mut blobs, mut functions) = (Vec::new(), Vec::new());
        let (mut harness, mut panic) = (0, 0);
        for sym in &self.symbols {
            if in_section(sym, data) && sym.name.contains("BLOB_") {
                blobs.push((sym.addr, sym.addr + sym.size));
            }
            if sym.function {
                if sym.name == "_start" {
                    harness += sym.size;
                }
                if sym.name.contains("panic") || sym.name.contains("rust_begin_unwind") {
                    panic += sym.size;
                }
                if in_section(sym, text) {
                    functions.push((sym.size, sym.name.clone()));
                }
            }
        }
        functions.sort_by(|a, b| b.cmp(a));
        let (count, payload) = (blobs.len(), union(blobs));
        SizeReport {
            label: label.to_string(),
            alloc: sum(Section::alloc),
            code: sum(text).saturating_sub(harness),
            panic,
            payload,
            blobs: count,
            metadata: sum(data).saturating_sub(payload),
            functions,
        }
    }

    /// The functions and statics that rustc orders by their crate hashes: the names (hash left
    /// out) held by more than one allocated symbol. rustc lays out the items of a codegen unit
    /// sorted by symbol name, and a legacy-mangled name is its path then a hash of the instance,
    /// built from the crates' `-C metadata`; two items of one path (one generic function
    /// instantiated twice, say `defmt::export::fmt::<A>` and `::<B>`) are ordered by those hashes
    /// alone, and cargo's hash of a path dependency outside the workspace is its absolute path.
    /// Empty: every item has a path of its own, and the layout does not depend on the hashes.
    pub fn ordered_by_hash(&self) -> Vec<String> {
        let mut seen = BTreeMap::<&str, usize>::new();
        for sym in &self.symbols {
            // ARM mapping symbols ($t, $d) and assembler locals are not items.
            if (sym.code || sym.object) && !sym.name.starts_with(['$', '.']) {
                *seen.entry(&sym.name).or_default() += 1;
            }
        }
        let shared = seen.into_iter().filter(|(_, n)| *n > 1);
        shared
            .map(|(name, n)| format!("{name} ({n} symbols)"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read-only static of this test binary, found by name below.
    static MARKER: [u8; 32] = *b"xtask elf test: a read-only stat";

    #[cfg(target_os = "linux")]
    #[test]
    fn the_symbols_sections_and_loads_of_this_test_binary() {
        let me = read(&std::env::current_exe().unwrap()).unwrap();
        assert_eq!(std::hint::black_box(&MARKER)[0], b'x');
        let this = (me.symbols.iter())
            .find(|s| {
                s.name
                    .ends_with("tests::the_symbols_sections_and_loads_of_this_test_binary")
            })
            .expect("this test's function");
        assert!(this.code && this.function && this.size > 0 && !this.object && !this.rodata);
        let marker = (me.symbols.iter())
            .find(|s| s.name == "xtask::elf::tests::MARKER")
            .expect("the marker static");
        assert!(marker.rodata && !marker.code && marker.object && marker.size == 32);
        let text = me.section(".text").expect(".text");
        assert!(text.alloc() && text.size > 0 && text.bytes.is_some());
        assert!(me.section(".symtab").is_some_and(|s| !s.alloc()));
        let total: u64 = me.loads.iter().map(|l| l.filesz).sum();
        assert!(total > 0);
        assert_eq!(me.loaded_below(u64::MAX), total);
        assert_eq!(me.loaded_below(0), 0);
        assert!(me.text_size() >= text.size);
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
    fn size_counts_allocated_code_and_read_only_sections_as_text() {
        let (a, w, x) = (SHF_ALLOC.0, SHF_WRITE.0, SHF_EXECINSTR.0);
        let text = |flags| {
            let name = String::new();
            (Section {
                name,
                addr: 0,
                size: 1,
                flags,
                bytes: None,
            })
            .text()
        };
        // .text, .rodata and .ARM.exidx, writable code: text; .data (size's data column),
        // .comment and .symtab (not loaded): not.
        assert!(text(a | x) && text(a) && text(a | w | x));
        assert!(!text(a | w) && !text(0) && !text(x));
        assert_eq!(union(vec![(0, 10), (5, 15), (20, 30)]), 25);
    }
}
