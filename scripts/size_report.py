#!/usr/bin/env python3
"""Splits a thumbv7em consumer ELF into resolver code, table metadata and blob payload.

usage: size_report.py ELF LABEL

Reads `readelf -SW` / `readelf -sW` (binutils' readelf reads any ELF). Payload = the union of
the `BLOB_*` statics (one per distinct blob, from build.rs); metadata = every other byte of
.rodata/.data (the const tables, their anonymous allocations, alignment padding); code = .text
minus the consumer's own `_start` and panic handler. Prints one markdown row, and a JSON line
for size.sh.
"""
import json
import re
import subprocess
import sys

elf, label = sys.argv[1], sys.argv[2]


def readelf(*args):
    return subprocess.run(["readelf", *args, elf], check=True, capture_output=True, text=True).stdout


sections = {}
for line in readelf("-SW").splitlines():
    m = re.match(r"\s*\[\s*(\d+)\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\S+\s+(\S*)", line)
    if m:
        idx, name, addr, size, flags = m.groups()
        sections[int(idx)] = (name, int(addr, 16), int(size, 16), flags)

symbols = []
for line in readelf("-sW").splitlines():
    f = line.split()
    if len(f) >= 8 and f[0].endswith(":") and f[6].isdigit():
        symbols.append((int(f[1], 16), int(f[2], 0), f[3], int(f[6]), f[7]))


def union(ranges):
    total, end = 0, -1
    for a, b in sorted(ranges):
        if b > end:
            total += b - max(a, end)
            end = b
    return total


data_secs = {i for i, s in sections.items() if s[0].startswith((".rodata", ".data")) and "A" in s[3]}
text_secs = {i for i, s in sections.items() if s[0].startswith(".text")}
alloc = sum(s[2] for s in sections.values() if "A" in s[3])
data = sum(sections[i][2] for i in data_secs)
text = sum(sections[i][2] for i in text_secs)
blobs = [(a, a + n) for a, n, _, sec, name in symbols if sec in data_secs and "BLOB_" in name]
payload = union(blobs)
harness = {"_start", "check_image_noenv", "check_hwdecode"}
harness_bytes = sum(n for a, n, t, sec, name in symbols if t == "FUNC" and name == "_start")
panic_bytes = sum(n for a, n, t, sec, name in symbols if t == "FUNC" and ("panic" in name or "rust_begin_unwind" in name))
code = text - harness_bytes
metadata = data - payload
funcs = sorted(((n, name) for a, n, t, sec, name in symbols if t == "FUNC" and sec in text_secs), reverse=True)
print(json.dumps({
    "label": label, "alloc": alloc, "text": text, "code": code, "panic": panic_bytes,
    "data": data, "payload": payload, "blobs": len(blobs), "metadata": metadata,
    "functions": [[n, name] for n, name in funcs],
}))
