#!/usr/bin/env bash
# Checks scripts/install-c.sh the way a C user uses the library: installs into a temporary
# prefix (cargo's output in a non-default CARGO_TARGET_DIR), builds and runs a C program with
# `pkg-config --cflags --libs nrtucode`, then again with `pkg-config --static` against the
# archive alone (the shared libraries removed from the prefix). A DESTDIR install lands under
# DESTDIR with a .pc that names the prefix. Linux only.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
fail() { echo "install-c-check.sh: $*" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CARGO_TARGET_DIR="$root/target/install-c-check"
program=crates/nrtucode-capi/tests/c/installed.c
want=$(python3 -c 'import csv, sys
rows = csv.DictReader(open(sys.argv[1]), delimiter="\t")
print(next(int(r["size"], 16) for r in rows if r["symbol"] == "CAYMAN_NX_ACT_PERF_IRAM_get"))' \
  crates/nrtucode-facts/tables/getters.tsv)

# A staged install: everything under DESTDIR, the .pc naming the prefix.
DESTDIR="$work/stage" bash scripts/install-c.sh --prefix /opt/nrtucode >/dev/null
for file in include/nrtucode/nrtucode.h lib/libnrtucode.a lib/libnrtucode.so.0 lib/libnrtucode.so \
  lib/pkgconfig/nrtucode.pc; do
  [[ -e $work/stage/opt/nrtucode/$file ]] || fail "DESTDIR install lacks $file"
done
grep -qx 'prefix=/opt/nrtucode' "$work/stage/opt/nrtucode/lib/pkgconfig/nrtucode.pc" ||
  fail "the staged nrtucode.pc does not name the prefix /opt/nrtucode"

# A real prefix: the shared library, its SONAME and development link, the C program.
prefix="$work/prefix"
bash scripts/install-c.sh --prefix "$prefix"
lib="$prefix/lib"
# Both links name the versioned file, as cargo-c's `cargo cinstall` makes them.
[[ $(readlink "$lib/libnrtucode.so") == libnrtucode.so.0.* ]] || fail "libnrtucode.so is not a link to the versioned file"
[[ $(readlink "$lib/libnrtucode.so.0") == libnrtucode.so.0.* ]] || fail "libnrtucode.so.0 is not a link to the versioned file"
readelf -dW "$lib/libnrtucode.so.0" | grep -q '(SONAME).*\[libnrtucode.so.0\]' || fail "SONAME is not libnrtucode.so.0"
export PKG_CONFIG_PATH="$lib/pkgconfig"
pkg-config --exists nrtucode || fail "pkg-config does not find nrtucode"

# shellcheck disable=SC2046 # pkg-config's output is a list of flags
cc -std=c99 -Wall -Wextra -Werror "$program" -o "$work/app-shared" \
  $(pkg-config --cflags --libs nrtucode) -Wl,-rpath,"$lib"
readelf -dW "$work/app-shared" | grep -q '(NEEDED).*\[libnrtucode.so.0\]' || fail "the program does not need libnrtucode.so.0"
got=$("$work/app-shared")
[[ $got == "$want" ]] || fail "shared: the program printed '$got', the facts say $want"

# The archive alone: no shared library left where the linker looks.
rm "$lib"/libnrtucode.so*
# shellcheck disable=SC2046
cc -std=c99 -Wall -Wextra -Werror "$program" -o "$work/app-static" \
  $(pkg-config --static --cflags --libs nrtucode)
! readelf -dW "$work/app-static" | grep -q 'NEEDED.*nrtucode' || fail "the static program still needs a shared nrtucode"
got=$("$work/app-static")
[[ $got == "$want" ]] || fail "static: the program printed '$got', the facts say $want"
echo "install-c-check.sh: shared and static C programs built with pkg-config resolve $want bytes"
