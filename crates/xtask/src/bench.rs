//! `cargo xtask bench [--lto] [--quick]`: wall time per resolver call (criterion,
//! crates/nrtucode-bench/benches/lookup.rs): ours, the C look-alike compiled -O2 into the same
//! binary, and the dense-array ideal, over the fixed input mix, in the fixed 30-variable
//! environment of [`crate::env30`].
//!
//! `--lto`: lto = "fat", codegen-units = 1, in `lto/` under the target directory. `--quick`:
//! 0.5 s warm-up, 1 s measurement per path (default 1 s / 3 s). Prints one table: median ns per
//! call, and ratios to C and to the ideal.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;

use crate::build;
use crate::env30::{self, ROWS};
use crate::metadata::Metadata;

/// Calls per pass over a path's mix: 9 profiler lookups, 26 image lookups.
fn calls(path: &str) -> f64 {
    match path {
        "ours_hwdecode" | "c_hwdecode" | "ideal_hwdecode" => 9.0,
        _ => 26.0,
    }
}

/// `cargo xtask bench [--lto] [--quick]`.
pub fn run(meta: &Metadata, lto: bool, quick: bool) -> Result<(), String> {
    let (target_dir, profile) = if lto {
        (
            meta.target_dir.join("lto"),
            "release + lto=fat, codegen-units=1",
        )
    } else {
        (meta.target_dir.clone(), "release (Cargo.toml defaults)")
    };
    let (warm, measurement) = if quick { ("0.5", "1") } else { ("1", "3") };
    let mut command = build::cargo();
    command
        .args([
            "bench",
            "-p",
            "nrtucode-bench",
            "--bench",
            "lookup",
            "--no-run",
        ])
        .arg("--target-dir")
        .arg(&target_dir)
        .stderr(Stdio::null());
    if lto {
        command
            .env("CARGO_PROFILE_BENCH_LTO", "fat")
            .env("CARGO_PROFILE_BENCH_CODEGEN_UNITS", "1");
    }
    let exe = build::executable(&mut command, "lookup")?;
    let home = target_dir.join("criterion");
    let _ = std::fs::remove_dir_all(home.join("lookup"));
    let log = target_dir.join("bench.log");
    let file =
        std::fs::File::create(&log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let err = file
        .try_clone()
        .map_err(|e| format!("cannot write {}: {e}", log.display()))?;
    let mut bench = env30::command(&exe, &[("CRITERION_HOME", home.as_os_str())]);
    bench
        .args(["--bench", "--noplot", "--warm-up-time", warm])
        .args(["--measurement-time", measurement])
        .stdout(file)
        .stderr(err);
    let ok = bench.status().is_ok_and(|s| s.success());
    if !ok {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        eprint!("{text}");
        return Err(format!("{} failed (log: {})", exe.display(), log.display()));
    }

    println!(
        "wall time per call (criterion median of one pass over the mix / calls per pass), profile: {profile}"
    );
    println!(
        "environment: {} variables (crates/xtask/src/env30.rs + CRITERION_HOME); NEURON_UCODE_FLAVOR and NRTUCODE_MPLUS_ON_MARIANA unset",
        env30::MEASURE_ENV.len() + 1
    );
    println!("machine: {}", machine());
    println!();
    print!("{}", table(&medians(&home.join("lookup"))?)?);
    Ok(())
}

/// "N cores, MODEL" (as `nproc` and lscpu's "Model name" say).
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_default();
    format!("{cores} cores, {model}")
}

/// ns per call of each path criterion measured under `dir` (`NAME/new/estimates.json`).
fn medians(dir: &Path) -> Result<BTreeMap<String, f64>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut ns = BTreeMap::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let estimates = entry.path().join("new/estimates.json");
        let Ok(text) = std::fs::read_to_string(&estimates) else {
            continue;
        };
        let json: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", estimates.display()))?;
        let median = json["median"]["point_estimate"]
            .as_f64()
            .ok_or_else(|| format!("{} has no median", estimates.display()))?;
        ns.insert(name.clone(), median / calls(&name));
    }
    Ok(ns)
}

/// The table of ns per call and ratios; fails naming a path criterion did not measure.
fn table(ns: &BTreeMap<String, f64>) -> Result<String, String> {
    let get = |p: &str| {
        ns.get(p)
            .copied()
            .ok_or_else(|| format!("criterion measured no path {p}"))
    };
    let mut out = format!(
        "| {:<18} | {:>8} | {:>6} | {:>7} |\n",
        "path", "ns/call", "x C", "x ideal"
    );
    out.push_str(&format!(
        "|{}|{}|{}|{}|\n",
        "-".repeat(20),
        "-".repeat(10),
        "-".repeat(8),
        "-".repeat(9)
    ));
    for (path, c, ideal) in bench_rows() {
        let x = get(path)?;
        let vs = |other: Option<&str>| -> Result<String, String> {
            other.map_or(Ok(String::new()), |o| Ok(format!("{:.2}x", x / get(o)?)))
        };
        out.push_str(&format!(
            "| {path:<18} | {x:>8.2} | {:>6} | {:>7} |\n",
            vs(c)?,
            vs(ideal)?
        ));
    }
    Ok(out)
}

/// The rows this table has: [`ROWS`] without the partition paths (no benchmark measures them).
fn bench_rows() -> impl Iterator<Item = (&'static str, Option<&'static str>, Option<&'static str>)>
{
    ROWS.into_iter()
        .filter(|(path, _, _)| !path.starts_with("partition_"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_are_per_call_and_the_table_shows_both_ratios() {
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
        assert_eq!(ns["ours_explicit"], 10.0);
        assert_eq!(ns["ours_hwdecode"], 10.0);
        // Paths criterion did not measure are named.
        assert!(table(&ns).unwrap_err().contains("ours_explicit_std"));
        let mut all: BTreeMap<String, f64> =
            bench_rows().map(|(p, _, _)| (p.to_string(), 4.0)).collect();
        all.extend(ns);
        let out = table(&all).unwrap();
        assert!(
            out.contains("| ours_explicit      |    10.00 |  0.50x |   2.00x |\n"),
            "{out}"
        );
        assert!(out.contains("| empty              |     4.00 |        |         |\n"));
    }
}
