//! `--measure time`: criterion's median per call of each path of `benches/lookup.rs`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;

use crate::{MEASURE_ENV, ROWS, Workspace, environment, executable, measured};

/// Builds and runs the benchmark (its log in `bench.log` under the target directory) and prints
/// the table.
pub fn run(ws: &Workspace, quick: bool) -> Result<(), String> {
    let (warm, measurement) = if quick { ("0.5", "1") } else { ("1", "3") };
    let args = "bench -p nrtucode-bench --bench lookup --no-run";
    let mut command = ws.cargo(args, &ws.target_dir, "BENCH");
    let exe = executable(command.stderr(Stdio::null()), "lookup")?;
    let home = ws.target_dir.join("criterion");
    let _ = std::fs::remove_dir_all(home.join("lookup"));
    let log = ws.target_dir.join("bench.log");
    let file = std::fs::File::create(&log);
    let file = file.map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let err = (file.try_clone()).map_err(|e| format!("cannot write {}: {e}", log.display()))?;
    let mut bench = measured(&exe, &[("CRITERION_HOME", home.as_os_str())]);
    bench
        .args(["--bench", "--noplot", "--warm-up-time", warm])
        .args(["--measurement-time", measurement]);
    if !(bench.stdout(file).stderr(err).status()).is_ok_and(|s| s.success()) {
        eprint!("{}", std::fs::read_to_string(&log).unwrap_or_default());
        return Err(format!("{} failed (log: {})", exe.display(), log.display()));
    }
    println!(
        "wall time per call (criterion median of one pass over the mix / calls per pass), profile: {}",
        ws.profile
    );
    let variables = MEASURE_ENV.lines().filter(|l| !l.starts_with('#')).count() + 1;
    println!("{}", environment(variables, "CRITERION_HOME"));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = (cpuinfo.lines())
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'));
    let model = model.map_or("", |(_, m)| m.trim());
    println!("machine: {cores} cores, {model}\n");
    print!("{}", table(&medians(&home.join("lookup"))?)?);
    Ok(())
}

/// Calls per pass over a path's mix: 9 profiler lookups, 26 image lookups.
fn calls(path: &str) -> f64 {
    if path.ends_with("_hwdecode") {
        9.0
    } else {
        26.0
    }
}

/// ns per call of each path criterion measured under `dir` (`NAME/new/estimates.json`).
fn medians(dir: &Path) -> Result<BTreeMap<String, f64>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()));
    let mut ns = BTreeMap::new();
    for entry in entries?.flatten() {
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
fn table(ns: &BTreeMap<String, f64>) -> Result<String, String> {
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
    fn medians_are_per_call_and_the_table_shows_both_ratios() {
        let dir = std::env::temp_dir().join(format!("bench-report-{}", std::process::id()));
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
        assert!(table(&ns).unwrap_err().contains("ours_explicit_std"));
        let mut all: BTreeMap<String, f64> =
            ROWS.iter().map(|(p, _, _)| (p.to_string(), 4.0)).collect();
        all.extend(ns);
        let out = table(&all).unwrap();
        assert!(
            out.contains("| ours_explicit      |    10.00 |  0.50x |   2.00x |\n"),
            "{out}"
        );
        assert!(out.contains("| empty              |     4.00 |        |         |\n"));
    }
}
