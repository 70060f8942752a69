#!/usr/bin/env bash
# Carves the whole build matrix: the look-alike (full and front) under every build condition
# of nrtucode_lookalike::CONDITIONS (-O0 -O1 -O2 -O3 -Os -Og, -fstack-protector-all, -pg,
# -mcmodel=large, -fcf-protection=full, -Wl,-z,pack-relative-relocs, -Wl,-z,separate-code,
# -fuse-ld=gold), each unstripped, strip --strip-all'ed and without a section header table:
# 2 x 13 x 3 = 78 cells, each byte-exact against the builder's ground truth.
# The same test runs in `cargo test` (CI); this script runs it alone and shows the cell counts.
# Usage: scripts/carve-matrix.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test -q -p nrtucode-carve --test build_matrix -- --nocapture
