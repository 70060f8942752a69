//! Shared test support: the look-alike libraries, built once per test binary and cached under
//! cargo's per-target temporary directory (rebuilt only when the generated C changes).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use nrtucode_lookalike::{LibraryBuild, OptLevel, Options, build_shared_object, generate_c};

/// One built look-alike.
#[derive(Clone, Debug)]
pub struct Lib {
    /// full or front.
    pub variant: LibraryBuild,
    /// -O2 or -Os.
    pub opt: OptLevel,
    /// `strip --strip-all` applied.
    pub stripped: bool,
    /// The .so.
    pub path: PathBuf,
}

impl Lib {
    /// e.g. `full-O2-stripped`.
    pub fn label(&self) -> String {
        format!(
            "{}-{}{}",
            self.variant.name(),
            self.opt.flag().trim_start_matches('-'),
            if self.stripped { "-stripped" } else { "" }
        )
    }

    /// The file's bytes.
    pub fn bytes(&self) -> Vec<u8> {
        std::fs::read(&self.path).unwrap_or_else(|e| panic!("{}: {e}", self.path.display()))
    }
}

/// Scratch space that survives between test runs (cargo's `CARGO_TARGET_TMPDIR`).
pub fn scratch() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("nrtucode-carve")
}

fn build(variant: LibraryBuild, opt: OptLevel) -> PathBuf {
    let dir = scratch().join(format!(
        "lookalike-{}-{}",
        variant.name(),
        opt.flag().trim_start_matches('-')
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let c = dir.join("lookalike.c");
    let so = dir.join(variant.library_name());
    let source = generate_c(&Options::new(variant));
    let fresh = std::fs::read_to_string(&c).is_ok_and(|old| old == source) && so.exists();
    if !fresh {
        let _ = std::fs::remove_file(&so);
        std::fs::write(&c, &source).unwrap();
        build_shared_object(&c, &so, opt, false).unwrap_or_else(|e| panic!("{e}"));
    }
    so
}

fn strip(so: &Path) -> PathBuf {
    let out = so.with_extension("stripped.so");
    let fresh = match (std::fs::metadata(so), std::fs::metadata(&out)) {
        (Ok(a), Ok(b)) => b.modified().unwrap() >= a.modified().unwrap(),
        _ => false,
    };
    if !fresh {
        let status = Command::new("strip")
            .arg("--strip-all")
            .arg("-o")
            .arg(&out)
            .arg(so)
            .status()
            .expect("run strip (binutils)");
        assert!(status.success(), "strip --strip-all {}", so.display());
    }
    out
}

/// All eight look-alikes: {full, front} x {-O2, -Os} x {unstripped, stripped}.
pub fn libs() -> &'static [Lib] {
    static LIBS: OnceLock<Vec<Lib>> = OnceLock::new();
    LIBS.get_or_init(|| {
        let mut out = Vec::new();
        for variant in LibraryBuild::ALL {
            for opt in [OptLevel::O2, OptLevel::Os] {
                let so = build(variant, opt);
                let stripped = strip(&so);
                out.push(Lib {
                    variant,
                    opt,
                    stripped: false,
                    path: so,
                });
                out.push(Lib {
                    variant,
                    opt,
                    stripped: true,
                    path: stripped,
                });
            }
        }
        out
    })
}

/// The look-alike with these properties.
pub fn lib(variant: LibraryBuild, opt: OptLevel, stripped: bool) -> &'static Lib {
    libs()
        .iter()
        .find(|l| l.variant == variant && l.opt == opt && l.stripped == stripped)
        .expect("built")
}

/// Every ground-truth getter was carved, and its carved bytes are the ground truth's.
#[allow(dead_code)] // not every test binary that includes `common` compares blobs
pub fn assert_blobs_are_the_truth(
    carve: &nrtucode_carve::Carve,
    data: &[u8],
    truth: &[nrtucode_lookalike::TruthRow],
    label: &str,
) {
    for t in truth {
        let g = carve
            .getters
            .iter()
            .find(|g| g.name.symbol == t.getter.symbol)
            .unwrap_or_else(|| panic!("{label}: {} not carved", t.getter.symbol));
        assert_eq!(
            carve.blob(data, g).unwrap(),
            &t.bytes[..],
            "{label} {}",
            t.getter.symbol
        );
    }
}
