#!/usr/bin/env bash
# Flash cost of reading a signed partition on thumbv7em-none-eabihf (release, opt-level "s",
# LTO, codegen-units 1, panic = abort): three tiny no_std binaries built in a temporary
# directory, each with a looping panic handler, measured with `size` (text bytes):
#
#   ed25519-compact   ed25519_compact::PublicKey::verify alone (default-features off, opt_size)
#   ed25519-dalek     ed25519_dalek::VerifyingKey::verify_strict alone (default-features off)
#   nrtucode reader   nrtucode --no-default-features --features partition: Partition::parse,
#                     verify (ed25519-compact), get_memory_image / get_hwdecode_table,
#                     copy_verified (SHA-256); no blob embedded
#
# and, for each, whether the no-panic link (a panic handler calling an undefined symbol) holds.
# docs/partition.md quotes the figures. Usage: scripts/partition-size.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
rustup target add thumbv7em-none-eabihf >/dev/null 2>&1 || true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

crate() { # name dependency-line body
  mkdir -p "$work/$1/src" "$work/$1/.cargo"
  cat >"$work/$1/Cargo.toml" <<TOML
[package]
name = "size-$1"
version = "0.0.0"
edition = "2024"
publish = false
[dependencies]
$2
[features]
panic-loop = []
[profile.release]
panic = "abort"
opt-level = "s"
lto = true
codegen-units = 1
debug = false
[workspace]
TOML
  printf '[build]\ntarget = "thumbv7em-none-eabihf"\n' >"$work/$1/.cargo/config.toml"
  cat >"$work/$1/src/main.rs" <<RUST
#![no_std]
#![no_main]
use core::hint::black_box;
#[cfg(not(feature = "panic-loop"))]
unsafe extern "C" {
    fn size_panic_is_reachable() -> !;
}
#[cfg(not(feature = "panic-loop"))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: never runs; a reachable panic fails the link instead.
    unsafe { size_panic_is_reachable() }
}
#[cfg(feature = "panic-loop")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    loop {}
}
static FLASH: [u8; 4096] = [0; 4096];
$3
#[unsafe(no_mangle)]
pub extern "C" fn _start() -> ! {
    loop {
        black_box(check(black_box(&[1; 32]), black_box(&FLASH[..])));
    }
}
RUST
}

crate compact 'ed25519-compact = { version = "2.6", default-features = false, features = ["opt_size"] }' '
#[inline(never)]
fn check(key: &[u8; 32], bytes: &[u8]) -> bool {
    let sig: [u8; 64] = bytes.first_chunk::<64>().copied().unwrap_or([0; 64]);
    let message = bytes.get(64..).unwrap_or(&[]);
    ed25519_compact::PublicKey::new(*key).verify(message, &ed25519_compact::Signature::new(sig)).is_ok()
}'
crate dalek 'ed25519-dalek = { version = "3", default-features = false }' '
#[inline(never)]
fn check(key: &[u8; 32], bytes: &[u8]) -> bool {
    let sig: [u8; 64] = bytes.first_chunk::<64>().copied().unwrap_or([0; 64]);
    let message = bytes.get(64..).unwrap_or(&[]);
    let Ok(key) = ed25519_dalek::VerifyingKey::from_bytes(key) else { return false };
    key.verify_strict(message, &ed25519_dalek::Signature::from_bytes(&sig)).is_ok()
}'
crate reader "nrtucode = { path = \"$root\", default-features = false, features = [\"partition\"] }" '
use nrtucode::partition::{Partition, Policy, PublicKey, TableClass};
#[inline(never)]
fn check(key: &[u8; 32], bytes: &'"'"'static [u8]) -> i32 {
    let policy = Policy { min_security_counter: black_box(1), expected_class: TableClass::Full };
    let Ok(p) = Partition::parse(bytes).and_then(|p| p.verify(&PublicKey::from_bytes(*key), &policy)) else {
        return -1;
    };
    let mut dst = [0u8; 256];
    let a = match p.get_memory_image(black_box(7), black_box(0), black_box(1), &nrtucode::NoEnv) {
        Ok(b) => p.copy_verified(b, &mut dst).map_or(-2, |n| n as i32),
        Err(e) => e.code(),
    };
    a + p.get_hwdecode_table(black_box(7), black_box(0)).map_or(0, |b| b.len() as i32)
}'

printf '%-16s %10s  %s\n' "binary" "text (B)" "no-panic link"
for name in compact dalek reader; do
  (cd "$work/$name" && NRTUCODE_BLOB_DIR= cargo build --quiet --release --features panic-loop)
  text=$(size "$work/$name/target/thumbv7em-none-eabihf/release/size-$name" | awk 'NR == 2 { print $1 }')
  if (cd "$work/$name" && NRTUCODE_BLOB_DIR= cargo build --quiet --release >/dev/null 2>&1); then nopanic=holds; else nopanic="fails (a panic path is linked)"; fi
  printf '%-16s %10s  %s\n' "$name" "$text" "$nopanic"
done
