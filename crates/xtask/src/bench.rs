//! `cargo xtask bench [--measure instructions|time] [--lto] [--quick]`: the cost of one resolver
//! call, ours, the C look-alike (gcc -O2, in the same binary) and the dense-array ideal, over
//! the fixed input mix of crates/nrtucode-bench, in its fixed 30-variable environment
//! ([`MEASURE_ENV`]). One table each, with ratios to the C resolver and to the ideal on the same
//! inputs ([`ROWS`]).
//!
//! - `instructions`: Ir per call under `valgrind --tool=callgrind`, and net of the harness (loop
//!   + fold, the `empty` row); the partition paths from a binary of their own.
//! - `time`: criterion's median per call (crates/nrtucode-bench/benches/lookup.rs); `--quick`:
//!   0.5 s warm-up, 1 s measurement per path (default 1 s / 3 s).
//!
//! `--lto`: lto = "fat", codegen-units = 1 (typical firmware profile), in `lto/` under the
//! target directory.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::build;
use crate::metadata::Metadata;

/// The measures of `bench` (their options: `--lto`, `--quick`).
pub const CASES: [crate::Case<(bool, bool)>; 2] = [
    (
        "instructions",
        "Instructions per call under callgrind",
        |m, (lto, _)| instructions(m, *lto),
    ),
    (
        "time",
        "Wall time per call (criterion)",
        |m, (lto, quick)| time(m, *lto, *quick),
    ),
];

/// The rows of the `instructions` and `bench` tables, in order: path, its C counterpart, its
/// ideal counterpart. `bench` has no partition benchmarks and leaves the `partition_` rows out.
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
const MEASURE_ENV: &str = include_str!("../../nrtucode-bench/measure-env.txt");

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

/// Passes over the mix inside the measured function.
const PASSES: &str = "2000";

/// The target directory and the profile's description, `--lto` or not.
fn profile(meta: &Metadata, lto: bool) -> (PathBuf, &'static str) {
    if lto {
        (
            meta.target_dir.join("lto"),
            "release + lto=fat, codegen-units=1",
        )
    } else {
        (meta.target_dir.clone(), "release (Cargo.toml defaults)")
    }
}

/// `command` with the LTO profile `PROFILE` (`RELEASE`, `BENCH`) when `lto`.
fn with_lto<'a>(command: &'a mut Command, lto: bool, profile: &str) -> &'a mut Command {
    if lto {
        command.env(format!("CARGO_PROFILE_{profile}_LTO"), "fat");
        command.env(format!("CARGO_PROFILE_{profile}_CODEGEN_UNITS"), "1");
    }
    command
}

/// The `environment:` line of both tables, with what the process sees besides [`MEASURE_ENV`].
fn environment(count: impl std::fmt::Display, besides: &str) -> String {
    format!(
        "environment: {count} variables (crates/nrtucode-bench/measure-env.txt + {besides}); NEURON_UCODE_FLAVOR and NRTUCODE_MPLUS_ON_MARIANA unset"
    )
}

/// `cargo xtask bench --measure instructions [--lto]`.
fn instructions(meta: &Metadata, lto: bool) -> Result<(), String> {
    let valgrind = crate::device::require("valgrind", "valgrind")?;
    let (target_dir, profile) = profile(meta, lto);
    let build = |dir: &Path, features: &str| {
        let mut command = build::cargo(&format!(
            "build --quiet --release -p nrtucode-bench --bin instr {features} --target-dir"
        ));
        let exe = build::executable(with_lto(command.arg(dir), lto, "RELEASE"), "instr")?;
        Ok::<_, String>(relative_to(&exe, &meta.root))
    };
    let bin = build(&target_dir, "")?;
    // The partition paths from a binary of their own (see crates/nrtucode-bench's feature
    // `partition`): in one binary with the others they would move the others' code.
    let bin_partition = build(&target_dir.join("partition"), "--features partition")?;
    let out = build::scratch(meta, "instructions")?;
    let result = measure(&valgrind, &bin, &bin_partition, &out, profile);
    let _ = std::fs::remove_dir_all(&out);
    result
}

/// `path` relative to `root` (the current directory of the tasks) when it lies under it.
///
/// The driver runs by that path, as `target/release/instr`: the environment strings sit on the
/// stack right after `argv[0]`, and their addresses move the counts of the `StdEnv` paths (flavor
/// 0 with LTO: 886.5 instructions by `target/lto/release/instr`, 878.2 by the absolute path).
fn relative_to(path: &Path, root: &Path) -> PathBuf {
    path.strip_prefix(root).unwrap_or(path).to_path_buf()
}

/// `valgrind --tool=callgrind ARGS` in the measured environment; (stdout, stderr).
fn callgrind(valgrind: &Path, args: &[&OsStr]) -> Result<(String, String), String> {
    let mut command = measured(valgrind, &[]);
    let (shown, out) = build::output(command.arg("--tool=callgrind").args(args))?;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    if !out.status.success() {
        return Err(format!(
            "{shown} failed ({}): {}",
            out.status,
            stderr.trim()
        ));
    }
    Ok((stdout.into_owned(), stderr.into_owned()))
}

/// Ir per call of `path` in `bin`, rounded to one decimal as the table prints it.
fn per_call(valgrind: &Path, bin: &Path, out: &Path, path: &str) -> Result<f64, String> {
    let mut option = OsString::from("--callgrind-out-file=");
    option.push(out.join(path));
    let collect = "--toggle-collect=nrtucode_bench_measure".as_ref();
    let (stdout, log) = callgrind(
        valgrind,
        &[
            &option,
            collect,
            bin.as_os_str(),
            path.as_ref(),
            PASSES.as_ref(),
        ],
    )?;
    let ir = number_after(&log, "Collected : ")
        .ok_or_else(|| format!("callgrind printed no Ir count for {path}"))?;
    let calls = number_after(&stdout, "calls=")
        .ok_or_else(|| format!("instr printed no call count for {path}"))?;
    Ok(round1(ir as f64 / calls as f64))
}

/// `x` as `%.1f` prints it, read back (the table's ratios use the printed figures).
fn round1(x: f64) -> f64 {
    format!("{x:.1}").parse().unwrap_or(x)
}

/// The number right after the first `key` in `text` (callgrind's "Collected : N", instr's
/// "calls=N").
fn number_after(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let rest = &l[l.find(key)? + key.len()..];
        rest.split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    })
}

/// (name, about) of each path `instr --list` prints (`name\tcalls\tabout`).
fn list(bin: &Path) -> Result<Vec<(String, String)>, String> {
    let text = build::stdout(Command::new(bin).arg("--list"))?;
    let cells = text.lines().map(|l| l.split('\t').collect::<Vec<_>>());
    Ok(cells
        .map(|c| (c[0].to_string(), c.get(2).unwrap_or(&"").to_string()))
        .collect())
}

fn measure(
    valgrind: &Path,
    bin: &Path,
    bin_partition: &Path,
    out: &Path,
    profile: &str,
) -> Result<(), String> {
    let quiet = ["-q", "--callgrind-out-file=/dev/null"].map(OsStr::new);
    let (nenv, _) = callgrind(
        valgrind,
        &[quiet[0], quiet[1], bin.as_os_str(), "--env".as_ref()],
    )?;
    println!("instructions per call (callgrind Ir), profile: {profile}");
    println!("{}", environment(nenv.trim(), "valgrind's LD_PRELOAD"));
    println!("mix: crates/nrtucode-bench/src/mix.rs, {PASSES} passes after one warm-up pass\n");

    let mut per: BTreeMap<String, f64> = BTreeMap::new();
    let mut net: BTreeMap<String, f64> = BTreeMap::new();
    let empty = per_call(valgrind, bin, out, "empty")?;
    per.insert("empty".into(), empty);
    for (path, _) in list(bin)?.into_iter().filter(|(p, _)| p != "empty") {
        let ir = per_call(valgrind, bin, out, &path)?;
        per.insert(path, ir);
    }
    for (path, ir) in &per {
        net.insert(path.clone(), round1(ir - empty));
    }
    // The partition binary's paths, net of that binary's own harness.
    let empty_partition = per_call(valgrind, bin_partition, out, "empty")?;
    for path in ["partition_explicit", "partition_hwdecode"] {
        let ir = per_call(valgrind, bin_partition, out, path)?;
        per.insert(path.into(), ir);
        net.insert(path.into(), round1(ir - empty_partition));
    }
    let about: BTreeMap<String, String> = list(bin_partition)?.into_iter().collect();
    print!("{}", instructions_table(&per, &net, &about));
    Ok(())
}

/// The table, from Ir per call and net Ir per call of each path.
fn instructions_table(
    per: &BTreeMap<String, f64>,
    net: &BTreeMap<String, f64>,
    about: &BTreeMap<String, String>,
) -> String {
    let show =
        |m: &BTreeMap<String, f64>, p: &str| m.get(p).map_or(String::new(), |x| format!("{x:.1}"));
    let ratio = |m: &BTreeMap<String, f64>, a: &str, b: &str| match (m.get(a), m.get(b)) {
        (Some(a), Some(b)) => format!("{:.2}x", a / b),
        _ => String::new(),
    };
    let versus = |path: &str, other: Option<&str>| {
        other.map_or(String::new(), |o| {
            format!("{} ({})", ratio(per, path, o), ratio(net, path, o))
        })
    };
    let mut out = format!(
        "| {:<18} | {:>8} | {:>8} | {:<15} | {:<15} | {}\n|{}|{}|{}|{}|{}|---\n",
        "path",
        "Ir/call",
        "net",
        "x C (net)",
        "x ideal (net)",
        "what",
        "-".repeat(20),
        "-".repeat(10),
        "-".repeat(10),
        "-".repeat(17),
        "-".repeat(17)
    );
    for (path, c, ideal) in ROWS {
        let about = about.get(path).map_or("", String::as_str);
        out.push_str(&format!(
            "| {path:<18} | {:>8} | {:>8} | {:<15} | {:<15} | {about}\n",
            show(per, path),
            show(net, path),
            versus(path, c),
            versus(path, ideal),
        ));
    }
    out
}

/// Calls per pass over a path's mix: 9 profiler lookups, 26 image lookups.
fn calls(path: &str) -> f64 {
    if path.ends_with("_hwdecode") {
        9.0
    } else {
        26.0
    }
}

/// `cargo xtask bench --measure time [--lto] [--quick]`.
fn time(meta: &Metadata, lto: bool, quick: bool) -> Result<(), String> {
    let (target_dir, profile) = profile(meta, lto);
    let (warm, measurement) = if quick { ("0.5", "1") } else { ("1", "3") };
    let mut command = build::cargo("bench -p nrtucode-bench --bench lookup --no-run --target-dir");
    command.arg(&target_dir).stderr(Stdio::null());
    let exe = build::executable(with_lto(&mut command, lto, "BENCH"), "lookup")?;
    let home = target_dir.join("criterion");
    let _ = std::fs::remove_dir_all(home.join("lookup"));
    let log = target_dir.join("bench.log");
    let (file, err) = crate::files::output(&log)?;
    let mut bench = measured(&exe, &[("CRITERION_HOME", home.as_os_str())]);
    bench.args([
        "--bench",
        "--noplot",
        "--warm-up-time",
        warm,
        "--measurement-time",
        measurement,
    ]);
    if !bench
        .stdout(file)
        .stderr(err)
        .status()
        .is_ok_and(|s| s.success())
    {
        eprint!("{}", std::fs::read_to_string(&log).unwrap_or_default());
        return Err(format!("{} failed (log: {})", exe.display(), log.display()));
    }
    println!(
        "wall time per call (criterion median of one pass over the mix / calls per pass), profile: {profile}"
    );
    println!(
        "{}",
        environment(
            MEASURE_ENV.lines().filter(|l| !l.starts_with('#')).count() + 1,
            "CRITERION_HOME"
        )
    );
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'));
    println!(
        "machine: {cores} cores, {}\n",
        model.map_or("", |(_, m)| m.trim())
    );
    print!("{}", time_table(&medians(&home.join("lookup"))?)?);
    Ok(())
}

/// ns per call of each path criterion measured under `dir` (`NAME/new/estimates.json`).
fn medians(dir: &Path) -> Result<BTreeMap<String, f64>, String> {
    let mut ns = BTreeMap::new();
    for entry in std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        let estimates = entry.path().join("new/estimates.json");
        let Ok(text) = std::fs::read_to_string(&estimates) else {
            continue;
        };
        let json: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", estimates.display()))?;
        let median = json["median"]["point_estimate"].as_f64();
        let median = median.ok_or_else(|| format!("{} has no median", estimates.display()))?;
        ns.insert(name.clone(), median / calls(&name));
    }
    Ok(ns)
}

/// The table of ns per call and ratios ([`ROWS`] without the partition paths, which no
/// benchmark measures); fails naming a path criterion did not measure.
fn time_table(ns: &BTreeMap<String, f64>) -> Result<String, String> {
    let get = |p: &str| {
        ns.get(p)
            .copied()
            .ok_or_else(|| format!("criterion measured no path {p}"))
    };
    let mut out = format!(
        "| {:<18} | {:>8} | {:>6} | {:>7} |\n|{}|{}|{}|{}|\n",
        "path",
        "ns/call",
        "x C",
        "x ideal",
        "-".repeat(20),
        "-".repeat(10),
        "-".repeat(8),
        "-".repeat(9)
    );
    for (path, c, ideal) in ROWS.into_iter().filter(|r| !r.0.starts_with("partition_")) {
        let x = get(path)?;
        let vs = |other: Option<&str>| {
            other.map_or(Ok(String::new()), |o| {
                Ok::<_, String>(format!("{:.2}x", x / get(o)?))
            })
        };
        out.push_str(&format!(
            "| {path:<18} | {x:>8.2} | {:>6} | {:>7} |\n",
            vs(c)?,
            vs(ideal)?
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callgrind_and_instr_counts_are_read_from_their_output() {
        let log =
            "==1== Events    : Ir\n==1== Collected : 1234567\n==1==\n==1== I   refs:      2,000\n";
        assert_eq!(number_after(log, "Collected : "), Some(1_234_567));
        assert_eq!(number_after("==1== I   refs: 5\n", "Collected : "), None);
        assert_eq!(
            number_after("ours_explicit\tcalls=52000\tacc=0x1f\n", "calls="),
            Some(52_000)
        );
        assert_eq!(round1(40.26), 40.3);
        assert_eq!(round1(3.0 / 2.0), 1.5);
    }

    #[test]
    fn the_instructions_table_shows_ratios_of_both_sides_and_leaves_missing_counterparts_blank() {
        let m = |v: &[(&str, f64)]| -> BTreeMap<String, f64> {
            v.iter().map(|(k, x)| (k.to_string(), *x)).collect()
        };
        let per = m(&[
            ("ours_explicit", 40.0),
            ("c_explicit", 100.0),
            ("ideal_explicit", 20.0),
            ("empty", 10.0),
        ]);
        let net = m(&[
            ("ours_explicit", 30.0),
            ("c_explicit", 90.0),
            ("ideal_explicit", 10.0),
            ("empty", 0.0),
        ]);
        let about = [("ours_explicit".to_string(), "ours".to_string())].into();
        let out = instructions_table(&per, &net, &about);
        let ours = "| ours_explicit      |     40.0 |     30.0 | 0.40x (0.33x)   | 2.00x (3.00x)   | ours\n";
        assert!(out.contains(ours), "{out}");
        assert!(out.contains("| empty              |     10.0 |      0.0 |"));
        let blank = " ".repeat(15);
        assert!(out.contains(&format!(
            "| c_explicit         |    100.0 |     90.0 | {blank} | {blank} | \n"
        )));
    }

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
    fn the_driver_runs_by_its_path_under_the_workspace_root() {
        let root = Path::new("/w/repo");
        let under = relative_to(Path::new("/w/repo/target/lto/release/instr"), root);
        assert_eq!(under, Path::new("target/lto/release/instr"));
        let elsewhere = relative_to(Path::new("/elsewhere/release/instr"), root);
        assert_eq!(elsewhere, Path::new("/elsewhere/release/instr"));
    }

    #[test]
    fn medians_are_per_call_and_the_time_table_shows_both_ratios() {
        let dir = std::env::temp_dir().join(format!("xtask-bench-{}", std::process::id()));
        for (name, median) in [
            ("ours_explicit", 260.0),
            ("c_explicit", 520.0),
            ("ideal_explicit", 130.0),
            ("ours_hwdecode", 90.0),
        ] {
            let d = dir.join(name).join("new");
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(
                d.join("estimates.json"),
                format!(r#"{{"median": {{"point_estimate": {median}}}}}"#),
            )
            .unwrap();
        }
        let ns = medians(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!((ns["ours_explicit"], ns["ours_hwdecode"]), (10.0, 10.0));
        // Paths criterion did not measure are named.
        assert!(time_table(&ns).unwrap_err().contains("ours_explicit_std"));
        let mut all: BTreeMap<String, f64> =
            ROWS.iter().map(|(p, _, _)| (p.to_string(), 4.0)).collect();
        all.extend(ns);
        let out = time_table(&all).unwrap();
        assert!(
            out.contains("| ours_explicit      |    10.00 |  0.50x |   2.00x |\n"),
            "{out}"
        );
        assert!(out.contains("| empty              |     4.00 |        |         |\n"));
    }
}
