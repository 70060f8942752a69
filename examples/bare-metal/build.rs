//! Puts the memory map where the linker finds it as `memory.x` (cortex-m-rt's `link.x` includes
//! it), with `blobs.x`, which it includes: the part's map (`memory/board.x`), or QEMU's
//! mps2-an386 map (`memory/mps2-an386.x`) with feature `qemu`. (No `memory.x` in this directory:
//! the linker would find that one first, whatever the feature.)
//!
//! With feature `partition`: reads the partition's public key from the PEM file named by
//! `NRTUCODE_PARTITION_KEY` (an absolute path; default: `keys/test-ed25519.pub.pem`, the
//! repository's test key) and writes it as a `nrtucode::partition::PublicKey` const for
//! `src/part.rs`.
use std::path::{Path, PathBuf};
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
    if env::var_os("CARGO_FEATURE_PARTITION").is_some() {
        if env::var_os("CARGO_FEATURE_EMBEDDED").is_some() {
            fail(
                "feature `partition` reads the blobs from a partition: build it with \
                 --no-default-features (without `embedded`), or the blobs are linked too",
            );
        }
        partition_key(&out);
    }
}

/// Writes `$OUT_DIR/partition_key.rs`: the public key and where it came from.
fn partition_key(out: &Path) {
    println!("cargo::rerun-if-env-changed=NRTUCODE_PARTITION_KEY");
    let (path, test_key) = match env::var_os("NRTUCODE_PARTITION_KEY") {
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
        _ => (PathBuf::from("keys/test-ed25519.pub.pem"), true),
    };
    println!("cargo::rerun-if-changed={}", path.display());
    let pem = fs::read_to_string(&path).unwrap_or_else(|e| {
        fail(&format!(
            "NRTUCODE_PARTITION_KEY: cannot read {}: {e}",
            path.display()
        ))
    });
    if pem.contains("PRIVATE KEY") {
        fail(&format!(
            "NRTUCODE_PARTITION_KEY names a private key ({}); give its public key: \
             nrtucode key public KEY.pem -o KEY.pub.pem",
            path.display()
        ));
    }
    let key = ed25519_compact::PublicKey::from_pem(&pem).unwrap_or_else(|e| {
        fail(&format!(
            "NRTUCODE_PARTITION_KEY: {} is not an ed25519 public key in SPKI PEM \
             (nrtucode key public writes one): {e}",
            path.display()
        ))
    });
    let bytes: Vec<String> = key.iter().map(|b| format!("{b:#04x}")).collect();
    let source = if test_key {
        "the test key keys/test-ed25519.pub.pem (never for real firmware)".to_owned()
    } else {
        "NRTUCODE_PARTITION_KEY".to_owned()
    };
    let code = format!(
        "/// The key the partition must be signed with (from {source}).\n\
         pub const PARTITION_KEY: nrtucode::partition::PublicKey =\n    \
         nrtucode::partition::PublicKey::from_bytes([{}]);\n\
         /// `true` when it is the repository's test key (the default).\n\
         pub const TEST_KEY: bool = {test_key};\n",
        bytes.join(", ")
    );
    fs::write(out.join("partition_key.rs"), code).expect("write partition_key.rs");
}

/// Stops the build with a message cargo shows.
fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1)
}
