#!/usr/bin/env bash
# No panic, proven at link time: builds tests/no_std (a no_std, no_main consumer whose panic
# handler calls a symbol defined nowhere) in release under the profiles firmware is built with,
# for thumbv7em-none-eabihf (Cortex-M4F/M7F) and riscv32imac-unknown-none-elf (the RISC-V
# management cores of accelerators). Any panic path reachable from the resolvers (image lookup with NoEnv, a
# slice env, a MapEnv and an EnvSnapshot; the profiler lookup; the PROF views and validators; with feature
# `verify`, SHA-256 in place and while copying, with the software and a custom hasher) fails the
# link with `undefined symbol: nrtucode_panic_is_reachable`, and this script with it.
#
# With feature `partition` (in the default set here): Partition::parse, the unsigned test door,
# the resolvers over a partition and its SHA-256 checks, on opaque bytes, are in the link check
# too. Partition::verify (ed25519) is checked apart, below: the verifier crate keeps bounds checks
# of its own that the optimiser cannot prove dead, so that build links with a looping handler
# and `cargo xtask panic-callers` fails it when any function other than the verifier's code (its
# functions and the one never-inlined call into it) calls a panic entry.
#
# The verify paths are checked under the LTO profiles only: without LTO, RustCrypto sha2's own
# compiled code (its compress loop's word reads, block-buffer padding in `finalize`) keeps bounds
# checks that only cross-crate inlining proves dead, so the non-LTO profile links without
# `verify` (features envs,prof).
#
# The deflate decode path (`nrtucode::deflate`, consumer feature `deflate`, with the partition's
# `get_memory_image_into` / `get_hwdecode_table_into` over it) cannot pass the link
# check: miniz_oxide's inflater keeps bounds checks (slice indexing in `decompress_with_limit`,
# `decompress_fast` and `transfer`) that the optimiser cannot prove dead. It is checked by its
# call graph instead, under the same LTO profiles: linked with the panic symbol left unresolved,
# the ELF is disassembled and `cargo xtask panic-callers` fails unless every function that calls a
# panic entry is one of miniz_oxide's inflater functions, so nrtucode's own decode code (and
# the hashing around it) calls none. The remaining sites are miniz_oxide's, exercised by the
# `inflate` fuzz target (scripts/fuzz.sh inflate).
set -euo pipefail
cd "$(dirname "$0")/../tests/no_std"
root=$(cd ../.. && pwd)
# The workspace's tasks (tests/no_std is a workspace of its own). The ELF checked is the one the
# build just wrote, wherever cargo put it (`cargo xtask artifact` reads the build's JSON).
xtask() { (cd "$root" && cargo xtask "$@"); }

targets=(thumbv7em-none-eabihf riscv32imac-unknown-none-elf)
rustup target add "${targets[@]}" >/dev/null 2>&1 || true

# opt-level, lto, codegen-units, features
profiles=("s true 1 default" "z true 1 default" "3 true 1 default" "s false 16 envs,prof")
for target in "${targets[@]}"; do
  for p in "${profiles[@]}"; do
    read -r opt lto cgu features <<<"$p"
    printf 'no-panic link, %s opt-level=%s lto=%s codegen-units=%s features=%s: ' "$target" "$opt" "$lto" "$cgu" "$features"
    if [[ $features == default ]]; then feature_args=(); else feature_args=(--no-default-features --features "$features"); fi
    if out=$(CARGO_PROFILE_RELEASE_OPT_LEVEL=$opt CARGO_PROFILE_RELEASE_LTO=$lto \
      CARGO_PROFILE_RELEASE_CODEGEN_UNITS=$cgu NRTUCODE_BLOB_DIR= \
      cargo build --quiet --release --target "$target" "${feature_args[@]}" 2>&1); then
      echo ok
    else
      echo FAILED
      echo "$out" | grep -E 'undefined symbol|referenced by|>>>' | head -20 >&2
      cat >&2 <<HINT
A panic path is reachable from the resolvers. To find it:
  cd tests/no_std && CARGO_PROFILE_RELEASE_OPT_LEVEL=$opt cargo rustc --release --target $target -- \\
    --emit=asm -C link-arg=--warn-unresolved-symbols
  grep -n 'panicking' ../../target/nopanic-check/$target/release/deps/*.s
HINT
      exit 1
    fi
  done
  for p in "${profiles[@]}"; do
    read -r opt lto cgu features <<<"$p"
    [[ $lto == true ]] || continue
    printf 'no-panic call graph (deflate), %s opt-level=%s lto=%s codegen-units=%s: ' "$target" "$opt" "$lto" "$cgu"
    elf=$(CARGO_PROFILE_RELEASE_OPT_LEVEL=$opt CARGO_PROFILE_RELEASE_LTO=$lto \
      CARGO_PROFILE_RELEASE_CODEGEN_UNITS=$cgu NRTUCODE_BLOB_DIR= \
      cargo rustc --quiet --release --target "$target" --features deflate --message-format=json -- \
      -C link-arg=--warn-unresolved-symbols 2>/dev/null | xtask artifact)
    if out=$(xtask panic-callers "$elf" --allow "miniz_oxide::inflate::"); then
      echo "ok ($(grep -c '^allowed' <<<"$out") miniz_oxide functions keep bounds checks)"
    else
      echo FAILED
      echo "$out" >&2
      exit 1
    fi
  done
done

for target in "${targets[@]}"; do
  for opt in s z 3; do
    printf 'panic call sites only in the ed25519 verifier, %s opt-level=%s lto=true (Partition::verify linked): ' "$target" "$opt"
    elf=$(CARGO_PROFILE_RELEASE_OPT_LEVEL=$opt NRTUCODE_BLOB_DIR= \
      cargo rustc --quiet --release --target "$target" --features partition-verify,panic-loop \
      --message-format=json | xtask artifact)
    if report=$(xtask panic-callers "$elf" --allow ed25519_compact:: --allow ed25519_verify); then
      echo "ok (${report##*$'\n'})"
    else
      echo FAILED
      echo "$report" | grep 'NOT ALLOWED' >&2
      exit 1
    fi
  done
done
