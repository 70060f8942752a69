//! The command line: the `clap` argument definition and the dispatch to one module per
//! subcommand.
//!
//! Exit codes (`exit`): 0 success; `resolve` exits with the resolver's own code (1, 2, 3, 8);
//! every other failure uses a sysexits code outside those: 64 usage, 65 bad data, 66 no input,
//! 73 cannot create, 74 I/O error. Help texts are plain text: no Markdown.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use nrtucode::Request;

use crate::commands::exit::{EXIT_CODES_HELP, Exit};
use crate::commands::resolve::Show;
use crate::commands::values::{FlavorArg, GenerationArg, KindArg, RegionArg, parse_raw_index};
use crate::commands::{carve, list, output, prof, resolve, verify};

/// Carve the firmware blobs out of a vendor library, check blob directories, list and resolve.
#[derive(Debug, Parser)]
#[command(
    name = "nrtucode",
    version,
    about = "Carve the firmware blobs out of a vendor library, check blob directories, list and resolve.",
    after_help = EXIT_CODES_HELP
)]
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
        /// The output directory: absent (created), empty (filled in place: its mode and owner
        /// stay), or an earlier carve (replaced whole, no stale SHA256.bin left). Anything else
        /// (a file, a symbolic link, which is not followed, a directory with other files, an
        /// earlier carve this user may not delete) is refused and never touched. Written all or
        /// nothing: a failed or interrupted (Ctrl-C, SIGTERM) carve leaves it as it was.
        #[arg(long)]
        out: PathBuf,
        /// Print one line per carved getter.
        #[arg(long)]
        getters: bool,
        /// Exit 65 when a getter's size differs from the facts or a published hash differs.
        #[arg(long)]
        strict: bool,
    },
    /// Check a blob directory against its manifest and the facts.
    Verify {
        /// The blob directory.
        dir: PathBuf,
    },
    /// List the catalog embedded in this build: every image getter (slot, generation, engine,
    /// flavor, region, size, sha256, real/cursor/null), then both profiler getters of all 38
    /// slots.
    List {
        /// Only this generation.
        #[arg(long = "gen", value_enum, ignore_case = true)]
        generation: Option<GenerationArg>,
        /// JSON output (format nrtucode-list/1).
        #[arg(long)]
        json: bool,
    },
    /// Call a resolver: resolve IDX REGION [--flavor F], or resolve IDX --prof KIND.
    ///
    /// The exit code is the resolver's code (0, 1, 2, 3 or 8); other failures exit 64 to 74.
    #[command(after_help = EXIT_CODES_HELP)]
    Resolve {
        /// Flat slot index, or a slot name such as cayman-nx-act (an integer is passed as is:
        /// 38 and above answer code 1).
        #[arg(value_parser = parse_raw_index)]
        idx: u32,
        /// Memory region (or 0 to 3); not with --prof.
        #[arg(
            value_enum,
            ignore_case = true,
            required_unless_present = "prof",
            conflicts_with = "prof"
        )]
        region: Option<RegionArg>,
        /// Flavor (or its integer); auto reads NEURON_UCODE_FLAVOR.
        #[arg(
            long,
            value_enum,
            ignore_case = true,
            default_value = "auto",
            conflicts_with = "prof"
        )]
        flavor: FlavorArg,
        /// Resolve a profiler table of this kind (or 0, 1) instead of an image.
        #[arg(long, value_enum, ignore_case = true)]
        prof: Option<KindArg>,
        /// Write the bytes to FILE; with -, write them to stdout and the summary to stderr.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        /// Hex-dump the first N bytes (--hex alone: 64; give N as --hex=N).
        #[arg(long, value_name = "N", num_args = 0..=1, require_equals = true, default_missing_value = "64")]
        hex: Option<usize>,
        /// Print the sha256 of the bytes.
        #[arg(long)]
        sha256: bool,
    },
    /// Decode and validate the PROF_CAM / PROF_TABLE pair of a slot.
    Prof {
        /// Slot: 0 to 37, or a slot name such as cayman-nx-act. (Checked after parsing, so
        /// that with --json a bad slot is reported as JSON too; still exit 64.)
        #[arg(value_name = "IDX")]
        idx: String,
        /// JSON output (format nrtucode-prof/1), also for a failure.
        #[arg(long)]
        json: bool,
    },
}

/// Parses the process arguments and runs the command.
pub fn run() -> ExitCode {
    output::guard_std_fds();
    output::finish(dispatch())
}

fn dispatch() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Usage errors go to stderr, --help and --version to stdout.
            if e.use_stderr() {
                let _ = e.print();
                return Exit::Usage.into();
            }
            output::write_out(&e.render().to_string());
            return ExitCode::SUCCESS;
        }
    };
    match cli.command {
        Command::Carve {
            lib,
            out,
            getters,
            strict,
        } => carve::run(&lib, &out, getters, strict),
        Command::Verify { dir } => verify::run(&dir),
        Command::List { generation, json } => list::run(generation.map(|g| g.0), json),
        Command::Resolve {
            idx,
            region,
            flavor,
            prof,
            output,
            hex,
            sha256,
        } => {
            let request = match (prof, region) {
                (Some(kind), _) => Request::prof(idx, kind.0.raw()),
                (None, region) => {
                    Request::image(idx, region.map_or(0, |r| r.0.raw()), flavor.0.raw())
                }
            };
            resolve::run(request, Show { hex, sha256 }, output.as_deref())
        }
        Command::Prof { idx, json } => prof::run(&idx, json),
    }
}
