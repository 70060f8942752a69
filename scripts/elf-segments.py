#!/usr/bin/env python3
"""Compares what two builds of a firmware ELF put into flash, for scripts/reproducible.sh: every
loadable segment (PT_LOAD with file bytes) by load address, size and contents, as a programmer or
a signing tool sees them. Exit 0 when they are identical; otherwise names the first differing
bytes. Then says whether the whole files are identical and, if not, which sections differ.

  elf-segments.py A.elf B.elf"""
import re
import subprocess
import sys


def readelf(flag, elf):
    return subprocess.run(["readelf", flag, elf], check=True, capture_output=True, text=True).stdout


def loadable(elf, data):
    """[(load address, file size, bytes)] of the PT_LOAD segments that carry bytes."""
    segments = []
    for line in readelf("-lW", elf).splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            offset, _, paddr, filesz = (int(x, 16) for x in f[1:5])
            if filesz:
                segments.append((paddr, filesz, data[offset : offset + filesz]))
    return segments


def sections(elf, data):
    """{name: bytes} of the sections stored in the file."""
    out = {}
    for line in readelf("-SW", elf).splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m and m.group(2) != "NOBITS":
            offset, size = int(m.group(3), 16), int(m.group(4), 16)
            out[m.group(1)] = data[offset : offset + size]
    return out


def main(a, b):
    data_a, data_b = open(a, "rb").read(), open(b, "rb").read()
    seg_a, seg_b = loadable(a, data_a), loadable(b, data_b)
    same = [(s[0], s[1]) for s in seg_a] == [(s[0], s[1]) for s in seg_b]
    for (addr, size, bytes_a), (_, _, bytes_b) in zip(seg_a, seg_b) if same else []:
        diff = [i for i in range(size) if bytes_a[i] != bytes_b[i]]
        if diff:
            same = False
            print(f"segment at {addr:#010x} ({size} B): {len(diff)} bytes differ, first at {addr + diff[0]:#010x}")
    if not same and [(s[0], s[1]) for s in seg_a] != [(s[0], s[1]) for s in seg_b]:
        print("loadable segments differ in address or size:")
        for name, segs in (("A", seg_a), ("B", seg_b)):
            print(f"  {name}: " + ", ".join(f"{s[0]:#010x}+{s[1]:#x}" for s in segs))
    total = sum(s[1] for s in seg_a)
    if same:
        print(f"loadable segments identical: {len(seg_a)} segments, {total} bytes "
              + ", ".join(f"{s[0]:#010x}+{s[1]:#x}" for s in seg_a))
    if data_a == data_b:
        print("whole ELF identical")
    else:
        sec_a, sec_b = sections(a, data_a), sections(b, data_b)
        differ = sorted(n for n in set(sec_a) | set(sec_b) if sec_a.get(n) != sec_b.get(n))
        print("whole ELF differs (not loaded) in: " + ", ".join(differ))
    return 0 if same else 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
