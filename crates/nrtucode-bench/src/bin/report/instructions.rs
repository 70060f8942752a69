//! `--measure instructions`: Ir per call of each path of the `instr` driver under callgrind,
//! and net of the harness (the `empty` path of the same driver).

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{ROWS, Workspace, environment, executable, measured, stdout};

/// Passes over the mix inside the measured function.
const PASSES: &str = "2000";

/// Builds the two drivers, measures every path and prints the table.
pub fn run(ws: &Workspace) -> Result<(), String> {
    let valgrind = which("valgrind").ok_or("needs valgrind (apt-get install valgrind)")?;
    let build = |dir: &Path, features: &str| {
        let args = format!("build --quiet --release -p nrtucode-bench --bin instr {features}");
        let exe = executable(&mut ws.cargo(&args, dir, "RELEASE"), "instr")?;
        Ok::<_, String>(relative_to(&exe, &ws.root))
    };
    let bin = build(&ws.target_dir, "")?;
    // The partition paths from a driver of their own (see this crate's feature `partition`):
    // in one binary with the others they would move the others' code.
    let bin_partition = build(&ws.target_dir.join("partition"), "--features partition")?;
    let out = ws.target_dir.join("report-instructions");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let callgrind = Callgrind {
        valgrind,
        out: &out,
    };
    let result = measure(&callgrind, &bin, &bin_partition, ws.profile);
    let _ = std::fs::remove_dir_all(&out);
    result
}

/// Where `tool` is on `PATH`.
fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    (std::env::split_paths(&path).map(|dir| dir.join(tool))).find(|p| p.is_file())
}

/// `path` relative to `root` (the report's current directory) when it lies
/// under it.
///
/// The driver runs by that path, as `target/release/instr`: the environment strings sit on the
/// stack right after `argv[0]`, and their addresses move the counts of the `StdEnv` paths (flavor
/// 0 with LTO: 886.5 instructions by `target/lto/release/instr`, 878.2 by the absolute path).
fn relative_to(path: &Path, root: &Path) -> PathBuf {
    path.strip_prefix(root).unwrap_or(path).to_path_buf()
}

/// valgrind, its output files in `out`.
struct Callgrind<'a> {
    valgrind: PathBuf,
    out: &'a Path,
}

impl Callgrind<'_> {
    /// `valgrind --tool=callgrind ARGS` in the measured environment; (stdout, stderr).
    fn run(&self, args: &[&OsStr]) -> Result<(String, String), String> {
        let mut command = measured(&self.valgrind, &[]);
        command.arg("--tool=callgrind").args(args);
        let shown = format!("{command:?}");
        let out = command
            .output()
            .map_err(|e| format!("cannot run {shown}: {e}"))?;
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
    fn per_call(&self, bin: &Path, path: &str) -> Result<f64, String> {
        let mut option = OsString::from("--callgrind-out-file=");
        option.push(self.out.join(path));
        let collect = OsStr::new("--toggle-collect=nrtucode_bench_measure");
        let args = [
            option.as_os_str(),
            collect,
            bin.as_os_str(),
            path.as_ref(),
            PASSES.as_ref(),
        ];
        let (stdout, log) = self.run(&args)?;
        let ir = number_after(&log, "Collected : ")
            .ok_or_else(|| format!("callgrind printed no Ir count for {path}"))?;
        let calls = number_after(&stdout, "calls=")
            .ok_or_else(|| format!("instr printed no call count for {path}"))?;
        Ok(round1(ir as f64 / calls as f64))
    }
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
    let text = stdout(Command::new(bin).arg("--list"))?;
    let cells = text.lines().map(|l| l.split('\t').collect::<Vec<_>>());
    Ok(cells
        .map(|c| (c[0].to_string(), c.get(2).unwrap_or(&"").to_string()))
        .collect())
}

fn measure(cg: &Callgrind, bin: &Path, bin_partition: &Path, profile: &str) -> Result<(), String> {
    let quiet = ["-q", "--callgrind-out-file=/dev/null"].map(OsStr::new);
    let (nenv, _) = cg.run(&[quiet[0], quiet[1], bin.as_os_str(), "--env".as_ref()])?;
    println!("instructions per call (callgrind Ir), profile: {profile}");
    println!("{}", environment(nenv.trim(), "valgrind's LD_PRELOAD"));
    println!("mix: crates/nrtucode-bench/src/mix.rs, {PASSES} passes after one warm-up pass\n");

    let mut per: BTreeMap<String, f64> = BTreeMap::new();
    let mut net: BTreeMap<String, f64> = BTreeMap::new();
    let empty = cg.per_call(bin, "empty")?;
    per.insert("empty".into(), empty);
    for (path, _) in list(bin)?.into_iter().filter(|(p, _)| p != "empty") {
        let ir = cg.per_call(bin, &path)?;
        per.insert(path, ir);
    }
    for (path, ir) in &per {
        net.insert(path.clone(), round1(ir - empty));
    }
    // The partition driver's paths, net of that driver's own harness.
    let empty_partition = cg.per_call(bin_partition, "empty")?;
    for path in ["partition_explicit", "partition_hwdecode"] {
        let ir = cg.per_call(bin_partition, path)?;
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
        let ours = "| ours_explicit      |     40.0 |     30.0 | 0.40x (0.33x)   | 2.00x (3.00x)   | ours\n";
        assert!(out.contains(ours), "{out}");
        assert!(out.contains("| empty              |     10.0 |      0.0 |"));
        let blank = " ".repeat(15);
        assert!(out.contains(&format!(
            "| c_explicit         |    100.0 |     90.0 | {blank} | {blank} | \n"
        )));
    }

    #[test]
    fn the_driver_runs_by_its_path_under_the_workspace_root() {
        let root = Path::new("/w/repo");
        let under = relative_to(Path::new("/w/repo/target/lto/release/instr"), root);
        assert_eq!(under, Path::new("target/lto/release/instr"));
        let elsewhere = relative_to(Path::new("/elsewhere/release/instr"), root);
        assert_eq!(elsewhere, Path::new("/elsewhere/release/instr"));
    }
}
