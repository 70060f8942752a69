//! The call graph of a linked program, from `llvm-objdump -d -C` (no Rust crate disassembles
//! Arm Thumb and RISC-V well enough to trust here): direct calls (Arm `bl`/`blx`/`b.w`/`b`,
//! RISC-V `jal`/`j`/`call`/`tail` and `auipc` + `jalr` pairs) resolved against the function
//! starts. The panic machinery is the panic handler (`rust_begin_unwind`), core's `panicking`
//! functions and every function of `core` that reaches them; every other function calling one
//! of them is a caller.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::process::Command;

/// A function that calls into the panic machinery, and the entries it calls.
pub type Caller = (String, Vec<String>);

/// The functions of `elf` (outside the panic machinery) that call into it, and how many
/// functions the disassembly has (none: an error).
pub fn callers(elf: &Path) -> Result<(Vec<Caller>, usize), String> {
    let out = Command::new("llvm-objdump")
        .args(["-d", "--no-show-raw-insn", "-C"])
        .arg(elf)
        .output()
        .map_err(|e| format!("cannot run llvm-objdump (apt-get install llvm): {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("llvm-objdump {} failed: {err}", elf.display()));
    }
    let calls = call_graph(&String::from_utf8_lossy(&out.stdout));
    if calls.is_empty() {
        return Err(format!("{} has no functions", elf.display()));
    }
    Ok((panic_callers(&calls), calls.len()))
}

/// The callers of the panic machinery in `calls`, with the entries each calls.
fn panic_callers(calls: &BTreeMap<String, BTreeSet<String>>) -> Vec<Caller> {
    let panics = panic_machinery(calls);
    let found = (calls.iter())
        .filter(|(f, _)| !panics.contains(*f) && !f.contains("rust_begin_unwind"))
        .map(|(f, ts)| {
            let entries = ts.iter().filter(|t| panics.contains(*t)).cloned();
            (f.clone(), entries.collect::<Vec<_>>())
        })
        .filter(|(_, entries)| !entries.is_empty());
    found.collect()
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
    assert!(calls["nrtucode::deflate::decode"].contains("core::slice::index::slice_index_fail"));
    assert!(!calls["check::main"].iter().any(|t| panics.contains(t)));
    let callers = panic_callers(&calls);
    let names: Vec<&str> = callers.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "miniz_oxide::inflate::core::decompress",
            "nrtucode::deflate::decode"
        ]
    );
}
