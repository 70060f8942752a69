#!/usr/bin/env python3
"""The functions of a linked no_std ELF that call into the panic machinery directly.

Usage: panic_callers.py ELF [ALLOWED_PREFIX ...]

Disassembles ELF (llvm-objdump), builds the direct call graph (Arm bl/blx/b.w/b, RISC-V jal and\nauipc + jalr pairs),
takes as the panic machinery `__rustc::rust_begin_unwind` (the panic handler) and every function
of `core` that reaches it (including its generic slice-index impls left out of line at opt-level z), and prints every other function that calls one of them, one per line,
with the panic entries it calls. Exits 1 when such a function's name starts with none of the
ALLOWED_PREFIXes (none given: any caller fails), 0 otherwise.

scripts/nopanic.sh uses it for the deflate decode path, where the link check alone cannot pass:
miniz_oxide's inflater keeps bounds checks the optimiser cannot prove dead, while nrtucode's own
decode code (inlined into the consumer's `check_deflate`) must call no panic entry.
"""
import re
import subprocess
import sys

elf, allowed = sys.argv[1], tuple(sys.argv[2:])
dump = subprocess.run(["llvm-objdump", "-d", "--no-show-raw-insn", "-C", elf],
                      check=True, capture_output=True, text=True).stdout

calls = {}
starts = {}  # address -> function
pending = []  # (function, target address) of RISC-V auipc + jalr pairs
func = None
auipc = None  # (register, pc + upper immediate) of the last RISC-V auipc
for line in dump.splitlines():
    m = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
    if m:
        name = m.group(2)
        # Mapping symbols ($t, $d, $x) and local labels (.L…) sit inside the current function.
        if not name.startswith(("$", ".L")):
            func = re.sub(r"::h[0-9a-f]{16}$", "", name)
            calls.setdefault(func, set())
            starts[int(m.group(1), 16)] = func
        continue
    if func is None:
        continue
    # Arm (bl/blx/b.w/b) and RISC-V (jal/j) calls carry the target's name.
    m = re.search(r"\s(bl|blx|b\.w|b|jal|j|tail|call)\s+(?:ra, )?0x[0-9a-f]+ <([^>+]+)>", line)
    if m:
        target = re.sub(r"::h[0-9a-f]{16}$", "", m.group(2))
        if target != func:
            calls[func].add(target)
        continue
    # RISC-V far calls: auipc REG, HI20 then jalr [ra, ]LO12(REG).
    m = re.match(r"^\s*([0-9a-f]+):\s+auipc\s+(\w+), (\d+)$", line)
    if m:
        hi = int(m.group(3))
        hi = hi - (1 << 20) if hi >= 1 << 19 else hi
        auipc = (m.group(2), int(m.group(1), 16) + (hi << 12))
        continue
    m = re.match(r"^\s*[0-9a-f]+:\s+jalr\s+(?:\w+, )?(-?\d+)\((\w+)\)$", line)
    if m and auipc and auipc[0] == m.group(2):
        pending.append((func, auipc[1] + int(m.group(1))))
    auipc = None
for f, address in pending:
    target = starts.get(address)
    if target and target != f:
        calls[f].add(target)

def is_core(name):
    """A function of `core` (legacy-mangled generic impls print as `_<core::…>` / `_$LT$core..`)."""
    return name.startswith(("core::", "_$LT$core..", "_<core::"))


panics = {"__rustc::rust_begin_unwind"}
changed = True
while changed:
    changed = False
    for f, targets in calls.items():
        if f not in panics and is_core(f) and targets & panics:
            panics.add(f)
            changed = True

bad = False
for f in sorted(calls):
    if f in panics:
        continue
    entries = sorted(calls[f] & panics)
    if entries:
        ok = any(f.startswith(p) for p in allowed)
        bad |= not ok
        print(f"{'allowed' if ok else 'NOT ALLOWED'}: {f} -> {', '.join(entries)}")
sys.exit(1 if bad else 0)
