#!/usr/bin/env bash
# Wall time per resolver call (criterion, crates/nrtucode-bench/benches/lookup.rs): ours, the C
# look-alike compiled -O2 into the same binary, and the dense-array ideal, over the fixed input
# mix, in the fixed 30-variable environment of scripts/env30.sh.
#
#   scripts/bench.sh [--lto] [--quick]
#
# --lto: lto = "fat", codegen-units = 1. --quick: 0.5 s warm-up, 1 s measurement per path
# (default 1 s / 3 s). Prints one table: median ns per call, and ratios to C and to the ideal.
set -euo pipefail
cd "$(dirname "$0")/.."

target_dir=target
warm=1 meas=3
profile="release (Cargo.toml defaults)"
for arg in "$@"; do
  case $arg in
    --lto)
      export CARGO_PROFILE_BENCH_LTO=fat CARGO_PROFILE_BENCH_CODEGEN_UNITS=1
      target_dir=target/lto
      profile="release + lto=fat, codegen-units=1"
      ;;
    --quick) warm=0.5 meas=1 ;;
    *) echo "usage: scripts/bench.sh [--lto] [--quick]" >&2; exit 2 ;;
  esac
done
command -v python3 >/dev/null || { echo "bench.sh: needs python3 to read criterion's JSON" >&2; exit 1; }

exe=$(CARGO_TARGET_DIR=$target_dir cargo bench -p nrtucode-bench --bench lookup --no-run \
  --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "lookup" and m.get("executable"):
        print(m["executable"])')
# shellcheck source=scripts/env30.sh
source scripts/env30.sh
home=$target_dir/criterion
rm -rf "$home/lookup"
env -i "${MEASURE_ENV[@]}" CRITERION_HOME="$home" "$exe" --bench --noplot \
  --warm-up-time "$warm" --measurement-time "$meas" >"$target_dir/bench.log" 2>&1 ||
  { cat "$target_dir/bench.log" >&2; exit 1; }

echo "wall time per call (criterion median of one pass over the mix / calls per pass), profile: $profile"
echo "environment: $((${#MEASURE_ENV[@]} + 1)) variables (scripts/env30.sh + CRITERION_HOME); NEURON_UCODE_FLAVOR and NRTUCODE_MPLUS_ON_MARIANA unset"
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
echo
python3 - "$home/lookup" <<'PY'
import json, os, subprocess, sys
home = sys.argv[1]
calls = {"ours_hwdecode": 9, "c_hwdecode": 9, "ideal_hwdecode": 9}
ns = {}
for name in os.listdir(home):
    est = os.path.join(home, name, "new", "estimates.json")
    if os.path.exists(est):
        with open(est) as f:
            ns[name] = json.load(f)["median"]["point_estimate"] / calls.get(name, 26)
rows = [
    ("ours_explicit", "c_explicit", "ideal_explicit"),
    ("ours_explicit_std", "c_explicit", "ideal_explicit"),
    ("ours_auto_std", "c_auto", None),
    ("ours_auto_snapshot", "c_auto", None),
    ("ours_hwdecode", "c_hwdecode", "ideal_hwdecode"),
    ("c_explicit", None, None), ("c_auto", None, None), ("c_hwdecode", None, None),
    ("ideal_explicit", None, None), ("ideal_hwdecode", None, None), ("empty", None, None),
]
print(f"| {'path':<18} | {'ns/call':>8} | {'x C':>6} | {'x ideal':>7} |")
print(f"|{'-'*20}|{'-'*10}|{'-'*8}|{'-'*9}|")
for path, c, ideal in rows:
    vs_c = f"{ns[path] / ns[c]:.2f}x" if c else ""
    vs_i = f"{ns[path] / ns[ideal]:.2f}x" if ideal else ""
    print(f"| {path:<18} | {ns[path]:>8.2f} | {vs_c:>6} | {vs_i:>7} |")
PY
