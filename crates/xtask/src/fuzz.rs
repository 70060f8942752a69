//! `cargo xtask fuzz [--seconds N] [TARGET…]`: seeds the fuzz corpora and runs the fuzz
//! targets (`fuzz/`, cargo-fuzz on nightly) for a bounded time each, two at a time (each
//! libFuzzer process uses one core). The corpora are generated under `fuzz/corpus/` (ignored,
//! never committed); the fuzz build and each run's log (`TARGET.log`, printed when the run
//! fails) go to `fuzz/` under the target directory.
//!
//! Built and run without a sanitizer (`--sanitizer none`): every crate the targets fuzz is safe
//! Rust (`#![forbid(unsafe_code)]` in the carver and the CLI; the core and the decoder have no
//! `unsafe`), where AddressSanitizer has no memory error to find that a bounds check does not
//! turn into a panic, which libFuzzer reports as a crash either way. Its instrumentation only
//! made the build and each execution slower.
//!
//! - `carve`: seeds from the `fuzz_seeds` example of the dev-only crate nrtucode-test-elf
//!   (`TinyElf`): shared objects of a few KB (ELF header, program headers, a dynamic section
//!   with symbols, hash table and relocations, getters of every shape the interpreter follows,
//!   the two tables, resolvers; with and without section headers) and getter code on its own.
//!   Small seeds keep libFuzzer fast: megabyte look-alikes cost milliseconds per execution and
//!   mutations rarely reach their structures.
//! - `blob_dir`: the manifest parser and the blob-directory reader the build script, verify
//!   and carve share, seeded with the manifest of a carve of one of the carve seeds.
//! - `partition`: seeds from the `partition_fuzz_seeds` example of nrtucode-pack: the full and
//!   front tables with every blob cut to 32 bytes (8-17 KB), unsigned and signed with the
//!   committed test key, so that mutations reach parse, verify, the resolvers and the digest
//!   checks.
//! - `inflate`: raw-deflate streams the packer writes (the `inflate_fuzz_seeds` example of
//!   nrtucode-deflate: stored, fixed and dynamic Huffman blocks, long matches, each behind the
//!   target's 4-byte header); it fuzzes `nrtucode::deflate::decode_checked` over them, and the
//!   packer's encode/decode round trip over any input.
//! - `flash_file`, `layout`, `memory_map`: the CLI's readers of a partition's flashable forms
//!   (Intel HEX, ELF, UF2; seeded by the `flash_fuzz_seeds` example of nrtucode-cli), of a
//!   layout file (seeded with one) and of a GNU ld memory map (the template's maps).

use std::fs::File;
use std::path::Path;
use std::process::Stdio;

use crate::build::{self, cmd, path_str, status};
use crate::metadata::Metadata;

/// A fuzz target: its name, libFuzzer's `-max_len`, and what writes its seeds into a corpus.
type Target = (
    &'static str,
    u32,
    fn(&Metadata, &Path) -> Result<(), String>,
);

/// The fuzz targets, in the order they run by default.
pub const TARGETS: [Target; 8] = [
    ("carve", 16384, |_, corpus| {
        example("nrtucode-test-elf", "fuzz_seeds", corpus, false)
    }),
    ("blob_dir", 16384, carved_manifest),
    ("partition", 32768, |_, corpus| {
        example("nrtucode-pack", "partition_fuzz_seeds", corpus, true)
    }),
    ("inflate", 16384, |_, corpus| {
        example("nrtucode-deflate", "inflate_fuzz_seeds", corpus, false)
    }),
    // A little past the CLI's MAX_PEM_BYTES (16 KiB).
    ("key_file", 16400, |meta, corpus| {
        ["test-ed25519.pem", "test-ed25519.pub.pem"]
            .into_iter()
            .try_for_each(|key| {
                crate::files::copy(&meta.root.join("keys").join(key), &corpus.join(key))
            })
    }),
    // A small partition-like file in each flashable form (a few KB: mutations reach the
    // records, blocks and program headers).
    ("flash_file", 16384, |_, corpus| {
        example("nrtucode-cli", "flash_fuzz_seeds", corpus, false)
    }),
    // The layout reader's bound is 16 KiB.
    ("layout", 16400, |_, corpus| {
        crate::files::write(&corpus.join("qspi.layout"), LAYOUT_SEED)
    }),
    // The template's memory maps (a few KB; the reader's bound is 256 KiB).
    ("memory_map", 16384, |meta, corpus| {
        ["board.x", "mps2-an386.x"].into_iter().try_for_each(|map| {
            let from = meta.root.join("examples/bare-metal/memory").join(map);
            crate::files::copy(&from, &corpus.join(map))
        })
    }),
];

/// The `layout` target's seed: every key a layout file takes.
const LAYOUT_SEED: &str = "# QSPI NOR\nslot_a = 0x000000\nslot_b = 0x100000\nslot_len = 1M\nstate = 0x200000\nerase_size = 4K\nwrite_size = 4\nread_size = 1\nstate_len = 8K\nerased = 0xff\nflash_base = 0x90000000\n";

/// `cargo xtask fuzz`: each of `targets` (all when empty) for `seconds`.
pub fn run(meta: &Metadata, seconds: u64, targets: &[String]) -> Result<(), String> {
    let targets: Vec<&Target> = if targets.is_empty() {
        TARGETS.iter().collect()
    } else {
        let known = |name: &String| {
            let names = TARGETS.map(|t| t.0).join(" ");
            (TARGETS.iter().find(|t| t.0 == name))
                .ok_or_else(|| format!("fuzz: unknown target {name} (targets: {names})"))
        };
        targets.iter().map(known).collect::<Result<_, _>>()?
    };
    let has_fuzz = build::quietly(&mut cmd("cargo", "+nightly fuzz --version"));
    if !has_fuzz {
        return Err(
            "fuzz: needs nightly and cargo-fuzz (cargo +nightly install cargo-fuzz --locked)"
                .into(),
        );
    }
    let target_dir = meta.target_dir.join("fuzz");
    // One build of every target asked for: cargo links them side by side, where each `run`
    // would build its own in turn.
    let mut build = cmd("cargo", "+nightly fuzz build --sanitizer none --target-dir");
    build.current_dir(meta.root.join("fuzz")).arg(&target_dir);
    if let [(name, _, _)] = targets[..] {
        build.arg(name);
    }
    status(&mut build)?;
    for &(target, _, seed) in &targets {
        let corpus = meta.root.join("fuzz/corpus").join(target);
        crate::files::create_dir(&corpus)?;
        seed(meta, &corpus)?;
    }
    for batch in targets.chunks(SIDE_BY_SIDE) {
        let runs: Vec<_> = batch
            .iter()
            .map(|&&(target, max_len, _)| {
                let log = target_dir.join(format!("{target}.log"));
                let mut run = cmd("cargo", "+nightly fuzz run --sanitizer none --target-dir");
                run.current_dir(meta.root.join("fuzz"))
                    .arg(&target_dir)
                    .arg(target);
                let limits =
                    format!("-max_total_time={seconds} -max_len={max_len} -rss_limit_mb=2048");
                run.arg(Path::new("corpus").join(target))
                    .arg("--")
                    .args(limits.split(' '));
                let spawned = File::create(&log)
                    .and_then(|out| Ok((out.try_clone()?, out)))
                    .and_then(|(out, err)| run.stdout(out).stderr(err).spawn());
                (
                    target,
                    log,
                    spawned.map_err(|e| format!("cannot run {run:?}: {e}")),
                )
            })
            .collect();
        // Every run started is waited for, whatever the others did.
        let mut failed = None;
        for (target, log, spawned) in runs {
            let result = spawned
                .and_then(|mut child| child.wait().map_err(|e| format!("fuzz {target}: {e}")));
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            match result {
                Ok(exit) if exit.success() => {
                    let done = text.lines().rev().find(|l| l.starts_with("Done "));
                    println!("fuzz {target}: {}", done.unwrap_or("done"));
                }
                Ok(exit) => {
                    let tail: Vec<&str> = text.lines().rev().take(80).collect();
                    let tail: Vec<&str> = tail.into_iter().rev().collect();
                    println!(
                        "fuzz {target}: failed ({exit}); the end of {}:",
                        log.display()
                    );
                    println!("{}", tail.join("\n"));
                    failed = failed.or(Some(format!("fuzz {target}: failed ({exit})")));
                }
                Err(e) => failed = failed.or(Some(e)),
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
    }
    Ok(())
}

/// Fuzz targets run side by side, each a single libFuzzer process on one core: each still
/// gets its `--seconds`, and on 2 cores the runs take half the wall time.
const SIDE_BY_SIDE: usize = 2;

/// The example `EXAMPLE` of `PACKAGE`, built with the whole workspace's features (`cargo build
/// --workspace --example EXAMPLE`: the build README's test command made already, where `-p
/// PACKAGE` would unify other features and compile the package and its dependencies again), run
/// with `DIR`.
fn example(package: &str, example: &str, dir: &Path, quiet: bool) -> Result<(), String> {
    let mut build = build::cargo(&format!("build -q --workspace --example {example}"));
    let program = build::executable(&mut build, example)
        .map_err(|e| format!("{package}'s example {example}: {e}"))?;
    let mut command = std::process::Command::new(program);
    command.arg(dir);
    if quiet {
        command.stdout(Stdio::null());
    }
    status(&mut command)
}

/// Writes the `blob_dir` seed into `corpus`: the manifest of a carve of the first carve seed
/// the CLI carves.
fn carved_manifest(meta: &Metadata, corpus: &Path) -> Result<(), String> {
    let work = meta.scratch("fuzz-blob-dir")?;
    let result = (|| {
        let elves = work.join("elf");
        crate::files::create_dir(&elves)?;
        example("nrtucode-test-elf", "fuzz_seeds", &elves, false)?;
        let blobs = work.join("blobs");
        for seed in crate::files::walk(&elves, "")? {
            // The release CLI the template's steps run too (`device::host_tool`).
            let mut carve = build::cargo("run -q --release -p nrtucode-cli -- carve");
            let carve = carve.arg(path_str(&seed)?).arg("--out").arg(&blobs);
            if build::quietly(carve) {
                let to = corpus.join("carved-manifest.tsv");
                return crate::files::copy(&blobs.join("manifest.tsv"), &to);
            }
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&work);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fuzz_target_of_the_fuzz_crate_has_a_length_and_seeds() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/fuzz_targets");
        let mut found: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.strip_suffix(".rs").map(str::to_string)
            })
            .collect();
        found.sort();
        let mut known: Vec<&str> = TARGETS.map(|t| t.0).to_vec();
        known.sort_unstable();
        assert_eq!(found, known);
    }
}
