//! The carve pipeline, one module per step:
//!
//! `elf` (sections, symbols, VA → file offset; through `dynamic`, the program headers, when
//! the section header table is missing or unusable) → `reloc` (dynamic relocations and pointer
//! values) → `locate` (finding `image_list` and `hwdecode_table_list`) →
//! `vendor_tables` (decoding those two tables) → `stub` (decoding a getter by running it on
//! `emulate`, a small abstract interpreter over x86-64) → `naming` (the vendor's getter
//! names, from the facts) → `pipeline` (the getters, their blobs and the manifest) →
//! `blob_dir` (writing the blob directory all or nothing through `staged_dir`). `verify`
//! checks a blob directory against its manifest and the facts; `compare` compares a carve
//! with the facts and the published hashes. `error` holds the typed errors of every step.
//! [`tiny_elf`] builds small shared objects for tests and fuzz seeds.
//!
//! Only what the tool's tests and fuzz targets need is re-exported here; the steps themselves
//! are crate-private.

pub(crate) mod blob_dir;
pub(crate) mod compare;
pub(crate) mod dynamic;
pub(crate) mod elf;
pub(crate) mod emulate;
pub(crate) mod error;
pub(crate) mod locate;
pub(crate) mod naming;
pub(crate) mod pipeline;
pub(crate) mod reloc;
pub(crate) mod staged_dir;
pub(crate) mod stub;
pub mod tiny_elf;
pub(crate) mod vendor_tables;
pub(crate) mod verify;

pub use blob_dir::{carve_into_dir, write_blob_dir};
pub use compare::{Finding, compare};
pub use elf::{Elf, Section};
pub use error::{CarveError, FileError};
pub use locate::{Found, Tables};
pub use naming::GetterName;
pub use pipeline::{Carve, CarvedGetter, NamedBy, carve_bytes, carve_file};
pub use staged_dir::PublishError;
pub use stub::{MAX_STUB_BYTES, Stub, decode_stub};
pub use verify::{Problem, Report, verify_dir};
