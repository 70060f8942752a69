#!/usr/bin/env python3
"""Checks the Markdown files of unpacked `.crate`s: every relative link must name a file (or
directory) inside the same package, since a packaged README is shown by the registry and
docs.rs, and read from the unpacked source, where the repository's other paths do not exist.

    python3 scripts/package-links.py UNPACKED-CRATE-DIR...

Links are inline (`[text](target)`, `![alt](target)`), reference definitions (`[id]: target`)
and HTML `href`/`src` attributes, outside fenced code blocks and code spans. Absolute URLs
(`scheme:`), `//host` links and `#anchors` are fine. Exits 1 listing every broken link.
"""
import os
import re
import sys

INLINE = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HTML = re.compile(r"""(?:href|src)\s*=\s*["']([^"']+)["']""")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)*?\1")


def links(text):
    """(line number, target) of every link outside code."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        match = re.match(r"(`{3,}|~{3,})", stripped)
        if match:
            if fence is None:
                fence = match.group(1)[0] * len(match.group(1))
            elif stripped.startswith(fence):
                fence = None
            continue
        if fence is not None:
            continue
        line = CODE_SPAN.sub("", line)
        for pattern in (INLINE, HTML):
            for m in pattern.finditer(line):
                yield number, m.group(1)
        m = REFERENCE.match(line)
        if m:
            yield number, m.group(1)


def broken(package):
    root = os.path.realpath(package)
    for folder, _, files in os.walk(package):
        for name in sorted(files):
            if not name.lower().endswith(".md"):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for number, target in links(text):
                if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", target) or target.startswith(("#", "//")):
                    continue
                file_part = re.split(r"[#?]", target, maxsplit=1)[0]
                if not file_part:
                    continue
                resolved = os.path.realpath(os.path.join(folder, file_part))
                inside = resolved == root or resolved.startswith(root + os.sep)
                if not inside or not os.path.exists(resolved):
                    yield f"{os.path.relpath(path, os.path.dirname(root))}:{number}: {target}"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    bad = [line for package in sys.argv[1:] for line in broken(package)]
    for line in bad:
        print(f"package-links.py: broken outside the repository: {line}", file=sys.stderr)
    if bad:
        print(f"package-links.py: {len(bad)} relative links name paths the packages do not hold; "
              "link to docs.rs, or keep the text in the package", file=sys.stderr)
        sys.exit(1)
    print(f"package-links.py: every relative link of {len(sys.argv) - 1} packages resolves inside its package")


if __name__ == "__main__":
    main()
