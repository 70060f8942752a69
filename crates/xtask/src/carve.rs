//! The carve measurements:
//!
//! - `cargo xtask carve-bench --case speed [LIB] [--rounds N]`: `nrtucode carve` (parse, decode, sha256 of
//!   the input and of every blob, write the blob directory all or nothing with fsync) against
//!   the floor for reading and hashing the same file, `cat LIB | sha256sum`, side by side, and
//!   their ratio. Target: ratio <= 1.0.
//! - `cargo xtask carve-bench --case binutils [LIB]`: `nrtucode carve` against the binutils pipeline of
//!   the seed's reproduction section (`objdump -d` + `readelf -rW` + one `dd` per blob, then
//!   `sha256sum` of the blobs), best of 3 each. That pipeline stays the shell and binutils
//!   programs it is ([`BINUTILS`]): it is the baseline being measured, not a parser of ours.
//!
//! LIB defaults to the full look-alike built with gcc -O2 (about 10 MB, unstripped), built
//! first; the release `nrtucode` is built first too (both outside any timing), and the one timed
//! is the one cargo's messages name.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::build::{self, status};
use crate::metadata::Metadata;

/// The cases of `carve-bench` (their options: the library, the rounds of `speed`).
pub const CASES: [crate::Case<(Option<PathBuf>, u32)>; 2] = [
    (
        "speed",
        "Against `cat | sha256sum` (target: ratio at or below 1.0)",
        speed,
    ),
    (
        "binutils",
        "Against the binutils pipeline (objdump, readelf, dd, sha256sum)",
        vs_binutils,
    ),
];

/// The binutils side of `carve-bench --case binutils`, run by `bash -c` with the library as `$1` and a
/// scratch directory as `$2`: the disassembly and relocations, the getter stubs' (blob VA,
/// size) from the `lea` target and the `movq` immediate, each VA turned into a file offset
/// through its section, one `dd` per blob, then `sha256sum` of the blobs (POSIX awk: runs with
/// mawk or gawk).
const BINUTILS: &str = r##"set -e
lib=$1 work=$2
rm -rf "$work/bu"; mkdir -p "$work/bu"
objdump -d "$lib" >"$work/bu/dis.txt"
readelf -rW "$lib" >"$work/bu/rel.txt"
readelf -SW "$lib" >"$work/bu/sec.txt"
awk '
  function hex(s,  i, v) { s = tolower(s); sub(/^0x/, "", s); v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
  /^[0-9a-f]+ <.*_get>:$/ { if (sym != "") print sym, va, size; sym = $2; gsub(/[<>:]/, "", sym); va = ""; size = 0; next }
  /^[0-9a-f]+ </ { if (sym != "") print sym, va, size; sym = ""; next }
  sym != "" && /lea .*\(%rip\),%r/ { for (i = 1; i <= NF; i++) if ($i == "#") va = $(i + 1) }
  sym != "" && /movq +\$0x[0-9a-f]+,\(%rsi\)/ { match($0, /\$0x[0-9a-f]+/); size = hex(substr($0, RSTART + 1, RLENGTH - 1)) }
  END { if (sym != "") print sym, va, size }
' "$work/bu/dis.txt" >"$work/bu/stubs.txt"
awk '
  function hex(s,  i, v) { s = tolower(s); sub(/^0x/, "", s); v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
  FNR == NR { if ($0 ~ /^ *\[ *[0-9]+\]/) { sub(/^ *\[ *[0-9]+\] */, ""); if ($2 != "NOBITS") { n++; a[n] = hex($3); o[n] = hex($4); z[n] = hex($5) } } next }
  $3 > 0 { v = hex($2); for (i = 1; i <= n; i++) if (v >= a[i] && v < a[i] + z[i] && a[i] > 0) { printf "%s %d %d\n", $1, v - a[i] + o[i], $3; break } }
' "$work/bu/sec.txt" "$work/bu/stubs.txt" >"$work/bu/blobs.txt"
while read -r sym off size; do
  dd if="$lib" of="$work/bu/$sym.bin" iflag=skip_bytes,count_bytes bs=1M skip="$off" count="$size" status=none
done <"$work/bu/blobs.txt"
sha256sum "$work"/bu/*.bin >"$work/bu/sha256.txt"
"##;

/// The input library and the release `nrtucode`, built outside any timing, and the scratch
/// directory (removed by the caller).
struct Setup {
    work: PathBuf,
    lib: PathBuf,
    bin: PathBuf,
}

fn setup(meta: &Metadata, name: &str, lib: Option<&Path>) -> Result<Setup, String> {
    let work = build::scratch(meta, name)?;
    let lib = match lib {
        Some(lib) => lib.to_path_buf(),
        None => {
            let la = work.join("la");
            let args =
                "run -q --release -p nrtucode-lookalike -- --library full --opt O2 --build --out";
            status(build::cargo(args).arg(&la).stdout(Stdio::null()))?;
            la.join("libnrtucode_internal.so")
        }
    };
    let bin = build::executable(
        &mut build::cargo("build -q --release -p nrtucode-cli"),
        "nrtucode",
    )?;
    Ok(Setup { work, lib, bin })
}

/// Wall-clock seconds `command` takes (its output discarded), and whether it succeeded.
fn time(command: &mut Command) -> (f64, bool) {
    command.stdout(Stdio::null()).stderr(Stdio::null());
    let start = Instant::now();
    let ok = command.status().is_ok_and(|s| s.success());
    (start.elapsed().as_secs_f64(), ok)
}

/// Seconds as the reports print them (`%.4f`), read back: the comparisons and ratios use the
/// printed figures.
fn secs(x: f64) -> f64 {
    format!("{x:.4}").parse().unwrap_or(x)
}

/// The smaller of `a` and the best so far.
fn best(a: f64, so_far: Option<f64>) -> Option<f64> {
    Some(so_far.map_or(a, |b| b.min(a)))
}

/// The median as the report takes it: the middle value, the lower of the two middle ones for an
/// even count.
fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(0.0)
}

fn size_of(lib: &Path) -> Result<u64, String> {
    std::fs::metadata(lib)
        .map(|m| m.len())
        .map_err(|e| format!("cannot read {}: {e}", lib.display()))
}

/// `cat LIB | sha256sum`, output discarded: seconds.
fn cat_sha256(lib: &Path) -> Result<f64, String> {
    let start = Instant::now();
    let mut cat = Command::new("cat")
        .arg(lib)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run cat: {e}"))?;
    let pipe = cat.stdout.take().ok_or("cat has no stdout")?;
    let sha = Command::new("sha256sum")
        .stdin(pipe)
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run sha256sum (apt-get install coreutils): {e}"))?;
    let cat = cat.wait().map_err(|e| format!("cat: {e}"))?;
    if !cat.success() || !sha.success() {
        return Err(format!("cat {} | sha256sum failed", lib.display()));
    }
    Ok(start.elapsed().as_secs_f64())
}

/// `nrtucode carve LIB --out DIR`: seconds.
fn carve(bin: &Path, lib: &Path, out: &Path) -> f64 {
    secs(
        time(
            Command::new(bin)
                .arg("carve")
                .arg(lib)
                .arg("--out")
                .arg(out),
        )
        .0,
    )
}

/// `cargo xtask carve-bench --case speed [LIB] [--rounds N]`.
pub fn speed(meta: &Metadata, (lib, rounds): &(Option<PathBuf>, u32)) -> Result<(), String> {
    let s = setup(meta, "carve-speed", lib.as_deref())?;
    let result = speed_of(&s, *rounds);
    let _ = std::fs::remove_dir_all(&s.work);
    result
}

fn speed_of(s: &Setup, rounds: u32) -> Result<(), String> {
    let Setup { work, lib, bin } = s;
    cat_sha256(lib)?; // warm the page cache for both sides
    let (mut all_cat, mut all_carve) = (Vec::new(), Vec::new());
    let (mut best_cat, mut best_carve, mut best_recarve) = (None, None, None);
    // Each round carves into a new directory (all are removed at the end, not between rounds:
    // ext4 slows the creation of new files while it still remembers many just-deleted inodes,
    // which a single carve never meets); re-carving over the previous round's carve replaces it
    // whole.
    for i in 1..=rounds {
        let c = secs(cat_sha256(lib)?);
        all_cat.push(c);
        best_cat = best(c, best_cat);
        let c = carve(bin, lib, &work.join(format!("blobs-{i}")));
        all_carve.push(c);
        best_carve = best(c, best_carve);
        if i > 1 {
            let c = carve(bin, lib, &work.join(format!("blobs-{}", i - 1)));
            best_recarve = best(c, best_recarve);
        }
    }
    // The same carve into tmpfs, where fsync returns at once: what the carve costs besides
    // waiting for the disk.
    let shm = Path::new("/dev/shm").join(format!("xtask-carve-speed-{}", std::process::id()));
    let mut best_shm = None;
    if std::fs::create_dir(&shm).is_ok() {
        for i in 1..=rounds {
            best_shm = best(carve(bin, lib, &shm.join(format!("blobs-{i}"))), best_shm);
        }
        let _ = std::fs::remove_dir_all(&shm);
    }
    if !work.join("blobs-1/manifest.tsv").is_file() {
        return Err("carve-speed: the carve failed".into());
    }
    let show = |x: Option<f64>| x.map_or(String::new(), |x| format!("{x:.4}"));
    println!(
        "input:               {} ({} bytes), best of {rounds}",
        lib.display(),
        size_of(lib)?
    );
    println!("cat | sha256sum:     {} s", show(best_cat));
    println!(
        "nrtucode carve:      {} s  (fresh directory)",
        show(best_carve)
    );
    println!(
        "nrtucode re-carve:   {} s  (replacing an earlier carve)",
        show(best_recarve)
    );
    if best_shm.is_some() {
        println!(
            "carve into tmpfs:    {} s  (fsync returns at once: the carve without the disk wait)",
            show(best_shm)
        );
    }
    let (c, f) = (best_carve.unwrap_or(0.0), best_cat.unwrap_or(0.0));
    println!(
        "ratio:               carve / (cat | sha256sum) = {:.2}x (best of each)",
        c / f
    );
    let (mc, mf) = (median(&all_carve), median(&all_cat));
    println!(
        "median ratio:        {mc:.4} s / {mf:.4} s = {:.2}x",
        mc / mf
    );
    Ok(())
}

/// `cargo xtask carve-bench --case binutils [LIB]`.
pub fn vs_binutils(meta: &Metadata, (lib, _): &(Option<PathBuf>, u32)) -> Result<(), String> {
    for (tool, package) in [
        ("objdump", "binutils"),
        ("readelf", "binutils"),
        ("dd", "coreutils"),
        ("sha256sum", "coreutils"),
        ("awk", "mawk"),
    ] {
        crate::device::require(tool, package)?;
    }
    let s = setup(meta, "carve-vs-binutils", lib.as_deref())?;
    let result = vs_binutils_of(&s);
    let _ = std::fs::remove_dir_all(&s.work);
    result
}

fn vs_binutils_of(s: &Setup) -> Result<(), String> {
    let Setup { work, lib, bin } = s;
    let best_of_3 = |run: &dyn Fn() -> f64| {
        (0..3)
            .map(|_| secs(run()))
            .fold(None, |b, t| best(t, b))
            .unwrap_or(0.0)
    };
    let out = work.join("carve");
    // As the script timed it: removing the previous carve, then carving.
    let t_carve = best_of_3(&|| {
        let start = Instant::now();
        let _ = std::fs::remove_dir_all(&out);
        time(
            Command::new(bin)
                .arg("carve")
                .arg(lib)
                .arg("--out")
                .arg(&out),
        );
        start.elapsed().as_secs_f64()
    });
    let t_bu = best_of_3(&|| {
        time(
            Command::new("bash")
                .args(["-c", BINUTILS, "binutils"])
                .arg(lib)
                .arg(work),
        )
        .0
    });
    let list = work.join("bu/blobs.txt");
    let blobs = std::fs::read_to_string(&list)
        .map_err(|e| format!("the binutils side wrote no {}: {e}", list.display()))?
        .lines()
        .count();
    println!("input:     {} ({} bytes)", lib.display(), size_of(lib)?);
    println!("nrtucode:  {t_carve:.4} s  (carve + manifest + sha256 of every blob)");
    println!("binutils:  {t_bu:.4} s  (objdump -d + readelf -rW/-SW + {blobs} x dd + sha256sum)");
    println!("ratio:     binutils / nrtucode = {:.1}x", t_bu / t_carve);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_or_lower_middle_value() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.0);
        assert_eq!(median(&[5.0]), 5.0);
    }

    #[test]
    fn the_best_time_is_the_smallest_printed_figure() {
        let times = [0.123_456, 0.100_04, 0.2];
        let b = times.iter().fold(None, |b, t| best(secs(*t), b));
        assert_eq!(b, Some(0.1));
        assert_eq!(best(1.0, None), Some(1.0));
    }

    #[test]
    fn the_binutils_side_finds_a_getter_stub_and_cuts_its_blob() {
        // A disassembly and section table in binutils' formats, through the script's awk
        // programs (without objdump/readelf/dd, which the lines below stand in for).
        let (start, end) = (
            BINUTILS.find("awk '").unwrap(),
            BINUTILS.find(" \"$work/bu/dis.txt\"").unwrap(),
        );
        let stubs = &BINUTILS[start + 5..end];
        let stubs = stubs.trim().trim_matches('\'');
        let dis = "\
0000000000001000 <A_IRAM_get>:
    1000:\t48 8d 05 f9 0f 00 00 \tlea    0xff9(%rip),%rax        # 2000 <blob>
    1007:\t48 c7 06 20 00 00 00 \tmovq   $0x20,(%rsi)
0000000000001010 <other>:
";
        let out = Command::new("awk")
            .arg(stubs)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write as _;
                c.stdin.take().unwrap().write_all(dis.as_bytes())?;
                c.wait_with_output()
            })
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "A_IRAM_get 2000 32\n");
    }
}
