//! `cargo xtask size [--what …]`: flash on thumbv7em-none-eabihf (release, opt-level "s", LTO,
//! codegen-units 1), one case each ([`CASES`]).
//!
//! - `core`: the resolvers in `tests/no_std` built with only the `NoEnv` image and
//!   profiler-table entry points (`--no-default-features --features panic-loop`), then with its
//!   `digest` entry points (what feature `digest` adds, with sha2's unrolled and compact
//!   SHA-256), then with the carved look-alike's blobs. Each ELF is split by
//!   [`elf::Elf::size_report`]: payload = the `BLOB_*` statics (distinct blobs), metadata = the rest of .rodata/.data,
//!   code = .text minus the consumer's `_start`. The tables of docs/performance.md ("Flash")
//!   and docs/bare-metal.md (the cost of `digest`).
//! - `partition`: reading a signed partition: three tiny no_std binaries built in a scratch
//!   directory (panic = abort, a looping panic handler), measured as binutils' `size` counts
//!   text ([`elf::Elf::text_size`]): `compact` (`ed25519_compact::PublicKey::verify` alone),
//!   `dalek` (`ed25519_dalek::VerifyingKey::verify_strict` alone) and `reader` (nrtucode
//!   `--no-default-features --features partition`: parse, verify, the two resolvers,
//!   `load_into`; no blob embedded), and for each whether the no-panic link (a panic handler
//!   calling an undefined symbol) holds. docs/partition.md quotes the figures.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;

use nrtucode_facts::facts::Getter;

use crate::build::{self, path_str};
use crate::device::{Separate, THUMB};
use crate::elf::{self, SizeReport};
use crate::metadata::Metadata;

/// The cases of `size`.
pub const CASES: [crate::Case<()>; 2] = [
    ("core", "The resolvers in a minimal no_std consumer", core),
    (
        "partition",
        "The partition reader and the ed25519 verifiers",
        partition,
    ),
];

/// The vendor's metadata: 38×16 B `image_list` + 38×16 B `hwdecode_table_list` + 102×40 B
/// descriptors + 386×32 B getter stubs.
const VENDOR_METADATA: u64 = 38 * 16 + 38 * 16 + 102 * 40 + 386 * 32;

/// `cargo xtask size --what core`.
/// The scratch directory is left for a look on failure, as every task leaves it.
fn core(meta: &Metadata, _: &()) -> Result<(), String> {
    crate::device::rustup_target(THUMB);
    crate::device::require("gcc", "gcc")?; // the look-alike
    let work = &meta.scratch("size")?;
    eprintln!("building the look-alike and carving it...");
    // The workspace's own look-alike and CLI: a failure here is a failure of the report.
    let blobs = build::carved_lookalike(work)?;
    let compact = (
        "CARGO_TARGET_THUMBV7EM_NONE_EABIHF_RUSTFLAGS",
        "--cfg sha2_backend_soft=\"compact\"",
    );
    // (label, target directory, features, blob directory, more environment): the fixtures and
    // the look-alike's blobs; the fixtures calling nrtucode::digest (in place, copy-check, a
    // custom hasher), what the feature adds with sha2's default (unrolled) and compact loops.
    let builds = [
        ("fixtures", "nopanic-check", "", "", None),
        (
            "carved look-alike",
            "nopanic-check-carved",
            "",
            path_str(&blobs)?,
            None,
        ),
        ("fixtures + digest", "nopanic-check", ",digest", "", None),
        (
            "fixtures + digest, compact sha2",
            "nopanic-check-compact",
            ",digest",
            "",
            Some(compact),
        ),
    ];
    let mut rows = Vec::new();
    for (label, target_dir, features, blob_dir, more) in builds {
        eprintln!("building the consumer: {label}...");
        let env: Vec<_> = ([("NRTUCODE_BLOB_DIR", blob_dir)].into_iter().chain(more))
            .map(|(name, value)| (name, OsStr::new(value)))
            .collect();
        let features = format!("panic-loop{features}");
        let args = ["--no-default-features", "--features", &features];
        let consumer = Separate::new(meta, "tests/no_std", target_dir);
        let elf = consumer.build(&args, &env, "nopanic-check")?;
        rows.push(elf::read(&elf)?.size_report(label));
    }
    let verify = rows.split_off(2);

    let vendor = vendor_payload(&nrtucode_facts::facts::getters());
    print!("{}", tables(&rows, vendor, &verify));

    let _ = std::fs::remove_dir_all(work);
    Ok(())
}

/// (distinct blobs, their bytes) of the real getters the two resolvers reach: the facts'
/// getters of class `R` other than `EXTISA_*`, one per blob address (the last row's size counts).
fn vendor_payload(getters: &[Getter]) -> (usize, u64) {
    let mut seen: BTreeMap<u64, u64> = BTreeMap::new();
    for g in getters
        .iter()
        .filter(|g| g.real && !g.region.starts_with("EXTISA"))
    {
        seen.insert(g.blob_va, g.size as u64);
    }
    (seen.len(), seen.values().sum())
}

/// The report's three tables and the function list (stdout of the script, byte for byte).
fn tables(rows: &[SizeReport], vendor: (usize, u64), with_verify: &[SizeReport]) -> String {
    let t = crate::device::commas;
    let d = |a: u64, b: u64| a.checked_sub(b).map_or_else(|| format!("-{}", t(b - a)), t);
    let mut out = vec![
        "flash of a minimal no_std consumer, thumbv7em-none-eabihf, release (opt-level s, lto, codegen-units 1)\n".into(),
        "| build | resolver code | table metadata | code + metadata | vs vendor metadata (17,648 B) | panic code linked |".into(),
        "|---|---:|---:|---:|---:|---:|".into(),
    ];
    for r in rows {
        let (cm, vs) = (
            r.code + r.metadata,
            100.0 * (r.code + r.metadata) as f64 / VENDOR_METADATA as f64,
        );
        let (code, meta, panic) = (t(r.code), t(r.metadata), t(r.panic));
        out.push(format!(
            "| {} | {code} B | {meta} B | {} B | {vs:.1}% | {panic} B |",
            r.label,
            t(cm)
        ));
    }
    out.push("\n| build | embedded payload (distinct blobs) | vendor payload (distinct, from the facts) | consumer flash (alloc sections) | flash - payload |".into());
    out.push("|---|---:|---:|---:|---:|".into());
    for r in rows {
        let (payload, alloc, rest) = (t(r.payload), t(r.alloc), d(r.alloc, r.payload));
        let vendor = format!("{} B ({} blobs)", t(vendor.1), vendor.0);
        out.push(format!(
            "| {} | {payload} B ({} blobs) | {vendor} | {alloc} B | {rest} B |",
            r.label, r.blobs
        ));
    }
    out.push(
        "\nfeature digest: what it adds to the fixture consumer (same blobs, same build)\n".into(),
    );
    out.push(
        "| build | code | code added | metadata added (digest table) | panic code linked |".into(),
    );
    out.push("|---|---:|---:|---:|---:|".into());
    if let Some(base) = rows.first() {
        for r in with_verify {
            let (added, meta) = (d(r.code, base.code), d(r.metadata, base.metadata));
            out.push(format!(
                "| {} | {} B | {added} B | {meta} B | {} B |",
                r.label,
                t(r.code),
                t(r.panic)
            ));
        }
        out.push("\nresolver functions in the fixture consumer (bytes, name):".into());
        out.extend(
            base.functions
                .iter()
                .map(|(n, name)| format!("  {n:6}  {name}")),
        );
    }
    out.iter().map(|l| format!("{l}\n")).collect()
}

// ---- `size --what partition` ----

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
pub fn partition(meta: &Metadata, _: &()) -> Result<(), String> {
    crate::device::rustup_target(THUMB);
    let work = &meta.scratch("partition-size")?;
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
        let build = |features: &str| {
            let mut command = build::cargo(&format!(
                "build --quiet --release --target {THUMB} {features}"
            ));
            command.current_dir(&dir).env("NRTUCODE_BLOB_DIR", "");
            command
        };
        let elf = build::executable(&mut build("--features panic-loop"), &format!("size-{name}"))?;
        let text = elf::read(&elf)?.text_size();
        let linked = build::quietly(&mut build(""));
        let nopanic = if linked {
            "holds"
        } else {
            "fails (a panic path is linked)"
        };
        println!("{name:<16} {text:>10}  {nopanic}");
    }
    let _ = std::fs::remove_dir_all(work);
    Ok(())
}

/// The tables of each `size-NAME` crate's manifest after its dependency: the release profile
/// firmware uses, and feature `panic-loop`.
const SIZE_TABLES: &str = "[features]\npanic-loop = []\n\n[profile.release]\npanic = \"abort\"\n\
    opt-level = \"s\"\nlto = true\ncodegen-units = 1\ndebug = false\n\n";

/// Writes the crate `size-NAME` into `dir` ([`build::consumer`], [`SIZE_TABLES`]): a `_start`
/// looping over `check` (`body`).
fn write_crate(dir: &Path, name: &str, dependency: &str, body: &str) -> Result<(), String> {
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
    let tables = (dependency, SIZE_TABLES);
    build::consumer(dir, &format!("size-{name}"), tables, "main.rs", &main)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(label: &str, code: u64, metadata: u64, payload: u64) -> SizeReport {
        SizeReport {
            label: label.into(),
            alloc: code + metadata + payload + 8,
            code,
            panic: 0,
            payload,
            blobs: 3,
            metadata,
            functions: vec![(1234, "nrtucode::get_memory_image".into())],
        }
    }

    #[test]
    fn the_tables_print_each_figure_where_the_docs_quote_it() {
        let out = tables(
            &[row("fixtures", 5000, 6000, 100)],
            (161, 10_000_000),
            &[row("fixtures + digest", 7000, 6032, 100)],
        );
        // 11,000 / 17,648 = 62.33%.
        assert!(
            out.contains("| fixtures | 5,000 B | 6,000 B | 11,000 B | 62.3% | 0 B |"),
            "{out}"
        );
        assert!(out.contains(
            "| fixtures | 100 B (3 blobs) | 10,000,000 B (161 blobs) | 11,108 B | 11,008 B |"
        ));
        assert!(out.contains("| fixtures + digest | 7,000 B | 2,000 B | 32 B | 0 B |"));
        let smaller = tables(
            &[row("a", 5000, 6000, 0)],
            (0, 0),
            &[row("b", 3766, 6000, 0)],
        );
        assert!(
            smaller.contains("| b | 3,766 B | -1,234 B | 0 B | 0 B |"),
            "{smaller}"
        );
        assert!(out.ends_with("    1234  nrtucode::get_memory_image\n"));
    }

    #[test]
    fn the_vendor_payload_counts_each_real_blob_once() {
        let getter = |region, blob_va, size, real| Getter {
            id: nrtucode_facts::facts::GetterId {
                symbol: "A_get",
                gen_name: "A",
                class: "NX",
                engine: "ACT",
                variant: "PERF",
                region,
            },
            accessor_va: 0,
            blob_va,
            size,
            real,
        };
        let getters = [
            getter("IRAM", 0x10, 0x100, true),
            getter("IRAM", 0x10, 0x100, true),
            getter("DRAM", 0x20, 0x20, true),
            getter("EXTISA_X", 0x30, 0x1000, true),
            getter("IRAM", 0x40, 0x1000, false),
        ];
        assert_eq!(vendor_payload(&getters), (2, 0x120));
    }
}
