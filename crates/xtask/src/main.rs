//! `cargo xtask <task>`: the repository's checks and measurements in one place (the alias is in
//! `.cargo/config.toml`). `cargo xtask ci` is what `.ci/run` runs once it has installed the
//! toolchains and tools; every other task is one check or measurement, runnable on its own.
//! A task with several alike jobs has a table of cases (`CASES` in its module: a name, its
//! `--help` line and its function), which `--case`/`--what` selects from.
//!
//! The workspace's root, target directory and published crates come from `cargo metadata`;
//! ELF files are read with `object`; what a task tests is what it just built (cargo's messages
//! name the files, [`build`]). Every task is Rust: only `scripts/install-c.sh`, which users run
//! by hand, is a script.

mod bare_metal;
mod bench;
mod build;
mod ci;
mod cost;
mod device;
mod docs;
mod elf;
mod files;
mod fuzz;
mod metadata;
mod miri;
mod msrv;
mod package;
mod qemu;
mod reproducible;
mod size;

use std::process::ExitCode;

use clap::builder::{PossibleValue, PossibleValuesParser};
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
        /// Only the steps of this lane (`.ci/run` runs the two at once); every step without.
        #[arg(long, value_enum)]
        lane: Option<ci::Lane>,
        /// Remove what a step built that no later step reads, once it has passed (the
        /// fuzz, miri, docs.rs and oldest-Rust builds, the template's, the tests' scratch):
        /// `.ci/run` on a fresh clone, where nothing would reuse them, so that the run needs
        /// less disk at its fullest. Without it, a second run reuses them.
        #[arg(long)]
        reclaim: bool,
    },
    /// `cargo package` of the published crates, checked and used from fresh consumer crates.
    Package {
        /// Extra `cargo package` arguments (e.g. `--allow-dirty`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// The oldest Rust the core builds with (its rust-version), host and thumbv7em.
    Msrv,
    /// The published crates' docs as docs.rs builds them (nightly, `--cfg docsrs`, the
    /// metadata's features, -D warnings).
    Docs,
    /// The bare-metal template and the RISC-V loader under QEMU, one case each.
    Qemu {
        #[arg(long, default_value = "all", value_parser = names(&qemu::CASES))]
        case: String,
    },
    /// The bare-metal template's link checks (blobs in XFLASH, internal flash < 16 KiB, gc per
    /// blob), with the flash split of run-time vs compile-time resolution.
    BareMetal,
    /// Two checkouts of the template put the same bytes into flash.
    Reproducible,
    /// Flash on thumbv7em: the resolvers (code, table metadata, blob payload; what `digest`
    /// adds), the partition reader and verifiers.
    Size {
        #[arg(long, default_value = "all", value_parser = names(&size::CASES))]
        what: String,
    },
    /// What the device pays, in instructions (QEMU mps2-an386, Cortex-M4) and flash.
    Cost {
        #[arg(long, default_value = "all", value_parser = names(&cost::CASES))]
        what: String,
        /// With `--what deflate`: build and print the flash lines only, no QEMU run.
        #[arg(long)]
        flash_only: bool,
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
    /// The informative benchmarks (figures nothing asserts; not run by CI): the lookups and
    /// the carve against `cat | sha256sum` and binutils.
    Bench,
}

/// One case of a task: its name, its `--help` line, and what runs it with the task's options.
pub type Case<O> = (
    &'static str,
    &'static str,
    fn(&Metadata, &O) -> Result<(), String>,
);

/// The values `--case` (`--what`) takes: the table's names, and `all`.
fn names<O>(cases: &[Case<O>]) -> PossibleValuesParser {
    let all = PossibleValue::new("all").help("Every case");
    PossibleValuesParser::new(
        cases
            .iter()
            .map(|c| PossibleValue::new(c.0).help(c.1))
            .chain([all]),
    )
}

/// Runs the cases `asked` names (`all`: every one), in table order.
fn run_cases<O>(cases: &[Case<O>], asked: &str, meta: &Metadata, opts: &O) -> Result<(), String> {
    for (name, _, run) in cases {
        if asked == "all" || asked == *name {
            run(meta, opts)?;
        }
    }
    Ok(())
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

/// Runs the task of the command line `args` (`cargo xtask ARGS`; a step of `ci`).
fn run_args(args: &[&str]) -> Result<(), String> {
    let args = std::iter::once("cargo xtask").chain(args.iter().copied());
    run(Cli::try_parse_from(args).map_err(|e| e.to_string())?.task)
}

fn run(task: Task) -> Result<(), String> {
    let meta = &Metadata::load()?;
    std::env::set_current_dir(&meta.root)
        .map_err(|e| format!("cannot enter {}: {e}", meta.root.display()))?;
    match task {
        Task::Ci {
            fuzz_seconds,
            skip_workspace_tests,
            lane,
            reclaim,
        } => ci::run(meta, fuzz_seconds, skip_workspace_tests, lane, reclaim),
        Task::Package { args } => package::run(meta, &args),
        Task::Msrv => msrv::run(meta),
        Task::Docs => docs::run(meta),
        Task::Qemu { case } => run_cases(&qemu::CASES, &case, meta, &()),
        Task::BareMetal => bare_metal::run(meta),
        Task::Reproducible => reproducible::run(meta),
        Task::Size { what } => run_cases(&size::CASES, &what, meta, &()),
        // An option given to a case it does not apply to is an error, not silently ignored.
        Task::Cost {
            flash_only: true,
            what,
        } if !matches!(&*what, "deflate" | "all") => {
            Err("--flash-only applies to --what deflate only".into())
        }
        Task::Cost { what, flash_only } => run_cases(&cost::CASES, &what, meta, &flash_only),
        Task::Fuzz { seconds, targets } => fuzz::run(meta, seconds, &targets),
        Task::Miri => miri::run(),
        Task::Bench => bench::run(),
    }
}
