#!/usr/bin/env bash
# Checks scripts/install-c.sh the way a C user uses the library: installs into a temporary
# prefix (cargo's output in a non-default CARGO_TARGET_DIR) and runs every `cc` line of the
# C-ABI page's install block (docs/c-abi.md) as written, in a directory holding app.c; the
# READMEs' `cc` lines must be among them. The shared program runs without LD_LIBRARY_PATH, the
# `-static` one needs no shared library, the `-Bstatic` one no shared nrtucode. Then: a
# DESTDIR install lands under DESTDIR with a .pc that names the prefix; a foreign
# libnrtucode.so (another SONAME) and a changed link are refused, naming the file, and nothing
# changes; --force replaces them; a reinstall succeeds; --uninstall removes what the manifest
# lists and nothing else. Linux only.
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
snapshot() { (cd "$1" && find . \( -type f -o -type l \) -printf '%p %l %s %m\n' | sort && find . -type f -exec sha256sum {} + | sort); }

# The documented lines: every `cc ` line of the sh blocks of docs/c-abi.md; the READMEs may
# only show some of them.
mapfile -t lines < <(python3 - docs/c-abi.md <<'PY'
import sys
in_sh = False
for line in open(sys.argv[1]):
    if line.startswith("```"):
        in_sh = line.strip() == "```sh"
        continue
    if in_sh and line.startswith("cc "):
        print(line.rstrip("\n"))
PY
)
((${#lines[@]} >= 3)) || fail "docs/c-abi.md shows ${#lines[@]} cc lines, expected the shared, static and archive ones"
for doc in README.md crates/nrtucode-capi/README.md; do
  while IFS= read -r line; do
    command=${line%%  #*}
    found=0
    for documented in "${lines[@]}"; do [[ $command == "$documented" ]] && found=1; done
    ((found)) || fail "$doc shows '$command', which is not a line docs/c-abi.md shows (and this check runs)"
  done < <(grep '^cc ' "$doc")
done

# A staged install: everything under DESTDIR, the .pc naming the prefix.
DESTDIR="$work/stage" bash scripts/install-c.sh --prefix /opt/nrtucode >/dev/null
for file in include/nrtucode/nrtucode.h lib/libnrtucode.a lib/libnrtucode.so.0 lib/libnrtucode.so \
  lib/pkgconfig/nrtucode.pc share/nrtucode/install-manifest.tsv; do
  [[ -e $work/stage/opt/nrtucode/$file ]] || fail "DESTDIR install lacks $file"
done
grep -qx 'prefix=/opt/nrtucode' "$work/stage/opt/nrtucode/lib/pkgconfig/nrtucode.pc" ||
  fail "the staged nrtucode.pc does not name the prefix /opt/nrtucode"

# A real prefix: the shared library, its SONAME and development link.
prefix="$work/prefix"
bash scripts/install-c.sh --prefix "$prefix"
lib="$prefix/lib"
# Both links name the versioned file, as cargo-c's `cargo cinstall` makes them.
[[ $(readlink "$lib/libnrtucode.so") == libnrtucode.so.0.* ]] || fail "libnrtucode.so is not a link to the versioned file"
[[ $(readlink "$lib/libnrtucode.so.0") == libnrtucode.so.0.* ]] || fail "libnrtucode.so.0 is not a link to the versioned file"
readelf -dW "$lib/libnrtucode.so.0" | grep -q '(SONAME).*\[libnrtucode.so.0\]' || fail "SONAME is not libnrtucode.so.0"
export PKG_CONFIG_PATH="$lib/pkgconfig"
pkg-config --exists nrtucode || fail "pkg-config does not find nrtucode"

# Each documented line, as written, in a directory holding app.c; then the program runs.
build="$work/build"
mkdir "$build"
cp "$program" "$build/app.c"
for line in "${lines[@]}"; do
  rm -f "$build/app"
  (cd "$build" && bash -euo pipefail -c "$line") || fail "the documented line failed: $line"
  dynamic=$(readelf -dW "$build/app")
  case $line in
    *" -static "*)
      ! readelf -lW "$build/app" | grep -q INTERP || fail "not static (it has a program interpreter): $line"
      ! grep -q NEEDED <<<"$dynamic" || fail "not static (it needs a shared library): $line" ;;
    *-Bstatic*)
      ! grep -q 'NEEDED.*nrtucode' <<<"$dynamic" || fail "still needs a shared nrtucode: $line" ;;
    *)
      grep -q '(NEEDED).*\[libnrtucode.so.0\]' <<<"$dynamic" || fail "does not need libnrtucode.so.0: $line" ;;
  esac
  got=$(cd "$build" && env -u LD_LIBRARY_PATH ./app) || fail "the program does not run: $line"
  [[ $got == "$want" ]] || fail "the program printed '$got', the facts say $want: $line"
done

# A reinstall over our own install succeeds.
bash scripts/install-c.sh --prefix "$prefix" >/dev/null || fail "a reinstall over our own install was refused"

# A prefix holding the vendor's front library (here: another ELF library, under its file
# name): refused, named, nothing changed; --force replaces it.
vendor="$work/vendor"
mkdir -p "$vendor/lib"
cp "$(cc -print-file-name=libm.so.6)" "$vendor/lib/libnrtucode.so"
before=$(snapshot "$vendor")
if bash scripts/install-c.sh --prefix "$vendor" 2>"$work/err"; then fail "installed over a foreign libnrtucode.so"; fi
grep -q "refusing to replace $vendor/lib/libnrtucode.so: it is an ELF file with SONAME 'libm.so.6'" "$work/err" ||
  fail "the refusal does not name the file and its SONAME: $(cat "$work/err")"
[[ $(snapshot "$vendor") == "$before" ]] || fail "a refused install changed the prefix"
bash scripts/install-c.sh --prefix "$vendor" --force 2>/dev/null >&2 || fail "--force did not install"
[[ $(readlink "$vendor/lib/libnrtucode.so") == libnrtucode.so.0.* ]] || fail "--force did not replace libnrtucode.so"

# A link changed since the install is not ours any more.
ln -sfn libnrtucode.so.0 "$lib/libnrtucode.so"
before=$(snapshot "$prefix")
if bash scripts/install-c.sh --prefix "$prefix" 2>"$work/err"; then fail "replaced a changed link"; fi
grep -q "refusing to replace $lib/libnrtucode.so: it is a link to 'libnrtucode.so.0', changed since" "$work/err" ||
  fail "the refusal does not name the changed link: $(cat "$work/err")"
[[ $(snapshot "$prefix") == "$before" ]] || fail "a refused install changed the prefix"
ln -sfn "$(readlink "$lib/libnrtucode.so.0")" "$lib/libnrtucode.so"

# --uninstall removes what the manifest lists, and nothing else.
touch "$lib/someone-elses.so"
bash scripts/install-c.sh --prefix "$prefix" --uninstall >/dev/null
left=$(cd "$prefix" && find . \( -type f -o -type l \) | sort)
[[ $left == "./lib/someone-elses.so" ]] || fail "--uninstall left or removed the wrong files: $left"
echo "install-c-check.sh: ${#lines[@]} documented cc lines built programs that resolve $want bytes; foreign files refused; uninstall clean"
