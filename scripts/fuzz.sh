#!/usr/bin/env bash
# Seeds the `carve` fuzz corpus with small hand-built ELF files and runs the fuzzer for a
# bounded time, then the `blob_dir` target (the manifest parser and the blob-directory reader
# the build script, verify and carve share), seeded with the manifest of a carve of one of
# those files, for the same time. Usage: scripts/fuzz.sh [SECONDS]   (default 60 each)
#
# Needs nightly and cargo-fuzz (`cargo +nightly install cargo-fuzz --locked`). The corpus is
# generated, never committed (fuzz/corpus is ignored). Seeds come from the `fuzz_seeds` example
# of the dev-only crate nrtucode-test-elf (`TinyElf`): shared objects of a few KB (ELF header,
# program headers, a dynamic section with symbols, hash table and relocations, getters of every shape the
# interpreter follows, the two tables, resolvers; with and without section headers) and getter
# code on its own. Small seeds keep libFuzzer fast: megabyte look-alikes cost milliseconds per
# execution and mutations rarely reach their structures.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
corpus=fuzz/corpus/carve
mkdir -p "$corpus"
cargo run -q -p nrtucode-test-elf --example fuzz_seeds -- "$corpus"
manifests=fuzz/corpus/blob_dir
mkdir -p "$manifests"
seeded=$(mktemp -d)
for seed in "$corpus"/*; do
  if cargo run -q -p nrtucode-cli -- carve "$seed" --out "$seeded/blobs" >/dev/null 2>&1; then
    cp "$seeded/blobs/manifest.tsv" "$manifests/carved-manifest.tsv"
    break
  fi
done
rm -rf "$seeded"
cd fuzz
cargo +nightly fuzz run carve corpus/carve -- -max_total_time="$secs" -max_len=16384 -rss_limit_mb=2048
cargo +nightly fuzz run blob_dir corpus/blob_dir -- -max_total_time="$secs" -max_len=16384 -rss_limit_mb=2048
