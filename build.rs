//! Binds the blob bytes the resolvers return: reads the inputs, lets
//! `nrtucode_facts::codegen` decide, writes `$OUT_DIR/blobs.rs`.
//!
//! Default: the deterministic fixture set generated from `crates/nrtucode-facts/tables/getters.tsv` by
//! `nrtucode-facts` (written to `OUT_DIR`, never committed). With `NRTUCODE_BLOB_DIR=<dir>`:
//! the blobs of a directory written by `nrtucode carve` (`manifest.tsv` + one file per distinct
//! blob). What is embedded where (selection by cargo features, cursor placement, the manifest
//! checks, the generated text) is decided by ordinary functions in `nrtucode_facts::codegen`,
//! unit-tested there; the generated module embeds each blob through the core's one
//! `embed_blob!` definition (`src/catalog.rs`). Nothing is ever silently replaced by a fixture:
//! a blob directory that lacks a blob the selected features need, or holds one of the wrong size
//! or content, fails the build naming the blob and the file. The directory is read and checked
//! by `nrtucode_facts::blob_dir::verify_blob_dir`, the reader `nrtucode verify` uses: the build
//! accepts exactly the directories `verify` accepts (duplicate rows, FIFOs, sizes, names and
//! contents are checked the same way, sizes before any byte is read).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::{env, fs, process};

use nrtucode_facts::blob_dir::{BlobDir, verify_blob_dir};
use nrtucode_facts::codegen::{self, BlobSource, SourcedBlob};
use nrtucode_facts::manifest::MANIFEST_FILE;
use nrtucode_facts::{Getter, fixture_bytes, getters};
use sha2::{Digest, Sha256};

fn main() {
    // The fact tables and the fixture generator are compiled into nrtucode-facts, this script's
    // build-dependency: a change there rebuilds and reruns this script. (Naming their paths
    // here would point outside the published package, where cargo reruns on every build.)
    println!("cargo::rerun-if-env-changed=NRTUCODE_BLOB_DIR");
    println!("cargo::rustc-check-cfg=cfg(nrtucode_fixtures)");
    println!("cargo::rustc-check-cfg=cfg(nrtucode_front_selection)");
    println!("cargo::rustc-check-cfg=cfg(nrtucode_embeds_nothing)");

    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let with_digests = env::var_os("CARGO_FEATURE_VERIFY").is_some();
    if codegen::is_front_selection(enabled) {
        println!("cargo::rustc-cfg=nrtucode_front_selection");
    }
    let facts = getters();
    let planned = match env::var_os("NRTUCODE_BLOB_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => {
            let mut source = Directory::open(absolute_blob_dir(PathBuf::from(dir)));
            let origin = &source.read.manifest.header.build_id;
            let safe = !origin.is_empty() && origin.bytes().all(|b| b.is_ascii_alphanumeric());
            let origin = if safe { origin.as_str() } else { "unknown" };
            println!("cargo::rustc-env=NRTUCODE_BLOB_ORIGIN={origin}");
            codegen::plan(&facts, enabled, &mut source, with_digests)
                .map(|t| (t, "the blob directory named by NRTUCODE_BLOB_DIR"))
        }
        None => {
            println!("cargo::rustc-cfg=nrtucode_fixtures");
            println!("cargo::rustc-env=NRTUCODE_BLOB_ORIGIN=fixtures");
            let mut source = Fixtures {
                dir: out_dir.join("fixtures"),
                by_content: HashMap::new(),
                with_digests,
            };
            codegen::plan(&facts, enabled, &mut source, with_digests)
                .map(|t| (t, "the built-in fixture set"))
        }
    };
    match planned {
        Ok((tables, source_name)) => {
            if tables.blobs.is_empty() {
                // The tests that need a blob are `ignore`d, visibly, in such a build.
                println!("cargo::rustc-cfg=nrtucode_embeds_nothing");
            }
            let code = codegen::render(&tables, source_name);
            write_if_changed(&out_dir.join("blobs.rs"), code.as_bytes());
        }
        Err(problems) => {
            for problem in &problems {
                println!("cargo::error=NRTUCODE_BLOB_DIR: {problem}");
            }
        }
    }
}

/// Whether cargo `feature` is enabled for this build.
fn enabled(feature: &str) -> bool {
    let var = format!("CARGO_FEATURE_{}", feature.to_uppercase().replace('-', "_"));
    env::var_os(var).is_some()
}

/// The SHA-256 of `bytes`.
fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// Generated fixtures, written under `dir`, deduplicated by content (each content's file and,
/// with digests, its SHA-256).
struct Fixtures {
    dir: PathBuf,
    by_content: HashMap<Vec<u8>, (String, Option<[u8; 32]>)>,
    with_digests: bool,
}

impl BlobSource for Fixtures {
    fn blob_of(&mut self, getter: &Getter) -> Result<Option<SourcedBlob>, String> {
        let bytes = fixture_bytes(getter);
        let (path, sha256) = match self.by_content.get(&bytes) {
            Some(known) => known.clone(),
            None => {
                fs::create_dir_all(&self.dir).expect("create the fixture directory");
                let path = self.dir.join(format!("{}.bin", getter.stem()));
                write_if_changed(&path, &bytes);
                let known = (
                    path.display().to_string(),
                    self.with_digests.then(|| sha256(&bytes)),
                );
                self.by_content.insert(bytes, known.clone());
                known
            }
        };
        Ok(Some(SourcedBlob {
            key: path.clone(),
            path,
            sha256,
        }))
    }

    fn check_cursor(&self, _getter: &Getter) -> Result<(), String> {
        Ok(()) // the fixtures are the facts
    }
}

/// A carved blob directory, read and checked by `nrtucode_facts::blob_dir::verify_blob_dir`,
/// the reader `nrtucode verify` and `nrtucode carve` share: a directory this build accepts is
/// one `verify` accepts, and a refusal names the same problems.
struct Directory {
    read: BlobDir,
}

impl Directory {
    fn open(dir: PathBuf) -> Self {
        println!(
            "cargo::rerun-if-changed={}",
            dir.join(MANIFEST_FILE).display()
        );
        match verify_blob_dir(&dir) {
            Ok(read) => {
                for file in read.files.keys() {
                    println!("cargo::rerun-if-changed={}", dir.join(file).display());
                }
                Directory { read }
            }
            Err(e) => {
                for problem in &e.problems {
                    println!(
                        "cargo::error=NRTUCODE_BLOB_DIR: {}: {problem}",
                        dir.display()
                    );
                }
                process::exit(1);
            }
        }
    }
}

/// The 32 bytes of a checked manifest sha256 (64 hex digits).
fn digest_of(hex: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

impl BlobSource for Directory {
    fn blob_of(&mut self, getter: &Getter) -> Result<Option<SourcedBlob>, String> {
        let row = codegen::manifest_row(&self.read.manifest, getter)?;
        let file = row
            .file
            .as_ref()
            .ok_or_else(|| format!("{}: {MANIFEST_FILE} names no file", getter.symbol))?;
        let path = self.read.dir.join(file);
        let path = fs::canonicalize(&path).unwrap_or(path);
        let shown = path.display().to_string();
        // verify_blob_dir hashed the file against its name, the row's sha256.
        let digest = digest_of(&row.sha256)
            .ok_or_else(|| format!("{}: sha256 {:?}", getter.symbol, row.sha256))?;
        Ok(Some(SourcedBlob {
            key: shown.clone(),
            path: shown,
            sha256: Some(digest),
        }))
    }

    fn check_cursor(&self, getter: &Getter) -> Result<(), String> {
        codegen::manifest_row(&self.read.manifest, getter).map(drop)
    }
}

/// `dir` if absolute; a relative one stops the build, saying what it would have meant. A build
/// script runs in the package directory, not the user's shell: cargo's `[env]` table with
/// `relative = true` is the way to name a directory relative to a project.
fn absolute_blob_dir(dir: PathBuf) -> PathBuf {
    if dir.is_absolute() {
        return dir;
    }
    let here = env::current_dir().unwrap_or_default();
    fail(&format!(
        "must be an absolute path, not '{}' (a build script would read it as {}, relative to \
         the nrtucode package); give $PWD/{0}, or set it in .cargo/config.toml as \
         [env] NRTUCODE_BLOB_DIR = {{ value = \"{0}\", relative = true }}",
        dir.display(),
        here.join(&dir).display()
    ));
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
