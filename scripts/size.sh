#!/usr/bin/env bash
# Flash cost of the resolvers on thumbv7em-none-eabihf (release, opt-level "s", LTO), and the
# cost of embedding the ~10 MB payload at build time. Prints the tables of docs/performance.md
# ("Flash", "Build cost") and docs/bare-metal.md (the cost of `verify`).
#
#   scripts/size.sh            # fixtures, real-blob mode (carve of the look-alike), build cost
#   scripts/size.sh --no-build-cost
#
# The consumer is tests/no_std built with only the NoEnv image and profiler-table entry points
# (`--no-default-features --features panic-loop`), then again with its `verify` entry points
# (what feature `verify` adds, with sha2's unrolled and compact SHA-256). Its ELF is split by `cargo xtask size-report`:
# payload = the BLOB_* statics (distinct blobs), metadata = the rest of .rodata/.data, code =
# .text minus the consumer's `_start`.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

build_cost=1
[[ "${1:-}" == "--no-build-cost" ]] && build_cost=0

rustup target add thumbv7em-none-eabihf >/dev/null 2>&1 || true
for tool in python3 gcc; do
  command -v "$tool" >/dev/null || { echo "size.sh: needs $tool (apt-get install python3 gcc)" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

consumer() { # label target-dir [env...] -> json line; FEATURES adds consumer features
  local label=$1 dir=$2
  shift 2
  (cd tests/no_std &&
    env "$@" CARGO_TARGET_DIR="$root/$dir" cargo build --quiet --release \
      --no-default-features --features "panic-loop${FEATURES:+,$FEATURES}")
  cargo xtask size-report "$dir/thumbv7em-none-eabihf/release/nopanic-check" "$label"
}

echo "building the fixture consumer..." >&2
fixtures=$(consumer fixtures target/nopanic-check NRTUCODE_BLOB_DIR=)
# The same consumer calling nrtucode::verify (in place, copy-verify, a custom hasher): what the
# feature adds, with sha2's default (unrolled) and compact SHA-256 loops.
echo "building the verify consumers..." >&2
verify=$(FEATURES=verify consumer "fixtures + verify" target/nopanic-check NRTUCODE_BLOB_DIR=)
verify_compact=$(FEATURES=verify consumer "fixtures + verify, compact sha2" target/nopanic-check-compact \
  NRTUCODE_BLOB_DIR= CARGO_TARGET_THUMBV7EM_NONE_EABIHF_RUSTFLAGS='--cfg sha2_backend_soft="compact"')

echo "building the look-alike, carving it, building the real-blob consumer..." >&2
carved=""
if cargo run --quiet -p nrtucode-lookalike -- --library full --out "$work/la" --build >/dev/null &&
  cargo run --quiet -p nrtucode-cli -- carve "$work/la/libnrtucode_internal.so" --out "$work/blobs" >/dev/null; then
  carved=$(consumer "carved look-alike" target/nopanic-check-carved NRTUCODE_BLOB_DIR="$work/blobs")
else
  echo "size.sh: carve unavailable; real-blob row skipped" >&2
fi

# The vendor's payload: distinct blob addresses of the real getters the two resolvers reach
# (getters.tsv rows other than EXTISA_*).
vendor_payload=$(python3 - <<'PY'
import csv
seen = {}
with open("crates/nrtucode-facts/tables/getters.tsv") as f:
    for row in csv.DictReader(f, delimiter="\t"):
        if row["class"] == "R" and not row["region"].startswith("EXTISA"):
            seen[row["blob_va"]] = int(row["size"], 16)
print(len(seen), sum(seen.values()))
PY
)

python3 - "$fixtures" "$carved" "$vendor_payload" "$verify" "$verify_compact" <<'PY'
import json, sys
rows = [json.loads(a) for a in sys.argv[1:3] if a]
cat_n, cat_bytes = map(int, sys.argv[3].split())
with_verify = [json.loads(a) for a in sys.argv[4:6]]
vendor = 38 * 16 + 38 * 16 + 102 * 40 + 386 * 32
print("flash of a minimal no_std consumer, thumbv7em-none-eabihf, release (opt-level s, lto, codegen-units 1)")
print()
print("| build | resolver code | table metadata | code + metadata | vs vendor metadata (17,648 B) | panic code linked |")
print("|---|---:|---:|---:|---:|---:|")
for r in rows:
    cm = r["code"] + r["metadata"]
    print(f"| {r['label']} | {r['code']:,} B | {r['metadata']:,} B | {cm:,} B | {100 * cm / vendor:.1f}% | {r['panic']:,} B |")
print()
print("| build | embedded payload (distinct blobs) | vendor payload (distinct, from the facts) | consumer flash (alloc sections) | flash - payload |")
print("|---|---:|---:|---:|---:|")
for r in rows:
    print(f"| {r['label']} | {r['payload']:,} B ({r['blobs']} blobs) | {cat_bytes:,} B ({cat_n} blobs) | {r['alloc']:,} B | {r['alloc'] - r['payload']:,} B |")
print()
base = rows[0]
print("feature verify: what it adds to the fixture consumer (same blobs, same build)")
print()
print("| build | code | code added | metadata added (digest table) | panic code linked |")
print("|---|---:|---:|---:|---:|")
for r in with_verify:
    print(f"| {r['label']} | {r['code']:,} B | {r['code'] - base['code']:,} B | {r['metadata'] - base['metadata']:,} B | {r['panic']:,} B |")
print()
print("resolver functions in the fixture consumer (bytes, name):")
for n, name in rows[0]["functions"]:
    print(f"  {n:6}  {name}")
PY

if [[ $build_cost == 1 ]]; then
  echo
  echo "embedding cost: clean release build of the core crate (default features, ~10 MB payload)"
  clean=target/size-clean
  rm -rf "$clean"
  measure() { # label cmd... -> "| label | wall | peak |"
    local label=$1
    shift
    /usr/bin/time -f '%e %M' -o "$work/time" "$@" >/dev/null 2>&1
    read -r wall kb <"$work/time"
    printf '| %s | %s s | %d MiB |\n' "$label" "$wall" $((kb / 1024))
  }
  echo
  echo "| build | wall time | peak RSS (largest process) |"
  echo "|---|---:|---:|"
  measure "cargo build --release -p nrtucode, empty target dir (deps, build script, core)" \
    env CARGO_TARGET_DIR=$clean NRTUCODE_BLOB_DIR= cargo build --release -p nrtucode
  cargo clean --quiet --release -p nrtucode --target-dir "$clean"
  measure "the core crate alone (build script + rustc, deps built)" \
    env CARGO_TARGET_DIR=$clean NRTUCODE_BLOB_DIR= cargo build --release -p nrtucode
  rm -rf "$clean"
fi
