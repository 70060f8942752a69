//! Binds the blob bytes the resolvers return.
//!
//! Default: the deterministic fixture set generated from `blobs/getters.tsv` by
//! `nrtucode-facts` (written to `OUT_DIR`, never committed). With `NRTUCODE_BLOB_DIR=<dir>`:
//! the blobs of a directory written by `nrtucode carve` (`manifest.tsv` + one file per distinct
//! blob). Either way the output is `$OUT_DIR/blobs.rs`: one `static` per distinct blob content
//! and, per (generation, class, engine, variant), a `const` array of the four region slices
//! that the hand-written tables in `src/catalog.rs` refer to. A boundary cursor is an empty slice
//! at the vendor's address: one past the end of (or at the start of) the same image's blob, as
//! its address in the facts says. A getter whose generation or flavor
//! family is deselected by cargo features is `None` (a NULL getter), and its bytes are not
//! embedded. Nothing is ever silently replaced by a fixture: a blob directory that lacks a blob
//! the selected features need, or holds one of the wrong size or content (its SHA-256 differs
//! from the manifest's), fails the build naming the blob and the file.
//!
//! On ELF targets each blob `static` gets its own input section, `.rodata.nrtucode.<STEM>`
//! (`<STEM>` is the vendor getter symbol without `_get` of the first getter returning those
//! bytes), so a linker script can place every blob with `*(.rodata.nrtucode.*)` and
//! `--gc-sections` still drops each unused blob on its own. With feature `verify` the output also
//! holds a table of every distinct blob with its SHA-256.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::{env, fs, process};

use nrtucode_facts::facts::{FRONT_FEATURES, GENERATIONS, REGIONS, VARIANT_FEATURES, selected_by};
use nrtucode_facts::hex::lower_hex;
use nrtucode_facts::manifest::{MANIFEST_FILE, ManifestRow};
use nrtucode_facts::{Getter, Manifest, fixture_bytes, getters};
use sha2::{Digest, Sha256};

/// Alignment of every embedded blob, in bytes (`nrtucode::BLOB_ALIGN`, tested equal).
const BLOB_ALIGN: usize = 16;

/// Prefix of every blob's input section on ELF targets (documented in README and `catalog`).
const SECTION_PREFIX: &str = ".rodata.nrtucode.";

/// Targets whose object format is ELF: not Mach-O (Apple), COFF (Windows, UEFI), XCOFF (AIX)
/// or wasm. Only these get the per-blob `link_section`.
const ELF_CFG: &str = "not(any(target_vendor = \"apple\", target_os = \"windows\", \
                       target_os = \"uefi\", target_os = \"aix\", target_family = \"wasm\"))";

fn main() {
    // The fact tables and the fixture generator are compiled into nrtucode-facts, this script's
    // build-dependency: a change there rebuilds and reruns this script. (Naming their paths
    // here would point outside the published package, where cargo reruns on every build.)
    println!("cargo::rerun-if-env-changed=NRTUCODE_BLOB_DIR");
    println!("cargo::rustc-check-cfg=cfg(nrtucode_fixtures)");

    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let mut source = match env::var_os("NRTUCODE_BLOB_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => Source::directory(PathBuf::from(dir)),
        None => Source::Fixtures {
            dir: out_dir.join("fixtures"),
            by_content: HashMap::new(),
        },
    };
    if matches!(source, Source::Fixtures { .. }) {
        println!("cargo::rustc-cfg=nrtucode_fixtures");
    }
    println!("cargo::rustc-check-cfg=cfg(nrtucode_front_selection)");
    if front_selection() {
        println!("cargo::rustc-cfg=nrtucode_front_selection");
    }

    let mut blobs = Blobs {
        with_digests: env::var_os("CARGO_FEATURE_VERIFY").is_some(),
        ..Blobs::default()
    };
    let mut problems = Vec::new();
    // (gen, class, engine, variant) -> region slices, in the facts' order of first appearance.
    let mut cells: BTreeMap<String, [String; 4]> = BTreeMap::new();
    let mut prof: BTreeMap<String, [String; 2]> = BTreeMap::new();
    let facts = getters();
    // Symbol -> the static holding its bytes, for the cursors that point into a neighbour.
    let mut bound: HashMap<&str, String> = HashMap::new();
    let reachable = || facts.iter().filter(|g| g.is_resolver_reachable());
    // Real blobs first, so that every cursor finds the blob it points into.
    for getter in reachable().filter(|g| g.size > 0 && selected(g)) {
        match source.bytes_of(getter, &mut blobs) {
            Ok(Some(name)) => {
                bound.insert(getter.symbol, name);
            }
            Ok(None) => {}
            Err(problem) => problems.push(problem),
        }
    }
    for getter in reachable() {
        let expr = if !selected(getter) {
            "None".to_owned()
        } else if getter.size > 0 {
            match bound.get(getter.symbol) {
                Some(name) => format!("Some(&{name}.0)"),
                None => "None".to_owned(), // a problem was recorded above
            }
        } else {
            match source
                .check_cursor(getter)
                .and_then(|()| cursor_expr(getter, &facts, &bound))
            {
                Ok(expr) => expr,
                Err(problem) => {
                    problems.push(problem);
                    "None".to_owned()
                }
            }
        };
        let cell = format!(
            "{}_{}_{}_{}",
            getter.gen_name, getter.class, getter.engine, getter.variant
        );
        if getter.is_prof() {
            let kind = usize::from(getter.region == "TABLE");
            prof.entry(cell).or_default()[kind] = expr;
        } else {
            let region = REGIONS
                .iter()
                .position(|r| *r == getter.region)
                .expect("the facts' regions are IRAM/DRAM/SRAM/EXTRAM");
            cells.entry(cell).or_default()[region] = expr;
        }
    }
    if !problems.is_empty() {
        for problem in &problems {
            println!("cargo::error=NRTUCODE_BLOB_DIR: {problem}");
        }
        return;
    }

    let mut code = String::new();
    let source_name = match &source {
        Source::Fixtures { .. } => "the built-in fixture set",
        Source::Directory { .. } => "the blob directory named by NRTUCODE_BLOB_DIR",
    };
    writeln!(
        code,
        "// @generated by build.rs from blobs/getters.tsv and {source_name}; do not edit.\n"
    )
    .unwrap();
    if blobs.count > 0 {
        code.push_str("use crate::table::Aligned;\n\n");
    }
    code.push_str(&blobs.code);
    for (name, regions) in &cells {
        writeln!(
            code,
            "/// `{name}`: IRAM, DRAM, SRAM, EXTRAM.\npub(crate) const {name}: Regions = [{}];",
            regions.join(", ")
        )
        .unwrap();
    }
    for (name, kinds) in &prof {
        writeln!(
            code,
            "/// `{name}`: PROF_CAM, PROF_TABLE.\npub(crate) const {name}: ProfPair = [{}];",
            kinds.join(", ")
        )
        .unwrap();
    }
    writeln!(
        code,
        "/// Distinct embedded blobs.\npub(crate) const DISTINCT_BLOBS: usize = {};\n\
         /// Bytes of the distinct embedded blobs.\npub(crate) const EMBEDDED_BYTES: usize = {};",
        blobs.count, blobs.bytes
    )
    .unwrap();
    if blobs.with_digests {
        writeln!(
            code,
            "/// Every distinct embedded blob with its SHA-256, in emission order.\n\
             #[cfg(feature = \"verify\")]\n\
             pub(crate) static EMBEDDED: [crate::verify::EmbeddedBlob; {}] = [\n{}];",
            blobs.count, blobs.table
        )
        .unwrap();
    }
    write_if_changed(&out_dir.join("blobs.rs"), code.as_bytes());
}

/// Whether cargo `feature` is enabled for this build.
fn enabled(feature: &str) -> bool {
    let var = format!("CARGO_FEATURE_{}", feature.to_uppercase().replace('-', "_"));
    env::var_os(var).is_some()
}

/// Whether the cargo features select this getter's generation and flavor family.
fn selected(getter: &Getter) -> bool {
    selected_by(getter, enabled)
}

/// Whether the enabled generation and flavor features are exactly the front library's.
fn front_selection() -> bool {
    GENERATIONS
        .iter()
        .map(|(_, feature)| *feature)
        .chain(VARIANT_FEATURES.iter().map(|(_, feature)| *feature))
        .all(|feature| enabled(feature) == FRONT_FEATURES.contains(&feature))
}

/// The `static`s emitted so far, one per distinct blob.
#[derive(Default)]
struct Blobs {
    code: String,
    count: usize,
    bytes: usize,
    by_path: HashMap<PathBuf, String>,
    /// Whether to emit the `EMBEDDED` digest table (feature `verify`).
    with_digests: bool,
    /// The entries of the `EMBEDDED` table.
    table: String,
}

impl Blobs {
    /// The name of the `static` holding the blob stored at `path` (emitting it once). `stem`
    /// names its section; `sha256` is needed only when `with_digests`.
    fn static_for(
        &mut self,
        path: &Path,
        len: usize,
        stem: &str,
        sha256: impl FnOnce() -> [u8; 32],
    ) -> String {
        if let Some(name) = self.by_path.get(path) {
            return name.clone();
        }
        let name = format!("BLOB_{:03}", self.count);
        writeln!(
            self.code,
            "#[cfg_attr({ELF_CFG}, unsafe(link_section = \"{SECTION_PREFIX}{stem}\"))]\n\
             static {name}: Aligned<[u8; {len}]> = \
             Aligned(*include_bytes_aligned::include_bytes_aligned!({BLOB_ALIGN}, {:?}));",
            path.display().to_string()
        )
        .unwrap();
        if self.with_digests {
            let digest: String = sha256().iter().map(|b| format!("{b:#04x},")).collect();
            writeln!(
                self.table,
                "    crate::verify::EmbeddedBlob::new(&{name}.0, [{digest}]),"
            )
            .unwrap();
        }
        self.count += 1;
        self.bytes += len;
        self.by_path.insert(path.to_owned(), name.clone());
        name
    }
}

/// The SHA-256 of `bytes`.
fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// Where blob bytes come from.
enum Source {
    /// Generated fixtures, written under `dir`, deduplicated by content.
    Fixtures {
        dir: PathBuf,
        by_content: HashMap<Vec<u8>, PathBuf>,
    },
    /// A carved blob directory; `checked` maps each file already hashed to its digest.
    Directory {
        dir: PathBuf,
        manifest: Manifest,
        checked: HashMap<PathBuf, [u8; 32]>,
    },
}

impl Source {
    fn directory(dir: PathBuf) -> Self {
        let path = dir.join(MANIFEST_FILE);
        println!("cargo::rerun-if-changed={}", path.display());
        let text = fs::read_to_string(&path).unwrap_or_else(|e| {
            fail(&format!("cannot read {}: {e}", path.display()));
        });
        let manifest = Manifest::parse(&text).unwrap_or_else(|e| {
            fail(&format!("{}: {e}", dir.display()));
        });
        Source::Directory {
            dir,
            manifest,
            checked: HashMap::new(),
        }
    }

    /// The `static` holding a selected real getter's bytes, or why it cannot be embedded.
    fn bytes_of(&mut self, getter: &Getter, blobs: &mut Blobs) -> Result<Option<String>, String> {
        match self {
            Source::Fixtures { dir, by_content } => {
                let bytes = fixture_bytes(getter);
                let path = match by_content.get(&bytes) {
                    Some(path) => path.clone(),
                    None => {
                        fs::create_dir_all(&*dir).expect("create the fixture directory");
                        let path = dir.join(format!("{}.bin", getter.stem()));
                        write_if_changed(&path, &bytes);
                        path
                    }
                };
                let name = blobs.static_for(&path, getter.size, getter.stem(), || sha256(&bytes));
                by_content.entry(bytes).or_insert(path);
                Ok(Some(name))
            }
            Source::Directory { manifest, .. } if getter.size == 0 => {
                check_manifest_size(manifest, getter).map(|_| None)
            }
            Source::Directory {
                dir,
                manifest,
                checked,
            } => {
                let name = getter.symbol;
                let row = check_manifest_size(manifest, getter)?;
                let file = row
                    .file
                    .as_ref()
                    .ok_or_else(|| format!("{name}: {MANIFEST_FILE} names no file"))?;
                let path = dir.join(file);
                println!("cargo::rerun-if-changed={}", path.display());
                let path = fs::canonicalize(&path).unwrap_or(path);
                let digest = match checked.get(&path) {
                    Some(digest) => *digest,
                    None => {
                        // Read once, check the size, hash: a corrupted file never builds.
                        let bytes = fs::read(&path)
                            .map_err(|e| format!("{name}: {}: {e}", path.display()))?;
                        if bytes.len() != getter.size {
                            return Err(format!(
                                "{name}: {} holds {} bytes, the facts say {}",
                                path.display(),
                                bytes.len(),
                                getter.size
                            ));
                        }
                        let digest = sha256(&bytes);
                        checked.insert(path.clone(), digest);
                        digest
                    }
                };
                if !lower_hex(&digest).eq_ignore_ascii_case(&row.sha256) {
                    return Err(format!(
                        "{name}: {} has SHA-256 {}, {MANIFEST_FILE} says {} (corrupted file?)",
                        path.display(),
                        lower_hex(&digest),
                        row.sha256
                    ));
                }
                Ok(Some(blobs.static_for(
                    &path,
                    getter.size,
                    getter.stem(),
                    || digest,
                )))
            }
        }
    }

    /// A blob directory must list a cursor with size 0 like the facts; fixtures always do.
    fn check_cursor(&self, getter: &Getter) -> Result<(), String> {
        match self {
            Source::Fixtures { .. } => Ok(()),
            Source::Directory { manifest, .. } => check_manifest_size(manifest, getter).map(drop),
        }
    }
}

/// The manifest row of `getter`, checked to have the facts' size.
fn check_manifest_size<'m>(
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

/// The places a boundary cursor may point at, in the order they are tried: one past the end of
/// the same image's DRAM blob, one past the end of its SRAM blob, the start of its DRAM blob
/// (the vendor's 151, 5 and 5 cursors; one SRAM cursor is both the end of DRAM and the start of
/// EXTRAM, and is the end of DRAM like its 150 siblings).
const CURSOR_PLACES: [(&str, CursorEnd); 3] = [
    ("DRAM", CursorEnd::End),
    ("SRAM", CursorEnd::End),
    ("DRAM", CursorEnd::Start),
];

/// Which end of a neighbouring blob a cursor points at.
#[derive(Clone, Copy)]
enum CursorEnd {
    Start,
    End,
}

/// A cursor's expression: an empty slice at the vendor's address, i.e. at the same end of the
/// same image's blob as the cursor's address in the facts, taken from that blob's `static` at
/// compile time (`split_at` is `const`; nothing runs at run time).
fn cursor_expr(
    cursor: &Getter,
    facts: &[Getter],
    bound: &HashMap<&str, String>,
) -> Result<String, String> {
    let same_image = |g: &&Getter| {
        g.gen_name == cursor.gen_name
            && g.class == cursor.class
            && g.engine == cursor.engine
            && g.variant == cursor.variant
            && g.size > 0
    };
    for (region, end) in CURSOR_PLACES {
        let Some(blob) = facts.iter().filter(same_image).find(|g| g.region == region) else {
            continue;
        };
        let at = match end {
            CursorEnd::Start => blob.blob_va,
            CursorEnd::End => blob.blob_va + blob.size as u64,
        };
        if at != cursor.blob_va {
            continue;
        }
        let name = bound.get(blob.symbol).ok_or_else(|| {
            format!(
                "{}: its blob {} is not embedded",
                cursor.symbol, blob.symbol
            )
        })?;
        return Ok(match end {
            CursorEnd::Start => format!("Some({name}.0.split_at(0).0)"),
            CursorEnd::End => format!("Some({name}.0.split_at({}).1)", blob.size),
        });
    }
    Err(format!(
        "{}: cursor at {:#x} is neither the end of the same image's DRAM or SRAM blob nor the \
         start of its DRAM blob",
        cursor.symbol, cursor.blob_va
    ))
}

/// Reports an unusable blob directory and stops the build.
fn fail(message: &str) -> ! {
    println!("cargo::error=NRTUCODE_BLOB_DIR: {message}");
    process::exit(1);
}

/// Writes `bytes` unless the file already holds them (keeps mtimes, and rebuilds, stable).
fn write_if_changed(path: &Path, bytes: &[u8]) {
    if fs::read(path).is_ok_and(|old| old == bytes) {
        return;
    }
    fs::write(path, bytes).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}
