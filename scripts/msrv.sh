#!/usr/bin/env bash
# The oldest Rust the core builds with: its `rust-version` (Cargo.toml; the facts crate, its
# build-dependency, declares the same): 1.86, set by heapless 0.9 (0.9.1 declares no
# rust-version and does not compile on 1.85; 0.9.2 and later declare 1.87 and 1.88). The core's
# own code needs only edition 2024's 1.85.
#
# Checked the way a user on that toolchain sees it: a fresh crate outside the workspace depends
# on the core by path and resolves its own Cargo.lock with that toolchain's cargo, MSRV-aware
# (older sha2 for older toolchains: the core requires "0.11", sha2 0.11.1 declares 1.88 and
# 0.11.0 1.85), then builds for the host and for thumbv7em-none-eabihf, default features and the
# small firmware set. The workspace itself is not built with the floor: its Cargo.lock pins the
# newest dependencies (sha2 0.11.1), which the workspace's own toolchain needs, not the floor.
set -euo pipefail
cd "$(dirname "$0")/.."
core=$PWD

msrv=$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml", "rb"))["package"]["rust-version"])')
[[ $msrv =~ ^1\.[0-9]+$ ]] || { echo "msrv.sh: the core's rust-version is \"$msrv\", not \"1.N\"" >&2; exit 1; }
facts=$(python3 -c 'import tomllib; print(tomllib.load(open("crates/nrtucode-facts/Cargo.toml", "rb"))["package"]["rust-version"])')
[[ $facts == "$msrv" ]] || { echo "msrv.sh: nrtucode-facts declares rust-version $facts, the core $msrv" >&2; exit 1; }
toolchain="$msrv.0"
target=thumbv7em-none-eabihf
rustup toolchain list | grep -q "^$toolchain-" || rustup toolchain install "$toolchain" --profile minimal
# The prebuilt standard library for the target, where the toolchain server has it; where it
# does not (1.86's thumbv7em rust-std cannot be downloaded here), `core` is built from the
# toolchain's own rust-src instead: the same compiler compiling the same code for the target.
target_args=(--target "$target")
if ! rustup +"$toolchain" target add "$target" 2>/dev/null; then
  rustup +"$toolchain" component add rust-src
  target_args+=(-Zbuild-std=core)
  echo "msrv.sh: no prebuilt $target standard library for $toolchain; building core from rust-src"
fi

# The consumer: its own directory and target directory (artifacts of another rustc are never
# reused), kept between runs so that a warm run only re-resolves and rebuilds the core.
work=$(realpath -m "${CARGO_TARGET_DIR:-target}/msrv")
consumer="$work/consumer"
mkdir -p "$consumer/src"
write_manifest() { # features of the core, as a TOML value
  cat >"$consumer/Cargo.toml" <<EOF
[package]
name = "msrv-consumer"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
nrtucode = { path = "$core", $1 }

[workspace]
EOF
}
cat >"$consumer/src/lib.rs" <<'EOF'
//! Uses the core as firmware would: a resolver over an injected environment.
#![no_std]

/// CAYMAN NX ACT's IRAM image, PERF unless the environment says otherwise.
pub fn image(flavor: &'static [u8]) -> Result<&'static [u8], nrtucode::ResolveErr> {
    let mut env: nrtucode::MapEnv<'_, 1> = nrtucode::MapEnv::new();
    let _ = env.set(nrtucode::FLAVOR_VAR, flavor);
    nrtucode::get_memory_image(7, 0, 0, &env)
}
EOF

export CARGO_TARGET_DIR="$work/target"
# MSRV-aware resolution whatever the consumer's edition (edition 2024 implies it already).
export CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS=fallback
# The core is a path dependency, so its warnings show: on an older rustc some lints differ.
export RUSTFLAGS="-D warnings"
build() { # description, features as a TOML value, cargo build arguments
  local what=$1 features=$2
  shift 2
  write_manifest "$features"
  rm -f "$consumer/Cargo.lock"
  local bootstrap=()
  [[ " $* " == *" -Zbuild-std=core "* ]] && bootstrap=(env RUSTC_BOOTSTRAP=1)
  (cd "$consumer" && cargo +"$toolchain" generate-lockfile --quiet &&
    "${bootstrap[@]}" cargo +"$toolchain" build --quiet "$@") ||
    { echo "msrv.sh: a fresh crate on Rust $toolchain does not build ($what)" >&2; exit 1; }
  echo "msrv.sh: Rust $toolchain builds the core: $what"
}
build "host, default features" 'default-features = true'
build "host, std and verify" 'features = ["std", "verify"]'
build "host, std and partition" 'features = ["std", "partition"]'
build "$target, default features" 'default-features = true' "${target_args[@]}"
build "$target, gen-cayman flavor-perf verify defmt" \
  'default-features = false, features = ["gen-cayman", "flavor-perf", "verify", "defmt"]' "${target_args[@]}"
build "$target, partition alone (no blob embedded)" \
  'default-features = false, features = ["partition"]' "${target_args[@]}"
build "$target, partition and deflate (no blob embedded)" \
  'default-features = false, features = ["partition", "deflate"]' "${target_args[@]}"
