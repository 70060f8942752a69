#!/usr/bin/env bash
# Fails when the rendered rustdoc (target/doc, from `cargo doc --workspace --no-deps`) links to a
# file of this repository by a relative path: such a link works in the repository browser but is
# broken wherever the docs are published. Intra-doc links (`*.html`), anchors and absolute URLs
# are fine.
set -euo pipefail
cd "$(dirname "$0")/.."
doc=target/doc
[ -d "$doc" ] || { echo "doc-links.sh: run cargo doc --workspace --no-deps first" >&2; exit 1; }
crates=(nrtucode nrtucode_capi nrtucode_cli nrtucode_facts nrtucode_lookalike nrtucode_conformance nrtucode_bench)
bad=0
for crate in "${crates[@]}"; do
    [ -d "$doc/$crate" ] || continue
    # href="..." that is not http(s), not an anchor, not a rustdoc page, not a static file.
    if grep -rhoE 'href="[^"#:]+\.(h|c|md|rs|tsv|toml|sh)"' "$doc/$crate" >/tmp/doc-links.$$ 2>/dev/null; then
        echo "doc-links.sh: $crate links to repository files:" >&2
        sort -u /tmp/doc-links.$$ >&2
        bad=1
    fi
done
rm -f /tmp/doc-links.$$
grep -q 'Bare metal' "$doc/nrtucode/index.html" || {
    echo "doc-links.sh: target/doc/nrtucode/index.html is not the core crate's front page" >&2
    bad=1
}
exit "$bad"
