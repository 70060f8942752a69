//! The command line: argument parsing and the subcommands' output.
//!
//! Exit codes: 0 success; 1 an error (unreadable or malformed input, failed verification,
//! `--strict` catalog mismatch); 2 a usage error (from `clap`). `resolve` exits with the
//! resolver's own return code.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::blobdir::write_blob_dir;
use crate::carve::{Carve, NamedBy, carve_file};
use crate::compare::{compare, known_build};
use crate::locate::Found;
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
    }
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("nrtucode: error: {message}");
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
    print!("{}", carve_summary(&carve, out));
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
        print!(
            "\n{}",
            table::render(&["symbol", "getter_va", "blob_va", "size", "sha256"], &rows)
        );
    }
    for note in &carve.notes {
        eprintln!("nrtucode: note: {note}");
    }
    let findings = compare(&carve.header, &carve.getters);
    let mismatches = findings.iter().filter(|f| f.is_mismatch()).count();
    for f in &findings {
        if f.is_mismatch() {
            eprintln!("nrtucode: warning: {}: {f}", lib.display());
        } else {
            println!("published hash: {f}");
        }
    }
    if mismatches == 0 {
        println!("catalog: every carved size matches blobs/catalog.tsv");
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
        eprintln!("nrtucode: warning: {w}");
    }
    for p in &report.problems {
        eprintln!("nrtucode: error: {}: {p}", dir.display());
    }
    if report.is_ok() {
        println!(
            "{}: ok ({} rows, {} blob files)",
            dir.display(),
            report.rows,
            report.files
        );
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "nrtucode: {}: {} problems",
            dir.display(),
            report.problems.len()
        );
        ExitCode::FAILURE
    }
}
