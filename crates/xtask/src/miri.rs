//! `cargo xtask miri`: the environment code and the core crate's tests under miri (nightly):
//! the core's unit tests (EnvSnapshot, the types' conversions, the flavor index against the
//! scan) and the integration tests miri can run in a few minutes, then the edition-2021 race of
//! StdEnv and EnvSnapshot::capture against std::env::set_var on another thread
//! (crates/nrtucode-env-stress, a short run: miri checks every access of it for undefined
//! behaviour and data races). The core has no unsafe code; the C ABI's unit tests run under
//! miri in `cargo xtask ci`.
//!
//! Left out, with why (all of these run natively in `cargo test`; what they check is safe
//! code):
//!
//! - tests/properties.rs: proptest, 4096 cases per property: hours under miri
//! - tests/front.rs: needs its own feature selection (a second miri build)
//! - tests/std_env.rs: starts child processes (isolation); StdEnv runs under miri in the
//!   env-stress race
//! - tests/cursors.rs: parses getters.tsv for each of 161 cursors
//! - the tests [`SKIPS`] names.

use std::process::{Command, Stdio};
use std::time::Instant;

use crate::status;

/// The tests left out of both runs, and why.
pub const SKIPS: [&str; 6] = [
    // Reads the test executable from disk (isolation).
    "the_payload_is_in_this_executable_once",
    // 96,824 cases: > 5 min.
    "matrix_matches_the_model_for_every_slot_region_and_flavor",
    // 183,456 cases: > 5 min.
    "snapshot_matches_the_model_and_the_map_in_every_cell",
    // Regenerates ~10 MB of fixtures.
    "fixture_build_embeds_exactly_the_generated_bytes",
    // Parses getters.tsv: ~70 s.
    "every_getter_matches_its_facts_row_and_feature_selection",
    // Parses getters.tsv: ~57 s.
    "hwdecode_list_matches_the_facts",
];

/// The integration-test modules miri runs, named as filters (the tests are grouped into two
/// binaries, tests/resolvers and tests/model).
const MODULES: [&str; 5] = [
    "return_codes::",
    "const_eval::",
    "single_copy::",
    "catalog_vs_facts::",
    "env_matrix::",
];

/// `cargo +nightly ARGS` (through rustup's proxy: `$CARGO` names one toolchain's cargo).
fn nightly(args: &[&str]) -> Command {
    let mut command = Command::new("cargo");
    command.arg("+nightly").args(args);
    command
}

/// `cargo xtask miri`.
pub fn run() -> Result<(), String> {
    let has_nightly = Command::new("rustup")
        .args(["toolchain", "list"])
        .output()
        .is_ok_and(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .any(|l| l.starts_with("nightly"))
        });
    if !has_nightly {
        status(Command::new("rustup").args([
            "toolchain",
            "install",
            "nightly",
            "--profile",
            "minimal",
        ]))?;
    }
    let components = ["+nightly", "component", "add", "miri", "rust-src"];
    let quiet = Command::new("rustup")
        .args(components)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !quiet {
        status(Command::new("rustup").args(components))?;
    }
    let start = Instant::now();
    let skips: Vec<&str> = SKIPS.iter().flat_map(|s| ["--skip", s]).collect();
    let mut lib = vec![
        "miri",
        "test",
        "-p",
        "nrtucode",
        "--features",
        "std",
        "--lib",
        "--",
    ];
    lib.extend(&skips);
    status(&mut nightly(&lib))?;
    let mut integration = vec![
        "miri",
        "test",
        "-p",
        "nrtucode",
        "--features",
        "std",
        "--test",
        "resolvers",
        "--test",
        "model",
        "--",
    ];
    integration.extend(MODULES);
    integration.extend(&skips);
    status(&mut nightly(&integration))?;
    status(&mut nightly(&["miri", "test", "-p", "nrtucode-env-stress"]))?;
    println!("miri: {} s", start.elapsed().as_secs());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_skipped_test_exists_in_the_core() {
        // A renamed test would silently start running under miri (or a typo skip nothing).
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut sources = String::new();
        for dir in ["src", "tests"] {
            let mut stack = vec![root.join(dir)];
            while let Some(d) = stack.pop() {
                for entry in std::fs::read_dir(&d).unwrap().flatten() {
                    let p = entry.path();
                    if p.is_dir() {
                        stack.push(p);
                    } else if p.extension().is_some_and(|e| e == "rs") {
                        sources.push_str(&std::fs::read_to_string(&p).unwrap());
                    }
                }
            }
        }
        for name in SKIPS {
            assert!(sources.contains(&format!("fn {name}(")), "{name}");
        }
        for module in MODULES {
            let m = module.trim_end_matches("::");
            assert!(sources.contains(&format!("mod {m}")), "{m}");
        }
    }
}
