//! `nrtucode verify`: check a blob directory against its manifest and the facts.

use std::path::Path;
use std::process::ExitCode;

use crate::carve::verify::verify_dir;
use crate::commands::output::{err_line, out_line};

/// Verifies `dir`, printing warnings and problems; exit code 1 when there is a problem.
pub(crate) fn run(dir: &Path) -> ExitCode {
    let report = verify_dir(dir);
    for w in &report.warnings {
        err_line!("nrtucode: warning: {w}");
    }
    for p in &report.problems {
        err_line!("nrtucode: error: {}: {p}", dir.display());
    }
    if report.is_ok() {
        out_line!(
            "{}: ok ({} rows, {} blob files)",
            dir.display(),
            report.rows,
            report.files
        );
        ExitCode::SUCCESS
    } else {
        err_line!(
            "nrtucode: {}: {} problems",
            dir.display(),
            report.problems.len()
        );
        ExitCode::FAILURE
    }
}
