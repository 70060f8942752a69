//! `cargo xtask cost --what device`: what verification costs on the Cortex-M, in instructions. Boots
//! examples/bare-metal's `examples/verify_cost.rs` under QEMU (mps2-an386, Cortex-M4) with one
//! guest instruction per translation block and a log line per block executed, and counts the
//! instructions between its markers `cost_begin` and `cost_end` ([`device::count_between_markers`]).
//! Each way of loading runs on two images (10,496 B and 81,344 B): (difference in instructions) /
//! (difference in bytes) is the cost per byte, free of the fixed cost of a call. QEMU does not
//! model cycles (no pipeline, no wait states; the DWT cycle counter is not emulated faithfully),
//! so these are instructions executed, not cycles. Built twice: with sha2's compact software
//! backend (the template's `.cargo/config.toml`) and with its default, unrolled one. Prints the
//! markdown table examples/bare-metal/README.md describes, and the internal flash of the
//! template's board build with each backend.

use std::time::Duration;

use crate::build;
use crate::device::{self, commas};
use crate::elf;
use crate::metadata::Metadata;

/// Where the board's external flash starts: internal flash is what loads below it.
const XFLASH: u64 = 0x9000_0000;

/// `(region, way, bytes)` of a `REGION WAY, N bytes: ok true` line.
pub fn run_line(line: &str) -> Option<(&str, &str, u64)> {
    let (left, _) = line.split_once(" bytes: ok true")?;
    let (left, size) = left.rsplit_once(", ")?;
    let mut start = 0;
    for token in left.split(' ') {
        if token.len() > 3
            && token.ends_with("RAM")
            && token.bytes().all(|b| b.is_ascii_uppercase())
        {
            let way = left.get(start + token.len() + 1..)?;
            return Some((token, way, size.parse().ok()?));
        }
        start += token.len() + 1;
    }
    None
}

/// The table rows of one backend from the decoded log and the counts (one per run, in order).
pub fn rows(backend: &str, log: &str, counts: &[u64]) -> Result<Vec<String>, String> {
    let runs: Vec<(&str, &str, u64)> = log
        .lines()
        .filter(|l| l.contains("ok true"))
        .map(|l| run_line(l).ok_or_else(|| format!("cannot read the run line {l:?}")))
        .collect::<Result<_, _>>()?;
    if runs.len() != 8 || counts.len() != 8 {
        return Err(format!(
            "{backend}: want 8 runs and 8 counts, have {} and {}",
            runs.len(),
            counts.len()
        ));
    }
    let mut by_way: Vec<(&str, Vec<(u64, u64)>)> = Vec::new();
    for (&(_, way, size), &n) in runs.iter().zip(counts) {
        match by_way.iter_mut().find(|(w, _)| *w == way) {
            Some((_, v)) => v.push((size, n)),
            None => by_way.push((way, vec![(size, n)])),
        }
    }
    let mut out = Vec::new();
    for (way, sizes) in by_way {
        let [(small, n_small), (big, n_big)] = sizes[..] else {
            return Err(format!(
                "{backend}: way {way} ran {} times, want 2",
                sizes.len()
            ));
        };
        let hashes_with_sha2 = way == "verify_blob" || way == "copy_verified";
        if !hashes_with_sha2 && backend == "unrolled" {
            continue; // sha2's backend does not change these
        }
        let label = match way {
            "copy" => "plain copy (copy_from_slice)",
            "verify_blob" => "verify_blob (hash in place, no copy)",
            other => other,
        };
        let sha = if hashes_with_sha2 {
            format!("sha2 {backend}")
        } else if way.contains("hmac") {
            "hmac-sha256 1.1".to_string()
        } else {
            "none".to_string()
        };
        let per_byte = (n_big as f64 - n_small as f64) / (big as f64 - small as f64);
        out.push(format!(
            "| {label} | {sha} | {per_byte:.2} | {} | {} |",
            commas(n_small),
            commas(n_big)
        ));
    }
    Ok(out)
}

/// The two backends' tables, then the flash line.
pub fn run(meta: &Metadata) -> Result<(), String> {
    let counting = device::counting_arm()?;
    let decoder = device::host_tool("nrtucode-defmt", "nrtucode-defmt")?;
    let work = build::scratch(meta, "device-cost")?;
    println!(
        "Cortex-M4 (QEMU mps2-an386), thumbv7em-none-eabihf, opt-level s, LTO; instructions executed"
    );
    println!();
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
        flash.push(elf::loaded_below(&board, XFLASH)?);
        let run = device::boot(
            device::arm(&elf).args(&counting),
            Duration::from_secs(600),
            true,
        )?;
        let log = device::decode(
            &decoder,
            &elf,
            &run.stdout,
            &work.join(format!("{backend}.log")),
        )?;
        if run.status != 0 || device::count(&log, "ok true") != 8 {
            eprintln!("{log}");
            return Err(format!("{backend}: a way failed (exit {})", run.status));
        }
        for row in rows(backend, &log, &run.counts)? {
            println!("{row}");
        }
    }
    println!();
    println!(
        "The template's board build (run-time resolution, LTO) holds {} B of internal flash with sha2 compact, {} B with sha2 unrolled.",
        flash[0], flash[1]
    );
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rows_come_from_the_run_lines_and_the_counts() {
        assert_eq!(
            run_line("INFO  DRAM copy_verified_with hmac-sha256, 10496 bytes: ok true"),
            Some(("DRAM", "copy_verified_with hmac-sha256", 10496))
        );
        assert_eq!(run_line("INFO  DRAM copy, 10496 bytes: ok false"), None);
        let mut log = String::new();
        for (region, size) in [("DRAM", 10496), ("IRAM", 81344)] {
            for way in [
                "copy",
                "verify_blob",
                "copy_verified",
                "copy_verified_with hmac-sha256",
            ] {
                log += &format!("INFO  {region} {way}, {size} bytes: ok true\n");
            }
        }
        let counts = [
            11209, 705607, 718153, 482755, 86485, 5434705, 5531703, 3714184,
        ];
        let rows_compact = rows("compact", &log, &counts).unwrap();
        assert_eq!(
            rows_compact,
            [
                "| plain copy (copy_from_slice) | none | 1.06 | 11,209 | 86,485 |",
                "| verify_blob (hash in place, no copy) | sha2 compact | 66.75 | 705,607 | 5,434,705 |",
                "| copy_verified | sha2 compact | 67.94 | 718,153 | 5,531,703 |",
                "| copy_verified_with hmac-sha256 | hmac-sha256 1.1 | 45.61 | 482,755 | 3,714,184 |",
            ]
        );
        assert_eq!(rows("unrolled", &log, &counts).unwrap().len(), 2);
        assert!(rows("compact", &log, &counts[..7]).is_err());
    }
}
