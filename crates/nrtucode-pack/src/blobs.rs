//! [`Blobs`]: the bytes of every getter of one table class, from a blob directory, a library or
//! the fixtures.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use nrtucode::partition::TableClass;
use nrtucode_facts::facts::in_front_library;
use nrtucode_facts::manifest::MANIFEST_FILE;
use nrtucode_facts::{Getter, fixture_bytes, getters};

use crate::error::PackError;

/// Where the blobs come from, as the partition header records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlobSourceId {
    /// A library with this GNU build ID.
    BuildId(Vec<u8>),
    /// A library without one.
    NoBuildId,
    /// The built-in fixture set.
    Fixtures,
}

impl BlobSourceId {
    /// From a manifest's `build_id` (hex, or `unknown`).
    fn from_hex(text: &str) -> Self {
        let bytes = nrtucode_facts::hex::bytes_of_hex(text);
        match bytes {
            Some(b) if !b.is_empty() && b.len() <= nrtucode::partition::format::BUILD_ID_MAX => {
                BlobSourceId::BuildId(b)
            }
            _ => BlobSourceId::NoBuildId,
        }
    }
}

/// The bytes of the getters of one table class, by symbol, each distinct content once.
#[derive(Clone, Debug)]
pub struct Blobs {
    /// The class the getters present follow.
    pub class: TableClass,
    /// Where they come from.
    pub source: BlobSourceId,
    contents: Vec<Vec<u8>>,
    by_symbol: HashMap<String, usize>,
    inputs: Vec<PathBuf>,
}

/// The resolver-reachable getters of `class`, from the facts.
pub(crate) fn class_getters(class: TableClass) -> Vec<Getter> {
    getters()
        .into_iter()
        .filter(|g| g.is_resolver_reachable())
        .filter(|g| class == TableClass::Full || in_front_library(g))
        .collect()
}

/// The class whose getters are exactly `present` (symbols), or why none.
fn class_of(present: &BTreeSet<String>) -> Result<TableClass, PackError> {
    let all: BTreeSet<String> = class_getters(TableClass::Full)
        .iter()
        .map(|g| g.symbol.to_owned())
        .collect();
    let front: BTreeSet<String> = class_getters(TableClass::Front)
        .iter()
        .map(|g| g.symbol.to_owned())
        .collect();
    if let Some(unknown) = present.difference(&all).next() {
        return Err(PackError::Facts(format!(
            "{unknown}: not a getter the facts list (crates/nrtucode-facts/tables/getters.tsv)"
        )));
    }
    if *present == all {
        return Ok(TableClass::Full);
    }
    if *present == front {
        return Ok(TableClass::Front);
    }
    Err(PackError::UnknownClass {
        missing: front.difference(present).count(),
        extra: present.difference(&front).count(),
    })
}

impl Blobs {
    fn insert(&mut self, symbol: &str, bytes: Vec<u8>, seen: &mut HashMap<Vec<u8>, usize>) {
        let n = *seen.entry(bytes).or_insert_with_key(|bytes| {
            self.contents.push(bytes.clone());
            self.contents.len() - 1
        });
        self.by_symbol.insert(symbol.to_owned(), n);
    }

    /// The built-in fixture set of `class` (what the core embeds by default).
    pub fn fixtures(class: TableClass) -> Self {
        let mut blobs = Blobs {
            class,
            source: BlobSourceId::Fixtures,
            contents: Vec::new(),
            by_symbol: HashMap::new(),
            inputs: Vec::new(),
        };
        let mut seen = HashMap::new();
        for g in class_getters(class) {
            let bytes = if g.size > 0 {
                fixture_bytes(&g)
            } else {
                Vec::new()
            };
            blobs.insert(g.symbol, bytes, &mut seen);
        }
        blobs
    }

    /// The blobs of a blob directory (`nrtucode carve` wrote it), as
    /// `nrtucode_facts::blob_dir::read_checked_blob_dir` read and checked them (structure, file
    /// kinds, sizes, digests and the facts): the bytes packed are the bytes checked, each file
    /// opened once without following a link; the class is the one whose getters the manifest
    /// lists.
    pub fn from_dir(dir: &Path) -> Result<Self, PackError> {
        // The one reading of a blob directory that the build script, `check` and `carve`
        // share, keeping the bytes it hashed.
        let read = nrtucode_facts::blob_dir::read_checked_blob_dir(dir).map_err(|e| {
            PackError::BadBlobDir {
                dir: dir.to_owned(),
                problems: e
                    .problems
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join("\n"),
            }
        })?;
        Self::from_checked_dir(dir, &read)
    }

    /// The blobs of the blob directory `dir` already read and checked (`read`, from
    /// `nrtucode_facts::blob_dir::read_checked_blob_dir`), for a caller that also wants its
    /// manifest's header: the bytes packed are the bytes checked.
    pub fn from_checked_dir(
        dir: &Path,
        read: &nrtucode_facts::blob_dir::CheckedBlobDir,
    ) -> Result<Self, PackError> {
        let manifest = &read.dir.manifest;
        let present: BTreeSet<String> = manifest.rows.iter().map(|r| r.symbol.clone()).collect();
        let class = class_of(&present)?;
        let mut blobs = Blobs {
            class,
            source: BlobSourceId::from_hex(&manifest.header.build_id),
            contents: Vec::new(),
            by_symbol: HashMap::new(),
            inputs: Vec::new(),
        };
        blobs.inputs.push(dir.join(MANIFEST_FILE));
        blobs
            .inputs
            .extend(read.contents.keys().map(|file| dir.join(file)));
        let mut seen = HashMap::new();
        for row in &manifest.rows {
            let bytes = match &row.file {
                None => Vec::new(),
                Some(file) => read.contents.get(file).cloned().ok_or_else(|| {
                    // Not reached: every file a row names was read, or the check failed.
                    PackError::BadBlobDir {
                        dir: dir.to_owned(),
                        problems: format!("{MANIFEST_FILE}: {}: {file} was not read", row.symbol),
                    }
                })?,
            };
            blobs.insert(&row.symbol, bytes, &mut seen);
        }
        Ok(blobs)
    }

    /// Carves the library at `path` in memory (`nrtucode_carve::carve_file`) and takes its
    /// blobs; the class is the one whose getters the library has.
    pub fn from_library(path: &Path) -> Result<Self, PackError> {
        let (carve, data) = nrtucode_carve::carve_file(path)?;
        Self::from_carve(path, &carve, &data)
    }

    /// The blobs of a library already carved: `carve` of the bytes `data`, read from `path`
    /// (`nrtucode_carve::carve_file`). For a caller that also wants the carve's header (the
    /// library's SHA-256 and build ID) of the very bytes the blobs come from.
    pub fn from_carve(
        path: &Path,
        carve: &nrtucode_carve::Carve,
        data: &[u8],
    ) -> Result<Self, PackError> {
        let present: BTreeSet<String> = carve
            .getters
            .iter()
            .map(|g| g.name.symbol.clone())
            .collect();
        let class = class_of(&present)?;
        let mut blobs = Blobs {
            class,
            source: BlobSourceId::from_hex(&carve.header.build_id),
            contents: Vec::new(),
            by_symbol: HashMap::new(),
            inputs: Vec::new(),
        };
        blobs.inputs.push(path.to_owned());
        let mut seen = HashMap::new();
        for g in &carve.getters {
            let bytes = carve.blob(data, g).ok_or_else(|| {
                PackError::Facts(format!("{}: blob outside the library", g.name.symbol))
            })?;
            blobs.insert(&g.name.symbol, bytes.to_vec(), &mut seen);
        }
        Ok(blobs)
    }

    /// The files the blobs were read from: the library, or the blob directory's manifest and
    /// blob files (none for the fixtures). A writer can refuse to overwrite one of them.
    pub fn inputs(&self) -> &[PathBuf] {
        &self.inputs
    }

    /// The bytes of `symbol`'s getter (empty for a cursor), if present.
    pub fn get(&self, symbol: &str) -> Option<&[u8]> {
        self.by_symbol
            .get(symbol)
            .and_then(|&n| self.contents.get(n))
            .map(Vec::as_slice)
    }

    /// The same getters with each distinct content replaced by `f(content)` (for the tests:
    /// contents a codec treats otherwise than the fixtures'); `f` keeps distinct contents
    /// distinct and lengths as they are.
    #[cfg(test)]
    pub(crate) fn map_contents(mut self, mut f: impl FnMut(&[u8]) -> Vec<u8>) -> Self {
        for content in &mut self.contents {
            *content = f(content);
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn symbols(class: TableClass) -> BTreeSet<String> {
        class_getters(class)
            .iter()
            .map(|g| g.symbol.to_owned())
            .collect()
    }

    #[test]
    fn the_class_is_the_one_whose_getters_are_present() {
        assert_eq!(
            class_of(&symbols(TableClass::Full)).unwrap(),
            TableClass::Full
        );
        assert_eq!(
            class_of(&symbols(TableClass::Front)).unwrap(),
            TableClass::Front
        );
        let mut partial = symbols(TableClass::Front);
        let first = partial.iter().next().unwrap().clone();
        partial.remove(&first);
        assert!(matches!(
            class_of(&partial),
            Err(PackError::UnknownClass {
                missing: 1,
                extra: 0
            })
        ));
        let mut unknown = symbols(TableClass::Full);
        unknown.insert("NOT_A_GETTER_get".into());
        assert!(matches!(class_of(&unknown), Err(PackError::Facts(_))));
    }

    #[test]
    fn build_ids_read_as_hex() {
        assert_eq!(
            BlobSourceId::from_hex("9cbf78"),
            BlobSourceId::BuildId(vec![0x9c, 0xbf, 0x78])
        );
        assert_eq!(BlobSourceId::from_hex("unknown"), BlobSourceId::NoBuildId);
        assert_eq!(BlobSourceId::from_hex(""), BlobSourceId::NoBuildId);
        assert_eq!(
            BlobSourceId::from_hex(&"ab".repeat(33)),
            BlobSourceId::NoBuildId
        );
    }
}
