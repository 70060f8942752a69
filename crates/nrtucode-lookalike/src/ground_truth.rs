//! Ground truth for tests of the carve tool: what every linked getter of a look-alike returns.

use std::fmt::Write as _;

use nrtucode_facts::{Getter, fixture_bytes};
use sha2::{Digest, Sha256};

use crate::{LibraryBuild, layout};

/// One row of ground truth: what a linked getter of the look-alike returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TruthRow {
    /// The facts row of the getter.
    pub getter: Getter,
    /// The bytes it returns (empty for a cursor).
    pub bytes: Vec<u8>,
    /// sha256 of `bytes`, lowercase hex.
    pub sha256: String,
}

/// What every linked getter of a library returns, in symbol order.
pub fn ground_truth(library: LibraryBuild) -> Vec<TruthRow> {
    let mut rows: Vec<TruthRow> = layout(library)
        .getters
        .into_iter()
        .map(|gm| {
            let bytes = fixture_bytes(&gm.getter);
            TruthRow {
                sha256: sha256_hex(&bytes),
                getter: gm.getter,
                bytes,
            }
        })
        .collect();
    rows.sort_by(|a, b| a.getter.symbol.cmp(b.getter.symbol));
    rows
}

/// The ground truth as TSV: `symbol gen class engine variant region size sha256`, sorted by
/// symbol, size in decimal.
pub fn ground_truth_tsv(library: LibraryBuild) -> String {
    let mut out = String::from("symbol\tgen\tclass\tengine\tvariant\tregion\tsize\tsha256\n");
    for row in ground_truth(library) {
        let g = &row.getter;
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            g.symbol, g.gen_name, g.class, g.engine, g.variant, g.region, g.size, row.sha256
        );
    }
    out
}

/// Lowercase hex sha256 of `bytes` (the workspace's one hex spelling).
pub fn sha256_hex(bytes: &[u8]) -> String {
    nrtucode_facts::hex::lower_hex(&Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ground_truth_matches_fixtures() {
        let rows = ground_truth(LibraryBuild::Front);
        assert!(
            rows.windows(2)
                .all(|w| w[0].getter.symbol < w[1].getter.symbol)
        );
        for r in &rows {
            assert_eq!(r.bytes.len(), r.getter.size);
            assert_eq!(r.sha256, sha256_hex(&r.bytes));
        }
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
