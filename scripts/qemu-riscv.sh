#!/usr/bin/env bash
# The minimal RISC-V loader (examples/riscv-virt, riscv32imac-unknown-none-elf) under QEMU's
# `virt` machine: with intact blobs it exits 0 with one "verified" line per image; with one
# byte flipped in the middle of the first image (`cargo xtask elf-flash`) it exits 1 naming that
# image. Needs qemu-system-riscv32 (Debian's qemu-system-misc; .ci/run installs it).
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in qemu-system-riscv32; do
  command -v "$tool" >/dev/null || { echo "qemu-riscv.sh: needs $tool (.ci/run installs it)" >&2; exit 1; }
done
rustup target add riscv32imac-unknown-none-elf >/dev/null 2>&1 || true
elf=target/riscv-virt/riscv32imac-unknown-none-elf/release/nrtucode-riscv-virt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "qemu-riscv.sh: $*" >&2; exit 1; }

boot() { # ELF NAME: output in $work/NAME.log, exit status in $status
  status=0
  timeout 120 qemu-system-riscv32 -machine virt -bios none -display none -monitor none -serial none \
    -semihosting-config enable=on,target=native -kernel "$1" >"$work/$2.log" || status=$?
  sed "s/^/    [$2] /" "$work/$2.log"
  echo "    [$2] exit status $status"
}

(cd examples/riscv-virt && NRTUCODE_BLOB_DIR= cargo build --quiet --release --locked)
boot "$elf" intact
images=$(grep -c ' verified: ' "$work/intact.log" || true)
[[ $status == 0 && $images -ge 1 ]] || fail "intact: exit status $status, $images images verified"
grep -q "^$images of $images images loaded$" "$work/intact.log" || fail "intact: no summary line"

image=$(cargo xtask elf-flash flip-verified "$elf" "$work/tampered.elf" "$work/intact.log")
boot "$work/tampered.elf" tampered
[[ $status != 0 ]] || fail "tampered: exit status 0"
grep -q "^$image: verification failed: SHA-256 mismatch" "$work/tampered.log" || fail "tampered: $image not named"
echo "qemu-riscv.sh: riscv32imac on QEMU virt loads intact images and refuses a flipped byte"
