#!/usr/bin/env bash
# The bare-metal template (examples/bare-metal) on thumbv7em-none-eabihf: builds it, then checks
# with readelf that every blob lies in the XFLASH region of its memory map (memory/board.x), that internal FLASH
# holds under 16 KiB, and that resolving at compile time links only the blobs named (with and
# without LTO, so --gc-sections drops each unused blob on its own). Prints the flash split of
# run-time vs compile-time resolution for docs/bare-metal.md.
set -euo pipefail
cd "$(dirname "$0")/.."

rustup target add thumbv7em-none-eabihf >/dev/null 2>&1 || true
command -v readelf >/dev/null || { echo "bare-metal.sh: needs readelf (binutils)" >&2; exit 1; }
elf=target/bare-metal/thumbv7em-none-eabihf/release/nrtucode-bare-metal

build() { # mode lto -> builds the template
  local mode=$1 lto=$2 features=()
  [[ $mode == compile-time ]] && features=(--features const-resolve)
  (cd examples/bare-metal && CARGO_PROFILE_RELEASE_LTO=$lto NRTUCODE_BLOB_DIR= \
    cargo build --quiet --release --locked "${features[@]}")
}

check() { # mode lto -> prints one table row; fails on a broken placement
  python3 - "$elf" examples/bare-metal/memory/board.x crates/nrtucode-facts/tables/getters.tsv "$1" "$2" <<'PY'
import re, subprocess, sys
elf, memory_x, getters, mode, lto = sys.argv[1:6]

def size(text):
    m = re.fullmatch(r"(0x[0-9a-fA-F]+|\d+)\s*([KM]?)", text.strip())
    return int(m.group(1), 0) * {"": 1, "K": 1024, "M": 1024 * 1024}[m.group(2)]

regions = {name: (int(origin, 0), size(length)) for name, origin, length in re.findall(
    r"^\s*(\w+)\s*:\s*ORIGIN\s*=\s*(0x[0-9a-fA-F]+)\s*,\s*LENGTH\s*=\s*([0-9xa-fA-FKM ]+?)\s*(?:/\*.*)?$",
    open(memory_x).read(), re.M)}
def inside(region, addr, n=0):
    origin, length = regions[region]
    return origin <= addr and addr + n <= origin + length

readelf = lambda *a: subprocess.run(["readelf", *a, elf], check=True, capture_output=True, text=True).stdout
sections = {}
for line in readelf("-SW").splitlines():
    m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\S+\s+(\S*)", line)
    if m and "A" in m.group(4):
        sections[m.group(1)] = (int(m.group(2), 16), int(m.group(3), 16))
# Load segments: what the programmer writes, at its load (physical) address.
loads = []
for line in readelf("-lW").splitlines():
    f = line.split()
    if f and f[0] == "LOAD":
        loads.append((int(f[3], 16), int(f[4], 16)))  # PhysAddr, FileSiz
blobs = [(int(f[1], 16), int(f[2], 0)) for f in (l.split() for l in readelf("-sW").splitlines())
         if len(f) >= 8 and f[3] == "OBJECT" and "BLOB_" in f[7]]

problems = []
addr, n = sections.get(".nrtucode_blobs", (0, 0))
if not n or not inside("XFLASH", addr, n):
    problems.append(f".nrtucode_blobs at {addr:#x}+{n:#x} is not inside XFLASH")
for a, s in blobs:
    if not inside("XFLASH", a, s) or a % 16:
        problems.append(f"blob at {a:#x} ({s} B) outside XFLASH or not 16-byte aligned")
internal = sum(s for a, s in loads if inside("FLASH", a))
if internal >= 16 * 1024:
    problems.append(f"internal FLASH holds {internal} B (target < 16 KiB)")
payload = sum(s for _, s in blobs)
if mode == "compile-time":
    # Exactly the blobs the template names: CAYMAN NX ACT PERF, its four regions.
    want = 0
    for row in open(getters).read().splitlines()[1:]:
        g = row.split("\t")
        if g[:4] == ["CAYMAN", "NX", "ACT", "PERF"] and g[9] == "R":
            want += int(g[8], 16)
    if payload != want:
        problems.append(f"compile-time resolution links {payload} B of blobs, the 4 images named hold {want} B")
print(f"| {mode} | {lto} | {len(blobs)} | {payload:,} B | {n:,} B at {addr:#010x} | {internal:,} B |")
for p in problems:
    print(f"bare-metal.sh: {p}", file=sys.stderr)
sys.exit(1 if problems else 0)
PY
}

echo "examples/bare-metal, thumbv7em-none-eabihf, opt-level s, gen-cayman + flavor-perf (+ verify, defmt)"
echo
echo "| resolution | LTO | blobs linked | blob bytes | XFLASH section | internal FLASH (load) |"
echo "|---|---|---:|---:|---:|---:|"
for run in "run-time true" "compile-time true" "compile-time false" "run-time false"; do
  read -r mode lto <<<"$run"
  build "$mode" "$lto"
  check "$mode" "$lto"
done
