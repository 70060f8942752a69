#!/usr/bin/env bash
# Reproducible firmware: copies this checkout (its tracked and untracked, not ignored files) to
# two directories of different paths and lengths, builds the bare-metal template in each from
# scratch with its own committed configuration and a plain `cargo build --release`, and requires
# that both put the same bytes into flash: every loadable segment, same load address, size and
# contents (`cargo xtask elf-segments`). Also says whether the whole ELFs are identical (they are
# not: debug info holds the absolute source paths, the symbol table cargo's path-dependent crate
# hashes; see examples/bare-metal/README.md "Reproducible images").
set -euo pipefail
cd "$(dirname "$0")/.."

rustup target add thumbv7em-none-eabihf >/dev/null 2>&1 || true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
elf=target/bare-metal/thumbv7em-none-eabihf/release/nrtucode-bare-metal

for dir in "$work/a" "$work/another/checkout"; do
  mkdir -p "$dir"
  git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$dir"
  (cd "$dir/examples/bare-metal" && env -u CARGO_TARGET_DIR -u RUSTFLAGS -u NRTUCODE_BLOB_DIR \
    cargo build --quiet --release --locked)
done
echo "template built in $work/a and $work/another/checkout:"
cargo xtask elf-segments "$work/a/$elf" "$work/another/checkout/$elf"
