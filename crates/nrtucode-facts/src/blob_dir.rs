//! Reading a blob directory: the one reader every consumer shares.
//!
//! The core's build script (`NRTUCODE_BLOB_DIR`), `nrtucode check`, `nrtucode carve` (which
//! must know whether a destination is an earlier carve before replacing it) and any other tool
//! read a blob directory through [`read_blob_dir`], so one directory is accepted or refused,
//! with the same message, by all of them:
//!
//! * [`read_blob_dir`] reads the structure, without reading a blob byte: `manifest.tsv` is a
//!   regular file (not a symbolic link, FIFO, device or socket; it is opened non-blocking and
//!   checked again through the open descriptor) of at most [`MAX_MANIFEST_BYTES`], in the
//!   format of [`crate::manifest`]; every symbol has one row; a non-empty row names a file, an
//!   empty row none; every file name is `<sha256>.bin`, the row's sha256 in lowercase hex (so
//!   two rows naming one file agree on its content), and rows naming one file agree on its
//!   size; every named file is a regular file whose size (from its metadata) is the row's.
//! * [`BlobDir::check_contents`] hashes every named file (streaming, opened non-blocking, the
//!   size checked again through the descriptor before a byte is read) against its name.
//! * [`BlobDir::check_facts`] compares the rows with the facts: every symbol is in the facts
//!   with the row's size and cell, an empty row has the empty sha256, and every cell is whole
//!   (a generation/class/engine/variant with any region has all four; a profiler slot has both
//!   kinds), as the core embeds whole cells.
//! * [`check_blob_dir`] is all three, reporting every problem found: what `nrtucode check`
//!   and the build script accept. A re-carve needs only the first two (a carve of a library
//!   the facts do not describe is still a carve).
//! * [`read_checked_blob_dir`] is [`check_blob_dir`] keeping the bytes it hashed, for a
//!   packer: each file is opened once (non-blocking, no link followed), read within its
//!   row's size, and the bytes checked are the bytes used; nothing is read again by name.
//!
//! ```no_run
//! use std::path::Path;
//!
//! match nrtucode_facts::blob_dir::check_blob_dir(Path::new("blobs")) {
//!     Ok(dir) => println!("{} rows, {} files", dir.manifest.rows.len(), dir.files.len()),
//!     Err(e) => eprintln!("{e}"),
//! }
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs::{self, File};
use std::io::Read as _;
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use crate::hex::lower_hex;
use crate::input_file::{self, Links};
use crate::manifest::{MANIFEST_FILE, Manifest, ManifestError};

/// The largest `manifest.tsv` read (a carve of the vendor's library writes about 100 KB).
pub const MAX_MANIFEST_BYTES: u64 = 4 << 20;

/// `true` for a blob file name as the carve writes it: 64 lowercase hex digits and `.bin`.
pub fn is_blob_file_name(name: &str) -> bool {
    name.strip_suffix(".bin")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

/// One thing wrong with a blob directory. The message names the file and, for a row, its
/// symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BlobDirProblem {
    /// `manifest.tsv` (or the directory) is missing or unreadable.
    NoManifest(String),
    /// A file the reader needs is not a regular file (nothing was read from it).
    NotRegular {
        /// The file.
        file: PathBuf,
        /// What it is instead: `a FIFO`, `a symbolic link`, ...
        kind: String,
    },
    /// `manifest.tsv` is larger than [`MAX_MANIFEST_BYTES`].
    ManifestTooLarge {
        /// Its size (at least).
        size: u64,
    },
    /// `manifest.tsv` does not parse.
    BadManifest(ManifestError),
    /// A symbol has two rows.
    DuplicateSymbol(String),
    /// A non-empty row has file `-`, an empty row names a file, or a file name is not the
    /// carve's `<sha256>.bin` for the row, or rows naming one file disagree.
    FileColumn {
        /// Symbol.
        symbol: String,
        /// Explanation.
        detail: String,
    },
    /// A referenced file is missing or unreadable.
    MissingFile {
        /// Symbol.
        symbol: String,
        /// File.
        file: PathBuf,
        /// I/O error.
        error: String,
    },
    /// A file's size differs from its row's.
    FileSize {
        /// Symbol.
        symbol: String,
        /// File.
        file: PathBuf,
        /// Manifest size.
        expected: u64,
        /// File size.
        actual: u64,
    },
    /// A file's SHA-256 differs from its name (the row's sha256).
    FileHash {
        /// Symbol.
        symbol: String,
        /// File.
        file: PathBuf,
        /// Manifest sha256.
        expected: String,
        /// Actual sha256.
        actual: String,
    },
    /// The facts do not list the symbol.
    NotInFacts(String),
    /// The row disagrees with the facts.
    FactsMismatch {
        /// Symbol.
        symbol: String,
        /// Explanation.
        detail: String,
    },
    /// A cell is only partly present.
    Incomplete {
        /// The cell, e.g. `CAYMAN NX ACT PERF`.
        cell: String,
        /// The symbols it lacks.
        missing: Vec<String>,
    },
}

impl fmt::Display for BlobDirProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoManifest(e) => write!(f, "{MANIFEST_FILE}: {e}"),
            Self::NotRegular { file, kind } => write!(
                f,
                "{}: is {kind}, not a regular file; nothing was read from it",
                file.display()
            ),
            Self::ManifestTooLarge { size } => write!(
                f,
                "{MANIFEST_FILE}: {size} bytes or more, larger than the {MAX_MANIFEST_BYTES} bytes a manifest may have"
            ),
            Self::BadManifest(e) => write!(f, "{e}"),
            Self::DuplicateSymbol(s) => write!(f, "{MANIFEST_FILE}: {s} has more than one row"),
            Self::FileColumn { symbol, detail } => {
                write!(f, "{MANIFEST_FILE}: {symbol}: {detail}")
            }
            Self::MissingFile {
                symbol,
                file,
                error,
            } => write!(
                f,
                "{}: cannot read the blob of {symbol}: {error}",
                file.display()
            ),
            Self::FileSize {
                symbol,
                file,
                expected,
                actual,
            } => write!(
                f,
                "{}: {actual} bytes, expected {expected} (size of {symbol} in {MANIFEST_FILE})",
                file.display()
            ),
            Self::FileHash {
                symbol,
                file,
                expected,
                actual,
            } => write!(
                f,
                "{}: SHA-256 {actual}, expected {expected} (blob of {symbol}; corrupted file?)",
                file.display()
            ),
            Self::NotInFacts(s) => write!(f, "{MANIFEST_FILE}: {s} is not in the facts"),
            Self::FactsMismatch { symbol, detail } => {
                write!(f, "{MANIFEST_FILE}: {symbol}: {detail}")
            }
            Self::Incomplete { cell, missing } => write!(
                f,
                "{MANIFEST_FILE}: {cell} is incomplete, missing {}",
                missing.join(", ")
            ),
        }
    }
}

/// A blob directory that could not be read or did not pass a check: every problem found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobDirError {
    /// The directory, as the caller named it.
    pub dir: PathBuf,
    /// What is wrong (never empty).
    pub problems: Vec<BlobDirProblem>,
}

impl fmt::Display for BlobDirError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{}: {p}", self.dir.display())?;
        }
        Ok(())
    }
}

impl std::error::Error for BlobDirError {}

/// A directory entry the manifest does not name (neither `manifest.tsv` nor a listed file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unlisted {
    /// Its name (lossily decoded).
    pub name: String,
    /// Whether it is a regular file (not a directory, link, FIFO, ...).
    pub regular: bool,
}

/// A blob directory whose structure [`read_blob_dir`] accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobDir {
    /// The directory, as the caller named it.
    pub dir: PathBuf,
    /// The parsed manifest.
    pub manifest: Manifest,
    /// Every file a row names, with its size (checked equal to its rows' size).
    pub files: BTreeMap<String, u64>,
    /// The other directory entries, sorted by name.
    pub unlisted: Vec<Unlisted>,
}

/// What a file that is not a regular file is, for messages.
fn kind_of(meta: &fs::Metadata) -> String {
    input_file::kind_of(meta).into()
}

/// Why a file could not be opened as a regular file.
enum OpenError {
    /// It is something else (named by [`kind_of`]); nothing was read.
    NotRegular(String),
    /// It could not be opened.
    Io(std::io::Error),
}

/// Opens `path` for reading only if it is a regular file: checked without following a link
/// before opening, opened non-blocking without following a link (a FIFO swapped in between
/// cannot block the open), and checked again on the descriptor. Returns the file and its size.
fn open_regular(path: &Path) -> Result<(File, u64), OpenError> {
    let meta = fs::symlink_metadata(path).map_err(OpenError::Io)?;
    if !meta.is_file() {
        return Err(OpenError::NotRegular(kind_of(&meta)));
    }
    let (file, meta) = input_file::open_nonblocking(path, Links::Refuse).map_err(OpenError::Io)?;
    if !meta.is_file() {
        return Err(OpenError::NotRegular(kind_of(&meta)));
    }
    Ok((file, meta.len()))
}

/// The manifest of `dir`, read within [`MAX_MANIFEST_BYTES`].
fn read_manifest(dir: &Path) -> Result<Manifest, BlobDirProblem> {
    let path = dir.join(MANIFEST_FILE);
    let (file, size) = open_regular(&path).map_err(|e| match e {
        OpenError::NotRegular(kind) => BlobDirProblem::NotRegular { file: path, kind },
        OpenError::Io(e) => BlobDirProblem::NoManifest(e.to_string()),
    })?;
    if size > MAX_MANIFEST_BYTES {
        return Err(BlobDirProblem::ManifestTooLarge { size });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    // The file may grow while it is read: read one byte past the limit to notice.
    file.take(MAX_MANIFEST_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| BlobDirProblem::NoManifest(e.to_string()))?;
    if bytes.len() as u64 > MAX_MANIFEST_BYTES {
        return Err(BlobDirProblem::ManifestTooLarge {
            size: bytes.len() as u64,
        });
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| BlobDirProblem::NoManifest("stream did not contain valid UTF-8".into()))?;
    Manifest::parse(&text).map_err(BlobDirProblem::BadManifest)
}

/// Reads the structure of the blob directory `dir` (see the module documentation); reads no
/// blob byte. `Err` lists every structural problem.
pub fn read_blob_dir(dir: &Path) -> Result<BlobDir, BlobDirError> {
    let (read, problems) = read_structure(dir);
    match read {
        Some(blob_dir) if problems.is_empty() => Ok(blob_dir),
        _ => Err(BlobDirError {
            dir: dir.to_owned(),
            problems,
        }),
    }
}

/// [`read_blob_dir`], [`BlobDir::check_facts`] and [`BlobDir::check_contents`]: every problem
/// found, the facts' ones even when the structure has problems too. What `nrtucode check`
/// and the core's build script accept.
pub fn check_blob_dir(dir: &Path) -> Result<BlobDir, BlobDirError> {
    let (read, mut problems) = read_structure(dir);
    let Some(blob_dir) = read else {
        return Err(BlobDirError {
            dir: dir.to_owned(),
            problems,
        });
    };
    problems.extend(blob_dir.facts_problems());
    if problems.is_empty() {
        problems.extend(blob_dir.content_problems());
    }
    if problems.is_empty() {
        Ok(blob_dir)
    } else {
        Err(BlobDirError {
            dir: dir.to_owned(),
            problems,
        })
    }
}

/// A blob directory [`read_checked_blob_dir`] accepted, with the bytes it checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedBlobDir {
    /// The directory's structure.
    pub dir: BlobDir,
    /// The bytes of every file a row names, by file name: the bytes whose SHA-256 was checked
    /// against the name, read once through the descriptor that was checked (never re-opened
    /// by name, no symbolic link followed), each at most its row's size.
    pub contents: BTreeMap<String, Vec<u8>>,
}

/// [`check_blob_dir`], keeping the bytes it hashed: what a packer packs is exactly what was
/// checked, even if a file is replaced (by a symbolic link, a FIFO, other bytes) afterwards.
pub fn read_checked_blob_dir(dir: &Path) -> Result<CheckedBlobDir, BlobDirError> {
    let (read, mut problems) = read_structure(dir);
    let Some(blob_dir) = read else {
        return Err(BlobDirError {
            dir: dir.to_owned(),
            problems,
        });
    };
    problems.extend(blob_dir.facts_problems());
    let mut contents = BTreeMap::new();
    if problems.is_empty() {
        let (content_problems, kept) = blob_dir.contents(true);
        problems.extend(content_problems);
        contents = kept;
    }
    if problems.is_empty() {
        Ok(CheckedBlobDir {
            dir: blob_dir,
            contents,
        })
    } else {
        Err(BlobDirError {
            dir: dir.to_owned(),
            problems,
        })
    }
}

/// The directory as read (when the manifest parsed) and the structural problems found.
fn read_structure(dir: &Path) -> (Option<BlobDir>, Vec<BlobDirProblem>) {
    let mut problems = Vec::new();
    let manifest = match read_manifest(dir) {
        Ok(m) => m,
        Err(p) => return (None, vec![p]),
    };
    let mut seen = BTreeSet::new();
    // File -> (size, sha256, first symbol).
    let mut files: BTreeMap<String, (u64, String, String)> = BTreeMap::new();
    for row in &manifest.rows {
        let sym = &row.symbol;
        if !seen.insert(sym.as_str()) {
            problems.push(BlobDirProblem::DuplicateSymbol(sym.clone()));
        }
        let column = |detail: String| BlobDirProblem::FileColumn {
            symbol: sym.clone(),
            detail,
        };
        match (&row.file, row.size) {
            (None, 0) => {}
            (Some(f), 0) => problems.push(column(format!(
                "size 0 but file {f}; an empty blob has file -"
            ))),
            (None, n) => problems.push(column(format!("size {n} but file -"))),
            (Some(name), _) if !is_blob_file_name(name) => problems.push(column(format!(
                "file {name:?} is not a blob file name (<sha256>.bin, 64 lowercase hex digits)"
            ))),
            (Some(name), _) if name.strip_suffix(".bin") != Some(row.sha256.as_str()) => problems
                .push(column(format!(
                    "file {name} is not named after the row's sha256 {}",
                    row.sha256
                ))),
            (Some(name), size) => match files.get(name) {
                Some((first_size, _, first)) if *first_size != size => problems.push(column(
                    format!("file {name} is also the blob of {first} with size {first_size}"),
                )),
                Some(_) => {}
                None => {
                    files.insert(name.clone(), (size, row.sha256.clone(), sym.clone()));
                }
            },
        }
    }
    let mut sizes = BTreeMap::new();
    for (name, (size, _, symbol)) in &files {
        let path = dir.join(name);
        match fs::symlink_metadata(&path) {
            Err(e) => problems.push(BlobDirProblem::MissingFile {
                symbol: symbol.clone(),
                file: path,
                error: e.to_string(),
            }),
            Ok(meta) if !meta.is_file() => problems.push(BlobDirProblem::NotRegular {
                file: path,
                kind: kind_of(&meta),
            }),
            Ok(meta) if meta.len() != *size => problems.push(BlobDirProblem::FileSize {
                symbol: symbol.clone(),
                file: path,
                expected: *size,
                actual: meta.len(),
            }),
            Ok(_) => {}
        }
        sizes.insert(name.clone(), *size);
    }
    let mut unlisted = Vec::new();
    match fs::read_dir(dir) {
        Ok(entries) => {
            for entry in entries {
                let entry = match entry {
                    Ok(e) => e,
                    Err(e) => {
                        problems.push(BlobDirProblem::NoManifest(e.to_string()));
                        break;
                    }
                };
                let name = entry.file_name().to_string_lossy().into_owned();
                if name == MANIFEST_FILE || sizes.contains_key(&name) {
                    continue;
                }
                let regular = entry.file_type().is_ok_and(|t| t.is_file());
                unlisted.push(Unlisted { name, regular });
            }
        }
        Err(e) => problems.push(BlobDirProblem::NoManifest(e.to_string())),
    }
    unlisted.sort_by(|a, b| a.name.cmp(&b.name));
    let blob_dir = BlobDir {
        dir: dir.to_owned(),
        manifest,
        files: sizes,
        unlisted,
    };
    (Some(blob_dir), problems)
}

/// The SHA-256 of the regular file `path`, which must hold `size` bytes (checked on the
/// descriptor before reading), read in pieces; with `keep`, also the bytes read (the bytes
/// hashed: the file is opened once, never again by name).
fn hash_file(path: &Path, size: u64, keep: bool) -> Result<(String, Vec<u8>), HashError> {
    let (mut file, actual) = open_regular(path).map_err(|e| match e {
        OpenError::NotRegular(kind) => HashError::NotRegular(kind),
        OpenError::Io(e) => HashError::Io(e),
    })?;
    if actual != size {
        return Err(HashError::Size(actual));
    }
    let mut kept = Vec::new();
    if keep {
        // `size` is the file's, checked against the manifest and (before contents are read)
        // against the facts: bounded.
        let size = usize::try_from(size).map_err(|_| HashError::Size(size))?;
        kept.try_reserve_exact(size)
            .map_err(|e| HashError::Io(std::io::Error::other(e)))?;
    }
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0u64;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(HashError::Io(e)),
        };
        total += n as u64;
        if total > size {
            return Err(HashError::Size(total));
        }
        hasher.update(&buf[..n]);
        if keep {
            kept.extend_from_slice(&buf[..n]);
        }
    }
    if total != size {
        return Err(HashError::Size(total));
    }
    Ok((lower_hex(&hasher.finalize()), kept))
}

enum HashError {
    NotRegular(String),
    Io(std::io::Error),
    Size(u64),
}

impl BlobDir {
    /// The first row naming `file`.
    fn symbol_of(&self, file: &str) -> String {
        self.manifest
            .rows
            .iter()
            .find(|r| r.file.as_deref() == Some(file))
            .map(|r| r.symbol.clone())
            .unwrap_or_default()
    }

    fn content_problems(&self) -> Vec<BlobDirProblem> {
        self.contents(false).0
    }

    /// Hashes every named file against its name; with `keep`, also returns the bytes hashed
    /// (by file name).
    fn contents(&self, keep: bool) -> (Vec<BlobDirProblem>, BTreeMap<String, Vec<u8>>) {
        let mut problems = Vec::new();
        let mut contents = BTreeMap::new();
        for (name, &size) in &self.files {
            let path = self.dir.join(name);
            let symbol = self.symbol_of(name);
            let expected = name.trim_end_matches(".bin");
            match hash_file(&path, size, keep) {
                Ok((actual, bytes)) if actual == expected => {
                    if keep {
                        contents.insert(name.clone(), bytes);
                    }
                }
                Ok((actual, _)) => problems.push(BlobDirProblem::FileHash {
                    symbol,
                    file: path,
                    expected: expected.to_owned(),
                    actual,
                }),
                Err(HashError::NotRegular(kind)) => {
                    problems.push(BlobDirProblem::NotRegular { file: path, kind })
                }
                Err(HashError::Io(e)) => problems.push(BlobDirProblem::MissingFile {
                    symbol,
                    file: path,
                    error: e.to_string(),
                }),
                Err(HashError::Size(actual)) => problems.push(BlobDirProblem::FileSize {
                    symbol,
                    file: path,
                    expected: size,
                    actual,
                }),
            }
        }
        (problems, contents)
    }

    /// Hashes every file the manifest names against its name (see the module
    /// documentation): `Ok` when each holds exactly the bytes its name says.
    pub fn check_contents(&self) -> Result<(), BlobDirError> {
        self.result(self.content_problems())
    }

    fn facts_problems(&self) -> Vec<BlobDirProblem> {
        let mut problems = Vec::new();
        let facts = crate::getters();
        let empty = lower_hex(&Sha256::digest(b""));
        for row in &self.manifest.rows {
            let sym = &row.symbol;
            if row.size == 0 && row.sha256 != empty {
                problems.push(BlobDirProblem::FactsMismatch {
                    symbol: sym.clone(),
                    detail: format!(
                        "size 0 but sha256 {} (the empty sha256 is {empty})",
                        row.sha256
                    ),
                });
            }
            let Some(g) = facts.iter().find(|g| g.symbol == sym) else {
                problems.push(BlobDirProblem::NotInFacts(sym.clone()));
                continue;
            };
            let mut diffs = Vec::new();
            if g.size as u64 != row.size {
                diffs.push(format!("size {} but the facts say {}", row.size, g.size));
            }
            let fields = [
                ("gen", g.gen_name, &row.gen_name),
                ("class", g.class, &row.class),
                ("engine", g.engine, &row.engine),
                ("variant", g.variant, &row.variant),
                ("region", g.region, &row.region),
            ];
            for (what, want, got) in fields {
                if want != got {
                    diffs.push(format!("{what} {got} but the facts say {want}"));
                }
            }
            if !diffs.is_empty() {
                problems.push(BlobDirProblem::FactsMismatch {
                    symbol: sym.clone(),
                    detail: diffs.join("; "),
                });
            }
        }
        let present: BTreeSet<&str> = self
            .manifest
            .rows
            .iter()
            .map(|r| r.symbol.as_str())
            .collect();
        let mut cells: BTreeMap<String, Vec<&'static str>> = BTreeMap::new();
        for g in facts.iter().filter(|g| g.is_resolver_reachable()) {
            let cell = format!("{} {} {} {}", g.gen_name, g.class, g.engine, g.variant);
            cells.entry(cell).or_default().push(g.symbol);
        }
        for (cell, symbols) in cells {
            let have = symbols.iter().filter(|s| present.contains(**s)).count();
            if have > 0 && have < symbols.len() {
                problems.push(BlobDirProblem::Incomplete {
                    cell,
                    missing: symbols
                        .iter()
                        .filter(|s| !present.contains(**s))
                        .map(|s| s.to_string())
                        .collect(),
                });
            }
        }
        problems
    }

    /// Compares the rows with the facts (see the module documentation); reads no file.
    pub fn check_facts(&self) -> Result<(), BlobDirError> {
        self.result(self.facts_problems())
    }

    fn result(&self, problems: Vec<BlobDirProblem>) -> Result<(), BlobDirError> {
        if problems.is_empty() {
            Ok(())
        } else {
            Err(BlobDirError {
                dir: self.dir.clone(),
                problems,
            })
        }
    }

    /// Remarks that are not problems: `.bin` files no row names.
    pub fn warnings(&self) -> Vec<String> {
        self.unlisted
            .iter()
            .filter(|u| is_blob_file_name(&u.name))
            .map(|u| {
                format!(
                    "{}: not referenced by {MANIFEST_FILE}",
                    self.dir.join(&u.name).display()
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::{ManifestHeader, ManifestRow};
    use crate::{GetterId, fixture_bytes, getters};

    /// A fresh directory under the system's temporary directory, removed with its contents
    /// when dropped (also when the test panics).
    struct Fresh(PathBuf);

    impl std::ops::Deref for Fresh {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Fresh {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn fresh(name: &str) -> Fresh {
        let dir =
            std::env::temp_dir().join(format!("nrtucode-facts-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Fresh(dir)
    }

    /// A complete cell (CAYMAN NX ACT PERF) written as a carve would.
    fn write_cell(dir: &Path) -> Manifest {
        let mut rows = Vec::new();
        for g in getters()
            .iter()
            .filter(|g| g.id.image_name() == "CAYMAN_NX_ACT_PERF")
        {
            let bytes = fixture_bytes(g);
            let sha256 = lower_hex(&Sha256::digest(&bytes));
            let file = (!bytes.is_empty()).then(|| format!("{sha256}.bin"));
            if let Some(f) = &file {
                fs::write(dir.join(f), &bytes).unwrap();
            }
            rows.push(ManifestRow {
                id: GetterId::from(g),
                size: g.size as u64,
                sha256,
                blob_va: g.blob_va,
                file,
            });
        }
        let manifest = Manifest {
            header: ManifestHeader {
                source: "lib.so".into(),
                source_size: 1,
                source_sha256: "0".repeat(64),
                build_id: "unknown".into(),
            },
            rows,
        };
        fs::write(dir.join(MANIFEST_FILE), manifest.render()).unwrap();
        manifest
    }

    /// Makes a FIFO at `path` (with mkfifo(1): the crate has no unsafe code for mkfifo(3)).
    fn mkfifo(path: &Path) {
        let made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(made.success());
    }

    fn problems(dir: &Path) -> Vec<BlobDirProblem> {
        check_blob_dir(dir).map(drop).unwrap_err().problems
    }

    #[test]
    fn a_carved_cell_is_accepted() {
        let dir = fresh("good");
        let manifest = write_cell(&dir);
        let read = check_blob_dir(&dir).unwrap();
        assert_eq!(read.manifest.render(), manifest.render());
        assert!(read.unlisted.is_empty());
    }

    #[test]
    fn a_duplicate_row_is_refused_even_with_a_blob_of_the_right_size() {
        let dir = fresh("duplicate");
        let mut manifest = write_cell(&dir);
        // A second IRAM row whose blob is another file of the same size.
        let mut twin = manifest.rows[0].clone();
        let other = vec![0x55u8; twin.size as usize];
        twin.sha256 = lower_hex(&Sha256::digest(&other));
        twin.file = Some(format!("{}.bin", twin.sha256));
        fs::write(dir.join(twin.file.as_ref().unwrap()), &other).unwrap();
        manifest.rows.insert(0, twin);
        fs::write(dir.join(MANIFEST_FILE), manifest.render()).unwrap();
        let p = problems(&dir);
        assert!(
            p.contains(&BlobDirProblem::DuplicateSymbol(
                manifest.rows[0].symbol.clone()
            )),
            "{p:?}"
        );
        assert!(read_blob_dir(&dir).is_err());
    }

    #[test]
    fn a_file_name_that_is_not_the_rows_sha256_is_refused() {
        let dir = fresh("names");
        let mut manifest = write_cell(&dir);
        fs::write(dir.join("thesis.doc"), "mine").unwrap();
        manifest.rows[0].file = Some("thesis.doc".into());
        fs::write(dir.join(MANIFEST_FILE), manifest.render()).unwrap();
        let e = read_blob_dir(&dir).unwrap_err().to_string();
        assert!(e.contains("\"thesis.doc\" is not a blob file name"), "{e}");
        // A blob name, but another row's content.
        let mut manifest = write_cell(&dir);
        manifest.rows[0].file = manifest.rows[1].file.clone();
        fs::write(dir.join(MANIFEST_FILE), manifest.render()).unwrap();
        let e = read_blob_dir(&dir).unwrap_err().to_string();
        assert!(e.contains("is not named after the row's sha256"), "{e}");
    }

    #[test]
    fn sizes_come_from_metadata_and_contents_from_the_name() {
        let dir = fresh("sizes");
        let manifest = write_cell(&dir);
        let file = dir.join(manifest.rows[0].file.as_ref().unwrap());
        let len = fs::metadata(&file).unwrap().len();
        // A sparse file far larger than the row: refused from its metadata.
        File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_len(1 << 40)
            .unwrap();
        let p = problems(&dir);
        assert!(
            matches!(&p[..], [BlobDirProblem::FileSize { actual, .. }] if *actual == 1 << 40),
            "{p:?}"
        );
        // The right size, other bytes: refused by the hash, naming the file.
        let f = File::options().write(true).open(&file).unwrap();
        f.set_len(len).unwrap();
        drop(f);
        let mut bytes = fs::read(&file).unwrap();
        bytes[0] ^= 1;
        fs::write(&file, &bytes).unwrap();
        let p = problems(&dir);
        assert!(matches!(&p[..], [BlobDirProblem::FileHash { .. }]), "{p:?}");
        assert!(read_blob_dir(&dir).unwrap().check_contents().is_err());
    }

    #[test]
    fn an_oversized_manifest_is_refused_without_reading_it_whole() {
        let dir = fresh("large");
        write_cell(&dir);
        let f = File::options()
            .append(true)
            .open(dir.join(MANIFEST_FILE))
            .unwrap();
        f.set_len(MAX_MANIFEST_BYTES + 1).unwrap();
        let p = problems(&dir);
        assert!(
            matches!(&p[..], [BlobDirProblem::ManifestTooLarge { .. }]),
            "{p:?}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn fifos_devices_and_links_are_refused_without_blocking() {
        use std::os::unix::fs::symlink;
        let dir = fresh("special");
        let manifest = write_cell(&dir);
        // The manifest a link to an endless device.
        let m = dir.join(MANIFEST_FILE);
        fs::remove_file(&m).unwrap();
        symlink("/dev/zero", &m).unwrap();
        let p = problems(&dir);
        assert!(
            matches!(&p[..], [BlobDirProblem::NotRegular { kind, .. }] if kind == "a symbolic link"),
            "{p:?}"
        );
        // A blob that is a FIFO (opening it for reading would wait for a writer forever).
        fs::remove_file(&m).unwrap();
        fs::write(&m, manifest.render()).unwrap();
        let blob = dir.join(manifest.rows[0].file.as_ref().unwrap());
        fs::remove_file(&blob).unwrap();
        mkfifo(&blob);
        let p = problems(&dir);
        assert!(
            matches!(&p[..], [BlobDirProblem::NotRegular { kind, .. }] if kind == "a FIFO"),
            "{p:?}"
        );
        // A FIFO manifest.
        fs::remove_file(&blob).unwrap();
        fs::remove_file(&m).unwrap();
        mkfifo(&m);
        let p = problems(&dir);
        assert!(
            matches!(&p[..], [BlobDirProblem::NotRegular { kind, .. }] if kind == "a FIFO"),
            "{p:?}"
        );
    }
}
