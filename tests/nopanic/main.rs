//! No panic, proven at link time. Builds `tests/no_std` (a `no_std`, `no_main` consumer whose
//! panic handler calls a symbol defined nowhere) in release under the profiles firmware is built
//! with, for thumbv7em-none-eabihf (Cortex-M4F/M7F) and riscv32imac-unknown-none-elf (the RISC-V
//! management cores of accelerators). Any panic path reachable from the resolvers (image lookup
//! with NoEnv, a slice env, a MapEnv and an EnvSnapshot; the profiler lookup; the PROF views and
//! validators; with feature `digest`, SHA-256 in place and while copying, with the software and
//! a custom hasher) fails the link with `undefined symbol: nrtucode_panic_is_reachable`.
//!
//! With feature `partition` (in the consumer's default set): `Partition::parse`, the unsigned
//! read, the resolvers over a partition and its SHA-256 checks, on opaque bytes.
//! `Partition::verify` (ed25519) is checked apart: the verifier crate keeps bounds checks of
//! its own that the optimiser cannot prove dead, so that build links with a looping handler and
//! the call graph ([`call_graph`]) must show that no function other than the verifier's code
//! (its functions and the one never-inlined call into it) calls a panic entry.
//!
//! The digest paths are checked under the LTO profiles only: without LTO, RustCrypto sha2's own
//! compiled code (its compress loop's word reads, block-buffer padding in `finalize`) keeps
//! bounds checks that only cross-crate inlining proves dead, so the non-LTO profile links
//! without `digest` (features envs,prof).
//!
//! The deflate decode path (consumer feature `deflate`) cannot pass the link check:
//! miniz_oxide's inflater keeps bounds checks (slice indexing in `decompress_with_limit`,
//! `decompress_fast` and `transfer`) that the optimiser cannot prove dead. It is checked by its
//! call graph instead, linked with the panic symbol left unresolved
//! (`--warn-unresolved-symbols`): every function that calls a panic entry must be one of
//! miniz_oxide's inflater functions, so nrtucode's own decode code (and the hashing around it)
//! calls none. The remaining sites are miniz_oxide's, exercised by
//! the `inflate` fuzz target.
//!
//! The two checks need both targets (`rustup target add`) and `llvm-objdump`, so they are
//! ignored by default; CI runs them: `cargo test -p nrtucode --test nopanic -- --ignored`. Each
//! ELF checked is the one the build just wrote (removed before the build, required after it).

mod call_graph;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

const TARGETS: [&str; 2] = ["thumbv7em-none-eabihf", "riscv32imac-unknown-none-elf"];

/// A release profile: opt-level, lto, codegen-units, features (`None`: the consumer's default
/// set). The call-graph checks run under the LTO ones.
type Profile = (&'static str, bool, &'static str, Option<&'static str>);

const PROFILES: [Profile; 4] = [
    ("s", true, "1", None),
    ("z", true, "1", None),
    ("3", true, "1", None),
    ("s", false, "16", Some("envs,prof")),
];

/// The call-graph checks: what, the consumer's features, rustc's arguments after `--`, and the
/// functions (by a part of their name) allowed to call a panic entry.
const GRAPHS: [(&str, &str, &[&str], &[&str]); 2] = [
    (
        "deflate",
        "deflate",
        &["--", "-C", "link-arg=--warn-unresolved-symbols"],
        &["miniz_oxide::inflate::"],
    ),
    (
        "Partition::verify linked",
        "partition-verify,panic-loop",
        &[],
        &["ed25519_compact::", "ed25519_verify"],
    ),
];

/// Both tests build into one target directory and read the program a build just wrote at one
/// path: one runs at a time.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static BUILDS: Mutex<()> = Mutex::new(());
    BUILDS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The consumer's directory and the target directory its builds share (kept: a cache).
fn dirs() -> (PathBuf, PathBuf) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("nopanic-check");
    (root.join("tests/no_std"), target_dir)
}

/// `cargo SUB --release --target TARGET` in the consumer with the release profile
/// `(opt, lto, cgu)`, no blob directory: nothing when it succeeds, else what went wrong (a
/// reachable panic: the linker's lines naming the symbol and its referrers, and how to look).
fn cargo(sub: &str, target: &str, (opt, lto, cgu): (&str, bool, &str), args: &[&str]) -> String {
    let (consumer, target_dir) = dirs();
    let out = Command::new(env!("CARGO"))
        .args([sub, "--quiet", "--release", "--target", target])
        .args(args)
        .current_dir(consumer)
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", opt)
        .env("CARGO_PROFILE_RELEASE_LTO", lto.to_string())
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", cgu)
        .env("NRTUCODE_BLOB_DIR", "")
        .env("CARGO_TARGET_DIR", target_dir)
        .output()
        .expect("cargo runs");
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        return String::new();
    }
    let lines: Vec<&str> = (text.lines())
        .filter(|l| l.contains("undefined symbol") || l.contains(">>>"))
        .take(20)
        .collect();
    if !text.contains("undefined symbol: nrtucode_panic_is_reachable") {
        return format!("{target} opt-level={opt} lto={lto}: the build failed\n{text}");
    }
    let dir = dirs().1.display().to_string();
    format!(
        "{target} opt-level={opt} lto={lto}: a panic path is reachable\n{}\nTo find it:\n  \
         cd tests/no_std && CARGO_PROFILE_RELEASE_OPT_LEVEL={opt} cargo rustc --release \
         --target {target} --target-dir {dir} -- --emit=asm -C link-arg=--warn-unresolved-symbols\n  \
         grep -n 'panicking' {dir}/{target}/release/deps/*.s",
        lines.join("\n")
    )
}

#[test]
#[ignore = "needs the thumbv7em and riscv32imac targets; CI runs it"]
fn no_panic_path_links_from_the_resolvers() {
    let _one = one_at_a_time();
    let mut failed = Vec::new();
    for target in TARGETS {
        for (opt, lto, cgu, features) in PROFILES {
            let args = match features {
                Some(f) => vec!["--no-default-features", "--features", f],
                None => vec![],
            };
            let failure = cargo("build", target, (opt, lto, cgu), &args);
            let verdict = if failure.is_empty() {
                "linked"
            } else {
                "FAILED"
            };
            println!("{target} opt-level={opt} lto={lto} features={features:?}: {verdict}");
            failed.extend((!failure.is_empty()).then_some(failure));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

#[test]
#[ignore = "needs the thumbv7em and riscv32imac targets and llvm-objdump; CI runs it"]
fn only_the_allowed_functions_call_a_panic_entry() {
    let _one = one_at_a_time();
    let mut failed = Vec::new();
    for (what, features, after, allow) in GRAPHS {
        for target in TARGETS {
            for (opt, lto, cgu, _) in PROFILES.into_iter().filter(|p| p.1) {
                let elf = dirs().1.join(target).join("release/nopanic-check");
                let _ = std::fs::remove_file(&elf);
                let args = [&["--features", features], after].concat();
                let failure = cargo("rustc", target, (opt, lto, cgu), &args);
                assert!(failure.is_empty() && elf.exists(), "{what}: {failure}");
                let (found, functions) = call_graph::callers(&elf).unwrap();
                let (ok, refused): (Vec<_>, Vec<_>) =
                    (found.iter()).partition(|(f, _)| allow.iter().any(|a| f.contains(a)));
                let allowed: Vec<&str> = ok.iter().map(|(f, _)| f.as_str()).collect();
                println!(
                    "{what}, {target} opt-level={opt}: {} other functions of {functions} call a \
                     panic entry; allowed: {}",
                    refused.len(),
                    allowed.join(", ")
                );
                failed.extend(refused.iter().map(|(f, entries)| {
                    format!(
                        "{what}, {target} opt-level={opt}: {f} -> {}",
                        entries.join(", ")
                    )
                }));
            }
        }
    }
    assert!(
        failed.is_empty(),
        "functions other than the allowed ones call a panic entry:\n{}",
        failed.join("\n")
    );
}
