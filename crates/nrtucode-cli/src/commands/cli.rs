//! The command line: the `clap` argument definition and the dispatch to one module per
//! subcommand.
//!
//! Exit codes: 0 success; 1 an error (unreadable or malformed input, failed verification,
//! `--strict` disagreement with the facts); 2 a usage error (from `clap`). `resolve` exits with
//! the resolver's own return code.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::commands::resolve::{Query, Show};
use crate::commands::{carve, list, prof, resolve, verify};

/// Carve, verify, list and resolve the accelerator firmware blobs of a vendor library.
#[derive(Debug, Parser)]
#[command(name = "nrtucode", version, about)]
pub(crate) struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Carve the blobs out of an x86-64 ELF shared object into a blob directory.
    Carve {
        /// The library (e.g. libnrtucode_internal.so, stripped or not).
        lib: PathBuf,
        /// The output directory (created; stale `<sha256>.bin` files removed).
        #[arg(long)]
        out: PathBuf,
        /// Print one line per carved getter.
        #[arg(long)]
        getters: bool,
        /// Exit 1 when a getter's size differs from the facts or a published hash differs.
        #[arg(long)]
        strict: bool,
    },
    /// Check a blob directory against its manifest and the facts.
    Verify {
        /// The blob directory.
        dir: PathBuf,
    },
    /// List the catalog embedded in this build (slot, generation, engine, flavor, region,
    /// size, sha256, real/cursor/null).
    List {
        /// Only this generation (e.g. CAYMAN, mariana-plus).
        #[arg(long = "gen")]
        generation: Option<String>,
        /// JSON output (format `nrtucode-list/1`).
        #[arg(long)]
        json: bool,
    },
    /// Call a resolver: `resolve IDX REGION [--flavor F]` or `resolve IDX --prof cam|table`.
    /// The exit code is the resolver's code.
    Resolve {
        /// Flat slot index (passed as is: 38 and above give code 1).
        idx: u32,
        /// Region: 0-3 or iram, dram, sram, extram (not with --prof).
        #[arg(value_parser = crate::commands::resolve::parse_region, required_unless_present = "prof", conflicts_with = "prof")]
        region: Option<i32>,
        /// Flavor: auto (0, the default: NEURON_UCODE_FLAVOR), perf, debug, test, dkl-perf,
        /// dkl-debug, dkl-test, or an integer.
        #[arg(long, value_parser = crate::commands::resolve::parse_flavor, default_value = "auto", conflicts_with = "prof")]
        flavor: i32,
        /// Resolve a profiler table instead: cam or table.
        #[arg(long, value_parser = crate::commands::resolve::parse_kind)]
        prof: Option<i32>,
        /// Write the bytes to FILE.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        /// Hex-dump the first N bytes (default 64).
        #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "64")]
        hex: Option<usize>,
        /// Print the sha256 of the bytes.
        #[arg(long)]
        sha256: bool,
    },
    /// Decode and validate the PROF_CAM / PROF_TABLE pair of a slot.
    Prof {
        /// Flat slot index.
        idx: u32,
        /// JSON output (format `nrtucode-prof/1`).
        #[arg(long)]
        json: bool,
    },
}

/// Parses the process arguments and runs the command.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Carve {
            lib,
            out,
            getters,
            strict,
        } => carve::run(&lib, &out, getters, strict),
        Command::Verify { dir } => verify::run(&dir),
        Command::List { generation, json } => list::run(generation.as_deref(), json),
        Command::Resolve {
            idx,
            region,
            flavor,
            prof,
            output,
            hex,
            sha256,
        } => {
            let query = match prof {
                Some(kind) => Query::Prof { idx, kind },
                None => Query::Image {
                    idx,
                    region: region.unwrap_or(0),
                    flavor,
                },
            };
            resolve::run(query, Show { hex, sha256 }, output.as_deref())
        }
        Command::Prof { idx, json } => prof::run(idx, json),
    }
}
