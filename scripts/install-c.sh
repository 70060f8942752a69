#!/usr/bin/env bash
# Installs the C library (crates/nrtucode-capi) the way cargo-c's `cargo cinstall` lays it out,
# from names in that crate's [package.metadata.capi]:
#
#   scripts/install-c.sh --prefix DIR [--libdir DIR] [--includedir DIR] [--front] [--force] [--uninstall]
#
#   $DESTDIR$includedir/nrtucode/nrtucode.h
#   $DESTDIR$libdir/libnrtucode.so.<version>   SONAME libnrtucode.so.0
#   $DESTDIR$libdir/libnrtucode.so.0 -> libnrtucode.so.<version>
#   $DESTDIR$libdir/libnrtucode.so   -> libnrtucode.so.<version>   (the development link)
#   $DESTDIR$libdir/libnrtucode.a
#   $DESTDIR$libdir/pkgconfig/nrtucode.pc   (prefix DIR, not DESTDIR; Libs.private for --static)
#   $DESTDIR$prefix/share/nrtucode/install-manifest.tsv   (what was installed: --uninstall reads it)
#
# It never replaces a file it did not install: before writing anything it checks every path
# above, and one that exists and is neither listed, unchanged, in the manifest of an earlier
# install nor identical to what it would write (the vendor's front library is also called
# libnrtucode.so) stops the install, naming the file; nothing is changed. --force replaces such
# files. --uninstall removes what the manifest lists, except a file changed since (kept, named).
# DESTDIR (environment) stages the install for packaging; --libdir and --includedir default to
# DIR/lib and DIR/include, and a relative one is taken under DIR. --front builds the vendor's
# reduced front selection. CARGO_TARGET_DIR and the other cargo settings are honoured.
# Everything is built and checked first; only then are the files renamed into place, so a failed
# build, a bad argument or a foreign file installs nothing. Linux (ELF) only.
set -euo pipefail

usage() {
  sed -n '5p' "$0" | sed 's/^#   /usage: /' >&2
  exit 64
}
die() { echo "install-c.sh: $1" >&2; exit "${2:-1}"; }

prefix="" libdir="" includedir="" features=() force=0 uninstall=0
while (($#)); do
  case $1 in
    --prefix) (($# >= 2)) || usage; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --libdir) (($# >= 2)) || usage; libdir=$2; shift 2 ;;
    --libdir=*) libdir=${1#*=}; shift ;;
    --includedir) (($# >= 2)) || usage; includedir=$2; shift 2 ;;
    --includedir=*) includedir=${1#*=}; shift ;;
    --front) features=(--no-default-features --features front); shift ;;
    --force) force=1; shift ;;
    --uninstall) uninstall=1; shift ;;
    -h | --help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
manifest="$prefix/share/nrtucode/install-manifest.tsv"
manifest_magic="# nrtucode install-c.sh manifest v1"

# What a path holds, to compare with the manifest and with what would be written: a link's
# target, a regular file's SHA-256.
fingerprint() {
  if [[ -L $1 ]]; then
    echo "link:$(readlink "$1")"
  elif [[ -f $1 ]]; then
    echo "sha256:$(sha256sum <"$1" | cut -d' ' -f1)"
  else
    echo "other"
  fi
}
# The SONAME of ELF file $1 (nothing when it has none), read from its dynamic segment with od
# (coreutils), so that the install needs no binutils; fails when $1 is not an ELF file.
elf_soname() {
  local f=$1 endian width
  [[ -f $f && $(od -An -tx1 -N4 "$f" 2>/dev/null | tr -d ' \n') == 7f454c46 ]] || return 1
  case $(od -An -tu1 -j4 -N2 "$f" | tr -s ' ' | sed 's/^ //; s/ $//') in
    "1 1") width=4 endian=little ;; "1 2") width=4 endian=big ;;
    "2 1") width=8 endian=little ;; "2 2") width=8 endian=big ;;
    *) return 0 ;;
  esac
  elf_num() { od -An -v --endian="$endian" -tu"$2" -j "$1" -N "$2" "$f" 2>/dev/null | tr -d ' \n'; }
  local phoff phentsize phnum
  if ((width == 8)); then
    phoff=$(elf_num 32 8) phentsize=$(elf_num 54 2) phnum=$(elf_num 56 2)
  else
    phoff=$(elf_num 28 4) phentsize=$(elf_num 42 2) phnum=$(elf_num 44 2)
  fi
  # Program headers: the loadable segments (to map an address to a file offset) and the
  # dynamic one.
  local i h type offset vaddr filesz loads="" dynamic=""
  for ((i = 0; i < ${phnum:-0}; i++)); do
    h=$((phoff + i * phentsize))
    type=$(elf_num "$h" 4)
    if ((width == 8)); then
      offset=$(elf_num $((h + 8)) 8) vaddr=$(elf_num $((h + 16)) 8) filesz=$(elf_num $((h + 32)) 8)
    else
      offset=$(elf_num $((h + 4)) 4) vaddr=$(elf_num $((h + 8)) 4) filesz=$(elf_num $((h + 16)) 4)
    fi
    case ${type:-0} in
      1) loads+="${offset:-0} ${vaddr:-0} ${filesz:-0}"$'\n' ;;
      2) dynamic="${offset:-0} ${filesz:-0}" ;;
    esac
  done
  [[ -n $dynamic ]] || return 0
  # The dynamic entries (tag, value): DT_STRTAB (5) is an address, DT_SONAME (14) an offset in it.
  local tag value strtab="" soname="" entries
  entries=$(od -An -v --endian="$endian" -tu"$width" -j "${dynamic% *}" -N "${dynamic#* }" "$f" 2>/dev/null)
  # shellcheck disable=SC2086 # the numbers, one word each
  set -- $entries
  while (($# >= 2)); do
    tag=$1 value=$2
    shift 2
    case $tag in 0) break ;; 5) strtab=$value ;; 14) soname=$value ;; esac
  done
  [[ -n $strtab && -n $soname ]] || return 0
  local at=""
  while read -r offset vaddr filesz; do
    [[ -n $offset ]] || continue
    if ((strtab >= vaddr && strtab < vaddr + filesz)); then at=$((strtab - vaddr + offset + soname)); fi
  done <<<"$loads"
  [[ -n $at ]] || return 0
  dd if="$f" bs=1 skip="$at" count=256 2>/dev/null | tr '\0' '\n' | sed -n 1p
}
# What a path is, for a refusal.
describe() {
  local soname
  if [[ -L $1 ]]; then
    echo "a link to '$(readlink "$1")'"
  elif [[ -f $1 ]] && soname=$(elf_soname "$1"); then
    echo "an ELF file with SONAME '${soname:-none}'"
  elif [[ -d $1 ]]; then
    echo "a directory"
  else
    echo "a file"
  fi
}
# The earlier install's manifest: path -> fingerprint.
declare -A recorded=()
if [[ -f $destdir$manifest ]]; then
  [[ $(head -n 1 "$destdir$manifest") == "$manifest_magic" ]] ||
    die "$destdir$manifest is not an install-c.sh manifest; nothing was changed"
  while IFS=$'\t' read -r print path; do
    [[ $print == "#"* || -z $path ]] || recorded[$path]=$print
  done <"$destdir$manifest"
fi

if ((uninstall)); then
  [[ -f $destdir$manifest ]] || die "no install manifest at $destdir$manifest: nothing installed under $prefix"
  kept=0
  for path in "${!recorded[@]}"; do
    file="$destdir$path"
    [[ -e $file || -L $file ]] || continue
    if [[ $(fingerprint "$file") == "${recorded[$path]}" ]] || ((force)); then
      rm -f "$file"
    else
      echo "install-c.sh: kept $file: changed since install-c.sh installed it (--force removes it)" >&2
      kept=1
    fi
  done
  if ((kept)); then die "uninstall incomplete; the manifest $destdir$manifest stays"; fi
  rm -f "$destdir$manifest"
  # The directories of our own name, once empty.
  rmdir "$destdir$prefix/share/nrtucode" "$destdir$includedir/nrtucode" 2>/dev/null || true
  echo "install-c.sh: removed what the manifest listed under $destdir$prefix"
  exit 0
fi

cd "$(dirname "$0")/.."
crate=crates/nrtucode-capi
# The names, from the crate's manifest (cargo-c's keys, each a one-line TOML string in its
# table); its version from cargo (the manifest inherits the workspace's).
capi_key() { # table key
  sed -n "/^\[package\.metadata\.capi\.$1\]\$/,/^\[/s/^$2 *= *\"\(.*\)\"\$/\1/p" "$crate/Cargo.toml" | sed -n 1p
}
name=$(capi_key library name)
header_subdir=$(capi_key header subdirectory)
description=$(capi_key pkg_config description)
pkgid=$(cargo pkgid --quiet -p nrtucode-capi) || die "cargo pkgid failed"
version=${pkgid##*[#@]}
[[ -n $name && -n $header_subdir && -n $description && $version =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] ||
  die "cannot read [package.metadata.capi] and the version of $crate/Cargo.toml (library '$name', header subdirectory '$header_subdir', version '$version')"
major=${version%%.*}
soname="lib$name.so.$major"

# Build the archive and the shared library, asking rustc what a static link needs (cargo
# replays rustc's note when the crate is already built).
target_dir=$(cargo metadata --format-version 1 --no-deps |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
[[ -n $target_dir ]] || die "cargo metadata names no target directory"
build_log=$(cargo rustc --release --locked -p nrtucode-capi --lib "${features[@]}" \
  --crate-type staticlib,cdylib -- --print native-static-libs 2>&1) ||
  { printf '%s\n' "$build_log" >&2; die "cargo build failed"; }
native_libs=$(sed -n 's/^note: native-static-libs: //p' <<<"$build_log" | tail -n 1)
[[ -n $native_libs ]] || { printf '%s\n' "$build_log" >&2; die "rustc did not report native-static-libs"; }
# -lgcc_s is the shared unwinder, which no `cc -static` link can take; the compiler driver
# links an unwinder by itself (libgcc_s for a dynamic program, libgcc_eh with -static).
native_libs=$(sed -E 's/(^| )-lgcc_s( |$)/\1/; s/  +/ /g; s/^ //; s/ $//' <<<"$native_libs")
archive="$target_dir/release/libnrtucode_capi.a"
shared="$target_dir/release/libnrtucode_capi.so"
[[ -f $archive && -f $shared ]] || die "cargo did not produce $archive and $shared"
built_soname=$(elf_soname "$shared") || die "$shared is not an ELF file"
[[ $built_soname == "$soname" ]] || die "$shared has SONAME '$built_soname', expected $soname"

# Everything to install, in a private directory first (outside the prefix).
work=$(mktemp -d)
stage=""
trap 'rm -rf "$work" ${stage:+"$stage"}' EXIT
install -m 644 "$crate/include/nrtucode.h" "$work/nrtucode.h"
install -m 644 "$archive" "$work/lib$name.a"
install -m 755 "$shared" "$work/lib$name.so.$version"
ln -s "lib$name.so.$version" "$work/$soname"
ln -s "lib$name.so.$version" "$work/lib$name.so" # the development link, as cargo-c makes it
# shellcheck disable=SC2016 # ${prefix} is pkg-config's variable, written as is
pc_path() { # a pkg-config variable for $1 relative to prefix where it lies under it
  case $1 in "$prefix") echo '${prefix}' ;; "$prefix"/*) echo "\${prefix}/${1#"$prefix"/}" ;; *) echo "$1" ;; esac
}
cat >"$work/$name.pc" <<PC
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

# Where each file goes (absolute, without DESTDIR).
declare -A dest=(
  [nrtucode.h]="$includedir/$header_subdir/nrtucode.h"
  ["$name.pc"]="$libdir/pkgconfig/$name.pc"
  ["lib$name.a"]="$libdir/lib$name.a"
  ["lib$name.so.$version"]="$libdir/lib$name.so.$version"
  ["$soname"]="$libdir/$soname"
  ["lib$name.so"]="$libdir/lib$name.so"
)
order=(nrtucode.h "$name.pc" "lib$name.a" "lib$name.so.$version" "$soname" "lib$name.so")

# Refuse before writing anything: a path that exists and is not ours.
refused=0
for file in "${order[@]}"; do
  path=${dest[$file]}
  target="$destdir$path"
  [[ -e $target || -L $target ]] || continue
  now=$(fingerprint "$target")
  [[ $now == "${recorded[$path]:-}" || $now == "$(fingerprint "$work/$file")" ]] && continue
  if ((force)); then
    echo "install-c.sh: --force: replacing $target ($(describe "$target"))" >&2
    continue
  fi
  if [[ -d $target ]]; then die "$target is a directory; nothing was changed"; fi
  if [[ -n ${recorded[$path]:-} ]]; then
    why="changed since install-c.sh installed it (its manifest $destdir$manifest records ${recorded[$path]})"
  else
    why="which install-c.sh did not install (not in its manifest $destdir$manifest)"
  fi
  echo "install-c.sh: refusing to replace $target: it is $(describe "$target"), $why" >&2
  refused=1
done
if ((refused)); then
  die "nothing was changed; install into another --prefix (or --libdir), or pass --force to replace these files"
fi
[[ ! -d "$destdir$manifest" ]] || die "$destdir$manifest is a directory; nothing was changed"

# The manifest: what this install writes, plus what an earlier one wrote elsewhere and is
# still as it left it (an older versioned library), so --uninstall removes both.
{
  echo "$manifest_magic"
  for file in "${order[@]}"; do
    printf '%s\t%s\n' "$(fingerprint "$work/$file")" "${dest[$file]}"
  done
  for path in "${!recorded[@]}"; do
    for file in "${order[@]}"; do
      if [[ ${dest[$file]} == "$path" ]]; then continue 2; fi
    done
    if [[ $(fingerprint "$destdir$path") == "${recorded[$path]}" ]]; then
      printf '%s\t%s\n' "${recorded[$path]}" "$path"
    fi
  done
} >"$work/install-manifest.tsv"

# Stage every library file beside its destination (same file system), then rename each into
# place; the header, the .pc and the manifest go to directories of their own: copy each to a
# temporary name there, then rename it.
mkdir -p "$destdir$libdir/pkgconfig" "$destdir$includedir/$header_subdir" "$destdir${manifest%/*}"
stage=$(mktemp -d "$destdir$libdir/.nrtucode-install.XXXXXX")
for file in "lib$name.a" "lib$name.so.$version" "$soname" "lib$name.so"; do
  cp -P --preserve=mode "$work/$file" "$stage/$file"
done
place() { # file destination-dir
  local tmp
  tmp=$(mktemp "$2/.$(basename "$1").XXXXXX")
  if ! { cat "$1" >"$tmp" && chmod 644 "$tmp" && mv -fT "$tmp" "$2/$(basename "$1")"; }; then
    rm -f "$tmp"
    return 1
  fi
}
place "$work/nrtucode.h" "$destdir$includedir/$header_subdir"
place "$work/$name.pc" "$destdir$libdir/pkgconfig"
for file in "lib$name.a" "lib$name.so.$version" "$soname" "lib$name.so"; do
  mv -fT "$stage/$file" "$destdir$libdir/$file"
done
place "$work/install-manifest.tsv" "$destdir${manifest%/*}"
echo "install-c.sh: installed lib$name ($version, SONAME $soname) under $destdir$prefix; manifest $destdir$manifest"
