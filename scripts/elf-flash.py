#!/usr/bin/env python3
"""Edits the external flash of a bare-metal template ELF, as a bad QSPI write or an unprogrammed
chip would leave it, for scripts/qemu.sh. The section is found in the ELF's section table
(readelf -SW), so the edit lands at the right file offset whatever the layout.

  elf-flash.py flip  IN OUT ADDR   flip every bit of the byte at load address ADDR (hex)
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


def main(argv):
    if len(argv) < 3 or argv[0] not in ("flip", "erase") or (argv[0] == "flip") != (len(argv) == 4):
        sys.exit(__doc__)
    op, src, dst = argv[:3]
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


if __name__ == "__main__":
    main(sys.argv[1:])
