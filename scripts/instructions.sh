#!/usr/bin/env bash
# Instruction counts per resolver call under `valgrind --tool=callgrind`: ours, the C look-alike
# (gcc -O2, same binary) and the dense-array ideal, over the fixed input mix of
# crates/nrtucode-bench, in the fixed 30-variable environment of scripts/env30.sh.
#
#   scripts/instructions.sh          # the default release profile
#   scripts/instructions.sh --lto    # lto = "fat", codegen-units = 1 (typical firmware profile)
#
# Prints one table: Ir per call, Ir per call net of the harness (loop + fold, the `empty` row),
# and ratios to the C resolver and to the ideal on the same inputs.
set -euo pipefail
cd "$(dirname "$0")/.."

passes=2000
target_dir=target
if [[ "${1:-}" == "--lto" ]]; then
  export CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
  target_dir=target/lto
  profile="release + lto=fat, codegen-units=1"
else
  profile="release (Cargo.toml defaults)"
fi

if ! command -v valgrind >/dev/null; then
  if command -v apt-get >/dev/null && [[ $(id -u) == 0 ]]; then
    apt-get update -qq && apt-get install -y -qq valgrind >/dev/null
  else
    echo "instructions.sh: needs valgrind (apt-get install valgrind)" >&2
    exit 1
  fi
fi

CARGO_TARGET_DIR=$target_dir cargo build --quiet --release -p nrtucode-bench --bin instr
bin=$target_dir/release/instr
# The partition paths from a binary of their own (see crates/nrtucode-bench's feature
# `partition`): in one binary with the others they would move the others' code.
CARGO_TARGET_DIR=$target_dir/partition cargo build --quiet --release -p nrtucode-bench --bin instr --features partition
bin_partition=$target_dir/partition/release/instr
valgrind=$(command -v valgrind)
# shellcheck source=scripts/env30.sh
source scripts/env30.sh
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

measure() { # path [binary] -> "Ir calls"
  env -i "${MEASURE_ENV[@]}" "$valgrind" --tool=callgrind --callgrind-out-file="$out/$1" \
    --toggle-collect=nrtucode_bench_measure "${2:-$bin}" "$1" "$passes" >"$out/$1.stdout" 2>"$out/$1.log"
  local ir calls
  ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$out/$1.log")
  calls=$(sed -n 's/.*calls=\([0-9]*\).*/\1/p' "$out/$1.stdout")
  echo "$ir $calls"
}

nenv=$(env -i "${MEASURE_ENV[@]}" "$valgrind" -q --tool=callgrind --callgrind-out-file=/dev/null "$bin" --env)
echo "instructions per call (callgrind Ir), profile: $profile"
echo "environment: $nenv variables (scripts/env30.sh + valgrind's LD_PRELOAD); NEURON_UCODE_FLAVOR and NRTUCODE_MPLUS_ON_MARIANA unset"
echo "mix: crates/nrtucode-bench/src/mix.rs, $passes passes after one warm-up pass"
echo

declare -A per net
empty=""
for path in empty $("$bin" --list | cut -f1 | grep -v '^empty$'); do
  read -r ir calls < <(measure "$path")
  per[$path]=$(awk -v a="$ir" -v b="$calls" 'BEGIN { printf "%.1f", a / b }')
done
empty=${per[empty]}
for path in "${!per[@]}"; do
  net[$path]=$(awk -v a="${per[$path]}" -v e="$empty" 'BEGIN { printf "%.1f", a - e }')
done
# The partition binary's paths, net of that binary's own harness.
read -r ir calls < <(measure empty "$bin_partition")
empty_partition=$(awk -v a="$ir" -v b="$calls" 'BEGIN { printf "%.1f", a / b }')
for path in partition_explicit partition_hwdecode; do
  read -r ir calls < <(measure "$path" "$bin_partition")
  per[$path]=$(awk -v a="$ir" -v b="$calls" 'BEGIN { printf "%.1f", a / b }')
  net[$path]=$(awk -v a="${per[$path]}" -v e="$empty_partition" 'BEGIN { printf "%.1f", a - e }')
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
# path, C counterpart, ideal counterpart
rows=(
  "ours_explicit c_explicit ideal_explicit"
  "ours_explicit_std c_explicit ideal_explicit"
  "ours_auto_std c_auto -"
  "ours_auto_snapshot c_auto -"
  "ours_hwdecode c_hwdecode ideal_hwdecode"
  "partition_explicit c_explicit ideal_explicit"
  "partition_hwdecode c_hwdecode ideal_hwdecode"
  "c_explicit - -"
  "c_auto - -"
  "c_hwdecode - -"
  "ideal_explicit - -"
  "ideal_hwdecode - -"
  "empty - -"
)
printf '| %-18s | %8s | %8s | %-15s | %-15s | %s\n' path Ir/call net "x C (net)" "x ideal (net)" what
printf '|%s|%s|%s|%s|%s|%s\n' "--------------------" "----------" "----------" "-----------------" "-----------------" "---"
while read -r path c ideal; do
  vs_c=""; vs_i=""
  [[ $c != - ]] && vs_c="$(ratio "${per[$path]}" "${per[$c]}") ($(ratio "${net[$path]}" "${net[$c]}"))"
  [[ $ideal != - ]] && vs_i="$(ratio "${per[$path]}" "${per[$ideal]}") ($(ratio "${net[$path]}" "${net[$ideal]}"))"
  about=$("$bin_partition" --list | awk -F'\t' -v p="$path" '$1 == p { print $3 }')
  printf '| %-18s | %8s | %8s | %-15s | %-15s | %s\n' "$path" "${per[$path]}" "${net[$path]}" "$vs_c" "$vs_i" "$about"
done < <(printf '%s\n' "${rows[@]}")
