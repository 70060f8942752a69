//! Carving: from library bytes to the getters, their blobs and the manifest.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use nrtucode::{ProfKind, Region};
use nrtucode_facts::hex::lower_hex;
use nrtucode_facts::{Manifest, ManifestHeader, ManifestRow};
use sha2::{Digest, Sha256};

use crate::elf::Elf;
use crate::error::{CarveError, FileError, LibraryBytes, MAX_LIBRARY_BYTES};
use crate::locate::{Tables, locate};
use crate::naming::{GetterName, Names};
use crate::reloc::RelocMap;
use crate::stub::{LibraryView, Stub, decode_getter};
use crate::vendor_tables::{read_hwdecode_list, read_image_list};

/// How a getter got its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NamedBy {
    /// A symbol at the getter's address agrees with its position.
    Symbol,
    /// Its table position (no symbol at that address).
    Position,
    /// A symbol that differs from the position's name (reported as a note).
    SymbolOverPosition,
}

/// One carved getter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CarvedGetter {
    /// Its identity.
    pub name: GetterName,
    /// How the name was chosen.
    pub named_by: NamedBy,
    /// The getter's entry address.
    pub accessor_va: u64,
    /// The address the stub returns.
    pub blob_va: u64,
    /// The size the stub returns.
    pub size: u64,
    /// sha256 of the blob bytes.
    pub sha256: String,
    /// File offset of the blob bytes (`None` for size 0).
    pub file_offset: Option<usize>,
    /// Where the tables reference it, e.g. `image_list[7] key 1 IRAM`.
    pub refs: Vec<String>,
}

/// The result of carving one library.
#[derive(Clone, Debug)]
pub struct Carve {
    /// Provenance of the input.
    pub header: ManifestHeader,
    /// Where the tables are.
    pub tables: Tables,
    /// The getters, sorted by symbol.
    pub getters: Vec<CarvedGetter>,
    /// NULL getter slots referenced by descriptors (positional names).
    pub null_getters: Vec<String>,
    /// Observations that are not errors.
    pub notes: Vec<String>,
}

struct Carver<'a, 'e> {
    elf: &'e Elf<'a>,
    relocs: &'e RelocMap,
    names: &'e Names,
    stubs: HashMap<u64, (u64, u64)>,
    /// `false` leaves the sha256 of non-empty blobs empty for the caller to fill in.
    hash_blobs: bool,
    out: BTreeMap<String, CarvedGetter>,
    nulls: Vec<String>,
    notes: Vec<String>,
}

impl Carver<'_, '_> {
    /// Decodes the getter at `entry`, whose vendor name by position is `symbol`.
    fn stub(&mut self, entry: u64, symbol: &str, what: &str) -> Result<(u64, u64), CarveError> {
        if let Some(s) = self.stubs.get(&entry) {
            return Ok(*s);
        }
        let view = LibraryView {
            elf: self.elf,
            relocs: self.relocs,
            what,
        };
        let Stub { blob_va, size } = decode_getter(&view, entry).map_err(|e| match e {
            // Name the getter: its symbol at that address, or the vendor's name for its place.
            CarveError::NotAStub {
                symbol: None,
                va,
                reason,
            } => CarveError::NotAStub {
                symbol: Some(
                    self.elf
                        .functions_at(entry)
                        .first()
                        .map_or_else(|| symbol.to_owned(), |s| (*s).to_owned()),
                ),
                va,
                reason,
            },
            e => e,
        })?;
        self.stubs.insert(entry, (blob_va, size));
        Ok((blob_va, size))
    }

    fn add(
        &mut self,
        position: GetterName,
        entry: u64,
        reference: String,
    ) -> Result<(), CarveError> {
        let (blob_va, size) = self.stub(
            entry,
            &position.symbol,
            &format!("getter {} ({reference})", position.symbol),
        )?;
        let symbols = self.elf.functions_at(entry);
        let (name, named_by) = if symbols.is_empty() {
            (position, NamedBy::Position)
        } else if symbols.contains(&position.symbol.as_str()) {
            (position, NamedBy::Symbol)
        } else {
            let sym = symbols[0];
            self.notes.push(format!(
                "{reference}: getter at {entry:#x} is named {} by symbol, {} by position",
                symbols.join("/"),
                position.symbol
            ));
            let name = match self.names.getter(sym) {
                Some(g) => GetterName::from(g),
                None => GetterName {
                    symbol: sym.to_owned(),
                    ..position
                },
            };
            (name, NamedBy::SymbolOverPosition)
        };
        if let Some(reason) = nrtucode_facts::manifest::symbol_problem(&name.symbol) {
            return Err(CarveError::UnwritableSymbol {
                symbol: name.symbol.escape_debug().to_string(),
                va: entry,
                reason,
            });
        }
        if let Some(existing) = self.out.get_mut(&name.symbol) {
            if existing.accessor_va != entry {
                let same = existing.blob_va == blob_va && existing.size == size;
                if !same {
                    return Err(CarveError::NameConflict {
                        symbol: name.symbol,
                        first: existing.accessor_va,
                        second: entry,
                    });
                }
                self.notes.push(format!(
                    "{}: getters at {:#x} and {entry:#x} return the same blob",
                    name.symbol, existing.accessor_va
                ));
            }
            existing.refs.push(reference);
            return Ok(());
        }
        let what = format!("blob of {} (getter at {entry:#x})", name.symbol);
        let (sha256, file_offset) = if size == 0 {
            (lower_hex(&Sha256::digest(b"")), None)
        } else {
            let off = self.elf.offset_of(blob_va, size, &what)?;
            let bytes = self.elf.bytes_at(blob_va, size, &what)?;
            let sha256 = if self.hash_blobs {
                lower_hex(&Sha256::digest(bytes))
            } else {
                String::new()
            };
            (sha256, Some(off))
        };
        self.out.insert(
            name.symbol.clone(),
            CarvedGetter {
                name,
                named_by,
                accessor_va: entry,
                blob_va,
                size,
                sha256,
                file_offset,
                refs: vec![reference],
            },
        );
        Ok(())
    }
}

/// Carves library bytes. `source` is the file name recorded in the manifest header.
pub fn carve_bytes(data: &[u8], source: &str) -> Result<Carve, CarveError> {
    let digest = || lower_hex(&Sha256::digest(data));
    if data.len() < PARALLEL_HASH_BYTES {
        return carve_with(data, source, digest, true);
    }
    // The input's own sha256 (for the manifest header) is half the hashing work: do it on
    // another core while this one decodes and hashes the blobs.
    std::thread::scope(|s| {
        let hash = s.spawn(digest);
        carve_with(
            data,
            source,
            || hash.join().unwrap_or_else(|_| digest()),
            true,
        )
    })
}

/// Inputs at least this large hash themselves on a second thread.
const PARALLEL_HASH_BYTES: usize = 1 << 20;

/// [`carve_bytes`] with the input's sha256 from `source_sha256`; with `hash_blobs` false the
/// sha256 of every non-empty blob is left empty (the caller hashes them while writing).
pub(crate) fn carve_with(
    data: &[u8],
    source: &str,
    source_sha256: impl FnOnce() -> String,
    hash_blobs: bool,
) -> Result<Carve, CarveError> {
    let elf = Elf::parse(data)?;
    let relocs = RelocMap::read(&elf)?;
    let tables = locate(&elf, &relocs)?;
    let image = read_image_list(&elf, &relocs, tables.image_list)?;
    let hw = read_hwdecode_list(&elf, &relocs, tables.hwdecode_list)?;
    let names = Names::new();
    let mut c = Carver {
        elf: &elf,
        relocs: &relocs,
        names: &names,
        stubs: HashMap::new(),
        hash_blobs,
        out: BTreeMap::new(),
        nulls: Vec::new(),
        notes: Vec::new(),
    };
    for slot in &image {
        for d in &slot.descriptors {
            for (region, g) in Region::ALL.into_iter().zip(&d.getters) {
                let position = names.image(slot.idx, d.va, d.key, region)?;
                let reference = format!("image_list[{}] key {} {}", slot.idx, d.key, region.name());
                match g.va() {
                    Some(entry) => c.add(position, entry, reference)?,
                    None => c.nulls.push(position.symbol),
                }
            }
        }
    }
    for slot in &hw {
        for (kind, g) in ProfKind::ALL.into_iter().zip([slot.cam, slot.table]) {
            if let Some(entry) = g.va() {
                let position = names.prof(slot.idx, slot.entry_va, kind)?;
                let reference = format!("hwdecode_table_list[{}] PROF_{}", slot.idx, kind.name());
                c.add(position, entry, reference)?;
            }
        }
    }
    if elf.reads_program_headers() {
        c.notes.push(
            "no usable section header table: read through the program headers (PT_LOAD, PT_DYNAMIC)"
                .into(),
        );
    }
    let mut null_getters = c.nulls;
    null_getters.sort();
    null_getters.dedup();
    let header = ManifestHeader {
        source: source.to_owned(),
        source_size: data.len() as u64,
        source_sha256: source_sha256(),
        build_id: elf.build_id_hex().unwrap_or_else(|| "unknown".into()),
    };
    Ok(Carve {
        header,
        tables,
        getters: c.out.into_values().collect(),
        null_getters,
        notes: c.notes,
    })
}

/// The name a manifest records for the library at `path`: its file name.
pub(crate) fn source_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// A library opened for reading: a regular file of at most [`MAX_LIBRARY_BYTES`].
pub(crate) struct OpenLibrary {
    path: std::path::PathBuf,
    file: std::fs::File,
    len: u64,
}

/// Opens the file at `path` for [`read_opened`], refusing anything but a regular file of at
/// most [`MAX_LIBRARY_BYTES`] without reading a byte (a device such as `/dev/zero` would never
/// end). On Unix the open does not block: a FIFO is refused instead of waiting for a writer.
pub(crate) fn open_library(path: &Path) -> Result<OpenLibrary, FileError> {
    let io = |source| FileError::Io {
        path: path.to_owned(),
        source,
    };
    #[cfg(unix)]
    let file = {
        use std::os::unix::fs::OpenOptionsExt as _;
        // O_NONBLOCK (its value differs between architectures): taken from rustix.
        let nonblock = rustix::fs::OFlags::NONBLOCK.bits() as i32;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nonblock)
            .open(path)
            .map_err(io)?
    };
    #[cfg(not(unix))]
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(FileError::NotARegularFile {
            path: path.to_owned(),
        });
    }
    if meta.len() > MAX_LIBRARY_BYTES {
        return Err(FileError::TooLarge {
            path: path.to_owned(),
            size: meta.len(),
        });
    }
    Ok(OpenLibrary {
        path: path.to_owned(),
        file,
        len: meta.len(),
    })
}

/// Reads a library [`open_library`] opened.
pub(crate) fn read_opened(lib: OpenLibrary) -> Result<Vec<u8>, FileError> {
    use std::io::Read as _;
    let OpenLibrary { path, file, len } = lib;
    let mut data = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    // The file may grow while it is read: read one byte past the limit to notice.
    let read = file.take(MAX_LIBRARY_BYTES + 1).read_to_end(&mut data);
    read.map_err(|source| FileError::Io {
        path: path.clone(),
        source,
    })?;
    if data.len() as u64 > MAX_LIBRARY_BYTES {
        return Err(FileError::TooLarge {
            path,
            size: data.len() as u64,
        });
    }
    Ok(data)
}

/// Reads the file at `path` ([`open_library`], then [`read_opened`]).
pub(crate) fn read_library(path: &Path) -> Result<Vec<u8>, FileError> {
    read_opened(open_library(path)?)
}

/// Reads and carves the file at `path`.
pub fn carve_file(path: &Path) -> Result<(Carve, Vec<u8>), FileError> {
    let data = read_library(path)?;
    match carve_bytes(&data, &source_name(path)) {
        Ok(carve) => Ok((carve, data)),
        Err(error) => Err(FileError::Carve {
            path: path.to_owned(),
            error: Box::new(error),
            data: LibraryBytes(Box::new(data)),
        }),
    }
}

impl Carve {
    /// The blob-directory manifest of this carve.
    pub fn manifest(&self) -> Manifest {
        Manifest {
            header: self.header.clone(),
            rows: self
                .getters
                .iter()
                .map(|g| ManifestRow {
                    id: g.name.clone(),
                    size: g.size,
                    sha256: g.sha256.clone(),
                    blob_va: g.blob_va,
                    file: (g.size > 0).then(|| format!("{}.bin", g.sha256)),
                })
                .collect(),
        }
    }

    /// Number of distinct non-empty blob contents.
    pub fn distinct_blobs(&self) -> usize {
        let mut shas: Vec<&str> = self
            .getters
            .iter()
            .filter(|g| g.size > 0)
            .map(|g| g.sha256.as_str())
            .collect();
        shas.sort_unstable();
        shas.dedup();
        shas.len()
    }

    /// The bytes of `getter` inside the carved file `data` (`None` if `data` is not the file
    /// that was carved and is too short).
    pub fn blob<'d>(&self, data: &'d [u8], getter: &CarvedGetter) -> Option<&'d [u8]> {
        match getter.file_offset {
            Some(off) => data.get(off..off.checked_add(usize::try_from(getter.size).ok()?)?),
            None => Some(&[]),
        }
    }
}
