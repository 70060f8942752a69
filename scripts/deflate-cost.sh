#!/usr/bin/env bash
# What decoding a compressed blob costs on the Cortex-M, in instructions and flash: writes the
# inputs of examples/bare-metal's examples/deflate_cost.rs (the CYW43439 Wi-Fi firmware of the
# `cyw43-firmware` crate, a dev-dependency of nrtucode-deflate, and its first 64 KiB; raw
# deflate at the packer's best level, and stored; into a temporary directory, never committed),
# builds it (opt-level s, LTO, sha2 compact as the template's .cargo/config.toml sets) and boots
# it under QEMU (mps2-an386, Cortex-M4) with one guest instruction per translation block,
# counting the instructions between its markers cost_begin and cost_end as
# scripts/device-cost.sh does. (difference in instructions) / (difference in decoded bytes) is
# the cost per output byte, free of the fixed cost of a call. QEMU does not model cycles: these
# are instructions executed. Then the flash the inflater takes in that ELF (miniz_oxide's
# functions and tables, llvm-nm). Prints markdown tables for docs/performance.md.
# Needs qemu-system-arm and llvm-nm. `--flash-only`: build and print the flash lines, no QEMU run.
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in qemu-system-arm llvm-nm awk python3; do
  command -v "$tool" >/dev/null || { echo "deflate-cost.sh: needs $tool" >&2; exit 1; }
done
rustup target add thumbv7em-none-eabihf >/dev/null 2>&1 || true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
read -r qemu_major qemu_minor < <(qemu-system-arm --version | sed -nE '1s/.* ([0-9]+)\.([0-9]+).*/\1 \2/p')
one_insn=(-singlestep)
((qemu_major > 8 || (qemu_major == 8 && qemu_minor >= 1))) && one_insn=(-accel tcg,one-insn-per-tb=on)

cargo run --quiet -p nrtucode-deflate --example cost_inputs -- "$work/in" >"$work/ratios"
# The template's link arguments, without --cfg sha2_backend_soft="compact" (RUSTFLAGS replaces
# target.<triple>.rustflags of .cargo/config.toml), as scripts/device-cost.sh builds it.
unrolled_flags="-C link-arg=-Tlink.x -C link-arg=-Tdefmt.x -C link-arg=--nmagic"

flash_only=0
[[ ${1:-} == --flash-only ]] && flash_only=1

measure() { # backend -> table rows
  local backend=$1 target_dir=target/bare-metal env=() status=0
  if [[ $backend == unrolled ]]; then
    target_dir=target/bare-metal-sha2-unrolled
    env=(RUSTFLAGS="$unrolled_flags" CARGO_TARGET_DIR="$(pwd)/$target_dir")
  fi
  (cd examples/bare-metal && env "${env[@]}" NRTUCODE_DEFLATE_COST_INPUTS="$work/in/inputs.rs" \
    NRTUCODE_BLOB_DIR= cargo build --quiet --release --locked --features qemu,deflate-cost --example deflate_cost)
  elf=$target_dir/thumbv7em-none-eabihf/release/examples/deflate_cost
  ((flash_only)) && return
  timeout 900 qemu-system-arm -machine mps2-an386 -cpu cortex-m4 -display none -monitor none \
    -serial none -semihosting-config enable=on,target=native -kernel "$elf" "${one_insn[@]}" \
    -d exec,nochain -D /dev/fd/3 \
    3> >(awk '/ cost_begin$/ {on = 1; n = 0; next} / cost_end$/ {if (on) print n; on = 0; next} on {n++}' \
      >"$work/$backend.counts") >/dev/null || status=$?
  wait # for the counter
  [[ $status == 0 ]] || { echo "deflate-cost.sh: $backend: a way failed or faulted (exit $status)" >&2; exit 1; }
  python3 - "$backend" "$work/$backend.counts" <<'PY'
import sys
backend, counts = sys.argv[1:]
counts = [int(c) for c in open(counts).read().split()]
ways = [("plain copy of the stored bytes (`copy_from_slice`)", "none"),
        ("`copy_checked` (stored blob: copy-verify)", f"sha2 {backend}"),
        ("`decode_verified` (deflate: inflate + SHA-256 of the output)", f"sha2 {backend}"),
        ("`decode_verified_with` a hasher that hashes nothing (miniz_oxide's inflater alone)", "none"),
        ("zune-inflate 0.2 `decode_deflate` into a heap `Vec`, then copied to the window (no hash)", "none")]
assert len(counts) == 2 * len(ways), counts
small, big = 65536, 231077
for i, (way, sha) in enumerate(ways):
    if sha == "none" and backend == "unrolled":
        continue  # sha2's backend does not change these
    n_small, n_big = counts[i], counts[len(ways) + i]
    print(f"| {way} | {sha} | {(n_big - n_small) / (big - small):.2f} | {n_small:,} | {n_big:,} |")
PY
}

echo "Cortex-M4 (QEMU mps2-an386), thumbv7em-none-eabihf, opt-level s, LTO; instructions executed"
echo
echo "Inputs (the packer's choice):"
echo
sed 's/^/    /' "$work/ratios"
echo
echo "| way | SHA-256 | instructions per output byte | 65,536 B | 231,077 B |"
echo "|---|---|---:|---:|---:|"
measure compact
((flash_only)) || measure unrolled
echo
# Flash of the inflaters: each crate's functions (and named data) in the linked example, and
# which of their functions keep a panic path (`cargo xtask panic-callers`: direct callers of the
# panic machinery).
echo "Inflaters' flash in deflate_cost (llvm-nm; tables without a symbol are not counted):"
llvm-nm -S -C "target/bare-metal/thumbv7em-none-eabihf/release/examples/deflate_cost" | python3 -c '
import sys
sizes = {}
# Each inflater: its crate'"'"'s functions and named data, plus the example'"'"'s non-inlined wrapper
# around it (which holds whatever of the crate the compiler inlined there).
wrappers = {"inflate_miniz": "miniz_oxide", "inflate_zune": "zune_inflate"}
for line in sys.stdin:
    parts = line.split(None, 3)
    if len(parts) == 4:
        crate = parts[3].lstrip("_<").split("::")[0]
        crate = wrappers.get(parts[3].split("::")[-2] if "::" in parts[3] else parts[3], crate)
        if crate in ("miniz_oxide", "zune_inflate"):
            code, data = sizes.get(crate, (0, 0))
            size = int(parts[1], 16)
            sizes[crate] = (code + size, data) if parts[2] in "tT" else (code, data + size)
for crate, (code, data) in sorted(sizes.items()):
    print(f"- {crate} (with its wrapper in the example): {code:,} B of code, {data:,} B of named read-only data")
'
echo
echo "Functions with a panic path (cargo xtask panic-callers):"
cargo xtask panic-callers target/bare-metal/thumbv7em-none-eabihf/release/examples/deflate_cost 2>/dev/null |
  grep -E 'miniz_oxide|zune_inflate|nrtucode' | sed 's/^NOT ALLOWED: /- /' || true
echo
# What feature `deflate` adds to a binary: the no_std consumer tests/no_std with its verify entry
# points, without and with its deflate ones (decode_verified and decode_verified_with, each
# inlined into check_deflate): .text and .rodata (miniz_oxide's tables have no symbol of their own).
flash() { # features -> "text rodata"
  (cd tests/no_std && CARGO_TARGET_DIR="$(pwd)/../../target/nopanic-size" NRTUCODE_BLOB_DIR= \
    cargo build --quiet --release --no-default-features --features "$1")
  local text rodata
  read -r text rodata < <(readelf -SW target/nopanic-size/thumbv7em-none-eabihf/release/nopanic-check |
    awk '{for (i = 1; i < NF; i++) {if ($i == ".text") t = $(i + 4); if ($i == ".rodata") r = $(i + 4)}} END {print t, r}')
  echo $((16#$text)) $((16#$rodata))
}
read -r text0 rodata0 < <(flash panic-loop,verify)
read -r text1 rodata1 < <(flash panic-loop,verify,deflate)
echo "Feature deflate in the no_std consumer (two decode entry points): +$((text1 - text0)) B of code, +$((rodata1 - rodata0)) B of read-only data."
