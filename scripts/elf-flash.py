#!/usr/bin/env python3
"""Edits the external flash of a bare-metal template ELF, as a bad QSPI write or an unprogrammed
chip would leave it, for scripts/qemu.sh. The section is found in the ELF's section table
(readelf -SW), so the edit lands at the right file offset whatever the layout.

  elf-flash.py flip  IN OUT ADDR   flip every bit of the byte at load address ADDR (hex)
  elf-flash.py flip-verified IN OUT LOG
                                   flip the middle byte of the first image LOG says was
                                   verified ("[LEVEL] [image ]NAME verified: N bytes from 0xADDR"),
                                   and print that image's NAME
  elf-flash.py erase IN OUT        every byte of the section 0xFF (an erased NOR flash)

ADDR must lie inside the section `.nrtucode_blobs`; OUT is written whole or not at all."""
import os
import re
import subprocess
import sys
import tempfile

SECTION = ".nrtucode_blobs"


def section(elf):
    """(address, file offset, size) of SECTION."""
    run = subprocess.run(["readelf", "-SW", elf], capture_output=True, text=True)
    if run.returncode:
        sys.exit(f"elf-flash.py: readelf cannot read {elf}: {run.stderr.strip()}")
    out = run.stdout
    for line in out.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+PROGBITS\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m and m.group(1) == SECTION:
            return tuple(int(g, 16) for g in m.groups()[1:])
    sys.exit(f"elf-flash.py: {elf} has no PROGBITS section {SECTION}")


VERIFIED = re.compile(
    r"^(?:(?:TRACE|DEBUG|INFO|WARN|ERROR)\s+)?(?:image )?(?P<name>.+?) verified: "
    r"(?P<bytes>\d+) bytes from (?P<addr>0x[0-9a-f]+)"
)


def first_verified(log):
    """(name, middle load address) of the first image the boot log says was verified."""
    try:
        lines = open(log).read().splitlines()
    except OSError as e:
        sys.exit(f"elf-flash.py: cannot read {log}: {e.strerror}")
    for line in lines:
        m = VERIFIED.match(line.strip())
        if m:
            return m.group("name"), int(m.group("addr"), 16) + int(m.group("bytes")) // 2
    sys.exit(f"elf-flash.py: {log} names no verified image")


def main(argv):
    takes = {"flip": 4, "flip-verified": 4, "erase": 3}
    if not argv or takes.get(argv[0]) != len(argv):
        sys.exit(__doc__)
    op, src, dst = argv[:3]
    name = None
    if op == "flip-verified":
        name, middle = first_verified(argv[3])
        op, argv = "flip", argv[:3] + [f"{middle:#x}"]
    addr, offset, size = section(src)
    data = bytearray(open(src, "rb").read())
    if offset + size > len(data):
        sys.exit(f"elf-flash.py: {SECTION} runs past the end of {src}")
    if op == "flip":
        try:
            target = int(argv[3], 16)
        except ValueError:
            sys.exit(f"elf-flash.py: {argv[3]!r} is not a hex address")
        if not addr <= target < addr + size:
            sys.exit(f"elf-flash.py: {target:#x} is outside {SECTION} ({addr:#x}+{size:#x})")
        data[offset + target - addr] ^= 0xFF
    else:
        data[offset : offset + size] = b"\xff" * size
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(dst)))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o755)
        os.replace(tmp, dst)
    except BaseException:
        os.unlink(tmp)
        raise
    if name is not None:
        print(name)
        print(f"    flipped the byte at {target:#x}, inside {name}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
