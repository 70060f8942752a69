//! # nrtucode
//!
//! `no_std`, allocation-free resolvers for an accelerator runtime's embedded firmware: the
//! exact behaviour of the vendor's `nrtucode_get_memory_image` and
//! `nrtucode_get_hwdecode_table`, over `const` tables of `&'static [u8]` blobs.
//!
//! * [`get_memory_image`]: a flat (generation, engine) index 0..=37, a region (IRAM, DRAM, SRAM,
//!   EXTRAM) and a flavor (PERF/RELEASE 1, DEBUG 2, TEST 3, dynamic-kernel-load 17/18/19, or 0
//!   for `NEURON_UCODE_FLAVOR`) to a firmware image; errors mirror the vendor's codes 1/2/3/8,
//!   including the `NRTUCODE_MPLUS_ON_MARIANA=1` removed-flag tombstone.
//! * [`get_hwdecode_table`]: the HW instruction-decode profiler tables PROF_CAM (1 KiB) and
//!   PROF_TABLE (8 KiB); codes 1/2. [`prof`] decodes and validates them without copying.
//! * [`get_memory_image_const`] and the `const` tables resolve images at compile time.
//! * The environment is injected ([`Env`]): [`NoEnv`], slices of pairs, [`MapEnv`], and with
//!   feature `std` the live process environment (`StdEnv`).
//!
//! The default build embeds a deterministic fixture set with the catalog's exact sizes; building
//! with `NRTUCODE_BLOB_DIR=<dir>` embeds blobs carved from your own copy of the vendor library.
//! Cargo features `gen-*` and `flavor-*` select what is embedded; a deselected image keeps its
//! descriptor and answers code 3, like the vendor's reduced front library.
//!
//! ```
//! use nrtucode::{resolve_image, Flavor, ImageIndex, Region, ResolveErr};
//! let env = &[("NEURON_UCODE_FLAVOR", b"debug".as_slice())][..];
//! let iram = resolve_image(ImageIndex::CAYMAN_NX_ACT, Region::Iram, Flavor::Auto, env)?;
//! assert_eq!(iram.len(), 0x191e0); // the DEBUG image
//! let tombstone = &[("NRTUCODE_MPLUS_ON_MARIANA", b"1".as_slice())][..];
//! let err = resolve_image(ImageIndex::CAYMAN_NX_ACT, Region::Iram, Flavor::Perf, tombstone);
//! assert_eq!(err.unwrap_err().code(), 8);
//! # Ok::<(), ResolveErr>(())
//! ```
#![no_std]
#![cfg_attr(not(feature = "std"), forbid(unsafe_code))]
#![cfg_attr(feature = "std", deny(unsafe_code))]
#![deny(missing_docs)]

pub mod catalog;
pub mod env;
mod error;
pub mod model;
pub mod prof;
mod resolve;
#[cfg(feature = "std")]
mod std_env;
pub mod table;

pub use catalog::{HWDECODE_LIST, IMAGE_LIST};
pub use env::{CapacityError, Env, MapEnv, NoEnv};
pub use error::ResolveErr;
pub use model::{CoreClass, Engine, Flavor, Generation, ImageIndex, ProfKind, Region, SlotId};
pub use resolve::{
    get_hwdecode_table, get_memory_image, get_memory_image_const, resolve_hwdecode, resolve_image,
    resolve_image_const,
};
#[cfg(feature = "std")]
pub use std_env::StdEnv;
