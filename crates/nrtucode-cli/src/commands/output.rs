//! Writing the subcommands' output and turning results into exit codes.
//!
//! Output goes through [`write_out`] / [`write_err`], which ignore write failures: a closed
//! pipe (`nrtucode list | head`) is not an error worth a panic. The `out_*` / `err_*` macros
//! are `print!`-style wrappers around them.

use std::io::Write as _;
use std::process::ExitCode;

use crate::commands::exit::Exit;

/// `print!` to stdout through [`write_out`].
macro_rules! out_fmt { ($($a:tt)*) => { $crate::commands::output::write_out(&format!($($a)*)) } }
/// `println!` to stdout through [`write_out`].
macro_rules! out_line { ($($a:tt)*) => { $crate::commands::output::write_out(&format!("{}\n", format_args!($($a)*))) } }
/// `eprint!` through [`write_err`].
macro_rules! err_fmt { ($($a:tt)*) => { $crate::commands::output::write_err(&format!($($a)*)) } }
/// `eprintln!` through [`write_err`].
macro_rules! err_line { ($($a:tt)*) => { $crate::commands::output::write_err(&format!("{}\n", format_args!($($a)*))) } }

pub(crate) use {err_fmt, err_line, out_fmt, out_line};

/// Writes to stdout, ignoring failures.
pub(crate) fn write_out(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Writes to stderr, ignoring failures.
pub(crate) fn write_err(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// An exit code from a resolver code (clamped to 0..=255).
pub(crate) fn exit_code(c: i32) -> ExitCode {
    ExitCode::from(u8::try_from(c).unwrap_or(u8::MAX))
}

/// Prints `nrtucode: error: {message}` to stderr and returns the exit code of `exit`.
pub(crate) fn fail(exit: Exit, message: impl std::fmt::Display) -> ExitCode {
    err_line!("nrtucode: error: {message}");
    exit.into()
}
