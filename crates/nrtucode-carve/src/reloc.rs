//! Dynamic relocations and the pointer values they give.
//!
//! In a position-independent shared object a pointer in data is zero (or an implicit addend)
//! in the file and filled in by the dynamic loader. The loader's inputs are read here:
//! `R_X86_64_RELATIVE` (value = load base + addend; with base 0 the value is the addend),
//! `R_X86_64_64` / `R_X86_64_GLOB_DAT` against a defined symbol (value = symbol + addend, what
//! an exported getter referenced from data gets) and packed `SHT_RELR` (value = the file word).
//!
//! How a pointer slot is read ([`RelocMap::pointer`]):
//!
//! | relocation            | file bytes      | value                                    |
//! |-----------------------|-----------------|------------------------------------------|
//! | RELATIVE / 64 / RELR  | anything        | the relocated value                      |
//! | none                  | zero            | NULL                                     |
//! | none                  | non-zero        | error: unrelocated pointer in a PIC object |
//! | none                  | none (`.bss`)   | error: pointer without a value           |
//!
//! A zero word without relocation is NULL because that is exactly how the vendor library (and
//! any C compiler) encodes a NULL getter in a PIC object. A relocated value must itself lie in
//! a section of the file, otherwise the relocation points outside the file.

use std::collections::HashMap;

use object::LittleEndian as LE;
use object::elf;
use object::read::elf::{FileHeader as _, Rela as _, SectionHeader as _};

use crate::dynamic::RawRela;
use crate::elf::Elf;
use crate::error::CarveError;

/// What the dynamic loader writes at one address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Reloc {
    /// `R_X86_64_RELATIVE` with its addend.
    Relative(i64),
    /// `R_X86_64_64` or `R_X86_64_GLOB_DAT` against a symbol.
    Symbol {
        /// Symbol name.
        name: String,
        /// Its value when defined in this file.
        value: Option<u64>,
        /// The addend.
        addend: i64,
    },
    /// A packed relative relocation (`SHT_RELR`): the addend is the file word.
    Relr,
    /// Any other type.
    Other(u32),
}

/// The dynamic relocations of a file, by target address.
#[derive(Debug, Default)]
pub(crate) struct RelocMap {
    by_va: HashMap<u64, Reloc>,
    /// The symbol each symbol relocation names (`GLOB_DAT`, `JUMP_SLOT`, `64`, ...), by address.
    names: HashMap<u64, String>,
}

/// A resolved pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ptr {
    /// Zero in the file, no relocation.
    Null,
    /// An address inside a section of the file.
    Va(u64),
}

impl Ptr {
    /// The address, or `None` for NULL.
    pub(crate) fn va(self) -> Option<u64> {
        match self {
            Ptr::Null => None,
            Ptr::Va(va) => Some(va),
        }
    }
}

impl RelocMap {
    /// Reads every allocated `SHT_RELA` and `SHT_RELR` section of `elf` or, for a file read
    /// through its program headers, what `DT_RELA`, `DT_JMPREL` and `DT_RELR` name.
    pub(crate) fn read(elf: &Elf<'_>) -> Result<Self, CarveError> {
        let mut map = Self::default();
        if let Some((relas, relr)) = elf.dynamic_relocations() {
            for r in relas {
                map.add(elf, *r);
            }
            for va in relr {
                map.by_va.insert(*va, Reloc::Relr);
            }
            return Ok(map);
        }
        let e = LE;
        let data = elf.data();
        let table = elf
            .header()
            .sections(e, data)
            .map_err(|err| CarveError::Malformed {
                what: "section header table".into(),
                reason: err.to_string(),
            })?;
        for (sh, sec) in table.iter().zip(elf.sections()) {
            if !sec.is_alloc() {
                continue;
            }
            let bad = |err: object::Error| CarveError::Malformed {
                what: format!("relocation section {}", sec.name),
                reason: err.to_string(),
            };
            if let Some((relas, _link)) = sh.rela(e, data).map_err(bad)? {
                for r in relas {
                    map.add(
                        elf,
                        RawRela {
                            offset: r.r_offset(e),
                            r_type: r.r_type(e, false).0,
                            sym: r.r_sym(e, false),
                            addend: r.r_addend(e),
                        },
                    );
                }
            } else if let Some(relrs) = sh.relr(e, data).map_err(bad)? {
                for va in relrs {
                    map.by_va.insert(va, Reloc::Relr);
                }
            }
        }
        Ok(map)
    }

    fn add(&mut self, elf: &Elf<'_>, r: RawRela) {
        let sym = (r.sym != 0)
            .then(|| elf.dynsym_by_index(r.sym as usize))
            .flatten();
        if let Some(s) = sym.filter(|s| !s.name.is_empty()) {
            self.names.insert(r.offset, s.name.clone());
        }
        let reloc = match elf::RelocationType(r.r_type) {
            elf::R_X86_64_RELATIVE => Reloc::Relative(r.addend),
            elf::R_X86_64_64 | elf::R_X86_64_GLOB_DAT => Reloc::Symbol {
                name: sym.map(|s| s.name.clone()).unwrap_or_default(),
                value: sym.filter(|s| s.defined).map(|s| s.value),
                addend: r.addend,
            },
            _ => Reloc::Other(r.r_type),
        };
        self.by_va.insert(r.offset, reloc);
    }

    /// The symbol the relocation at `va` names, if any (what a GOT or PLT slot calls).
    pub(crate) fn symbol_name(&self, va: u64) -> Option<&str> {
        self.names.get(&va).map(String::as_str)
    }

    /// The relocation at `va`, if any.
    pub(crate) fn at(&self, va: u64) -> Option<&Reloc> {
        self.by_va.get(&va)
    }

    /// Reads the pointer slot at `va` (see the module documentation for the rules).
    pub(crate) fn pointer(&self, elf: &Elf<'_>, va: u64, what: &str) -> Result<Ptr, CarveError> {
        let file_word = || elf.u64_at(va, what);
        let target = match self.at(va) {
            Some(Reloc::Relative(addend)) => *addend as u64,
            Some(Reloc::Symbol {
                name,
                value: Some(v),
                addend,
            }) if !name.is_empty() => v.wrapping_add(*addend as u64),
            Some(Reloc::Symbol { name, .. }) => {
                return Err(CarveError::UnsupportedReloc {
                    what: what.to_owned(),
                    va,
                    detail: format!("against undefined symbol {name:?}"),
                });
            }
            Some(Reloc::Relr) => file_word()?,
            Some(Reloc::Other(t)) => {
                return Err(CarveError::UnsupportedReloc {
                    what: what.to_owned(),
                    va,
                    detail: format!("of type {t}"),
                });
            }
            None => {
                return match file_word() {
                    Ok(0) => Ok(Ptr::Null),
                    Ok(value) => Err(CarveError::UnrelocatedPointer {
                        what: what.to_owned(),
                        va,
                        value,
                    }),
                    Err(CarveError::NotFileBacked { .. }) => Err(CarveError::PointerWithoutValue {
                        what: what.to_owned(),
                        va,
                    }),
                    Err(e) => Err(e),
                };
            }
        };
        let inside = if elf.sections().is_empty() {
            elf.segments()
                .iter()
                .any(|s| target >= s.vaddr && target - s.vaddr < s.memsz)
        } else {
            elf.section_at(target).is_some()
        };
        if !inside {
            return Err(CarveError::RelocOutsideFile {
                what: what.to_owned(),
                slot_va: va,
                target,
            });
        }
        Ok(Ptr::Va(target))
    }
}
