//! `cargo xtask ci`: every check of the repository in order, as `.ci/run` ran them, after the
//! toolchains and tools are installed (`.ci/run` does that, then runs this). Each step prints
//! its start time; the run ends with one summary of the seconds each step took.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::build::{cmd, path_str, scratch, status};
use crate::metadata::Metadata;

/// The fuzz targets, all run by `ci` within one time budget.
pub const FUZZ_TARGETS: [&str; 5] = crate::fuzz::TARGETS;

/// The hosts the core, the C ABI, the carve library and the CLI type-check for: Mach-O, COFF
/// (no per-blob link_section there) and aarch64 Linux.
const PORTABLE_HOSTS: [&str; 3] = [
    "x86_64-apple-darwin",
    "x86_64-pc-windows-msvc",
    "aarch64-unknown-linux-gnu",
];

const THUMB: &str = "thumbv7em-none-eabihf";
const RISCV: &str = "riscv32imac-unknown-none-elf";

/// `cargo ARGS` (rustup's proxy, as `.ci/run` ran them) from the workspace root.
fn cargo(args: &str) -> Result<(), String> {
    status(&mut cmd("cargo", args))
}

/// The CLI's test files with cases ignored unless run as root (`#[ignore = "needs root…"]`).
pub const ROOT_TESTS: [&str; 3] = ["atomic_write", "hostile", "bounded_io"];

/// The name of the step that runs README's test command.
const WORKSPACE_TESTS: &str = "tests: cargo test --workspace (README's test command)";

/// One step of CI: a name and what it runs.
type Step<'a> = (&'a str, Box<dyn Fn() -> Result<(), String> + 'a>);

/// Runs every step, stopping at the first that fails; prints the summary either way.
pub fn run(meta: &Metadata, fuzz_seconds: u64, skip_workspace_tests: bool) -> Result<(), String> {
    let mut steps = steps(meta, fuzz_seconds);
    if skip_workspace_tests {
        steps.retain(|(name, _)| *name != WORKSPACE_TESTS);
    }
    let started = Instant::now();
    let mut took: Vec<(&str, Duration)> = Vec::new();
    let mut failed = None;
    for (name, step) in &steps {
        println!("\n==> [{:4}s] {name}", started.elapsed().as_secs());
        let t = Instant::now();
        let result = step();
        took.push((name, t.elapsed()));
        if let Err(e) = result {
            failed = Some(format!("step \"{name}\": {e}"));
            break;
        }
    }
    println!("\n==> summary: seconds per step");
    for (name, d) in &took {
        println!("{:6.0}  {name}", d.as_secs_f64());
    }
    println!("{:6.0}  total", started.elapsed().as_secs_f64());
    match failed {
        Some(e) => Err(e),
        None => {
            println!("ci: all steps passed");
            Ok(())
        }
    }
}

fn steps(meta: &Metadata, fuzz_seconds: u64) -> Vec<Step<'_>> {
    let per_target = (fuzz_seconds / FUZZ_TARGETS.len() as u64).max(1);
    vec![
        (
            "format",
            Box::new(|| {
                cargo("fmt --all -- --check")?;
                for dir in [
                    "tests/no_std",
                    "examples/bare-metal",
                    "examples/riscv-virt",
                    "fuzz",
                ] {
                    status(&mut in_dir(dir, "fmt -- --check"))?;
                }
                Ok(())
            }),
        ),
        (
            "clippy (-D warnings, all targets, all features)",
            Box::new(|| cargo("clippy --workspace --all-targets --all-features -- -D warnings")),
        ),
        // Includes crates/nrtucode-env-stress (StdEnv racing std::env::set_var on another thread
        // in an edition-2021 safe program, 3 s: issue 9), the repository policy
        // (crates/xtask/tests/policy) and the generated tables up to date
        // (crates/nrtucode-codegen/tests/up_to_date.rs).
        (WORKSPACE_TESTS, Box::new(|| cargo("test --workspace"))),
        (
            "the CLI's tests ignored where they cannot run, run here as root: tmpfs mounts, carving as nobody, resolve, pack and key -o onto device nodes made with mknod",
            Box::new(|| {
                // One run of every test file with `#[ignore = "needs root…"]` cases.
                let tests: Vec<String> = ROOT_TESTS.iter().map(|t| format!("--test {t}")).collect();
                cargo(&format!(
                    "test -p nrtucode-cli {} -- --ignored",
                    tests.join(" ")
                ))
            }),
        ),
        (
            "README's main job: the loader example on the built-in fixtures",
            Box::new(|| status(cmd("cargo", "run --example loader").stdout(Stdio::null()))),
        ),
        (
            "front-library feature selection: core, C ABI and differential oracle",
            Box::new(|| {
                // The core's doc examples assume the full set: its tests only (`--tests`).
                cargo("test -p nrtucode --tests --no-default-features --features front")?;
                cargo("test -p nrtucode-capi --no-default-features --features front")?;
                cargo("test -p nrtucode-conformance --no-default-features --features front")
            }),
        ),
        (
            "feature digest: every blob verifies, fixtures and a carved blob directory",
            Box::new(|| {
                cargo("test -p nrtucode --features digest")?;
                let work = scratch(meta, "digest")?;
                let blobs = crate::build::carved_lookalike(&work)?;
                crate::build::run_quiet("nrtucode-cli", &["check", path_str(&blobs)?])?;
                status(
                cmd("cargo", "test -p nrtucode --features digest --test digest --test blob_layout --test blob_origin")
                    .env("NRTUCODE_BLOB_DIR", &blobs),
            )?;
                let _ = std::fs::remove_dir_all(&work);
                Ok(())
            }),
        ),
        (
            "signed partitions: the reader alone (no blob embedded) on bare metal and other hosts; a pack and its inspect; flash cost of the verifier",
            Box::new(|| {
                // The oracle over full partitions and the CLI and pack tests run under `cargo test
                // --workspace`, the oracle over front partitions in the front step; the portable
                // hosts check `partition` in the portable-hosts step.
                bare_core(THUMB, "partition")?;
                bare_core(RISCV, "partition")?;
                cargo("test -p nrtucode --no-default-features --features partition --lib")?;
                crate::size::partition(meta, &true)?; // informative: docs/partition.md quotes it
                let work = scratch(meta, "partition")?;
                let part = work.join("full.part");
                let part = path_str(&part)?;
                cargo(&format!(
                    "run --quiet -p nrtucode-cli -- pack --fixtures full -o {part} --key keys/test-ed25519.pem"
                ))?;
                let inspect = format!(
                    "run --quiet -p nrtucode-cli -- inspect {part} --public-key keys/test-ed25519.pub.pem"
                );
                status(cmd("cargo", &inspect).stdout(Stdio::null()))?;
                let _ = std::fs::remove_dir_all(&work);
                Ok(())
            }),
        ),
        (
            "no_std cross build (thumbv7em-none-eabihf)",
            Box::new(|| {
                for features in ["", "defmt", "digest,defmt"] {
                    bare_core(THUMB, features)?;
                }
                cargo(&format!("build -p nrtucode --target {THUMB}"))
            }),
        ),
        (
            "more bare-metal targets: the core for RISC-V (riscv32imac) and AArch64 (aarch64-unknown-none), one generation and flavor, without and with digest and defmt",
            Box::new(|| {
                // digest alone is built by the partition step (partition implies it) and defmt alone
                // for thumbv7em above; src/ has no `not(feature)` code: the two ends of the matrix.
                for target in [RISCV, "aarch64-unknown-none"] {
                    bare_core(target, "gen-cayman,flavor-perf")?;
                    bare_core(target, "gen-cayman,flavor-perf,digest,defmt")?;
                }
                Ok(())
            }),
        ),
        (
            "portable hosts: the core (with partition), the C ABI, the carve library and the CLI type-check for macOS, Windows (no per-blob link_section there) and aarch64 Linux",
            Box::new(|| {
                for target in PORTABLE_HOSTS {
                    // Every optional feature of the core at once (partition implies digest).
                    cargo(&format!(
                        "check -p nrtucode --features std,digest,defmt,partition --target {target}"
                    ))?;
                    cargo(&format!("check -p nrtucode-capi --target {target}"))?;
                    cargo(&format!(
                        "check -p nrtucode-carve -p nrtucode-cli --target {target}"
                    ))?;
                }
                Ok(())
            }),
        ),
        (
            "doc tests and docs: the StdEnv example once more with a flavor set, rustdoc -D warnings, no link leaves the docs (README's test command runs every doc test)",
            Box::new(|| {
                // The StdEnv example checks flavor 0 against its environment: once more with a
                // flavor set.
                status(
                    cmd("cargo", "test -p nrtucode --features std --doc StdEnv")
                        .env("NEURON_UCODE_FLAVOR", "test"),
                )?;
                status(
                    cmd("cargo", "doc --workspace --no-deps").env("RUSTDOCFLAGS", "-D warnings"),
                )?;
                crate::docs::doc_links(meta, &[]) // no link in the rendered docs leaves them
            }),
        ),
        (
            "release build of the workspace (CLI, C libraries)",
            Box::new(|| {
                cargo("build --release --workspace")?;
                for file in ["nrtucode", "libnrtucode_capi.a", "libnrtucode_capi.so"] {
                    let path = meta.target_dir.join("release").join(file);
                    let len = std::fs::metadata(&path)
                        .map_err(|e| format!("{}: {e}", path.display()))?
                        .len();
                    println!("{len:>10}  {}", path.display());
                }
                Ok(())
            }),
        ),
        (
            "docs as docs.rs builds them (nightly, --cfg docsrs, the metadata's features, -D warnings)",
            Box::new(|| crate::docs::docsrs(meta)),
        ),
        (
            "the oldest Rust the core builds with (its rust-version): a fresh crate resolving and building with it, host and thumbv7em",
            Box::new(|| crate::msrv::run(meta)),
        ),
        (
            "packages: cargo package with verification, < 10 MiB, no binaries; used from fresh crates (host, thumbv7em) and the packaged CLI",
            Box::new(|| crate::package::run(meta, &[])),
        ),
        // crates/nrtucode-capi/tests/install_c.rs; `--workspace` keeps README's test command's
        // features: nothing is built again.
        (
            "C library: scripts/install-c.sh into temporary prefixes, C programs through pkg-config (shared, then static), refusals, uninstall, hostile cases",
            Box::new(|| cargo("test --workspace --test install_c -- --ignored")),
        ),
        (
            "no panic reachable from the resolvers (link check on thumbv7em and riscv32imac; the deflate path by its call graph)",
            Box::new(|| crate::nopanic::run(meta)),
        ),
        (
            "bare-metal template: blobs in XFLASH, internal flash < 16 KiB, gc per blob",
            Box::new(|| {
                clippy_release("examples/bare-metal", "--bins --examples")?;
                clippy_release(
                    "examples/bare-metal",
                    "--bins --examples --features qemu,const-resolve",
                )?;
                crate::bare_metal::run(meta)
            }),
        ),
        (
            "bare metal under QEMU: the template on mps2-an386 (intact, tampered, erased flash; decoded defmt log), a RISC-V loader on virt",
            Box::new(|| {
                crate::qemu::arm(meta, &())?;
                clippy_release("examples/riscv-virt", "")?;
                crate::qemu::riscv(meta, &())
            }),
        ),
        (
            "the template README's walkthrough, as written: carve (the look-alike for the vendor library), build a copy of the template from the carve, boot it under QEMU",
            Box::new(|| crate::qemu::walkthrough(meta, &())),
        ),
        (
            "the template with feature partition under QEMU: no blob linked, the signed partition loaded on its own at 0x21000000, every tamper case refused (decoded log, exit status), the README's three commands as written",
            Box::new(|| {
                for features in ["partition,deflate", "qemu,partition"] {
                    clippy_release(
                        "examples/bare-metal",
                        &format!("--bins --no-default-features --features {features}"),
                    )?;
                }
                clippy_release(
                    "examples/bare-metal",
                    "--bins --examples --no-default-features --features qemu,deflate",
                )?;
                crate::qemu::partition(meta, &())
            }),
        ),
        (
            "reproducible firmware: the template from two checkouts puts the same bytes into flash",
            Box::new(|| crate::reproducible::run(meta)),
        ),
        (
            "deflate codec: round trips, refusals, real firmware (cyw43-firmware crate) against gzip -9, fixtures stay stored",
            Box::new(|| {
                cargo("test -p nrtucode-deflate -- --include-ignored")?;
                bare_core(THUMB, "gen-cayman,flavor-perf,deflate,defmt")
            }),
        ),
        (
            "miri",
            Box::new(|| {
                crate::miri::run()?;
                cargo("+nightly miri test -p nrtucode-capi --lib")
            }),
        ),
        (
            "benchmarks compile",
            Box::new(|| cargo("bench -p nrtucode-bench --no-run")),
        ),
        (
            "carve speed vs binutils and vs cat | sha256sum (informative; README: at or below 1.0x)",
            Box::new(|| cargo("bench -p nrtucode-cli --bench carve")),
        ),
        (
            "fuzz the carver, the blob directory check, the partition reader and the deflate decoder (bounded in all)",
            Box::new(move || crate::fuzz::run(meta, per_target, &FUZZ_TARGETS.map(String::from))),
        ),
    ]
}

/// `cargo ARGS` (rustup's proxy) in the separate workspace `dir` (the templates, fuzz,
/// tests/no_std).
fn in_dir(dir: &str, args: &str) -> Command {
    let mut command = cmd("cargo", args);
    command.current_dir(dir);
    command
}

/// `cargo clippy --quiet --release --locked ARGS -- -D warnings` in the separate workspace `dir`
/// (the bare-metal template, the RISC-V loader).
fn clippy_release(dir: &str, args: &str) -> Result<(), String> {
    status(&mut in_dir(
        dir,
        &format!("clippy --quiet --release --locked {args} -- -D warnings"),
    ))
}

/// The core for a bare-metal target with only the named features.
fn bare_core(target: &str, features: &str) -> Result<(), String> {
    let features = if features.is_empty() {
        String::new()
    } else {
        format!("--features {features}")
    };
    cargo(&format!(
        "build -p nrtucode --target {target} --no-default-features {features}"
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_cli_test_file_with_root_only_cases_is_run_as_root() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../nrtucode-cli/tests");
        let mut found = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            if text.contains("#[ignore = \"needs root") {
                found.push(path.file_stem().unwrap().to_string_lossy().into_owned());
            }
        }
        found.sort();
        let mut listed = super::ROOT_TESTS.to_vec();
        listed.sort_unstable();
        assert_eq!(found, listed);
    }
}
