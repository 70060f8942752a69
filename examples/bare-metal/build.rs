//! Puts the memory map where the linker finds it as `memory.x` (cortex-m-rt's `link.x` includes
//! it), with `blobs.x`, which it includes: the part's map (`memory/board.x`), or QEMU's
//! mps2-an386 map (`memory/mps2-an386.x`) with feature `qemu`. (No `memory.x` in this directory:
//! the linker would find that one first, whatever the feature.)
use std::path::PathBuf;
use std::{env, fs};

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let map = if env::var_os("CARGO_FEATURE_QEMU").is_some() {
        "memory/mps2-an386.x"
    } else {
        "memory/board.x"
    };
    fs::copy(map, out.join("memory.x")).expect("copy the memory map");
    fs::copy("memory/blobs.x", out.join("blobs.x")).expect("copy blobs.x");
    println!("cargo::rustc-link-search={}", out.display());
    println!("cargo::rerun-if-changed=memory");
}
