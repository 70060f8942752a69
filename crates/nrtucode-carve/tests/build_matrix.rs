//! The build matrix: the look-alike compiled under every condition of
//! [`nrtucode_lookalike::CONDITIONS`] (`-O0` .. `-Og`, stack protector, `-pg`, large code
//! model, CET, packed relative relocations, separate code, gold), each kept unstripped,
//! `strip --strip-all`ed and without a section header table, carves byte-exact against the
//! builder's ground truth. A file without section headers gives the same manifest, row for
//! row, as the same file with them.
//!
//! Every cell runs: 2 variants x 13 conditions x 3 strippings = 78. The C is generated once per
//! variant and the conditions compile in parallel (one gcc per core), into a temporary directory
//! removed when the variant is done, passed or failed: the 78 libraries take about 500 MB and
//! rebuild in about 15 s on the 2-core CI machine, so they are not worth keeping between runs.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use nrtucode_carve::Found;
use nrtucode_carve::carve_bytes;
use nrtucode_facts::ManifestRow;
use nrtucode_lookalike::{
    CONDITIONS, Condition, LibraryBuild, Options, Stripping, build_with_condition, generate_c,
    ground_truth, strip_to,
};

/// Writes the C of `variant` into a new temporary directory (under cargo's target tmp, removed
/// on drop); returns the directory and the C file.
fn source(variant: LibraryBuild) -> (tempfile::TempDir, PathBuf) {
    let scratch = common::scratch();
    std::fs::create_dir_all(&scratch).unwrap();
    let dir = tempfile::Builder::new()
        .prefix(&format!("matrix-{}-", variant.name()))
        .tempdir_in(&scratch)
        .unwrap();
    let c = dir.path().join("lookalike.c");
    std::fs::write(&c, generate_c(&Options::new(variant))).unwrap();
    (dir, c)
}

/// Builds every condition of `variant` (in parallel) in all three strippings into `dir`;
/// returns the paths by (condition, stripping).
fn build(dir: &Path, c: &Path) -> BTreeMap<(&'static str, Stripping), PathBuf> {
    let conds = CONDITIONS;
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let out = std::sync::Mutex::new(BTreeMap::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(cond) = conds.get(i) else { break };
                    let paths = build_one(c, dir, cond);
                    out.lock().unwrap().extend(paths);
                }
            });
        }
    });
    out.into_inner().unwrap()
}

fn build_one(c: &Path, dir: &Path, cond: &Condition) -> Vec<((&'static str, Stripping), PathBuf)> {
    let path = |s: Stripping| dir.join(format!("{}-{}.so", cond.name, s.name()));
    let base = path(Stripping::None);
    build_with_condition(c, &base, cond).unwrap_or_else(|e| panic!("{}: {e}", cond.name));
    for s in [Stripping::All, Stripping::SectionHeaders] {
        strip_to(&base, &path(s), s).unwrap_or_else(|e| panic!("{}: {e}", cond.name));
    }
    Stripping::ALL
        .iter()
        .map(|s| ((cond.name, *s), path(*s)))
        .collect()
}

/// Carves one cell and checks it against the ground truth; returns its manifest rows.
fn check_cell(
    variant: LibraryBuild,
    label: &str,
    path: &Path,
    stripping: Stripping,
) -> Vec<ManifestRow> {
    let data = std::fs::read(path).unwrap();
    let carve = carve_bytes(&data, "lib.so").unwrap_or_else(|e| panic!("{label}: {e}"));
    let truth = ground_truth(variant);
    let carved: BTreeMap<&str, (u64, &str)> = carve
        .getters
        .iter()
        .map(|g| (g.name.symbol.as_str(), (g.size, g.sha256.as_str())))
        .collect();
    let expected: BTreeMap<&str, (u64, &str)> = truth
        .iter()
        .map(|t| (t.getter.symbol, (t.getter.size as u64, t.sha256.as_str())))
        .collect();
    assert_eq!(carved, expected, "{label}");
    common::assert_blobs_are_the_truth(&carve, &data, &truth, label);
    let how = match stripping {
        Stripping::None => Found::Symbol,
        _ => Found::Resolver("nrtucode_get_memory_image"),
    };
    assert_eq!(carve.tables.image_list_found, how, "{label}");
    carve.manifest().rows
}

fn run_matrix(variant: LibraryBuild) {
    // Dropped at the end of this function, also when a check panics: the libraries go with it.
    let (dir, c) = source(variant);
    let cells = build(dir.path(), &c);
    let mut checked = 0;
    for cond in CONDITIONS {
        let mut rows = BTreeMap::new();
        for s in Stripping::ALL {
            let label = format!("{} {} {}", variant.name(), cond.name, s.name());
            rows.insert(s, check_cell(variant, &label, &cells[&(cond.name, s)], s));
            checked += 1;
        }
        assert_eq!(
            rows[&Stripping::SectionHeaders],
            rows[&Stripping::All],
            "{} {}: the manifest without section headers differs from the stripped one",
            variant.name(),
            cond.name
        );
        // And from the intact file's, row for row, as docs/carve.md says: the names a stripped file
        // gets from its table positions are the vendor's symbols.
        assert_eq!(
            rows[&Stripping::SectionHeaders],
            rows[&Stripping::None],
            "{} {}: the manifest without section headers differs from the intact file's",
            variant.name(),
            cond.name
        );
    }
    assert_eq!(checked, CONDITIONS.len() * Stripping::ALL.len());
    println!("{}: {checked} cells carve byte-exact", variant.name());
}

#[test]
fn front_matrix_carves_byte_exact() {
    run_matrix(LibraryBuild::Front);
}

#[test]
fn full_matrix_carves_byte_exact() {
    run_matrix(LibraryBuild::Full);
}
