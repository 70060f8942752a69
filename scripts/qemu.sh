#!/usr/bin/env bash
# The bare-metal template (examples/bare-metal, feature `qemu`) booted under QEMU's mps2-an386
# (Cortex-M4), with run-time and with compile-time (`const-resolve`) resolution. Its defmt log
# comes out through semihosting and is decoded with the workspace's nrtucode-defmt (the
# defmt-decoder crate; no defmt-print to install); its exit status is the
# program's (0 only when every image loaded). For each build:
#   intact flash     exit 0, one "verified" line per image, "engine ready"
#   one byte flipped exit non-zero, "verification failed" naming that image, the others verified
#                    (the byte is in the middle of the first image the intact run loaded, found
#                    through the ELF's section table by `cargo xtask elf-flash`)
#   erased flash     exit non-zero, every image failed, none loaded (.nrtucode_blobs all 0xFF)
# Needs qemu-system-arm (.ci/run installs it).
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in qemu-system-arm; do
  command -v "$tool" >/dev/null || { echo "qemu.sh: needs $tool (.ci/run installs it)" >&2; exit 1; }
done
rustup target add thumbv7em-none-eabihf >/dev/null 2>&1 || true
cargo build --quiet --release --locked -p nrtucode-defmt
decoder=$PWD/target/release/nrtucode-defmt
elf=target/bare-metal/thumbv7em-none-eabihf/release/nrtucode-bare-metal
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "qemu.sh: $*" >&2; exit 1; }

# boot ELF NAME: runs ELF, leaves the decoded log in $work/NAME.log and the exit status in $status.
boot() {
  local elf=$1 log=$work/$2.log
  status=0
  timeout 120 qemu-system-arm -machine mps2-an386 -cpu cortex-m4 -display none -monitor none \
    -serial none -semihosting-config enable=on,target=native -kernel "$elf" >"$log.frames" || status=$?
  "$decoder" -e "$elf" <"$log.frames" >"$log" 2>&1 || fail "$2: nrtucode-defmt could not decode the log"
  sed "s/^/    [$2] /" "$log"
  echo "    [$2] exit status $status"
}

count() { grep -c -- "$1" "$2" || true; }

for features in qemu qemu,const-resolve; do
  echo "== examples/bare-metal --features $features"
  (cd examples/bare-metal && NRTUCODE_BLOB_DIR= cargo build --quiet --release --locked --features "$features")
  cp "$elf" "$work/intact.elf"

  boot "$work/intact.elf" intact
  images=$(count ' verified: ' "$work/intact.log")
  [[ $status == 0 ]] || fail "intact flash: exit status $status, want 0"
  grep -qx "INFO  blobs: the built-in fixtures, not the vendor's" "$work/intact.log" || fail "intact flash: no line naming the fixtures as the blob source"
  [[ $images -ge 1 ]] || fail "intact flash: no image verified"
  [[ $(count 'verification failed' "$work/intact.log") == 0 ]] || fail "intact flash: a verification failed"
  grep -q "engine ready: $images of $images images loaded" "$work/intact.log" || fail "intact flash: no 'engine ready' line"

  # One byte flipped in the middle of the first image loaded.
  image=$(cargo xtask elf-flash flip-verified "$work/intact.elf" "$work/tampered.elf" "$work/intact.log")
  boot "$work/tampered.elf" tampered
  [[ $status != 0 ]] || fail "tampered flash: exit status 0"
  grep -q "image $image: verification failed: SHA-256 mismatch" "$work/tampered.log" \
    || fail "tampered flash: no 'verification failed' line naming $image"
  [[ $(count 'verification failed' "$work/tampered.log") == 1 ]] || fail "tampered flash: want exactly one failed image"
  [[ $(count ' verified: ' "$work/tampered.log") == $((images - 1)) ]] || fail "tampered flash: the other images should still verify"

  cargo xtask elf-flash erase "$work/intact.elf" "$work/erased.elf"
  boot "$work/erased.elf" erased
  [[ $status != 0 ]] || fail "erased flash: exit status 0"
  [[ $(count 'verification failed' "$work/erased.log") == "$images" ]] || fail "erased flash: want all $images images failed"
  [[ $(count ' verified: ' "$work/erased.log") == 0 ]] || fail "erased flash: an image verified"
  grep -q "engine not loaded: 0 of $images images loaded, $images failed" "$work/erased.log" \
    || fail "erased flash: no 'engine not loaded' line"
done
echo "qemu.sh: intact flash loads, a flipped byte and erased flash are refused, both resolutions"
