//! Puts the memory map where the linker finds it as `memory.x` (cortex-m-rt's `link.x` includes
//! it), with `blobs.x`, which it includes: the part's map (`memory/board.x`), or QEMU's
//! mps2-an386 map (`memory/mps2-an386.x`) with feature `qemu`. (No `memory.x` in this directory:
//! the linker would find that one first, whatever the feature.)
//!
//! With feature `partition`: reads the partition's public key from the PEM file named by
//! `NRTUCODE_PARTITION_KEY` (an absolute path, or `test` for the repository's test key
//! `keys/test-ed25519.pub.pem`, whose private half is committed: the boot log then warns) and
//! writes it as a `nrtucode::partition::PublicKey` const for `src/part.rs`. Nothing is trusted
//! by default: with no key named, the build fails, saying how to name one.
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
        Some(name) if name == "test" => (PathBuf::from("keys/test-ed25519.pub.pem"), true),
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
         /// `true` when it is the repository's test key (`NRTUCODE_PARTITION_KEY=test`).\n\
         pub const TEST_KEY: bool = {test_key};\n",
        bytes.join(", ")
    );
    fs::write(out.join("partition_key.rs"), code).expect("write partition_key.rs");
}

/// Why a build with feature `partition` and no key named stops.
const NO_KEY: &str = "feature `partition` trusts only the key you name: set \
NRTUCODE_PARTITION_KEY to the absolute path of your public key (nrtucode key public KEY.pem -o \
KEY.pub.pem), or to `test` for the repository's test key (tests only: its private half is \
committed, so anyone can sign a partition it accepts)";

/// Stops the build with a message cargo shows.
fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1)
}
