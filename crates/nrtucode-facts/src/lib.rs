//! The vendor facts as data, the deterministic fixture generator and the blob-directory
//! manifest format.
//!
//! This crate is `std`-only, with two small dependencies (`sha2`, and `rustix` on Unix, for
//! [`blob_dir`]), so that it can serve as a build dependency of the `no_std` core crate (its
//! `build.rs` embeds blobs from here and reads blob directories through [`blob_dir`]), and as a
//! library for the CLI, the carve library, the C look-alike generator and the tests. Everything structural comes from the TSV files
//! in this crate's `tables/` directory, compiled in with `include_str!`: copies of the facts
//! recovered from the vendor binary; nothing here reads outside the crate.
#![forbid(unsafe_code)]

pub mod blob_dir;
pub mod build_input;
pub mod facts;
pub mod fixture;
pub mod hex;
pub mod input_file;
pub mod manifest;
#[cfg(feature = "pem")]
pub mod pem_key;
pub mod plan;
pub mod shape;
mod tsv;

pub use blob_dir::{BlobDir, BlobDirError, BlobDirProblem, check_blob_dir, read_blob_dir};
pub use facts::{
    BinaryFact, Getter, GetterId, HwDecodeSlotFact, ImageSlotFact, KnownHash, ProfBlobFact,
    binaries, getters, hwdecode_slots, image_slots, known_hashes, prof_blobs,
};
pub use fixture::fixture_bytes;
pub use manifest::{Manifest, ManifestError, ManifestHeader, ManifestRow};
