//! `cargo xtask cost [--what …]`: what the device pays, on the Cortex-M, in instructions and
//! flash ([`CASES`]). Each case builds one of examples/bare-metal's cost examples (opt-level s,
//! LTO) and boots it under QEMU (mps2-an386, Cortex-M4), which logs each translation block's
//! instructions once and each block executed; the instructions between the example's markers
//! `cost_begin` and `cost_end` are the blocks executed, each weighed by its instructions
//! ([`device::count_blocks`]; a block ends at every branch, so none crosses a marker's call).
//! QEMU does not model
//! cycles (no pipeline, no wait states; the DWT cycle counter is not emulated faithfully): these
//! are instructions executed, not cycles. Where a way runs on two sizes, (difference in
//! instructions) / (difference in bytes) is its cost per byte, free of the fixed cost of a call.
//! The sha2 ways are built twice: with sha2's compact software backend (the template's
//! `.cargo/config.toml`) and with its default, unrolled one.
//!
//! - `device` (`examples/verify_cost.rs`): verification and copy ways on a 10,496 B and an
//!   81,344 B image, and the internal flash of the template's board build with each backend.
//! - `partition` (`examples/partition_cost.rs`, the fixtures partition packed with the test key,
//!   counter 1, `--compress deflate`, loaded at 0x21000000): a partition boot step by step; the
//!   flash of the board build embedded and with `partition` (with and without `deflate`); the
//!   code and read-only data of the partition build by what it does (its named symbols; LTO
//!   inlines across crates, so these are lower bounds for each crate); the partition's
//!   overhead (header, tables, TOC, signature, padding) from `nrtucode inspect --json`.
//! - `lookup` (`examples/lookup_cost.rs`, built twice: the template's embedded blobs, and
//!   `partition` over the fixtures partition packed stored with the test key, counter 1): the
//!   instructions per image and per profiler lookup of each, over the same mixes, with and
//!   without each mix's loop ([`lookup_rows`]); both builds must give the same codes and lengths.
//! - `deflate` (`examples/deflate_cost.rs`, inputs written by nrtucode-deflate's `cost_inputs`
//!   example into a scratch directory: the CYW43439 Wi-Fi firmware of the `cyw43-firmware`
//!   crate and its first 64 KiB, raw deflate at the packer's best level, and stored): decoding
//!   per output byte; the inflaters' flash (their crates' named symbols) and what feature `deflate`
//!   adds to the no_std consumer tests/no_std. `--flash-only`: the flash lines, no QEMU run.
//! - `update` (`examples/update_cost.rs`): an update's steps on the emulated NOR flash,
//!   instructions counted by translation block ([`update`]) and flash operations per step.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::build;
use crate::device::{self, Separate, commas};
use crate::elf::{self, Symbol};
use crate::metadata::Metadata;
use crate::qemu;

/// The cases of `cost`.
pub const CASES: [crate::Case<bool>; 5] = [
    (
        "device",
        "Verification, sha2 compact and unrolled, and the template's internal flash with each",
        device,
    ),
    ("partition", "A partition boot, step by step", partition),
    (
        "lookup",
        "One lookup: the embedded tables against a verified partition",
        lookup,
    ),
    (
        "deflate",
        "The deflate decoder (decode + hash per byte, its flash)",
        deflate,
    ),
    (
        "update",
        "An update: the slot choice, the install's writes and full check, a confirm, the flash",
        update,
    ),
];

const HEADER: &str = "Cortex-M4 (QEMU mps2-an386), thumbv7em-none-eabihf, opt-level s, LTO";

/// Where the board's external flash starts, and its RAM: internal flash is what loads below.
const XFLASH: u64 = 0x9000_0000;
const RAM: u64 = 0x2000_0000;

/// A way an example runs on two sizes: how it logs itself (`""`: it does not), its table row,
/// and its SHA-256 (`sha2`: the backend built; else as printed, and the same for both backends).
type Way = (&'static str, &'static str, &'static str);

/// The ways of `verify_cost.rs`, in the order it runs them (each on the small image, then each
/// on the big one).
const DEVICE_WAYS: [Way; 4] = [
    ("copy", "plain copy (copy_from_slice)", "none"),
    ("check_blob", "check_blob (hash in place, no copy)", "sha2"),
    ("copy_blob_checked", "copy_blob_checked", "sha2"),
    (
        "copy_blob_checked_with hmac-sha256",
        "copy_blob_checked_with hmac-sha256",
        "hmac-sha256 1.1",
    ),
];

/// The ways of `deflate_cost.rs`, in order (each on the first 64 KiB, then on the whole firmware).
const DEFLATE_WAYS: [Way; 5] = [
    (
        "",
        "plain copy of the stored bytes (`copy_from_slice`)",
        "none",
    ),
    ("", "`copy_checked` (stored blob: copy-check)", "sha2"),
    (
        "",
        "`decode_checked` (deflate: inflate + SHA-256 of the output)",
        "sha2",
    ),
    (
        "",
        "`decode_checked_with` a hasher that hashes nothing (miniz_oxide's inflater alone)",
        "none",
    ),
    (
        "",
        "zune-inflate 0.2 `decode_deflate` into a heap `Vec`, then copied to the window (no hash)",
        "none",
    ),
];

/// The table rows of one backend: each way's counts on `small` and `big` bytes; the ways that
/// do not hash with sha2 only for the compact backend (sha2's backend does not change them).
pub fn per_byte_rows(
    backend: &str,
    ways: &[Way],
    (small, big): (u64, u64),
    counts: &[u64],
) -> Result<Vec<String>, String> {
    if counts.len() != 2 * ways.len() {
        return Err(format!(
            "{backend}: want {} counts, have {}",
            2 * ways.len(),
            counts.len()
        ));
    }
    let rows = ways
        .iter()
        .enumerate()
        .filter(|(_, w)| w.2 == "sha2" || backend == "compact");
    let rows = rows.map(|(i, &(_, label, sha))| {
        let sha = if sha == "sha2" {
            format!("sha2 {backend}")
        } else {
            sha.to_string()
        };
        let (n_small, n_big) = (counts[i], counts[ways.len() + i]);
        let per_byte = (n_big as f64 - n_small as f64) / (big - small) as f64;
        format!(
            "| {label} | {sha} | {per_byte:.2} | {} | {} |",
            commas(n_small),
            commas(n_big)
        )
    });
    Ok(rows.collect())
}

/// Boots a counting build under QEMU with `flash` ([`device::load`]): its exit status, its
/// log (`decoder`: decoded; in `log`) and the counts ([`device::count_blocks`]).
fn counted(
    elf: &Path,
    flash: &[&Path],
    (log, decoder): (&Path, Option<&Path>),
    seconds: u64,
) -> Result<(i32, String, Vec<u64>), String> {
    device::require("qemu-system-arm", "qemu-system-arm")?;
    device::rustup_target(device::THUMB);
    let mut qemu = device::arm(elf);
    device::load(&mut qemu, flash)?;
    device::boot(&qemu, seconds, true, (log, decoder.map(|d| (d, elf))))
}

/// `cargo xtask cost --what device`: the two backends' tables, then the flash line.
fn device(meta: &Metadata, _: &bool) -> Result<(), String> {
    let decoder = device::host_tool("nrtucode-defmt", "nrtucode-defmt")?;
    let work = meta.scratch("device-cost")?;
    println!("{HEADER}; instructions executed\n");
    println!("| way | SHA-256 | instructions per byte | 10,496 B image | 81,344 B image |");
    println!("|---|---|---:|---:|---:|");
    let mut flash = Vec::new();
    for (backend, template, env) in device::sha2_backends(meta) {
        let elf = template.build(
            &["--features", "qemu", "--example", "verify_cost"],
            &env,
            "verify_cost",
        )?;
        // The board build of the template itself: its internal flash (loaded bytes below XFLASH).
        let board = template.build(&[], &env, "nrtucode-bare-metal")?;
        flash.push(elf::read(&board)?.loaded_below(XFLASH));
        let log_file = work.join(format!("{backend}.log"));
        let (status, log, counts) = counted(&elf, &[], (&log_file, Some(&decoder)), 600)?;
        // Each way logs `REGION WAY, N bytes: ok true`, in the table's order.
        let ran: Vec<&str> = log.lines().filter(|l| l.contains("ok true")).collect();
        let sizes = [10_496, 81_344];
        let want = sizes.iter().flat_map(|n| {
            DEVICE_WAYS
                .iter()
                .map(move |w| format!(" {}, {n} bytes: ok true", w.0))
        });
        if status != 0 || ran.len() != 8 || !ran.iter().zip(want).all(|(l, w)| l.ends_with(&w)) {
            eprintln!("{log}");
            return Err(format!(
                "{backend}: a way failed or ran out of order (exit {status})"
            ));
        }
        for row in per_byte_rows(backend, &DEVICE_WAYS, (10_496, 81_344), &counts)? {
            println!("{row}");
        }
    }
    println!(
        "\nThe template's board build (run-time resolution, LTO) holds {} B of internal flash with sha2 compact, {} B with sha2 unrolled.",
        flash[0], flash[1]
    );
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// The rows of the partition build's code table: a row and the substrings of the demangled
/// names it takes (first match wins).
const CODE_ROWS: [(&str, &[&str]); 6] = [
    (
        "signature: ed25519-compact (verify, SHA-512, field and point code, its tables)",
        &["ed25519"],
    ),
    (
        "partition parse (structure checks)",
        &["nrtucode::partition::parse"],
    ),
    (
        "partition resolve and digests (lookups, load_into, check)",
        &["nrtucode::partition"],
    ),
    (
        "SHA-256 (sha2 compact, nrtucode::digest)",
        &["sha2", "nrtucode::digest"],
    ),
    (
        "the template (main, part::load, its log lines)",
        &["nrtucode_bare_metal"],
    ),
    ("defmt", &["defmt"]),
];
const OTHER: &str = "other (memcpy, runtime, unnamed constants)";

/// The code table: the sizes of the named text and read-only data symbols (`nm`'s `t T r R`,
/// but not the vector table `__INTERRUPTS`) by row.
pub fn code_table(symbols: &[Symbol]) -> Vec<String> {
    let mut by = [0u64; CODE_ROWS.len() + 1];
    for s in symbols
        .iter()
        .filter(|s| (s.code || s.rodata) && s.name != "__INTERRUPTS")
    {
        let row = CODE_ROWS
            .iter()
            .position(|(_, keys)| keys.iter().any(|k| s.name.contains(k)));
        by[row.unwrap_or(CODE_ROWS.len())] += s.size;
    }
    let names = CODE_ROWS.iter().map(|r| r.0).chain([OTHER]);
    let rows = names
        .zip(by)
        .map(|(name, n)| format!("| {name} | {} |", commas(n)));
    ["| code | bytes |".to_string(), "|---|---:|".to_string()]
        .into_iter()
        .chain(rows)
        .collect()
}

/// The steps a cost example logged, in order: each `INFO  STEP: ok true` line's step and the
/// numbers after it (an update step's `, flash E erases W writes B bytes`).
pub fn steps(log: &str) -> Vec<(&str, Vec<u64>)> {
    let ok = (log.lines()).filter_map(|l| l.strip_prefix("INFO  ")?.split_once(": ok true"));
    let numbers = |rest: &str| rest.split(' ').filter_map(|w| w.parse().ok()).collect();
    ok.map(|(step, rest)| (step, numbers(rest))).collect()
}

/// The overhead line from `nrtucode inspect --json`.
pub fn overhead(json: &str) -> Result<String, String> {
    let d: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("nrtucode inspect --json: {e}"))?;
    let toc = d["toc"]
        .as_array()
        .filter(|t| !t.is_empty())
        .ok_or("inspect --json has no toc")?;
    let number = |v: &serde_json::Value| {
        v.as_u64()
            .ok_or("inspect --json: a length or offset is not a number")
    };
    let (blobs_off, total) = (
        number(&toc[0]["offset"])?,
        number(&d["header"]["total_len"])?,
    );
    let stored = toc
        .iter()
        .map(|t| number(&t["stored_len"]))
        .sum::<Result<u64, _>>()?;
    let padding = total
        .checked_sub(blobs_off + stored)
        .ok_or("the blobs end past the partition's length")?;
    Ok(format!(
        "Partition overhead (fixtures, full class, --compress deflate): header, tables, TOC and signature {} B \
         (to the first blob, padding included); blob padding {} B; {} blobs, {} B stored, {} B in all.",
        commas(blobs_off),
        commas(padding),
        toc.len(),
        commas(stored),
        commas(total)
    ))
}

/// `cargo xtask cost --what partition`: the measurement, the flash tables and the overhead.
fn partition(meta: &Metadata, _: &bool) -> Result<(), String> {
    let (nrtucode, decoder) = &device::arm_tools()?;
    let work = meta.scratch("partition-cost")?;
    let part = work.join("fixtures.part");
    let key = meta.root.join("keys/test-ed25519.pem");
    let args = "--fixtures full --security-counter 1 --compress deflate";
    qemu::pack(nrtucode, &key, args, &part)?;
    let template = Separate::template(meta);
    let env = [("NRTUCODE_PARTITION_KEY", OsStr::new("test"))];
    let build = |args: &str, name: &str| {
        template.build(&args.split_whitespace().collect::<Vec<_>>(), &env, name)
    };

    let elf = build(
        "--no-default-features --features qemu,deflate --example partition_cost",
        "partition_cost",
    )?;
    let (status, log, counts) = counted(&elf, &[&part], (&work.join("log"), Some(decoder)), 600)?;
    let steps = steps(&log);
    if status != 0 || steps.len() != 5 {
        eprintln!("{log}");
        return Err(format!("a step failed (exit {status})"));
    }
    println!("{HEADER}, sha2 compact; instructions executed, once each\n");
    println!("| step | instructions |\n|---|---:|");
    for ((step, _), n) in steps.iter().zip(&counts) {
        println!("| {step} | {} |", commas(*n));
    }
    for sizes in log.lines().filter_map(|l| l.strip_prefix("INFO  sizes: ")) {
        println!("({sizes})");
    }
    println!(
        "\n| the template's board build (run-time resolution, LTO) | internal flash |\n|---|---:|"
    );
    // The `partition` build's code table, printed after the flash table.
    let mut code = Vec::new();
    let partition = "--no-default-features --features partition";
    for (args, row) in [
        (
            "",
            "embedded blobs (default features; the blobs go to XFLASH, not counted)",
        ),
        (
            partition,
            "`--no-default-features --features partition` (copy-check)",
        ),
        (
            "--no-default-features --features partition,deflate",
            "`--no-default-features --features partition,deflate` (decode-check)",
        ),
    ] {
        let board = elf::read(&build(args, "nrtucode-bare-metal")?)?;
        println!("| {row} | {} B |", board.loaded_below(RAM));
        if args == partition {
            code = code_table(&board.symbols);
        }
    }
    println!(
        "\nCode and read-only data by what it does, in the `partition` board build (named text and"
    );
    println!(
        "rodata symbols; LTO inlines across crates, so each row holds what was inlined into its functions):\n"
    );
    for line in code {
        println!("{line}");
    }
    let mut inspect = build::cmd(build::path_str(nrtucode)?, "inspect --json");
    let json = build::stdout(inspect.arg(&part))?;
    println!("\n{}", overhead(&json)?);
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// The lookups of `examples/lookup_cost.rs`: (row, calls per pass).
const LOOKUP_MIXES: [(&str, u64); 2] = [
    ("`get_memory_image`, explicit flavor, `NoEnv`", 16),
    ("`get_hwdecode_table`", 8),
];

/// The rows of `cost --what lookup`: per mix, the instructions per call of the embedded build
/// and of the partition build (each pass, then net of its loop), and their ratio. `embedded`
/// and `partition` are each build's four counts: the two mixes, then their two loops alone.
pub fn lookup_rows(embedded: &[u64], partition: &[u64]) -> Result<Vec<String>, String> {
    if embedded.len() != 4 || partition.len() != 4 {
        let (e, p) = (embedded.len(), partition.len());
        return Err(format!("want 4 counts from each build, have {e} and {p}"));
    }
    let rows = LOOKUP_MIXES.iter().enumerate().map(|(i, (name, calls))| {
        let per = |n: &[u64]| n[i] as f64 / *calls as f64;
        let net = |n: &[u64]| n[i].saturating_sub(n[i + 2]) as f64 / *calls as f64;
        let (e, p, e_net, p_net) = (per(embedded), per(partition), net(embedded), net(partition));
        let (ratio, net_ratio) = (p / e, p_net / e_net);
        format!(
            "| {name} | {e:.1} | {p:.1} | {ratio:.2}× | {e_net:.1} | {p_net:.1} | {net_ratio:.2}× |"
        )
    });
    Ok(rows.collect())
}

/// The `lookups: …; codes and lengths X Y; …` part of a lookup_cost log that both builds must
/// share.
fn lookup_answers(log: &str) -> Option<&str> {
    let line = log
        .lines()
        .find_map(|l| l.strip_prefix("INFO  lookups: "))?;
    Some(line.split_once("; all ").map_or(line, |(same, _)| same))
}

/// `cargo xtask cost --what lookup`: the embedded build and the partition build of
/// `examples/lookup_cost.rs`, counted over the same mixes.
fn lookup(meta: &Metadata, _: &bool) -> Result<(), String> {
    let (nrtucode, decoder) = &device::arm_tools()?;
    let work = meta.scratch("lookup-cost")?;
    let part = work.join("fixtures.part");
    let key = meta.root.join("keys/test-ed25519.pem");
    qemu::pack(
        nrtucode,
        &key,
        "--fixtures full --security-counter 1",
        &part,
    )?;
    let template = Separate::template(meta);
    let mut runs = Vec::new();
    let flash: [&[&Path]; 2] = [&[], &[part.as_path()]];
    for ((lane, args), flash) in [
        ("embedded", "--features qemu --example lookup_cost"),
        (
            "partition",
            "--no-default-features --features qemu,partition --example lookup_cost",
        ),
    ]
    .into_iter()
    .zip(flash)
    {
        let elf = template.build(
            &args.split(' ').collect::<Vec<_>>(),
            &[("NRTUCODE_PARTITION_KEY", OsStr::new("test"))],
            "lookup_cost",
        )?;
        let log_file = work.join(format!("{lane}.log"));
        let (status, log, counts) = counted(&elf, flash, (&log_file, Some(decoder)), 300)?;
        let answers = lookup_answers(&log).map(str::to_owned);
        if status != 0 || counts.len() != 4 || answers.is_none() {
            eprintln!("{log}");
            return Err(format!(
                "{lane}: the lookups did not run (exit {status}, {} counts)",
                counts.len()
            ));
        }
        runs.push((answers, counts));
    }
    if runs[0].0 != runs[1].0 {
        return Err(format!(
            "the builds answered differently: embedded {:?}, partition {:?}",
            runs[0].0, runs[1].0
        ));
    }
    println!("{HEADER}; instructions executed per call (the same codes and lengths from both)\n");
    println!(
        "| lookup | embedded | partition | partition ÷ embedded | embedded, net of the loop | partition, net | ÷ (net) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for row in lookup_rows(&runs[0].1, &runs[1].1)? {
        println!("{row}");
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// The crates whose flash is counted, and the example's non-inlined wrapper around each (which
/// holds whatever of the crate the compiler inlined there).
const INFLATERS: [(&str, &str); 2] = [
    ("miniz_oxide", "inflate_miniz"),
    ("zune_inflate", "inflate_zune"),
];

/// `(crate, code bytes, named data bytes)` of the inflaters: each crate's symbols (its name the
/// first of a symbol's path) and its wrapper in the example (the last); code is `nm`'s `t`/`T`,
/// data every other symbol.
pub fn inflaters(symbols: &[Symbol]) -> Vec<(&'static str, u64, u64)> {
    let mut sizes: Vec<(&'static str, u64, u64)> =
        INFLATERS.iter().map(|(k, _)| (*k, 0, 0)).collect();
    for s in symbols {
        let first = s.name.trim_start_matches(['_', '<']).split("::").next();
        let last = s.name.rsplit("::").next();
        let krate = (INFLATERS
            .iter()
            .position(|(_, wrapper)| Some(*wrapper) == last))
        .or_else(|| INFLATERS.iter().position(|(k, _)| Some(*k) == first));
        if let Some(i) = krate {
            if s.code {
                sizes[i].1 += s.size
            } else {
                sizes[i].2 += s.size
            }
        }
    }
    sizes.retain(|s| s.1 + s.2 > 0);
    sizes
}

/// `.text` and `.rodata` of the no_std consumer built with `features`.
fn consumer(meta: &Metadata, features: &str) -> Result<(u64, u64), String> {
    let args = ["--no-default-features", "--features", features];
    let elf =
        Separate::new(meta, "tests/no_std", "nopanic-size").build(&args, &[], "nopanic-check")?;
    let read = elf::read(&elf)?;
    let size = |name: &str| read.section(name).map(|s| s.size);
    size(".text")
        .zip(size(".rodata"))
        .ok_or_else(|| format!("{} has no .text or .rodata", elf.display()))
}

/// `cargo xtask cost --what deflate`: the measurement (unless `flash_only`) and the flash lines.
fn deflate(meta: &Metadata, flash_only: &bool) -> Result<(), String> {
    let work = meta.scratch("deflate-cost")?;
    let inputs = work.join("in");
    let ratios = build::stdout(
        build::cargo("run --quiet -p nrtucode-deflate --example cost_inputs --").arg(&inputs),
    )?;
    println!("{HEADER}; instructions executed\n\nInputs (the packer's choice):\n");
    for line in ratios.lines() {
        println!("    {line}");
    }
    println!(
        "\n| way | SHA-256 | instructions per output byte | 65,536 B | 231,077 B |\n|---|---|---:|---:|---:|"
    );
    let inputs_rs = inputs.join("inputs.rs");
    let mut compact_elf = PathBuf::new();
    for (backend, template, mut env) in device::sha2_backends(meta) {
        if *flash_only && backend == "unrolled" {
            break;
        }
        env.push(("NRTUCODE_DEFLATE_COST_INPUTS", inputs_rs.as_os_str()));
        let elf = template.build(
            &[
                "--features",
                "qemu,deflate-cost",
                "--example",
                "deflate_cost",
            ],
            &env,
            "deflate_cost",
        )?;
        if backend == "compact" {
            compact_elf = elf.clone(); // the unrolled build has a target directory of its own
        }
        if *flash_only {
            continue;
        }
        let (status, _, counts) =
            counted(&elf, &[], (&work.join(format!("{backend}.out")), None), 900)?;
        if status != 0 {
            return Err(format!(
                "{backend}: a way failed or faulted (exit {status})"
            ));
        }
        for row in per_byte_rows(backend, &DEFLATE_WAYS, (65_536, 231_077), &counts)? {
            println!("{row}");
        }
    }
    println!(
        "\nInflaters' flash in deflate_cost (named symbols; tables without a symbol are not counted):"
    );
    for (krate, code, data) in inflaters(&elf::read(&compact_elf)?.symbols) {
        println!(
            "- {krate} (with its wrapper in the example): {} B of code, {} B of named read-only data",
            commas(code),
            commas(data)
        );
    }
    // What feature `deflate` adds to a binary: the no_std consumer with its digest entry
    // points, without and with its deflate ones (decode_checked and decode_checked_with, each
    // inlined into check_deflate): .text and .rodata (miniz_oxide's tables have no symbol).
    let (text0, rodata0) = consumer(meta, "panic-loop,digest")?;
    let (text1, rodata1) = consumer(meta, "panic-loop,digest,deflate")?;
    println!(
        "\nFeature deflate in the no_std consumer (two decode entry points): +{} B of code, +{} B of read-only data.",
        text1 as i64 - text0 as i64,
        rodata1 as i64 - rodata0 as i64
    );
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// `cargo xtask cost --what update` (the figures are in docs/update.md): the steps of
/// `examples/update_cost.rs` on the NOR flash the template emulates over PSRAM, front fixtures
/// partitions with counter 1 in slot A, 2 in the download area, 3 (`--compress deflate`) in a
/// second one.
/// The steps run hundreds of millions of instructions (each full check hashes 2.9 MB).
fn update(meta: &Metadata, _: &bool) -> Result<(), String> {
    let (nrtucode, decoder) = &device::arm_tools()?;
    let work = meta.scratch("update-cost")?;
    let part = |row| qemu::pack_front(meta, nrtucode, &work, row);
    let (p1, p2) = (part(("p1.part", 1, ""))?, part(("p2.part", 2, ""))?);
    let p3 = part(("p3.part", 3, "--compress deflate"))?;
    // The update package from p3 to p4 (stored): the blobs deflate changed are carried.
    let p4 = part(("p4.part", 4, ""))?;
    let pkg = work.join("p3-p4.pkg");
    let mut command = Command::new(nrtucode);
    command
        .args(["package", "--base"])
        .arg(&p3)
        .arg("--new")
        .arg(&p4)
        .arg("--public-key")
        .arg(meta.root.join("keys/test-ed25519.pub.pem"))
        .arg("-o")
        .arg(&pkg);
    let made = command
        .output()
        .map_err(|e| format!("nrtucode package: {e}"))?;
    if !made.status.success() {
        return Err(format!(
            "nrtucode package: {}",
            String::from_utf8_lossy(&made.stderr)
        ));
    }
    println!("{}", String::from_utf8_lossy(&made.stdout).trim());
    let len = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| m.len())
            .map_err(|e| e.to_string())
    };
    let sizes = [len(&p2)?, len(&p3)?, len(&p4)?];
    for (features, how) in [
        ("update", "the slots read through their mapping"),
        (
            "update,unmapped",
            "the slots read through `read` alone (`Unmapped`, as a SPI NOR without a mapping)",
        ),
    ] {
        println!();
        println!("### {how} (`--features {features}`)");
        println!();
        update_table(
            meta,
            (&work, decoder),
            features,
            &[&p1, &p2, &p3, &pkg],
            sizes,
        )?;
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// One run of `examples/update_cost.rs` built with `features` over `inputs` (slot A's partition
/// and the three download areas' bytes; `sizes`: the stored, deflate and new partitions'
/// lengths): its table of instructions and flash operations per step.
fn update_table(
    meta: &Metadata,
    (work, decoder): (&Path, &Path),
    features: &str,
    inputs: &[&Path],
    sizes: [u64; 3],
) -> Result<(), String> {
    let args = format!("--no-default-features --features {features} --example update_cost");
    let elf = Separate::template(meta).build(
        &args.split(' ').collect::<Vec<_>>(),
        &[("NRTUCODE_PARTITION_KEY", OsStr::new("test"))],
        "update_cost",
    )?;
    let [stored, deflate, delta_new] = sizes;
    println!("(QEMU logs every block executed, about 50 million: a few minutes)");
    let log = work.join("log");
    let (status, log, counts) = counted(&elf, inputs, (&log, Some(decoder)), 1800)?;
    // Each step's (erases, writes, bytes written).
    let rows: Vec<(&str, [u64; 3])> = (steps(&log).into_iter())
        .filter_map(|(step, n)| Some((step, n.try_into().ok()?)))
        .collect();
    if status != 0 || rows.len() != 16 || counts.len() != 16 {
        eprintln!("{log}");
        return Err(format!(
            "a step failed (exit {status}, {} counts)",
            counts.len()
        ));
    }
    println!(
        "{HEADER}, sha2 compact; instructions executed, once each; the emulated NOR flash (4 KiB erase, 4 B write)"
    );
    println!();
    println!("| step | instructions | per byte of the update | erases | writes | bytes written |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (i, ((step, [e, w, b]), n)) in rows.iter().zip(&counts).enumerate() {
        let per_byte = match i {
            3 | 4 | 9 => format!("{:.2}", *n as f64 / stored as f64),
            10 | 11 => format!("{:.2}", *n as f64 / deflate as f64),
            14 | 15 => format!("{:.2}", *n as f64 / delta_new as f64),
            _ => String::new(),
        };
        println!(
            "| {step} | {} | {per_byte} | {e} | {w} | {} |",
            commas(*n),
            commas(*b)
        );
    }
    if let Some(sizes) = log.lines().find_map(|l| l.strip_prefix("INFO  sizes: ")) {
        println!("({sizes})");
    }
    let written = |a: usize, b: usize| rows[a].1[2] + rows[b].1[2];
    println!();
    println!(
        "Bytes written per byte installed: {:.5} stored, {:.5} deflate (the stage's last write padded to the word, the candidate's record); bytes erased per byte installed: {:.4} and {:.4}; a confirm: {} erases, {} writes.",
        written(3, 4) as f64 / stored as f64,
        written(10, 11) as f64 / deflate as f64,
        (rows[3].1[0] * 4096) as f64 / stored as f64,
        (rows[10].1[0] * 4096) as f64 / deflate as f64,
        rows[6].1[0],
        rows[6].1[1]
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(name: &str, size: u64, code: bool, rodata: bool) -> Symbol {
        Symbol {
            name: name.into(),
            addr: 0,
            size,
            function: code,
            object: !code,
            section: None,
            code,
            rodata,
        }
    }

    #[test]
    fn the_rows_are_per_byte_and_the_non_sha2_ways_print_once() {
        let counts = [
            11209, 705607, 718153, 482755, 86485, 5434705, 5531703, 3714184,
        ];
        let rows = per_byte_rows("compact", &DEVICE_WAYS, (10_496, 81_344), &counts).unwrap();
        assert_eq!(
            rows,
            [
                "| plain copy (copy_from_slice) | none | 1.06 | 11,209 | 86,485 |",
                "| check_blob (hash in place, no copy) | sha2 compact | 66.75 | 705,607 | 5,434,705 |",
                "| copy_blob_checked | sha2 compact | 67.94 | 718,153 | 5,531,703 |",
                "| copy_blob_checked_with hmac-sha256 | hmac-sha256 1.1 | 45.61 | 482,755 | 3,714,184 |",
            ]
        );
        assert_eq!(
            per_byte_rows("unrolled", &DEVICE_WAYS, (10_496, 81_344), &counts)
                .unwrap()
                .len(),
            2
        );
        assert!(per_byte_rows("compact", &DEVICE_WAYS, (1, 2), &counts[..7]).is_err());
        let counts = [1, 2, 3, 4, 5, 165_542, 2, 3, 4, 5];
        let rows = per_byte_rows("compact", &DEFLATE_WAYS, (65_536, 231_077), &counts).unwrap();
        assert_eq!(
            rows[0],
            format!("| {} | none | 1.00 | 1 | 165,542 |", DEFLATE_WAYS[0].1)
        );
        assert_eq!(
            per_byte_rows("unrolled", &DEFLATE_WAYS, (65_536, 231_077), &counts)
                .unwrap()
                .len(),
            2
        );
    }

    #[test]
    fn a_lookup_row_is_per_call_and_net_of_its_loop() {
        let rows = lookup_rows(&[800, 240, 160, 80], &[1040, 320, 160, 80]).unwrap();
        assert_eq!(
            rows,
            [
                format!(
                    "| {} | 50.0 | 65.0 | 1.30× | 40.0 | 55.0 | 1.38× |",
                    LOOKUP_MIXES[0].0
                ),
                format!(
                    "| {} | 30.0 | 40.0 | 1.33× | 20.0 | 30.0 | 1.50× |",
                    LOOKUP_MIXES[1].0
                ),
            ]
        );
        assert!(lookup_rows(&[1, 2, 3], &[1, 2, 3, 4]).is_err());
        let log = "INFO  lookups: 16 image, 8 hwdecode; codes and lengths 0x1 0x2; all 0x3 0x4\n";
        assert_eq!(
            lookup_answers(log),
            Some("16 image, 8 hwdecode; codes and lengths 0x1 0x2")
        );
        assert_eq!(lookup_answers("INFO  other\n"), None);
    }

    #[test]
    fn code_goes_to_the_first_row_that_names_it() {
        let table = code_table(&[
            sym("ed25519_compact::ge::GeP3::from_bytes", 100, true, false),
            sym("nrtucode::partition::parse::header", 10, true, false),
            sym("nrtucode::partition::Partition::verify", 20, true, false),
            sym(
                "<sha2::core_api::Sha256VarCore as x>::compress",
                5,
                true,
                false,
            ),
            sym("ed25519_compact::BASE_TABLE", 1000, false, true),
            sym("memcpy", 7, true, false),
            sym("__INTERRUPTS", 64, false, true),
            sym("DEVICE_MEMORY", 4096, false, false),
        ]);
        assert_eq!(table[2], format!("| {} | 1,100 |", CODE_ROWS[0].0));
        assert_eq!(table[3], format!("| {} | 10 |", CODE_ROWS[1].0));
        assert_eq!(table[4], format!("| {} | 20 |", CODE_ROWS[2].0));
        assert_eq!(table[5], format!("| {} | 5 |", CODE_ROWS[3].0));
        assert_eq!(table[8], format!("| {OTHER} | 7 |"));
    }

    #[test]
    fn the_steps_and_the_overhead_are_read_from_the_log_and_inspect() {
        let log = "WARN  partition key: test\nINFO  `verify`: ok true\nINFO  sizes: x\n\
                   INFO  `confirm(B)`: ok true, flash 0 erases 2 writes 32 bytes\nINFO  x: ok false\n";
        assert_eq!(
            steps(log),
            [("`verify`", vec![]), ("`confirm(B)`", vec![0, 2, 32])]
        );
        let json = r#"{"header": {"total_len": 1000}, "toc": [{"offset": 100, "stored_len": 800}, {"offset": 900, "stored_len": 90}]}"#;
        assert!(overhead(json).unwrap().contains(
            "signature 100 B (to the first blob, padding included); blob padding 10 B; 2 blobs, 890 B stored, 1,000 B in all."
        ));
        assert!(
            overhead(r#"{"header": {"total_len": 10}, "toc": [{"offset": 100, "stored_len": 8}]}"#)
                .is_err()
        );
    }

    #[test]
    fn the_inflaters_take_their_crates_and_wrappers() {
        let found = inflaters(&[
            sym("miniz_oxide::inflate::core::decompress", 100, true, false),
            sym("deflate_cost::inflate_miniz", 10, true, false),
            sym("<miniz_oxide::inflate::core::X as Y>::f", 1, true, false),
            sym("miniz_oxide::inflate::core::TABLE", 50, false, true),
            sym(
                "zune_inflate::decoder::DeflateDecoder::decode",
                200,
                true,
                false,
            ),
            sym("deflate_cost::inflate_zune", 20, true, false),
            sym("nrtucode::deflate::x", 1000, true, false),
        ]);
        assert_eq!(found, [("miniz_oxide", 111, 50), ("zune_inflate", 220, 0)]);
    }
}
