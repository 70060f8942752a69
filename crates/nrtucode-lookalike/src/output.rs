//! Writes a look-alike's C source and its ground truth into a directory.

use std::path::{Path, PathBuf};

use crate::{Options, generate_c, ground_truth_tsv};

/// Files written by [`write_sources`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// The C source, `nrtucode_lookalike_<variant>.c`.
    pub c_source: PathBuf,
    /// The ground truth, `nrtucode_lookalike_<variant>.truth.tsv`.
    pub truth: PathBuf,
}

/// Writes the C source and the ground-truth TSV of `opts` into `dir` (created if missing).
pub fn write_sources(dir: &Path, opts: &Options) -> Result<Written, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let stem = format!("nrtucode_lookalike_{}", opts.variant().name());
    let c_source = dir.join(format!("{stem}.c"));
    let truth = dir.join(format!("{stem}.truth.tsv"));
    std::fs::write(&c_source, generate_c(opts))
        .map_err(|e| format!("cannot write {}: {e}", c_source.display()))?;
    std::fs::write(&truth, ground_truth_tsv(opts.variant()))
        .map_err(|e| format!("cannot write {}: {e}", truth.display()))?;
    Ok(Written { c_source, truth })
}
