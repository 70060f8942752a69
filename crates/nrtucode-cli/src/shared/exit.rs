//! Exit codes: `resolve` and `prof` exit with the resolver's code when the resolver fails (1,
//! 2, 3, 8); every other failure uses a sysexits code, all outside {1, 2, 3, 8}, so a script
//! can tell "not found" from "bad arguments". Each code has one line in `--help`.

use std::process::ExitCode;

/// Why a command failed, as a sysexits code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// 64 (`EX_USAGE`): bad arguments.
    Usage = 64,
    /// 65 (`EX_DATAERR`): bad input data: a malformed library, a failed blob-directory check, an
    /// invalid profiler pair, a `--strict` disagreement with the facts, a refused partition.
    DataErr = 65,
    /// 66 (`EX_NOINPUT`): an input file or directory is missing or unreadable.
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
  1    resolve, prof: the resolver's code 1, index above 37; diff: the inputs differ
  2    resolve, prof: the resolver's code 2, not found (empty slot, flavor not in the slot, region
       or kind out of range, no profiler table)
  3    resolve, prof: the resolver's code 3, image not in this build
  8    resolve: the resolver's code 8, the removed flag NRTUCODE_MPLUS_ON_MARIANA=1 is set
  64   usage error: bad arguments (an integer outside its C type is one; any other integer goes
       to the resolver)
  65   bad data: malformed library, failed blob-directory check, invalid profiler pair, --strict disagreement,
       a partition refused (structure, signature, key, security counter, class, digest), a bad key file
       (over 16 KiB, not UTF-8, not an ed25519 PEM), a layout or memory map that is not UTF-8 (its
       line and column said) or larger than its bound, a flashable file that does not read back
  66   no input: a file or directory is missing or unreadable, or not the kind of file read (a
       directory; a FIFO, device or socket where a regular file is read: only a key is read from a
       pipe or a character device)
  73   cannot create an output file or directory, or the output is one of the inputs (the key, the
       partition, the library, a blob directory's file): refused before anything is written
  74   I/O error while reading or writing (also: standard output cannot be written; a reader
       that closes the pipe early, as head does, is not an error: the code is what it would be)
  130  interrupted by SIGINT (Ctrl-C); 143: by SIGTERM; 128 + N: by signal N (SIGHUP 129,
       SIGQUIT 131, SIGUSR1 138, SIGUSR2 140, SIGALRM 142). carve removes its staging directory first,
       a command writing an output file its temporary file";

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
    fn each_exit_code_has_one_line() {
        let codes: Vec<&str> = EXIT_CODES_HELP
            .lines()
            .skip(1)
            .filter_map(|l| l.strip_prefix("  ")?.split(' ').next())
            .filter(|c| !c.is_empty())
            .collect();
        let mut unique = codes.clone();
        unique.dedup();
        assert_eq!(codes, unique);
        // Each failure is described under one code.
        for phrase in ["no profiler table", "index above 37", "usage error"] {
            assert_eq!(EXIT_CODES_HELP.matches(phrase).count(), 1, "{phrase}");
        }
    }

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
