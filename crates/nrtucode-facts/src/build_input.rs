//! The two places the core's build script takes blob bytes from, as [`BlobProvider`]s tested
//! here: the deterministic [`Fixtures`] (the default) and a [`CarvedDir`] written by
//! `nrtucode carve` (`NRTUCODE_BLOB_DIR`), read and checked by
//! [`check_blob_dir`], the reader `nrtucode check` uses, so
//! the build accepts exactly the directories `check` accepts.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::{fs, io};

use sha2::{Digest, Sha256};

use crate::Getter;
use crate::blob_dir::{BlobDir, check_blob_dir};
use crate::fixture::fixture_bytes;
use crate::manifest::MANIFEST_FILE;
use crate::plan::{self, BlobProvider, SourcedBlob};

/// The cargo environment variable that says feature `feature` is enabled for a build script.
pub fn feature_var(feature: &str) -> String {
    format!("CARGO_FEATURE_{}", feature.to_uppercase().replace('-', "_"))
}

/// Writes `bytes` unless the file already holds them (keeps mtimes, and rebuilds, stable).
pub fn write_if_changed(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    fs::write(path, bytes)
}

/// The generated fixtures, written under a directory, deduplicated by content (each content's
/// file and, with digests, its SHA-256).
#[derive(Debug)]
pub struct Fixtures {
    dir: PathBuf,
    by_content: HashMap<Vec<u8>, (String, Option<[u8; 32]>)>,
    with_digests: bool,
}

impl Fixtures {
    /// Fixtures written under `dir` (created when the first is written), hashed if
    /// `with_digests`.
    pub fn new(dir: PathBuf, with_digests: bool) -> Self {
        Fixtures {
            dir,
            by_content: HashMap::new(),
            with_digests,
        }
    }
}

impl BlobProvider for Fixtures {
    fn blob_of(&mut self, getter: &Getter) -> Result<Option<SourcedBlob>, String> {
        let bytes = fixture_bytes(getter);
        let (path, sha256) = match self.by_content.get(&bytes) {
            Some(known) => known.clone(),
            None => {
                let path = self.dir.join(format!("{}.bin", getter.stem()));
                fs::create_dir_all(&self.dir)
                    .and_then(|()| write_if_changed(&path, &bytes))
                    .map_err(|e| format!("{}: write {}: {e}", getter.symbol, path.display()))?;
                let known = (
                    path.display().to_string(),
                    self.with_digests.then(|| Sha256::digest(&bytes).into()),
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

/// A blob directory written by `nrtucode carve`, read and checked whole when opened.
#[derive(Debug)]
pub struct CarvedDir {
    read: BlobDir,
}

impl CarvedDir {
    /// Reads and checks `dir` (which must be absolute: a build script runs in the package
    /// directory, not the user's shell), or every problem found, each naming `dir`.
    pub fn open(dir: &Path) -> Result<Self, Vec<String>> {
        if !dir.is_absolute() {
            // A build script runs in its package's directory: say what that would have read.
            let here = std::env::current_dir().unwrap_or_default();
            return Err(vec![format!(
                "must be an absolute path, not '{}' (a build script would read it as {}, \
                 relative to the nrtucode package); give $PWD/{0}, or set it in \
                 .cargo/config.toml as [env] NRTUCODE_BLOB_DIR = {{ value = \"{0}\", \
                 relative = true }}",
                dir.display(),
                here.join(dir).display()
            )]);
        }
        check_blob_dir(dir)
            .map(|read| CarvedDir { read })
            .map_err(|e| {
                e.problems
                    .iter()
                    .map(|p| format!("{}: {p}", dir.display()))
                    .collect()
            })
    }

    /// Every file the build reads (the manifest and each blob), for `rerun-if-changed`.
    pub fn inputs(&self) -> Vec<PathBuf> {
        std::iter::once(self.read.dir.join(MANIFEST_FILE))
            .chain(self.read.files.keys().map(|f| self.read.dir.join(f)))
            .collect()
    }

    /// The GNU BuildID the manifest records, if it is non-empty ASCII alphanumerics (safe in
    /// an environment variable and a log line); else `unknown`.
    pub fn origin(&self) -> &str {
        let id = self.read.manifest.header.build_id.as_str();
        if !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric()) {
            id
        } else {
            "unknown"
        }
    }
}

/// The 32 bytes of a checked manifest sha256 (64 hex digits).
fn digest_of(hex: &str) -> Option<[u8; 32]> {
    crate::hex::bytes_of_hex(hex)?.try_into().ok()
}

impl BlobProvider for CarvedDir {
    fn blob_of(&mut self, getter: &Getter) -> Result<Option<SourcedBlob>, String> {
        let row = plan::manifest_row(&self.read.manifest, getter)?;
        let file = row
            .file
            .as_ref()
            .ok_or_else(|| format!("{}: {MANIFEST_FILE} names no file", getter.symbol))?;
        let path = self.read.dir.join(file);
        let path = fs::canonicalize(&path).unwrap_or(path);
        let shown = path.display().to_string();
        // check_blob_dir hashed the file against its name, the row's sha256.
        let digest = digest_of(&row.sha256)
            .ok_or_else(|| format!("{}: sha256 {:?}", getter.symbol, row.sha256))?;
        Ok(Some(SourcedBlob {
            key: shown.clone(),
            path: shown,
            sha256: Some(digest),
        }))
    }

    fn check_cursor(&self, getter: &Getter) -> Result<(), String> {
        plan::manifest_row(&self.read.manifest, getter).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::getters;

    #[test]
    fn feature_vars_are_cargos_spelling() {
        assert_eq!(
            feature_var("gen-mariana-plus"),
            "CARGO_FEATURE_GEN_MARIANA_PLUS"
        );
    }

    #[test]
    fn digests_are_exactly_64_hex_digits() {
        let hex = "0f".repeat(32);
        assert_eq!(digest_of(&hex), Some([0x0f; 32]));
        assert_eq!(digest_of(&hex[..62]), None);
        assert_eq!(digest_of(&format!("{hex}00")), None);
        assert_eq!(digest_of(&"zz".repeat(32)), None);
    }

    #[test]
    fn a_relative_blob_dir_is_refused_saying_how_to_name_one() {
        let err = CarvedDir::open(Path::new("blobs")).unwrap_err();
        assert!(
            err[0].contains("must be an absolute path, not 'blobs'"),
            "{err:?}"
        );
        assert!(err[0].contains("relative = true"), "{err:?}");
    }

    #[test]
    fn equal_fixture_contents_are_one_file_with_one_digest() {
        let dir = std::env::temp_dir().join(format!("nrtucode-fixtures-{}", std::process::id()));
        let mut fixtures = Fixtures::new(dir.clone(), true);
        let facts = getters();
        let real: Vec<&Getter> = facts.iter().filter(|g| g.size > 0).collect();
        let (a, b) = real
            .iter()
            .enumerate()
            .find_map(|(i, a)| {
                real[i + 1..]
                    .iter()
                    .find(|b| fixture_bytes(a) == fixture_bytes(b))
                    .map(|b| (*a, *b))
            })
            .expect("the fixture set repeats a content");
        let first = fixtures.blob_of(a).unwrap().unwrap();
        let second = fixtures.blob_of(b).unwrap().unwrap();
        assert_eq!(first, second);
        let bytes = fs::read(&first.path).unwrap();
        assert_eq!(bytes, fixture_bytes(a));
        assert_eq!(first.sha256, Some(Sha256::digest(&bytes).into()));
        fs::remove_dir_all(dir).unwrap();
    }
}
