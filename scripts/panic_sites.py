#!/usr/bin/env python3
"""Fails when a panic path is reachable from code other than the allowed functions, in an
assembly file of a whole LTO program (rustc --emit=asm, with line tables).

    panic_sites.py FILE.s ALLOWED_SUBSTRING...   (matched against function symbols)

It builds the call graph of the file (every `bl`/`b` to a symbol). Core's functions that reach
core's panicking code are "panicking"; any other function that calls one, or calls a function
that does (other than an allowed one), is reported with the source line of each such call (the
last `.loc` before it). Allowed functions may panic: scripts/nopanic.sh allows the ed25519
verifier's own functions and the one never-inlined call into it, whose bounds checks the
optimiser cannot prove dead; everything else must be as panic-free as the link check proves
it for the build without the verifier.
"""
import re
import sys

CALL = re.compile(r"^\s*(?:bl|blx|b|b\.w|jal|call|tail|j)\s+([A-Za-z_$][\w$.]*)\s*$")
FILE = re.compile(r"^\s*\.file\s+(\d+)\s+\"([^\"]*)\"(?:\s+\"([^\"]*)\")?")
LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)")
LABEL = re.compile(r"^([A-Za-z_$][\w$.]*):")


def is_core(symbol: str) -> bool:
    return "4core" in symbol or "_ZN4core" in symbol or "$LT$core.." in symbol


def main() -> int:
    path, allowed = sys.argv[1], sys.argv[2:]
    files, calls, sites = {}, {}, {}
    loc, function = None, None
    with open(path, encoding="utf-8", errors="replace") as asm:
        for line in asm:
            if m := FILE.match(line):
                files[m.group(1)] = "/".join(p for p in m.group(2, 3) if p)
            elif m := LABEL.match(line):
                function, loc = m.group(1), None
                calls.setdefault(function, set())
            elif m := LOC.match(line):
                loc = (m.group(1), m.group(2))
            elif function and (m := CALL.match(line)):
                target = m.group(1)
                calls[function].add(target)
                where = f"{files.get(loc[0], '?')}:{loc[1]}" if loc else "?"
                sites.setdefault((function, target), set()).add(where)
    # Core functions that reach core's panicking code.
    panicking = {f for f in calls if is_core(f) and "panicking" in f}
    panicking |= {t for ts in calls.values() for t in ts if is_core(t) and "panicking" in t}
    changed = True
    while changed:
        changed = False
        for f, targets in calls.items():
            if f not in panicking and is_core(f) and targets & panicking:
                panicking.add(f)
                changed = True
    # Other functions that reach them, not through an allowed function.
    def ok(f: str) -> bool:
        return any(a in f for a in allowed)

    tainted: set[str] = set()
    changed = True
    while changed:
        changed = False
        for f, targets in calls.items():
            if f in tainted or is_core(f) or ok(f) or "rust_begin_unwind" in f:
                continue
            if targets & (panicking | tainted):
                tainted.add(f)
                changed = True
    allowed_sites = sum(1 for f in calls if ok(f) and calls[f] & panicking)
    for f in sorted(tainted):
        for t in sorted(calls[f] & (panicking | tainted)):
            for where in sorted(sites.get((f, t), {"?"})):
                print(f"  FOREIGN: {where}: {f[:70]} calls {t[:70]}")
    print(f"{allowed_sites} allowed functions reach a panic, {len(tainted)} other functions do")
    return 1 if tainted else 0


if __name__ == "__main__":
    sys.exit(main())
