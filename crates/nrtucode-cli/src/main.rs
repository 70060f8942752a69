//! `nrtucode`: see `nrtucode --help`.

use std::process::ExitCode;

fn main() -> ExitCode {
    nrtucode_cli::commands::run()
}
