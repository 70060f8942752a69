#!/usr/bin/env bash
# Builds each published crate's documentation the way docs.rs does: nightly rustdoc with
# `--cfg docsrs` and the features its `[package.metadata.docs.rs]` names, warnings denied, so
# feature-gated items show the feature they need (`doc_cfg`).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/published.sh

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/docsrs" RUSTDOCFLAGS="--cfg docsrs -D warnings"
metadata=$(cargo metadata --format-version 1 --no-deps)
for crate in "${published[@]}"; do
  features=$(python3 -c '
import json, sys
package = next(p for p in json.load(sys.stdin)["packages"] if p["name"] == sys.argv[1])
print(",".join(((package.get("metadata") or {}).get("docs", {}).get("rs", {})).get("features", [])))' \
    "$crate" <<<"$metadata")
  cargo +nightly doc --quiet --locked --no-deps -p "$crate" ${features:+--features "$features"}
done
grep -q 'Available on <strong>crate feature <code>std</code></strong> only' \
  "$CARGO_TARGET_DIR/doc/nrtucode/struct.StdEnv.html" ||
  { echo "docsrs.sh: StdEnv's page does not say it needs feature std" >&2; exit 1; }
echo "docsrs.sh: ${published[*]} documented as docs.rs builds them"
