#![doc = include_str!("../README.md")]
#![no_std]
// No `unsafe` block, fn or impl in the core: the only exemption is the generated blob module's
// `#[unsafe(link_section)]` attributes (`catalog`). `tests/unsafe_audit.rs` checks the sources.
#![deny(unsafe_code)]

pub mod catalog;
pub mod env;
mod error;
mod index;
mod macros;
pub mod model;
pub mod prof;
mod resolve;
mod snapshot;
#[cfg(feature = "std")]
mod std_env;
pub mod table;
#[cfg(feature = "verify")]
pub mod verify;

pub use catalog::{BLOB_ALIGN, BLOB_SECTION_PREFIX, HWDECODE_LIST, IMAGE_LIST};
pub use env::{CapacityError, Env, MapEnv, NoEnv};
pub use error::ResolveErr;
pub use model::{CoreClass, Engine, Flavor, Generation, ImageIndex, ProfKind, Region, SlotId};
pub use resolve::{
    get_hwdecode_table, get_memory_image, get_memory_image_const, resolve_hwdecode, resolve_image,
    resolve_image_const,
};
pub use snapshot::{EnvSnapshot, SNAPSHOT_VALUE_CAPACITY};
#[cfg(feature = "std")]
pub use std_env::StdEnv;
