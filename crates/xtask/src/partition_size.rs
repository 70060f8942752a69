//! `cargo xtask size --what partition`: the flash cost of reading a signed partition on
//! thumbv7em-none-eabihf (release, opt-level "s", LTO, codegen-units 1, panic = abort): three
//! tiny no_std binaries built in a scratch directory, each with a looping panic handler,
//! measured as binutils' `size` counts text (every allocated section that is code or read-only,
//! read with `object`):
//!
//! - `compact`: `ed25519_compact::PublicKey::verify` alone (default-features off, opt_size)
//! - `dalek`: `ed25519_dalek::VerifyingKey::verify_strict` alone (default-features off)
//! - `reader`: nrtucode `--no-default-features --features partition`: `Partition::parse`,
//!   verify (ed25519-compact), `get_memory_image` / `get_hwdecode_table`, `load_into`
//!   (SHA-256); no blob embedded
//!
//! and, for each, whether the no-panic link (a panic handler calling an undefined symbol)
//! holds. docs/partition.md quotes the figures.

use std::path::Path;
use std::process::Stdio;

use crate::build;
use crate::elf;
use crate::metadata::Metadata;

use crate::device::THUMB;

/// The `check` function of the compact verifier's binary.
const COMPACT: &str = r#"
#[inline(never)]
fn check(key: &[u8; 32], bytes: &[u8]) -> bool {
    let sig: [u8; 64] = bytes.first_chunk::<64>().copied().unwrap_or([0; 64]);
    let message = bytes.get(64..).unwrap_or(&[]);
    ed25519_compact::PublicKey::new(*key).verify(message, &ed25519_compact::Signature::new(sig)).is_ok()
}"#;

/// The `check` function of the dalek verifier's binary.
const DALEK: &str = r#"
#[inline(never)]
fn check(key: &[u8; 32], bytes: &[u8]) -> bool {
    let sig: [u8; 64] = bytes.first_chunk::<64>().copied().unwrap_or([0; 64]);
    let message = bytes.get(64..).unwrap_or(&[]);
    let Ok(key) = ed25519_dalek::VerifyingKey::from_bytes(key) else { return false };
    key.verify_strict(message, &ed25519_dalek::Signature::from_bytes(&sig)).is_ok()
}"#;

/// The `check` function of the partition reader's binary.
const READER: &str = r#"
use nrtucode::partition::{Loader, Partition, Policy, PublicKey, TableClass};
#[inline(never)]
fn check(key: &[u8; 32], bytes: &'static [u8]) -> i32 {
    let policy = Policy { min_security_counter: black_box(1), expected_class: TableClass::Full };
    let Ok(parsed) = Partition::parse(bytes) else { return -1 };
    let Ok(p) = parsed.verify(&PublicKey::from_bytes(*key), &policy) else { return -1 };
    let mut dst = [0u8; 256];
    let mut loader = Loader::new();
    let a = match p.get_memory_image(black_box(7), black_box(0), black_box(1), &nrtucode::NoEnv) {
        Ok(b) => b.load_into(&mut dst, &mut loader).map_or(-2, |b| b.len() as i32),
        Err(e) => e.code(),
    };
    a + p.get_hwdecode_table(black_box(7), black_box(0)).map_or(0, |b| b.len() as i32)
}"#;

/// `cargo xtask size --what partition`.
pub fn run(meta: &Metadata) -> Result<(), String> {
    crate::device::rustup_target(THUMB);
    let work = build::scratch(meta, "partition-size")?;
    let result = measure(meta, &work);
    let _ = std::fs::remove_dir_all(&work);
    result
}

fn measure(meta: &Metadata, work: &Path) -> Result<(), String> {
    let root = serde_json::to_string(build::path_str(&meta.root)?)
        .map_err(|e| format!("cannot quote the workspace root: {e}"))?;
    let crates = [
        (
            "compact",
            r#"ed25519-compact = { version = "2.6", default-features = false, features = ["opt_size"] }"#.to_string(),
            COMPACT,
        ),
        (
            "dalek",
            r#"ed25519-dalek = { version = "3", default-features = false }"#.to_string(),
            DALEK,
        ),
        (
            "reader",
            format!(
                r#"nrtucode = {{ path = {root}, default-features = false, features = ["partition"] }}"#
            ),
            READER,
        ),
    ];
    for (name, dependency, body) in &crates {
        write_crate(&work.join(name), name, dependency, body)?;
    }
    println!("{:<16} {:>10}  no-panic link", "binary", "text (B)");
    for (name, _, _) in &crates {
        let dir = work.join(name);
        let build = |panic_loop: bool| {
            let mut command = build::cargo();
            command
                .current_dir(&dir)
                .args(["build", "--quiet", "--release", "--target", THUMB])
                .env("NRTUCODE_BLOB_DIR", "");
            if panic_loop {
                command.args(["--features", "panic-loop"]);
            }
            command
        };
        let elf = build::executable(&mut build(true), &format!("size-{name}"))?;
        let text = elf::text_size(&elf)?;
        let linked = build(false)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        let nopanic = if linked {
            "holds"
        } else {
            "fails (a panic path is linked)"
        };
        println!("{name:<16} {text:>10}  {nopanic}");
    }
    Ok(())
}

/// Writes the crate `size-NAME` into `dir`: its manifest (its own workspace, the release
/// profile firmware uses) and a `_start` looping over `check` (`body`).
fn write_crate(dir: &Path, name: &str, dependency: &str, body: &str) -> Result<(), String> {
    let manifest = format!(
        r#"[package]
name = "size-{name}"
version = "0.0.0"
edition = "2024"
publish = false
[dependencies]
{dependency}
[features]
panic-loop = []
[profile.release]
panic = "abort"
opt-level = "s"
lto = true
codegen-units = 1
debug = false
[workspace]
"#
    );
    let main = format!(
        r#"#![no_std]
#![no_main]
use core::hint::black_box;
#[cfg(not(feature = "panic-loop"))]
unsafe extern "C" {{
    fn size_panic_is_reachable() -> !;
}}
#[cfg(not(feature = "panic-loop"))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {{
    // SAFETY: never runs; a reachable panic fails the link instead.
    unsafe {{ size_panic_is_reachable() }}
}}
#[cfg(feature = "panic-loop")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {{
    loop {{}}
}}
static FLASH: [u8; 4096] = [0; 4096];
{body}
#[unsafe(no_mangle)]
pub extern "C" fn _start() -> ! {{
    loop {{
        black_box(check(black_box(&[1; 32]), black_box(&FLASH[..])));
    }}
}}
"#
    );
    let src = dir.join("src");
    std::fs::create_dir_all(&src)
        .and_then(|()| std::fs::write(dir.join("Cargo.toml"), manifest))
        .and_then(|()| std::fs::write(src.join("main.rs"), main))
        .map_err(|e| format!("cannot write the crate in {}: {e}", dir.display()))
}
