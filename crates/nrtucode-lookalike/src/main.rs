//! `nrtucode-lookalike`: writes the C look-alike of the vendor library and optionally builds it.
//!
//! ```text
//! nrtucode-lookalike --library full|front --out DIR [--opt O0|O1|O2|O3|Os|Og] [--prefix P]
//!                    [--build] [--strip] [--condition NAME] [--no-section-headers]
//! ```
//!
//! `--condition NAME` builds under one of the look-alike's build conditions (`O0`,
//! `stack-protector-all`, `pg`, `mcmodel-large`, ...; it replaces `--opt`);
//! `--no-section-headers` strips the library and removes its section header table.
//!
//! Writes `DIR/nrtucode_lookalike_<library>.c` and `DIR/nrtucode_lookalike_<library>.truth.tsv`;
//! with `--build` also `DIR/libnrtucode_internal.so` (full) or `DIR/libnrtucode.so` (front).
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use nrtucode_lookalike::{
    CONDITIONS, Condition, LibraryBuild, OptLevel, Options, Stripping, build_shared_object,
    build_with_condition, strip_to, write_sources,
};

const USAGE: &str = "usage: nrtucode-lookalike --library full|front --out DIR [--opt O0|O1|O2|O3|Os|Og] [--prefix PREFIX] [--build] [--strip] [--condition NAME] [--no-section-headers]";

struct Args {
    library: LibraryBuild,
    out: PathBuf,
    opt: OptLevel,
    prefix: Option<String>,
    build: bool,
    strip: bool,
    condition: Option<Condition>,
    no_section_headers: bool,
}

fn parse(mut argv: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut library = None;
    let mut out = None;
    let mut opt = OptLevel::O2;
    let mut prefix = None;
    let mut build = false;
    let mut strip = false;
    let mut condition = None;
    let mut no_section_headers = false;
    while let Some(arg) = argv.next() {
        let mut value = |name: &str| argv.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--library" => {
                let v = value("--library")?;
                library =
                    Some(LibraryBuild::from_name(&v).ok_or(format!("unknown library {v:?}"))?);
            }
            "--out" => out = Some(PathBuf::from(value("--out")?)),
            "--opt" => {
                let v = value("--opt")?;
                opt = OptLevel::from_name(&v).ok_or(format!("unknown optimisation {v:?}"))?;
            }
            "--prefix" => prefix = Some(value("--prefix")?),
            "--build" => build = true,
            "--strip" => strip = true,
            "--condition" => {
                let v = value("--condition")?;
                let names: Vec<&str> = CONDITIONS.iter().map(|c| c.name).collect();
                condition = Some(Condition::named(&v).ok_or(format!(
                    "unknown condition {v:?} (known: {})",
                    names.join(", ")
                ))?);
            }
            "--no-section-headers" => no_section_headers = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Args {
        library: library.ok_or("--library is required")?,
        out: out.ok_or("--out is required")?,
        opt,
        prefix,
        build,
        strip,
        condition,
        no_section_headers,
    })
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
    match parse(std::env::args().skip(1)).and_then(run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) if msg.is_empty() => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Err(msg) => {
            eprintln!("nrtucode-lookalike: {msg}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
