//! What the partition tests share (`partition.rs`, `compressed_partition.rs`,
//! `hostile_partition.rs`): the repository's test keys and the tool run from a directory, with
//! the two variables the resolvers read removed from its environment.

#![allow(dead_code)] // each test file uses a part

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository's root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The committed test key (a test key, never for real firmware).
pub fn key() -> PathBuf {
    root().join("keys/test-ed25519.pem")
}

/// Its public half.
pub fn public() -> PathBuf {
    root().join("keys/test-ed25519.pub.pem")
}

/// `nrtucode ARGS` run in `cwd`, without `NEURON_UCODE_FLAVOR` and `NRTUCODE_MPLUS_ON_MARIANA`.
pub fn nrtucode<S: AsRef<OsStr>>(args: &[S], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nrtucode"))
        .args(args)
        .current_dir(cwd)
        .env_remove("NEURON_UCODE_FLAVOR")
        .env_remove("NRTUCODE_MPLUS_ON_MARIANA")
        .output()
        .expect("run nrtucode")
}

/// Bytes as text, for messages.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
