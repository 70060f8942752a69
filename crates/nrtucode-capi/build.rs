//! Gives the shared library a versioned SONAME on Linux, `libnrtucode.so.0` (the C library's
//! name, `[package.metadata.capi.library]`, is `nrtucode`; cargo's file is
//! `libnrtucode_capi.so` only because the Rust crate `nrtucode` is the core), so programs record
//! the ABI version they were linked against (`readelf -d`, `NEEDED`) and an installed
//! `libnrtucode.so.0.2.0` can be upgraded in place (`scripts/install-c.sh`). The major number is
//! the C ABI's: it changes only when a signature or a return code does.

/// The C library's name: `lib<NAME>.so.<ABI_MAJOR>`, `lib<NAME>.a`, `<NAME>.pc`.
const LIBRARY_NAME: &str = "nrtucode";
/// The SONAME's major version: the C ABI's.
const ABI_MAJOR: u32 = 0;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    // cargo-c (`cargo cinstall`) passes the same SONAME (`version_suffix_components = 1`).
    if os == "linux" {
        println!("cargo::rustc-cdylib-link-arg=-Wl,-soname,lib{LIBRARY_NAME}.so.{ABI_MAJOR}");
    }
}
