#!/usr/bin/env bash
# Runs a fuzz target for a bounded time. Usage: scripts/fuzz.sh [SECONDS] [TARGET]
# (default 60 s, target `carve`; `inflate` is the deflate decoder's target).
#
# `carve`: seeds its corpus with small hand-built ELF files (below).
# `inflate`: seeds its corpus with raw-deflate streams the packer writes (the `fuzz_seeds`
# example of nrtucode-deflate: stored, fixed and dynamic Huffman blocks, long matches, each behind
# the target's 4-byte header) and fuzzes nrtucode::deflate::decode_verified over them, and the
# packer's encode/decode round trip over any input.
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
target="${2:-carve}"
corpus=fuzz/corpus/$target
mkdir -p "$corpus"
case $target in
  carve) cargo run -q -p nrtucode-test-elf --example fuzz_seeds -- "$corpus" ;;
  inflate) cargo run -q -p nrtucode-deflate --example fuzz_seeds -- "$corpus" ;;
  *) echo "fuzz.sh: unknown target $target (carve, inflate)" >&2; exit 2 ;;
esac
cd fuzz
cargo +nightly fuzz run "$target" "corpus/$target" -- -max_total_time="$secs" -max_len=16384 -rss_limit_mb=2048
