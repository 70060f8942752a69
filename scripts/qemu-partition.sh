#!/usr/bin/env bash
# The bare-metal template with feature `partition` under QEMU's mps2-an386: no blob in the
# program; `nrtucode pack` writes a signed partition of the built-in fixtures, QEMU loads it on
# its own at 0x21000000 (-device loader, as `probe-rs download` writes it on a board), and the
# firmware checks its signature once, then copy-verifies (stored) or decode-verifies (deflate)
# its engine's two images and two hwdecode tables into RAM. The defmt log is decoded with the
# workspace's nrtucode-defmt. Asserted on the decoded log and the exit status (0: everything
# loaded; 1: something refused; 2 a panic, 3 a fault and 124 a hang fail every case):
#   intact                 exit 0, "signature ok", 4 of 4 loaded
#   intact, compressed     exit 0, the two tables decoded from deflate
#   flipped blob byte      exit 1, IRAM: DigestMismatch, the other three load
#   flipped deflate byte   exit 1, the table fails (Decode or DigestMismatch), the others load
#   flipped table byte     exit 1, the partition refused: BadSignature
#   another key            exit 1, refused: UnknownKey
#   lower security counter exit 1, refused: Rollback (the firmware's minimum is 1)
#   truncated in the tables / in the blobs
#                          exit 1, refused (the rest of PSRAM reads 0) / the cut images fail
#   erased flash (0xFF)    exit 1, refused: Erased
#   wrong class (front)    exit 1, refused: WrongClass
#   without `deflate`      a compressed partition: the images load, the tables NotStored
# Then runs the template README's three commands ("A partition apart from the program") as
# written, with the look-alike standing in for the vendor library.
# Needs qemu-system-arm, gcc and python3 (.ci/run installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in qemu-system-arm python3 gcc; do
  command -v "$tool" >/dev/null || { echo "qemu-partition.sh: needs $tool (.ci/run installs it)" >&2; exit 1; }
done
rustup target add thumbv7em-none-eabihf >/dev/null 2>&1 || true
cargo build --quiet --release --locked -p nrtucode-cli -p nrtucode-defmt
repo=$PWD
nrtucode=$repo/target/release/nrtucode
decoder=$repo/target/release/nrtucode-defmt
elf=target/bare-metal/thumbv7em-none-eabihf/release/nrtucode-bare-metal
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "qemu-partition.sh: $*" >&2; exit 1; }
cmp -s keys/test-ed25519.pub.pem examples/bare-metal/keys/test-ed25519.pub.pem ||
  fail "examples/bare-metal/keys/test-ed25519.pub.pem is not keys/test-ed25519.pub.pem"

# The template's build takes the public key from NRTUCODE_PARTITION_KEY (default: the test key).
# A private key is refused.
if (cd examples/bare-metal && NRTUCODE_PARTITION_KEY=$repo/keys/test-ed25519.pem cargo build --quiet --release \
  --locked --no-default-features --features qemu,partition 2>"$work/build.err"); then
  fail "the build took a private key as NRTUCODE_PARTITION_KEY"
fi
grep -q "names a private key" "$work/build.err" || { cat "$work/build.err" >&2; fail "no clear message for a private key"; }

build() { # FEATURES: the run-time build without blobs, the test key's public half
  (cd examples/bare-metal && NRTUCODE_PARTITION_KEY= cargo build --quiet --release --locked \
    --no-default-features --features "$1")
  cp "$elf" "$work/fw.elf"
  # No blob in the program: no loadable segment in XFLASH (0x21000000), where the partition goes.
  ! readelf -lW "$work/fw.elf" | awk '$1 == "LOAD" {print $3}' | grep -q '^0x21' ||
    fail "feature partition put a segment into XFLASH (blobs linked?)"
}

# boot NAME PART: runs the firmware with PART at 0x21000000; the decoded log in $work/NAME.log,
# the exit status in $status.
boot() {
  local log=$work/$1.log
  status=0
  timeout 120 qemu-system-arm -machine mps2-an386 -cpu cortex-m4 -display none -monitor none \
    -serial none -semihosting-config enable=on,target=native -kernel "$work/fw.elf" \
    -device "loader,file=$2,addr=0x21000000" >"$log.frames" || status=$?
  "$decoder" -e "$work/fw.elf" <"$log.frames" >"$log" 2>&1 || fail "$1: nrtucode-defmt could not decode the log"
  sed "s/^/    [$1] /" "$log"
  echo "    [$1] exit status $status"
  [[ $status == 0 || $status == 1 ]] || fail "$1: exit status $status (2: panic, 3: fault, 124: hang)"
}
count() { grep -c -- "$1" "$work/$2.log" || true; }
expect() { # NAME STATUS: the exit status
  [[ $status == "$2" ]] || fail "$1: exit status $status, want $2"
}
refused() { # NAME ERROR: refused as a whole, nothing loaded
  expect "$1" 1
  grep -q "ERROR partition at 0x21000000 refused: $2" "$work/$1.log" || fail "$1: no 'refused: $2' line"
  [[ $(count ' verified: ' "$1") == 0 ]] || fail "$1: something loaded from a refused partition"
}
pack() { # OUT ARGS...: the fixtures, signed with the test key unless told otherwise
  local out=$1
  shift
  "$nrtucode" pack -o "$out" "$@" >/dev/null
}
# offset NAME LINE-PATTERN: the partition offset and stored length a verified line names.
offset() {
  sed -nE "s/.*$2 verified: .* at partition offset (0x[0-9a-f]+), [a-z]+, ([0-9]+) bytes stored$/\1 \2/p" "$work/$1.log"
}
flip() { # IN OUT OFFSET: every bit of one byte inverted
  python3 - "$@" <<'PY'
import sys
src, dst, at = sys.argv[1], sys.argv[2], int(sys.argv[3], 0)
data = bytearray(open(src, "rb").read())
data[at] ^= 0xFF
open(dst, "wb").write(data)
PY
}

key=keys/test-ed25519.pem
pack "$work/intact.part" --fixtures full --key "$key" --security-counter 1
pack "$work/deflate.part" --fixtures full --key "$key" --security-counter 1 --compress deflate

echo "== examples/bare-metal --no-default-features --features qemu,partition,deflate"
build qemu,partition,deflate

boot intact "$work/intact.part"
expect intact 0
grep -q "INFO  partition at 0x21000000: .* class full, security counter 1 (minimum 1), source Fixtures, signature ok" \
  "$work/intact.log" || fail "intact: no 'signature ok' line"
[[ $(count ' verified: ' intact) == 4 ]] || fail "intact: want 4 verified"
grep -q "engine ready: 4 of 4 images loaded" "$work/intact.log" || fail "intact: no 'engine ready' line"

boot deflate "$work/deflate.part"
expect deflate 0
[[ $(count ', deflate, ' deflate) == 2 ]] || fail "deflate: want both tables decoded from deflate"
grep -q "engine ready: 4 of 4 images loaded" "$work/deflate.log" || fail "deflate: no 'engine ready' line"

read -r at len < <(offset intact "image CAYMAN_NX_ACT Perf IRAM")
flip "$work/intact.part" "$work/blob.part" $((at + len / 2))
boot blob "$work/blob.part"
expect blob 1
grep -q "ERROR image CAYMAN_NX_ACT Perf IRAM: verification failed: Load(DigestMismatch" "$work/blob.log" ||
  fail "blob: no DigestMismatch naming IRAM"
[[ $(count 'verification failed' blob) == 1 && $(count ' verified: ' blob) == 3 ]] ||
  fail "blob: want IRAM failed and the other three loaded"

read -r at len < <(offset deflate "hwdecode table CAYMAN_NX_ACT Perf TABLE")
flip "$work/deflate.part" "$work/zblob.part" $((at + len / 2))
boot zblob "$work/zblob.part"
expect zblob 1
grep -qE "ERROR hwdecode table CAYMAN_NX_ACT Perf TABLE: verification failed: Load\((Decode|DigestMismatch)" \
  "$work/zblob.log" || fail "zblob: the flipped deflate table was not refused"
[[ $(count 'verification failed' zblob) == 1 && $(count ' verified: ' zblob) == 3 ]] ||
  fail "zblob: want TABLE failed and the other three loaded"

# A byte of the signed tables: the digest of table-of-contents entry 0 (parse does not read it).
desc_count=$(python3 -c 'import sys; d=open(sys.argv[1],"rb").read(0x4c); print(int.from_bytes(d[0x4a:0x4c],"little"))' "$work/intact.part")
flip "$work/intact.part" "$work/table.part" $((248 + 20 * desc_count + 304 + 16))
boot table "$work/table.part"
refused table BadSignature

"$nrtucode" key generate -o "$work/other.pem" >/dev/null
pack "$work/other.part" --fixtures full --key "$work/other.pem" --security-counter 1
boot other-key "$work/other.part"
refused other-key "UnknownKey"

pack "$work/rollback.part" --fixtures full --key "$key" --security-counter 0
boot rollback "$work/rollback.part"
refused rollback "Rollback { found: 0, minimum: 1 }"

head -c 4096 "$work/intact.part" >"$work/cut-tables.part"
boot cut-tables "$work/cut-tables.part"
expect cut-tables 1
grep -q "ERROR partition at 0x21000000 refused: " "$work/cut-tables.log" || fail "cut-tables: not refused"
[[ $(count ' verified: ' cut-tables) == 0 ]] || fail "cut-tables: something loaded"

read -r at len < <(offset intact "image CAYMAN_NX_ACT Perf IRAM")
head -c $((at + len / 2)) "$work/intact.part" >"$work/cut-blobs.part"
boot cut-blobs "$work/cut-blobs.part"
expect cut-blobs 1
grep -q "signature ok" "$work/cut-blobs.log" || fail "cut-blobs: the tables (before the cut) should verify"
[[ $(count ' verified: ' cut-blobs) == 0 && $(count 'verification failed: Load(DigestMismatch' cut-blobs) == 4 ]] ||
  fail "cut-blobs: want the four items after the cut failed"

python3 -c 'import sys; open(sys.argv[1], "wb").write(b"\xff" * 65536)' "$work/erased.part"
boot erased "$work/erased.part"
refused erased Erased

pack "$work/front.part" --fixtures front --key "$key" --security-counter 1
boot front "$work/front.part"
refused front "WrongClass { found: Front, expected: Full }"

echo "== examples/bare-metal --no-default-features --features qemu,partition (copy-verify only)"
build qemu,partition
boot stored-only "$work/intact.part"
expect stored-only 0
grep -q "engine ready: 4 of 4 images loaded" "$work/stored-only.log" || fail "stored-only: no 'engine ready' line"
boot no-decoder "$work/deflate.part"
expect no-decoder 1
[[ $(count 'verification failed: Resolve(NotStored' no-decoder) == 2 && $(count ' verified: ' no-decoder) == 2 ]] ||
  fail "no-decoder: want the images loaded and both compressed tables NotStored"

echo "== the template README's three commands, as written"
block=$(python3 - examples/bare-metal/README.md <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
start = next(i for i, l in enumerate(lines) if l.startswith("<!-- partition-walkthrough:"))
assert lines[start + 1] == "```sh", "the partition-walkthrough marker is not followed by an sh block"
end = next(i for i in range(start + 2, len(lines)) if lines[i] == "```")
print("\n".join(lines[start + 2:end]))
PY
)
cargo run --quiet --release --locked -p nrtucode-lookalike -- --library full --out "$work/vendor" --build >/dev/null
if ! VENDOR_LIB=$work/vendor/libnrtucode_internal.so PART=$work/nrtucode.part \
  bash -euo pipefail -c "$block" >"$work/walk.log" 2>"$work/walk.err"; then
  tail -n 30 "$work/walk.err" >&2
  fail "the README's three commands failed (above: the end of their stderr)"
fi
sed 's/^/    [walkthrough] /' "$work/walk.log"
grep -q "INFO  partition at 0x21000000: .* source BuildId(.*), signature ok" "$work/walk.log" ||
  fail "walkthrough: the partition of the look-alike was not verified"
grep -q "INFO  engine ready: 4 of 4 images loaded" "$work/walk.log" || fail "walkthrough: the engine did not come up"
echo "qemu-partition.sh: the partition loads (stored and deflate); a flipped blob, deflate or table byte, another key, a downgrade, truncation, erased flash and the wrong class are refused; no hang, no fault"
