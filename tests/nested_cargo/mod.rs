//! What the tests that run cargo inside a test share: one target directory for every nested
//! cargo run (this crate's tests and the CLI's `e2e_core`), so the dependencies build once,
//! without incremental caches (a nested build is built once and never edited); and scratch
//! directories under cargo's target tmp that are removed on drop, also when the test fails.
//!
//! Nested runs lock that directory one at a time. It is never the directory of the `cargo test`
//! running the test, so a nested run never waits for its caller's lock.
#![allow(dead_code)] // each test binary uses part of it

use std::path::{Path, PathBuf};
use std::process::Command;

/// The target directory every nested cargo run shares; kept between runs, a cache.
pub fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("nested-cargo")
}

/// `cargo` (the toolchain's running this test) building into [`target_dir`], without
/// incremental compilation.
pub fn cargo() -> Command {
    let mut command = Command::new(env!("CARGO"));
    command
        .env("CARGO_TARGET_DIR", target_dir())
        .env("CARGO_INCREMENTAL", "0");
    command
}

/// A new empty directory named `NAME…` under cargo's target tmp, removed with everything in it
/// when the returned guard drops (a panicking test drops it while unwinding).
pub fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("{name}-"))
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("a scratch directory under CARGO_TARGET_TMPDIR")
}
