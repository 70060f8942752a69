//! `cargo xtask nopanic`: no panic, proven at link time. Builds `tests/no_std` (a no_std,
//! no_main consumer whose panic handler calls a symbol defined nowhere) in release under the
//! profiles firmware is built with, for thumbv7em-none-eabihf (Cortex-M4F/M7F) and
//! riscv32imac-unknown-none-elf (the RISC-V management cores of accelerators). Any panic path
//! reachable from the resolvers (image lookup with NoEnv, a slice env, a MapEnv and an
//! EnvSnapshot; the profiler lookup; the PROF views and validators; with feature `digest`,
//! SHA-256 in place and while copying, with the software and a custom hasher) fails the link
//! with `undefined symbol: nrtucode_panic_is_reachable`, and this task with it.
//!
//! With feature `partition` (in the default set there): `Partition::parse`, the unsigned test
//! door, the resolvers over a partition and its SHA-256 checks, on opaque bytes, are in the link
//! check too. `Partition::verify` (ed25519) is checked apart: the verifier crate keeps bounds
//! checks of its own that the optimiser cannot prove dead, so that build links with a looping
//! handler and [`crate::panic::callers`] fails it when any function other than the verifier's code (its
//! functions and the one never-inlined call into it) calls a panic entry.
//!
//! The digest paths are checked under the LTO profiles only: without LTO, RustCrypto sha2's own
//! compiled code (its compress loop's word reads, block-buffer padding in `finalize`) keeps
//! bounds checks that only cross-crate inlining proves dead, so the non-LTO profile links
//! without `digest` (features envs,prof).
//!
//! The deflate decode path (`nrtucode::deflate`, consumer feature `deflate`, with the
//! partition's resolvers and `Blob::load_into` over it) cannot pass the link
//! check: miniz_oxide's inflater keeps bounds checks (slice indexing in `decompress_with_limit`,
//! `decompress_fast` and `transfer`) that the optimiser cannot prove dead. It is checked by its
//! call graph instead, under the same LTO profiles: linked with the panic symbol left
//! unresolved, the ELF is disassembled and [`panic::callers`] fails unless every function that
//! calls a panic entry is one of miniz_oxide's inflater functions, so nrtucode's own decode code
//! (and the hashing around it) calls none. The remaining sites are miniz_oxide's, exercised by
//! the `inflate` fuzz target (`cargo xtask fuzz inflate`).
//!
//! Every ELF checked is the one the build just wrote (cargo's messages name it), in
//! `nopanic-check/` under the target directory.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::build;
use crate::metadata::Metadata;
use crate::panic;

const TARGETS: [&str; 2] = ["thumbv7em-none-eabihf", "riscv32imac-unknown-none-elf"];

/// A release profile of the checks: opt-level, lto, codegen-units, features (`None`: the
/// consumer's default set).
type Profile = (&'static str, bool, &'static str, Option<&'static str>);

const PROFILES: [Profile; 4] = [
    ("s", true, "1", None),
    ("z", true, "1", None),
    ("3", true, "1", None),
    ("s", false, "16", Some("envs,prof")),
];

/// `cargo xtask nopanic`.
pub fn run(meta: &Metadata) -> Result<(), String> {
    TARGETS.into_iter().for_each(crate::device::rustup_target);
    let consumer = meta.root.join("tests/no_std");
    let target_dir = meta.target_dir.join("nopanic-check");
    for target in TARGETS {
        for (opt, lto, cgu, features) in PROFILES {
            say(&format!(
                "no-panic link, {target} opt-level={opt} lto={lto} codegen-units={cgu} features={}: ",
                features.unwrap_or("default")
            ));
            let mut command = cargo(&consumer, &target_dir, (opt, lto, cgu));
            command.args(["build", "--quiet", "--release", "--target", target]);
            if let Some(features) = features {
                command.args(["--no-default-features", "--features", features]);
            }
            let shown = format!("{command:?}");
            let out = command
                .output()
                .map_err(|e| format!("cannot run {shown}: {e}"))?;
            if out.status.success() {
                println!("ok");
                continue;
            }
            println!("FAILED");
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            for line in linker_lines(&text) {
                eprintln!("{line}");
            }
            eprintln!("{}", hint(&target_dir, target, opt));
            return Err(format!(
                "a panic path is reachable from the resolvers ({target}, opt-level={opt})"
            ));
        }
        for (opt, lto, cgu, _) in PROFILES.into_iter().filter(|p| p.1) {
            say(&format!(
                "no-panic call graph (deflate), {target} opt-level={opt} lto={lto} codegen-units={cgu}: "
            ));
            let mut command = cargo(&consumer, &target_dir, (opt, lto, cgu));
            command
                .args(["rustc", "--quiet", "--release", "--target", target])
                .args(["--features", "deflate"])
                .stderr(Stdio::null());
            let after = ["--", "-C", "link-arg=--warn-unresolved-symbols"];
            let elf = build::executables(&mut command, &["nopanic-check"], &after)?.remove(0);
            let found = panic::callers(&elf, &["miniz_oxide::inflate::".into()])?;
            if found.refused == 0 {
                println!(
                    "ok ({} miniz_oxide functions keep bounds checks)",
                    found.allowed
                );
            } else {
                println!("FAILED");
                for line in &found.lines {
                    eprintln!("{line}");
                }
                eprintln!("{}", found.summary());
                return Err(format!(
                    "nrtucode's deflate path calls a panic entry ({target}, opt-level={opt})"
                ));
            }
        }
    }
    for target in TARGETS {
        for opt in ["s", "z", "3"] {
            say(&format!(
                "panic call sites only in the ed25519 verifier, {target} opt-level={opt} lto=true (Partition::verify linked): "
            ));
            let args = format!(
                "rustc --quiet --release --target {target} --features partition-verify,panic-loop"
            );
            let mut command = build::cargo(&args);
            command
                .current_dir(&consumer)
                .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", opt)
                .env("NRTUCODE_BLOB_DIR", "")
                .env("CARGO_TARGET_DIR", &target_dir);
            let elf = build::executable(&mut command, "nopanic-check")?;
            let found =
                panic::callers(&elf, &["ed25519_compact::".into(), "ed25519_verify".into()])?;
            if found.refused == 0 {
                println!("ok ({})", found.summary());
            } else {
                println!("FAILED");
                for line in found.lines.iter().filter(|l| l.contains("NOT ALLOWED")) {
                    eprintln!("{line}");
                }
                return Err(format!(
                    "a panic call site outside the ed25519 verifier ({target}, opt-level={opt})"
                ));
            }
        }
    }
    Ok(())
}

/// Prints `text` without a line end, at once.
fn say(text: &str) {
    print!("{text}");
    let _ = std::io::stdout().flush();
}

/// `cargo` in the consumer's directory with the release profile `(opt, lto, cgu)`, no blob
/// directory and the task's target directory.
fn cargo(consumer: &Path, target_dir: &Path, (opt, lto, cgu): (&str, bool, &str)) -> Command {
    let mut command = build::cargo("");
    command
        .current_dir(consumer)
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", opt)
        .env("CARGO_PROFILE_RELEASE_LTO", lto.to_string())
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", cgu)
        .env("NRTUCODE_BLOB_DIR", "")
        .env("CARGO_TARGET_DIR", target_dir);
    command
}

/// The first 20 lines of a failed link that name the unresolved symbol and who references it.
fn linker_lines(output: &str) -> Vec<&str> {
    output
        .lines()
        .filter(|l| {
            l.contains("undefined symbol") || l.contains("referenced by") || l.contains(">>>")
        })
        .take(20)
        .collect()
}

/// How to find the panic path a failed link check reports.
fn hint(target_dir: &Path, target: &str, opt: &str) -> String {
    let dir = target_dir.display();
    format!(
        "A panic path is reachable from the resolvers. To find it:\n  \
         cd tests/no_std && CARGO_PROFILE_RELEASE_OPT_LEVEL={opt} cargo rustc --release --target {target} \
         --target-dir {dir} -- \\\n    --emit=asm -C link-arg=--warn-unresolved-symbols\n  \
         grep -n 'panicking' {dir}/{target}/release/deps/*.s"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_link_shows_the_symbol_and_its_referrers_only() {
        let out = "   Compiling nopanic-check\nerror: linking with `rust-lld` failed\n  \
                   = note: rust-lld: error: undefined symbol: nrtucode_panic_is_reachable\n  \
                   >>> referenced by core.rs:12\n  >>> nopanic_check.o:(rust_begin_unwind)\n\
                   error: aborting due to 1 previous error\n";
        let lines = linker_lines(out);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[0].contains("undefined symbol: nrtucode_panic_is_reachable"));
        let many = ">>> x\n".repeat(30);
        assert_eq!(linker_lines(&many).len(), 20);
    }

    #[test]
    fn the_hint_names_the_target_directory_used() {
        let h = hint(Path::new("/t/nopanic-check"), "thumbv7em-none-eabihf", "z");
        assert!(h.contains("--target-dir /t/nopanic-check"), "{h}");
        assert!(h.contains("/t/nopanic-check/thumbv7em-none-eabihf/release/deps/*.s"));
        assert!(h.contains("CARGO_PROFILE_RELEASE_OPT_LEVEL=z"));
    }

    #[test]
    fn the_call_graph_runs_under_the_lto_profiles_only() {
        let lto: Vec<&str> = PROFILES.iter().filter(|p| p.1).map(|p| p.0).collect();
        assert_eq!(lto, ["s", "z", "3"]);
    }
}
