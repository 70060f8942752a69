//! What the C tests share: where the crate and cargo's built libraries are, the native
//! libraries a Rust staticlib needs, and the C compiler.

use std::path::PathBuf;
use std::process::Command;

/// The crate's directory (its `include/` and `tests/c/`).
pub const CRATE_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// Native libraries a Rust staticlib needs on linux-gnu (`rustc --print native-static-libs`).
pub const NATIVE_LIBS: [&str; 7] = [
    "-lgcc_s",
    "-lutil",
    "-lrt",
    "-lpthread",
    "-lm",
    "-ldl",
    "-lc",
];

/// `target/<profile>/deps/`, next to the test executable: the libraries cargo built for this
/// very test run.
pub fn deps_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent().expect("deps directory").to_path_buf()
}

/// Runs the C compiler (`$CC`, else `gcc`) with `args`; fails the test with its stderr.
pub fn gcc(args: &[&std::ffi::OsStr]) {
    let cc = std::env::var("CC").unwrap_or_else(|_| "gcc".to_owned());
    let out = Command::new(&cc)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cc}: {e}"));
    assert!(
        out.status.success(),
        "{cc} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
