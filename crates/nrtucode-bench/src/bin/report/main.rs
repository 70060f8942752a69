//! The lookup report: `cargo run -p nrtucode-bench --release --bin report -- [--measure
//! instructions|time] [--lto] [--quick]` prints the cost of one resolver call, ours, the C
//! look-alike (gcc -O2, in the same binary) and the dense-array ideal, over the fixed input mix
//! of this crate, in its fixed 30-variable environment ([`MEASURE_ENV`]). One table each, with
//! ratios to the C resolver and to the ideal on the same inputs ([`ROWS`]).
//!
//! - `instructions` ([`instructions`]): Ir per call of the `instr` driver under `valgrind
//!   --tool=callgrind`, and net of the harness (loop + fold, the `empty` row); the partition
//!   paths from a driver of their own.
//! - `time` ([`time`]): criterion's median per call (`benches/lookup.rs`); `--quick`: 0.5 s
//!   warm-up, 1 s measurement per path (default 1 s / 3 s).
//!
//! `--lto`: lto = "fat", codegen-units = 1 (typical firmware profile), in `lto/` under the
//! target directory. The report builds what it measures with cargo, from the workspace root.

mod instructions;
mod time;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use clap::{Parser, ValueEnum};

/// Per resolver call, ours, the C look-alike and the ideal: instructions under callgrind, or
/// wall time (criterion).
#[derive(Parser)]
#[command(name = "report", about, long_about = None)]
struct Cli {
    #[arg(long, value_enum, default_value_t = Measure::Time)]
    measure: Measure,
    /// lto = "fat", codegen-units = 1 (typical firmware profile).
    #[arg(long)]
    lto: bool,
    /// With `--measure time`: 0.5 s warm-up and 1 s measurement per path (default 1 s / 3 s).
    #[arg(long)]
    quick: bool,
}

/// What the report measures.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Measure {
    /// Instructions per call under callgrind.
    Instructions,
    /// Wall time per call (criterion).
    Time,
}

/// The rows of both tables, in order: path, its C counterpart, its ideal counterpart. The time
/// table has no partition benchmarks and leaves the `partition_` rows out.
const ROWS: [(&str, Option<&str>, Option<&str>); 13] = [
    ("ours_explicit", Some("c_explicit"), Some("ideal_explicit")),
    (
        "ours_explicit_std",
        Some("c_explicit"),
        Some("ideal_explicit"),
    ),
    ("ours_auto_std", Some("c_auto"), None),
    ("ours_auto_snapshot", Some("c_auto"), None),
    ("ours_hwdecode", Some("c_hwdecode"), Some("ideal_hwdecode")),
    (
        "partition_explicit",
        Some("c_explicit"),
        Some("ideal_explicit"),
    ),
    (
        "partition_hwdecode",
        Some("c_hwdecode"),
        Some("ideal_hwdecode"),
    ),
    ("c_explicit", None, None),
    ("c_auto", None, None),
    ("c_hwdecode", None, None),
    ("ideal_explicit", None, None),
    ("ideal_hwdecode", None, None),
    ("empty", None, None),
];

/// The environment the resolvers are measured in, `NAME=value` lines (and `#` comments).
const MEASURE_ENV: &str = include_str!("../../../measure-env.txt");

/// Where the report builds and from where it runs what it built.
struct Workspace {
    /// The workspace root, the current directory of everything the report runs.
    root: PathBuf,
    /// The target directory of the profile (`lto/` under cargo's with `--lto`).
    target_dir: PathBuf,
    /// The profile, as the tables' first line names it.
    profile: &'static str,
    /// Whether the profile is fat LTO with one codegen unit.
    lto: bool,
}

impl Workspace {
    /// The workspace of this crate, from `cargo metadata`; its root becomes the current
    /// directory.
    fn load(lto: bool) -> Result<Self, String> {
        let text = stdout(
            cargo("metadata --format-version 1 --no-deps").current_dir(env!("CARGO_MANIFEST_DIR")),
        )?;
        let json: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("cargo metadata: {e}"))?;
        let dir = |key: &str| {
            json[key]
                .as_str()
                .map(PathBuf::from)
                .ok_or_else(|| format!("cargo metadata names no {key}"))
        };
        let target_dir = dir("target_directory")?;
        let (target_dir, profile) = if lto {
            (target_dir.join("lto"), "release + lto=fat, codegen-units=1")
        } else {
            (target_dir, "release (Cargo.toml defaults)")
        };
        let root = dir("workspace_root")?;
        std::env::set_current_dir(&root)
            .map_err(|e| format!("cannot enter {}: {e}", root.display()))?;
        Ok(Self {
            root,
            target_dir,
            profile,
            lto,
        })
    }

    /// `cargo ARGS --target-dir DIR` from the root, with the LTO profile `PROFILE` (`RELEASE`,
    /// `BENCH`) when `--lto`.
    fn cargo(&self, args: &str, dir: &Path, profile: &str) -> Command {
        let mut command = cargo(args);
        command.arg("--target-dir").arg(dir);
        if self.lto {
            command.env(format!("CARGO_PROFILE_{profile}_LTO"), "fat");
            command.env(format!("CARGO_PROFILE_{profile}_CODEGEN_UNITS"), "1");
        }
        command
    }
}

/// `program` run with [`MEASURE_ENV`], then `extra`, as its whole environment, in that order
/// (`env -i NAME=value… PROGRAM`: `Command::envs` would pass them sorted by name, and the order
/// shows in the counts, e.g. 958.7 against 967.0 instructions for flavor 0 with `StdEnv`).
fn measured(program: impl AsRef<OsStr>, extra: &[(&str, &OsStr)]) -> Command {
    let mut command = Command::new("env");
    command
        .arg("-i")
        .args(MEASURE_ENV.lines().filter(|l| !l.starts_with('#')));
    for (name, value) in extra {
        let mut pair = OsString::from(name);
        pair.push("=");
        pair.push(value);
        command.arg(pair);
    }
    command.arg(program);
    command
}

/// The `environment:` line of both tables, with what the process sees besides [`MEASURE_ENV`].
fn environment(count: impl std::fmt::Display, besides: &str) -> String {
    format!(
        "environment: {count} variables (crates/nrtucode-bench/measure-env.txt + {besides}); NEURON_UCODE_FLAVOR and NRTUCODE_MPLUS_ON_MARIANA unset"
    )
}

/// `cargo ARGS` with the toolchain's cargo (`$CARGO` under `cargo run`).
fn cargo(args: &str) -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command.args(args.split_whitespace());
    command
}

/// Runs `command` and returns its standard output (UTF-8, lossy); fails with its command line
/// and standard error unless it exits 0.
fn stdout(command: &mut Command) -> Result<String, String> {
    let shown = format!("{command:?}");
    let out = (command.stderr(Stdio::piped()).output())
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("{shown} failed ({}): {}", out.status, err.trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The executable named `name` that `command` (a `cargo build`, `bench --no-run`) just built,
/// from cargo's JSON messages; its diagnostics go to standard error as usual.
fn executable(command: &mut Command, name: &str) -> Result<PathBuf, String> {
    command.arg("--message-format=json-render-diagnostics");
    let text = stdout(command.stderr(Stdio::inherit()))?;
    let mut messages = text.lines().filter_map(|l| {
        let m: serde_json::Value = serde_json::from_str(l).ok()?;
        let built = m["reason"] == "compiler-artifact" && m["target"]["name"] == name;
        built.then(|| m["executable"].as_str().map(PathBuf::from))?
    });
    (messages.next_back()).ok_or_else(|| format!("{command:?} built no executable {name}"))
}

/// Prints the table `cli` asks for; an option given to a measure it does not apply to is an
/// error, not silently ignored.
fn run(cli: &Cli) -> Result<(), String> {
    match cli.measure {
        Measure::Instructions if cli.quick => Err("--quick applies to --measure time only".into()),
        Measure::Instructions => instructions::run(&Workspace::load(cli.lto)?),
        Measure::Time => time::run(&Workspace::load(cli.lto)?, cli.quick),
    }
}

fn main() -> ExitCode {
    match run(&Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("report: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_passes_the_variables_in_order_then_the_extra_ones() {
        let c = measured("/bin/true", &[("CRITERION_HOME", OsStr::new("/t/c"))]);
        let args: Vec<&OsStr> = c.get_args().collect();
        assert_eq!(
            (c.get_program(), args[0], args.len()),
            ("env".as_ref(), "-i".as_ref(), 33)
        );
        assert_eq!(args[1], "HOSTNAME=trn1-host-0042");
        assert_eq!(
            args[30..],
            ["_=/usr/bin/env", "CRITERION_HOME=/t/c", "/bin/true"]
        );
    }

    #[test]
    fn quick_is_refused_with_instructions() {
        let cli = Cli::try_parse_from(["report", "--measure", "instructions", "--quick"]).unwrap();
        assert!(run(&cli).unwrap_err().contains("--quick"));
        assert!(Cli::try_parse_from(["report", "--measure", "cycles"]).is_err());
    }
}
