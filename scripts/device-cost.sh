#!/usr/bin/env bash
# What verification costs on the Cortex-M, in instructions: boots examples/bare-metal's
# examples/verify_cost.rs under QEMU (mps2-an386, Cortex-M4) with one guest instruction per
# translation block (-singlestep) and a log line per block executed (-d exec,nochain), and counts
# the instructions between its markers cost_begin and cost_end. Each way of loading runs on two
# images (10,496 B and 81,344 B): (difference in instructions) / (difference in bytes) is the
# cost per byte, free of the fixed cost of a call. QEMU does not model cycles (no pipeline, no
# wait states; the DWT cycle counter is not emulated faithfully), so these are instructions
# executed, not cycles. Built twice: with sha2's compact software backend (the template's
# .cargo/config.toml) and with its default, unrolled one. Prints a markdown table for
# examples/bare-metal/README.md. Needs qemu-system-arm; decodes defmt with the workspace's
# nrtucode-defmt.
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in qemu-system-arm awk; do
  command -v "$tool" >/dev/null || { echo "device-cost.sh: needs $tool" >&2; exit 1; }
done
rustup target add thumbv7em-none-eabihf >/dev/null 2>&1 || true
cargo build --quiet --release --locked -p nrtucode-defmt
decoder=$PWD/target/release/nrtucode-defmt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# One instruction per translation block: -singlestep before QEMU 8.1, then -accel tcg,one-insn-per-tb=on.
read -r qemu_major qemu_minor < <(qemu-system-arm --version | sed -nE '1s/.* ([0-9]+)\.([0-9]+).*/\1 \2/p')
one_insn=(-singlestep)
((qemu_major > 8 || (qemu_major == 8 && qemu_minor >= 1))) && one_insn=(-accel tcg,one-insn-per-tb=on)

# The template's link arguments, without --cfg sha2_backend_soft="compact" (RUSTFLAGS replaces
# target.<triple>.rustflags of .cargo/config.toml).
unrolled_flags="-C link-arg=-Tlink.x -C link-arg=-Tdefmt.x -C link-arg=--nmagic"

measure() { # backend -> table rows
  local backend=$1 target_dir=target/bare-metal env=()
  if [[ $backend == unrolled ]]; then
    target_dir=target/bare-metal-sha2-unrolled
    env=(RUSTFLAGS="$unrolled_flags" CARGO_TARGET_DIR="$(pwd)/$target_dir")
  fi
  (cd examples/bare-metal && env "${env[@]}" NRTUCODE_BLOB_DIR= \
    cargo build --quiet --release --locked --features qemu --example verify_cost &&
    env "${env[@]}" NRTUCODE_BLOB_DIR= cargo build --quiet --release --locked)
  # The board build of the template itself: its internal flash (loaded bytes below XFLASH).
  local addr size
  flash[$backend]=0
  while read -r addr size; do
    ((addr < 0x90000000)) && flash[$backend]=$((flash[$backend] + size))
  done < <(readelf -lW "$target_dir/thumbv7em-none-eabihf/release/nrtucode-bare-metal" | awk '$1 == "LOAD" {print $4, $5}')
  local elf=$target_dir/thumbv7em-none-eabihf/release/examples/verify_cost status=0
  timeout 600 qemu-system-arm -machine mps2-an386 -cpu cortex-m4 -display none -monitor none \
    -serial none -semihosting-config enable=on,target=native -kernel "$elf" "${one_insn[@]}" \
    -d exec,nochain -D /dev/fd/3 \
    3> >(awk '/ cost_begin$/ {on = 1; n = 0; next} / cost_end$/ {if (on) print n; on = 0; next} on {n++}' \
      >"$work/$backend.counts") >"$work/$backend.frames" || status=$?
  wait # for the counter
  "$decoder" -e "$elf" <"$work/$backend.frames" >"$work/$backend.log"
  [[ $status == 0 && $(grep -c 'ok true' "$work/$backend.log") == 8 ]] \
    || { cat "$work/$backend.log" >&2; echo "device-cost.sh: $backend: a way failed (exit $status)" >&2; exit 1; }
  python3 - "$backend" "$work/$backend.log" "$work/$backend.counts" <<'PY'
import re, sys
backend, log, counts = sys.argv[1:]
runs = [re.search(r"([A-Z]+RAM) (.+), (\d+) bytes: ok true", l).groups() for l in open(log) if "ok true" in l]
counts = [int(c) for c in open(counts).read().split()]
assert len(runs) == len(counts) == 8, (runs, counts)
by_way = {}
for (region, way, size), n in zip(runs, counts):
    by_way.setdefault(way, []).append((int(size), n))
for way, ((small, n_small), (big, n_big)) in by_way.items():
    if way not in ("verify_blob", "copy_verified") and backend == "unrolled":
        continue  # sha2's backend does not change these
    label = {"copy": "plain copy (copy_from_slice)", "verify_blob": "verify_blob (hash in place, no copy)",
             "copy_verified": "copy_verified"}.get(way, way)
    sha = f"sha2 {backend}" if way in ("verify_blob", "copy_verified") else ("hmac-sha256 1.1" if "hmac" in way else "none")
    print(f"| {label} | {sha} | {(n_big - n_small) / (big - small):.2f} | {n_small:,} | {n_big:,} |")
PY
}

echo "Cortex-M4 (QEMU mps2-an386), thumbv7em-none-eabihf, opt-level s, LTO; instructions executed"
echo
echo "| way | SHA-256 | instructions per byte | 10,496 B image | 81,344 B image |"
echo "|---|---|---:|---:|---:|"
declare -A flash
measure compact
measure unrolled
echo
echo "The template's board build (run-time resolution, LTO) holds ${flash[compact]} B of internal flash with sha2 compact, ${flash[unrolled]} B with sha2 unrolled."
