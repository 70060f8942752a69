//! `cargo xtask bench`: the informative benchmarks, whose figures nothing asserts, on demand
//! (CI does not run them: clippy's `--all-targets` type-checks them and `cargo test` runs the
//! carve bench's self-check). The lookups (`crates/nrtucode-bench/benches/lookup.rs`,
//! criterion) and the carve against `cat | sha256sum` and binutils
//! (`crates/nrtucode-cli/benches/carve.rs`; docs/performance.md quotes both).

use crate::build::{cargo, status};

/// The benchmarks, in the order they run: `cargo` arguments.
pub const BENCHES: [&str; 2] = [
    "bench -p nrtucode-bench --bench lookup",
    "bench -p nrtucode-cli --bench carve",
];

/// `cargo xtask bench`.
pub fn run() -> Result<(), String> {
    BENCHES.iter().try_for_each(|args| status(&mut cargo(args)))
}
