//! Writing a blob directory: one `<sha256>.bin` per distinct content plus `manifest.tsv`.
//!
//! The output depends only on the input bytes: the manifest is rendered sorted by symbol with
//! no timestamp, and the directory is written whole into a staging directory and renamed into
//! place (`staged_dir`), so carving twice gives identical directories and a failed carve
//! leaves the destination as it was.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use nrtucode_facts::manifest::MANIFEST_FILE;

use nrtucode_facts::hex::lower_hex;
use sha2::{Digest, Sha256};

use crate::cancel::Cancel;
use crate::error::FileError;
use crate::pipeline::{Carve, carve_with, open_library, read_opened, source_name};
use crate::staged_dir::{PublishError, StagedDir};

/// Writes the blob directory of `carve` (whose input bytes are `data`) to `out`, all or
/// nothing (see `staged_dir`): `out` must be absent, an empty directory or an earlier carve,
/// which is replaced whole. Returns notes on leftovers that could not be cleaned up after the
/// new directory was in place.
pub fn write_blob_dir(carve: &Carve, data: &[u8], out: &Path) -> Result<Vec<String>, FileError> {
    write(carve, data, out, None)
}

/// [`write_blob_dir`], stopping (and leaving `out` as it was) with
/// [`PublishError::Cancelled`] once `cancel` is set before the publication starts.
pub fn write_blob_dir_cancellable(
    carve: &Carve,
    data: &[u8],
    out: &Path,
    cancel: &Cancel,
) -> Result<Vec<String>, FileError> {
    write(carve, data, out, Some(cancel))
}

fn write(
    carve: &Carve,
    data: &[u8],
    out: &Path,
    cancel: Option<&Cancel>,
) -> Result<Vec<String>, FileError> {
    std::thread::scope(|s| {
        let staged = StagedDir::begin(out, cancel, s)?;
        write_blobs(carve, data, out, &staged)?;
        staged.write(MANIFEST_FILE, carve.manifest().render().as_bytes())?;
        Ok(staged.commit()?)
    })
}

/// Carves the library at `lib` into the blob directory `out` ([`write_blob_dir`]'s rules),
/// refusing a foreign destination before reading anything. Work overlaps so that the `fsync`s
/// start early: the library's own sha256 (for the manifest header) is computed on one thread
/// while the others hash each blob and write it as soon as its name (its sha256) is known.
/// Returns the carve and the leftover notes of [`write_blob_dir`].
pub fn carve_into_dir(lib: &Path, out: &Path) -> Result<(Carve, Vec<String>), FileError> {
    carve_into(lib, out, None)
}

/// [`carve_into_dir`], checking `cancel` between its steps (after reading, after decoding,
/// before each file and before the publication): once it is set the carve removes what it
/// staged and fails with [`PublishError::Cancelled`], `out` as it was. A program that stops
/// on a signal sets the token from its handler and waits for this call to return before it
/// exits; a publication already under way runs to its end first.
pub fn carve_into_dir_cancellable(
    lib: &Path,
    out: &Path,
    cancel: &Cancel,
) -> Result<(Carve, Vec<String>), FileError> {
    carve_into(lib, out, Some(cancel))
}

fn carve_into(
    lib: &Path,
    out: &Path,
    cancel: Option<&Cancel>,
) -> Result<(Carve, Vec<String>), FileError> {
    let cancelled = || -> Result<(), FileError> {
        if cancel.is_some_and(Cancel::is_cancelled) {
            return Err(PublishError::Cancelled {
                path: out.to_owned(),
            }
            .into());
        }
        Ok(())
    };
    // A FIFO or device is refused before the staging directory is made.
    let opened = open_library(lib)?;
    // The `fsync` workers' scope: the staging directory is made before the library is read.
    std::thread::scope(|syncs| {
        let staged = StagedDir::begin(out, cancel, syncs)?;
        let data = read_opened(opened)?;
        cancelled()?;
        let digest = || lower_hex(&Sha256::digest(&data));
        std::thread::scope(|s| {
            let source_sha256 = s.spawn(digest);
            let mut carve =
                carve_with(&data, &source_name(lib), String::new, false).map_err(|error| {
                    FileError::Carve {
                        path: lib.to_owned(),
                        error: Box::new(error),
                        // A failed carve only: the bytes are shared with the digest thread.
                        data: crate::error::LibraryBytes(Box::new(data.clone())),
                    }
                })?;
            cancelled()?;
            let names = hash_and_write_blobs(&carve, &data, out, &staged)?;
            for g in &mut carve.getters {
                if let Some(off) = g.file_offset
                    && let Some(sha) = names.get(&(off, g.size))
                {
                    g.sha256.clone_from(sha);
                }
            }
            carve.header.source_sha256 = source_sha256.join().unwrap_or_else(|_| digest());
            staged.write(MANIFEST_FILE, carve.manifest().render().as_bytes())?;
            Ok((carve, staged.commit()?))
        })
    })
}

/// A blob's place in the library: (file offset, size).
type BlobRange = (usize, u64);

/// Threads that hash and write blobs in [`carve_into_dir`].
const WRITERS: usize = 2;

/// Hashes every distinct blob range of `carve` and writes it as `<sha256>.bin`, largest first,
/// on [`WRITERS`] threads; returns the sha256 of each (file offset, size).
fn hash_and_write_blobs(
    carve: &Carve,
    data: &[u8],
    out: &Path,
    staged: &StagedDir,
) -> Result<HashMap<BlobRange, String>, FileError> {
    let mut ranges: Vec<BlobRange> = carve
        .getters
        .iter()
        .filter_map(|g| g.file_offset.map(|off| (off, g.size)))
        .collect();
    ranges.sort_unstable_by_key(|&(off, size)| (std::cmp::Reverse(size), off));
    ranges.dedup();
    let foreign = || FileError::Io {
        path: out.to_owned(),
        source: std::io::Error::other("carve does not belong to these bytes"),
    };
    let next = AtomicUsize::new(0);
    let written = Mutex::new(HashSet::new());
    let work = || -> Result<Vec<(BlobRange, String)>, FileError> {
        let mut done = Vec::new();
        while let Some(&(off, size)) = ranges.get(next.fetch_add(1, Ordering::Relaxed)) {
            let end = usize::try_from(size).ok().and_then(|n| off.checked_add(n));
            let bytes = end.and_then(|end| data.get(off..end)).ok_or_else(foreign)?;
            let sha = lower_hex(&Sha256::digest(bytes));
            let name = format!("{sha}.bin");
            let first = written
                .lock()
                .map(|mut w| w.insert(name.clone()))
                .unwrap_or(true);
            if first {
                staged.write(&name, bytes)?;
            }
            done.push(((off, size), sha));
        }
        Ok(done)
    };
    let mut names = HashMap::new();
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..WRITERS).map(|_| s.spawn(work)).collect();
        for w in workers {
            let done = w.join().unwrap_or_else(|_| {
                Err(FileError::from(PublishError::Io {
                    path: out.to_owned(),
                    source: std::io::Error::other("a writer thread panicked"),
                }))
            })?;
            names.extend(done);
        }
        Ok::<_, FileError>(())
    })?;
    Ok(names)
}

/// Writes one `<sha256>.bin` per distinct non-empty blob into `staged`.
fn write_blobs(
    carve: &Carve,
    data: &[u8],
    out: &Path,
    staged: &StagedDir,
) -> Result<(), FileError> {
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
    // Two writers: creating files and copying their bytes is kernel work a second core halves.
    let files: Vec<(String, &[u8])> = files.into_iter().collect();
    let half = files.len().div_ceil(2).max(1);
    std::thread::scope(|s| {
        let writers: Vec<_> = files
            .chunks(half)
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .try_for_each(|(name, bytes)| staged.write(name, bytes))
                })
            })
            .collect();
        writers.into_iter().try_for_each(|w| {
            w.join().unwrap_or_else(|_| {
                Err(PublishError::Io {
                    path: out.to_owned(),
                    source: std::io::Error::other("a writer thread panicked"),
                })
            })
        })
    })?;
    Ok(())
}
