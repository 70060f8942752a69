#!/usr/bin/env bash
# The oldest Rust the core builds with: its `rust-version` (Cargo.toml; the facts crate, its
# build-dependency, declares the same). Installs that toolchain and builds the core with the
# workspace's Cargo.lock for the host and for thumbv7em-none-eabihf, default features and none.
# The floor is set by let chains (`if let … && …`, stable in 1.88, e.g. src/prof.rs), and
# heapless 0.9.4 and sha2 0.11.1 in the lock declare 1.88 too.
set -euo pipefail
cd "$(dirname "$0")/.."

msrv=$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml", "rb"))["package"]["rust-version"])')
[[ $msrv =~ ^1\.[0-9]+$ ]] || { echo "msrv.sh: the core's rust-version is \"$msrv\", not \"1.N\"" >&2; exit 1; }
toolchain="$msrv.0"
rustup toolchain list | grep -q "^$toolchain-" ||
  rustup toolchain install "$toolchain" --profile minimal --target thumbv7em-none-eabihf
rustup +"$toolchain" target add thumbv7em-none-eabihf

# Its own target directory: artifacts of another rustc are never reused.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/msrv"
cargo +"$toolchain" build --locked -p nrtucode
cargo +"$toolchain" build --locked -p nrtucode --target thumbv7em-none-eabihf
cargo +"$toolchain" build --locked -p nrtucode --target thumbv7em-none-eabihf --no-default-features
echo "msrv.sh: the core builds with Rust $toolchain (host and thumbv7em-none-eabihf)"
