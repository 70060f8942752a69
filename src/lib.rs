#![doc = include_str!("crate_docs.md")]
#![no_std]
// docs.rs (`--cfg docsrs`, nightly): every feature-gated item shows the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
// No `unsafe` block, fn or impl in the core: the only exemption is the one hand-written
// `#[unsafe(link_section)]` attribute in `catalog::embed_blob!`, applied to each generated blob
// `static`. `cargo xtask policy` checks the sources.
#![deny(unsafe_code)]

// Feature `mem-flash` only: the in-memory NOR flash for tests (`update::mem_flash`).
#[cfg(feature = "mem-flash")]
extern crate alloc;

// Each public item has one public path: the types, resolvers and environments at the root,
// the tables in `catalog`, their shapes in `table`, the profiler-table views in `prof`, the
// on-device SHA-256 check in `digest` and the compressed-blob decoder in `deflate`.
pub mod catalog;
#[cfg(feature = "deflate")]
pub mod deflate;
#[cfg(feature = "digest")]
pub mod digest;
#[cfg(feature = "partition")]
pub mod partition;
pub mod prof;
pub mod table;
#[cfg(feature = "update")]
pub mod update;

mod args;
mod env;
mod failure;
mod image_index;
mod macros;
mod names;
mod resolve;
mod slot;

pub use args::{Flavor, ProfKind, Region};
#[cfg(feature = "std")]
pub use env::StdEnv;
pub use env::{
    CapacityError, Env, EnvSnapshot, EnvText, FLAVOR_VAR, MapEnv, NoEnv, PairVisitor,
    REMOVED_FLAG_VAR, SNAPSHOT_VALUE_CAPACITY,
};
pub use failure::{Failure, Request, ResolveErr};
pub use image_index::ImageIndex;
pub use names::{ParseError, RawValueError};
pub use resolve::{
    Embedded, Resolver, get_hwdecode_table, get_memory_image, get_memory_image_const,
    resolve_hwdecode, resolve_image, resolve_image_const,
};
pub use slot::{CoreClass, Engine, Generation, SlotId};

/// The repository README's Rust examples, compiled and run as doc tests (not rendered).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExamples;
