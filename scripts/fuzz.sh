#!/usr/bin/env bash
# Seeds the `carve` fuzz corpus from the look-alike libraries and runs the fuzzer for a bounded
# time. Usage: scripts/fuzz.sh [SECONDS]   (default 60)
#
# Needs nightly and cargo-fuzz (`cargo +nightly install cargo-fuzz --locked`). The corpus is
# generated, never committed (fuzz/corpus is ignored): the front look-alike built with -O2 and
# -Os, unstripped and `strip --strip-all`ed, plus the getter-stub shapes the decoder accepts.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
corpus=fuzz/corpus/carve
seeds="$(mktemp -d)"
trap 'rm -rf "$seeds"' EXIT
mkdir -p "$corpus"

for opt in O2 Os; do
  cargo run -q -p nrtucode-lookalike -- --variant front --opt "$opt" --out "$seeds/$opt" --build >/dev/null
  cp "$seeds/$opt/libnrtucode.so" "$corpus/front-$opt.so"
  strip --strip-all -o "$corpus/front-$opt-stripped.so" "$seeds/$opt/libnrtucode.so"
done
# Stub shapes: vendor (-O2), -Os (xor/mov), endbr64 + reordered stores, and a jmp thunk.
printf '\x48\x8d\x05\x00\x01\x00\x00\x48\x89\x07\x48\xc7\x06\x00\x04\x00\x00\xc3' >"$corpus/stub-vendor"
printf '\x48\x8d\x05\x00\x01\x00\x00\x48\x89\x07\x31\xc0\x48\x89\x06\xc3' >"$corpus/stub-os"
printf '\xf3\x0f\x1e\xfa\x48\xc7\x06\x20\x00\x00\x00\x48\x8d\x15\x10\x00\x00\x00\x48\x89\x17\xc3' >"$corpus/stub-endbr"
printf '\xe9\x10\x00\x00\x00' >"$corpus/stub-jmp"

# The look-alike seeds are megabytes: let libFuzzer keep inputs that large.
max_len=$(( $(stat -c %s "$corpus"/front-O2.so) + 4096 ))
cd fuzz
cargo +nightly fuzz run carve corpus/carve -- -max_total_time="$secs" -max_len="$max_len" -rss_limit_mb=4096
