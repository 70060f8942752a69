//! Comparing a carve with the vendor facts (`crates/nrtucode-facts/tables/getters.tsv`) and the published hashes.
//!
//! Always: every carved getter whose size differs from `crates/nrtucode-facts/tables/getters.tsv`, and every carved
//! getter the facts do not list. When the input is one of the known vendor builds
//! (`crates/nrtucode-facts/tables/binaries.tsv`: BuildID and sha256, or size and sha256 prefix where no BuildID is
//! published): the published hashes of `known_hashes.tsv` and the profiler prefixes of
//! `prof_blobs.tsv`.

use std::fmt;

use nrtucode::ProfKind;
use nrtucode_facts::{ManifestHeader, binaries, getters, known_hashes, prof_blobs};

use crate::pipeline::CarvedGetter;

/// One comparison result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// The carved size differs from the facts'.
    SizeDiffers {
        /// Getter symbol.
        symbol: String,
        /// The facts' size.
        facts: u64,
        /// Carved size.
        carved: u64,
    },
    /// The facts do not list this getter.
    NotInFacts {
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
            Finding::SizeDiffers { .. } | Finding::NotInFacts { .. } => true,
            Finding::PublishedHash { ok, .. } => !ok,
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::SizeDiffers {
                symbol,
                facts,
                carved,
            } => {
                write!(f, "{symbol}: size {carved:#x}, the facts say {facts:#x}")
            }
            Finding::NotInFacts { symbol } => write!(f, "{symbol}: not in the facts"),
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
    let facts = getters();
    let mut out = Vec::new();
    for g in carved {
        match facts.iter().find(|c| c.symbol == g.name.symbol) {
            Some(c) if c.size as u64 != g.size => out.push(Finding::SizeDiffers {
                symbol: g.name.symbol.clone(),
                facts: c.size as u64,
                carved: g.size,
            }),
            Some(_) => {}
            None => out.push(Finding::NotInFacts {
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
            (ProfKind::Cam.name(), p.cam_sha256_prefix),
            (ProfKind::Table.name(), p.table_sha256_prefix),
        ] {
            if let Some(c) = facts.iter().find(|c| {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::naming::Names;
    use crate::pipeline::NamedBy;

    fn carved(symbol: &str, size: u64, sha256: &str) -> CarvedGetter {
        let g = Names::new().getter(symbol).map(Into::into).unwrap();
        CarvedGetter {
            name: g,
            named_by: NamedBy::Symbol,
            accessor_va: 0,
            blob_va: 0,
            size,
            sha256: sha256.into(),
            file_offset: None,
            refs: vec![],
        }
    }

    fn vendor() -> ManifestHeader {
        ManifestHeader {
            source: "libnrtucode_internal.so".into(),
            source_size: 10_276_288,
            source_sha256: "b7c67e898a116454a8e0ce257b1d6523a23ffa237a6ec21021ecb70632fc329b"
                .into(),
            build_id: "9cbf78c6f59cdb5839f155fdb2113bbe51e585fd".into(),
        }
    }

    #[test]
    fn the_vendor_build_is_recognised_and_its_published_hashes_checked() {
        assert_eq!(known_build(&vendor()), Some("libnrtucode_internal.so"));
        let other = ManifestHeader {
            build_id: "00".into(),
            ..vendor()
        };
        assert_eq!(known_build(&other), None);
        let good = format!("8fd7e422{}", "0".repeat(56));
        let bad = "f".repeat(64);
        let getters = [
            carved("CAYMAN_NX_ACT_PROF_CAM_get", 0x400, &good),
            carved("CAYMAN_NX_ACT_DEBUG_DRAM_get", 0x6260, &bad),
            carved("CAYMAN_NX_ACT_PERF_IRAM_get", 5, &bad),
        ];
        let findings = compare(&vendor(), &getters);
        assert!(findings.contains(&Finding::SizeDiffers {
            symbol: "CAYMAN_NX_ACT_PERF_IRAM_get".into(),
            facts: 0x13dc0,
            carved: 5
        }));
        let hash = |s: &str| {
            findings.iter().find_map(|f| match f {
                Finding::PublishedHash { symbol, ok, .. } if symbol == s => Some(*ok),
                _ => None,
            })
        };
        assert_eq!(hash("CAYMAN_NX_ACT_PROF_CAM_get"), Some(true));
        assert_eq!(hash("CAYMAN_NX_ACT_DEBUG_DRAM_get"), Some(false));
        // Not the vendor build: sizes only.
        let findings = compare(&ManifestHeader::default(), &getters);
        assert_eq!(findings.len(), 1);
    }
}
