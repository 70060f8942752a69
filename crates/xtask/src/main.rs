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
mod qemu_update;
mod reproducible;
mod size;
mod update_cost;
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
    /// The rendered docs: no link leaves them (`cargo doc --workspace --no-deps`), and the
    /// published crates' docs as docs.rs builds them (nightly, `--cfg docsrs`, -D warnings).
    Docs {
        #[arg(long, value_enum, default_value = "all")]
        case: DocsCase,
        /// With `--case links`: the crates to check, as rustdoc names them (default: every
        /// library of the workspace).
        crates: Vec<String>,
    },
    /// The bare-metal template and the RISC-V loader under QEMU, one case each.
    Qemu {
        #[arg(long, value_enum, default_value = "all")]
        case: QemuCase,
    },
    /// The bare-metal template's link checks (blobs in XFLASH, internal flash < 16 KiB, gc per
    /// blob), with the flash split of run-time vs compile-time resolution.
    BareMetal,
    /// Two checkouts of the template put the same bytes into flash.
    Reproducible,
    /// Flash on thumbv7em: the resolvers (code, table metadata, blob payload; what `digest`
    /// adds, and the build cost of embedding the payload), the partition reader and verifiers.
    Size {
        #[arg(long, value_enum, default_value = "all")]
        what: SizeCase,
        /// Leave out the build-cost table of `core` (two timed release builds of the core).
        #[arg(long)]
        no_build_cost: bool,
    },
    /// Per resolver call, ours, the C look-alike and the ideal: instructions under callgrind,
    /// or wall time (criterion).
    Bench {
        #[arg(long, value_enum, default_value = "time")]
        measure: Measure,
        /// lto = "fat", codegen-units = 1 (typical firmware profile).
        #[arg(long)]
        lto: bool,
        /// With `--measure time`: 0.5 s warm-up and 1 s measurement per path (default 1 s / 3 s).
        #[arg(long)]
        quick: bool,
    },
    /// What the device pays, in instructions (QEMU mps2-an386, Cortex-M4) and flash.
    Cost {
        #[arg(long, value_enum, default_value = "all")]
        what: CostCase,
        /// With `--what deflate`: build and print the flash lines only, no QEMU run.
        #[arg(long)]
        flash_only: bool,
    },
    /// No panic reachable from the resolvers (link check on thumbv7em and riscv32imac; the
    /// deflate path and ed25519 verify by call graph).
    Nopanic,
    /// The carve's speed against other ways of the same job (the build matrix alone is
    /// `cargo test -p nrtucode-carve --test build_matrix -- --nocapture`).
    CarveBench {
        #[arg(long, value_enum)]
        case: CarveCase,
        /// The library to carve (default: the full look-alike, gcc -O2, built first).
        lib: Option<PathBuf>,
        /// With `--case speed`: rounds of the two commands, alternating; the best of each counts.
        #[arg(long, default_value_t = 7)]
        rounds: u32,
    },
    /// Fuzz the carver, the blob directory check, the partition reader and the inflater.
    Fuzz {
        /// Seconds per target.
        #[arg(long, default_value_t = 30)]
        seconds: u64,
        /// Targets (default: every one, `fuzz/fuzz_targets`).
        targets: Vec<String>,
    },
    /// The core's tests and the StdEnv race under miri (nightly).
    Miri,
}

/// The cases of `docs`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum DocsCase {
    /// No link in the rendered docs (`cargo doc --workspace --no-deps`) leaves them.
    Links,
    /// The published crates' docs as docs.rs builds them.
    Docsrs,
    /// Both.
    All,
}

/// The cases of `qemu`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum QemuCase {
    /// The template on mps2-an386: intact, tampered and erased flash, decoded defmt log.
    Arm,
    /// The RISC-V loader on virt.
    Riscv,
    /// The template with feature `partition`: the signed partition at 0x21000000, every tamper
    /// case refused, the README's three commands as written.
    Partition,
    /// The template README's walkthrough, as written: carve the look-alike, build a copy of
    /// the template from the carve, boot it.
    Walkthrough,
    /// The template with feature `update`: install, trial, confirm across resets; a changed,
    /// a cut-off and a downgraded update refused.
    Update,
    /// Every case.
    All,
}

/// The cases of `size`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum SizeCase {
    /// The resolvers in a minimal no_std consumer.
    Core,
    /// The partition reader and the ed25519 verifiers.
    Partition,
    /// Both.
    All,
}

/// What `bench` measures.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Measure {
    /// Instructions per call under callgrind.
    Instructions,
    /// Wall time per call (criterion).
    Time,
}

/// The cases of `cost`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CostCase {
    /// Verification, sha2 compact and unrolled, and the template's internal flash with each.
    Device,
    /// A partition boot, step by step.
    Partition,
    /// The deflate decoder (decode + hash per byte, its flash).
    Deflate,
    /// An update: the slot choice, the install's writes and full check, a confirm, the flash.
    Update,
    /// Every case.
    All,
}

/// The cases of `carve-bench`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CarveCase {
    /// Against `cat | sha256sum` (target: ratio at or below 1.0).
    Speed,
    /// Against the binutils pipeline (objdump, readelf, dd, sha256sum).
    Binutils,
}

/// A task's case to run: the one asked for, or every one for `all`.
type Case<'a, C> = (C, Box<dyn Fn() -> Result<(), String> + 'a>);

/// Runs the cases that `asked` selects (`all` selects every one), in table order.
fn run_cases<C: PartialEq>(asked: C, all: C, cases: Vec<Case<'_, C>>) -> Result<(), String> {
    for (case, run) in cases {
        if asked == all || asked == case {
            run()?;
        }
    }
    Ok(())
}

/// An option given to a case it does not apply to is an error, not silently ignored.
fn refuse_options_that_do_not_apply(task: &Task) -> Result<(), String> {
    let wrong = match task {
        Task::Docs { case, crates } => !crates.is_empty() && *case == DocsCase::Docsrs,
        Task::Size {
            what,
            no_build_cost,
        } => *no_build_cost && *what == SizeCase::Partition,
        Task::Bench { measure, quick, .. } => *quick && *measure == Measure::Instructions,
        Task::Cost { what, flash_only } => {
            *flash_only && !matches!(what, CostCase::Deflate | CostCase::All)
        }
        Task::CarveBench { case, rounds, .. } => *rounds != 7 && *case != CarveCase::Speed,
        _ => false,
    };
    if wrong {
        Err("an option was given to a case it does not apply to (see --help)".into())
    } else {
        Ok(())
    }
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
    let meta = &meta;
    refuse_options_that_do_not_apply(&task)?;
    match task {
        Task::Ci {
            fuzz_seconds,
            skip_workspace_tests,
        } => ci::run(meta, fuzz_seconds, skip_workspace_tests),
        Task::Package { args } => package::run(meta, &args),
        Task::Msrv => msrv::run(meta),
        Task::Docs { case, crates } => run_cases(
            case,
            DocsCase::All,
            vec![
                (
                    DocsCase::Links,
                    Box::new(|| links::doc_links(meta, &crates)),
                ),
                (DocsCase::Docsrs, Box::new(|| docsrs(meta))),
            ],
        ),
        Task::Qemu { case } => run_cases(
            case,
            QemuCase::All,
            vec![
                (QemuCase::Arm, Box::new(|| qemu::arm(meta))),
                (QemuCase::Riscv, Box::new(|| qemu::riscv(meta))),
                (QemuCase::Partition, Box::new(|| qemu_partition::run(meta))),
                (QemuCase::Walkthrough, Box::new(|| walkthrough::run(meta))),
                (QemuCase::Update, Box::new(|| qemu_update::run(meta))),
            ],
        ),
        Task::BareMetal => bare_metal::run(meta),
        Task::Reproducible => reproducible::run(meta),
        Task::Size {
            what,
            no_build_cost,
        } => run_cases(
            what,
            SizeCase::All,
            vec![
                (SizeCase::Core, Box::new(|| size::run(meta, !no_build_cost))),
                (SizeCase::Partition, Box::new(|| partition_size::run(meta))),
            ],
        ),
        Task::Bench {
            measure,
            lto,
            quick,
        } => match measure {
            Measure::Instructions => instructions::run(meta, lto),
            Measure::Time => bench::run(meta, lto, quick),
        },
        Task::Cost { what, flash_only } => run_cases(
            what,
            CostCase::All,
            vec![
                (CostCase::Device, Box::new(|| device_cost::run(meta))),
                (CostCase::Partition, Box::new(|| partition_cost::run(meta))),
                (
                    CostCase::Deflate,
                    Box::new(|| deflate_cost::run(meta, flash_only)),
                ),
                (CostCase::Update, Box::new(|| update_cost::run(meta))),
            ],
        ),
        Task::Nopanic => nopanic::run(meta),
        Task::CarveBench { case, lib, rounds } => match case {
            CarveCase::Speed => carve::speed(meta, lib.as_deref(), rounds),
            CarveCase::Binutils => carve::vs_binutils(meta, lib.as_deref()),
        },
        Task::Fuzz { seconds, targets } => fuzz::run(meta, seconds, &targets),
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
