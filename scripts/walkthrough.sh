#!/usr/bin/env bash
# Runs the walkthrough of examples/bare-metal/README.md ("From the vendor library to a running
# device") as written: the sh block after its `<!-- walkthrough: ... -->` marker, from the
# repository's root, with LOADER pointing into a fresh temporary directory (the block's default
# is $HOME/my-loader). The look-alike stands in for the vendor library, as the block says. Then
# checks the decoded boot log: the blobs line names the GNU BuildID the carve recorded, every
# image verified and the engine is ready. Needs qemu-system-arm and gcc (.ci/run installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
fail() { echo "walkthrough.sh: $*" >&2; exit 1; }

block=$(python3 - examples/bare-metal/README.md <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
start = next(i for i, l in enumerate(lines) if l.startswith("<!-- walkthrough:"))
assert lines[start + 1] == "```sh", "the walkthrough marker is not followed by an sh block"
end = next(i for i in range(start + 2, len(lines)) if lines[i] == "```")
print("\n".join(lines[start + 2:end]))
PY
)
[[ -n $block ]] || fail "no walkthrough block in examples/bare-metal/README.md"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "walkthrough.sh: running the README's $(wc -l <<<"$block") lines in $work"
started=$SECONDS
if ! LOADER="$work/my-loader" bash -euo pipefail -c "$block" >"$work/out" 2>"$work/err"; then
  tail -n 30 "$work/err" >&2
  fail "the walkthrough failed (above: the end of its stderr)"
fi
sed 's/^/    /' "$work/out"
build_id=$(sed -n 's/^# build_id\t//p' "$work/my-loader.blobs/manifest.tsv")
[[ $build_id =~ ^[0-9a-f]{40}$ ]] || fail "the carve recorded build_id '$build_id', want the look-alike's GNU BuildID"
grep -qx "INFO  blobs: carved from the vendor library with GNU BuildID $build_id" "$work/out" ||
  fail "the boot log does not name the carved library's BuildID $build_id"
grep -qx "INFO  engine ready: 2 of 2 images loaded" "$work/out" || fail "the engine did not come up"
! grep -q "verification failed" "$work/out" || fail "an image failed verification"
echo "walkthrough.sh: vendor library (look-alike) to a booted device in $((SECONDS - started)) s, the log naming BuildID $build_id"
