#!/usr/bin/env bash
# The core crate's tests under miri (nightly): the unit tests (including StdEnv's `environ` scan,
# the crate's only unsafe code, over synthetic arrays and the live environment) and the
# integration tests miri can run in a few minutes.
#
# Skipped, with why:
#   tests/properties.rs          proptest, 4096 cases per property: hours under miri
#   tests/front.rs               needs its own feature selection (a second miri build)
#   the_payload_is_in_this_executable_once    reads the test executable from disk (isolation)
#   matrix_matches_the_model_for_every_slot_region_and_flavor   96,824 cases: > 5 min
#   fixture_build_embeds_exactly_the_generated_bytes           regenerates ~10 MB of fixtures
#   every_getter_matches_the_catalog_row_and_feature_selection  parses the catalog TSV: ~70 s
#   hwdecode_list_matches_the_facts                            parses the catalog TSV: ~57 s
# (all of these run natively in `cargo test`; what they check is safe code).
set -euo pipefail
cd "$(dirname "$0")/.."

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
rustup +nightly component add miri rust-src >/dev/null 2>&1 || rustup +nightly component add miri rust-src
start=$(date +%s)
cargo +nightly miri test -p nrtucode --features std \
  --lib --test return_codes --test catalog_vs_facts --test const_eval --test single_copy --test env_matrix -- \
  --skip the_payload_is_in_this_executable_once \
  --skip matrix_matches_the_model_for_every_slot_region_and_flavor \
  --skip fixture_build_embeds_exactly_the_generated_bytes \
  --skip every_getter_matches_the_catalog_row_and_feature_selection \
  --skip hwdecode_list_matches_the_facts
echo "miri: $(($(date +%s) - start)) s"
