//! The command line: argument parsing and the subcommands' output.
//!
//! Exit codes: 0 success; 1 an error (unreadable or malformed input, failed verification,
//! `--strict` catalog mismatch); 2 a usage error (from `clap`). `resolve` exits with the
//! resolver's own return code.

use std::path::PathBuf;
use std::process::ExitCode;

use std::io::Write as _;

macro_rules! out_fmt { ($($a:tt)*) => { write_out(&format!($($a)*)) } }
macro_rules! out_line { ($($a:tt)*) => { write_out(&format!("{}\n", format_args!($($a)*))) } }
macro_rules! err_fmt { ($($a:tt)*) => { write_err(&format!($($a)*)) } }
macro_rules! err_line { ($($a:tt)*) => { write_err(&format!("{}\n", format_args!($($a)*))) } }

use clap::{Parser, Subcommand};

use crate::blobdir::write_blob_dir;
use crate::carve::{Carve, NamedBy, carve_file};
use crate::compare::{compare, known_build};
use crate::locate::Found;
use crate::resolve::{Query, Show, resolve};
use crate::table;
use crate::verify::verify_dir;

/// Carve, verify, list and resolve the accelerator firmware blobs of a vendor library.
#[derive(Debug, Parser)]
#[command(name = "nrtucode", version, about)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
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
        /// Exit 1 when a getter's size differs from the catalog or a published hash differs.
        #[arg(long)]
        strict: bool,
    },
    /// Check a blob directory against its manifest and the catalog.
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
        #[arg(value_parser = crate::resolve::parse_region, required_unless_present = "prof", conflicts_with = "prof")]
        region: Option<i32>,
        /// Flavor: auto (0, the default: NEURON_UCODE_FLAVOR), perf, debug, test, dkl-perf,
        /// dkl-debug, dkl-test, or an integer.
        #[arg(long, value_parser = crate::resolve::parse_flavor, default_value = "auto", conflicts_with = "prof")]
        flavor: i32,
        /// Resolve a profiler table instead: cam or table.
        #[arg(long, value_parser = crate::resolve::parse_kind)]
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

/// Writes to stdout; a closed pipe (`nrtucode list | head`) is not an error worth a panic.
fn write_out(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Writes to stderr, ignoring failures.
fn write_err(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
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
        } => cmd_carve(&lib, &out, getters, strict),
        Command::Verify { dir } => cmd_verify(&dir),
        Command::List { generation, json } => {
            out_fmt!("{}", crate::list::render(generation.as_deref(), json));
            ExitCode::SUCCESS
        }
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
            cmd_resolve(query, Show { hex, sha256 }, output.as_deref())
        }
        Command::Prof { idx, json } => {
            let out = crate::profdump::render(idx, json);
            out_fmt!("{}", out.stdout);
            err_fmt!("{}", out.stderr);
            code(out.code)
        }
    }
}

/// An exit code from a resolver code (clamped to 0..=255).
fn code(c: i32) -> ExitCode {
    ExitCode::from(u8::try_from(c).unwrap_or(u8::MAX))
}

fn cmd_resolve(query: Query, show: Show, output: Option<&std::path::Path>) -> ExitCode {
    let r = resolve(query, show, &nrtucode::StdEnv);
    out_fmt!("{}", r.stdout);
    err_fmt!("{}", r.stderr);
    if r.code == 0
        && let Some(path) = output
        && let Err(e) = std::fs::write(path, r.bytes)
    {
        return fail(format!("{}: {e}", path.display()));
    }
    code(r.code)
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    err_line!("nrtucode: error: {message}");
    ExitCode::FAILURE
}

fn found(f: &Found) -> String {
    match f {
        Found::Symbol => "by symbol".into(),
        Found::Resolver(r) => format!("decoded from {r}"),
    }
}

/// The human summary of a carve.
pub fn carve_summary(carve: &Carve, out: &std::path::Path) -> String {
    let h = &carve.header;
    let real = carve.getters.iter().filter(|g| g.size > 0).count();
    let positional = carve
        .getters
        .iter()
        .filter(|g| g.named_by == NamedBy::Position)
        .count();
    let rows = vec![
        vec![
            "source".into(),
            format!("{} ({} bytes)", h.source, h.source_size),
        ],
        vec!["sha256".into(), h.source_sha256.clone()],
        vec!["build_id".into(), h.build_id.clone()],
        vec![
            "known build".into(),
            known_build(h)
                .unwrap_or("no (published hashes not checked)")
                .into(),
        ],
        vec![
            "image_list".into(),
            format!(
                "VA {:#x}, {}",
                carve.tables.image_list,
                found(&carve.tables.image_list_found)
            ),
        ],
        vec![
            "hwdecode_table_list".into(),
            format!(
                "VA {:#x}, {}",
                carve.tables.hwdecode_list,
                found(&carve.tables.hwdecode_list_found)
            ),
        ],
        vec![
            "getters".into(),
            format!(
                "{} ({} real, {} cursors; {} named by position), {} NULL slots",
                carve.getters.len(),
                real,
                carve.getters.len() - real,
                positional,
                carve.null_getters.len()
            ),
        ],
        vec!["distinct blobs".into(), carve.distinct_blobs().to_string()],
        vec!["written".into(), out.display().to_string()],
    ];
    table::render(&["carve", "result"], &rows)
}

fn cmd_carve(lib: &std::path::Path, out: &std::path::Path, list: bool, strict: bool) -> ExitCode {
    let (carve, data) = match carve_file(lib) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    if let Err(e) = write_blob_dir(&carve, &data, out) {
        return fail(e);
    }
    out_fmt!("{}", carve_summary(&carve, out));
    if list {
        let rows: Vec<Vec<String>> = carve
            .getters
            .iter()
            .map(|g| {
                vec![
                    g.name.symbol.clone(),
                    format!("{:#x}", g.accessor_va),
                    format!("{:#x}", g.blob_va),
                    g.size.to_string(),
                    g.sha256[..16].to_string(),
                ]
            })
            .collect();
        out_fmt!(
            "\n{}",
            table::render(&["symbol", "getter_va", "blob_va", "size", "sha256"], &rows)
        );
    }
    for note in &carve.notes {
        err_line!("nrtucode: note: {note}");
    }
    let findings = compare(&carve.header, &carve.getters);
    let mismatches = findings.iter().filter(|f| f.is_mismatch()).count();
    for f in &findings {
        if f.is_mismatch() {
            err_line!("nrtucode: warning: {}: {f}", lib.display());
        } else {
            out_line!("published hash: {f}");
        }
    }
    if mismatches == 0 {
        out_line!("catalog: every carved size matches blobs/getters.tsv");
        ExitCode::SUCCESS
    } else if strict {
        fail(format!("{mismatches} getters disagree with the catalog"))
    } else {
        ExitCode::SUCCESS
    }
}

fn cmd_verify(dir: &std::path::Path) -> ExitCode {
    let report = verify_dir(dir);
    for w in &report.warnings {
        err_line!("nrtucode: warning: {w}");
    }
    for p in &report.problems {
        err_line!("nrtucode: error: {}: {p}", dir.display());
    }
    if report.is_ok() {
        out_line!(
            "{}: ok ({} rows, {} blob files)",
            dir.display(),
            report.rows,
            report.files
        );
        ExitCode::SUCCESS
    } else {
        err_line!(
            "nrtucode: {}: {} problems",
            dir.display(),
            report.problems.len()
        );
        ExitCode::FAILURE
    }
}
