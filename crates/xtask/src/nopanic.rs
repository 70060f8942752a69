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
//! handler and [`callers`] fails it when any function other than the verifier's code (its
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
//! unresolved, the ELF is disassembled and [`callers`] fails unless every function that
//! calls a panic entry is one of miniz_oxide's inflater functions, so nrtucode's own decode code
//! (and the hashing around it) calls none. The remaining sites are miniz_oxide's, exercised by
//! the `inflate` fuzz target (`cargo xtask fuzz inflate`).
//!
//! Every ELF checked is the one the build just wrote (cargo's messages name it), in
//! `nopanic-check/` under the target directory.
//!
//! The call graph (the one checker of the repository; it replaced two Python scripts) comes
//! from `llvm-objdump -d -C` (no Rust crate disassembles Arm Thumb and RISC-V well enough to
//! trust here): direct calls (Arm `bl`/`blx`/`b.w`/`b`, RISC-V `jal`/`j`/`call`/`tail` and
//! `auipc` + `jalr` pairs) resolved against the function starts. The panic machinery is the
//! panic handler (`rust_begin_unwind`), core's `panicking` functions and every function of
//! `core` that reaches them; every other function calling one of them is a caller.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::build;
use crate::metadata::Metadata;

const TARGETS: [&str; 2] = ["thumbv7em-none-eabihf", "riscv32imac-unknown-none-elf"];

/// A release profile of the link check: opt-level, lto, codegen-units, features (`None`: the
/// consumer's default set). The call-graph checks run under the LTO ones.
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
        "no-panic call graph (deflate)",
        "deflate",
        &["--", "-C", "link-arg=--warn-unresolved-symbols"],
        &["miniz_oxide::inflate::"],
    ),
    (
        "panic call sites only in the ed25519 verifier (Partition::verify linked)",
        "partition-verify,panic-loop",
        &[],
        &["ed25519_compact::", "ed25519_verify"],
    ),
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
            let (_, out) = build::output(&mut command)?;
            if out.status.success() {
                println!("ok");
                continue;
            }
            println!("FAILED");
            let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
            for line in linker_lines(&text) {
                eprintln!("{line}");
            }
            eprintln!("{}", hint(&target_dir, target, opt));
            return Err(format!(
                "a panic path is reachable from the resolvers ({target}, opt-level={opt})"
            ));
        }
    }
    for (what, features, after, allow) in GRAPHS {
        for target in TARGETS {
            for (opt, lto, cgu, _) in PROFILES.into_iter().filter(|p| p.1) {
                say(&format!(
                    "{what}, {target} opt-level={opt} lto={lto} codegen-units={cgu}: "
                ));
                let mut command = cargo(&consumer, &target_dir, (opt, lto, cgu));
                command
                    .args(["rustc", "--quiet", "--release", "--target", target])
                    .args(["--features", features])
                    .stderr(Stdio::null());
                let elf = build::executables(&mut command, &["nopanic-check"], after)?.remove(0);
                let (found, functions) = callers(&elf)?;
                let (ok, refused): (Vec<_>, Vec<_>) =
                    (found.iter()).partition(|(f, _)| allow.iter().any(|a| f.contains(a)));
                println!(
                    "{} (call graph: {} allowed functions call a panic entry, {} other functions do ({functions} functions))",
                    if refused.is_empty() { "ok" } else { "FAILED" },
                    ok.len(),
                    refused.len()
                );
                if !refused.is_empty() {
                    for (f, entries) in refused {
                        eprintln!("NOT ALLOWED: {f} -> {}", entries.join(", "));
                    }
                    return Err(format!(
                        "{what}: a function other than {allow:?} calls a panic entry ({target}, opt-level={opt})"
                    ));
                }
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

/// A function that calls into the panic machinery, and the entries it calls.
pub type Caller = (String, Vec<String>);

/// The functions of `elf` (outside the panic machinery) that call into it, and how many
/// function symbols the ELF has (none: an error).
pub fn callers(elf: &Path) -> Result<(Vec<Caller>, usize), String> {
    let functions = crate::elf::read(elf)?
        .symbols
        .iter()
        .filter(|s| s.function)
        .count();
    if functions == 0 {
        return Err(format!("{} has no function symbols", elf.display()));
    }
    let mut objdump = build::cmd("llvm-objdump", "-d --no-show-raw-insn -C");
    let calls = call_graph(&build::stdout(objdump.arg(elf))?);
    let panics = panic_machinery(&calls);
    let found = (calls.iter())
        .filter(|(f, _)| !panics.contains(*f) && !f.contains("rust_begin_unwind"))
        .map(|(f, ts)| {
            let entries = ts.iter().filter(|t| panics.contains(*t)).cloned();
            (f.clone(), entries.collect::<Vec<_>>())
        })
        .filter(|(_, entries)| !entries.is_empty());
    Ok((found.collect(), functions))
}

/// The name without its legacy hash (`::h0123456789abcdef`).
fn strip_hash(name: &str) -> &str {
    match name.rfind("::h") {
        Some(at)
            if name.len() - at == 19 && name[at + 3..].bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            &name[..at]
        }
        _ => name,
    }
}

/// A function of `core` (generic impls print as `<core::…>` or `_<core::…>`).
fn is_core(name: &str) -> bool {
    ["core::", "<core::", "_<core::", "_$LT$core.."]
        .iter()
        .any(|p| name.starts_with(p))
}

/// The call graph of the disassembly `dump`: function → the functions it calls directly.
fn call_graph(dump: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut calls: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut starts: HashMap<u64, String> = HashMap::new();
    let mut pending: Vec<(String, u64)> = Vec::new();
    let mut func: Option<String> = None;
    let mut auipc: Option<(String, u64)> = None;
    for line in dump.lines() {
        // "00001234 <name>:" opens a function (mapping symbols $t/$d and .L labels do not).
        if let Some((addr, rest)) = line.split_once(" <")
            && let Some(name) = rest.strip_suffix(">:")
            && let Ok(addr) = u64::from_str_radix(addr, 16)
        {
            if !name.starts_with('$') && !name.starts_with(".L") {
                let name = strip_hash(name).to_string();
                calls.entry(name.clone()).or_default();
                starts.insert(addr, name.clone());
                func = Some(name);
            }
            continue;
        }
        let Some(f) = &func else { continue };
        // "    1234:   bl   0x5678 <target>" (Arm and RISC-V direct calls carry the name).
        let Some((pc, insn)) = line.trim_start().split_once(':') else {
            continue;
        };
        let mut words = insn.split_whitespace();
        let Some(op) = words.next() else { continue };
        if ["bl", "blx", "b.w", "b", "jal", "j", "tail", "call"].contains(&op)
            && let Some(start) = insn.find(" <")
            && let Some(end) = insn[start..].find('>')
        {
            let target = &insn[start + 2..start + end];
            let target = strip_hash(target.split('+').next().unwrap_or(target));
            if target != f {
                calls
                    .entry(f.clone())
                    .or_default()
                    .insert(target.to_string());
            }
            auipc = None;
            continue;
        }
        let pc = u64::from_str_radix(pc.trim(), 16).ok();
        let args: Vec<String> = words
            .collect::<Vec<_>>()
            .join(" ")
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        match (op, pc) {
            // RISC-V far call: auipc REG, HI20 then jalr [ra, ]LO12(REG).
            ("auipc", Some(pc)) if args.len() == 2 => {
                auipc = args[1].parse::<i64>().ok().map(|hi| {
                    let hi = if hi >= 1 << 19 { hi - (1 << 20) } else { hi };
                    (args[0].clone(), pc.wrapping_add_signed(hi << 12))
                });
                continue;
            }
            ("jalr", _) => {
                let operand = args.last().map(String::as_str).unwrap_or("");
                if let Some((lo, reg)) = operand.split_once('(')
                    && let Some(reg) = reg.strip_suffix(')')
                    && let Ok(lo) = lo.parse::<i64>()
                    && let Some((r, base)) = &auipc
                    && r == reg
                {
                    pending.push((f.clone(), base.wrapping_add_signed(lo)));
                }
            }
            _ => {}
        }
        auipc = None;
    }
    for (f, address) in pending {
        if let Some(target) = starts.get(&address)
            && *target != f
        {
            calls.entry(f).or_default().insert(target.clone());
        }
    }
    calls
}

/// The panic machinery of `calls`: the handler, core's `panicking` functions and the core
/// functions that reach them.
fn panic_machinery(calls: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<String> {
    let root = |n: &str| n.contains("rust_begin_unwind") || (is_core(n) && n.contains("panicking"));
    let mut panics: BTreeSet<String> = calls
        .iter()
        .flat_map(|(f, ts)| std::iter::once(f).chain(ts))
        .filter(|n| root(n))
        .cloned()
        .collect();
    loop {
        let more: Vec<String> = calls
            .iter()
            .filter(|(f, ts)| {
                !panics.contains(*f) && is_core(f) && ts.iter().any(|t| panics.contains(t))
            })
            .map(|(f, _)| f.clone())
            .collect();
        if more.is_empty() {
            return panics;
        }
        panics.extend(more);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "\
00001000 <check::main>:
    1000:  bl  0x2000 <miniz_oxide::inflate::core::decompress::h0123456789abcdef>
    1004:  bl  0x3000 <nrtucode::deflate::decode>
00002000 <miniz_oxide::inflate::core::decompress::h0123456789abcdef>:
    2000:  bl  0x4000 <core::panicking::panic_bounds_check>
00003000 <nrtucode::deflate::decode>:
    3000:  auipc  ra, 1
    3004:  jalr  ra, 4(ra)
00004000 <core::panicking::panic_bounds_check>:
    4000:  b  0x4004 <core::panicking::panic_bounds_check+0x4>
00004004 <core::slice::index::slice_index_fail>:
    4004:  bl  0x4000 <core::panicking::panic_bounds_check>
";

    #[test]
    fn direct_and_auipc_calls_into_core_panicking_are_found() {
        let calls = call_graph(DUMP);
        let panics = panic_machinery(&calls);
        assert!(panics.contains("core::slice::index::slice_index_fail"));
        assert!(
            calls["miniz_oxide::inflate::core::decompress"]
                .contains("core::panicking::panic_bounds_check")
        );
        // auipc ra, 1 at 0x3000 plus 4: 0x4004, the slice_index_fail start.
        assert!(
            calls["nrtucode::deflate::decode"].contains("core::slice::index::slice_index_fail")
        );
        assert!(!calls["check::main"].iter().any(|t| panics.contains(t)));
    }

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
}
