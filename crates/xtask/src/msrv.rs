//! `cargo xtask msrv`: the oldest Rust the core builds with, its `rust-version` (from `cargo
//! metadata`; that the facts crate, its build-dependency, declares the same is the policy test's):
//! 1.86, set by heapless 0.9 (0.9.1 declares no rust-version and does not compile on 1.85; 0.9.2
//! and later declare 1.87 and 1.88). The core's own code needs only edition 2024's 1.85.
//!
//! Checked the way a user on that toolchain sees it: a fresh crate outside the workspace depends
//! on the core by path and resolves its own Cargo.lock with that toolchain's cargo, MSRV-aware
//! (older sha2 for older toolchains: the core requires "0.11", sha2 0.11.1 declares 1.88 and
//! 0.11.0 1.85), then builds for the host and for thumbv7em-none-eabihf, default features and the
//! small firmware set. The workspace itself is not built with the floor: its Cargo.lock pins the
//! newest dependencies (sha2 0.11.1), which the workspace's own toolchain needs, not the floor.

use std::path::Path;
use std::process::Stdio;

use crate::build;
use crate::build::{cmd, status};
use crate::metadata::Metadata;

/// The bare-metal target the floor must also build for.
const TARGET: &str = "thumbv7em-none-eabihf";

/// The consumer: the core as firmware uses it, a resolver over an injected environment.
const CONSUMER_LIB: &str = r#"//! Uses the core as firmware would: a resolver over an injected environment.
#![no_std]

/// CAYMAN NX ACT's IRAM image, PERF unless the environment says otherwise.
pub fn image(flavor: &'static [u8]) -> Result<&'static [u8], nrtucode::ResolveErr> {
    let mut env: nrtucode::MapEnv<'_, 1> = nrtucode::MapEnv::new();
    let _ = env.set(nrtucode::FLAVOR_VAR, flavor);
    nrtucode::get_memory_image(7, 0, 0, &env)
}
"#;

/// The toolchain of a `rust-version` `1.N` (`1.N.0`), or why it is not one.
pub fn toolchain(rust_version: &str) -> Result<String, String> {
    match rust_version.split_once('.') {
        Some(("1", minor)) if !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit()) => {
            Ok(format!("{rust_version}.0"))
        }
        _ => Err(format!(
            "the core's rust-version is \"{rust_version}\", not \"1.N\""
        )),
    }
}

/// Runs the task.
pub fn run(meta: &Metadata) -> Result<(), String> {
    let msrv = meta
        .field("nrtucode", "rust_version")
        .ok_or("msrv: the core declares no rust-version")?;
    let toolchain = toolchain(&msrv).map_err(|e| format!("msrv: {e}"))?;
    let plus = format!("+{toolchain}");
    let installed = build::stdout(&mut cmd("rustup", "toolchain list"))?;
    if !installed
        .lines()
        .any(|l| l.starts_with(&format!("{toolchain}-")))
    {
        status(&mut cmd(
            "rustup",
            &format!("toolchain install {toolchain} --profile minimal"),
        ))?;
    }
    // The prebuilt standard library for the target, where the toolchain server has it; where it
    // does not (1.86's thumbv7em rust-std cannot be downloaded here), `core` is built from the
    // toolchain's own rust-src instead: the same compiler compiling the same code for the target.
    let mut target_args = vec!["--target", TARGET];
    let added = cmd("rustup", &format!("{plus} target add {TARGET}"))
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run rustup: {e}"))?;
    if !added.success() {
        status(&mut cmd(
            "rustup",
            &format!("{plus} component add rust-src"),
        ))?;
        target_args.push("-Zbuild-std=core");
        println!(
            "msrv: no prebuilt {TARGET} standard library for {toolchain}; building core from rust-src"
        );
    }

    // The consumer: its own directory and target directory (artifacts of another rustc are never
    // reused), kept between runs so that a warm run only re-resolves and rebuilds the core.
    let work = meta.target_dir.join("msrv");
    let consumer = work.join("consumer");
    let core = build::toml_string(build::path_str(&meta.root)?)?;
    // What is built: for the host (`false`) or TARGET, and the dependency's features.
    let builds = [
        (false, "default features", "default-features = true"),
        (false, "std and digest", r#"features = ["std", "digest"]"#),
        (
            false,
            "std and partition",
            r#"features = ["std", "partition"]"#,
        ),
        (true, "default features", "default-features = true"),
        (
            true,
            "gen-cayman flavor-perf digest defmt",
            r#"default-features = false, features = ["gen-cayman", "flavor-perf", "digest", "defmt"]"#,
        ),
        (
            true,
            "partition alone (no blob embedded)",
            r#"default-features = false, features = ["partition"]"#,
        ),
        (
            true,
            "partition and deflate (no blob embedded)",
            r#"default-features = false, features = ["partition", "deflate"]"#,
        ),
    ];
    for (target, what, features) in builds {
        let (what, args) = match target {
            true => (format!("{TARGET}, {what}"), &target_args[..]),
            false => (format!("host, {what}"), &[][..]),
        };
        let dependency = format!("nrtucode = {{ path = {core}, {features} }}");
        build::consumer(
            &consumer,
            "msrv-consumer",
            (&dependency, ""),
            "lib.rs",
            CONSUMER_LIB,
        )?;
        fresh_build(&consumer, &work, &plus, args).map_err(|e| {
            format!("msrv: a fresh crate on Rust {toolchain} does not build ({what}): {e}")
        })?;
        println!("msrv: Rust {toolchain} builds the core: {what}");
    }
    Ok(())
}

/// Resolves the consumer's Cargo.lock anew with the toolchain `plus` (`+1.N.0`), MSRV-aware,
/// then builds it with `args`, warnings denied (the core is a path dependency, so its warnings
/// show: on an older rustc some lints differ).
fn fresh_build(consumer: &Path, work: &Path, plus: &str, args: &[&str]) -> Result<(), String> {
    let lock = consumer.join("Cargo.lock");
    if lock.exists() {
        crate::files::remove(&lock)?;
    }
    let cargo = |sub: &str| {
        let mut command = cmd("cargo", &format!("{plus} {sub} --quiet"));
        command
            .current_dir(consumer)
            .env("CARGO_TARGET_DIR", work.join("target"))
            // MSRV-aware resolution whatever the consumer's edition (2024 implies it already).
            .env("CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS", "fallback")
            .env("RUSTFLAGS", "-D warnings")
            // The toolchain is the one named, never the one running xtask.
            .env_remove("RUSTUP_TOOLCHAIN")
            .env_remove("RUSTC")
            .env_remove("CARGO");
        command
    };
    status(&mut cargo("generate-lockfile"))?;
    let mut build = cargo("build");
    build.args(args);
    if args.contains(&"-Zbuild-std=core") {
        build.env("RUSTC_BOOTSTRAP", "1");
    }
    status(&mut build)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_1_n_rust_version_names_a_toolchain() {
        assert_eq!(toolchain("1.86").unwrap(), "1.86.0");
        for bad in ["1.86.1", "2.0", "1.", "1.8x", "", "1"] {
            assert!(toolchain(bad).is_err(), "{bad}");
        }
    }
}
