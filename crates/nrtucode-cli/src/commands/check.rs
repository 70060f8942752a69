//! `nrtucode check` (hidden alias `verify`, its name before 0.2): check a blob directory
//! against its manifest and the facts ([`nrtucode_carve::check_dir`]; on-device verification
//! of embedded blobs is the core's `nrtucode::digest`, a different thing).

use std::path::Path;
use std::process::ExitCode;

use nrtucode_carve::{CheckProblem, check_dir};

use crate::shared::error::Error;
use crate::shared::exit::Exit;
use crate::shared::output::{err_line, fail, out_line};

/// Checks the blob directory `dir`, printing warnings and problems; exit code 66 when the directory or its
/// manifest cannot be read, 65 when there is a problem with the data.
pub(crate) fn run(dir: &Path) -> ExitCode {
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return fail(Error::new(
                Exit::NoInput,
                format_args!("{}: not a directory", dir.display()),
            ));
        }
        Err(e) => return fail(Error::reading(dir, e)),
    }
    let report = check_dir(dir);
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
        let count = report.problems.len();
        let problems = if count == 1 { "problem" } else { "problems" };
        err_line!("nrtucode: error: {}: {count} {problems}", dir.display());
        let unreadable = matches!(report.problems.as_slice(), [CheckProblem::NoManifest(_)]);
        if unreadable {
            Exit::NoInput
        } else {
            Exit::DataErr
        }
        .into()
    }
}
