#!/usr/bin/env bash
# Times `nrtucode carve` (parse, decode, sha256 of the input and of every blob, write the blob
# directory all or nothing with fsync) against the floor for reading and hashing the same file,
# `cat LIB | sha256sum`, side by side, and prints their ratio. Target: ratio <= 1.0.
#
# Usage: scripts/carve-speed.sh [LIB] [ROUNDS]
#   LIB defaults to the full look-alike built with gcc -O2 (about 10 MB, unstripped);
#   ROUNDS (default 7) alternates the two commands; the best time of each counts. Each round
#   carves into a new directory (all are removed at the end, not between rounds: ext4 slows
#   the creation of new files while it still remembers many just-deleted inodes, which a
#   single carve never meets); a third line times re-carving over the previous round's carve
#   (replace whole, which deletes the earlier blobs).
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

lib="${1:-}"
rounds="${2:-7}"
if [[ -z "$lib" ]]; then
  cargo run -q --release -p nrtucode-lookalike -- --variant full --opt O2 --out "$work/la" --build >/dev/null
  lib="$work/la/libnrtucode_internal.so"
fi
cargo build -q --release -p nrtucode-cli
bin="${CARGO_TARGET_DIR:-target}/release/nrtucode"

now() { date +%s.%N; }
elapsed() { awk -v s="$1" -v e="$2" 'BEGIN { printf "%.4f", e - s }'; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'; }

cat "$lib" >/dev/null # warm the page cache for both sides
best_cat="" best_carve="" best_recarve=""
for i in $(seq "$rounds"); do
  s=$(now); cat "$lib" | sha256sum >/dev/null; e=$(now)
  best_cat=$(min "$(elapsed "$s" "$e")" "$best_cat")
  s=$(now); "$bin" carve "$lib" --out "$work/blobs-$i" >/dev/null 2>&1; e=$(now)
  best_carve=$(min "$(elapsed "$s" "$e")" "$best_carve")
  if [[ $i -gt 1 ]]; then
    s=$(now); "$bin" carve "$lib" --out "$work/blobs-$((i - 1))" >/dev/null 2>&1; e=$(now)
    best_recarve=$(min "$(elapsed "$s" "$e")" "$best_recarve")
  fi
done
test -f "$work/blobs-1/manifest.tsv" || { echo "carve-speed: the carve failed" >&2; exit 1; }
echo "input:               $lib ($(stat -c %s "$lib") bytes), best of $rounds"
echo "cat | sha256sum:     ${best_cat} s"
echo "nrtucode carve:      ${best_carve} s  (fresh directory)"
echo "nrtucode re-carve:   ${best_recarve} s  (replacing an earlier carve)"
awk -v c="$best_carve" -v f="$best_cat" 'BEGIN { printf "ratio:               carve / (cat | sha256sum) = %.2fx\n", c / f }'
