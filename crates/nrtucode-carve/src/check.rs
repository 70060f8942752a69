//! Checking a blob directory against its manifest and the facts (`crates/nrtucode-facts/tables/getters.tsv`).
//!
//! Checks, each a [`CheckProblem`] naming the file, the manifest line's symbol and what was
//! expected: the manifest parses; every symbol appears once; a non-empty row names a file, an empty row
//! none; each file exists, has the row's size and sha256, and is named after its sha256; each
//! symbol is in the facts with the row's size and (generation, class, engine, variant,
//! region); and the directory is complete per cell: a (generation, class, engine, variant)
//! with any region present has all four, a profiler slot with a CAM has its TABLE and the
//! other way round (the core crate embeds whole cells). `.bin` files no row references are
//! reported as warnings.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use nrtucode_facts::hex::lower_hex;
use nrtucode_facts::manifest::MANIFEST_FILE;
use nrtucode_facts::{Manifest, ManifestError, getters};
use sha2::{Digest, Sha256};

use crate::blob_dir::is_blob_file_name;

/// One thing wrong with a blob directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckProblem {
    /// `manifest.tsv` is missing or unreadable.
    NoManifest(String),
    /// `manifest.tsv` does not parse.
    BadManifest(ManifestError),
    /// A symbol has two rows.
    DuplicateSymbol(String),
    /// A non-empty row has file `-`, or an empty row names a file.
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
    /// A file's sha256 differs from its row's (or its name).
    FileHash {
        /// Symbol.
        symbol: String,
        /// File.
        file: PathBuf,
        /// Manifest sha256 (or the name's).
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

impl fmt::Display for CheckProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckProblem::NoManifest(e) => write!(f, "{MANIFEST_FILE}: {e}"),
            CheckProblem::BadManifest(e) => write!(f, "{e}"),
            CheckProblem::DuplicateSymbol(s) => {
                write!(f, "{MANIFEST_FILE}: {s} has more than one row")
            }
            CheckProblem::FileColumn { symbol, detail } => {
                write!(f, "{MANIFEST_FILE}: {symbol}: {detail}")
            }
            CheckProblem::MissingFile {
                symbol,
                file,
                error,
            } => {
                write!(
                    f,
                    "{}: cannot read the blob of {symbol}: {error}",
                    file.display()
                )
            }
            CheckProblem::FileSize {
                symbol,
                file,
                expected,
                actual,
            } => write!(
                f,
                "{}: {actual} bytes, expected {expected} (size of {symbol} in {MANIFEST_FILE})",
                file.display()
            ),
            CheckProblem::FileHash {
                symbol,
                file,
                expected,
                actual,
            } => write!(
                f,
                "{}: sha256 {actual}, expected {expected} (blob of {symbol})",
                file.display()
            ),
            CheckProblem::NotInFacts(s) => write!(f, "{MANIFEST_FILE}: {s} is not in the facts"),
            CheckProblem::FactsMismatch { symbol, detail } => {
                write!(f, "{MANIFEST_FILE}: {symbol}: {detail}")
            }
            CheckProblem::Incomplete { cell, missing } => write!(
                f,
                "{MANIFEST_FILE}: {cell} is incomplete, missing {}",
                missing.join(", ")
            ),
        }
    }
}

/// What [`check_dir`] found.
#[derive(Clone, Debug, Default)]
pub struct CheckReport {
    /// Rows in the manifest.
    pub rows: usize,
    /// Distinct blob files referenced.
    pub files: usize,
    /// Everything wrong.
    pub problems: Vec<CheckProblem>,
    /// Unreferenced files and other remarks.
    pub warnings: Vec<String>,
}

impl CheckReport {
    /// `true` when nothing is wrong.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Checks the blob directory `dir` against its manifest and the facts.
pub fn check_dir(dir: &Path) -> CheckReport {
    let mut report = CheckReport::default();
    let text = match fs::read_to_string(dir.join(MANIFEST_FILE)) {
        Ok(t) => t,
        Err(e) => {
            report
                .problems
                .push(CheckProblem::NoManifest(e.to_string()));
            return report;
        }
    };
    let manifest = match Manifest::parse(&text) {
        Ok(m) => m,
        Err(e) => {
            report.problems.push(CheckProblem::BadManifest(e));
            return report;
        }
    };
    report.rows = manifest.rows.len();
    let facts = getters();
    let mut seen = BTreeSet::new();
    let mut checked: BTreeMap<String, Result<(), ()>> = BTreeMap::new();
    for row in &manifest.rows {
        let sym = &row.symbol;
        if !seen.insert(sym.clone()) {
            report
                .problems
                .push(CheckProblem::DuplicateSymbol(sym.clone()));
        }
        match (&row.file, row.size) {
            (None, 0) => {}
            (Some(f), 0) => report.problems.push(CheckProblem::FileColumn {
                symbol: sym.clone(),
                detail: format!("size 0 but file {f}; an empty blob has file -"),
            }),
            (None, n) => report.problems.push(CheckProblem::FileColumn {
                symbol: sym.clone(),
                detail: format!("size {n} but file -"),
            }),
            (Some(name), _) => {
                if checked.contains_key(name) {
                    continue_check_same(&mut report, &manifest, name, row);
                } else {
                    let ok = check_file(&mut report, dir, name, row);
                    checked.insert(name.clone(), if ok { Ok(()) } else { Err(()) });
                }
            }
        }
        if row.size == 0 && row.sha256 != lower_hex(&Sha256::digest(b"")) {
            report.problems.push(CheckProblem::FactsMismatch {
                symbol: sym.clone(),
                detail: format!(
                    "size 0 but sha256 {} (the empty sha256 is {})",
                    row.sha256,
                    lower_hex(&Sha256::digest(b""))
                ),
            });
        }
        match facts.iter().find(|g| g.symbol == sym) {
            None => report.problems.push(CheckProblem::NotInFacts(sym.clone())),
            Some(g) => {
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
                    report.problems.push(CheckProblem::FactsMismatch {
                        symbol: sym.clone(),
                        detail: diffs.join("; "),
                    });
                }
            }
        }
    }
    report.files = checked.len();
    check_complete(&mut report, &seen);
    if let Ok(entries) = fs::read_dir(dir) {
        let mut extra: Vec<String> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| is_blob_file_name(n) && !checked.contains_key(n))
            .collect();
        extra.sort();
        for n in extra {
            report.warnings.push(format!(
                "{}: not referenced by {MANIFEST_FILE}",
                dir.join(n).display()
            ));
        }
    }
    report
}

/// A second row naming an already checked file must carry the same size and sha256.
fn continue_check_same(
    report: &mut CheckReport,
    manifest: &Manifest,
    name: &str,
    row: &nrtucode_facts::ManifestRow,
) {
    if let Some(first) = manifest
        .rows
        .iter()
        .find(|r| r.file.as_deref() == Some(name))
        && (first.size != row.size || first.sha256 != row.sha256)
    {
        report.problems.push(CheckProblem::FileColumn {
            symbol: row.symbol.clone(),
            detail: format!(
                "file {name} is also the blob of {} with size {} sha256 {}",
                first.symbol, first.size, first.sha256
            ),
        });
    }
}

fn check_file(
    report: &mut CheckReport,
    dir: &Path,
    name: &str,
    row: &nrtucode_facts::ManifestRow,
) -> bool {
    let path = dir.join(name);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            report.problems.push(CheckProblem::MissingFile {
                symbol: row.symbol.clone(),
                file: path,
                error: e.to_string(),
            });
            return false;
        }
    };
    let mut ok = true;
    if bytes.len() as u64 != row.size {
        report.problems.push(CheckProblem::FileSize {
            symbol: row.symbol.clone(),
            file: path.clone(),
            expected: row.size,
            actual: bytes.len() as u64,
        });
        ok = false;
    }
    let actual = lower_hex(&Sha256::digest(&bytes));
    if actual != row.sha256 {
        report.problems.push(CheckProblem::FileHash {
            symbol: row.symbol.clone(),
            file: path.clone(),
            expected: row.sha256.clone(),
            actual: actual.clone(),
        });
        ok = false;
    }
    if let Some(stem) = name.strip_suffix(".bin")
        && is_blob_file_name(name)
        && stem != actual
    {
        report.problems.push(CheckProblem::FileHash {
            symbol: row.symbol.clone(),
            file: path,
            expected: format!("{stem} (the file's name)"),
            actual,
        });
        ok = false;
    }
    ok
}

fn check_complete(report: &mut CheckReport, present: &BTreeSet<String>) {
    let mut cells: BTreeMap<String, Vec<&'static str>> = BTreeMap::new();
    for g in getters().iter().filter(|g| g.is_resolver_reachable()) {
        let cell = format!("{} {} {} {}", g.gen_name, g.class, g.engine, g.variant);
        cells.entry(cell).or_default().push(g.symbol);
    }
    for (cell, symbols) in cells {
        let have = symbols.iter().filter(|s| present.contains(**s)).count();
        if have > 0 && have < symbols.len() {
            report.problems.push(CheckProblem::Incomplete {
                cell,
                missing: symbols
                    .iter()
                    .filter(|s| !present.contains(**s))
                    .map(|s| s.to_string())
                    .collect(),
            });
        }
    }
}
