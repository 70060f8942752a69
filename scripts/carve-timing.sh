# Sourced by scripts/carve-speed.sh and scripts/carve-vs-binutils.sh: the input library, the
# release `nrtucode` binary and the timing helpers both measurements share.
#
# After `source scripts/carve-timing.sh "${1:-}"`: `$work` is a scratch directory removed on
# exit, `$lib` the library to carve (argument 1, or the full look-alike built with gcc -O2,
# about 10 MB, unstripped), `$bin` the release `nrtucode` (built outside any timing).
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

lib="${1:-}"
if [[ -z "$lib" ]]; then
  cargo run -q --release -p nrtucode-lookalike -- --library full --opt O2 --out "$work/la" --build >/dev/null
  lib="$work/la/libnrtucode_internal.so"
fi
cargo build -q --release -p nrtucode-cli
bin="${CARGO_TARGET_DIR:-target}/release/nrtucode"

# Wall-clock seconds; the difference of two as %.4f; the smaller of two ("" counts as none).
now() { date +%s.%N; }
elapsed() { awk -v s="$1" -v e="$2" 'BEGIN { printf "%.4f", e - s }'; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'; }
