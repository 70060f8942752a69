//! `nrtucode-lookalike`: writes the C look-alike of the vendor library and optionally builds it
//! (`--help` says what it writes; the crate's README.md says what it is for).
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use nrtucode_lookalike::{
    CONDITIONS, Condition, LibraryBuild, OptLevel, Options, Stripping, build_shared_object,
    build_with_condition, strip_to, write_sources,
};

/// Writes a C copy of the vendor library's structure (the same tables, getters and resolvers,
/// named like the vendor's symbols) over the workspace's fixture bytes, never real firmware,
/// and with --build compiles it with gcc: the stand-in for the vendor library that the carve
/// tests, the differential oracle and the bare-metal walkthrough use.
///
/// Into DIR (created if missing; files of the same name are replaced), each path printed on
/// its own line, in this order: nrtucode_lookalike_<full|front>.c (the C source),
/// nrtucode_lookalike_<full|front>.truth.tsv (what every linked getter returns: its symbol,
/// slot, region, size and sha256) and, with --build, libnrtucode_internal.so (full) or libnrtucode.so (front). The
/// output is a pure function of the options: no timestamps, no paths.
#[derive(Parser)]
#[command(name = "nrtucode-lookalike", version)]
struct Args {
    /// Which vendor library to copy: full (libnrtucode_internal.so) or front (the reduced
    /// libnrtucode.so).
    #[arg(long, value_name = "full|front", value_parser = parse_library)]
    library: LibraryBuild,
    /// The directory the files are written into.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// gcc's optimisation level for --build.
    #[arg(long, value_name = "O0|O1|O2|O3|Os|Og", default_value = "O2", value_parser = parse_opt)]
    opt: OptLevel,
    /// Export the two resolvers as PREFIXget_memory_image and PREFIXget_hwdecode_table
    /// instead of the vendor's nrtucode_ prefix (so several builds link into one program).
    #[arg(long, value_name = "PREFIX")]
    prefix: Option<String>,
    /// Also compile the source into the shared library (needs gcc).
    #[arg(long)]
    build: bool,
    /// With --build: strip the library (as the vendor ships libnrtucode.so).
    #[arg(long)]
    strip: bool,
    /// With --build: one of the look-alike's build conditions (O0, stack-protector-all, pg,
    /// mcmodel-large, ...; an unknown name lists them); it replaces --opt.
    #[arg(long, value_name = "NAME", value_parser = parse_condition)]
    condition: Option<Condition>,
    /// With --build: strip the library and remove its section header table.
    #[arg(long)]
    no_section_headers: bool,
}

fn parse_library(v: &str) -> Result<LibraryBuild, String> {
    LibraryBuild::from_name(v).ok_or(format!("unknown library {v:?} (full or front)"))
}

fn parse_opt(v: &str) -> Result<OptLevel, String> {
    OptLevel::from_name(v).ok_or(format!("unknown optimisation {v:?}"))
}

fn parse_condition(v: &str) -> Result<Condition, String> {
    let names: Vec<&str> = CONDITIONS.iter().map(|c| c.name).collect();
    Condition::named(v).ok_or(format!(
        "unknown condition {v:?} (known: {})",
        names.join(", ")
    ))
}

fn run(args: Args) -> Result<(), String> {
    let mut opts = Options::new(args.library);
    if let Some(prefix) = &args.prefix {
        opts = opts.with_prefix(prefix)?;
    }
    let written = write_sources(&args.out, &opts)?;
    println!("{}", written.c_source.display());
    println!("{}", written.truth.display());
    if args.build {
        let so = args.out.join(args.library.library_name());
        let stripping = match (args.no_section_headers, args.strip) {
            (true, _) => Stripping::SectionHeaders,
            (false, true) => Stripping::All,
            (false, false) => Stripping::None,
        };
        match args.condition {
            None if stripping != Stripping::SectionHeaders => {
                build_shared_object(&written.c_source, &so, args.opt, args.strip)?;
            }
            condition => {
                let condition = condition.unwrap_or(Condition {
                    name: "opt",
                    opt: args.opt,
                    flags: &[],
                });
                let linked = args
                    .out
                    .join(format!("{}.linked", args.library.library_name()));
                build_with_condition(&written.c_source, &linked, &condition)?;
                strip_to(&linked, &so, stripping)?;
                std::fs::remove_file(&linked)
                    .map_err(|e| format!("cannot remove {}: {e}", linked.display()))?;
            }
        }
        println!("{}", so.display());
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("nrtucode-lookalike: {msg}");
            ExitCode::FAILURE
        }
    }
}
