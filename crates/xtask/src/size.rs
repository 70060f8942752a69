//! `cargo xtask size`: the flash cost of the resolvers on thumbv7em-none-eabihf (release,
//! opt-level "s", LTO), and the cost of embedding the ~10 MB payload at build time. Prints the
//! tables of docs/performance.md ("Flash", "Build cost") and docs/bare-metal.md (the cost of
//! `digest`).
//!
//! The consumer is `tests/no_std` built with only the `NoEnv` image and profiler-table entry
//! points (`--no-default-features --features panic-loop`), then again with its `digest` entry
//! points (what feature `digest` adds, with sha2's unrolled and compact SHA-256). Its ELF is
//! split by [`elf::size_of`]: payload = the `BLOB_*` statics (distinct blobs), metadata = the
//! rest of .rodata/.data, code = .text minus the consumer's `_start`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use nrtucode_facts::facts::Getter;

use crate::build::{self, path_str};
use crate::elf::{self, SizeReport};
use crate::metadata::Metadata;
use crate::status;

/// The vendor's metadata: 38×16 B `image_list` + 38×16 B `hwdecode_table_list` + 102×40 B
/// descriptors + 386×32 B getter stubs.
const VENDOR_METADATA: u64 = 38 * 16 + 38 * 16 + 102 * 40 + 386 * 32;

/// `cargo xtask size [--no-build-cost]`.
pub fn run(meta: &Metadata, build_cost: bool) -> Result<(), String> {
    crate::device::rustup_target(crate::device::THUMB);
    crate::device::require("gcc", "gcc")?; // the look-alike
    let work = build::scratch(meta, "size")?;
    let result = measure(meta, &work, build_cost);
    let _ = std::fs::remove_dir_all(&work);
    result
}

fn measure(meta: &Metadata, work: &Path, build_cost: bool) -> Result<(), String> {
    let no_blob_dir = [("NRTUCODE_BLOB_DIR", "")];
    eprintln!("building the fixture consumer...");
    let fixtures = consumer(meta, "fixtures", "nopanic-check", "", &no_blob_dir)?;
    // The same consumer calling nrtucode::digest (in place, copy-verify, a custom hasher): what
    // the feature adds, with sha2's default (unrolled) and compact SHA-256 loops.
    eprintln!("building the digest consumers...");
    let verify = consumer(
        meta,
        "fixtures + digest",
        "nopanic-check",
        "digest",
        &no_blob_dir,
    )?;
    let verify_compact = consumer(
        meta,
        "fixtures + digest, compact sha2",
        "nopanic-check-compact",
        "digest",
        &[
            ("NRTUCODE_BLOB_DIR", ""),
            (
                "CARGO_TARGET_THUMBV7EM_NONE_EABIHF_RUSTFLAGS",
                "--cfg sha2_backend_soft=\"compact\"",
            ),
        ],
    )?;

    eprintln!("building the look-alike, carving it, building the real-blob consumer...");
    let mut rows = vec![fixtures];
    // The workspace's own look-alike and CLI: a failure here is a failure of the report.
    let blobs = build::carved_lookalike(work)?;
    rows.push(consumer(
        meta,
        "carved look-alike",
        "nopanic-check-carved",
        "",
        &[("NRTUCODE_BLOB_DIR", path_str(&blobs)?)],
    )?);

    let vendor = vendor_payload(&nrtucode_facts::facts::getters());
    print!("{}", tables(&rows, vendor, &[verify, verify_compact]));

    if build_cost {
        embedding_cost(meta, work)?;
    }
    Ok(())
}

/// Builds `tests/no_std` with `panic-loop` (and `features`) into `target_dir` under the target
/// directory, with `env`, and splits the ELF cargo reports.
fn consumer(
    meta: &Metadata,
    label: &str,
    target_dir: &str,
    features: &str,
    env: &[(&str, &str)],
) -> Result<SizeReport, String> {
    let features = if features.is_empty() {
        "panic-loop".to_string()
    } else {
        format!("panic-loop,{features}")
    };
    let mut command = build::cargo();
    command
        .current_dir(meta.root.join("tests/no_std"))
        .args(["build", "--quiet", "--release", "--no-default-features"])
        .args(["--features", &features, "--target-dir"])
        .arg(meta.target_dir.join(target_dir))
        .envs(env.iter().copied());
    let elf = build::executable(&mut command, "nopanic-check")?;
    elf::size_of(&elf, label)
}

/// (distinct blobs, their bytes) of the real getters the two resolvers reach: the facts'
/// getters of class `R` other than `EXTISA_*`, one per blob address (the last row's size counts).
fn vendor_payload(getters: &[Getter]) -> (usize, u64) {
    let mut seen: BTreeMap<u64, u64> = BTreeMap::new();
    for g in getters
        .iter()
        .filter(|g| g.real && !g.region.starts_with("EXTISA"))
    {
        seen.insert(g.blob_va, g.size as u64);
    }
    (seen.len(), seen.values().sum())
}

/// The report's three tables and the function list (stdout of the script, byte for byte).
fn tables(rows: &[SizeReport], vendor: (usize, u64), with_verify: &[SizeReport]) -> String {
    let t = crate::device::commas;
    let d = |a: u64, b: u64| match a.checked_sub(b) {
        Some(n) => t(n),
        None => format!("-{}", t(b - a)),
    };
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    line("flash of a minimal no_std consumer, thumbv7em-none-eabihf, release (opt-level s, lto, codegen-units 1)".into());
    line(String::new());
    line("| build | resolver code | table metadata | code + metadata | vs vendor metadata (17,648 B) | panic code linked |".into());
    line("|---|---:|---:|---:|---:|---:|".into());
    for r in rows {
        let cm = r.code + r.metadata;
        line(format!(
            "| {} | {} B | {} B | {} B | {:.1}% | {} B |",
            r.label,
            t(r.code),
            t(r.metadata),
            t(cm),
            100.0 * cm as f64 / VENDOR_METADATA as f64,
            t(r.panic)
        ));
    }
    line(String::new());
    line("| build | embedded payload (distinct blobs) | vendor payload (distinct, from the facts) | consumer flash (alloc sections) | flash - payload |".into());
    line("|---|---:|---:|---:|---:|".into());
    for r in rows {
        line(format!(
            "| {} | {} B ({} blobs) | {} B ({} blobs) | {} B | {} B |",
            r.label,
            t(r.payload),
            r.blobs,
            t(vendor.1),
            vendor.0,
            t(r.alloc),
            d(r.alloc, r.payload)
        ));
    }
    line(String::new());
    line("feature digest: what it adds to the fixture consumer (same blobs, same build)".into());
    line(String::new());
    line(
        "| build | code | code added | metadata added (digest table) | panic code linked |".into(),
    );
    line("|---|---:|---:|---:|---:|".into());
    if let Some(base) = rows.first() {
        for r in with_verify {
            line(format!(
                "| {} | {} B | {} B | {} B | {} B |",
                r.label,
                t(r.code),
                d(r.code, base.code),
                d(r.metadata, base.metadata),
                t(r.panic)
            ));
        }
        line(String::new());
        line("resolver functions in the fixture consumer (bytes, name):".into());
        for (n, name) in &base.functions {
            line(format!("  {n:6}  {name}"));
        }
    }
    out
}

/// The build-cost table: a clean release build of the core crate, then the crate alone, timed
/// by `/usr/bin/time` (wall time, peak RSS of the largest process).
fn embedding_cost(meta: &Metadata, work: &Path) -> Result<(), String> {
    if !Path::new("/usr/bin/time").exists() {
        return Err("size: the build cost needs /usr/bin/time (apt-get install time)".into());
    }
    println!();
    println!(
        "embedding cost: clean release build of the core crate (default features, ~10 MB payload)"
    );
    let clean = meta.target_dir.join("size-clean");
    let _ = std::fs::remove_dir_all(&clean);
    println!();
    println!("| build | wall time | peak RSS (largest process) |");
    println!("|---|---:|---:|");
    let times = work.join("time");
    let result = (|| {
        timed(
            "cargo build --release -p nrtucode, empty target dir (deps, build script, core)",
            &clean,
            &times,
        )?;
        status(
            build::cargo()
                .args([
                    "clean",
                    "--quiet",
                    "--release",
                    "-p",
                    "nrtucode",
                    "--target-dir",
                ])
                .arg(&clean),
        )?;
        timed(
            "the core crate alone (build script + rustc, deps built)",
            &clean,
            &times,
        )
    })();
    let _ = std::fs::remove_dir_all(&clean);
    result
}

/// `cargo build --release -p nrtucode` into `target_dir` under `/usr/bin/time`; prints its row.
fn timed(label: &str, target_dir: &PathBuf, times: &Path) -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    status(
        Command::new("/usr/bin/time")
            .args(["-f", "%e %M", "-o"])
            .arg(times)
            .arg(cargo)
            .args(["build", "--release", "-p", "nrtucode"])
            .env("CARGO_TARGET_DIR", target_dir)
            .env("NRTUCODE_BLOB_DIR", "")
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    )?;
    let text = std::fs::read_to_string(times)
        .map_err(|e| format!("cannot read {}: {e}", times.display()))?;
    let (wall, kb) = parse_time(&text).ok_or_else(|| format!("/usr/bin/time wrote {text:?}"))?;
    println!("| {label} | {wall} s | {} MiB |", kb / 1024);
    Ok(())
}

/// (wall seconds as printed, peak KiB) of `/usr/bin/time -f '%e %M'` output (its last line).
fn parse_time(text: &str) -> Option<(&str, u64)> {
    let mut words = text.lines().last()?.split_whitespace();
    let wall = words.next()?;
    let kb = words.next()?.parse().ok()?;
    Some((wall, kb))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(label: &str, code: u64, metadata: u64, payload: u64) -> SizeReport {
        SizeReport {
            label: label.into(),
            alloc: code + metadata + payload + 8,
            text: code + 4,
            code,
            panic: 0,
            data: metadata + payload,
            payload,
            blobs: 3,
            metadata,
            functions: vec![(1234, "nrtucode::get_memory_image".into())],
        }
    }

    #[test]
    fn the_tables_print_each_figure_where_the_docs_quote_it() {
        let out = tables(
            &[row("fixtures", 5000, 6000, 100)],
            (161, 10_000_000),
            &[row("fixtures + digest", 7000, 6032, 100)],
        );
        // 11,000 / 17,648 = 62.33%.
        assert!(
            out.contains("| fixtures | 5,000 B | 6,000 B | 11,000 B | 62.3% | 0 B |"),
            "{out}"
        );
        assert!(out.contains(
            "| fixtures | 100 B (3 blobs) | 10,000,000 B (161 blobs) | 11,108 B | 11,008 B |"
        ));
        assert!(out.contains("| fixtures + digest | 7,000 B | 2,000 B | 32 B | 0 B |"));
        let smaller = tables(
            &[row("a", 5000, 6000, 0)],
            (0, 0),
            &[row("b", 3766, 6000, 0)],
        );
        assert!(
            smaller.contains("| b | 3,766 B | -1,234 B | 0 B | 0 B |"),
            "{smaller}"
        );
        assert!(out.ends_with("    1234  nrtucode::get_memory_image\n"));
    }

    #[test]
    fn the_vendor_payload_counts_each_real_blob_once() {
        let getter = |region, blob_va, size, real| Getter {
            id: nrtucode_facts::facts::GetterId {
                symbol: "A_get",
                gen_name: "A",
                class: "NX",
                engine: "ACT",
                variant: "PERF",
                region,
            },
            accessor_va: 0,
            blob_va,
            size,
            real,
        };
        let getters = [
            getter("IRAM", 0x10, 0x100, true),
            getter("IRAM", 0x10, 0x100, true),
            getter("DRAM", 0x20, 0x20, true),
            getter("EXTISA_X", 0x30, 0x1000, true),
            getter("IRAM", 0x40, 0x1000, false),
        ];
        assert_eq!(vendor_payload(&getters), (2, 0x120));
    }

    #[test]
    fn usr_bin_time_output_is_read_from_its_last_line() {
        assert_eq!(
            parse_time("Command exited with non-zero status 1\n12.34 567890\n"),
            Some(("12.34", 567_890))
        );
        assert_eq!(parse_time(""), None);
    }
}
