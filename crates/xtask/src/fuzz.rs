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

/// A fuzz target: its name, libFuzzer's `-max_len`, and what writes its seeds into a corpus.
type Target = (
    &'static str,
    u32,
    fn(&Metadata, &Path) -> Result<(), String>,
);

/// The fuzz targets, in the order they run by default.
pub const TARGETS: [Target; 5] = [
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
];

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
    let mut build = cmd("cargo", "+nightly fuzz build --target-dir");
    build.current_dir(meta.root.join("fuzz")).arg(&target_dir);
    if let [(name, _, _)] = targets[..] {
        build.arg(name);
    }
    status(&mut build)?;
    for &(target, max_len, seed) in targets {
        let corpus = meta.root.join("fuzz/corpus").join(target);
        crate::files::create_dir(&corpus)?;
        seed(meta, &corpus)?;
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

/// Writes the `blob_dir` seed into `corpus`: the manifest of a carve of the first carve seed
/// the CLI carves.
fn carved_manifest(meta: &Metadata, corpus: &Path) -> Result<(), String> {
    let work = build::scratch(meta, "fuzz-blob-dir")?;
    let result = (|| {
        let elves = work.join("elf");
        crate::files::create_dir(&elves)?;
        example("nrtucode-test-elf", "fuzz_seeds", &elves, false)?;
        let blobs = work.join("blobs");
        for seed in crate::files::walk(&elves, "")? {
            let mut carve = build::cargo("run -q -p nrtucode-cli -- carve");
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
