//! `cargo xtask fuzz [--seconds N] [TARGET…]`: seeds the fuzz corpora and runs the fuzz
//! targets (`fuzz/`, cargo-fuzz on nightly) for a bounded time each. The corpora are generated
//! under `fuzz/corpus/` (ignored, never committed); the fuzz build goes to `fuzz/` under the
//! target directory.
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
//!   target's 4-byte header); it fuzzes `nrtucode::deflate::decode_verified` over them, and the
//!   packer's encode/decode round trip over any input.

use std::path::Path;
use std::process::Stdio;

use crate::build::{self, cmd, path_str, status};
use crate::metadata::Metadata;

/// The fuzz targets, in the order they run by default.
pub const TARGETS: [&str; 5] = ["carve", "blob_dir", "partition", "inflate", "key_file"];

/// libFuzzer's `-max_len` for `target`, or `None` for a target this task does not know.
fn max_len(target: &str) -> Option<u32> {
    match target {
        "carve" | "blob_dir" | "inflate" => Some(16384),
        "partition" => Some(32768),
        // A little past the CLI's MAX_PEM_BYTES (16 KiB).
        "key_file" => Some(16400),
        _ => None,
    }
}

/// `cargo xtask fuzz`: each of `targets` (all when empty) for `seconds`.
pub fn run(meta: &Metadata, seconds: u64, targets: &[String]) -> Result<(), String> {
    let targets: Vec<&str> = if targets.is_empty() {
        TARGETS.to_vec()
    } else {
        targets.iter().map(String::as_str).collect()
    };
    if let Some(unknown) = targets.iter().find(|t| max_len(t).is_none()) {
        return Err(format!(
            "fuzz: unknown target {unknown} (targets: {})",
            TARGETS.join(" ")
        ));
    }
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
    let mut build = cmd("cargo", "+nightly fuzz build --target-dir");
    build.current_dir(meta.root.join("fuzz")).arg(&target_dir);
    if targets.len() == 1 {
        build.args(&targets);
    }
    status(&mut build)?;
    for target in targets {
        let corpus = meta.root.join("fuzz/corpus").join(target);
        crate::files::create_dir(&corpus)?;
        seed(meta, target, &corpus)?;
        let max_len = max_len(target).unwrap_or(16384);
        let mut run = cmd("cargo", "+nightly fuzz run --target-dir");
        run.current_dir(meta.root.join("fuzz"))
            .arg(&target_dir)
            .arg(target);
        let limits = format!("-max_total_time={seconds} -max_len={max_len} -rss_limit_mb=2048");
        status(
            run.arg(Path::new("corpus").join(target))
                .arg("--")
                .args(limits.split(' ')),
        )?;
    }
    Ok(())
}

/// `cargo run -q -p PACKAGE --example EXAMPLE -- DIR`.
fn example(package: &str, example: &str, dir: &Path, quiet: bool) -> Result<(), String> {
    let mut command = build::cargo(&format!("run -q -p {package} --example {example} --"));
    command.arg(dir);
    if quiet {
        command.stdout(Stdio::null());
    }
    status(&mut command)
}

/// Writes `target`'s seeds into `corpus`.
fn seed(meta: &Metadata, target: &str, corpus: &Path) -> Result<(), String> {
    match target {
        "carve" => example("nrtucode-test-elf", "fuzz_seeds", corpus, false),
        "blob_dir" => {
            let work = build::scratch(meta, "fuzz-blob-dir")?;
            let result = (|| {
                let elves = work.join("elf");
                crate::files::create_dir(&elves)?;
                example("nrtucode-test-elf", "fuzz_seeds", &elves, false)?;
                let blobs = work.join("blobs");
                for seed in crate::files::walk(&elves, "")? {
                    let mut carve = build::cargo("run -q -p nrtucode-cli -- carve");
                    let carve = carve.arg(path_str(&seed)?).arg("--out").arg(&blobs);
                    let carved = build::quietly(carve);
                    if carved {
                        let to = corpus.join("carved-manifest.tsv");
                        crate::files::copy(&blobs.join("manifest.tsv"), &to)?;
                        break;
                    }
                }
                Ok(())
            })();
            let _ = std::fs::remove_dir_all(&work);
            result
        }
        "partition" => example("nrtucode-pack", "partition_fuzz_seeds", corpus, true),
        "inflate" => example("nrtucode-deflate", "inflate_fuzz_seeds", corpus, false),
        "key_file" => ["test-ed25519.pem", "test-ed25519.pub.pem"]
            .into_iter()
            .try_for_each(|name| {
                crate::files::copy(&meta.root.join("keys").join(name), &corpus.join(name))
            }),
        _ => Err(format!("fuzz: unknown target {target}")),
    }
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
        let mut known: Vec<&str> = TARGETS.to_vec();
        known.sort_unstable();
        assert_eq!(found, known);
        assert_eq!(max_len("partition"), Some(32768));
        assert_eq!(max_len("nothing"), None);
    }
}
