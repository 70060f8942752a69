#!/usr/bin/env bash
# Times `nrtucode carve` against the binutils pipeline of the seed's reproduction section
# (`objdump -d` + `readelf -rW` + one `dd` per blob, then `sha256sum` of the blobs) on one
# (POSIX awk: runs with mawk or gawk)
# library, and prints both timings and their ratio.
#
# Usage: scripts/carve-vs-binutils.sh [LIB]
#   LIB defaults to the full look-alike built with gcc -O2 (about 10 MB, unstripped).
# Each side runs 3 times; the best wall-clock time counts. The release binary is built first
# (`cargo build --release -p nrtucode-cli`), outside the timing.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/carve-timing.sh "${1:-}"

best_of_3() { # prints the best wall time of "$@" in seconds
  local best=""
  for _ in 1 2 3; do
    local s e
    s=$(now); "$@" >/dev/null 2>&1; e=$(now)
    best=$(min "$(elapsed "$s" "$e")" "$best")
  done
  echo "$best"
}

carve() { rm -rf "$work/carve"; "$bin" carve "$lib" --out "$work/carve"; }

binutils() {
  rm -rf "$work/bu"; mkdir -p "$work/bu"
  objdump -d "$lib" >"$work/bu/dis.txt"
  readelf -rW "$lib" >"$work/bu/rel.txt"
  readelf -SW "$lib" >"$work/bu/sec.txt"
  # Getter stubs -> (symbol, blob VA, size): the lea target and the movq immediate.
  awk '
    function hex(s,  i, v) { s = tolower(s); sub(/^0x/, "", s); v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
    /^[0-9a-f]+ <.*_get>:$/ { if (sym != "") print sym, va, size; sym = $2; gsub(/[<>:]/, "", sym); va = ""; size = 0; next }
    /^[0-9a-f]+ </ { if (sym != "") print sym, va, size; sym = ""; next }
    sym != "" && /lea .*\(%rip\),%r/ { for (i = 1; i <= NF; i++) if ($i == "#") va = $(i + 1) }
    sym != "" && /movq +\$0x[0-9a-f]+,\(%rsi\)/ { match($0, /\$0x[0-9a-f]+/); size = hex(substr($0, RSTART + 1, RLENGTH - 1)) }
    END { if (sym != "") print sym, va, size }
  ' "$work/bu/dis.txt" >"$work/bu/stubs.txt"
  # VA -> file offset through the section that contains it.
  awk '
    function hex(s,  i, v) { s = tolower(s); sub(/^0x/, "", s); v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
    FNR == NR { if ($0 ~ /^ *\[ *[0-9]+\]/) { sub(/^ *\[ *[0-9]+\] */, ""); if ($2 != "NOBITS") { n++; a[n] = hex($3); o[n] = hex($4); z[n] = hex($5) } } next }
    $3 > 0 { v = hex($2); for (i = 1; i <= n; i++) if (v >= a[i] && v < a[i] + z[i] && a[i] > 0) { printf "%s %d %d\n", $1, v - a[i] + o[i], $3; break } }
  ' "$work/bu/sec.txt" "$work/bu/stubs.txt" >"$work/bu/blobs.txt"
  while read -r sym off size; do
    dd if="$lib" of="$work/bu/$sym.bin" iflag=skip_bytes,count_bytes bs=1M skip="$off" count="$size" status=none
  done <"$work/bu/blobs.txt"
  sha256sum "$work"/bu/*.bin >"$work/bu/sha256.txt"
}

t_carve=$(best_of_3 carve)
t_bu=$(best_of_3 binutils)
blobs=$(wc -l <"$work/bu/blobs.txt")
echo "input:     $lib ($(stat -c %s "$lib") bytes)"
echo "nrtucode:  ${t_carve} s  (carve + manifest + sha256 of every blob)"
echo "binutils:  ${t_bu} s  (objdump -d + readelf -rW/-SW + ${blobs} x dd + sha256sum)"
awk -v c="$t_carve" -v b="$t_bu" 'BEGIN { printf "ratio:     binutils / nrtucode = %.1fx\n", b / c }'
