//! `cargo xtask bench --measure instructions [--lto]`: instruction counts per resolver call under
//! `valgrind --tool=callgrind`: ours, the C look-alike (gcc -O2, same binary) and the
//! dense-array ideal, over the fixed input mix of crates/nrtucode-bench, in the fixed
//! 30-variable environment of [`crate::env30`].
//!
//! `--lto`: lto = "fat", codegen-units = 1 (typical firmware profile), in `lto/` under the
//! target directory. Prints one table: Ir per call, Ir per call net of the harness (loop +
//! fold, the `empty` row), and ratios to the C resolver and to the ideal on the same inputs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::build;
use crate::env30::{self, ROWS};
use crate::metadata::Metadata;

/// Passes over the mix inside the measured function.
const PASSES: &str = "2000";

/// `cargo xtask bench --measure instructions [--lto]`.
pub fn run(meta: &Metadata, lto: bool) -> Result<(), String> {
    let valgrind = valgrind()?;
    let (target_dir, profile) = if lto {
        (
            meta.target_dir.join("lto"),
            "release + lto=fat, codegen-units=1",
        )
    } else {
        (meta.target_dir.clone(), "release (Cargo.toml defaults)")
    };
    let build = |dir: &Path, partition: bool| {
        let mut command = build::cargo();
        command
            .args(["build", "--quiet", "--release", "-p", "nrtucode-bench"])
            .args(["--bin", "instr", "--target-dir"])
            .arg(dir);
        if partition {
            command.args(["--features", "partition"]);
        }
        if lto {
            command
                .env("CARGO_PROFILE_RELEASE_LTO", "fat")
                .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1");
        }
        build::executable(&mut command, "instr")
    };
    let bin = relative_to(&build(&target_dir, false)?, &meta.root);
    // The partition paths from a binary of their own (see crates/nrtucode-bench's feature
    // `partition`): in one binary with the others they would move the others' code.
    let bin_partition = relative_to(&build(&target_dir.join("partition"), true)?, &meta.root);
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
    path.strip_prefix(root)
        .map_or_else(|_| path.to_path_buf(), Path::to_path_buf)
}

/// valgrind's path; installed with apt-get when missing and this runs as root (as the script
/// did), else an error naming the package.
fn valgrind() -> Result<PathBuf, String> {
    let find = || {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|p| p.join("valgrind"))
                .find(|p| p.is_file())
        })
    };
    if let Some(path) = find() {
        return Ok(path);
    }
    let root = build::stdout(Command::new("id").arg("-u")).is_ok_and(|u| u.trim() == "0");
    if root {
        let quiet = |args: &[&str]| {
            Command::new("apt-get")
                .args(args)
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        if quiet(&["update", "-qq"])
            && quiet(&["install", "-y", "-qq", "valgrind"])
            && let Some(path) = find()
        {
            return Ok(path);
        }
    }
    Err("instructions: needs valgrind (apt-get install valgrind)".into())
}

/// `valgrind --tool=callgrind ARGS` in the measured environment; (stdout, stderr).
fn callgrind(valgrind: &Path, args: &[&std::ffi::OsStr]) -> Result<(String, String), String> {
    let mut command = env30::command(valgrind, &[]);
    command.arg("--tool=callgrind").args(args);
    let shown = format!("{command:?}");
    let out = command
        .output()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    if !out.status.success() {
        return Err(format!(
            "{shown} failed ({}): {}",
            out.status,
            stderr.trim()
        ));
    }
    Ok((stdout, stderr))
}

/// Ir per call of `path` in `bin`, rounded to one decimal as the table prints it.
fn per_call(valgrind: &Path, bin: &Path, out: &Path, path: &str) -> Result<f64, String> {
    let file = out.join(path);
    let mut option = std::ffi::OsString::from("--callgrind-out-file=");
    option.push(&file);
    let (stdout, log) = callgrind(
        valgrind,
        &[
            &option,
            "--toggle-collect=nrtucode_bench_measure".as_ref(),
            bin.as_os_str(),
            path.as_ref(),
            PASSES.as_ref(),
        ],
    )?;
    let ir = collected(&log).ok_or_else(|| format!("callgrind printed no Ir count for {path}"))?;
    let calls = calls(&stdout).ok_or_else(|| format!("instr printed no call count for {path}"))?;
    Ok(round1(ir as f64 / calls as f64))
}

/// `x` as `%.1f` prints it, read back (the script computed with the printed figures).
fn round1(x: f64) -> f64 {
    format!("{x:.1}").parse().unwrap_or(x)
}

/// callgrind's "Collected : N".
fn collected(log: &str) -> Option<u64> {
    log.lines().find_map(|l| {
        let rest = &l[l.find("Collected : ")? + "Collected : ".len()..];
        rest.split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    })
}

/// instr's "calls=N".
fn calls(stdout: &str) -> Option<u64> {
    stdout.lines().find_map(|l| {
        let rest = &l[l.find("calls=")? + "calls=".len()..];
        rest.split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    })
}

/// (name, about) of each path `instr --list` prints (`name\tcalls\tabout`).
fn list(bin: &Path) -> Result<Vec<(String, String)>, String> {
    let text = build::stdout(Command::new(bin).arg("--list"))?;
    Ok(text
        .lines()
        .filter_map(|l| {
            let mut cells = l.split('\t');
            let name = cells.next()?.to_string();
            let about = cells.nth(1).unwrap_or("").to_string();
            Some((name, about))
        })
        .collect())
}

fn measure(
    valgrind: &Path,
    bin: &Path,
    bin_partition: &Path,
    out: &Path,
    profile: &str,
) -> Result<(), String> {
    let (nenv, _) = callgrind(
        valgrind,
        &[
            "-q".as_ref(),
            "--callgrind-out-file=/dev/null".as_ref(),
            bin.as_os_str(),
            "--env".as_ref(),
        ],
    )?;
    println!("instructions per call (callgrind Ir), profile: {profile}");
    println!(
        "environment: {} variables (crates/xtask/src/env30.rs + valgrind's LD_PRELOAD); NEURON_UCODE_FLAVOR and NRTUCODE_MPLUS_ON_MARIANA unset",
        nenv.trim()
    );
    println!("mix: crates/nrtucode-bench/src/mix.rs, {PASSES} passes after one warm-up pass");
    println!();

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
    print!("{}", table(&per, &net, &about));
    Ok(())
}

/// The table, from Ir per call and net Ir per call of each path.
fn table(
    per: &BTreeMap<String, f64>,
    net: &BTreeMap<String, f64>,
    about: &BTreeMap<String, String>,
) -> String {
    let show = |m: &BTreeMap<String, f64>, p: &str| m.get(p).map(|x| format!("{x:.1}"));
    let ratio = |a: Option<&f64>, b: Option<&f64>| match (a, b) {
        (Some(a), Some(b)) => format!("{:.2}x", a / b),
        _ => String::new(),
    };
    let versus = |path: &str, other: Option<&str>| {
        other.map_or(String::new(), |o| {
            format!(
                "{} ({})",
                ratio(per.get(path), per.get(o)),
                ratio(net.get(path), net.get(o))
            )
        })
    };
    let mut out = format!(
        "| {:<18} | {:>8} | {:>8} | {:<15} | {:<15} | {}\n",
        "path", "Ir/call", "net", "x C (net)", "x ideal (net)", "what"
    );
    out.push_str(&format!(
        "|{}|{}|{}|{}|{}|{}\n",
        "-".repeat(20),
        "-".repeat(10),
        "-".repeat(10),
        "-".repeat(17),
        "-".repeat(17),
        "---"
    ));
    for (path, c, ideal) in ROWS {
        out.push_str(&format!(
            "| {:<18} | {:>8} | {:>8} | {:<15} | {:<15} | {}\n",
            path,
            show(per, path).unwrap_or_default(),
            show(net, path).unwrap_or_default(),
            versus(path, c),
            versus(path, ideal),
            about.get(path).map_or("", String::as_str)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callgrind_and_instr_counts_are_read_from_their_output() {
        let log =
            "==1== Events    : Ir\n==1== Collected : 1234567\n==1==\n==1== I   refs:      2,000\n";
        assert_eq!(collected(log), Some(1_234_567));
        assert_eq!(collected("==1== I   refs: 5\n"), None);
        assert_eq!(
            calls("ours_explicit\tcalls=52000\tacc=0x1f\n"),
            Some(52_000)
        );
        assert_eq!(calls("usage\n"), None);
    }

    #[test]
    fn the_table_shows_ratios_of_both_sides_and_leaves_missing_counterparts_blank() {
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
        let out = table(&per, &net, &about);
        assert!(
            out.contains(
                "| ours_explicit      |     40.0 |     30.0 | 0.40x (0.33x)   | 2.00x (3.00x)   | ours\n"
            ),
            "{out}"
        );
        assert!(out.contains("| empty              |     10.0 |      0.0 |"));
        let blank = " ".repeat(15);
        assert!(out.contains(&format!(
            "| c_explicit         |    100.0 |     90.0 | {blank} | {blank} | \n"
        )));
    }

    #[test]
    fn the_driver_runs_by_its_path_under_the_workspace_root() {
        let root = Path::new("/w/repo");
        assert_eq!(
            relative_to(Path::new("/w/repo/target/lto/release/instr"), root),
            Path::new("target/lto/release/instr")
        );
        assert_eq!(
            relative_to(Path::new("/elsewhere/release/instr"), root),
            Path::new("/elsewhere/release/instr")
        );
    }

    #[test]
    fn figures_are_rounded_as_printed_before_use() {
        assert_eq!(round1(40.26), 40.3);
        assert_eq!(round1(3.0 / 2.0), 1.5);
    }
}
