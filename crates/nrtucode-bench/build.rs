//! Compiles the C look-alike of the vendor's full library (`libnrtucode_internal.so`) into this
//! crate with `gcc -O2`, its two resolvers exported as `lookalike_full_get_memory_image` and
//! `lookalike_full_get_hwdecode_table` so they link next to ours in one binary.

use std::path::PathBuf;

use nrtucode_lookalike::{LibraryBuild, Options, generate_c};

/// The exported symbols' prefix; `src/c.rs` declares the same names.
const PREFIX: &str = "lookalike_full_";

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=../nrtucode-lookalike/src");
    println!("cargo::rerun-if-changed=../nrtucode-lookalike/c");
    println!("cargo::rerun-if-changed=../nrtucode-facts/src");
    println!("cargo::rerun-if-changed=../../blobs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let opts = Options::new(LibraryBuild::Full)
        .with_prefix(PREFIX)
        .expect("a C identifier");
    let c_path = out.join("nrtucode_lookalike_full.c");
    let source = generate_c(&opts);
    if std::fs::read(&c_path).ok().as_deref() != Some(source.as_bytes()) {
        std::fs::write(&c_path, source).expect("write the look-alike's C source");
    }
    cc::Build::new()
        .file(&c_path)
        // The vendor's optimisation level, whatever the cargo profile.
        .opt_level(2)
        .debug(false)
        .flag("-fno-toplevel-reorder")
        .warnings(false)
        .compile("nrtucode_lookalike_full");
}
