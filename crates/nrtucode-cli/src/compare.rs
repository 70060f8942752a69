//! Comparing a carve with the published catalog.
//!
//! Always: every carved getter whose size differs from `blobs/catalog.tsv`, and every carved
//! getter the catalog does not list. When the input is one of the known vendor builds
//! (`blobs/binaries.tsv`: BuildID and sha256, or size and sha256 prefix where no BuildID is
//! published): the published hashes of `known_hashes.tsv` and the profiler prefixes of
//! `prof_blobs.tsv`.

use std::fmt;

use nrtucode_catalog::{ManifestHeader, binaries, getters, known_hashes, prof_blobs};

use crate::carve::CarvedGetter;

/// One comparison result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// The carved size differs from the catalog's.
    SizeDiffers {
        /// Getter symbol.
        symbol: String,
        /// Catalog size.
        catalog: u64,
        /// Carved size.
        carved: u64,
    },
    /// The catalog does not list this getter.
    NotInCatalog {
        /// Getter symbol.
        symbol: String,
    },
    /// A published hash (full or prefix) was checked.
    PublishedHash {
        /// Getter symbol.
        symbol: String,
        /// The published hash or prefix.
        expected: String,
        /// The carved sha256.
        actual: String,
        /// `true` when it matched.
        ok: bool,
    },
}

impl Finding {
    /// `true` for a finding that means the carve disagrees with the facts.
    pub fn is_mismatch(&self) -> bool {
        match self {
            Finding::SizeDiffers { .. } | Finding::NotInCatalog { .. } => true,
            Finding::PublishedHash { ok, .. } => !ok,
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::SizeDiffers {
                symbol,
                catalog,
                carved,
            } => {
                write!(
                    f,
                    "{symbol}: size {carved:#x}, the catalog says {catalog:#x}"
                )
            }
            Finding::NotInCatalog { symbol } => write!(f, "{symbol}: not in the catalog"),
            Finding::PublishedHash {
                symbol,
                expected,
                actual,
                ok,
            } => write!(
                f,
                "{symbol}: sha256 {actual} {} the published {expected}",
                if *ok { "matches" } else { "DOES NOT match" }
            ),
        }
    }
}

/// The known vendor build `header` describes, if any.
pub fn known_build(header: &ManifestHeader) -> Option<&'static str> {
    binaries().into_iter().find_map(|b| {
        let by_id = b.build_id != "unknown"
            && b.build_id == header.build_id
            && b.sha256_or_prefix == header.source_sha256;
        let by_hash = b.build_id == "unknown"
            && b.size == header.source_size
            && b.sha256_or_prefix.len() >= 8
            && header.source_sha256.starts_with(b.sha256_or_prefix);
        (by_id || by_hash).then_some(b.name)
    })
}

/// The findings for `carved` getters of an input with provenance `header`.
pub fn compare(header: &ManifestHeader, carved: &[CarvedGetter]) -> Vec<Finding> {
    let catalog = getters();
    let mut out = Vec::new();
    for g in carved {
        match catalog.iter().find(|c| c.symbol == g.name.symbol) {
            Some(c) if c.size as u64 != g.size => out.push(Finding::SizeDiffers {
                symbol: g.name.symbol.clone(),
                catalog: c.size as u64,
                carved: g.size,
            }),
            Some(_) => {}
            None => out.push(Finding::NotInCatalog {
                symbol: g.name.symbol.clone(),
            }),
        }
    }
    if known_build(header).is_none() {
        return out;
    }
    let mut published: Vec<(String, String)> = known_hashes()
        .into_iter()
        .map(|k| (k.getter.to_owned(), k.sha256_or_prefix.to_owned()))
        .collect();
    for p in prof_blobs() {
        for (region, prefix) in [
            ("CAM", p.cam_sha256_prefix),
            ("TABLE", p.table_sha256_prefix),
        ] {
            if let Some(c) = catalog.iter().find(|c| {
                c.gen_name == p.gen_name
                    && c.engine == p.engine
                    && c.is_prof()
                    && c.region == region
            }) {
                published.push((c.symbol.to_owned(), prefix.to_owned()));
            }
        }
    }
    for (symbol, expected) in published {
        if let Some(g) = carved.iter().find(|g| g.name.symbol == symbol) {
            out.push(Finding::PublishedHash {
                ok: g.sha256.starts_with(&expected),
                symbol,
                expected,
                actual: g.sha256.clone(),
            });
        }
    }
    out
}
