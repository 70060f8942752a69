//! Writing a blob directory: one `<sha256>.bin` per distinct content plus `manifest.tsv`.
//!
//! The output depends only on the input bytes: the manifest is rendered sorted by symbol with
//! no timestamp, and `.bin` files left by an earlier carve that the new manifest does not
//! reference are removed, so carving twice gives identical directories.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use nrtucode_facts::manifest::MANIFEST_FILE;

use crate::carve::carver::Carve;
use crate::carve::error::FileError;

fn io(path: &Path) -> impl Fn(std::io::Error) -> FileError + '_ {
    move |source| FileError::Io {
        path: path.to_owned(),
        source,
    }
}

/// `true` for a file name this tool writes: 64 lowercase hex digits and `.bin`.
pub(crate) fn is_blob_file_name(name: &str) -> bool {
    name.strip_suffix(".bin")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

/// Writes the blob directory of `carve` (whose input bytes are `data`) to `out`.
pub fn write_blob_dir(carve: &Carve, data: &[u8], out: &Path) -> Result<(), FileError> {
    fs::create_dir_all(out).map_err(io(out))?;
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
    for (name, bytes) in &files {
        let path = out.join(name);
        fs::write(&path, bytes).map_err(io(&path))?;
    }
    for entry in fs::read_dir(out).map_err(io(out))? {
        let entry = entry.map_err(io(out))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if is_blob_file_name(&name) && !files.contains_key(&name) {
            fs::remove_file(entry.path()).map_err(io(&entry.path()))?;
        }
    }
    let manifest = out.join(MANIFEST_FILE);
    fs::write(&manifest, carve.manifest().render()).map_err(io(&manifest))?;
    Ok(())
}
