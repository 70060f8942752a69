//! Exit codes: `resolve` exits with the resolver's code (0, 1, 2, 3, 8); every other failure
//! uses a sysexits code, all outside {1, 2, 3, 8}, so a script can tell "not found" from "bad
//! arguments".

use std::process::ExitCode;

/// Why a command failed, as a sysexits code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// 64 (`EX_USAGE`): bad arguments.
    Usage = 64,
    /// 65 (`EX_DATAERR`): bad input data: a malformed library, a failed blob-directory check, an
    /// invalid profiler pair, a `--strict` disagreement with the facts, a refused partition.
    DataErr = 65,
    /// 66 (`EX_NOINPUT`): an input is missing or unreadable (a file, a directory, a profiler
    /// table the slot does not have).
    NoInput = 66,
    /// 73 (`EX_CANTCREAT`): an output file or directory cannot be created.
    CantCreate = 73,
    /// 74 (`EX_IOERR`): an I/O error while reading or writing.
    IoErr = 74,
}

impl Exit {
    /// The process exit code.
    pub fn code(self) -> u8 {
        self as u8
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit.code())
    }
}

/// The exit-code table shown by `--help` (and in README).
pub(crate) const EXIT_CODES_HELP: &str = "\
Exit codes:
  0    success
  1    resolve only: the resolver's code 1, index above 37
  2    resolve only: the resolver's code 2, not found (empty slot, flavor not in the slot, no profiler table)
  3    resolve only: the resolver's code 3, image not in this build
  8    resolve only: the resolver's code 8, the removed flag NRTUCODE_MPLUS_ON_MARIANA=1 is set
  64   usage error: bad arguments
  65   bad data: malformed library, failed blob-directory check, invalid profiler pair, --strict disagreement,
       a partition refused (structure, signature, key, security counter, class, digest)
  66   no input: a file or directory is missing or unreadable, or the slot has no profiler table
  73   cannot create an output file or directory
  74   I/O error while reading or writing (also: standard output cannot be written; a reader
       that closes the pipe early, as head does, is not an error: the code is what it would be)
  130  interrupted by SIGINT (Ctrl-C); 143: by SIGTERM. carve removes its staging directory first";

/// The exit code of an I/O error reading an input: 66 when it is missing or unreadable, 74
/// otherwise.
pub(crate) fn reading(error: &std::io::Error) -> Exit {
    use std::io::ErrorKind::{IsADirectory, NotADirectory, NotFound, PermissionDenied};
    match error.kind() {
        NotFound | PermissionDenied | NotADirectory | IsADirectory => Exit::NoInput,
        _ => Exit::IoErr,
    }
}

/// The exit code of an I/O error creating an output: 73 when it cannot be created, 74
/// otherwise.
pub(crate) fn creating(error: &std::io::Error) -> Exit {
    use std::io::ErrorKind::{
        AlreadyExists, IsADirectory, NotADirectory, NotFound, PermissionDenied, ReadOnlyFilesystem,
    };
    match error.kind() {
        NotFound | PermissionDenied | NotADirectory | IsADirectory | AlreadyExists
        | ReadOnlyFilesystem => Exit::CantCreate,
        _ => Exit::IoErr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_failure_code_collides_with_a_resolver_code() {
        for exit in [
            Exit::Usage,
            Exit::DataErr,
            Exit::NoInput,
            Exit::CantCreate,
            Exit::IoErr,
        ] {
            assert!(![0, 1, 2, 3, 8].contains(&exit.code()), "{exit:?}");
            assert!(
                EXIT_CODES_HELP.contains(&format!("\n  {}   ", exit.code())),
                "{exit:?}"
            );
        }
    }
}
