//! A checked view of an x86-64 ELF shared object over `object`: sections, segments, symbols,
//! the GNU build ID, and virtual-address → file-offset mapping.
//!
//! Bytes are read as the dynamic loader maps them: a virtual address is mapped to a file offset
//! through the `PT_LOAD` segment that contains it. Section headers, where present, are a
//! cross-check: every allocated section with file bytes must lie in the file part of one
//! `PT_LOAD` segment at the same offset from it in the file as in memory
//! ([`CarveError::SectionSegmentMismatch`] names both otherwise), and a range read must lie in
//! one section. Nothing assumes VA == file offset.

use nrtucode_facts::hex::lower_hex;
use object::LittleEndian as LE;
use object::elf::{self, FileHeader64};
use object::read::elf::{FileHeader as _, ProgramHeader as _, SectionHeader as _, Sym as _};

use crate::dynamic::{RawRela, load_sections, read_dynamic};
use crate::error::CarveError;
use crate::records::{Section, Segment, Symbol};

/// The ELF header type this reader accepts.
pub(crate) type Header = FileHeader64<LE>;

/// Checks that every allocated section with file bytes lies in the file part of a `PT_LOAD`
/// segment, at the same place in the file as in memory (see the module documentation).
fn cross_check(sections: &[Section], segments: &[Segment]) -> Result<(), CarveError> {
    for s in sections
        .iter()
        .filter(|s| s.is_alloc() && s.is_file_backed() && s.kind != elf::SHT_NULL.0 && s.size > 0)
    {
        let mismatch = |segment: String, detail: String| CarveError::SectionSegmentMismatch {
            section: s.name.clone(),
            sh_offset: s.offset,
            sh_addr: s.addr,
            sh_size: s.size,
            segment,
            detail,
        };
        let Some((i, seg)) = segments
            .iter()
            .enumerate()
            .find(|(_, g)| s.addr >= g.vaddr && s.addr - g.vaddr < g.memsz)
        else {
            return Err(mismatch(
                "every PT_LOAD segment".into(),
                "no PT_LOAD segment maps its address".into(),
            ));
        };
        let named = format!(
            "PT_LOAD #{i} (p_offset {:#x}, p_vaddr {:#x}, p_filesz {:#x})",
            seg.offset, seg.vaddr, seg.filesz
        );
        let rel = s.addr - seg.vaddr;
        if rel.checked_add(s.size).is_none_or(|end| end > seg.filesz) {
            return Err(mismatch(
                named,
                format!(
                    "the section ends at VA {:#x}, past the segment's file bytes, which end at {:#x}",
                    s.addr.saturating_add(s.size),
                    seg.vaddr.saturating_add(seg.filesz)
                ),
            ));
        }
        let loaded_from = seg.offset.saturating_add(rel);
        if loaded_from != s.offset {
            return Err(mismatch(
                named,
                format!(
                    "the loader maps VA {:#x} from file offset {loaded_from:#x}, the section says {:#x}",
                    s.addr, s.offset
                ),
            ));
        }
    }
    Ok(())
}

/// A parsed x86-64 ELF shared object.
pub struct Elf<'a> {
    data: &'a [u8],
    header: &'a Header,
    sections: Vec<Section>,
    segments: Vec<Segment>,
    symtab: Vec<Symbol>,
    dynsym: Vec<Symbol>,
    build_id: Option<Vec<u8>>,
    /// The relocations `PT_DYNAMIC` names, when the file is read through program headers.
    dynamic_relocs: Option<(Vec<RawRela>, Vec<u64>)>,
    /// `DT_PLTGOT`, when the file is read through program headers.
    got_base: Option<u64>,
}

const ELF_HEADER_SIZE: u64 = 64;

fn malformed(what: &str) -> impl Fn(object::Error) -> CarveError + '_ {
    move |e| CarveError::Malformed {
        what: what.to_owned(),
        reason: e.to_string(),
    }
}

fn check_span(what: &str, offset: u64, len: u64, file_len: u64) -> Result<(), CarveError> {
    let end = offset.saturating_add(len);
    if end > file_len {
        return Err(CarveError::Truncated {
            what: what.to_owned(),
            offset,
            end,
            file_len,
        });
    }
    Ok(())
}

impl<'a> Elf<'a> {
    /// Parses and checks `data`: ELF64, little-endian, `EM_X86_64`, `ET_DYN`.
    pub fn parse(data: &'a [u8]) -> Result<Self, CarveError> {
        let file_len = data.len() as u64;
        if data.is_empty() {
            return Err(CarveError::Empty);
        }
        if data.len() < 4 || data[..4] != elf::ELFMAG {
            return Err(CarveError::NotElf {
                found: data[..data.len().min(4)].to_vec(),
            });
        }
        check_span("ELF identification", 0, 16, file_len)?;
        if data[4] != elf::ELFCLASS64.0 {
            return Err(CarveError::WrongClass { class: data[4] });
        }
        if data[5] != elf::ELFDATA2LSB.0 {
            return Err(CarveError::WrongEndian { data: data[5] });
        }
        check_span("ELF header", 0, ELF_HEADER_SIZE, file_len)?;
        let header = Header::parse(data).map_err(malformed("ELF header"))?;
        let e = LE;
        if header.e_machine(e) != elf::EM_X86_64 {
            return Err(CarveError::WrongMachine {
                machine: header.e_machine(e).0,
            });
        }
        if header.e_type(e) != elf::ET_DYN {
            return Err(CarveError::NotSharedObject {
                e_type: header.e_type(e).0,
            });
        }
        let shoff = header.e_shoff(e);
        if shoff != 0 {
            let len = u64::from(header.e_shnum(e)) * u64::from(header.e_shentsize(e));
            check_span("section header table", shoff, len, file_len)?;
        }
        let phoff = header.e_phoff(e);
        if phoff != 0 {
            let len = u64::from(header.e_phnum(e)) * u64::from(header.e_phentsize(e));
            check_span("program header table", phoff, len, file_len)?;
        }

        let table = header
            .sections(e, data)
            .map_err(malformed("section header table"))?;
        let mut sections = Vec::with_capacity(table.len());
        for (index, sh) in table.enumerate() {
            let name = table
                .section_name(e, sh)
                .map(|n| String::from_utf8_lossy(n).into_owned())
                .unwrap_or_default();
            let s = Section {
                index: index.0,
                name,
                kind: sh.sh_type(e).0,
                flags: sh.sh_flags(e).0,
                addr: sh.sh_addr(e),
                size: sh.sh_size(e),
                offset: sh.sh_offset(e),
                link: sh.sh_link(e),
            };
            if s.is_file_backed() && s.kind != elf::SHT_NULL.0 {
                check_span(&format!("section {}", s.name), s.offset, s.size, file_len)?;
            }
            sections.push(s);
        }

        let mut segments = Vec::new();
        for ph in header
            .program_headers(e, data)
            .map_err(malformed("program header table"))?
        {
            if ph.p_type(e) == elf::PT_LOAD {
                segments.push(Segment {
                    vaddr: ph.p_vaddr(e),
                    memsz: ph.p_memsz(e),
                    offset: ph.p_offset(e),
                    filesz: ph.p_filesz(e).min(ph.p_memsz(e)),
                });
            }
        }

        let symbols = |kind: elf::SectionType, what: &str| -> Result<Vec<Symbol>, CarveError> {
            let st = table.symbols(e, data, kind).map_err(malformed(what))?;
            let mut out = Vec::with_capacity(st.len());
            for sym in st.iter() {
                let name = st
                    .symbol_name(e, sym)
                    .map(|n| String::from_utf8_lossy(n).into_owned())
                    .unwrap_or_default();
                out.push(Symbol {
                    name,
                    value: sym.st_value(e),
                    size: sym.st_size(e),
                    is_func: sym.st_type() == elf::STT_FUNC,
                    defined: sym.st_shndx(e) != elf::SHN_UNDEF,
                });
            }
            Ok(out)
        };
        let mut symtab = symbols(elf::SHT_SYMTAB, "symbol table .symtab")?;
        let mut dynsym = symbols(elf::SHT_DYNSYM, "dynamic symbol table .dynsym")?;

        let mut build_id = None;
        for sh in table.iter() {
            let Ok(Some(mut notes)) = sh.notes(e, data) else {
                continue;
            };
            while let Ok(Some(note)) = notes.next() {
                if note.name() == elf::ELF_NOTE_GNU && note.n_type(e) == elf::NT_GNU_BUILD_ID {
                    build_id = Some(note.desc().to_vec());
                }
            }
        }

        // A shared object always has `.dynsym`; without one (no section header table, or one
        // that does not describe the file) the program headers are read instead.
        let mut dynamic_relocs = None;
        let mut got_base = None;
        if !sections.iter().any(|s| s.kind == elf::SHT_DYNSYM.0) {
            sections = load_sections(header, data)?;
            let dynamic = read_dynamic(header, data, &sections)?;
            symtab.clear();
            dynsym = dynamic.symbols;
            build_id = dynamic.build_id;
            dynamic_relocs = Some((dynamic.relas, dynamic.relr));
            got_base = dynamic.got_base;
        }

        if dynamic_relocs.is_none() {
            cross_check(&sections, &segments)?;
        }

        Ok(Self {
            data,
            header,
            sections,
            segments,
            symtab,
            dynsym,
            build_id,
            dynamic_relocs,
            got_base,
        })
    }

    /// `true` when the section header table is missing or unusable and the file is read
    /// through its program headers (sections then stand for `PT_LOAD` segments).
    pub(crate) fn reads_program_headers(&self) -> bool {
        self.dynamic_relocs.is_some()
    }

    /// The `DT_RELA` / `DT_JMPREL` entries and `DT_RELR` addresses, when the file is read
    /// through its program headers.
    pub(crate) fn dynamic_relocations(&self) -> Option<(&[RawRela], &[u64])> {
        self.dynamic_relocs
            .as_ref()
            .map(|(relas, relr)| (relas.as_slice(), relr.as_slice()))
    }

    /// The GOT base (`DT_PLTGOT`) of a file read through its program headers. Without section
    /// bounds, a table read there could run on into the data after the GOT.
    pub(crate) fn got_base(&self) -> Option<u64> {
        self.got_base
    }

    /// The whole file.
    pub(crate) fn data(&self) -> &'a [u8] {
        self.data
    }

    /// The ELF header.
    pub(crate) fn header(&self) -> &'a Header {
        self.header
    }

    /// All section headers.
    pub fn sections(&self) -> &[Section] {
        &self.sections
    }

    /// The `PT_LOAD` segments.
    pub(crate) fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The GNU build ID in lowercase hex, if the file has one.
    pub(crate) fn build_id_hex(&self) -> Option<String> {
        self.build_id.as_deref().map(lower_hex)
    }

    /// The defined symbol `name`, from `.symtab` first, then `.dynsym`.
    pub(crate) fn symbol(&self, name: &str) -> Option<&Symbol> {
        self.symtab
            .iter()
            .chain(&self.dynsym)
            .find(|s| s.defined && s.name == name)
    }

    /// The defined function symbols at `va` (both tables, deduplicated, sorted by name).
    pub(crate) fn functions_at(&self, va: u64) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .symtab
            .iter()
            .chain(&self.dynsym)
            .filter(|s| s.defined && s.is_func && s.value == va && !s.name.is_empty())
            .map(|s| s.name.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// The `.dynsym` entry at symbol index `index` (as relocations name it).
    pub(crate) fn dynsym_by_index(&self, index: usize) -> Option<&Symbol> {
        self.dynsym.get(index)
    }

    /// The allocated section containing `va`, if any.
    pub(crate) fn section_at(&self, va: u64) -> Option<&Section> {
        self.sections
            .iter()
            .find(|s| s.is_alloc() && s.size > 0 && s.contains(va))
    }

    /// Maps `len` bytes at `va` to a file offset through the containing `PT_LOAD` segment, as the
    /// loader does. The whole range must lie in the segment's file bytes, in the file and, where
    /// the file has sections, in one section.
    pub fn offset_of(&self, va: u64, len: u64, what: &str) -> Result<usize, CarveError> {
        let file_len = self.data.len() as u64;
        let unmapped = || CarveError::Unmapped {
            what: what.to_owned(),
            va,
            len,
        };
        // The section table, where there is one, is a cross-check of the range.
        let section_offset = if self.sections.is_empty() {
            None
        } else {
            let sec = self.section_at(va).ok_or_else(unmapped)?;
            if !sec.is_file_backed() {
                return Err(CarveError::NotFileBacked {
                    what: what.to_owned(),
                    va,
                    section: sec.name.clone(),
                });
            }
            Some(sec.file_offset(va, len, what)?)
        };
        // The bytes are where the loader maps them from: through the PT_LOAD segment.
        let seg = self
            .segments
            .iter()
            .find(|s| va >= s.vaddr && va - s.vaddr < s.memsz)
            .ok_or_else(unmapped)?;
        let rel = va - seg.vaddr;
        if rel.saturating_add(len) > seg.filesz {
            return Err(CarveError::PastSectionEnd {
                what: what.to_owned(),
                va,
                len,
                section: "its PT_LOAD segment's file bytes".into(),
                section_end: seg.vaddr.saturating_add(seg.filesz),
            });
        }
        let offset = seg.offset.saturating_add(rel);
        if let Some(sec) = section_offset.filter(|&o| o != offset) {
            // `cross_check` makes this unreachable for a parsed file; never read the wrong bytes.
            return Err(CarveError::Malformed {
                what: what.to_owned(),
                reason: format!(
                    "VA {va:#x} is at file offset {offset:#x} through its PT_LOAD segment, {sec:#x} through its section"
                ),
            });
        }
        check_span(what, offset, len, file_len)?;
        usize::try_from(offset).map_err(|_| unmapped())
    }

    /// The `len` file bytes at `va` (see [`Elf::offset_of`]).
    pub(crate) fn bytes_at(&self, va: u64, len: u64, what: &str) -> Result<&'a [u8], CarveError> {
        let start = self.offset_of(va, len, what)?;
        let len = usize::try_from(len).map_err(|_| CarveError::Unmapped {
            what: what.to_owned(),
            va,
            len,
        })?;
        // offset_of checked start + len <= file length.
        Ok(&self.data[start..start + len])
    }

    /// The little-endian `u64` at `va`.
    pub(crate) fn u64_at(&self, va: u64, what: &str) -> Result<u64, CarveError> {
        let b = self.bytes_at(va, 8, what)?;
        let mut w = [0u8; 8];
        w.copy_from_slice(b);
        Ok(u64::from_le_bytes(w))
    }

    /// Up to `max` bytes of code at `va`, cut at the end of its (executable) section.
    pub(crate) fn code_at(&self, va: u64, max: u64, what: &str) -> Result<&'a [u8], CarveError> {
        let avail = match self.section_at(va) {
            Some(sec) => sec.end() - va,
            None if self.sections.is_empty() => max,
            None => {
                return Err(CarveError::Unmapped {
                    what: what.to_owned(),
                    va,
                    len: 1,
                });
            }
        };
        if let Some(sec) = self.section_at(va)
            && !sec.is_exec()
        {
            return Err(CarveError::NotAStub {
                symbol: None,
                va,
                reason: format!("{what} is in {}, which is not executable", sec.name),
            });
        }
        self.bytes_at(va, avail.min(max), what)
    }
}
