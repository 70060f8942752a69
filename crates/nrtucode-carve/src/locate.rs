//! Finding `image_list` and `hwdecode_table_list`.
//!
//! With symbols, the tables are found by name. A stripped library (only `.dynsym`, like the
//! vendor's front library) still exports the two resolvers, and their code computes the tables'
//! addresses. The resolver is swept by the getter interpreter (`emulate`), which tracks
//! constants through registers: a `lea reg, [rip+X]` gives X, a `mov reg, [rip+G]` from a GOT
//! slot gives the slot's relocated pointer, and the large code model's
//! `lea [rip]; movabs; add` GOT base plus a `movabs` offset gives their sum. Every address it
//! computes or loads that lies in a writable (data or RELRO) section is a candidate; the first,
//! in code order, that reads as a well-formed table of the right shape wins.

use crate::elf::Elf;
use crate::emulate::constant_references;
use crate::error::CarveError;
use crate::reloc::RelocMap;
use crate::stub::LibraryView;
use crate::vendor_tables::{TABLE_SIZE, read_hwdecode_list, read_image_list};

/// Most bytes of a resolver decoded when its symbol has no size.
pub(crate) const MAX_RESOLVER_BYTES: u64 = 4096;

/// How a table was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// By its own symbol.
    Symbol,
    /// By decoding the named resolver.
    Resolver(&'static str),
}

/// The two tables' addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tables {
    /// `image_list`.
    pub image_list: u64,
    /// How `image_list` was found.
    pub image_list_found: Found,
    /// `hwdecode_table_list`.
    pub hwdecode_list: u64,
    /// How `hwdecode_table_list` was found.
    pub hwdecode_list_found: Found,
}

/// Exported memory-image resolver.
pub(crate) const MEMORY_IMAGE_RESOLVER: &str = "nrtucode_get_memory_image";
/// Exported profiler-table resolver.
pub(crate) const HWDECODE_RESOLVER: &str = "nrtucode_get_hwdecode_table";

/// Finds both tables.
pub(crate) fn locate(elf: &Elf<'_>, relocs: &RelocMap) -> Result<Tables, CarveError> {
    let image = find(elf, relocs, "image_list", MEMORY_IMAGE_RESOLVER, |va| {
        let slots = read_image_list(elf, relocs, va)?;
        if slots.iter().all(|s| s.descriptors.is_empty()) {
            return Err(CarveError::BadTable {
                table: "image_list",
                va,
                reason: "every slot is empty".into(),
            });
        }
        Ok(())
    })?;
    let hw = find(
        elf,
        relocs,
        "hwdecode_table_list",
        HWDECODE_RESOLVER,
        |va| read_hwdecode_list(elf, relocs, va).map(|_| ()),
    )?;
    Ok(Tables {
        image_list: image.0,
        image_list_found: image.1,
        hwdecode_list: hw.0,
        hwdecode_list_found: hw.1,
    })
}

fn find(
    elf: &Elf<'_>,
    relocs: &RelocMap,
    table: &'static str,
    resolver: &'static str,
    validate: impl Fn(u64) -> Result<(), CarveError>,
) -> Result<(u64, Found), CarveError> {
    if let Some(sym) = elf.symbol(table) {
        if sym.size != 0 && sym.size != TABLE_SIZE {
            return Err(CarveError::BadTable {
                table,
                va: sym.value,
                reason: format!(
                    "symbol size {:#x}, expected {TABLE_SIZE:#x} (38 x 16)",
                    sym.size
                ),
            });
        }
        validate(sym.value)?;
        return Ok((sym.value, Found::Symbol));
    }
    let Some(func) = elf.symbol(resolver).filter(|s| s.is_func) else {
        return Err(CarveError::TableNotFound {
            table,
            reason: format!("no symbol {table:?} and no exported function {resolver:?}"),
        });
    };
    let len = if func.size == 0 {
        MAX_RESOLVER_BYTES
    } else {
        func.size.min(MAX_RESOLVER_BYTES)
    };
    let code = elf.code_at(func.value, len, resolver)?;
    let mut tried = Vec::new();
    for va in candidates(elf, relocs, code, func.value) {
        match validate(va) {
            Ok(()) => return Ok((va, Found::Resolver(resolver))),
            Err(e) => tried.push(format!("{va:#x} ({e})")),
        }
    }
    Err(CarveError::TableNotFound {
        table,
        reason: if tried.is_empty() {
            format!(
                "{resolver} at VA {:#x} makes no rip-relative reference into a writable data section",
                func.value
            )
        } else {
            format!(
                "no rip-relative reference of {resolver} at VA {:#x} reads as a table: {}",
                func.value,
                tried.join("; ")
            )
        },
    })
}

/// The addresses in writable sections that the code at `va` refers to, in code order.
pub(crate) fn candidates(elf: &Elf<'_>, relocs: &RelocMap, code: &[u8], va: u64) -> Vec<u64> {
    let view = LibraryView {
        elf,
        relocs,
        what: "resolver code",
    };
    // The large code model's GOT base is an address the resolver computes, but never a table.
    let writable = |t: u64| elf.section_at(t).is_some_and(|s| s.is_writable());
    constant_references(&view, code, va)
        .into_iter()
        .filter(|c| writable(*c) && Some(*c) != elf.got_base())
        .collect()
}
