//! Gives the shared library a versioned SONAME on Linux, `libnrtucode.so.0` (the C library's
//! name, `[package.metadata.capi.library]`, is `nrtucode`; cargo's file is
//! `libnrtucode_capi.so` only because the Rust crate `nrtucode` is the core), so programs record
//! the ABI version they were linked against (`readelf -d`, `NEEDED`) and an installed
//! `libnrtucode.so.0.3.0` can be upgraded in place (`scripts/install-c.sh`). The major number is
//! the C ABI's: it changes only when a signature or a return code does.
//!
//! With feature `partition` (the drop-in without firmware), it also writes
//! `$OUT_DIR/partition_policy.rs`: the public key the partition named by `NRTUCODE_PARTITION`
//! must be signed with, read from the SPKI PEM file named by `NRTUCODE_PARTITION_KEY` (an
//! absolute path, or `test` for the repository's test key `keys/test-ed25519.pub.pem`, whose
//! private half is committed: a library built so says it on stderr at its first call; with no
//! key named the build fails, saying how to name one: nothing is trusted by default), the
//! minimum security counter `NRTUCODE_PARTITION_MIN_COUNTER` (default 1, the counter
//! `nrtucode pack` writes by default and the bare-metal template's minimum) and the table class
//! `NRTUCODE_PARTITION_CLASS` (`full`, the default, or `front`).

use std::path::{Path, PathBuf};
use std::{env, fs};

/// The C library's name: `lib<NAME>.so.<ABI_MAJOR>`, `lib<NAME>.a`, `<NAME>.pc`.
const LIBRARY_NAME: &str = "nrtucode";
/// The SONAME's major version: the C ABI's.
const ABI_MAJOR: u32 = 0;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    // cargo-c (`cargo cinstall`) passes the same SONAME (`version_suffix_components = 1`).
    if os == "linux" {
        println!("cargo::rustc-cdylib-link-arg=-Wl,-soname,lib{LIBRARY_NAME}.so.{ABI_MAJOR}");
    }
    if env::var_os("CARGO_FEATURE_PARTITION").is_some() {
        let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
        partition_policy(&out);
    }
}

/// Writes `$OUT_DIR/partition_policy.rs`: the key, the minimum counter and the class.
fn partition_policy(out: &Path) {
    for var in [
        "NRTUCODE_PARTITION_KEY",
        "NRTUCODE_PARTITION_MIN_COUNTER",
        "NRTUCODE_PARTITION_CLASS",
    ] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let (path, test_key) = match env::var_os("NRTUCODE_PARTITION_KEY") {
        Some(name) if name == "test" => {
            (manifest_dir.join("../../keys/test-ed25519.pub.pem"), true)
        }
        Some(path) if !path.is_empty() => {
            let path = PathBuf::from(path);
            if !path.is_absolute() {
                fail(&format!(
                    "NRTUCODE_PARTITION_KEY must be an absolute path (a build script runs in \
                     the package directory), got {}",
                    path.display()
                ));
            }
            (path, false)
        }
        _ => fail(NO_KEY),
    };
    println!("cargo::rerun-if-changed={}", path.display());
    let pem = fs::read_to_string(&path).unwrap_or_else(|e| {
        fail(&format!(
            "NRTUCODE_PARTITION_KEY: cannot read {}: {e}",
            path.display()
        ))
    });
    // The one PEM reader (nrtucode_facts::pem_key): a private key, a certificate or another
    // PEM is named for what it is.
    let key = nrtucode_facts::pem_key::public_key_from_pem(&pem).unwrap_or_else(|e| {
        fail(&format!(
            "NRTUCODE_PARTITION_KEY ({}): {e} (nrtucode key public KEY.pem -o KEY.pub.pem \
             writes a public key)",
            path.display()
        ))
    });
    let min_counter: u32 = match env::var("NRTUCODE_PARTITION_MIN_COUNTER") {
        Ok(v) if !v.is_empty() => v.parse().unwrap_or_else(|_| {
            fail(&format!(
                "NRTUCODE_PARTITION_MIN_COUNTER must be a number 0..=4294967295, got '{v}'"
            ))
        }),
        _ => 1,
    };
    let class = match env::var("NRTUCODE_PARTITION_CLASS").as_deref() {
        Ok("full") | Ok("") | Err(_) => "Full",
        Ok("front") => "Front",
        Ok(other) => fail(&format!(
            "NRTUCODE_PARTITION_CLASS must be full or front, got '{other}'"
        )),
    };
    let bytes: Vec<String> = key.iter().map(|b| format!("{b:#04x}")).collect();
    if test_key {
        println!(
            "cargo::warning=NRTUCODE_PARTITION_KEY=test: the library built into this build \
             accepts partitions signed by the repository's TEST key (keys/test-ed25519.pub.pem, \
             its private half committed), and says so at its first call: for tests only"
        );
    }
    let source = if test_key {
        "NRTUCODE_PARTITION_KEY=test: the test key keys/test-ed25519.pub.pem (never for real firmware)".to_owned()
    } else {
        "NRTUCODE_PARTITION_KEY".to_owned()
    };
    let code = format!(
        "/// The key the partition must be signed with (from {source}).\n\
         pub const PARTITION_KEY: nrtucode::partition::PublicKey =\n    \
         nrtucode::partition::PublicKey::from_bytes([{}]);\n\
         /// `true` when it is the repository's test key (`NRTUCODE_PARTITION_KEY=test`).\n\
         pub const TEST_KEY: bool = {test_key};\n\
         /// What the partition must also satisfy (NRTUCODE_PARTITION_MIN_COUNTER, NRTUCODE_PARTITION_CLASS).\n\
         pub const PARTITION_POLICY: nrtucode::partition::Policy = nrtucode::partition::Policy {{\n    \
         min_security_counter: {min_counter},\n    \
         expected_class: nrtucode::partition::TableClass::{class},\n}};\n",
        bytes.join(", ")
    );
    fs::write(out.join("partition_policy.rs"), code).expect("write partition_policy.rs");
}

/// Why a partition-backed build without a key named stops.
const NO_KEY: &str = "the partition-backed library (feature partition) trusts only the key you \
name: set NRTUCODE_PARTITION_KEY to the absolute path of your public key (nrtucode key public \
KEY.pem -o KEY.pub.pem), or to `test` for the repository's test key (tests only: its private half \
is committed, so anyone can sign a partition it accepts)";

/// Stops the build with a message cargo shows.
fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1)
}
