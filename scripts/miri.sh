#!/usr/bin/env bash
# The environment code and the core crate's tests under miri (nightly): the core's unit tests
# (EnvSnapshot, the types' conversions, the flavor index against the scan) and the
# integration tests miri can run in a few minutes, then the edition-2021 race of StdEnv and
# EnvSnapshot::capture against std::env::set_var on another thread (crates/nrtucode-env-stress,
# a short run: miri checks every access of it for undefined behaviour and data races). The
# core has no unsafe code; the C ABI's unit tests run under miri in .ci/run.
#
# Skipped, with why:
#   tests/properties.rs          proptest, 4096 cases per property: hours under miri
#   tests/front.rs               needs its own feature selection (a second miri build)
#   tests/std_env.rs             starts child processes (isolation); StdEnv runs under miri in
#                                the env-stress race below
#   the_payload_is_in_this_executable_once    reads the test executable from disk (isolation)
#   matrix_matches_the_model_for_every_slot_region_and_flavor   96,824 cases: > 5 min
#   snapshot_matches_the_model_and_the_map_in_every_cell        183,456 cases: > 5 min
#   tests/cursors.rs             parses getters.tsv for each of 161 cursors
#   fixture_build_embeds_exactly_the_generated_bytes           regenerates ~10 MB of fixtures
#   every_getter_matches_its_facts_row_and_feature_selection  parses getters.tsv: ~70 s
#   hwdecode_list_matches_the_facts                            parses getters.tsv: ~57 s
# (all of these run natively in `cargo test`; what they check is safe code).
set -euo pipefail
cd "$(dirname "$0")/.."

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
rustup +nightly component add miri rust-src >/dev/null 2>&1 || rustup +nightly component add miri rust-src
start=$(date +%s)
skips=(
  --skip the_payload_is_in_this_executable_once
  --skip matrix_matches_the_model_for_every_slot_region_and_flavor
  --skip snapshot_matches_the_model_and_the_map_in_every_cell
  --skip fixture_build_embeds_exactly_the_generated_bytes
  --skip every_getter_matches_its_facts_row_and_feature_selection
  --skip hwdecode_list_matches_the_facts
)
cargo +nightly miri test -p nrtucode --features std --lib -- "${skips[@]}"
# The integration tests are grouped into two binaries (tests/resolvers, tests/model); miri runs
# the modules it always ran, named as filters.
cargo +nightly miri test -p nrtucode --features std --test resolvers --test model -- \
  return_codes:: const_eval:: single_copy:: catalog_vs_facts:: env_matrix:: "${skips[@]}"
cargo +nightly miri test -p nrtucode-env-stress
echo "miri: $(($(date +%s) - start)) s"
