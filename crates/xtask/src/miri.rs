//! `cargo xtask miri`: the environment code and the core crate's tests under miri (nightly):
//! the core's unit tests (EnvSnapshot, the types' conversions, the flavor index against the
//! scan) and the integration tests miri can run in a few minutes, then the edition-2021 race of
//! StdEnv and EnvSnapshot::capture against std::env::set_var on another thread
//! (crates/nrtucode-env-stress, a short run: miri checks every access of it for undefined
//! behaviour and data races), and the C ABI's unit tests (its `unsafe` FFI entry points). The
//! core has no unsafe code.
//!
//! Left out, with why (all of these run natively in `cargo test`; what they check is safe
//! code):
//!
//! - tests/model: safe code comparing tables and environment matrices against the facts and
//!   a model (its proptest properties alone would take hours under miri); no unsafe code runs
//!   there that the unit tests do not already reach
//! - tests/resolvers' front module (its own feature selection: a second miri build) and
//!   map_env and prof modules (the same resolvers the three run modules reach)
//! - tests/std_env.rs: starts child processes (isolation); StdEnv runs under miri in the
//!   env-stress race
//! - the tests and modules [`SKIPS`] names (the modules `partition` and `update`: the
//!   packer, a dev-dependency of the core, turns them on in its test builds).

use std::time::Instant;

use crate::build::{cmd, status};

/// The tests left out of both runs, and why.
pub const SKIPS: [&str; 3] = [
    // Reads the test executable from disk (isolation).
    "the_payload_is_in_this_executable_once",
    // The core's dev-dependency on the packer turns on `partition` and `update` in its test
    // builds (cargo unifies a dev-dependency's features), which miri's lib run had not built:
    // their unit tests are safe code over byte slices (the core has no unsafe) or open files
    // and FIFOs (isolation), and run natively in `cargo test`; the ed25519 verifications
    // they do would take minutes interpreted.
    "partition::",
    "update::",
];

/// The packages every miri run selects, and their features: the core, the C ABI (its unit
/// tests; none is in a module the skips name: a unit test below) and the environment race.
const PACKAGES: &str =
    "-p nrtucode -p nrtucode-capi -p nrtucode-env-stress --features nrtucode/std";

/// The integration-test modules miri runs, named as filters (of the binary tests/resolvers).
const MODULES: [&str; 3] = ["return_codes::", "const_eval::", "single_copy::"];

/// `cargo xtask miri`.
pub fn run() -> Result<(), String> {
    let toolchains = crate::build::stdout(&mut cmd("rustup", "toolchain list")).unwrap_or_default();
    if !toolchains.lines().any(|l| l.starts_with("nightly")) {
        status(&mut cmd(
            "rustup",
            "toolchain install nightly --profile minimal",
        ))?;
    }
    let components = "+nightly component add miri rust-src";
    if !crate::build::quietly(&mut cmd("rustup", components)) {
        status(&mut cmd("rustup", components))?;
    }
    let start = Instant::now();
    let skips: Vec<String> = SKIPS.iter().map(|s| format!("--skip {s}")).collect();
    let skips = skips.join(" ");
    // Every run selects the same packages and features, so that miri builds the core and its
    // dependencies once for the three (each selection of its own unified other features and
    // built them again).
    let test = format!("+nightly miri test {PACKAGES}");
    status(&mut cmd("cargo", &format!("{test} --lib -- {skips}")))?;
    let modules = MODULES.join(" ");
    let integration = format!("{test} --test resolvers -- {modules} {skips}");
    status(&mut cmd("cargo", &integration))?;
    status(&mut cmd("cargo", &format!("{test} --test set_var_race")))?;
    println!("miri: {} s", start.elapsed().as_secs());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a skip filter names in source: a filter ending in `::` a module (`mod NAME`), a
    /// plain one a test (`fn NAME(`).
    fn skipped_item(name: &str) -> String {
        match name.strip_suffix("::") {
            Some(module) => format!("mod {module}"),
            None => format!("fn {name}("),
        }
    }

    #[test]
    fn every_skipped_test_exists_in_the_core() {
        // A renamed test would silently start running under miri (or a typo skip nothing).
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut sources = String::new();
        for dir in ["src", "tests"] {
            for file in crate::files::walk(&root.join(dir), ".rs").unwrap() {
                sources.push_str(&std::fs::read_to_string(file).unwrap());
            }
        }
        for name in SKIPS {
            assert!(sources.contains(&skipped_item(name)), "{name}");
        }
        for module in MODULES {
            let m = module.trim_end_matches("::");
            assert!(sources.contains(&format!("mod {m}")), "{m}");
        }
    }

    #[test]
    fn the_skips_leave_every_test_of_the_c_abi() {
        // The C ABI's unit tests run with the core's skips: none of its modules may match one.
        let capi = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../nrtucode-capi/src");
        let files = crate::files::walk(&capi, ".rs").unwrap();
        assert!(!files.is_empty());
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for name in SKIPS {
                assert!(
                    !text.contains(&skipped_item(name)),
                    "{}: {name}",
                    file.display()
                );
            }
            let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
            assert!(
                !SKIPS.contains(&format!("{stem}::").as_str()),
                "{}",
                file.display()
            );
        }
    }
}
