//! The records the ELF reader produces, whichever table they come from: sections (from the
//! section header table, or rebuilt from the dynamic segment by `dynamic`), `PT_LOAD`
//! segments and symbols.
//!
//! They sit in a module of their own so that `elf` (which parses the file and uses `dynamic`
//! where the section header table is missing) and `dynamic` (which builds these records from
//! the program headers) both depend on them and not on each other: the imports run one way,
//! `elf` → `dynamic` → `records`.

use object::elf;

use crate::error::CarveError;

/// One section header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// Index in the section header table.
    pub index: usize,
    /// Name from `.shstrtab` (empty when unreadable).
    pub name: String,
    /// `sh_type`.
    pub kind: u32,
    /// `sh_flags`.
    pub flags: u64,
    /// `sh_addr`.
    pub addr: u64,
    /// `sh_size`.
    pub size: u64,
    /// `sh_offset`.
    pub offset: u64,
    /// `sh_link`.
    pub link: u32,
}

impl Section {
    /// `true` when the section occupies memory at run time.
    pub(crate) fn is_alloc(&self) -> bool {
        self.flags & elf::SHF_ALLOC.0 != 0
    }
    /// `true` when the section is writable at run time (this includes RELRO data).
    pub(crate) fn is_writable(&self) -> bool {
        self.flags & elf::SHF_WRITE.0 != 0
    }
    /// `true` when the section holds code.
    pub(crate) fn is_exec(&self) -> bool {
        self.flags & elf::SHF_EXECINSTR.0 != 0
    }
    /// `true` when the section has bytes in the file.
    pub(crate) fn is_file_backed(&self) -> bool {
        self.kind != elf::SHT_NOBITS.0
    }
    /// `true` when `va` lies inside the section's address range.
    pub(crate) fn contains(&self, va: u64) -> bool {
        va >= self.addr && va - self.addr < self.size
    }
    /// One past the section's last address.
    pub(crate) fn end(&self) -> u64 {
        self.addr.saturating_add(self.size)
    }
    /// The file offset of the `len` bytes at `va`, which must lie inside this section (`va` is
    /// already known to be in its range); `what` names them in the error.
    pub(crate) fn file_offset(&self, va: u64, len: u64, what: &str) -> Result<u64, CarveError> {
        let rel = va - self.addr;
        if rel.saturating_add(len) > self.size {
            return Err(CarveError::PastSectionEnd {
                what: what.to_owned(),
                va,
                len,
                section: self.name.clone(),
                section_end: self.end(),
            });
        }
        Ok(self.offset.saturating_add(rel))
    }
}

/// One `PT_LOAD` program header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    /// `p_vaddr`.
    pub vaddr: u64,
    /// `p_memsz`.
    pub memsz: u64,
    /// `p_offset`.
    pub offset: u64,
    /// `p_filesz`.
    pub filesz: u64,
}

/// One defined or undefined symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Symbol {
    /// Name.
    pub name: String,
    /// `st_value`.
    pub value: u64,
    /// `st_size`.
    pub size: u64,
    /// `true` for `STT_FUNC`.
    pub is_func: bool,
    /// `true` when `st_shndx` is not `SHN_UNDEF`.
    pub defined: bool,
}
