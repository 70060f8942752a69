//! The carve's speed against other ways of the same job, on the full look-alike built with gcc
//! -O2 (about 10 MB, unstripped; built first, outside any timing) or `--lib LIB`, timing the
//! `nrtucode` of this build (the bench profile: release):
//!
//! - `speed [--rounds N]` (default 7): `nrtucode carve` (parse, decode, sha256 of the input and
//!   of every blob, write the blob directory all or nothing with fsync) against the floor for
//!   reading and hashing the same file, `cat LIB | sha256sum`, alternating; the best of each and
//!   their ratio. Target: ratio <= 1.0.
//! - `binutils`: `nrtucode carve` against the binutils pipeline of the seed's reproduction
//!   section (`objdump -d` + `readelf -rW` + one `dd` per blob, then `sha256sum` of the blobs),
//!   best of 3 each. That pipeline stays the shell and binutils programs it is ([`BINUTILS`]):
//!   it is the baseline being measured, not a parser of ours.
//!
//! `cargo bench -p nrtucode-cli --bench carve [-- speed|binutils] [--lib LIB] [--rounds N]` (no
//! case: both). Run by `cargo test` (without `--bench`), it only checks its own helpers.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use nrtucode_lookalike::{LibraryBuild, OptLevel, Options, build_shared_object, write_sources};

/// The binutils side of `binutils`, run by `bash -c` with the library as `$1` and a scratch
/// directory as `$2`: the disassembly and relocations, the getter stubs' (blob VA, size) from
/// the `lea` target and the `movq` immediate, each VA turned into a file offset through its
/// section, one `dd` per blob, then `sha256sum` of the blobs (POSIX awk: mawk or gawk).
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
/// Wall-clock seconds `command` takes (its output discarded), as printed (`%.4f`, read back:
/// the comparisons and ratios use the printed figures).
fn time(command: &mut Command) -> f64 {
    command.stdout(Stdio::null()).stderr(Stdio::null());
    let start = Instant::now();
    let _ = command.status();
    secs(start.elapsed().as_secs_f64())
}

fn secs(x: f64) -> f64 {
    format!("{x:.4}").parse().unwrap_or(x)
}

/// The smallest of `times` (0 for none).
fn best(times: &[f64]) -> f64 {
    times.iter().copied().reduce(f64::min).unwrap_or(0.0)
}

/// The middle value, the lower of the two middle ones for an even count.
fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(0.0)
}

/// `cat LIB | sha256sum`, output discarded: seconds.
fn cat_sha256(lib: &Path) -> f64 {
    let script = "cat \"$1\" | sha256sum >/dev/null";
    time(Command::new("bash").args(["-c", script, "cat"]).arg(lib))
}

fn carve(lib: &Path, out: &Path) -> f64 {
    let bin = env!("CARGO_BIN_EXE_nrtucode");
    time(
        Command::new(bin)
            .arg("carve")
            .arg(lib)
            .arg("--out")
            .arg(out),
    )
}

fn speed(work: &Path, lib: &Path, rounds: u32) {
    cat_sha256(lib); // warm the page cache for both sides
    let (mut cat, mut fresh, mut recarve, mut shm) = (vec![], vec![], vec![], vec![]);
    // Each round carves into a new directory (all are removed at the end, not between rounds:
    // ext4 slows the creation of new files while it still remembers many just-deleted inodes,
    // which a single carve never meets); re-carving over the previous round's carve replaces it
    // whole.
    for i in 1..=rounds {
        cat.push(cat_sha256(lib));
        fresh.push(carve(lib, &work.join(format!("blobs-{i}"))));
        if i > 1 {
            recarve.push(carve(lib, &work.join(format!("blobs-{}", i - 1))));
        }
    }
    // The same carve into tmpfs, where fsync returns at once: what the carve costs besides
    // waiting for the disk.
    if let Ok(dir) = tempfile::tempdir_in("/dev/shm") {
        shm = (1..=rounds)
            .map(|i| carve(lib, &dir.path().join(format!("blobs-{i}"))))
            .collect();
    }
    assert!(
        work.join("blobs-1/manifest.tsv").is_file(),
        "the carve failed"
    );
    println!("input:               {}, best of {rounds}", input(lib));
    println!("cat | sha256sum:     {:.4} s", best(&cat));
    println!(
        "nrtucode carve:      {:.4} s  (fresh directory)",
        best(&fresh)
    );
    if !recarve.is_empty() {
        let b = best(&recarve);
        println!("nrtucode re-carve:   {b:.4} s  (replacing an earlier carve)");
    }
    if !shm.is_empty() {
        println!(
            "carve into tmpfs:    {:.4} s  (fsync returns at once: the carve without the disk wait)",
            best(&shm)
        );
    }
    let ratio = best(&fresh) / best(&cat);
    println!("ratio:               carve / (cat | sha256sum) = {ratio:.2}x (best of each)");
    let (mc, mf) = (median(&fresh), median(&cat));
    println!(
        "median ratio:        {mc:.4} s / {mf:.4} s = {:.2}x",
        mc / mf
    );
}

fn binutils(work: &Path, lib: &Path) {
    for tool in ["objdump", "readelf", "dd", "sha256sum", "awk"] {
        let found = Command::new("bash")
            .args(["-c", "command -v \"$1\" >/dev/null", "which", tool])
            .status()
            .is_ok_and(|s| s.success());
        assert!(found, "no {tool} on PATH (binutils, coreutils, mawk)");
    }
    let out = work.join("carve");
    // As the seed's script timed it: removing the previous carve, then carving.
    let t_carve = best(&[0; 3].map(|_| {
        let start = Instant::now();
        let _ = std::fs::remove_dir_all(&out);
        carve(lib, &out);
        secs(start.elapsed().as_secs_f64())
    }));
    let mut bash = Command::new("bash");
    bash.args(["-c", BINUTILS, "binutils"]).arg(lib).arg(work);
    let t_bu = best(&[0; 3].map(|_| time(&mut bash)));
    let blobs = std::fs::read_to_string(work.join("bu/blobs.txt"))
        .expect("the binutils side wrote its blob list")
        .lines()
        .count();
    println!("input:     {}", input(lib));
    println!("nrtucode:  {t_carve:.4} s  (carve + manifest + sha256 of every blob)");
    println!("binutils:  {t_bu:.4} s  (objdump -d + readelf -rW/-SW + {blobs} x dd + sha256sum)");
    println!("ratio:     binutils / nrtucode = {:.1}x", t_bu / t_carve);
}

fn input(lib: &Path) -> String {
    let len = std::fs::metadata(lib).map_or(0, |m| m.len());
    format!("{} ({len} bytes)", lib.display())
}

/// The checks `cargo test` runs: the helpers, and the binutils side's stub finder on a
/// disassembly in objdump's format (without objdump, readelf or dd).
fn self_check() {
    assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
    assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.0);
    assert_eq!(best(&[0.123_456, 0.100_04, 0.2].map(secs)), 0.1);
    let start = BINUTILS.find("awk '").unwrap() + 5;
    let stubs = &BINUTILS[start..BINUTILS.find(" \"$work/bu/dis.txt\"").unwrap()];
    let dis = "\
0000000000001000 <A_IRAM_get>:
    1000:\t48 8d 05 f9 0f 00 00 \tlea    0xff9(%rip),%rax        # 2000 <blob>
    1007:\t48 c7 06 20 00 00 00 \tmovq   $0x20,(%rsi)
0000000000001010 <other>:
";
    let script = format!(
        "printf '%s' \"$1\" | awk '{}'",
        stubs.trim().trim_matches('\'')
    );
    let out = Command::new("bash")
        .args(["-c", &script, "awk", dis])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "A_IRAM_get 2000 32\n");
    println!("carve bench: self-check ok (run by cargo bench to measure)");
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut cases, mut lib, mut rounds, mut bench) = (vec![], None, 7, false);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--bench" => bench = true,
            "--lib" => lib = args.next().map(PathBuf::from),
            "--rounds" => {
                rounds = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--rounds N")
            }
            "speed" | "binutils" => cases.push(arg),
            _ => panic!("usage: carve [speed|binutils] [--lib LIB] [--rounds N]"),
        }
    }
    if !bench {
        return self_check();
    }
    let tmp = tempfile::tempdir().unwrap();
    let lib = lib.unwrap_or_else(|| {
        let la = tmp.path().join("la");
        let written = write_sources(&la, &Options::new(LibraryBuild::Full)).unwrap();
        let so = la.join("libnrtucode_internal.so");
        build_shared_object(&written.c_source, &so, OptLevel::O2, false).unwrap();
        so
    });
    for case in ["binutils", "speed"] {
        if cases.is_empty() || cases.iter().any(|c| c == case) {
            let work = tmp.path().join(case);
            std::fs::create_dir(&work).unwrap();
            match case {
                "speed" => speed(&work, &lib, rounds),
                _ => binutils(&work, &lib),
            }
        }
    }
}
