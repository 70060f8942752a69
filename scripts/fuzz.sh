#!/usr/bin/env bash
# Seeds the fuzz corpora and runs the fuzz targets for a bounded time each.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]   (default 60 seconds; targets: carve blob_dir partition;
# inflate, the deflate decoder's, runs when named: .ci/run gives it its own step)
#
# Needs nightly and cargo-fuzz (`cargo +nightly install cargo-fuzz --locked`). The corpora are
# generated, never committed (fuzz/corpus is ignored).
#
# carve: seeds come from the `fuzz_seeds` example of the dev-only crate nrtucode-test-elf
# (`TinyElf`): shared objects of a few KB (ELF header, program headers, a dynamic section with
# symbols, hash table and relocations, getters of every shape the interpreter follows, the two
# tables, resolvers; with and without section headers) and getter code on its own. Small seeds
# keep libFuzzer fast: megabyte look-alikes cost milliseconds per execution and mutations rarely
# reach their structures.
#
# partition: seeds come from the `partition_fuzz_seeds` example of nrtucode-pack: the full and front
# tables with every blob cut to 32 bytes (8-17 KB), unsigned and signed with the committed test
# key, so that mutations reach parse, verify, the resolvers and the digest checks.
#
# inflate: seeds are raw-deflate streams the packer writes (the `inflate_fuzz_seeds` example of
# nrtucode-deflate: stored, fixed and dynamic Huffman blocks, long matches, each behind the
# target's 4-byte header); it fuzzes nrtucode::deflate::decode_verified over them, and the
# packer's encode/decode round trip over any input.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(carve blob_dir partition)
for target in "${targets[@]}"; do
  corpus=fuzz/corpus/$target
  mkdir -p "$corpus"
  case $target in
    carve) max_len=16384; cargo run -q -p nrtucode-test-elf --example fuzz_seeds -- "$corpus" ;;
    blob_dir)
      # The manifest parser and the blob-directory reader the build script, verify and carve
      # share, seeded with the manifest of a carve of one of the carve seeds.
      max_len=16384
      mkdir -p "$corpus.elf"
      cargo run -q -p nrtucode-test-elf --example fuzz_seeds -- "$corpus.elf"
      seeded=$(mktemp -d)
      for seed in "$corpus.elf"/*; do
        if cargo run -q -p nrtucode-cli -- carve "$seed" --out "$seeded/blobs" >/dev/null 2>&1; then
          cp "$seeded/blobs/manifest.tsv" "$corpus/carved-manifest.tsv"
          break
        fi
      done
      rm -rf "$seeded" "$corpus.elf" ;;
    partition) max_len=32768; cargo run -q -p nrtucode-pack --example partition_fuzz_seeds -- "$corpus" >/dev/null ;;
    inflate) max_len=16384; cargo run -q -p nrtucode-deflate --example inflate_fuzz_seeds -- "$corpus" ;;
    *) echo "fuzz.sh: unknown target $target" >&2; exit 64 ;;
  esac
  (cd fuzz && cargo +nightly fuzz run "$target" "corpus/$target" -- \
    -max_total_time="$secs" -max_len="$max_len" -rss_limit_mb=2048)
done
