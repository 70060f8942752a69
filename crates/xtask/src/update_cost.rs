//! `cargo xtask cost --what update`: what an update costs on the Cortex-M (informative; the
//! figures are in docs/update.md). Instructions, not cycles, between the markers `cost_begin`
//! and `cost_end` of examples/bare-metal's `examples/update_cost.rs` under QEMU mps2-an386, on
//! the NOR flash the template emulates over PSRAM: front fixtures partitions (the test key)
//! with counter 1 in slot A, 2 in the download area, 3 (`--compress deflate`) in a second one.
//!
//! The steps run hundreds of millions of instructions (each full check hashes 2.9 MB), too many
//! for `cargo xtask cost --what device`'s one log line per instruction. So QEMU runs without
//! `-singlestep`, logging each translation block's instructions once (`-d in_asm`) and each
//! block executed (`-d exec,nochain`); a block's instructions count each time it runs. This is
//! the same count: both ways give 3,039,326 for the first step (the factory `state()`), and
//! a block ends at every branch, so no block crosses a marker.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::build;
use crate::device::{self, Separate, commas};
use crate::metadata::Metadata;
use crate::qemu_update;

/// The second download area (`LINK_2` of the example).
const LINK_2: u64 = 0x21c0_0000;

/// The instructions between each `cost_begin` and the `cost_end` after it, from QEMU's
/// `-d in_asm,exec,nochain` log: each `Trace` line's block weighs the instructions `in_asm`
/// listed for the block at its address.
pub fn count_blocks(log: impl BufRead) -> std::io::Result<Vec<u64>> {
    let (mut size, mut block) = (HashMap::<u64, u64>::new(), None::<u64>);
    let (mut counts, mut on, mut n) = (Vec::new(), false, 0u64);
    for line in log.lines() {
        let line = line?;
        if line.starts_with("IN:") {
            block = Some(u64::MAX);
        } else if let (Some(b), Some(addr)) = (block, line.strip_prefix("0x")) {
            let Some(pc) = addr.get(..8).and_then(|h| u64::from_str_radix(h, 16).ok()) else {
                continue;
            };
            let at = if b == u64::MAX {
                size.insert(pc, 0);
                pc
            } else {
                b
            };
            block = Some(at);
            *size.entry(at).or_insert(0) += 1;
        } else if line.starts_with("Trace ") {
            block = None;
            let pc = line
                .split_once('[')
                .and_then(|(_, r)| r.split('/').nth(1))
                .and_then(|h| u64::from_str_radix(h, 16).ok());
            if line.ends_with(" cost_begin") {
                (on, n) = (true, 0);
            } else if line.ends_with(" cost_end") {
                if on {
                    counts.push(n);
                }
                on = false;
            } else if on {
                n += pc.and_then(|pc| size.get(&pc)).copied().unwrap_or(0);
            }
        }
    }
    Ok(counts)
}

/// Runs `qemu` for at most `timeout`: its exit status, its standard output, and the counts of
/// its standard error's log ([`count_blocks`]).
fn boot(qemu: &mut Command, timeout: Duration) -> Result<(i32, Vec<u8>, Vec<u64>), String> {
    let shown = format!("{qemu:?}");
    let mut child = qemu
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    let mut out = child.stdout.take().ok_or("no stdout pipe")?;
    let err = child.stderr.take().ok_or("no stderr pipe")?;
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        out.read_to_end(&mut bytes).map(|_| bytes)
    });
    let counter = std::thread::spawn(move || count_blocks(BufReader::with_capacity(1 << 20, err)));
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status.code().unwrap_or(-1),
            Ok(None) if started.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break 124;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("waiting for {shown}: {e}")),
        }
    };
    let stdout = reader.join().map_err(|_| "reader panicked")?;
    let counts = counter.join().map_err(|_| "counter panicked")?;
    let io = |e: std::io::Error| format!("{shown}: {e}");
    Ok((status, stdout.map_err(io)?, counts.map_err(io)?))
}

/// `(step, erases, writes, bytes)` of each `INFO  STEP: ok true, flash E erases W writes B bytes`.
pub fn steps(log: &str) -> Vec<(String, u64, u64, u64)> {
    log.lines()
        .filter_map(|l| {
            let (step, flash) = l.strip_prefix("INFO  ")?.split_once(": ok true, flash ")?;
            let n: Vec<u64> = flash.split(' ').filter_map(|w| w.parse().ok()).collect();
            Some((step.to_string(), *n.first()?, *n.get(1)?, *n.get(2)?))
        })
        .collect()
}

/// The measurement and the figures.
pub fn run(meta: &Metadata) -> Result<(), String> {
    device::require("qemu-system-arm", "qemu-system-arm")?;
    device::rustup_target(device::THUMB);
    let tools = device::host_tools(
        &["nrtucode-cli", "nrtucode-defmt"],
        &["nrtucode", "nrtucode-defmt"],
    )?;
    let (nrtucode, decoder) = (&tools[0], &tools[1]);
    let work = build::scratch(meta, "update-cost")?;
    let part = |name: &str, counter: &str, extra: &[&str]| -> Result<_, String> {
        let out = work.join(name);
        qemu_update::pack(nrtucode, &out, counter, extra)?;
        Ok(out)
    };
    let (p1, p2) = (part("p1.part", "1", &[])?, part("p2.part", "2", &[])?);
    let p3 = part("p3.part", "3", &["--compress", "deflate"])?;
    let elf = Separate::template(meta).build(
        &[
            "--no-default-features",
            "--features",
            "update",
            "--example",
            "update_cost",
        ],
        &[("NRTUCODE_PARTITION_KEY", OsStr::new(""))],
        "update_cost",
    )?;
    let mut qemu = device::arm(&elf);
    qemu_update::load(&mut qemu, &p1, Some(&p2))?;
    let len = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| m.len())
            .map_err(|e| e.to_string())
    };
    let (stored, deflate) = (len(&p2)?, len(&p3)?);
    qemu.args([
        "-device",
        &format!("loader,addr={LINK_2:#x},data={deflate},data-len=4"),
    ]);
    device::loader(&mut qemu, &p3, LINK_2 + 4)?;
    qemu.args(["-d", "in_asm,exec,nochain"]);
    println!("(QEMU logs every block executed, about 50 million: a few minutes)");
    let (status, frames, counts) = boot(&mut qemu, Duration::from_secs(1800))?;
    let log = device::decode(decoder, &elf, &frames, &work.join("log"))?;
    let rows = steps(&log);
    if status != 0 || rows.len() != 9 || counts.len() != 9 {
        eprintln!("{log}");
        return Err(format!(
            "a step failed (exit {status}, {} counts)",
            counts.len()
        ));
    }
    println!(
        "Cortex-M4 (QEMU mps2-an386), thumbv7em-none-eabihf, opt-level s, LTO, sha2 compact; instructions executed, once each; the emulated NOR flash (4 KiB erase, 4 B write)"
    );
    println!();
    println!("| step | instructions | per byte of the update | erases | writes | bytes written |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (i, ((step, e, w, b), n)) in rows.iter().zip(&counts).enumerate() {
        let per_byte = match i {
            2 | 3 => format!("{:.2}", *n as f64 / stored as f64),
            7 | 8 => format!("{:.2}", *n as f64 / deflate as f64),
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
    let written = |a: usize, b: usize| rows[a].3 + rows[b].3;
    println!();
    println!(
        "Bytes written per byte installed: {:.5} stored, {:.5} deflate (the stage's last write padded to the word, the candidate's record); bytes erased per byte installed: {:.4} and {:.4}; a confirm: {} erases, {} writes.",
        written(2, 3) as f64 / stored as f64,
        written(7, 8) as f64 / deflate as f64,
        (rows[2].1 * 4096) as f64 / stored as f64,
        (rows[7].1 * 4096) as f64 / deflate as f64,
        rows[5].1,
        rows[5].2
    );
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_weighs_its_instructions_each_time_it_runs_between_the_markers() {
        let log = "----------------\nIN: cost_begin\n0x00000100:  b480  push {r7}\n0x00000102:  4770  bx lr\n\n\
                   Trace 0: 0x1 [00000000/00000100/0/0] cost_begin\n\
                   ----------------\nIN: main\n0x00000200:  2001  movs r0, #1\n0x00000202:  2102  movs r1, #2\n0x00000204:  d1fc  bne #0x200\n\n\
                   Trace 0: 0x2 [00000000/00000200/0/0] main\n\
                   Trace 0: 0x2 [00000000/00000200/0/0] main\n\
                   IN: cost_end\n0x00000300:  4770  bx lr\n\n\
                   Trace 0: 0x3 [00000000/00000300/0/0] cost_end\n\
                   Trace 0: 0x2 [00000000/00000200/0/0] main\n";
        assert_eq!(count_blocks(log.as_bytes()).unwrap(), [6]);
        let steps = steps(
            "INFO  `confirm(B)`: ok true, flash 0 erases 2 writes 32 bytes\nINFO  x: ok false, flash 1 erases 2 writes 3 bytes\n",
        );
        assert_eq!(steps, [("`confirm(B)`".to_string(), 0, 2, 32)]);
    }
}
