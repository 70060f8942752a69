//! Writes the signed blob partition that `nrtucode::partition` reads in place (format:
//! `docs/partition.md`; constants: `nrtucode::partition::format`).
//!
//! Three steps:
//!
//! 1. collect the blobs of every getter of a table class: [`Blobs::from_dir`] (a blob directory
//!    `nrtucode carve` wrote, checked with `nrtucode_facts::blob_dir::check_blob_dir` first),
//!    [`Blobs::from_library`] (carve a vendor library in memory), or [`Blobs::fixtures`]
//!    (the built-in fixture set);
//! 2. [`pack`] lays out the vendor's tables (from the facts in `nrtucode-facts`, the same
//!    description the core's embedded tables follow), one table-of-contents entry per distinct
//!    blob, the blobs 16-byte aligned, and signs everything before the blobs with an ed25519
//!    [`SigningKey`] (or leaves it unsigned, explicitly);
//! 3. write the bytes where they go (`nrtucode pack` writes a file atomically).
//!
//! The output depends only on the input: tables in vendor order, blobs in the facts' order,
//! no timestamp, and ed25519 signatures are deterministic; so two packs of the same input are
//! byte-identical from any directory, umask, time zone or locale.
//!
//! ```
//! use nrtucode::partition::{Partition, Policy, TableClass};
//! use nrtucode_pack::{Blobs, PackOptions, SigningKey, pack};
//!
//! let key = SigningKey::generate();
//! let blobs = Blobs::fixtures(TableClass::Front);
//! let bytes = pack(&blobs, &PackOptions { security_counter: 2, key: Some(&key) })?;
//! let policy = Policy { min_security_counter: 2, expected_class: TableClass::Front };
//! let partition = Partition::parse(&bytes)?.verify(&key.public_key(), &policy)?;
//! assert_eq!(partition.get_memory_image(7, 0, 1, &nrtucode::NoEnv)?.len(), 0x13dc0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![deny(unreachable_pub)]

/// The README's example, compiled as a doc test so it stays in step with the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;

mod blobs;
mod error;
mod keys;
mod package;
mod write;

pub use blobs::{BlobSourceId, Blobs};
pub use error::PackError;
pub use keys::{MAX_PEM_BYTES, SigningKey, public_key_from_pem, public_key_pem, public_key_rust};
pub use nrtucode_deflate::Summary;
pub use package::{PackageSummary, apply_package, read_package, update_package};
pub use write::{Compression, PackOptions, pack, pack_with, sign_partition};
