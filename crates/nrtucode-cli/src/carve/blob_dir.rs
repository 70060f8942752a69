//! Writing a blob directory: one `<sha256>.bin` per distinct content plus `manifest.tsv`.
//!
//! The output depends only on the input bytes: the manifest is rendered sorted by symbol with
//! no timestamp, and the directory is written whole into a staging directory and renamed into
//! place (`staged_dir`), so carving twice gives identical directories and a failed carve
//! leaves the destination as it was.

use std::collections::BTreeMap;
use std::path::Path;

use nrtucode_facts::manifest::MANIFEST_FILE;

use crate::carve::carver::Carve;
use crate::carve::error::FileError;
use crate::carve::staged_dir::StagedDir;

/// `true` for a file name this tool writes: 64 lowercase hex digits and `.bin`.
pub(crate) fn is_blob_file_name(name: &str) -> bool {
    name.strip_suffix(".bin")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

/// Writes the blob directory of `carve` (whose input bytes are `data`) to `out`, all or
/// nothing (see `staged_dir`): `out` must be absent, an empty directory or an earlier carve,
/// which is replaced whole. Returns notes on leftovers that could not be cleaned up after the
/// new directory was in place.
pub fn write_blob_dir(carve: &Carve, data: &[u8], out: &Path) -> Result<Vec<String>, FileError> {
    let mut files: BTreeMap<String, &[u8]> = BTreeMap::new();
    for g in &carve.getters {
        if g.size == 0 {
            continue;
        }
        let bytes = carve.blob(data, g).ok_or_else(|| FileError::Io {
            path: out.to_owned(),
            source: std::io::Error::other("carve does not belong to these bytes"),
        })?;
        files.insert(format!("{}.bin", g.sha256), bytes);
    }
    let mut staged = StagedDir::begin(out)?;
    for (name, bytes) in &files {
        staged.write(name, bytes)?;
    }
    staged.write(MANIFEST_FILE, carve.manifest().render().as_bytes())?;
    Ok(staged.commit()?)
}
