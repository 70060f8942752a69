#!/usr/bin/env bash
# Installs the C library (crates/nrtucode-capi) the way cargo-c's `cargo cinstall` lays it out,
# from names in that crate's [package.metadata.capi]:
#
#   scripts/install-c.sh --prefix DIR [--libdir DIR] [--includedir DIR] [--front]
#
#   $DESTDIR$includedir/nrtucode/nrtucode.h
#   $DESTDIR$libdir/libnrtucode.so.<version>   SONAME libnrtucode.so.0
#   $DESTDIR$libdir/libnrtucode.so.0 -> libnrtucode.so.<version>
#   $DESTDIR$libdir/libnrtucode.so   -> libnrtucode.so.0   (the development link)
#   $DESTDIR$libdir/libnrtucode.a
#   $DESTDIR$libdir/pkgconfig/nrtucode.pc   (prefix DIR, not DESTDIR; Libs.private for --static)
#
# DESTDIR (environment) stages the install for packaging; --libdir and --includedir default to
# DIR/lib and DIR/include, and a relative one is taken under DIR. --front builds the vendor's
# reduced front selection. CARGO_TARGET_DIR and the other cargo settings are honoured.
# Everything is built and staged first; only then are the files renamed into place, so a failed
# build or a bad argument installs nothing. Linux (ELF) only.
set -euo pipefail

usage() {
  sed -n '5p' "$0" | sed 's/^#   /usage: /' >&2
  exit 64
}
die() { echo "install-c.sh: $1" >&2; exit "${2:-1}"; }

prefix="" libdir="" includedir="" features=()
while (($#)); do
  case $1 in
    --prefix) (($# >= 2)) || usage; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --libdir) (($# >= 2)) || usage; libdir=$2; shift 2 ;;
    --libdir=*) libdir=${1#*=}; shift ;;
    --includedir) (($# >= 2)) || usage; includedir=$2; shift 2 ;;
    --includedir=*) includedir=${1#*=}; shift ;;
    --front) features=(--no-default-features --features front); shift ;;
    -h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install-c.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ -n $prefix ]] || usage
[[ $prefix == /* ]] || die "--prefix must be an absolute path, not '$prefix'" 64
[[ $(uname -s) == Linux ]] || die "only Linux (ELF shared libraries with a SONAME) is supported"
under_prefix() { [[ $1 == /* ]] && echo "$1" || echo "$prefix/$1"; }
libdir=$(under_prefix "${libdir:-lib}")
includedir=$(under_prefix "${includedir:-include}")
destdir=${DESTDIR:-}

cd "$(dirname "$0")/.."
crate=crates/nrtucode-capi
# The names, from the crate's manifest (cargo-c's keys).
read -r name version header_subdir description < <(python3 - "$crate/Cargo.toml" <<'PY'
import sys, tomllib
manifest = tomllib.load(open(sys.argv[1], "rb"))
capi = manifest["package"]["metadata"]["capi"]
version = manifest["package"]["version"]
if isinstance(version, dict):  # version.workspace = true
    version = tomllib.load(open("Cargo.toml", "rb"))["workspace"]["package"]["version"]
print(capi["library"]["name"], version, capi["header"]["subdirectory"],
      capi["pkg_config"]["description"])
PY
)
major=${version%%.*}
soname="lib$name.so.$major"

# Build the archive and the shared library, asking rustc what a static link needs (cargo
# replays rustc's note when the crate is already built).
target_dir=$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
build_log=$(cargo rustc --release --locked -p nrtucode-capi --lib "${features[@]}" \
  --crate-type staticlib,cdylib -- --print native-static-libs 2>&1) ||
  { printf '%s\n' "$build_log" >&2; die "cargo build failed"; }
native_libs=$(sed -n 's/^note: native-static-libs: //p' <<<"$build_log" | tail -n 1)
[[ -n $native_libs ]] || { printf '%s\n' "$build_log" >&2; die "rustc did not report native-static-libs"; }
archive="$target_dir/release/libnrtucode_capi.a"
shared="$target_dir/release/libnrtucode_capi.so"
[[ -f $archive && -f $shared ]] || die "cargo did not produce $archive and $shared"
built_soname=$(readelf -dW "$shared" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ $built_soname == "$soname" ]] || die "$shared has SONAME '$built_soname', expected $soname"

# Stage every file beside its destination (same file system), then rename each into place.
stage_root="$destdir$prefix"
mkdir -p "$destdir$libdir/pkgconfig" "$destdir$includedir/$header_subdir"
stage=$(mktemp -d "$destdir$libdir/.nrtucode-install.XXXXXX")
trap 'rm -rf "$stage"' EXIT
install -m 644 "$crate/include/nrtucode.h" "$stage/nrtucode.h"
install -m 644 "$archive" "$stage/lib$name.a"
install -m 755 "$shared" "$stage/lib$name.so.$version"
ln -s "lib$name.so.$version" "$stage/$soname"
ln -s "lib$name.so.$version" "$stage/lib$name.so" # the development link, as cargo-c makes it
# shellcheck disable=SC2016 # ${prefix} is pkg-config's variable, written as is
pc_path() { # a pkg-config variable for $1 relative to prefix where it lies under it
  case $1 in "$prefix") echo '${prefix}' ;; "$prefix"/*) echo "\${prefix}/${1#"$prefix"/}" ;; *) echo "$1" ;; esac
}
cat >"$stage/$name.pc" <<PC
prefix=$prefix
exec_prefix=\${prefix}
libdir=$(pc_path "$libdir")
includedir=$(pc_path "$includedir")

Name: $name
Description: $description
Version: $version
Libs: -L\${libdir} -l$name
Cflags: -I\${includedir}/$header_subdir
Libs.private: $native_libs
PC

# The header and the .pc go to directories of their own: copy each to a temporary name there,
# then rename it into place.
place() { # staged-file destination-dir
  local tmp
  tmp=$(mktemp "$2/.$(basename "$1").XXXXXX")
  if ! { cat "$1" >"$tmp" && chmod 644 "$tmp" && mv -fT "$tmp" "$2/$(basename "$1")"; }; then
    rm -f "$tmp"
    return 1
  fi
}
place "$stage/nrtucode.h" "$destdir$includedir/$header_subdir"
place "$stage/$name.pc" "$destdir$libdir/pkgconfig"
for file in "lib$name.a" "lib$name.so.$version" "$soname" "lib$name.so"; do
  mv -fT "$stage/$file" "$destdir$libdir/$file"
done
echo "install-c.sh: installed lib$name ($version, SONAME $soname) under $stage_root"
