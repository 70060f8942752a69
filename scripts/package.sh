#!/usr/bin/env bash
# Packages the publishable crates the way `cargo publish` would (with verification: each
# `.crate` is unpacked and built on its own), checks what they hold, then uses them the way a
# registry user does: fresh crates outside the workspace that depend on `nrtucode = "0.1"`,
# resolved to the unpacked `.crate`s through `[patch.crates-io]`.
#
#   bash scripts/package.sh [extra `cargo package` arguments, e.g. --allow-dirty]
#
# Checks: every `.crate` < 10 MiB (the registry's limit); no packaged file is a build output, a
# blob or binary (no NUL byte in any file); no packaged manifest names a `publish = false` crate
# (nrtucode-test-elf and the look-alike are unversioned dev-dependencies, which cargo package
# strips); no relative link in a packaged Markdown file names a path outside its package
# (`cargo xtask package-links`); a host consumer with default features builds once (a second build is fresh) and
# resolves CAYMAN NX ACT's PERF IRAM image, byte for byte what the packaged CLI's `resolve`
# writes and as long as the facts say; a `default-features = false` consumer with one
# generation builds for thumbv7em-none-eabihf; the CLI built from its package runs
# `nrtucode list --json`, and carves the look-alike library and checks the result (the packaged
# carve library at work: every getter, size and sha256 as the look-alike's ground truth says).
set -euo pipefail
cd "$(dirname "$0")/.."

# The published crates, dependencies first, and the others, from cargo metadata.
mapfile -t published < <(cargo xtask published)
[[ ${#published[@]} -gt 0 ]] || { echo "package.sh: cargo xtask published listed nothing" >&2; exit 1; }
max_crate_bytes=$((10 * 1024 * 1024))

fail() { echo "package.sh: $*" >&2; exit 1; }

target_dir=$(cargo xtask target-dir)
version=$(cargo xtask version nrtucode)

# The workspace's crates that are never published (`publish = false`): a packaged manifest may
# not name them (dev-dependencies without a version, which `cargo package` strips, are fine).
unpublished=$(cargo xtask published --unpublished | paste -sd '|')

package_args=()
for crate in "${published[@]}"; do package_args+=(-p "$crate"); done
cargo package --locked "${package_args[@]}" "$@"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/unpacked"
patches=""
for crate in "${published[@]}"; do
  file="$target_dir/package/$crate-$version.crate"
  [[ -f $file ]] || fail "$file was not written"
  bytes=$(stat -c %s "$file")
  ((bytes < max_crate_bytes)) || fail "$crate: $bytes bytes, the registry takes at most $max_crate_bytes"
  echo "package.sh: $crate-$version.crate: $bytes bytes"

  # What the package holds, by name: no build outputs, no blobs, nothing from target/ or blobs/.
  listed=$(cargo package --quiet --locked --list -p "$crate" "$@")
  bad=$(grep -E '(^|/)(target|blobs)/|\.(so(\.[0-9]+)*|a|o|bin|rlib|rmeta|dylib|dll|lib|exe|elf|crate)$' <<<"$listed" || true)
  [[ -z $bad ]] || fail "$crate packages files it must not: $bad"
  if ! grep -qx LICENSE-MIT <<<"$listed" || ! grep -qx LICENSE-APACHE <<<"$listed"; then
    fail "$crate: LICENSE-MIT and LICENSE-APACHE must be packaged"
  fi

  # What the package holds, by content: text only (vendor bytes and fixtures are binary).
  tar -xzf "$file" -C "$work/unpacked"
  binary=$(grep -rlaP '\x00' "$work/unpacked/$crate-$version" || true)
  [[ -z $binary ]] || fail "$crate packages binary files: $binary"
  named=$(grep -oE "^\[(target\.[^]]*\.)?(dev-|build-)?dependencies\.($unpublished)\]" "$work/unpacked/$crate-$version/Cargo.toml" || true)
  [[ -z $named ]] || fail "$crate's packaged manifest names an unpublished crate: $named"
  patches+="$crate = { path = \"$work/unpacked/$crate-$version\" }"$'\n'
done
# The packaged READMEs as a registry user reads them: no relative link leaves its package.
unpacked_dirs=()
for crate in "${published[@]}"; do unpacked_dirs+=("$work/unpacked/$crate-$version"); done
cargo xtask package-links "${unpacked_dirs[@]}"

# A registry user's crates: the dependency is a version; [patch.crates-io] points it at the
# unpacked packages (built from there: their paths differ from the workspace's). The workspace's
# target directory lends them the registry dependencies it has already built.
export CARGO_TARGET_DIR="$target_dir"
consumer() { # name, dependency line, source of src/main.rs or src/lib.rs (file name)
  mkdir -p "$work/$1/src"
  cat >"$work/$1/Cargo.toml" <<TOML
[package]
name = "$1"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
$2

[patch.crates-io]
$patches
[workspace]
TOML
}

consumer host-user 'nrtucode = "0.1"'
cat >"$work/host-user/src/main.rs" <<'RS'
//! Writes CAYMAN NX ACT's PERF IRAM image to stdout.
use std::io::Write;

fn main() {
    let image = nrtucode::get_memory_image(7, 0, 1, &nrtucode::NoEnv).expect("the image resolves");
    std::io::stdout().write_all(image).expect("stdout");
}
RS
(cd "$work/host-user" && cargo run --quiet) >"$work/host-user.bin"
# A second build does nothing: the packaged build script names no path outside its package.
rebuilt=$(cargo build --verbose --manifest-path "$work/host-user/Cargo.toml" 2>&1 | grep -E '^ *Dirty' || true)
[[ -z $rebuilt ]] || fail "a second build of the consumer rebuilds: $rebuilt"

consumer firmware-user 'nrtucode = { version = "0.1", default-features = false, features = ["gen-cayman", "flavor-perf"] }'
cat >"$work/firmware-user/src/lib.rs" <<'RS'
//! A no_std user of one generation and one flavor family.
#![no_std]

/// CAYMAN NX ACT's PERF IRAM image, if this build embeds it.
pub fn cayman_iram() -> Option<&'static [u8]> {
    nrtucode::get_memory_image(7, 0, 1, &nrtucode::NoEnv).ok()
}
RS
(cd "$work/firmware-user" && cargo build --quiet --target thumbv7em-none-eabihf)

# The CLI from its package (its packaged Cargo.lock pins the tools' dependencies).
cli_config=()
for crate in "${published[@]}"; do
  cli_config+=(--config "patch.crates-io.$crate.path=\"$work/unpacked/$crate-$version\"")
done
cargo install --quiet --debug --root "$work/cli" --path "$work/unpacked/nrtucode-cli-$version" "${cli_config[@]}"
"$work/cli/bin/nrtucode" list --json >"$work/list.json"
"$work/cli/bin/nrtucode" resolve 7 IRAM --flavor perf -o - 2>/dev/null >"$work/cli-resolve.bin"
# The packaged carve library, through the packaged CLI: carve the look-alike of the vendor's
# full library (built from the workspace; needs gcc) and check the blob directory it writes.
cargo run --quiet --locked -p nrtucode-lookalike -- --library full --out "$work/lookalike" --build >/dev/null
"$work/cli/bin/nrtucode" carve "$work/lookalike/libnrtucode_internal.so" --out "$work/carved" >/dev/null
"$work/cli/bin/nrtucode" verify "$work/carved" >/dev/null ||
  fail "the packaged CLI's check of its own carve of the look-alike failed"
# Every getter, size and sha256 as the look-alike's generator says it built them.
truth="$work/lookalike/nrtucode_lookalike_full.truth.tsv"
grep -v '^#' "$work/carved/manifest.tsv" | cut -f1-8 | sort >"$work/carved.rows"
sort "$truth" >"$work/truth.rows"
cmp -s "$work/carved.rows" "$work/truth.rows" ||
  fail "the packaged CLI's carve of the look-alike differs from its ground truth: $(diff "$work/truth.rows" "$work/carved.rows" | head -5)"
echo "package.sh: the packaged CLI carved the look-alike's $(($(wc -l <"$truth") - 1)) getters as its ground truth says, and checked them"

python3 - "$work/list.json" "$work/host-user.bin" "$work/cli-resolve.bin" \
  crates/nrtucode-facts/tables/getters.tsv <<'PY'
import csv, json, sys
listing, host, cli, getters = sys.argv[1:5]
entries = json.load(open(listing))["entries"]
images = [e for e in entries if e["table"] == "image_list"]
assert images and len(entries) - len(images) == 76, f"{len(entries)} entries, {len(images)} images"
with open(getters) as f:
    size = {r["symbol"] if "symbol" in r else r["getter"]: int(r["size"], 16)
            for r in csv.DictReader(f, delimiter="\t")}
want = size["CAYMAN_NX_ACT_PERF_IRAM_get"]
host_bytes, cli_bytes = open(host, "rb").read(), open(cli, "rb").read()
assert len(host_bytes) == want, f"consumer resolved {len(host_bytes)} bytes, the facts say {want}"
assert host_bytes == cli_bytes, "the consumer and the packaged CLI resolve different bytes"
listed = [e for e in images if e["symbol"] == "CAYMAN_NX_ACT_PERF_IRAM_get"]
assert listed and listed[0]["size"] == want, "list --json disagrees with the facts"
print(f"package.sh: packaged crates resolve CAYMAN NX ACT PERF IRAM ({want} bytes) from a "
      f"registry-style consumer and the packaged CLI; list --json has {len(entries)} entries")
PY
echo "package.sh: ${published[*]} packaged, verified and used from outside the workspace"
