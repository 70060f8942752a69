//! Reading a shared object through its program headers alone, for files whose section header
//! table is missing or unusable (what `sstrip`-style tools leave: `e_shoff = e_shnum = 0`).
//! The dynamic loader needs nothing else, and neither does the carver:
//!
//! * `PT_LOAD` segments stand in for sections ([`load_sections`]): their file bytes become
//!   one file-backed "section", the rest of `p_memsz` a `NOBITS` one; `PF_X` makes it code,
//!   `PF_W` (or an overlap with `PT_GNU_RELRO`, data written once by the loader) writable data.
//! * `PT_DYNAMIC` gives the dynamic symbols (`DT_SYMTAB` / `DT_STRTAB`, with the symbol count
//!   from `DT_GNU_HASH` or `DT_HASH`), the relocations (`DT_RELA` / `DT_RELASZ`, `DT_JMPREL` /
//!   `DT_PLTRELSZ`, `DT_RELR` / `DT_RELRSZ`) ([`read_dynamic`]).
//! * `PT_NOTE` gives the GNU build ID.

use object::LittleEndian as LE;
use object::elf::{self, FileHeader64, ProgramHeader64, Rela64, Relr64, Sym64};
use object::read::elf::{
    Dyn as _, FileHeader as _, GnuHashTable, HashTable, ProgramHeader as _, Rela as _,
    RelrIterator, Sym as _,
};

use crate::error::CarveError;
use crate::records::{Section, Symbol};

/// One dynamic relocation as the file states it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RawRela {
    /// `r_offset`: the address written.
    pub(crate) offset: u64,
    /// `r_type`.
    pub(crate) r_type: u32,
    /// `r_sym`: index into the dynamic symbols.
    pub(crate) sym: u32,
    /// `r_addend`.
    pub(crate) addend: i64,
}

/// What `PT_DYNAMIC` and `PT_NOTE` give.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Dynamic {
    /// The dynamic symbols, by index.
    pub(crate) symbols: Vec<Symbol>,
    /// `DT_RELA` then `DT_JMPREL` entries.
    pub(crate) relas: Vec<RawRela>,
    /// The addresses `DT_RELR` relocates.
    pub(crate) relr: Vec<u64>,
    /// The GNU build ID.
    pub(crate) build_id: Option<Vec<u8>>,
    /// `DT_PLTGOT`: the GOT base (`_GLOBAL_OFFSET_TABLE_`) the large code model adds offsets to.
    pub(crate) got_base: Option<u64>,
}

fn program_headers<'a>(
    header: &FileHeader64<LE>,
    data: &'a [u8],
) -> Result<&'a [ProgramHeader64<LE>], CarveError> {
    header
        .program_headers(LE, data)
        .map_err(|e| CarveError::Malformed {
            what: "program header table".into(),
            reason: e.to_string(),
        })
}

/// The `PT_LOAD` segments as sections (see the module documentation), in header order.
pub(crate) fn load_sections(
    header: &FileHeader64<LE>,
    data: &[u8],
) -> Result<Vec<Section>, CarveError> {
    let e = LE;
    let phdrs = program_headers(header, data)?;
    let relro: Vec<(u64, u64)> = phdrs
        .iter()
        .filter(|p| p.p_type(e) == elf::PT_GNU_RELRO)
        .map(|p| (p.p_vaddr(e), p.p_vaddr(e).saturating_add(p.p_memsz(e))))
        .collect();
    let mut out = Vec::new();
    for (i, p) in phdrs
        .iter()
        .filter(|p| p.p_type(e) == elf::PT_LOAD)
        .enumerate()
    {
        let (vaddr, memsz) = (p.p_vaddr(e), p.p_memsz(e));
        let filesz = p.p_filesz(e).min(memsz);
        let pf = p.p_flags(e).0;
        let end = vaddr.saturating_add(memsz);
        let in_relro = relro.iter().any(|&(a, b)| a < end && vaddr < b);
        let mut flags = elf::SHF_ALLOC.0;
        if pf & elf::PF_X.0 != 0 {
            flags |= elf::SHF_EXECINSTR.0;
        }
        if pf & elf::PF_W.0 != 0 || in_relro {
            flags |= elf::SHF_WRITE.0;
        }
        let rwx = |bit: u32, c: char| if pf & bit != 0 { c } else { '-' };
        let name = format!(
            "PT_LOAD[{i}] ({}{}{})",
            rwx(elf::PF_R.0, 'R'),
            rwx(elf::PF_W.0, 'W'),
            rwx(elf::PF_X.0, 'X')
        );
        if filesz > 0 {
            out.push(Section {
                index: out.len(),
                name: name.clone(),
                kind: elf::SHT_PROGBITS.0,
                flags,
                addr: vaddr,
                size: filesz,
                offset: p.p_offset(e),
                link: 0,
            });
        }
        if memsz > filesz {
            out.push(Section {
                index: out.len(),
                name: format!("{name} past its file bytes"),
                kind: elf::SHT_NOBITS.0,
                flags,
                addr: vaddr.saturating_add(filesz),
                size: memsz - filesz,
                offset: p.p_offset(e).saturating_add(filesz),
                link: 0,
            });
        }
    }
    Ok(out)
}

/// Address → bytes through `PT_LOAD` segments.
struct Loaded<'a> {
    data: &'a [u8],
    sections: &'a [Section],
}

impl<'a> Loaded<'a> {
    /// The `len` file bytes at `va`, all inside one segment's file bytes.
    fn bytes(&self, va: u64, len: u64, what: &str) -> Result<&'a [u8], CarveError> {
        let sec = self
            .sections
            .iter()
            .find(|s| s.kind != elf::SHT_NOBITS.0 && s.contains(va))
            .ok_or_else(|| CarveError::Unmapped {
                what: what.to_owned(),
                va,
                len,
            })?;
        let start = sec.file_offset(va, len, what)?;
        let end = start.saturating_add(len);
        usize::try_from(start)
            .ok()
            .zip(usize::try_from(end).ok())
            .and_then(|(s, e)| self.data.get(s..e))
            .ok_or(CarveError::Truncated {
                what: what.to_owned(),
                offset: start,
                end,
                file_len: self.data.len() as u64,
            })
    }

    /// The file bytes from `va` to the end of its segment's file bytes.
    fn rest(&self, va: u64, what: &str) -> Result<&'a [u8], CarveError> {
        let len = self
            .sections
            .iter()
            .find(|s| s.kind != elf::SHT_NOBITS.0 && s.contains(va))
            .map_or(1, |s| s.end() - va);
        self.bytes(va, len, what)
    }
}

fn bad(what: &str) -> impl Fn(object::Error) -> CarveError + '_ {
    move |e| CarveError::Malformed {
        what: what.to_owned(),
        reason: e.to_string(),
    }
}

/// The dynamic tags this reader uses.
#[derive(Default)]
struct Tags {
    symtab: Option<u64>,
    strtab: Option<u64>,
    strsz: Option<u64>,
    hash: Option<u64>,
    gnu_hash: Option<u64>,
    rela: Option<u64>,
    relasz: u64,
    jmprel: Option<u64>,
    pltrelsz: u64,
    relr: Option<u64>,
    relrsz: u64,
}

/// Reads `PT_DYNAMIC` and `PT_NOTE` of the file whose `PT_LOAD` segments are `sections` (from
/// [`load_sections`]). A file without `PT_DYNAMIC` gives no symbols and no relocations.
pub(crate) fn read_dynamic(
    header: &FileHeader64<LE>,
    data: &[u8],
    sections: &[Section],
) -> Result<Dynamic, CarveError> {
    let e = LE;
    let phdrs = program_headers(header, data)?;
    let mem = Loaded { data, sections };
    let mut out = Dynamic::default();
    for p in phdrs {
        if let Some(mut notes) = p.notes(e, data).map_err(bad("PT_NOTE segment"))? {
            while let Ok(Some(note)) = notes.next() {
                if note.name() == elf::ELF_NOTE_GNU && note.n_type(e) == elf::NT_GNU_BUILD_ID {
                    out.build_id = Some(note.desc().to_vec());
                }
            }
        }
    }
    let Some(dynamic) = phdrs
        .iter()
        .find_map(|p| p.dynamic(e, data).transpose())
        .transpose()
        .map_err(bad("PT_DYNAMIC segment"))?
    else {
        return Ok(out);
    };
    let mut t = Tags::default();
    for d in dynamic {
        let v = d.val(e);
        match d.d_tag(e) {
            elf::DT_NULL => break,
            elf::DT_SYMTAB => t.symtab = Some(v),
            elf::DT_STRTAB => t.strtab = Some(v),
            elf::DT_STRSZ => t.strsz = Some(v),
            elf::DT_HASH => t.hash = Some(v),
            elf::DT_GNU_HASH => t.gnu_hash = Some(v),
            elf::DT_RELA => t.rela = Some(v),
            elf::DT_RELASZ => t.relasz = v,
            elf::DT_JMPREL => t.jmprel = Some(v),
            elf::DT_PLTRELSZ => t.pltrelsz = v,
            elf::DT_RELR => t.relr = Some(v),
            elf::DT_RELRSZ => t.relrsz = v,
            elf::DT_PLTGOT => out.got_base = Some(v),
            _ => {}
        }
    }
    if let Some(symtab) = t.symtab {
        let count = symbol_count(&mem, &t)?;
        let size = std::mem::size_of::<Sym64<LE>>() as u64;
        let bytes = mem.bytes(symtab, count.saturating_mul(size), "DT_SYMTAB")?;
        let syms: &[Sym64<LE>] =
            object::pod::slice_from_all_bytes(bytes).map_err(|()| CarveError::Malformed {
                what: "DT_SYMTAB".into(),
                reason: "not a whole number of symbols".into(),
            })?;
        let strings = match (t.strtab, t.strsz) {
            (Some(a), Some(n)) => mem.bytes(a, n, "DT_STRTAB")?,
            (Some(a), None) => mem.rest(a, "DT_STRTAB")?,
            (None, _) => &[],
        };
        for s in syms {
            let name = strings
                .get(s.st_name(e) as usize..)
                .map(|rest| &rest[..rest.iter().position(|&b| b == 0).unwrap_or(rest.len())])
                .map(|n| String::from_utf8_lossy(n).into_owned())
                .unwrap_or_default();
            out.symbols.push(Symbol {
                name,
                value: s.st_value(e),
                size: s.st_size(e),
                is_func: s.st_type() == elf::STT_FUNC,
                defined: s.st_shndx(e) != elf::SHN_UNDEF,
            });
        }
    }
    for (addr, size, what) in [
        (t.rela, t.relasz, "DT_RELA"),
        (t.jmprel, t.pltrelsz, "DT_JMPREL"),
    ] {
        let Some(addr) = addr else { continue };
        let bytes = mem.bytes(addr, size, what)?;
        let relas: &[Rela64<LE>] =
            object::pod::slice_from_all_bytes(bytes).map_err(|()| CarveError::Malformed {
                what: what.into(),
                reason: format!("size {size:#x} is not a whole number of 24-byte entries"),
            })?;
        out.relas.extend(relas.iter().map(|r| RawRela {
            offset: r.r_offset(e),
            r_type: r.r_type(e, false).0,
            sym: r.r_sym(e, false),
            addend: r.r_addend(e),
        }));
    }
    if let Some(addr) = t.relr {
        let bytes = mem.bytes(addr, t.relrsz, "DT_RELR")?;
        let words: &[Relr64<LE>] =
            object::pod::slice_from_all_bytes(bytes).map_err(|()| CarveError::Malformed {
                what: "DT_RELR".into(),
                reason: format!("size {:#x} is not a whole number of words", t.relrsz),
            })?;
        out.relr
            .extend(RelrIterator::<FileHeader64<LE>>::new(e, words));
    }
    Ok(out)
}

/// The number of dynamic symbols: from `DT_GNU_HASH` (the last chain's end, or the first
/// hashed index when nothing is hashed), else `DT_HASH`'s chain count.
fn symbol_count(mem: &Loaded<'_>, t: &Tags) -> Result<u64, CarveError> {
    if let Some(addr) = t.gnu_hash {
        let bytes = mem.rest(addr, "DT_GNU_HASH")?;
        let table =
            GnuHashTable::<FileHeader64<LE>>::parse(LE, bytes).map_err(bad("DT_GNU_HASH"))?;
        return Ok(u64::from(
            table.symbol_table_length(LE).unwrap_or(table.symbol_base()),
        ));
    }
    if let Some(addr) = t.hash {
        let bytes = mem.rest(addr, "DT_HASH")?;
        let table = HashTable::<FileHeader64<LE>>::parse(LE, bytes).map_err(bad("DT_HASH"))?;
        return Ok(u64::from(table.symbol_table_length()));
    }
    Err(CarveError::Malformed {
        what: "PT_DYNAMIC".into(),
        reason: "DT_SYMTAB without DT_GNU_HASH or DT_HASH: the symbol count is unknown".into(),
    })
}
