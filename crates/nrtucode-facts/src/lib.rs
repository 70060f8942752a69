//! The vendor facts as data, the deterministic fixture generator and the blob-directory
//! manifest format.
//!
//! This crate is `std`-only and dependency-free so that it can serve as a build dependency of
//! the `no_std` core crate (its `build.rs` embeds blobs from here), and as a library for the
//! CLI, the C look-alike generator and the tests. Everything structural comes from the TSV files
//! in this crate's `tables/` directory, compiled in with `include_str!`: copies of the facts
//! recovered from the vendor binary; nothing here reads outside the crate.
#![forbid(unsafe_code)]

pub mod codegen;
pub mod env_matrix;
pub mod facts;
pub mod fixture;
pub mod hex;
pub mod manifest;
mod tsv;

pub use facts::{
    BinaryFact, Getter, GetterId, HwDecodeSlotFact, ImageSlotFact, KnownHash, ProfBlobFact,
    binaries, getters, hwdecode_slots, image_slots, known_hashes, prof_blobs,
};
pub use fixture::fixture_bytes;
pub use manifest::{Manifest, ManifestError, ManifestHeader, ManifestRow};
