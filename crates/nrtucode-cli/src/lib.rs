//! The library behind the `nrtucode` tool.
//!
//! * [`carve`]: read an x86-64 ELF shared object built like the vendor's
//!   `libnrtucode_internal.so` / `libnrtucode.so`, find its `image_list` and
//!   `hwdecode_table_list`, decode every getter stub and return the blobs; [`blobdir`] writes
//!   them as the directory `NRTUCODE_BLOB_DIR` consumes.
//! * [`verify`]: check such a directory against its manifest and the catalog.
//! * [`compare`]: compare a carve with the published facts.
//!
//! Module by job: [`elf`] (sections, symbols, VA → offset), [`reloc`] (dynamic relocations and
//! pointer values), [`locate`] (finding the tables), [`tables`] (decoding them), [`stub`]
//! (decoding a getter), [`naming`] (positional vendor names), [`sha`].
#![forbid(unsafe_code)]

pub mod blobdir;
pub mod carve;
pub mod cli;
pub mod compare;
pub mod elf;
pub mod error;
pub mod list;
pub mod locate;
pub mod naming;
pub mod profdump;
pub mod reloc;
pub mod resolve;
pub mod sha;
pub mod stub;
pub mod table;
pub mod tables;
pub mod verify;

pub use carve::{Carve, CarvedGetter, carve_bytes, carve_file};
pub use error::{CarveError, FileError};
