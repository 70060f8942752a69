//! `cargo xtask cost --what deflate [--flash-only]`: what decoding a compressed blob costs on the
//! Cortex-M, in instructions and flash. Writes the inputs of examples/bare-metal's
//! `examples/deflate_cost.rs` (the CYW43439 Wi-Fi firmware of the `cyw43-firmware` crate, a
//! dev-dependency of nrtucode-deflate, and its first 64 KiB; raw deflate at the packer's best
//! level, and stored) into a scratch directory (never committed), builds it (opt-level s, LTO,
//! sha2 compact as the template's `.cargo/config.toml` sets, then unrolled) and boots it under
//! QEMU (mps2-an386, Cortex-M4) with one guest instruction per translation block, counting the
//! instructions between its markers as `cargo xtask cost --what device` does. (difference in
//! instructions) / (difference in decoded bytes) is the cost per output byte, free of the fixed
//! cost of a call. QEMU does not model cycles: these are instructions executed. Then the flash
//! the inflaters take in that ELF (their crates' named symbols, read with `object`), the
//! functions that keep a panic path (the call graph `cargo xtask nopanic` reads), and what feature `deflate`
//! adds to the no_std consumer tests/no_std. `--flash-only`: build and print the flash lines, no
//! QEMU run.

use std::path::Path;
use std::time::Duration;

use crate::build;
use crate::device::{self, Separate, commas};
use crate::elf::{self, Symbol};
use crate::metadata::Metadata;

/// The ways `deflate_cost.rs` runs, in order, and the SHA-256 each uses (`None`: no hash).
const WAYS: [(&str, bool); 5] = [
    ("plain copy of the stored bytes (`copy_from_slice`)", false),
    ("`copy_checked` (stored blob: copy-verify)", true),
    (
        "`decode_verified` (deflate: inflate + SHA-256 of the output)",
        true,
    ),
    (
        "`decode_verified_with` a hasher that hashes nothing (miniz_oxide's inflater alone)",
        false,
    ),
    (
        "zune-inflate 0.2 `decode_deflate` into a heap `Vec`, then copied to the window (no hash)",
        false,
    ),
];

/// The decoded sizes of the two inputs: the first 64 KiB and the whole firmware.
const SMALL: u64 = 65536;
const BIG: u64 = 231_077;

/// The table rows of one backend from its counts (each way on the small input, then on the big).
pub fn rows(backend: &str, counts: &[u64]) -> Result<Vec<String>, String> {
    if counts.len() != 2 * WAYS.len() {
        return Err(format!(
            "{backend}: want {} counts, have {}",
            2 * WAYS.len(),
            counts.len()
        ));
    }
    let mut out = Vec::new();
    for (i, (way, sha2)) in WAYS.iter().enumerate() {
        if !sha2 && backend == "unrolled" {
            continue; // sha2's backend does not change these
        }
        let sha = if *sha2 {
            format!("sha2 {backend}")
        } else {
            "none".to_string()
        };
        let (n_small, n_big) = (counts[i], counts[WAYS.len() + i]);
        let per_byte = (n_big as f64 - n_small as f64) / (BIG - SMALL) as f64;
        out.push(format!(
            "| {way} | {sha} | {per_byte:.2} | {} | {} |",
            commas(n_small),
            commas(n_big)
        ));
    }
    Ok(out)
}

/// The crates whose flash is counted, and the example's non-inlined wrapper around each (which
/// holds whatever of the crate the compiler inlined there).
const INFLATERS: [(&str, &str); 2] = [
    ("miniz_oxide", "inflate_miniz"),
    ("zune_inflate", "inflate_zune"),
];

/// `(crate, code bytes, named data bytes)` of the inflaters: each crate's symbols (names as
/// LLVM's demangler shows them, legacy hashes kept), plus its wrapper in the example; code is
/// `nm`'s `t`/`T`, data every other letter.
pub fn inflaters(symbols: &[Symbol]) -> Vec<(&'static str, u64, u64)> {
    let mut sizes: Vec<(&'static str, u64, u64)> = Vec::new();
    for s in symbols {
        let name = s.name.as_str();
        let parts: Vec<&str> = name.split("::").collect();
        let last_but_one = if parts.len() > 1 {
            parts[parts.len() - 2]
        } else {
            name
        };
        let first = name
            .trim_start_matches(['_', '<'])
            .split("::")
            .next()
            .unwrap_or("");
        let krate = INFLATERS
            .iter()
            .find(|(_, wrapper)| *wrapper == last_but_one)
            .map(|(k, _)| *k)
            .or_else(|| INFLATERS.iter().find(|(k, _)| *k == first).map(|(k, _)| *k));
        let Some(krate) = krate else { continue };
        let entry = match sizes.iter().position(|e| e.0 == krate) {
            Some(i) => &mut sizes[i],
            None => {
                sizes.push((krate, 0, 0));
                let last = sizes.len() - 1;
                &mut sizes[last]
            }
        };
        if matches!(s.kind, 't' | 'T') {
            entry.1 += s.size;
        } else {
            entry.2 += s.size;
        }
    }
    sizes.sort();
    sizes
}

/// `.text` and `.rodata` of the no_std consumer built with `features`.
fn consumer(meta: &Metadata, features: &str) -> Result<(u64, u64), String> {
    let elf = Separate::new(meta, "tests/no_std", "nopanic-size").build(
        &["--no-default-features", "--features", features],
        &[],
        "nopanic-check",
    )?;
    let sections = elf::sections(&elf)?;
    let size = |name: &str| {
        sections
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.size)
            .ok_or_else(|| format!("{} has no {name}", elf.display()))
    };
    Ok((size(".text")?, size(".rodata")?))
}

/// The measurement (unless `flash_only`) and the flash lines.
pub fn run(meta: &Metadata, flash_only: bool) -> Result<(), String> {
    device::require("llvm-objdump", "llvm")?; // the call graph
    let counting = device::counting_arm()?;
    let work = build::scratch(meta, "deflate-cost")?;
    let inputs = work.join("in");
    let ratios = build::stdout(
        build::cargo()
            .args([
                "run",
                "--quiet",
                "-p",
                "nrtucode-deflate",
                "--example",
                "cost_inputs",
                "--",
            ])
            .arg(&inputs),
    )?;
    println!(
        "Cortex-M4 (QEMU mps2-an386), thumbv7em-none-eabihf, opt-level s, LTO; instructions executed"
    );
    println!();
    println!("Inputs (the packer's choice):");
    println!();
    for line in ratios.lines() {
        println!("    {line}");
    }
    println!();
    println!("| way | SHA-256 | instructions per output byte | 65,536 B | 231,077 B |");
    println!("|---|---|---:|---:|---:|");
    let inputs_rs = inputs.join("inputs.rs");
    let mut compact_elf = None;
    for (backend, template, mut env) in device::sha2_backends(meta) {
        if flash_only && backend == "unrolled" {
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
            // Copied: the next build may write the same path.
            let copy = work.join("deflate_cost.elf");
            crate::files::copy(&elf, &copy)?;
            compact_elf = Some(copy);
        }
        if flash_only {
            continue;
        }
        let mut qemu = device::arm(&elf);
        qemu.args(&counting);
        let run = device::boot(&mut qemu, Duration::from_secs(900), true)?;
        if run.status != 0 {
            return Err(format!(
                "{backend}: a way failed or faulted (exit {})",
                run.status
            ));
        }
        for row in rows(backend, &run.counts)? {
            println!("{row}");
        }
    }
    let elf = compact_elf.ok_or("no compact build")?;
    println!();
    println!(
        "Inflaters' flash in deflate_cost (named symbols; tables without a symbol are not counted):"
    );
    for (krate, code, data) in inflaters(&elf::symbols(&elf, true)?) {
        println!(
            "- {krate} (with its wrapper in the example): {} B of code, {} B of named read-only data",
            commas(code),
            commas(data)
        );
    }
    println!();
    println!("Functions with a panic path (the call graph nopanic reads):");
    for line in panic_paths(&elf)? {
        println!("{line}");
    }
    println!();
    // What feature `deflate` adds to a binary: the no_std consumer tests/no_std with its digest
    // entry points, without and with its deflate ones (decode_verified and decode_verified_with,
    // each inlined into check_deflate): .text and .rodata (miniz_oxide's tables have no symbol).
    let (text0, rodata0) = consumer(meta, "panic-loop,digest")?;
    let (text1, rodata1) = consumer(meta, "panic-loop,digest,deflate")?;
    println!(
        "Feature deflate in the no_std consumer (two decode entry points): +{} B of code, +{} B of read-only data.",
        text1 as i64 - text0 as i64,
        rodata1 as i64 - rodata0 as i64
    );
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// The inflaters' and nrtucode's functions that call a panic entry (`- NAME -> …`, from
/// [`crate::panic::callers`] with nothing allowed: what it reports, not an error here).
fn panic_paths(elf: &Path) -> Result<Vec<String>, String> {
    Ok(crate::panic::callers(elf, &[])?
        .lines
        .iter()
        .filter(|l| {
            ["miniz_oxide", "zune_inflate", "nrtucode"]
                .iter()
                .any(|k| l.contains(k))
        })
        .map(|l| match l.strip_prefix("NOT ALLOWED: ") {
            Some(rest) => format!("- {rest}"),
            None => l.to_string(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(name: &str, size: u64, kind: char) -> Symbol {
        Symbol {
            name: name.into(),
            addr: 0,
            size,
            object: false,
            kind,
        }
    }

    #[test]
    fn the_inflaters_take_their_crates_and_wrappers() {
        let found = inflaters(&[
            sym(
                "miniz_oxide::inflate::core::decompress::h0123456789abcdef",
                100,
                't',
            ),
            sym("deflate_cost::inflate_miniz::h0123456789abcdef", 10, 't'),
            sym(
                "<miniz_oxide::inflate::core::X as Y>::f::h0123456789abcdef",
                1,
                'T',
            ),
            sym(
                "miniz_oxide::inflate::core::TABLE::h0123456789abcdef",
                50,
                'r',
            ),
            sym(
                "zune_inflate::decoder::DeflateDecoder::decode::h0123456789abcdef",
                200,
                't',
            ),
            sym("deflate_cost::inflate_zune::h0123456789abcdef", 20, 't'),
            sym("nrtucode::deflate::x::h0123456789abcdef", 1000, 't'),
        ]);
        assert_eq!(found, [("miniz_oxide", 111, 50), ("zune_inflate", 220, 0)]);
    }

    #[test]
    fn the_rows_use_the_decoded_sizes() {
        let counts = [1, 2, 3, 4, 5, 165_542, 2, 3, 4, 5];
        let compact = rows("compact", &counts).unwrap();
        assert_eq!(compact.len(), 5);
        assert_eq!(
            compact[0],
            format!("| {} | none | 1.00 | 1 | 165,542 |", WAYS[0].0)
        );
        assert_eq!(rows("unrolled", &counts).unwrap().len(), 2);
        assert!(rows("compact", &counts[..9]).is_err());
    }
}
