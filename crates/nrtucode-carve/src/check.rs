//! Checking a blob directory against its manifest and the facts
//! (`crates/nrtucode-facts/tables/getters.tsv`).
//!
//! [`check_dir`] is `nrtucode_facts::blob_dir::check_blob_dir`, the one reader the core's
//! build script, `nrtucode check` and the carve (deciding whether a destination is an
//! earlier carve) share, as a report: the same directory gets the same problems, with the
//! same messages, everywhere. Each [`CheckProblem`] names the file, the manifest line's
//! symbol and what was expected; `.bin` files no row references are reported as warnings.

use std::path::Path;

pub use nrtucode_facts::blob_dir::BlobDirProblem as CheckProblem;
use nrtucode_facts::blob_dir::{check_blob_dir, read_blob_dir};

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
    match check_blob_dir(dir) {
        Ok(read) => CheckReport {
            rows: read.manifest.rows.len(),
            files: read.files.len(),
            problems: Vec::new(),
            warnings: read.warnings(),
        },
        Err(e) => {
            // The counts and warnings of what could be read.
            let read = read_blob_dir(dir).ok();
            CheckReport {
                rows: read.as_ref().map_or(0, |r| r.manifest.rows.len()),
                files: read.as_ref().map_or(0, |r| r.files.len()),
                problems: e.problems,
                warnings: read.map(|r| r.warnings()).unwrap_or_default(),
            }
        }
    }
}
