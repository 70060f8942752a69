//! Writes a look-alike's C source and its ground truth into a directory.

use std::path::{Path, PathBuf};

use crate::{Options, generate_c, ground_truth_tsv};

/// Files written by [`write_sources`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// The C source, `nrtucode_lookalike_<library>.c`.
    pub c_source: PathBuf,
    /// The ground truth, `nrtucode_lookalike_<library>.truth.tsv`.
    pub truth: PathBuf,
}

/// Writes the C source and the ground-truth TSV of `opts` into `dir` (created if missing).
pub fn write_sources(dir: &Path, opts: &Options) -> Result<Written, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let stem = format!("nrtucode_lookalike_{}", opts.library().name());
    let c_source = dir.join(format!("{stem}.c"));
    let truth = dir.join(format!("{stem}.truth.tsv"));
    write_whole(&c_source, generate_c(opts).as_bytes())?;
    write_whole(&truth, ground_truth_tsv(opts.library()).as_bytes())?;
    Ok(Written { c_source, truth })
}

/// Writes `bytes` to a temporary file beside `path` and renames it into place, so `path` holds
/// either its old content or all of the new one, never a cut-off file.
fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(format!(".partial-{}", std::process::id()));
    let partial = std::path::PathBuf::from(partial);
    let result = std::fs::write(&partial, bytes)
        .and_then(|()| std::fs::rename(&partial, path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()));
    if result.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    result
}
