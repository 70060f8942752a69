//! The typed errors of reading and carving a library.
//!
//! Every variant names where the problem is (file offset or virtual address) and what was
//! expected, so that the message alone lets a user look at the right bytes with `objdump`.

use std::path::PathBuf;

use nrtucode_facts::hex::lower_hex;

use crate::staged_dir::PublishError;

/// Why a library could not be read or carved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CarveError {
    /// The input has no bytes at all.
    #[error("empty file: expected an x86-64 ELF shared object")]
    Empty,
    /// The input does not start with the ELF magic.
    #[error(
        "not an ELF file: offset 0 holds {}, expected 7f454c46",
        lower_hex(found)
    )]
    NotElf {
        /// The first bytes found.
        found: Vec<u8>,
    },
    /// The input is an ELF file of the wrong class (e.g. ELF32).
    #[error("wrong ELF class {class} at offset 4: expected 2 (ELFCLASS64)")]
    WrongClass {
        /// `EI_CLASS`.
        class: u8,
    },
    /// The input is big-endian or has an unknown data encoding.
    #[error("wrong ELF data encoding {data} at offset 5: expected 1 (little-endian)")]
    WrongEndian {
        /// `EI_DATA`.
        data: u8,
    },
    /// The input is for another machine.
    #[error("wrong ELF machine {machine} at offset 0x12: expected 62 (EM_X86_64)")]
    WrongMachine {
        /// `e_machine`.
        machine: u16,
    },
    /// The input is not a shared object.
    #[error("wrong ELF type {e_type} at offset 0x10: expected 3 (ET_DYN, a shared object)")]
    NotSharedObject {
        /// `e_type`.
        e_type: u16,
    },
    /// A structure extends past the end of the file.
    #[error("truncated: {what} needs file bytes {offset:#x}..{end:#x}, the file has {file_len:#x}")]
    Truncated {
        /// What was being read.
        what: String,
        /// Its first file offset.
        offset: u64,
        /// One past its last file offset.
        end: u64,
        /// The file length.
        file_len: u64,
    },
    /// The ELF structures are inconsistent in a way `object` reports.
    #[error("malformed ELF: {what}: {reason}")]
    Malformed {
        /// What was being read.
        what: String,
        /// The reader's explanation.
        reason: String,
    },
    /// A section header disagrees with the `PT_LOAD` segment the loader maps its addresses
    /// through: the bytes are read through the segments, so the section table is a
    /// cross-check, and a file whose two views differ is refused.
    #[error(
        "section {section} (sh_offset {sh_offset:#x}, sh_addr {sh_addr:#x}, sh_size {sh_size:#x}) disagrees with {segment}: {detail}"
    )]
    SectionSegmentMismatch {
        /// The section name.
        section: String,
        /// `sh_offset`.
        sh_offset: u64,
        /// `sh_addr`.
        sh_addr: u64,
        /// `sh_size`.
        sh_size: u64,
        /// The segment, e.g. `PT_LOAD #2 (p_offset 0x1000, p_vaddr 0x1000, p_filesz 0x200)`,
        /// or `every PT_LOAD segment`.
        segment: String,
        /// What differs.
        detail: String,
    },
    /// A virtual address lies outside every allocated section (or segment).
    #[error("{what}: VA {va:#x} (+{len:#x} bytes) is not inside any section of the file")]
    Unmapped {
        /// What was at that address.
        what: String,
        /// The address.
        va: u64,
        /// The number of bytes needed.
        len: u64,
    },
    /// A virtual address lies in a section without file bytes (`.bss`).
    #[error("{what}: VA {va:#x} is in {section}, which has no file bytes (SHT_NOBITS)")]
    NotFileBacked {
        /// What was at that address.
        what: String,
        /// The address.
        va: u64,
        /// The section name.
        section: String,
    },
    /// A range starts inside a section but runs past its end.
    #[error("{what}: VA {va:#x} + {len:#x} runs past the end of {section} at {section_end:#x}")]
    PastSectionEnd {
        /// What was read.
        what: String,
        /// The start address.
        va: u64,
        /// The requested length.
        len: u64,
        /// The section name.
        section: String,
        /// One past the section's last address.
        section_end: u64,
    },
    /// A relocation supplies a pointer that lies outside every section of the file.
    #[error(
        "{what}: relocation at VA {slot_va:#x} points to {target:#x}, outside every section of the file"
    )]
    RelocOutsideFile {
        /// What the pointer is.
        what: String,
        /// Address of the pointer slot.
        slot_va: u64,
        /// The relocated value.
        target: u64,
    },
    /// A pointer slot has no relocation and no file bytes to read a value from.
    #[error("{what}: pointer at VA {va:#x} has neither a relocation nor a file value")]
    PointerWithoutValue {
        /// What the pointer is.
        what: String,
        /// Address of the pointer slot.
        va: u64,
    },
    /// A non-zero pointer in a position-independent object without a relocation.
    #[error(
        "{what}: pointer at VA {va:#x} holds {value:#x} in the file but has no relocation; a PIC shared object needs R_X86_64_RELATIVE (or RELR) there"
    )]
    UnrelocatedPointer {
        /// What the pointer is.
        what: String,
        /// Address of the pointer slot.
        va: u64,
        /// The file value.
        value: u64,
    },
    /// A pointer slot has a relocation this tool cannot evaluate statically.
    #[error(
        "{what}: pointer at VA {va:#x} has relocation {detail}; expected R_X86_64_RELATIVE, RELR or R_X86_64_64 against a defined symbol"
    )]
    UnsupportedReloc {
        /// What the pointer is.
        what: String,
        /// Address of the pointer slot.
        va: u64,
        /// Relocation type and symbol.
        detail: String,
    },
    /// A table could not be located.
    #[error("cannot find {table}: {reason}")]
    TableNotFound {
        /// `image_list` or `hwdecode_table_list`.
        table: &'static str,
        /// What was tried.
        reason: String,
    },
    /// A table was found but does not have the expected shape.
    #[error("{table} at VA {va:#x}: {reason}")]
    BadTable {
        /// The table.
        table: &'static str,
        /// Its address.
        va: u64,
        /// What was wrong.
        reason: String,
    },
    /// An `image_list` entry holds an implausible descriptor count.
    #[error(
        "image_list[{slot}] at VA {va:#x}: descriptor count {count} is absurd (expected at most {max})"
    )]
    AbsurdCount {
        /// Slot index.
        slot: usize,
        /// Entry address.
        va: u64,
        /// The count read.
        count: u64,
        /// The largest accepted count.
        max: u64,
    },
    /// A descriptor carries a flavor key the facts do not know.
    #[error(
        "descriptor at VA {va:#x} (image_list[{slot}]): unknown flavor key {key}; expected 1, 2, 3, 17, 18 or 19"
    )]
    UnknownFlavorKey {
        /// Slot index.
        slot: usize,
        /// Descriptor address.
        va: u64,
        /// The key read.
        key: u64,
    },
    /// A getter body is not the `lea; mov; movq; ret` stub.
    #[error(
        "getter {}at VA {va:#x} is not a getter stub: {reason}",
        symbol.as_deref().map(|s| format!("{s} ")).unwrap_or_default()
    )]
    NotAStub {
        /// The getter's vendor symbol, when known.
        symbol: Option<String>,
        /// The getter's entry address.
        va: u64,
        /// The offending instruction and its address.
        reason: String,
    },
    /// A getter's symbol cannot be written to `manifest.tsv` (it is empty or holds a control
    /// character, such as a tab or a newline, which would split the row or forge a line).
    #[error(
        "getter at VA {va:#x} is named \"{symbol}\" by its symbol, which a blob directory cannot record: {reason}"
    )]
    UnwritableSymbol {
        /// The symbol, escaped (`\t`, `\n`).
        symbol: String,
        /// The getter's entry address.
        va: u64,
        /// Why it cannot be written.
        reason: String,
    },
    /// Two different getters would be written under one name with different bytes.
    #[error(
        "name {symbol} is given to getters at VA {first:#x} and {second:#x} with different blobs"
    )]
    NameConflict {
        /// The name.
        symbol: String,
        /// First getter.
        first: u64,
        /// Second getter.
        second: u64,
    },
}

/// The largest library `carve` reads (the vendor's is about 10 MB).
pub(crate) const MAX_LIBRARY_BYTES: u64 = 4 << 30;

/// The bytes of a library a carve refused ([`FileError::Carve`]), as it read them: derefs to
/// `[u8]`; its `Debug` gives the length, not the bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct LibraryBytes(pub Box<Vec<u8>>);

impl std::ops::Deref for LibraryBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for LibraryBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LibraryBytes({} bytes)", self.0.len())
    }
}

/// A [`CarveError`] in a named file, or an I/O failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// The input could not be read or the output not written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The input is not a regular file (a device, a FIFO, a directory).
    #[error("{}: not a regular file; carve reads a shared object file", path.display())]
    NotARegularFile {
        /// The input.
        path: PathBuf,
    },
    /// The input is larger than 4 GiB.
    #[error(
        "{}: {size} bytes is more than the {MAX_LIBRARY_BYTES} bytes (4 GiB) carve reads; not a library of the expected kind",
        path.display()
    )]
    TooLarge {
        /// The input.
        path: PathBuf,
        /// Its size.
        size: u64,
    },
    /// The input is not a library this tool can carve.
    #[error("{}: {error}", path.display())]
    Carve {
        /// The file.
        path: PathBuf,
        /// The error (boxed, as the bytes are, so that the error stays small).
        error: Box<CarveError>,
        /// The bytes the carve read from it (opened once): a caller that says more about what
        /// the file is reads them here, never the path again.
        data: LibraryBytes,
    },
    /// The blob directory could not be written; the destination is as it was.
    #[error(transparent)]
    Publish(#[from] PublishError),
}
