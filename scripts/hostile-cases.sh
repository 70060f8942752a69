#!/usr/bin/env bash
# Issue 20's hostile and unlucky cases, run against an `nrtucode` binary; prints one line per
# case (exit codes, what was left, what was said). Needs root for the device-node cases (mknod)
# and gcc for the look-alike. Usage: scripts/hostile-cases.sh [NRTUCODE] (default: a fresh
# debug build). The figures in docs/carve.md and the issue-20 report come from this script.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
if [ $# -ge 1 ]; then BIN=$(realpath "$1"); else cargo build -q -p nrtucode-cli; BIN=$repo/target/debug/nrtucode; fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cargo run -q -p nrtucode-lookalike -- --library full --out "$W/la" --build >/dev/null
LIB=$W/la/libnrtucode_internal.so
# Hand-made variants: .rodata's sh_offset / sh_addr / sh_size moved; a getter symbol holding
# a tab, a newline, or a newline that forges a header line.
python3 - "$LIB" "$W" <<'PY'
import struct, sys
src, out = sys.argv[1], sys.argv[2]
data = open(src, 'rb').read()
def rodata(d):
    shoff, = struct.unpack_from('<Q', d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', d, 0x3a)
    stroff, = struct.unpack_from('<Q', d, shoff + shstrndx * shentsize + 0x18)
    for i in range(shnum):
        h = shoff + i * shentsize
        name, = struct.unpack_from('<I', d, h)
        if d[stroff + name:d.index(b'\0', stroff + name)] == b'.rodata':
            return h
for mode, field, delta in [('offset', 0x18, 0x40), ('addr', 0x10, 0x40), ('size', 0x20, 0x4000)]:
    d = bytearray(data); h = rodata(d) + field
    v, = struct.unpack_from('<Q', d, h); struct.pack_into('<Q', d, h, v + delta)
    open(f'{out}/lib-{mode}.so', 'wb').write(d)
old = b'CAYMAN_NX_ACT_PERF_IRAM_get\0'
for mode, new in [('tab', b'CAYMAN_NX_ACT_PERF_IRAM\tget'), ('newline', b'CAYMAN_NX_ACT_PERF_IRAM\nget'),
                  ('forge', b'X\n# build_id\tforged00000000')]:
    open(f'{out}/lib-{mode}.so', 'wb').write(data.replace(old, new + b'\0'))
PY
cd "$W"
$BIN carve $LIB --out good >/dev/null 2>&1
# 1: section header offset/addr/size off from its segment
for m in offset addr size; do
  $BIN carve $W/lib-$m.so --out s1-$m >/dev/null 2>e1; rc=$?
  wrong=NA; [ -f s1-$m/manifest.tsv ] && wrong=$(diff <(cut -f1,8 good/manifest.tsv|sort) <(cut -f1,8 s1-$m/manifest.tsv|sort) | grep -c '^>')
  $BIN verify s1-$m >/dev/null 2>&1; v=$?
  echo "1.$m carve exit $rc, rows with other bytes $wrong, verify exit $v: $(head -c 200 e1)"
done
# 2: duplicate rows: verify vs build
cp -r good s2; row=$(grep '^CAYMAN_NX_ACT_PROF_TABLE_get' s2/manifest.tsv)
other=$(awk -F'\t' -v s="$(echo "$row"|cut -f7)" '$7==s && $1!="CAYMAN_NX_ACT_PROF_TABLE_get"{print; exit}' s2/manifest.tsv)
if [ -n "$other" ]; then
  fake=$(echo "$row" | awk -F'\t' -v o="$other" 'BEGIN{split(o,a,"\t")} {OFS="\t"; $8=a[8]; $10=a[10]; print}')
  awk -v f="$fake" '/^CAYMAN_NX_ACT_PROF_TABLE_get/{print f} {print}' s2/manifest.tsv > m && mv m s2/manifest.tsv
fi
$BIN verify s2 >/dev/null 2>e2; v=$?
(cd "$repo" && NRTUCODE_BLOB_DIR=$W/s2 CARGO_TARGET_DIR="$repo/target/hostile-cases" timeout 300 cargo check -q -p nrtucode 2>$W/b2); b=$?
echo "2 verify exit $v ($(grep -m1 error e2)); build exit $b ($(grep -m1 -o 'error.*' b2 | head -c 200))"
# 3: forged one-row manifest naming a user's file
mkdir s3; echo thesis > s3/thesis.doc
{ head -6 good/manifest.tsv; printf 'X_get\tCAYMAN\tNX\tACT\tPERF\tIRAM\t7\t%s\t0x1\tthesis.doc\n' $(sha256sum s3/thesis.doc|cut -c1-64); } > s3/manifest.tsv
$BIN carve $LIB --out s3 >/dev/null 2>e3; rc=$?
echo "3 carve exit $rc, thesis.doc $( [ -f s3/thesis.doc ] && echo kept || echo GONE): $(head -c 200 e3)"
# 4: resolve -o onto a char device, FIFO, symlink, /dev/full copy, closed stdout
mknod null4 c 1 3; mknod full4 c 1 7; mkfifo fifo4; echo keep > target4; ln -s target4 link4
$BIN resolve 7 iram -o null4 >/dev/null 2>e4; echo "4.chardev exit $? now $(stat -c %F null4)"
(cat fifo4 > fifo4.out &) ; timeout 10 $BIN resolve 7 iram -o fifo4 >/dev/null 2>e4; echo "4.fifo exit $? now $(stat -c %F fifo4), reader got $(sleep 0.5; stat -c %s fifo4.out 2>/dev/null) bytes"
$BIN resolve 7 iram -o link4 >/dev/null 2>e4; echo "4.symlink exit $? now $(stat -c %F link4), target $(stat -c %s target4) bytes"
$BIN resolve 7 iram -o full4 >/dev/null 2>e4; echo "4.full exit $? now $(stat -c %F full4): $(head -c 150 e4)"
$BIN list >&- 2>e4; echo "4.closed-stdout list exit $?: $(head -c 150 e4)"
$BIN resolve 7 iram -o - >&- 2>e4; echo "4.closed-stdout resolve -o - exit $?: $(head -c 150 e4)"
# 5: non-regular inputs
mkfifo fifo5; timeout 5 $BIN carve fifo5 --out s5 >/dev/null 2>e5; echo "5.carve-fifo exit $? (124 = hung), staging left: $(ls -A | grep -c tmp)"
cp -r good s5b; f=$(ls s5b/*.bin | head -1); rm $f; mkfifo $f; timeout 5 $BIN verify s5b >/dev/null 2>e5; echo "5.verify-fifo-blob exit $?: $(grep -m1 error e5 | head -c 150)"
cp -r good s5c; rm s5c/manifest.tsv; ln -s /dev/zero s5c/manifest.tsv
( ulimit -v 2000000; timeout 20 $BIN verify s5c >/dev/null 2>e5 ); echo "5.manifest-dev-zero exit $? (under a 2 GB ulimit, 124 = still running): $(head -c 150 e5)"
cp -r good s5d; f=$(ls -S s5d/*.bin | head -1); truncate -s 2G $f
/usr/bin/time -f "%M KB %e s" timeout 60 $BIN verify s5d >/dev/null 2>e5; echo "5.sparse-2G verify: $(tail -1 e5) $(grep -m1 error e5 | head -c 150)"
# 6: symbols the manifest cannot hold
for m in tab newline forge; do
  $BIN carve $W/lib-$m.so --out s6-$m >/dev/null 2>e6; rc=$?
  $BIN verify s6-$m >/dev/null 2>v6; v=$?
  $BIN carve $LIB --out s6-$m >/dev/null 2>r6; r=$?
  echo "6.$m carve exit $rc ($(grep -m1 error e6 | head -c 150)); verify exit $v ($(grep -m1 error v6 | head -c 100)); re-carve exit $r"
done
# 7: signals and SIGKILL (kill as soon as a staging directory exists)
waitstage() { while kill -0 $1 2>/dev/null; do ls -A "$2" 2>/dev/null | grep -q '^\.nrtucode\|tmp-' && return 0; done; return 1; }
for sig in KILL HUP QUIT USR1 USR2 ALRM TERM INT; do
  left=0; refused=0; said=0; codes=""
  for i in $(seq 10); do
    rm -rf s7; mkdir s7; $BIN carve $LIB --out s7 >/dev/null 2>/dev/null & p=$!; waitstage $p s7 && kill -$sig $p 2>/dev/null; wait $p 2>/dev/null; codes="$codes $?"
    [ -n "$(ls -A s7 | grep '^\.')" ] && left=$((left+1))
    $BIN carve $LIB --out s7 >/dev/null 2>e7 || refused=$((refused+1)); grep -q "interrupted carve left" e7 && said=$((said+1))
  done
  echo "7.$sig into an empty dir: exits$codes; staging left $left/10, next carve refused $refused/10, next carve said it removed one $said/10"
done
left=0; said=0; for i in $(seq 10); do rm -rf s7b; $BIN carve $LIB --out s7b >/dev/null 2>&1 & p=$!; waitstage $p . && kill -KILL $p; wait $p 2>/dev/null; [ -n "$(ls -A | grep '^\.')" ] && left=$((left+1)); $BIN carve $LIB --out s7b >/dev/null 2>e7; grep -q "interrupted carve left" e7 && said=$((said+1)); rm -rf .s7b* .nrtucode*; done
echo "7.KILL beside an absent destination: staging left $left/10, next carve said it removed one $said/10"
# 8: long names and concurrency
long=$(printf 'd%.0s' $(seq 255)); $BIN carve $LIB --out $long >/dev/null 2>e8; echo "8.255-byte name exit $?: $(head -c 120 e8)"
both=0; one=0; for i in 1 2 3 4 5; do rm -rf s8; mkdir s8; $BIN carve $LIB --out s8 >/dev/null 2>e8a & a=$!; $BIN carve $LIB --out s8 >/dev/null 2>e8b & b=$!; wait $a; ra=$?; wait $b; rb=$?
  [ $ra -ne 0 ] && [ $rb -ne 0 ] && both=$((both+1)); [ $((ra==0)) -ne $((rb==0)) ] && one=$((one+1)); done
echo "8.concurrent: both failed $both/5, exactly one won $one/5; loser said: $(cat e8a e8b | grep -m1 error | head -c 200)"
