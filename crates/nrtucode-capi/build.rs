//! Gives the shared library a versioned SONAME on Linux, `libnrtucode_capi.so.0`, so programs
//! record the ABI version they were linked against (`readelf -d`, `NEEDED`) and an installed
//! `libnrtucode_capi.so.0.1.0` can be upgraded in place. The major number is the C ABI's: it
//! changes only when a signature or a return code does.

/// The SONAME's major version: the C ABI's.
const ABI_MAJOR: u32 = 0;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" {
        println!("cargo::rustc-cdylib-link-arg=-Wl,-soname,libnrtucode_capi.so.{ABI_MAJOR}");
    }
}
