//! The library behind the `nrtucode` tool, in two folders:
//!
//! * [`carve`]: the carve pipeline. Read an x86-64 ELF shared object built like the vendor's
//!   `libnrtucode_internal.so` / `libnrtucode.so`, find its `image_list` and
//!   `hwdecode_table_list`, decode every getter stub, name the getters, write the blob
//!   directory `NRTUCODE_BLOB_DIR` consumes, verify such a directory and compare a carve with
//!   the vendor facts (`blobs/getters.tsv`).
//! * [`commands`]: the command line, one module per subcommand (`carve`, `verify`, `list`,
//!   `resolve`, `prof`) plus the argument definition, the output helpers and the text-table
//!   renderer.
#![forbid(unsafe_code)]
#![deny(unreachable_pub)]

pub mod carve;
pub mod commands;

pub use carve::{Carve, CarveError, CarvedGetter, FileError, carve_bytes, carve_file};
