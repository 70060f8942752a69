#!/usr/bin/env bash
# Installs the C library (crates/nrtucode-capi) the way cargo-c's `cargo cinstall` lays it out,
# from names in that crate's [package.metadata.capi]:
#
#   scripts/install-c.sh --prefix DIR (--fixtures | --partition | NRTUCODE_BLOB_DIR=D) [--libdir DIR] [--includedir DIR] [--front] [--force] [--uninstall]
#
# Where the installed library's firmware comes from, one of three, said when it is installed:
#   NRTUCODE_BLOB_DIR=D (environment)  the blobs carved by `nrtucode carve` into D, embedded
#                                      (the install names the BuildID of the library they came from);
#   --partition                        none: the drop-in without firmware, whose two functions
#                                      answer from the signed partition file named at run time by
#                                      NRTUCODE_PARTITION, verified with the public key named at
#                                      build time by NRTUCODE_PARTITION_KEY (an absolute path, or
#                                      `test` for keys/test-ed25519.pub.pem, the repository's test
#                                      key, for tests only; none named: refused, nothing changed);
#   --fixtures                         the built-in fixture bytes (each image begins
#                                      "NRTUCODE FIXTURE"): for tests only, never for a device.
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
# files, never a directory (refused, --force or not).
# Paths: --prefix must be absolute; --libdir and --includedir default to DIR/lib and
# DIR/include, and a relative one is taken under DIR. DESTDIR (environment) stages the install
# for packaging; a relative DESTDIR is taken from the caller's working directory. It writes and
# removes only under $DESTDIR$prefix, `..` and symlinks resolved: a --libdir or --includedir
# that leads elsewhere is refused. A path may hold spaces (the .pc escapes them, and pkg-config
# prints them escaped, for a Makefile or `eval` to read back), not control characters nor any
# of $ \ " ' ` # , : ; & | < > ( ) * ? [ ] { } ! ~ (refused).
# --uninstall removes a file the manifest lists only when it lies under $DESTDIR$prefix (`..`
# and symlinks resolved) and is as install-c.sh left it (same SHA-256, same link target); it
# keeps and names any other, and removes the rest. Then the manifest lists the changed files it
# kept under the prefix, or is removed when there are none; the exit status is 1 when anything
# listed was kept. --force has no effect on --uninstall.
# --front builds the vendor's reduced front selection (with --partition: expects a partition
# of the front tables). CARGO_TARGET_DIR and the other cargo
# settings are honoured. Everything is built and checked first, every destination at once;
# only then are the files renamed into place, so a failed build, a bad argument, a foreign file
# or a directory in the way installs nothing. Linux (ELF) only.
set -euo pipefail

usage() {
  sed -n '5p' "$0" | sed 's/^#   /usage: /' >&2
  exit 64
}
die() { echo "install-c.sh: $1" >&2; exit "${2:-1}"; }

prefix="" libdir="" includedir="" front=0 fixtures=0 partition=0 force=0 uninstall=0
while (($#)); do
  case $1 in
    --prefix) (($# >= 2)) || usage; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --libdir) (($# >= 2)) || usage; libdir=$2; shift 2 ;;
    --libdir=*) libdir=${1#*=}; shift ;;
    --includedir) (($# >= 2)) || usage; includedir=$2; shift 2 ;;
    --includedir=*) includedir=${1#*=}; shift ;;
    --front) front=1; shift ;;
    --fixtures) fixtures=1; shift ;;
    --partition) partition=1; shift ;;
    --force) force=1; shift ;;
    --uninstall) uninstall=1; shift ;;
    -h | --help) sed -n '2,/^set -euo pipefail$/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "install-c.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ -n $prefix ]] || usage
[[ $prefix == /* ]] || die "--prefix must be an absolute path, not '$prefix'" 64
[[ $(uname -s) == Linux ]] || die "only Linux (ELF shared libraries with a SONAME) is supported"
# The blob source: exactly one of the three, never fixtures by default.
blob_dir=${NRTUCODE_BLOB_DIR:-}
if ((!uninstall)); then
  sources=$((fixtures + partition + (${#blob_dir} > 0 ? 1 : 0)))
  ((sources == 1)) || die "choose where the library's firmware comes from, one of:
  NRTUCODE_BLOB_DIR=DIR   the blobs carved by 'nrtucode carve' into DIR (docs/carve.md)
  --partition             none in the library: it reads the signed partition named by NRTUCODE_PARTITION at run time
  --fixtures              the built-in fixture bytes, for tests only (never load them into a device)
nothing was changed" 64
fi
features=()
if ((partition)); then
  features=(--no-default-features --features partition)
  ((front)) && export NRTUCODE_PARTITION_CLASS=front
elif ((front)); then
  features=(--no-default-features --features front)
fi
# The firmware bytes of the build, said with the install.
if ((partition)); then
  key=${NRTUCODE_PARTITION_KEY:-}
  [[ -n $key ]] || die "--partition: the library trusts only the key you name: set NRTUCODE_PARTITION_KEY to the absolute path of your public key (nrtucode key public KEY.pem -o KEY.pub.pem), or to 'test' for the repository's test key (tests only: its private half is committed); nothing was changed" 64
  [[ $key == test || $key == /* ]] || die "NRTUCODE_PARTITION_KEY must be an absolute path (or 'test'), not '$key'" 64
  key_name=$key
  [[ $key != test ]] || key_name="keys/test-ed25519.pub.pem, the TEST key of the repository (anyone can sign for it)"
  blob_source="none: partition-backed, reads the signed partition named by NRTUCODE_PARTITION at run time (public key $key_name)"
elif ((fixtures)); then
  blob_source="fixtures: the built-in test bytes (each image begins 'NRTUCODE FIXTURE'), for tests only, never for a device"
elif ((!uninstall)); then
  # A blob directory without a readable manifest says "unknown", not a silent exit.
  build_id=$({ sed -n 's/^# build_id\t//p' "$blob_dir/manifest.tsv" 2>/dev/null || true; } | sed -n 1p)
  blob_source="carved blobs from $blob_dir (BuildID ${build_id:-unknown})"
fi
under_prefix() { [[ $1 == /* ]] && echo "$1" || echo "$prefix/$1"; }
libdir=$(under_prefix "${libdir:-lib}")
includedir=$(under_prefix "${includedir:-include}")
# What the .pc, the manifest (tab-separated lines) and a compiler's command line can hold.
for path in "$prefix" "$libdir" "$includedir"; do
  if [[ $path =~ [[:cntrl:]] || $path == *[\$\\\"\'\`\#,:\;\&\|\<\>\(\)\*\?\[\]\{\}\!~]* ]]; then
    die "'$path' holds a character install-c.sh refuses in a path (a control character or one of \$ \\ \" ' \` # , : ; & | < > ( ) * ? [ ] { } ! ~); nothing was changed" 64
  fi
done
# DESTDIR as the caller meant it: a relative one from the caller's directory (the install
# changes directory to the repository).
destdir=${DESTDIR:-}
[[ -z $destdir || $destdir == /* ]] || destdir="$PWD/$destdir"
manifest="$prefix/share/nrtucode/install-manifest.tsv"
manifest_magic="# nrtucode install-c.sh manifest v1"
# The prefix on disk, `..` and symlinks resolved: everything written or removed lies under it.
root=$(realpath -m -- "$destdir$prefix") || die "cannot resolve $destdir$prefix"

# Whether path $1 (on disk, DESTDIR included) lies under the prefix: its directory, `..` and
# symlinks resolved, is the prefix or below it, and its last component is a name (the file
# itself may be a link: that link is what is written or removed).
inside() {
  local base=${1##*/} dir
  [[ $1 == /* && -n $base && $base != . && $base != .. ]] || return 1
  dir=$(realpath -m -- "${1%/*}/") || return 1
  [[ ${dir%/}/ == "${root%/}"/* ]]
}
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
# The SONAME of ELF file $1 (nothing when it has none, or when its tables are not where a
# library's are), read from its dynamic segment with od (coreutils), so that the install needs
# no binutils; fails when $1 is not an ELF file. Bounded whatever the file says: the program
# header table is read with one od, only when it lies inside the file, its entries have the
# class's size and there are at most 256 of them (PN_XNUM, 65535, is not followed); at most
# 16 KiB of the dynamic segment are read. Every number is read as 32-bit words, a 64-bit one
# composed of two (one above 2^52 counts as absent), so bash's signed arithmetic never wraps.
elf_soname() {
  local f=$1 endian width size
  [[ -f $f && $(od -An -tx1 -N4 "$f" 2>/dev/null | tr -d ' \n') == 7f454c46 ]] || return 1
  case $(od -An -tu1 -j4 -N2 "$f" | tr -s ' ' | sed 's/^ //; s/ $//') in
    "1 1") width=4 endian=little ;; "1 2") width=4 endian=big ;;
    "2 1") width=8 endian=little ;; "2 2") width=8 endian=big ;;
    *) return 0 ;;
  esac
  size=$(wc -c <"$f")
  local -a w
  # words OFFSET BYTES: the 32-bit words there, into w (fewer at the end of the file).
  words() {
    # shellcheck disable=SC2207 # numbers, one word each
    w=($(od -An -v --endian="$endian" -tu4 -j "$1" -N "$2" "$f" 2>/dev/null))
  }
  # num I: into n, the number (of the class's width) at word I of w, or -1.
  num() {
    local a=${w[$1]:--1} b=${w[$1 + 1]:--1}
    [[ $endian == little ]] || ((width == 4)) || { local t=$a; a=$b b=$t; }
    if ((width == 4 || a < 0)); then
      n=$a
    elif ((b >= 0 && b < 1048576)); then
      n=$((b * 4294967296 + a))
    else
      n=-1
    fi
  }
  local n k phoff phentsize phnum
  words 0 64
  # e_phoff; e_ehsize and e_phentsize share word k, e_phnum and e_shentsize word k + 1.
  if ((width == 8)); then num 8; k=13; else num 7; k=10; fi
  phoff=$n
  local a=${w[$k]:-0} b=${w[$k + 1]:-0}
  if [[ $endian == little ]]; then
    phentsize=$((a >> 16)) phnum=$((b & 65535))
  else
    phentsize=$((a & 65535)) phnum=$((b >> 16))
  fi
  ((phoff > 0 && phentsize == (width == 8 ? 56 : 32) && phnum > 0 && phnum <= 256)) || return 0
  ((phoff + phnum * phentsize <= size)) || return 0
  # Program headers: the loadable segments (to map an address to a file offset) and the
  # dynamic one. Words of an entry: type, then (64-bit) flags, offset, vaddr, paddr, filesz or
  # (32-bit) offset, vaddr, paddr, filesz.
  words "$phoff" $((phnum * phentsize))
  local i e offset vaddr filesz load_offset=() load_vaddr=() load_size=() dynamic=-1 dynsize=0
  for ((i = 0; i < phnum; i++)); do
    e=$((i * phentsize / 4))
    if ((width == 8)); then
      num $((e + 2)); offset=$n; num $((e + 4)); vaddr=$n; num $((e + 8)); filesz=$n
    else
      num $((e + 1)); offset=$n; num $((e + 2)); vaddr=$n; num $((e + 4)); filesz=$n
    fi
    ((offset >= 0 && vaddr >= 0 && filesz >= 0)) || continue
    case ${w[$e]:-0} in
      1) load_offset+=("$offset") load_vaddr+=("$vaddr") load_size+=("$filesz") ;;
      2) dynamic=$offset dynsize=$filesz ;;
    esac
  done
  ((dynamic >= 0 && dynamic < size)) || return 0
  ((dynsize <= 16384)) || dynsize=16384
  # The dynamic entries (tag, value): DT_STRTAB (5) is an address, DT_SONAME (14) an offset in it.
  words "$dynamic" "$dynsize"
  local step=$((width / 2)) strtab=-1 soname=-1
  for ((i = 0; i + step <= ${#w[@]}; i += step)); do
    num "$i"
    case $n in
      0) break ;;
      5) num $((i + step / 2)); strtab=$n ;;
      14) num $((i + step / 2)); soname=$n ;;
    esac
  done
  ((strtab >= 0 && soname >= 0)) || return 0
  local at=-1
  for i in "${!load_offset[@]}"; do
    if ((strtab >= load_vaddr[i] && strtab < load_vaddr[i] + load_size[i])); then
      at=$((strtab - load_vaddr[i] + load_offset[i] + soname))
    fi
  done
  ((at >= 0 && at < size)) || return 0
  dd if="$f" bs=1 skip="$at" count=256 2>/dev/null | tr '\0' '\n' | sed -n 1p | tr -d '[:cntrl:]'
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
# Writes manifest lines (stdin) to the manifest, through a temporary name beside it.
write_manifest() {
  local tmp
  tmp=$(mktemp "$destdir${manifest%/*}/.install-manifest.tsv.XXXXXX") || return 1
  if ! { cat >"$tmp" && chmod 644 "$tmp" && mv -fT "$tmp" "$destdir$manifest"; }; then
    rm -f "$tmp"
    return 1
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
  # Decide about every listed file first, then remove; --force changes nothing here.
  remove=() keep=() kept=0
  for path in "${!recorded[@]}"; do
    file="$destdir$path"
    [[ $path != "$manifest" ]] || continue
    if ! inside "$file"; then
      echo "install-c.sh: kept $file: it lies outside $destdir$prefix (once .. and symlinks are resolved); install-c.sh removes files under the prefix only" >&2
      kept=1
      continue
    fi
    [[ -e $file || -L $file ]] || continue
    now=$(fingerprint "$file")
    if [[ $now == "${recorded[$path]}" && $now != other ]]; then
      remove+=("$file")
    else
      echo "install-c.sh: kept $file: it is $(describe "$file"), changed since install-c.sh installed it" >&2
      keep+=("$path")
      kept=1
    fi
  done
  if ((${#remove[@]})); then rm -f -- "${remove[@]}"; fi
  if ((${#keep[@]})); then
    for path in "${keep[@]}"; do printf '%s\t%s\n' "${recorded[$path]}" "$path"; done |
      { echo "$manifest_magic"; cat; } | write_manifest || die "cannot rewrite $destdir$manifest"
  else
    rm -f "$destdir$manifest"
  fi
  # The directories of our own name, once empty.
  rmdir "$destdir$prefix/share/nrtucode" "$destdir$includedir/nrtucode" 2>/dev/null || true
  if ((kept)); then
    if ((${#keep[@]})); then
      die "uninstall incomplete: removed ${#remove[@]} files, kept those named above; $destdir$manifest now lists the ${#keep[@]} kept under the prefix"
    fi
    die "uninstall incomplete: removed ${#remove[@]} files, kept those named above (outside the prefix, never removed); the manifest is removed"
  fi
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
# The fixture marker is in the library exactly when fixtures were asked for.
if grep -qaF 'NRTUCODE FIXTURE' "$shared"; then
  ((fixtures)) || die "$shared holds fixture bytes ('NRTUCODE FIXTURE'), which were not asked for; nothing was changed"
else
  ((!fixtures)) || die "$shared holds no fixture bytes, though --fixtures was given; nothing was changed"
fi

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
pc_path() { # a pkg-config variable for $1 relative to prefix where it lies under it, spaces escaped
  local value
  case $1 in "$prefix") value='${prefix}' ;; "$prefix"/*) value="\${prefix}/${1#"$prefix"/}" ;; *) value=$1 ;; esac
  echo "${value// /\\ }"
}
cat >"$work/$name.pc" <<PC
prefix=${prefix// /\\ }
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

# Refuse before writing anything, every problem at once: a destination outside the prefix, a
# directory in the way (never replaced, --force or not), a path that exists and is not ours
# (unless --force), a parent that is not a directory.
problems=() replacing=() forceable=0
refuse() { echo "install-c.sh: refusing to replace $1" >&2; problems+=("$1"); }
# The nearest existing ancestor of $1, when it is not a directory.
blocked() {
  local d=${1%/*}
  while [[ -n $d && ! -e $d && ! -L $d ]]; do d=${d%/*}; done
  [[ -z $d || -d $d ]] || echo "$d"
}
for file in "${order[@]}" install-manifest.tsv; do
  if [[ $file == install-manifest.tsv ]]; then path=$manifest; else path=${dest[$file]}; fi
  target="$destdir$path"
  if ! inside "$target"; then
    echo "install-c.sh: refusing $target: it lies outside $destdir$prefix (once .. and symlinks are resolved); install-c.sh writes under the prefix only" >&2
    problems+=("$target")
    continue
  fi
  in_the_way=$(blocked "$target")
  if [[ -n $in_the_way ]]; then
    echo "install-c.sh: refusing $target: $in_the_way is $(describe "$in_the_way"), not a directory" >&2
    problems+=("$target")
    continue
  fi
  [[ -e $target || -L $target ]] || continue
  if [[ -d $target && ! -L $target ]]; then
    refuse "$target: it is a directory (--force never replaces a directory)"
    continue
  fi
  [[ $file != install-manifest.tsv ]] || continue
  now=$(fingerprint "$target")
  [[ $now == "${recorded[$path]:-}" || $now == "$(fingerprint "$work/$file")" ]] && continue
  if ((force)); then
    replacing+=("$target ($(describe "$target"))")
    continue
  fi
  if [[ -n ${recorded[$path]:-} ]]; then
    why="changed since install-c.sh installed it (its manifest $destdir$manifest records ${recorded[$path]})"
  else
    why="which install-c.sh did not install (not in its manifest $destdir$manifest)"
  fi
  refuse "$target: it is $(describe "$target"), $why"
  forceable=1
done
if ((${#problems[@]})); then
  ((forceable)) ||
    die "nothing was changed; --force never replaces a directory nor writes outside the prefix"
  die "nothing was changed; install into another --prefix (or --libdir), or pass --force to replace these files"
fi
for target in "${replacing[@]}"; do echo "install-c.sh: --force: replacing $target" >&2; done

# Stage every library file beside its destination (same file system), then rename each into
# place; the header and the .pc go to directories of their own: copy each to a temporary name
# there, then rename it.
mkdir -p "$destdir$libdir/pkgconfig" "$destdir$includedir/$header_subdir" "$destdir${manifest%/*}"
stage=$(mktemp -d "$destdir$libdir/.nrtucode-install.XXXXXX")
for file in "lib$name.a" "lib$name.so.$version" "$soname" "lib$name.so"; do
  cp -P --preserve=mode "$work/$file" "$stage/$file"
done
place() { # file destination-dir
  local tmp
  tmp=$(mktemp "$2/.$(basename "$1").XXXXXX") || return 1
  if ! { cat "$1" >"$tmp" && chmod 644 "$tmp" && mv -fT "$tmp" "$2/$(basename "$1")"; }; then
    rm -f "$tmp"
    return 1
  fi
}
failed=""
if ! place "$work/nrtucode.h" "$destdir$includedir/$header_subdir"; then
  failed=nrtucode.h
elif ! place "$work/$name.pc" "$destdir$libdir/pkgconfig"; then
  failed=$name.pc
else
  for file in "lib$name.a" "lib$name.so.$version" "$soname" "lib$name.so"; do
    mv -fT "$stage/$file" "$destdir$libdir/$file" || { failed=$file; break; }
  done
fi

# The manifest, from what is in place: each destination holding what this install wrote, or
# still what an earlier install wrote, and what an earlier install wrote elsewhere and is still
# as it left it (an older versioned library), so --uninstall removes them all (also after a
# rename that failed half-way).
{
  echo "$manifest_magic"
  for file in "${order[@]}"; do
    path=${dest[$file]}
    now=$(fingerprint "$destdir$path")
    if [[ $now == "$(fingerprint "$work/$file")" || ($now != other && $now == "${recorded[$path]:-}") ]]; then
      printf '%s\t%s\n' "$now" "$path"
    fi
  done
  for path in "${!recorded[@]}"; do
    for file in "${order[@]}"; do
      if [[ ${dest[$file]} == "$path" ]]; then continue 2; fi
    done
    now=$(fingerprint "$destdir$path")
    if [[ $now != other && $now == "${recorded[$path]}" ]] && inside "$destdir$path"; then
      printf '%s\t%s\n' "${recorded[$path]}" "$path"
    fi
  done
} | write_manifest || die "cannot write $destdir$manifest"
[[ -z $failed ]] || die "could not put ${dest[$failed]} in place under $destdir; $destdir$manifest lists what is in place"
echo "install-c.sh: installed lib$name ($version, SONAME $soname) under $destdir$prefix; manifest $destdir$manifest"
echo "install-c.sh: firmware in the library: $blob_source"
