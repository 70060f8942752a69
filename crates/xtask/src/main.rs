//! `cargo xtask <task>`: the repository's checks and measurements in one place (the alias is in
//! `.cargo/config.toml`). `cargo xtask ci` is what `.ci/run` runs once it has installed the
//! toolchains and tools; every other task is one check or measurement, runnable on its own.
//!
//! The workspace's root, target directory and published crates come from `cargo metadata`;
//! ELF files are read with `object`; what a task tests is what it just built (cargo's messages
//! name the files, [`build`]). Every task is Rust: only `scripts/install-c.sh`, which users run
//! by hand, is a script.

mod bare_metal;
mod bench;
mod build;
mod carve;
mod ci;
mod deflate_cost;
mod device;
mod device_cost;
mod elf;
mod env30;
mod files;
mod fuzz;
mod install_c_check;
mod instructions;
mod links;
mod metadata;
mod miri;
mod msrv;
mod nopanic;
mod package;
mod panic;
mod partition_cost;
mod partition_size;
mod qemu;
mod qemu_partition;
mod reproducible;
mod size;
mod walkthrough;

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use clap::{Parser, Subcommand};

use metadata::Metadata;

/// The repository's checks and measurements.
#[derive(Parser)]
#[command(name = "cargo xtask", about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Every check CI runs, in order, with the elapsed seconds of each step and a final summary
    /// (what `.ci/run` runs after installing toolchains and tools).
    Ci {
        /// Seconds of fuzzing in all, split evenly over the fuzz targets (a smoke run on fresh
        /// corpora: longer runs are `cargo xtask fuzz --seconds N`).
        #[arg(long, default_value_t = 60)]
        fuzz_seconds: u64,
        /// Leave out README's test command (`cargo test --workspace`): `.ci/run` runs it itself,
        /// in so many words, before this.
        #[arg(long)]
        skip_workspace_tests: bool,
    },
    /// `cargo package` of the published crates, checked and used from fresh consumer crates.
    Package {
        /// Extra `cargo package` arguments (e.g. `--allow-dirty`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// The oldest Rust the core builds with (its rust-version), host and thumbv7em.
    Msrv,
    /// The published crates' docs as docs.rs builds them (nightly, `--cfg docsrs`, -D warnings).
    Docsrs,
    /// scripts/install-c.sh into a temporary prefix; C programs through pkg-config (shared, then
    /// static); a DESTDIR install, refusals of foreign files, --force, --uninstall.
    InstallCCheck,
    /// The bare-metal template under QEMU: mps2-an386 (Arm), and the RISC-V loader on virt.
    Qemu {
        /// Which machine: arm, riscv or both.
        #[arg(long, default_value = "both")]
        arch: Arch,
    },
    /// The bare-metal template's link checks (blobs in XFLASH, internal flash < 16 KiB, gc per
    /// blob), with the flash split of run-time vs compile-time resolution.
    BareMetal,
    /// The template README's walkthrough, as written: carve the look-alike, build a copy of the
    /// template from the carve, boot it under QEMU.
    Walkthrough,
    /// The template with feature `partition` under QEMU: the signed partition at 0x21000000,
    /// every tamper case refused, the README's three commands as written.
    QemuPartition,
    /// The instructions and flash a partition boot costs on the device (QEMU mps2-an386).
    PartitionCost,
    /// Two checkouts of the template put the same bytes into flash.
    Reproducible,
    /// The flash cost of the resolvers on thumbv7em (code, table metadata, blob payload; what
    /// `verify` adds) and the build cost of embedding the payload.
    Size {
        /// Leave out the build-cost table (two timed release builds of the core).
        #[arg(long)]
        no_build_cost: bool,
    },
    /// Instructions per resolver call under callgrind: ours, the C look-alike, the ideal.
    Instructions {
        /// lto = "fat", codegen-units = 1 (typical firmware profile).
        #[arg(long)]
        lto: bool,
    },
    /// Wall time per resolver call (criterion): ours, the C look-alike, the ideal.
    Bench {
        /// lto = "fat", codegen-units = 1.
        #[arg(long)]
        lto: bool,
        /// 0.5 s warm-up and 1 s measurement per path (default 1 s / 3 s).
        #[arg(long)]
        quick: bool,
    },
    /// The instructions verification costs on the Cortex-M (QEMU mps2-an386), sha2 compact and
    /// unrolled, and the template's internal flash with each.
    DeviceCost,
    /// The instructions and flash the deflate decoder costs on the Cortex-M (QEMU mps2-an386).
    DeflateCost {
        /// Build and print the flash lines only, no QEMU run.
        #[arg(long)]
        flash_only: bool,
    },
    /// The flash cost of the partition reader and the ed25519 verifiers on thumbv7em.
    PartitionSize,
    /// No panic reachable from the resolvers (link check on thumbv7em and riscv32imac; the
    /// deflate path and ed25519 verify by call graph).
    Nopanic,
    /// No link in the rendered docs (`cargo doc --workspace --no-deps`) leaves them.
    DocLinks {
        /// Crates to check, as rustdoc names them (default: every library of the workspace).
        crates: Vec<String>,
    },
    /// Carve speed against `cat | sha256sum` (target: ratio at or below 1.0).
    CarveSpeed {
        /// The library to carve (default: the full look-alike, gcc -O2, built first).
        lib: Option<PathBuf>,
        /// Rounds of the two commands, alternating; the best time of each counts.
        #[arg(long, default_value_t = 7)]
        rounds: u32,
    },
    /// Carve speed against the binutils pipeline (objdump, readelf, dd, sha256sum).
    CarveVsBinutils {
        /// The library to carve (default: the full look-alike, gcc -O2, built first).
        lib: Option<PathBuf>,
    },
    /// The carve build matrix alone (look-alike × build conditions × strip states), with its
    /// cell counts.
    CarveMatrix,
    /// Fuzz the carver, the blob directory check, the partition reader and the inflater.
    Fuzz {
        /// Seconds per target.
        #[arg(long, default_value_t = 30)]
        seconds: u64,
        /// Targets (default: carve blob_dir partition inflate).
        targets: Vec<String>,
    },
    /// The core's tests and the StdEnv race under miri (nightly).
    Miri,
}

/// The QEMU machines.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Arch {
    /// mps2-an386 (Cortex-M4).
    Arm,
    /// virt (riscv32).
    Riscv,
    /// Both.
    Both,
}

fn main() -> ExitCode {
    match run(Cli::parse().task) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(task: Task) -> Result<(), String> {
    let meta = Metadata::load()?;
    std::env::set_current_dir(&meta.root)
        .map_err(|e| format!("cannot enter {}: {e}", meta.root.display()))?;
    match task {
        Task::Ci {
            fuzz_seconds,
            skip_workspace_tests,
        } => ci::run(&meta, fuzz_seconds, skip_workspace_tests),
        Task::Package { args } => package::run(&meta, &args),
        Task::Msrv => msrv::run(&meta),
        Task::Docsrs => docsrs(&meta),
        Task::InstallCCheck => install_c_check::run(&meta),
        Task::Qemu { arch } => {
            if matches!(arch, Arch::Arm | Arch::Both) {
                qemu::arm(&meta)?;
            }
            if matches!(arch, Arch::Riscv | Arch::Both) {
                qemu::riscv(&meta)?;
            }
            Ok(())
        }
        Task::BareMetal => bare_metal::run(&meta),
        Task::Walkthrough => walkthrough::run(&meta),
        Task::QemuPartition => qemu_partition::run(&meta),
        Task::PartitionCost => partition_cost::run(&meta),
        Task::Reproducible => reproducible::run(&meta),
        Task::Size { no_build_cost } => size::run(&meta, !no_build_cost),
        Task::Instructions { lto } => instructions::run(&meta, lto),
        Task::Bench { lto, quick } => bench::run(&meta, lto, quick),
        Task::DeviceCost => device_cost::run(&meta),
        Task::DeflateCost { flash_only } => deflate_cost::run(&meta, flash_only),
        Task::PartitionSize => partition_size::run(&meta),
        Task::Nopanic => nopanic::run(&meta),
        Task::DocLinks { crates } => links::doc_links(&meta, &crates),
        Task::CarveSpeed { lib, rounds } => carve::speed(&meta, lib.as_deref(), rounds),
        Task::CarveVsBinutils { lib } => carve::vs_binutils(&meta, lib.as_deref()),
        Task::CarveMatrix => carve::matrix(),
        Task::Fuzz { seconds, targets } => fuzz::run(&meta, seconds, &targets),
        Task::Miri => miri::run(),
    }
}

/// Runs `command`, failing with its command line unless it exits 0.
pub fn status(command: &mut Command) -> Result<(), String> {
    let shown = format!("{command:?}");
    match command.status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("{shown} failed ({s})")),
        Err(e) => Err(format!("cannot run {shown}: {e}")),
    }
}

/// Each published crate's documentation as docs.rs builds it: nightly rustdoc, `--cfg docsrs`,
/// the features its `[package.metadata.docs.rs]` names, warnings denied; then checks that a
/// feature-gated item shows the feature it needs.
fn docsrs(meta: &Metadata) -> Result<(), String> {
    let target_dir = meta.target_dir.join("docsrs");
    let published = meta.published();
    for name in &published {
        let features = meta.docsrs_features(name).join(",");
        let mut command = Command::new("cargo");
        command
            .args([
                "+nightly",
                "doc",
                "--quiet",
                "--locked",
                "--no-deps",
                "-p",
                name,
            ])
            .env("CARGO_TARGET_DIR", &target_dir)
            .env("RUSTDOCFLAGS", "--cfg docsrs -D warnings");
        if !features.is_empty() {
            command.args(["--features", &features]);
        }
        status(&mut command)?;
    }
    let page = target_dir.join("doc/nrtucode/struct.StdEnv.html");
    let html = std::fs::read_to_string(&page)
        .map_err(|e| format!("cannot read {}: {e}", page.display()))?;
    if !html.contains("Available on <strong>crate feature <code>std</code></strong> only") {
        return Err(format!(
            "{} does not say StdEnv needs feature std",
            page.display()
        ));
    }
    println!(
        "docsrs: {} documented as docs.rs builds them",
        published.join(" ")
    );
    Ok(())
}
