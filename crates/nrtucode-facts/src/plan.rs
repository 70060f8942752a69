//! What the core's build script decides, as ordinary functions over in-memory inputs: which
//! getters the cargo features select, where each boundary cursor points, whether a blob
//! directory's manifest and files agree with the facts, and the text of the generated blob
//! module.
//!
//! The build script only reads its inputs (the environment, the fixture bytes or a blob
//! directory), calls [`plan`] with a [`BlobProvider`], and writes what [`render`] returns.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use crate::Getter;
use crate::facts::{FRONT_FEATURES, GENERATIONS, REGIONS, VARIANT_FEATURES, selected_by};
use crate::manifest::{MANIFEST_FILE, Manifest, ManifestRow};

/// One distinct blob to embed: a `static` named by the stem of the first getter returning
/// those bytes (e.g. `CAYMAN_NX_ACT_PERF_IRAM`), holding the file at `path`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blob {
    /// The stem: the name of the `static` and the end of its input section's name.
    pub stem: &'static str,
    /// The file the bytes are included from.
    pub path: String,
    /// Its length in bytes.
    pub len: usize,
    /// Its SHA-256, when the digest table is wanted (feature `digest`).
    pub sha256: Option<[u8; 32]>,
}

/// What a getter becomes in the generated tables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Slice {
    /// A NULL getter: deselected by the cargo features.
    #[default]
    Null,
    /// The whole of blob number `n` (an index into [`Tables::blobs`]).
    Whole(usize),
    /// A boundary cursor: the empty slice at the start of blob `n`.
    StartOf(usize),
    /// A boundary cursor: the empty slice one past the end of blob `n`.
    EndOf(usize),
}

/// Everything the generated module defines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tables {
    /// The distinct blobs, in emission order.
    pub blobs: Vec<Blob>,
    /// Per image (`<GEN>_<CLASS>_<ENGINE>_<VARIANT>`): IRAM, DRAM, SRAM, EXTRAM.
    pub images: BTreeMap<String, [Slice; 4]>,
    /// Per profiler (`<GEN>_<CLASS>_<ENGINE>_PROF`): PROF_CAM, PROF_TABLE.
    pub profilers: BTreeMap<String, [Slice; 2]>,
    /// Whether to emit the `EMBEDDED` digest table.
    pub with_digests: bool,
}

/// A blob a [`BlobProvider`] holds for a getter: `key` identifies the content (the same key is
/// embedded once), `path` is where the bytes are included from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourcedBlob {
    /// Identity of the bytes: equal keys are one blob.
    pub key: String,
    /// The file to include.
    pub path: String,
    /// Its SHA-256, if the source computed it.
    pub sha256: Option<[u8; 32]>,
}

/// Where the bytes of the selected getters come from (the fixtures or a blob directory).
pub trait BlobProvider {
    /// The blob holding a selected real getter's bytes, `None` when the source has nothing to
    /// embed for it, or why it cannot be embedded.
    fn blob_of(&mut self, getter: &Getter) -> Result<Option<SourcedBlob>, String>;

    /// Whether a selected boundary cursor agrees with the source.
    fn check_cursor(&self, getter: &Getter) -> Result<(), String>;
}

/// Whether the enabled generation and flavor features are exactly the front library's.
pub fn is_front_selection(enabled: impl Fn(&str) -> bool) -> bool {
    GENERATIONS
        .iter()
        .map(|(_, feature)| *feature)
        .chain(VARIANT_FEATURES.iter().map(|(_, feature)| *feature))
        .all(|feature| enabled(feature) == FRONT_FEATURES.contains(&feature))
}

/// The generated tables for the resolver-reachable `facts` that `enabled` features select,
/// with bytes from `source`; or every problem found (all of them, not just the first).
pub fn plan(
    facts: &[Getter],
    enabled: impl Fn(&str) -> bool,
    source: &mut impl BlobProvider,
    with_digests: bool,
) -> Result<Tables, Vec<String>> {
    let selected = |g: &Getter| selected_by(g, &enabled);
    let reachable = || facts.iter().filter(|g| g.is_resolver_reachable());
    let mut tables = Tables {
        with_digests,
        ..Tables::default()
    };
    let mut problems = Vec::new();
    let mut by_key: HashMap<String, usize> = HashMap::new();
    // Symbol -> blob number, for the cursors that point into a neighbour.
    let mut bound: HashMap<&str, usize> = HashMap::new();
    // Real blobs first, so that every cursor finds the blob it points into.
    for getter in reachable().filter(|g| g.size > 0 && selected(g)) {
        match source.blob_of(getter) {
            Ok(Some(sourced)) => {
                let n = *by_key.entry(sourced.key).or_insert_with(|| {
                    tables.blobs.push(Blob {
                        stem: getter.stem(),
                        path: sourced.path,
                        len: getter.size,
                        sha256: sourced.sha256,
                    });
                    tables.blobs.len() - 1
                });
                bound.insert(getter.symbol, n);
            }
            Ok(None) => {}
            Err(problem) => problems.push(problem),
        }
    }
    for getter in reachable() {
        let slice = if !selected(getter) {
            Slice::Null
        } else if getter.size > 0 {
            bound
                .get(getter.symbol)
                .map_or(Slice::Null, |&n| Slice::Whole(n))
        } else {
            let placed = source.check_cursor(getter).and_then(|()| {
                let place = cursor_place(getter, facts)?;
                let n = *bound.get(place.blob.symbol).ok_or_else(|| {
                    format!(
                        "{}: its blob {} is not embedded",
                        getter.symbol, place.blob.symbol
                    )
                })?;
                Ok(match place.end {
                    CursorEnd::Start => Slice::StartOf(n),
                    CursorEnd::End => Slice::EndOf(n),
                })
            });
            placed.unwrap_or_else(|problem| {
                problems.push(problem);
                Slice::Null
            })
        };
        let image = getter.id.image_name();
        if getter.is_prof() {
            let kind = usize::from(getter.id.region == "TABLE");
            tables.profilers.entry(image).or_default()[kind] = slice;
        } else {
            let region = REGIONS
                .iter()
                .position(|r| *r == getter.id.region)
                .expect("the facts' regions are IRAM/DRAM/SRAM/EXTRAM");
            tables.images.entry(image).or_default()[region] = slice;
        }
    }
    if problems.is_empty() {
        Ok(tables)
    } else {
        Err(problems)
    }
}

/// Which end of a neighbouring blob a cursor points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CursorEnd {
    /// The blob's first byte.
    Start,
    /// One past its last byte.
    End,
}

/// Where a boundary cursor points: an end of a real blob of the same image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CursorPlace<'f> {
    /// The real getter whose blob the cursor points into.
    pub blob: &'f Getter,
    /// Which end.
    pub end: CursorEnd,
}

/// The places a boundary cursor may point at, in the order they are tried: one past the end of
/// the same image's DRAM blob, one past the end of its SRAM blob, the start of its DRAM blob
/// (the vendor's 151, 5 and 5 cursors; one SRAM cursor is both the end of DRAM and the start of
/// EXTRAM, and is the end of DRAM like its 150 siblings).
const CURSOR_PLACES: [(&str, CursorEnd); 3] = [
    ("DRAM", CursorEnd::End),
    ("SRAM", CursorEnd::End),
    ("DRAM", CursorEnd::Start),
];

/// Where `cursor` points, found by its address in the facts: at the same end of the same
/// image's blob, or why it is at none of the places a cursor may be.
pub fn cursor_place<'f>(cursor: &Getter, facts: &'f [Getter]) -> Result<CursorPlace<'f>, String> {
    for (region, end) in CURSOR_PLACES {
        let Some(blob) = facts
            .iter()
            .find(|g| g.size > 0 && g.id.region == region && g.id.same_image(&cursor.id))
        else {
            continue;
        };
        let at = match end {
            CursorEnd::Start => blob.blob_va,
            CursorEnd::End => blob.blob_va + blob.size as u64,
        };
        if at == cursor.blob_va {
            return Ok(CursorPlace { blob, end });
        }
    }
    Err(format!(
        "{}: cursor at {:#x} is neither the end of the same image's DRAM or SRAM blob nor the \
         start of its DRAM blob",
        cursor.id.symbol, cursor.blob_va
    ))
}

/// The manifest row of `getter`, checked to have the facts' size.
pub fn manifest_row<'m>(
    manifest: &'m Manifest,
    getter: &Getter,
) -> Result<&'m ManifestRow, String> {
    let name = getter.symbol;
    let row = manifest
        .row(name)
        .ok_or_else(|| format!("{name}: no row in {MANIFEST_FILE}"))?;
    if row.size != getter.size as u64 {
        return Err(format!(
            "{name}: {MANIFEST_FILE} says {} bytes, the facts say {}",
            row.size, getter.size
        ));
    }
    Ok(row)
}

/// The Rust expression of a getter in the generated module.
fn expression(slice: Slice, blobs: &[Blob]) -> String {
    match slice {
        Slice::Null => "None".to_owned(),
        Slice::Whole(n) => format!("Some(&{}.0)", blobs[n].stem),
        Slice::StartOf(n) => format!("Some({}.0.split_at(0).0)", blobs[n].stem),
        Slice::EndOf(n) => format!("Some({}.0.split_at({}).1)", blobs[n].stem, blobs[n].len),
    }
}

/// The generated module: an `@generated` header naming what produced it from what
/// (`source_name`), one `embed_blob!` per distinct blob (the core's one definition of the
/// link section, alignment and section prefix), the per-image region arrays, the counts and,
/// with digests, the `EMBEDDED` table.
pub fn render(tables: &Tables, source_name: &str) -> String {
    let mut code = format!(
        "// @generated by the nrtucode build script (build.rs, through \
         nrtucode_facts::plan::render) from nrtucode-facts' tables/getters.tsv and {source_name}; do not edit.\n\n"
    );
    let blobs = &tables.blobs;
    // The symbol `BLOB_NNN` (NNN the emission order) is only for the linker: rustc lays the
    // statics of a module out in symbol order, so equal-length numbered symbols keep the blobs
    // in the facts' order in memory (which blob neighbours which, as in the vendor's library).
    // The code names each blob by its stem.
    for (n, blob) in blobs.iter().enumerate() {
        writeln!(
            code,
            "embed_blob!({}, BLOB_{n:03}, {}, {:?});",
            blob.stem, blob.len, blob.path
        )
        .unwrap();
    }
    for (name, regions) in &tables.images {
        let exprs: Vec<String> = regions.iter().map(|s| expression(*s, blobs)).collect();
        writeln!(
            code,
            "/// `{name}`: IRAM, DRAM, SRAM, EXTRAM.\npub(crate) const {name}: Regions = [{}];",
            exprs.join(", ")
        )
        .unwrap();
    }
    for (name, kinds) in &tables.profilers {
        let exprs: Vec<String> = kinds.iter().map(|s| expression(*s, blobs)).collect();
        writeln!(
            code,
            "/// `{name}`: PROF_CAM, PROF_TABLE.\npub(crate) const {name}: ProfPair = [{}];",
            exprs.join(", ")
        )
        .unwrap();
    }
    let bytes: usize = blobs.iter().map(|b| b.len).sum();
    writeln!(
        code,
        "/// Distinct embedded blobs.\npub(crate) const DISTINCT_BLOBS: usize = {};\n\
         /// Bytes of the distinct embedded blobs.\npub(crate) const EMBEDDED_BYTES: usize = {bytes};",
        blobs.len()
    )
    .unwrap();
    if tables.with_digests {
        let mut entries = String::new();
        for blob in blobs {
            let digest: String = blob
                .sha256
                .expect("a digest for every blob when digests are wanted")
                .iter()
                .map(|b| format!("{b:#04x},"))
                .collect();
            writeln!(
                entries,
                "    crate::catalog::EmbeddedBlob::new(&{}.0, [{digest}]),",
                blob.stem
            )
            .unwrap();
        }
        writeln!(
            code,
            "/// Every distinct embedded blob with its SHA-256, in emission order.\n\
             #[cfg(feature = \"digest\")]\n\
             pub(crate) static EMBEDDED: [crate::catalog::EmbeddedBlob; {}] = [\n{entries}];",
            blobs.len()
        )
        .unwrap();
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GetterId;
    use crate::manifest::ManifestHeader;

    /// A CAYMAN NX ACT getter of the facts' shape (for the tests).
    fn getter(symbol: &'static str, region: &'static str, blob_va: u64, size: usize) -> Getter {
        Getter {
            id: GetterId {
                gen_name: "CAYMAN",
                class: "NX",
                engine: "ACT",
                variant: if region.starts_with("PROF") {
                    "PROF"
                } else {
                    "PERF"
                },
                region: region.trim_start_matches("PROF_"),
                symbol,
            },
            accessor_va: 0,
            blob_va,
            size,
            real: size > 0,
        }
    }

    /// A source that embeds every real getter as its own blob, or refuses the listed symbols.
    struct Memory {
        refuse: Vec<&'static str>,
        shared: Vec<(&'static str, &'static str)>,
    }

    impl BlobProvider for Memory {
        fn blob_of(&mut self, g: &Getter) -> Result<Option<SourcedBlob>, String> {
            if self.refuse.contains(&g.symbol) {
                return Err(format!("{}: refused", g.symbol));
            }
            let key = self
                .shared
                .iter()
                .find(|(s, _)| *s == g.symbol)
                .map_or(g.symbol, |(_, key)| key);
            Ok(Some(SourcedBlob {
                key: key.to_owned(),
                path: format!("/blobs/{key}.bin"),
                sha256: Some([0xab; 32]),
            }))
        }

        fn check_cursor(&self, _: &Getter) -> Result<(), String> {
            Ok(())
        }
    }

    fn image() -> Vec<Getter> {
        vec![
            getter("CAYMAN_NX_ACT_PERF_IRAM_get", "IRAM", 0x1000, 0x100),
            getter("CAYMAN_NX_ACT_PERF_DRAM_get", "DRAM", 0x2000, 0x40),
            getter("CAYMAN_NX_ACT_PERF_SRAM_get", "SRAM", 0x2040, 0),
            getter("CAYMAN_NX_ACT_PERF_EXTRAM_get", "EXTRAM", 0x2000, 0),
        ]
    }

    fn all_enabled(_: &str) -> bool {
        true
    }

    #[test]
    fn cursors_point_at_the_end_or_start_of_their_images_dram_blob() {
        let facts = image();
        let sram = cursor_place(&facts[2], &facts).unwrap();
        assert_eq!(
            (sram.blob.symbol, sram.end),
            (facts[1].symbol, CursorEnd::End)
        );
        let extram = cursor_place(&facts[3], &facts).unwrap();
        assert_eq!(
            (extram.blob.symbol, extram.end),
            (facts[1].symbol, CursorEnd::Start)
        );
        let mut stray = facts[3].clone();
        stray.blob_va = 0x3000;
        let err = cursor_place(&stray, &facts).unwrap_err();
        assert!(err.contains("cursor at 0x3000"), "{err}");
    }

    #[test]
    fn a_cursor_never_points_into_another_image() {
        let mut facts = image();
        facts[1].id.variant = "DEBUG"; // the DRAM blob now belongs to another image
        assert!(cursor_place(&facts[2], &facts).is_err());
    }

    #[test]
    fn plan_names_blobs_by_stem_and_places_cursors() {
        let facts = image();
        let mut source = Memory {
            refuse: vec![],
            shared: vec![],
        };
        let tables = plan(&facts, all_enabled, &mut source, false).unwrap();
        let stems: Vec<&str> = tables.blobs.iter().map(|b| b.stem).collect();
        assert_eq!(
            stems,
            ["CAYMAN_NX_ACT_PERF_IRAM", "CAYMAN_NX_ACT_PERF_DRAM"]
        );
        assert_eq!(
            tables.images["CAYMAN_NX_ACT_PERF"],
            [
                Slice::Whole(0),
                Slice::Whole(1),
                Slice::EndOf(1),
                Slice::StartOf(1)
            ]
        );
    }

    #[test]
    fn equal_content_is_embedded_once_under_the_first_stem() {
        let facts = image();
        let mut source = Memory {
            refuse: vec![],
            shared: vec![("CAYMAN_NX_ACT_PERF_DRAM_get", "CAYMAN_NX_ACT_PERF_IRAM_get")],
        };
        let tables = plan(&facts, all_enabled, &mut source, false).unwrap();
        assert_eq!(tables.blobs.len(), 1);
        assert_eq!(tables.images["CAYMAN_NX_ACT_PERF"][1], Slice::Whole(0));
    }

    #[test]
    fn deselected_getters_are_null_and_read_nothing() {
        let facts = image();
        // Refusing every blob would fail; with flavor-perf off nothing is asked for.
        let mut source = Memory {
            refuse: facts.iter().map(|g| g.symbol).collect(),
            shared: vec![],
        };
        let tables = plan(&facts, |f| f != "flavor-perf", &mut source, false).unwrap();
        assert!(tables.blobs.is_empty());
        assert_eq!(tables.images["CAYMAN_NX_ACT_PERF"], [Slice::Null; 4]);
    }

    #[test]
    fn every_problem_is_reported_and_a_cursor_without_its_blob_is_one() {
        let facts = image();
        let mut source = Memory {
            refuse: vec!["CAYMAN_NX_ACT_PERF_IRAM_get", "CAYMAN_NX_ACT_PERF_DRAM_get"],
            shared: vec![],
        };
        let problems = plan(&facts, all_enabled, &mut source, false).unwrap_err();
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(problems[2].contains("is not embedded"), "{problems:?}");
    }

    #[test]
    fn front_selection_is_exactly_the_front_features() {
        assert!(is_front_selection(|f| FRONT_FEATURES.contains(&f)));
        assert!(!is_front_selection(all_enabled));
        assert!(!is_front_selection(
            |f| f != "gen-sunda" && FRONT_FEATURES.contains(&f)
        ));
    }

    fn manifest_with(size: u64, sha256: &str) -> Manifest {
        Manifest {
            header: ManifestHeader::default(),
            rows: vec![ManifestRow {
                id: GetterId::from(&image()[0]),
                size,
                sha256: sha256.into(),
                blob_va: 0x1000,
                file: Some("x.bin".into()),
            }],
        }
    }

    #[test]
    fn manifest_checks_name_the_blob_and_what_differs() {
        let g = &image()[0];
        let good = manifest_with(0x100, &"ab".repeat(32));
        assert_eq!(manifest_row(&good, g).unwrap().size, 0x100);
        let wrong_size = manifest_with(7, &"ab".repeat(32));
        assert!(
            manifest_row(&wrong_size, g)
                .unwrap_err()
                .contains("says 7 bytes")
        );
        assert!(
            manifest_row(&Manifest::default(), g)
                .unwrap_err()
                .contains("no row")
        );
    }

    #[test]
    fn render_has_a_generated_header_and_embeds_through_the_core_macro() {
        let facts = image();
        let mut source = Memory {
            refuse: vec![],
            shared: vec![],
        };
        let tables = plan(&facts, all_enabled, &mut source, true).unwrap();
        let code = render(&tables, "memory");
        assert!(code.starts_with("// @generated by the nrtucode build script"));
        assert!(code.contains(
            "embed_blob!(CAYMAN_NX_ACT_PERF_DRAM, BLOB_001, 64, \"/blobs/CAYMAN_NX_ACT_PERF_DRAM_get.bin\");"
        ));
        assert!(code.contains(
            "pub(crate) const CAYMAN_NX_ACT_PERF: Regions = [Some(&CAYMAN_NX_ACT_PERF_IRAM.0), \
             Some(&CAYMAN_NX_ACT_PERF_DRAM.0), Some(CAYMAN_NX_ACT_PERF_DRAM.0.split_at(64).1), \
             Some(CAYMAN_NX_ACT_PERF_DRAM.0.split_at(0).0)];"
        ));
        assert!(code.contains("EMBEDDED_BYTES: usize = 320;"));
        assert!(code.contains("EmbeddedBlob::new(&CAYMAN_NX_ACT_PERF_IRAM.0, [0xab,"));
        // The generated module never spells an attribute or `unsafe` itself.
        assert!(!code.contains("unsafe") && !code.contains("#[cfg_attr"));
    }
}
