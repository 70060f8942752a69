#!/usr/bin/env bash
# Checks the rendered rustdoc (target/doc, from `cargo doc --workspace --no-deps`):
#
# * every documented crate has its pages (a crate whose docs are missing fails, it is not
#   skipped); `bash scripts/doc-links.sh CRATE...` checks only those crates (e.g. after
#   `cargo doc -p nrtucode-cli --no-deps`: `bash scripts/doc-links.sh nrtucode_cli`);
# * no link (href or src) is relative to the repository: every relative link, whatever it
#   names (a file of any extension, a directory), must resolve to a path inside target/doc,
#   since a link that leaves the rendered tree works in the repository browser but is broken
#   wherever the docs are published. Anchors and absolute URLs (scheme:...) are fine.
set -euo pipefail
cd "$(dirname "$0")/.."
doc=target/doc
[ -d "$doc" ] || { echo "doc-links.sh: no $doc; run cargo doc --workspace --no-deps first" >&2; exit 1; }
if [ "$#" -gt 0 ]; then
    crates=("$@")
else
    # Every library of the workspace that `cargo doc` documents (a new crate is not forgotten).
    mapfile -t crates < <(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    for t in p["targets"]:
        if set(t["kind"]) & {"lib", "rlib", "dylib", "cdylib", "staticlib"} and t.get("doc", True):
            print(t["name"].replace("-", "_"))')
    [ "${#crates[@]}" -gt 0 ] || { echo "doc-links.sh: cargo metadata listed no library" >&2; exit 1; }
fi
root=$(realpath "$doc")
bad=0
for crate in "${crates[@]}"; do
    if [ ! -f "$doc/$crate/index.html" ]; then
        echo "doc-links.sh: $doc/$crate/index.html is missing; run cargo doc --workspace --no-deps" >&2
        bad=1
        continue
    fi
    # One "<page>\t<link>" line per relative link, without its #anchor or ?query.
    leaving=$(
        grep -rHoE '(href|src)="[^"]*"' --include='*.html' "$doc/$crate" "$doc/src/$crate" 2>/dev/null |
        awk -F'"' '{
            page = $1; sub(/:(href|src)=$/, "", page); link = $2
            sub(/[#?].*/, "", link)
            if (link == "" || link ~ /^[A-Za-z][A-Za-z0-9+.-]*:/ || link ~ /^\/\//) next
            dir = page; sub(/\/[^\/]*$/, "", dir)
            print page "\t" (link ~ /^\// ? link : dir "/" link)
        }' |
        sort -u |
        while IFS=$'\t' read -r page target; do
            resolved=$(realpath -m "$target")
            case "$resolved/" in
                "$root"/*) ;;
                *) printf '  %s -> %s\n' "$page" "$target" ;;
            esac
        done
    )
    if [ -n "$leaving" ]; then
        echo "doc-links.sh: $crate links outside the rendered docs (to repository paths):" >&2
        echo "$leaving" >&2
        bad=1
    fi
done
if [[ " ${crates[*]} " == *" nrtucode "* ]]; then
    grep -q 'Bare metal' "$doc/nrtucode/index.html" 2>/dev/null || {
        echo "doc-links.sh: $doc/nrtucode/index.html is not the core crate's front page" >&2
        bad=1
    }
fi
exit "$bad"
