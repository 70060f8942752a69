#![doc = include_str!("../README.md")]
#![no_std]
#![forbid(unsafe_code)]

pub mod catalog;
pub mod env;
mod error;
mod index;
pub mod model;
pub mod prof;
mod resolve;
mod snapshot;
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
pub use snapshot::{EnvSnapshot, SNAPSHOT_VALUE_CAPACITY};
#[cfg(feature = "std")]
pub use std_env::StdEnv;
