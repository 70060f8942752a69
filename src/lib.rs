#![doc = include_str!("crate_docs.md")]
#![no_std]
// docs.rs (`--cfg docsrs`, nightly): every feature-gated item shows the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
// No `unsafe` block, fn or impl in the core: the only exemption is the generated blob module's
// `#[unsafe(link_section)]` attributes (`catalog`). `tests/unsafe_audit.rs` checks the sources.
#![deny(unsafe_code)]

pub mod catalog;
pub mod env;
mod env_impls;
mod error;
mod index;
mod macros;
pub mod model;
mod names;
pub mod prof;
mod request;
mod resolve;
mod slot_map;
mod snapshot;
#[cfg(feature = "std")]
mod std_env;
pub mod table;
#[cfg(feature = "verify")]
pub mod verify;

pub use catalog::{BLOB_ALIGN, BLOB_SECTION_PREFIX, HWDECODE_LIST, IMAGE_LIST};
pub use env::{CapacityError, Env, MapEnv, NoEnv};
pub use env_impls::{EnvText, is_settable_name};
pub use error::ResolveErr;
pub use model::{CoreClass, Engine, Flavor, Generation, ImageIndex, ProfKind, Region, SlotId};
pub use names::{ParseError, RawValueError};
pub use request::{Failure, Request};
pub use resolve::{
    get_hwdecode_table, get_memory_image, get_memory_image_const, resolve_hwdecode, resolve_image,
    resolve_image_const,
};
pub use snapshot::{EnvSnapshot, SNAPSHOT_VALUE_CAPACITY};
#[cfg(feature = "std")]
pub use std_env::StdEnv;

/// The repository README's Rust examples, compiled and run as doc tests (not rendered).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExamples;
