//! The crate against the independent model of the vendor resolvers (`tests/common`), one test
//! binary (each binary links the whole blob set): cursors, `Env` implementations, the
//! environment matrix, properties and the catalog against the facts. Each module is the file
//! of the same name.

#[path = "../common/mod.rs"]
mod common;

mod catalog_vs_facts;
mod cursors;
mod env_impls;
mod env_matrix;
mod properties;
