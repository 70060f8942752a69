//! Carves the firmware blobs out of an x86-64 ELF shared object built like the vendor's
//! `libnrtucode_internal.so` / `libnrtucode.so` into a blob directory (`<sha256>.bin` files and
//! a `manifest.tsv`), the input the `nrtucode` core crate embeds through `NRTUCODE_BLOB_DIR`;
//! and checks such a directory against its manifest and the vendor facts.
//!
//! # The pipeline
//!
//! ```text
//!  library bytes
//!    │ elf            sections, symbols, VA → file offset (through `dynamic`, the program
//!    │                headers, when the section header table is missing or unusable)
//!    │ reloc          dynamic relocations (RELA, RELR) and the pointer values they give
//!    │ locate         image_list and hwdecode_table_list, by symbol or from the resolvers
//!    │ vendor_tables  the two tables decoded: descriptors, flavor keys, getter pointers
//!    │ stub/emulate   each getter run on a small abstract x86-64 interpreter: blob VA, size
//!    │ naming         the vendor's getter names, from the facts (crates/nrtucode-facts/tables/getters.tsv)
//!    ▼ pipeline       a Carve: every getter, its blob and the manifest
//!  write_blob_dir / carve_into_dir   the blob directory, written all or nothing
//!  check_dir                         a blob directory checked against its manifest and the facts
//!  compare                           a carve compared with the facts and the published hashes
//! ```
//!
//! | Call | Does |
//! |---|---|
//! | [`carve_bytes`], [`carve_file`] | carve library bytes or a file into a [`Carve`] |
//! | [`write_blob_dir`], [`carve_into_dir`] | write the blob directory of a carve, all or nothing |
//! | [`write_blob_dir_cancellable`], [`carve_into_dir_cancellable`], [`Cancel`] | the same, stopped (nothing written) once the caller sets a token |
//! | [`check_dir`] | check a blob directory, giving a [`CheckReport`] |
//! | [`compare`], [`known_build`] | compare a carve with the facts and the published hashes |
//! | [`decode_stub`], [`Elf`] | the getter decoder and the ELF reader on their own |
//!
//! Failures are typed: [`CarveError`] for the bytes (each names the offset or address and
//! what was expected), [`FileError`] for a file, [`PublishError`] for the destination. The
//! library keeps no process state and sets no process policy: no global registry, no thread
//! that outlives a call, no signal handler; it never exits the process, knows no exit codes
//! and names no command-line flag in its messages. A program that wants an interrupted carve
//! to leave nothing behind sets a [`Cancel`] from its own handler and waits for the carve to
//! return (the `nrtucode` tool does this on its terminating signals).
//!
//! # Writing all or nothing, per platform
//!
//! [`write_blob_dir`] and [`carve_into_dir`] write into a hidden staging directory and publish
//! it only once every file is written and flushed: an error at any point leaves the destination
//! as it was. How the publication is done depends on what the platform offers:
//!
//! | | Linux | macOS | other Unix | Windows |
//! |---|---|---|---|---|
//! | replacing an earlier carve | one exchange | one exchange | two renames | two renames |
//! | moving files into an empty destination, never replacing | one call | one call | link, then unlink | link, then unlink |
//! | may the old carve be removed? | `access(2)` | `access(2)` | `access(2)` | read-only attribute |
//! | directories `fsync`ed | yes | yes | yes | no (not possible) |
//!
//! Where the exchange is two renames, a crash (not an error: errors are undone) between them
//! leaves the old carve at `.nrtucode-<tag>.old-<pid>-<random>` (`<tag>`: 16 hex digits of the SHA-256 of the destination's name) and the destination absent, never a
//! mixture of old and new files. Linux and macOS fall back to the two renames on a filesystem
//! without the exchange (`EINVAL`, `ENOTSUP`); on a filesystem without hard links (FAT) a file
//! is moved in by a check and then a rename, so a file another process creates under the same
//! name in between would be replaced. Without a directory `fsync` (Windows), a power
//! loss right after the commit may lose the renames: the files are flushed, their names may
//! not be.
//!
//! # Example
//!
//! Carve a library, write its blob directory and check it (here a hand-built test library,
//! whose blob sizes are not the vendor's: the check against the facts says so):
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let tmp = tempfile::tempdir()?;
//! # let lib = tmp.path().join("libnrtucode.so");
//! # std::fs::write(&lib, nrtucode_test_elf::TinyElf::default().build())?;
//! # let out = tmp.path().join("blobs");
//! let (carve, leftovers) = nrtucode_carve::carve_into_dir(&lib, &out)?;
//! assert!(leftovers.is_empty());
//! for getter in &carve.getters {
//!     println!("{} {} bytes", getter.name.symbol, getter.size);
//! }
//! let report = nrtucode_carve::check_dir(&out);
//! assert_eq!(report.rows, carve.getters.len());
//! for problem in &report.problems {
//!     println!("{}: {problem}", out.display());
//! }
//! use nrtucode_carve::CheckProblem;
//! assert!(!report.is_ok());
//! assert!(report.problems.iter().all(|p| matches!(p, CheckProblem::FactsMismatch { .. })));
//! # Ok(())
//! # }
//! ```
//!
//! Bytes that are not such a library give a typed error, never a panic:
//!
//! ```
//! let error = nrtucode_carve::carve_bytes(b"not an ELF file", "x.so").unwrap_err();
//! assert!(matches!(error, nrtucode_carve::CarveError::NotElf { .. }));
//! ```
#![forbid(unsafe_code)]
#![deny(unreachable_pub)]

mod cancel;
mod check;
mod compare;
mod dynamic;
mod elf;
mod emulate;
mod error;
mod kill_point;
mod locate;
mod naming;
mod pipeline;
mod records;
mod reloc;
mod rename;
mod staged_dir;
mod stub;
mod vendor_tables;
mod write_dir;

/// The README's example, compiled as a doc test so it stays in step with the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;

pub use cancel::Cancel;
pub use check::{CheckProblem, CheckReport, check_dir};
pub use compare::{Finding, compare, known_build};
pub use elf::Elf;
pub use error::{CarveError, FileError, LibraryBytes};
pub use locate::{Found, Tables};
pub use naming::{GetterName, Names};
pub use pipeline::{Carve, CarvedGetter, NamedBy, carve_bytes, carve_file};
pub use records::Section;
pub use staged_dir::PublishError;
pub use stub::{MAX_STUB_BYTES, Stub, decode_stub};
pub use write_dir::{
    carve_into_dir, carve_into_dir_cancellable, write_blob_dir, write_blob_dir_cancellable,
};
