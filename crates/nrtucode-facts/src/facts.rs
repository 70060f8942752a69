//! Typed rows of the fact tables in `tables/` (copied from the vendor-binary analysis).
//!
//! The tables are compiled into this crate with `include_str!`; a malformed row is a bug in the
//! repository, caught by this crate's tests, so the accessors `expect` well-formed data.

use crate::tsv::{parse_int, records};

/// `tables/getters.tsv`: every `<GEN>_<CLS>_<ENGINE>_<VARIANT>_<REGION>_get` getter.
pub const GETTERS_TSV: &str = include_str!("../tables/getters.tsv");
/// The old name of [`GETTERS_TSV`] (it never held a catalog).
#[deprecated(
    since = "0.1.1",
    note = "renamed GETTERS_TSV: it holds tables/getters.tsv"
)]
pub const CATALOG_TSV: &str = GETTERS_TSV;
/// `tables/image_list.tsv`: the 38 `image_list` slots.
pub const IMAGE_LIST_TSV: &str = include_str!("../tables/image_list.tsv");
/// `tables/hwdecode_list.tsv`: the 38 `hwdecode_table_list` slots.
pub const HWDECODE_LIST_TSV: &str = include_str!("../tables/hwdecode_list.tsv");
/// `tables/prof_blobs.tsv`: per (generation, engine) profiler blob facts.
pub const PROF_BLOBS_TSV: &str = include_str!("../tables/prof_blobs.tsv");
/// `tables/known_hashes.tsv`: published hashes of individual vendor blobs.
pub const KNOWN_HASHES_TSV: &str = include_str!("../tables/known_hashes.tsv");
/// `tables/binaries.tsv`: the two vendor binaries.
pub const BINARIES_TSV: &str = include_str!("../tables/binaries.tsv");

/// The identity of one getter: its vendor symbol and the table cell it fills (generation,
/// class, engine, variant, region). The one definition, used by the facts ([`Getter`], with
/// `&'static str`), the blob-directory manifest and the carver (with `String`).
///
/// Fields are in this order so that identities sort by symbol first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GetterId<S = &'static str> {
    /// The vendor symbol, with its `_get` suffix.
    pub symbol: S,
    /// Generation, e.g. `CAYMAN`.
    pub gen_name: S,
    /// Core class, `NX` or `Q7`.
    pub class: S,
    /// Engine, e.g. `ACT`.
    pub engine: S,
    /// Variant: `RELEASE`, `PERF`, `DEBUG`, `TEST`, `DKL_PERF`, `DKL_DEBUG`, `DKL_TEST`, `PROF`.
    pub variant: S,
    /// Region: `IRAM`, `DRAM`, `SRAM`, `EXTRAM`, `CAM`, `TABLE` or an `EXTISA_*` name.
    pub region: S,
}

impl<S: AsRef<str>> GetterId<S> {
    /// The image (or profiler) the getter belongs to, `<GEN>_<CLASS>_<ENGINE>_<VARIANT>`, e.g.
    /// `CAYMAN_NX_ACT_PERF`: the name of its region array in the generated tables.
    pub fn image_name(&self) -> String {
        format!(
            "{}_{}_{}_{}",
            self.gen_name.as_ref(),
            self.class.as_ref(),
            self.engine.as_ref(),
            self.variant.as_ref()
        )
    }

    /// `true` when both getters are regions of the same image (generation, class, engine and
    /// variant agree).
    pub fn same_image<T: AsRef<str>>(&self, other: &GetterId<T>) -> bool {
        self.gen_name.as_ref() == other.gen_name.as_ref()
            && self.class.as_ref() == other.class.as_ref()
            && self.engine.as_ref() == other.engine.as_ref()
            && self.variant.as_ref() == other.variant.as_ref()
    }
}

impl From<&GetterId> for GetterId<String> {
    fn from(id: &GetterId) -> Self {
        GetterId {
            symbol: id.symbol.to_owned(),
            gen_name: id.gen_name.to_owned(),
            class: id.class.to_owned(),
            engine: id.engine.to_owned(),
            variant: id.variant.to_owned(),
            region: id.region.to_owned(),
        }
    }
}

impl From<&Getter> for GetterId<String> {
    fn from(getter: &Getter) -> Self {
        GetterId::from(&getter.id)
    }
}

/// One getter of the vendor binary: its identity and what it returns.
///
/// The identity's fields read through (`getter.symbol`, `getter.gen_name`, …): a getter is its
/// [`GetterId`] plus addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Getter {
    /// Symbol, generation, class, engine, variant and region.
    pub id: GetterId,
    /// Virtual address of the getter stub in the vendor binary.
    pub accessor_va: u64,
    /// Virtual address the getter returns.
    pub blob_va: u64,
    /// Size in bytes the getter returns.
    pub size: usize,
    /// `true` for real bytes (`R`), `false` for a boundary cursor (`C`, size 0).
    pub real: bool,
}

impl std::ops::Deref for Getter {
    type Target = GetterId;

    fn deref(&self) -> &GetterId {
        &self.id
    }
}

impl Getter {
    /// The symbol without its `_get` suffix, e.g. `CAYMAN_NX_ACT_PERF_IRAM`.
    pub fn stem(&self) -> &'static str {
        self.id
            .symbol
            .strip_suffix("_get")
            .unwrap_or(self.id.symbol)
    }

    /// `true` for the rows the two resolvers reach (base, DKL and PROF); `false` for the
    /// `EXTISA_*` rows of the third resolver, which this project does not embed.
    pub fn is_resolver_reachable(&self) -> bool {
        !self.id.region.starts_with("EXTISA")
    }

    /// `true` for the profiler rows (`PROF_CAM`, `PROF_TABLE`).
    pub fn is_prof(&self) -> bool {
        self.id.variant == "PROF"
    }
}

/// Every getter in `crates/nrtucode-facts/tables/getters.tsv`, in file order.
pub fn getters() -> Vec<Getter> {
    records(GETTERS_TSV)
        .map(|f| {
            assert_eq!(f.len(), 10, "getters.tsv: bad row {f:?}");
            Getter {
                id: GetterId {
                    symbol: f[5],
                    gen_name: f[0],
                    class: f[1],
                    engine: f[2],
                    variant: f[3],
                    region: f[4],
                },
                accessor_va: parse_int(f[6]).expect("getters.tsv: accessor_va"),
                blob_va: parse_int(f[7]).expect("getters.tsv: blob_va"),
                size: parse_int(f[8]).expect("getters.tsv: size") as usize,
                real: match f[9] {
                    "R" => true,
                    "C" => false,
                    other => panic!("getters.tsv: class {other:?}"),
                },
            }
        })
        .collect()
}

/// The variant name a flavor key selects in a generation (`RELEASE` stands for key 1 in SUNDA).
pub fn variant_for_key(gen_name: &str, key: u32) -> Option<&'static str> {
    Some(match key {
        1 if gen_name == "SUNDA" => "RELEASE",
        1 => "PERF",
        2 => "DEBUG",
        3 => "TEST",
        17 => "DKL_PERF",
        18 => "DKL_DEBUG",
        19 => "DKL_TEST",
        _ => return None,
    })
}

/// The four memory regions in resolver order (region argument 0..=3).
pub const REGIONS: [&str; 4] = ["IRAM", "DRAM", "SRAM", "EXTRAM"];

/// The generations in index order, with their cargo feature names.
pub const GENERATIONS: [(&str, &str); 5] = [
    ("SUNDA", "gen-sunda"),
    ("CAYMAN", "gen-cayman"),
    ("MARIANA", "gen-mariana"),
    ("MARIANA_PLUS", "gen-mariana-plus"),
    ("MAVERICK", "gen-maverick"),
];

/// The variants with their cargo feature names (`RELEASE` is SUNDA's name for PERF).
pub const VARIANT_FEATURES: [(&str, &str); 7] = [
    ("RELEASE", "flavor-perf"),
    ("PERF", "flavor-perf"),
    ("DEBUG", "flavor-debug"),
    ("TEST", "flavor-test"),
    ("DKL_PERF", "flavor-dkl-perf"),
    ("DKL_DEBUG", "flavor-dkl-debug"),
    ("DKL_TEST", "flavor-dkl-test"),
];

/// The cargo features whose selection reproduces the vendor's reduced front library
/// (`libnrtucode.so`): PERF/RELEASE and DKL_PERF images of SUNDA, CAYMAN, MARIANA and
/// MARIANA_PLUS. This is the one definition of the front selection: the core's `front` feature
/// mirrors it (checked against `cargo metadata` by the test crates/xtask/tests/policy), the
/// look-alike's front build links exactly [`in_front_library`] getters, and the tests derive
/// from it.
pub const FRONT_FEATURES: [&str; 6] = [
    "gen-sunda",
    "gen-cayman",
    "gen-mariana",
    "gen-mariana-plus",
    "flavor-perf",
    "flavor-dkl-perf",
];

/// The cargo feature that embeds `getter`'s generation, if the facts know the generation.
pub fn generation_feature(getter: &Getter) -> Option<&'static str> {
    GENERATIONS
        .iter()
        .find(|(name, _)| *name == getter.gen_name)
        .map(|(_, feature)| *feature)
}

/// The cargo feature that embeds `getter`'s flavor family (`None` for profiler getters, which
/// only their generation selects, and for unknown variants).
pub fn variant_feature(getter: &Getter) -> Option<&'static str> {
    VARIANT_FEATURES
        .iter()
        .find(|(name, _)| *name == getter.variant)
        .map(|(_, feature)| *feature)
}

/// Whether a build with exactly `enabled` features embeds `getter` (its generation's feature
/// and, for a memory image, its flavor family's feature are both enabled).
pub fn selected_by(getter: &Getter, enabled: impl Fn(&str) -> bool) -> bool {
    let generation = generation_feature(getter).is_some_and(&enabled);
    let flavor = getter.is_prof() || variant_feature(getter).is_some_and(&enabled);
    generation && flavor
}

/// Whether the vendor's front library links `getter` (has its stub and its blob).
pub fn in_front_library(getter: &Getter) -> bool {
    selected_by(getter, |feature| FRONT_FEATURES.contains(&feature))
}

/// One `image_list` slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageSlotFact {
    /// Flat index 0..=37.
    pub idx: u32,
    /// Generation, `None` for the empty slot 36.
    pub gen_name: Option<&'static str>,
    /// Core class (`NX`/`Q7`), `None` for the empty slot.
    pub class: Option<&'static str>,
    /// Engine, `None` for the empty slot.
    pub engine: Option<&'static str>,
    /// Virtual address of the descriptor array in the vendor binary (0 for the empty slot).
    pub desc_va: u64,
    /// Flavor keys in the vendor's table order.
    pub flavor_keys: Vec<u32>,
}

/// The 38 `image_list` slots.
pub fn image_slots() -> Vec<ImageSlotFact> {
    records(IMAGE_LIST_TSV)
        .map(|f| {
            let opt = |s: &'static str| (s != "-").then_some(s);
            let keys: Vec<u32> = f
                .get(6)
                .copied()
                .unwrap_or("")
                .split(',')
                .filter(|k| !k.is_empty())
                .map(|k| k.parse().expect("image_list.tsv: flavor key"))
                .collect();
            let count: usize = f[4].parse().expect("image_list.tsv: count");
            assert_eq!(count, keys.len(), "image_list.tsv: count vs keys in {f:?}");
            ImageSlotFact {
                idx: f[0].parse().expect("image_list.tsv: idx"),
                gen_name: opt(f[1]),
                class: opt(f[2]),
                engine: opt(f[3]),
                desc_va: parse_int(f[5]).expect("image_list.tsv: desc_va"),
                flavor_keys: keys,
            }
        })
        .collect()
}

/// One `hwdecode_table_list` slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HwDecodeSlotFact {
    /// Flat index 0..=37.
    pub idx: u32,
    /// Generation (`-` rows give `None`).
    pub gen_name: Option<&'static str>,
    /// Engine (`-` rows give `None`).
    pub engine: Option<&'static str>,
    /// PROF_CAM getter symbol, `None` for NULL.
    pub cam: Option<&'static str>,
    /// PROF_TABLE getter symbol, `None` for NULL.
    pub table: Option<&'static str>,
}

/// The 38 `hwdecode_table_list` slots.
pub fn hwdecode_slots() -> Vec<HwDecodeSlotFact> {
    records(HWDECODE_LIST_TSV)
        .map(|f| {
            let opt = |s: &'static str| (s != "-").then_some(s);
            HwDecodeSlotFact {
                idx: f[0].parse().expect("hwdecode_list.tsv: idx"),
                gen_name: opt(f[1]),
                engine: opt(f[2]),
                cam: opt(f[3]),
                table: opt(f[4]),
            }
        })
        .collect()
}

/// Profiler blob facts for one (generation, engine).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfBlobFact {
    /// Generation.
    pub gen_name: &'static str,
    /// Engine.
    pub engine: &'static str,
    /// Armed CAM records (a contiguous prefix ending in the wildcard).
    pub cam_armed: usize,
    /// Populated TABLE records (equal to `cam_armed`).
    pub table_populated: usize,
    /// sha256 prefix of the vendor's CAM blob (equal prefixes = identical blobs).
    pub cam_sha256_prefix: &'static str,
    /// sha256 prefix of the vendor's TABLE blob.
    pub table_sha256_prefix: &'static str,
}

/// The 15 profiler blob facts.
pub fn prof_blobs() -> Vec<ProfBlobFact> {
    records(PROF_BLOBS_TSV)
        .map(|f| ProfBlobFact {
            gen_name: f[0],
            engine: f[1],
            cam_armed: f[2].parse().expect("prof_blobs.tsv: cam_armed"),
            table_populated: f[3].parse().expect("prof_blobs.tsv: table_populated"),
            cam_sha256_prefix: f[4],
            table_sha256_prefix: f[5],
        })
        .collect()
}

/// The profiler facts of one (generation, engine), if it has a profiler.
pub fn prof_blob(gen_name: &str, engine: &str) -> Option<ProfBlobFact> {
    prof_blobs()
        .into_iter()
        .find(|p| p.gen_name == gen_name && p.engine == engine)
}

/// A published hash of one vendor blob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownHash {
    /// Getter symbol (with `_get`).
    pub getter: &'static str,
    /// Blob size.
    pub size: usize,
    /// Full lowercase hex sha256, or a prefix of it.
    pub sha256_or_prefix: &'static str,
}

/// The published hashes.
pub fn known_hashes() -> Vec<KnownHash> {
    records(KNOWN_HASHES_TSV)
        .map(|f| KnownHash {
            getter: f[0],
            size: parse_int(f[1]).expect("known_hashes.tsv: size") as usize,
            sha256_or_prefix: f[2],
        })
        .collect()
}

/// One vendor binary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinaryFact {
    /// File name.
    pub name: &'static str,
    /// Size in bytes.
    pub size: u64,
    /// Full sha256 (lowercase hex) or a prefix of it.
    pub sha256_or_prefix: &'static str,
    /// GNU build ID (hex) or `unknown`.
    pub build_id: &'static str,
}

/// The two vendor binaries.
pub fn binaries() -> Vec<BinaryFact> {
    records(BINARIES_TSV)
        .map(|f| BinaryFact {
            name: f[0],
            size: f[1].parse().expect("binaries.tsv: size"),
            sha256_or_prefix: f[2].split_whitespace().next().unwrap_or(""),
            build_id: f[3],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_library_links_perf_and_dkl_perf_of_four_generations() {
        let linked: Vec<Getter> = getters().into_iter().filter(in_front_library).collect();
        assert!(linked.iter().all(|g| g.gen_name != "MAVERICK"));
        assert!(
            linked
                .iter()
                .all(|g| matches!(g.variant, "RELEASE" | "PERF" | "DKL_PERF" | "PROF"))
        );
        let counted = getters()
            .iter()
            .filter(|g| {
                g.gen_name != "MAVERICK"
                    && matches!(g.variant, "RELEASE" | "PERF" | "DKL_PERF" | "PROF")
            })
            .count();
        assert_eq!(linked.len(), counted);
    }

    #[test]
    fn getter_counts_match_the_facts_readme() {
        let all = getters();
        assert_eq!(all.len(), 386);
        let reachable: Vec<_> = all.iter().filter(|g| g.is_resolver_reachable()).collect();
        assert_eq!(reachable.len(), 354);
        assert_eq!(reachable.iter().filter(|g| g.real).count(), 193);
        assert_eq!(all.iter().filter(|g| g.is_prof()).count(), 30);
        assert!(all.iter().all(|g| g.real || g.size == 0));
    }

    #[test]
    fn image_list_has_38_slots_and_102_descriptors() {
        let slots = image_slots();
        assert_eq!(slots.len(), 38);
        assert!(slots.iter().enumerate().all(|(i, s)| s.idx as usize == i));
        let total: usize = slots.iter().map(|s| s.flavor_keys.len()).sum();
        assert_eq!(total, 102);
        assert!(slots[36].gen_name.is_none() && slots[36].flavor_keys.is_empty());
    }

    #[test]
    fn every_descriptor_key_names_four_getters() {
        let all = getters();
        for slot in image_slots() {
            let (Some(g), Some(c), Some(e)) = (slot.gen_name, slot.class, slot.engine) else {
                continue;
            };
            for key in &slot.flavor_keys {
                let variant = variant_for_key(g, *key).expect("known key");
                for region in REGIONS {
                    assert!(
                        all.iter().any(|x| x.gen_name == g
                            && x.class == c
                            && x.engine == e
                            && x.variant == variant
                            && x.region == region),
                        "{g} {c} {e} {variant} {region}"
                    );
                }
            }
        }
    }

    #[test]
    fn hwdecode_list_has_15_populated_slots_in_the_facts() {
        let slots = hwdecode_slots();
        assert_eq!(slots.len(), 38);
        let populated: Vec<_> = slots.iter().filter(|s| s.cam.is_some()).collect();
        assert_eq!(populated.len(), 15);
        let all = getters();
        for s in populated {
            for sym in [s.cam.unwrap(), s.table.unwrap()] {
                assert!(all.iter().any(|g| g.symbol == sym), "{sym}");
            }
        }
        assert_eq!(prof_blobs().len(), 15);
    }

    #[test]
    fn binaries_and_hashes_parse() {
        assert_eq!(binaries().len(), 2);
        assert_eq!(binaries()[0].size, 10_276_288);
        assert_eq!(known_hashes().len(), 4);
    }
}
