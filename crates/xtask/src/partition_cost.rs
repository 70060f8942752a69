//! `cargo xtask cost --what partition`: what reading a signed partition costs on the Cortex-M
//! (informative; docs/performance.md and examples/bare-metal/README.md describe it).
//! Instructions, not cycles, counted as `cargo xtask cost --what device` counts them:
//! examples/bare-metal's `examples/partition_cost.rs` under QEMU mps2-an386 with one guest
//! instruction per translation block and a log line per block executed, the lines between its
//! markers `cost_begin` and `cost_end`; the fixtures partition (`nrtucode pack --fixtures full
//! --compress deflate`, the test key, counter 1) loaded at 0x21000000 with `-device loader`.
//! Then the flash of the template's board build (loaded bytes below RAM: code, tables, rodata)
//! embedded and with `partition` (with and without `deflate`), the code and read-only data of the
//! partition build by what it does (its named symbols, read with `object`; LTO inlines across
//! crates, so these are lower bounds for each crate), and the partition's overhead (header,
//! tables, table of contents, signature, padding) from `nrtucode inspect --json`.

use std::ffi::OsStr;
use std::process::Command;
use std::time::Duration;

use crate::build;
use crate::device::{self, PSRAM, Separate, commas};
use crate::elf::{self, Symbol};
use crate::metadata::Metadata;

/// Where mps2-an386's RAM starts: internal flash is what loads below it.
const RAM: u64 = 0x2000_0000;

/// The rows of the code table: a row and the substrings of the demangled names it takes (first
/// match wins).
const ROWS: [(&str, &[&str]); 6] = [
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
    let mut by = vec![0u64; ROWS.len() + 1];
    for s in symbols {
        if !matches!(s.kind, 't' | 'T' | 'r' | 'R') || s.name == "__INTERRUPTS" || s.size == 0 {
            continue;
        }
        let row = ROWS
            .iter()
            .position(|(_, keys)| keys.iter().any(|k| s.name.contains(k)))
            .unwrap_or(ROWS.len());
        by[row] += s.size;
    }
    let mut out = vec!["| code | bytes |".to_string(), "|---|---:|".to_string()];
    for (i, name) in ROWS.iter().map(|r| r.0).chain([OTHER]).enumerate() {
        out.push(format!("| {name} | {} |", commas(by[i])));
    }
    out
}

/// The steps table's rows: the `INFO  STEP: ok true` lines with the counts, in order.
pub fn step_rows(log: &str, counts: &[u64]) -> Vec<String> {
    log.lines()
        .filter_map(|l| l.strip_prefix("INFO  ")?.strip_suffix(": ok true"))
        .zip(counts)
        .map(|(step, n)| format!("| {step} | {} |", commas(*n)))
        .collect()
}

/// The overhead line from `nrtucode inspect --json`.
pub fn overhead(json: &str) -> Result<String, String> {
    let d: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("nrtucode inspect --json: {e}"))?;
    let toc = d["toc"].as_array().ok_or("inspect --json has no toc")?;
    let number = |v: &serde_json::Value, what: &str| {
        v.as_u64()
            .ok_or_else(|| format!("inspect --json: no number {what}"))
    };
    let blobs_off = number(
        &toc.first().ok_or("an empty toc")?["offset"],
        "toc[0].offset",
    )?;
    let total = number(&d["header"]["total_len"], "header.total_len")?;
    let mut stored = 0;
    for t in toc {
        stored += number(&t["stored_len"], "stored_len")?;
    }
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

/// The measurement, the flash tables and the overhead.
pub fn run(meta: &Metadata) -> Result<(), String> {
    let counting = device::counting_arm()?;
    let tools = device::host_tools(
        &["nrtucode-cli", "nrtucode-defmt"],
        &["nrtucode", "nrtucode-defmt"],
    )?;
    let (nrtucode, decoder) = (&tools[0], &tools[1]);
    let work = build::scratch(meta, "partition-cost")?;
    let part = work.join("fixtures.part");
    crate::status(
        Command::new(nrtucode)
            .args([
                "pack",
                "--fixtures",
                "full",
                "--key",
                "keys/test-ed25519.pem",
            ])
            .args(["--security-counter", "1", "--compress", "deflate", "-o"])
            .arg(&part)
            .stdout(std::process::Stdio::null()),
    )?;
    let template = Separate::template(meta);
    let env = [("NRTUCODE_PARTITION_KEY", OsStr::new(""))];
    let build = |args: &[&str], name: &str| template.build(args, &env, name);

    let elf = build(
        &[
            "--no-default-features",
            "--features",
            "qemu,deflate",
            "--example",
            "partition_cost",
        ],
        "partition_cost",
    )?;
    let mut qemu = device::arm(&elf);
    qemu.args(&counting);
    device::loader(&mut qemu, &part, PSRAM)?;
    let run = device::boot(&mut qemu, Duration::from_secs(600), true)?;
    let log = device::decode(decoder, &elf, &run.stdout, &work.join("log"))?;
    if run.status != 0 || device::count(&log, ": ok true") != 5 {
        eprintln!("{log}");
        return Err(format!("a step failed (exit {})", run.status));
    }
    println!(
        "Cortex-M4 (QEMU mps2-an386), thumbv7em-none-eabihf, opt-level s, LTO, sha2 compact; instructions executed, once each"
    );
    println!();
    println!("| step | instructions |");
    println!("|---|---:|");
    for row in step_rows(&log, &run.counts) {
        println!("{row}");
    }
    for line in log.lines() {
        if let Some(sizes) = line.strip_prefix("INFO  sizes: ") {
            println!("({sizes})");
        }
    }
    println!();

    println!("| the template's board build (run-time resolution, LTO) | internal flash |");
    println!("|---|---:|");
    let board = build(&[], "nrtucode-bare-metal")?;
    println!(
        "| embedded blobs (default features; the blobs go to XFLASH, not counted) | {} B |",
        elf::loaded_below(&board, RAM)?
    );
    let board = build(
        &["--no-default-features", "--features", "partition"],
        "nrtucode-bare-metal",
    )?;
    println!(
        "| `--no-default-features --features partition` (copy-verify) | {} B |",
        elf::loaded_below(&board, RAM)?
    );
    let partition_elf = work.join("partition.elf");
    crate::files::copy(&board, &partition_elf)?;
    let board = build(
        &["--no-default-features", "--features", "partition,deflate"],
        "nrtucode-bare-metal",
    )?;
    println!(
        "| `--no-default-features --features partition,deflate` (decode-verify) | {} B |",
        elf::loaded_below(&board, RAM)?
    );
    println!();
    println!(
        "Code and read-only data by what it does, in the `partition` board build (named text and"
    );
    println!(
        "rodata symbols; LTO inlines across crates, so each row holds what was inlined into its functions):"
    );
    println!();
    for line in code_table(&elf::symbols(&partition_elf, false)?) {
        println!("{line}");
    }
    println!();
    let json = build::stdout(
        Command::new(nrtucode)
            .arg("inspect")
            .arg(&part)
            .arg("--json"),
    )?;
    println!("{}", overhead(&json)?);
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(name: &str, size: u64, kind: char) -> Symbol {
        Symbol {
            name: name.into(),
            addr: 0,
            size,
            object: kind == 'r',
            kind,
        }
    }

    #[test]
    fn code_goes_to_the_first_row_that_names_it() {
        let table = code_table(&[
            sym("ed25519_compact::ge::GeP3::from_bytes", 100, 't'),
            sym("nrtucode::partition::parse::header", 10, 'T'),
            sym("nrtucode::partition::Partition::verify", 20, 't'),
            sym("<sha2::core_api::Sha256VarCore as x>::compress", 5, 't'),
            sym("ed25519_compact::BASE_TABLE", 1000, 'r'),
            sym("memcpy", 7, 'T'),
            sym("__INTERRUPTS", 64, 'R'),
            sym("DEVICE_MEMORY", 4096, 'b'),
            sym("weak", 3, 'W'),
        ]);
        assert_eq!(table[2], format!("| {} | 1,100 |", ROWS[0].0));
        assert_eq!(table[3], format!("| {} | 10 |", ROWS[1].0));
        assert_eq!(table[4], format!("| {} | 20 |", ROWS[2].0));
        assert_eq!(table[5], format!("| {} | 5 |", ROWS[3].0));
        assert_eq!(table[8], format!("| {OTHER} | 7 |"));
    }

    #[test]
    fn the_steps_and_the_overhead_are_read_from_the_log_and_inspect() {
        let log = "WARN  partition key: test\nINFO  `verify`: ok true\nINFO  `parse`: ok true\nINFO  sizes: x\n";
        assert_eq!(
            step_rows(log, &[3_416_208, 42_681]),
            ["| `verify` | 3,416,208 |", "| `parse` | 42,681 |"]
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
}
