#!/usr/bin/env bash
# What reading a signed partition costs on the Cortex-M (informative; docs/performance.md and
# examples/bare-metal/README.md quote it). Instructions, not cycles, counted as
# scripts/device-cost.sh counts them: examples/bare-metal's examples/partition_cost.rs under
# QEMU mps2-an386 with one guest instruction per translation block and a log line per block
# executed, the lines between its markers cost_begin and cost_end; the fixtures partition
# (`nrtucode pack --fixtures full --compress deflate`, the test key, counter 1) loaded at
# 0x21000000 with -device loader. Then the flash of the template's board build (loaded bytes
# below XFLASH: code, tables, rodata) embedded and with `partition` (with and without
# `deflate`), the largest functions of the partition build by crate (nm; LTO inlines across
# crates, so these are lower bounds for each crate), and the partition's overhead (header,
# tables, table of contents, signature, padding) from `nrtucode inspect --json`.
# Needs qemu-system-arm, readelf, nm (binutils), python3.
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in qemu-system-arm readelf nm python3 awk; do
  command -v "$tool" >/dev/null || { echo "partition-cost.sh: needs $tool" >&2; exit 1; }
done
rustup target add thumbv7em-none-eabihf >/dev/null 2>&1 || true
cargo build --quiet --release --locked -p nrtucode-cli -p nrtucode-defmt
nrtucode=$PWD/target/release/nrtucode
decoder=$PWD/target/release/nrtucode-defmt
out=target/bare-metal/thumbv7em-none-eabihf/release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
read -r qemu_major qemu_minor < <(qemu-system-arm --version | sed -nE '1s/.* ([0-9]+)\.([0-9]+).*/\1 \2/p')
one_insn=(-singlestep)
((qemu_major > 8 || (qemu_major == 8 && qemu_minor >= 1))) && one_insn=(-accel tcg,one-insn-per-tb=on)

"$nrtucode" pack --fixtures full --key keys/test-ed25519.pem --security-counter 1 --compress deflate \
  -o "$work/fixtures.part" >/dev/null
build() { (cd examples/bare-metal && NRTUCODE_PARTITION_KEY= NRTUCODE_BLOB_DIR= cargo build --quiet --release --locked "$@"); }

build --no-default-features --features qemu,deflate --example partition_cost
elf=$out/examples/partition_cost
status=0
timeout 600 qemu-system-arm -machine mps2-an386 -cpu cortex-m4 -display none -monitor none \
  -serial none -semihosting-config enable=on,target=native -kernel "$elf" "${one_insn[@]}" \
  -device "loader,file=$work/fixtures.part,addr=0x21000000" -d exec,nochain -D /dev/fd/3 \
  3> >(awk '/ cost_begin$/ {on = 1; n = 0; next} / cost_end$/ {if (on) print n; on = 0; next} on {n++}' \
    >"$work/counts") >"$work/frames" || status=$?
wait
"$decoder" -e "$elf" <"$work/frames" >"$work/log"
[[ $status == 0 && $(grep -c ': ok true' "$work/log") == 5 ]] ||
  { cat "$work/log" >&2; echo "partition-cost.sh: a step failed (exit $status)" >&2; exit 1; }
echo "Cortex-M4 (QEMU mps2-an386), thumbv7em-none-eabihf, opt-level s, LTO, sha2 compact; instructions executed, once each"
echo
echo "| step | instructions |"
echo "|---|---:|"
paste -d '\t' <(sed -nE 's/^INFO  (.*): ok true$/\1/p' "$work/log") "$work/counts" |
  python3 -c 'import sys; [print(f"| {s} | {int(n):,} |") for s, n in (l.rstrip("\n").split("\t") for l in sys.stdin)]'
sed -n 's/^INFO  sizes: /(/p' "$work/log" | sed 's/$/)/'
echo

flash() { # ELF -> bytes loaded (physical address) into internal flash, below RAM at 0x20000000
  local total=0 addr size
  while read -r addr size; do
    ((addr < 0x20000000)) && total=$((total + size))
  done < <(readelf -lW "$1" | awk '$1 == "LOAD" {print $4, $5}')
  echo "$total"
}
echo "| the template's board build (run-time resolution, LTO) | internal flash |"
echo "|---|---:|"
build
echo "| embedded blobs (default features; the blobs go to XFLASH, not counted) | $(flash $out/nrtucode-bare-metal) B |"
build --no-default-features --features partition
echo "| \`--no-default-features --features partition\` (copy-verify) | $(flash $out/nrtucode-bare-metal) B |"
cp $out/nrtucode-bare-metal "$work/partition.elf"
build --no-default-features --features partition,deflate
echo "| \`--no-default-features --features partition,deflate\` (decode-verify) | $(flash $out/nrtucode-bare-metal) B |"
echo
echo "Code and read-only data by what it does, in the \`partition\` board build (nm -S: named text and"
echo "rodata symbols; LTO inlines across crates, so each row holds what was inlined into its functions):"
echo
nm -C --size-sort -S "$work/partition.elf" | python3 -c '
import sys
rows = [  # (row, substrings of the demangled name), first match wins
    ("signature: ed25519-compact (verify, SHA-512, field and point code, its tables)", ("ed25519",)),
    ("partition parse (structure checks)", ("nrtucode::partition::parse",)),
    ("partition resolve and digests (getters, copy_verified, check)", ("nrtucode::partition",)),
    ("SHA-256 (sha2 compact, nrtucode::verify)", ("sha2", "nrtucode::verify")),
    ("the template (main, part::load, its log lines)", ("nrtucode_bare_metal",)),
    ("defmt", ("defmt",)),
]
by = {}
for line in sys.stdin:
    parts = line.split(None, 3)
    if len(parts) < 4 or parts[2] not in "tTrR" or parts[3].strip() == "__INTERRUPTS":
        continue
    size, name = int(parts[1], 16), parts[3].strip()
    row = next((r for r, keys in rows if any(k in name for k in keys)), "other (memcpy, runtime, unnamed constants)")
    by[row] = by.get(row, 0) + size
print("| code | bytes |")
print("|---|---:|")
for row, _ in rows + [("other (memcpy, runtime, unnamed constants)", ())]:
    print(f"| {row} | {by.get(row, 0):,} |")
'
echo
"$nrtucode" inspect "$work/fixtures.part" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
toc = d["toc"]
blobs_off = toc[0]["offset"]
total = d["header"]["total_len"]
stored = sum(t["stored_len"] for t in toc)
print(f"Partition overhead (fixtures, full class, --compress deflate): header, tables, TOC and signature {blobs_off:,} B "
      f"(to the first blob, padding included); blob padding {total - blobs_off - stored:,} B; {len(toc)} blobs, {stored:,} B stored, {total:,} B in all.")
'
