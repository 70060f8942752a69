#!/usr/bin/env bash
# Times `nrtucode carve` (parse, decode, sha256 of the input and of every blob, write the blob
# directory all or nothing with fsync) against the floor for reading and hashing the same file,
# `cat LIB | sha256sum`, side by side, and prints their ratio. Target: ratio <= 1.0.
#
# Usage: scripts/carve-speed.sh [LIB] [ROUNDS]
#   LIB defaults to the full look-alike built with gcc -O2 (about 10 MB, unstripped);
#   ROUNDS (default 7) alternates the two commands; the best time of each counts (the median
#   is printed too: on a shared machine the fsync side varies with other I/O). Each round
#   carves into a new directory (all are removed at the end, not between rounds: ext4 slows
#   the creation of new files while it still remembers many just-deleted inodes, which a
#   single carve never meets); a third line times re-carving over the previous round's carve
#   (replace whole, which deletes the earlier blobs).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${2:-7}"
source scripts/carve-timing.sh "${1:-}"

cat "$lib" >/dev/null # warm the page cache for both sides
best_cat="" best_carve="" best_recarve=""
all_cat=() all_carve=()
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for i in $(seq "$rounds"); do
  s=$(now); cat "$lib" | sha256sum >/dev/null; e=$(now)
  all_cat+=("$(elapsed "$s" "$e")")
  best_cat=$(min "${all_cat[-1]}" "$best_cat")
  s=$(now); "$bin" carve "$lib" --out "$work/blobs-$i" >/dev/null 2>&1; e=$(now)
  all_carve+=("$(elapsed "$s" "$e")")
  best_carve=$(min "${all_carve[-1]}" "$best_carve")
  if [[ $i -gt 1 ]]; then
    s=$(now); "$bin" carve "$lib" --out "$work/blobs-$((i - 1))" >/dev/null 2>&1; e=$(now)
    best_recarve=$(min "$(elapsed "$s" "$e")" "$best_recarve")
  fi
done
# The same carve into tmpfs, where fsync returns at once: what the carve costs besides waiting
# for the disk.
best_shm=""
if shm="$(mktemp -d -p /dev/shm 2>/dev/null)"; then
  for i in $(seq "$rounds"); do
    s=$(now); "$bin" carve "$lib" --out "$shm/blobs-$i" >/dev/null 2>&1; e=$(now)
    best_shm=$(min "$(elapsed "$s" "$e")" "$best_shm")
  done
  rm -rf "$shm"
fi
test -f "$work/blobs-1/manifest.tsv" || { echo "carve-speed: the carve failed" >&2; exit 1; }
echo "input:               $lib ($(stat -c %s "$lib") bytes), best of $rounds"
echo "cat | sha256sum:     ${best_cat} s"
echo "nrtucode carve:      ${best_carve} s  (fresh directory)"
echo "nrtucode re-carve:   ${best_recarve} s  (replacing an earlier carve)"
[[ -n "$best_shm" ]] && echo "carve into tmpfs:    ${best_shm} s  (fsync returns at once: the carve without the disk wait)"
awk -v c="$best_carve" -v f="$best_cat" 'BEGIN { printf "ratio:               carve / (cat | sha256sum) = %.2fx (best of each)\n", c / f }'
mc=$(median "${all_carve[@]}") mf=$(median "${all_cat[@]}")
awk -v c="$mc" -v f="$mf" 'BEGIN { printf "median ratio:        %.4f s / %.4f s = %.2fx\n", c, f, c / f }'
