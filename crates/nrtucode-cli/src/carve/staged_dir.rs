//! Writing a directory all or nothing.
//!
//! A [`StagedDir`] is a fresh hidden directory beside the destination
//! (`.<name>.tmp-<pid>-<random>`). Files are written into it; [`StagedDir::commit`] `fsync`s
//! every file and the directory, then renames it into place and `fsync`s the parent. Until
//! that rename the destination is untouched; a `StagedDir` dropped without a commit (any error
//! on the way) removes itself and any parent directories it created. So a failure at any
//! point (`ENOSPC`, `EACCES`, `EROFS`, a name collision, bad input) leaves the destination
//! exactly as it was.
//!
//! What the destination may be ([`Destination`]):
//!
//! * absent, or an empty directory: the staged directory takes its place;
//! * an earlier carve (a `manifest.tsv` in our format and nothing but the files it lists): it
//!   is renamed aside, the staged directory renamed into place, then the old files (exactly
//!   those the old manifest lists, and the manifest) and the old directory are removed, so no
//!   blob the new manifest does not list remains;
//! * anything else (a directory holding files this tool did not write, a file): refused before
//!   anything is written. Files the carver did not write are never deleted or overwritten.

use std::collections::BTreeSet;
use std::collections::hash_map::RandomState;
use std::fs::{self, File};
use std::hash::BuildHasher as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;

use nrtucode_facts::Manifest;
use nrtucode_facts::manifest::MANIFEST_FILE;

/// Why a directory could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// The destination exists and is not a directory.
    #[error("{}: exists and is not a directory; --out names the directory to carve into", path.display())]
    NotADirectory {
        /// The destination.
        path: PathBuf,
    },
    /// The destination holds files this tool did not write.
    #[error(
        "{}: refusing to carve into a non-empty directory that is not an earlier carve ({reason}); nothing was written. Choose a new or empty directory.",
        path.display()
    )]
    Foreign {
        /// The destination.
        path: PathBuf,
        /// What makes it foreign.
        reason: String,
    },
    /// An I/O operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path operated on.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> PublishError + '_ {
    move |source| PublishError::Io {
        path: path.to_owned(),
        source,
    }
}

/// What is at the destination now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Destination {
    /// Nothing.
    Absent,
    /// An empty directory.
    Empty,
    /// An earlier carve: `manifest.tsv` and the blob files it lists (names in the directory).
    EarlierCarve(BTreeSet<String>),
}

/// Classifies `dest`, refusing a file and a directory with foreign content.
pub(crate) fn classify(dest: &Path) -> Result<Destination, PublishError> {
    let meta = match fs::symlink_metadata(dest) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Destination::Absent),
        Err(e) => return Err(io(dest)(e)),
    };
    if !meta.is_dir() {
        return Err(PublishError::NotADirectory {
            path: dest.to_owned(),
        });
    }
    let mut names = BTreeSet::new();
    for entry in fs::read_dir(dest).map_err(io(dest))? {
        let entry = entry.map_err(io(dest))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_file = entry.file_type().map_err(io(&entry.path()))?.is_file();
        if !is_file {
            return Err(PublishError::Foreign {
                path: dest.to_owned(),
                reason: format!("{name} is not a regular file"),
            });
        }
        names.insert(name);
    }
    if names.is_empty() {
        return Ok(Destination::Empty);
    }
    let foreign = |reason: String| PublishError::Foreign {
        path: dest.to_owned(),
        reason,
    };
    if !names.contains(MANIFEST_FILE) {
        return Err(foreign(format!("it has no {MANIFEST_FILE}")));
    }
    let manifest_path = dest.join(MANIFEST_FILE);
    let text = fs::read_to_string(&manifest_path)
        .map_err(|e| foreign(format!("{MANIFEST_FILE} is unreadable: {e}")))?;
    let manifest =
        Manifest::parse(&text).map_err(|e| foreign(format!("{MANIFEST_FILE} is not ours: {e}")))?;
    let listed: BTreeSet<&str> = manifest
        .rows
        .iter()
        .filter_map(|r| r.file.as_deref())
        .collect();
    if let Some(extra) = names
        .iter()
        .find(|n| n.as_str() != MANIFEST_FILE && !listed.contains(n.as_str()))
    {
        return Err(foreign(format!(
            "{extra} is not listed in its {MANIFEST_FILE}"
        )));
    }
    Ok(Destination::EarlierCarve(names))
}

/// A random number for temporary names (std's per-process random hash keys).
fn nonce() -> u64 {
    RandomState::new().hash_one(std::process::id())
}

/// A directory being written beside its destination; see the module documentation.
#[derive(Debug)]
pub(crate) struct StagedDir {
    dest: PathBuf,
    parent: PathBuf,
    name: String,
    staging: PathBuf,
    syncs: SyncPool,
    created_parents: Vec<PathBuf>,
    committed: bool,
}

/// Threads that `fsync` the staged files while the next ones are written (the filesystem
/// commits concurrent `fsync`s as a group, so the wait overlaps instead of adding up).
const SYNC_THREADS: usize = 16;

type SyncJob = (PathBuf, File);

/// Background `fsync` workers fed through a channel.
#[derive(Debug)]
struct SyncPool {
    jobs: Option<mpsc::Sender<SyncJob>>,
    workers: Vec<JoinHandle<Result<(), PublishError>>>,
}

impl SyncPool {
    fn start() -> Self {
        let (jobs, queue) = mpsc::channel::<SyncJob>();
        let queue = Arc::new(Mutex::new(queue));
        let workers = (0..SYNC_THREADS)
            .map(|_| {
                let queue = Arc::clone(&queue);
                std::thread::spawn(move || {
                    let mut result = Ok(());
                    loop {
                        let job = match queue.lock() {
                            Ok(q) => q.recv(),
                            Err(_) => break,
                        };
                        let Ok((path, file)) = job else { break };
                        if result.is_ok() {
                            result = file.sync_all().map_err(io(&path));
                        }
                    }
                    result
                })
            })
            .collect();
        Self {
            jobs: Some(jobs),
            workers,
        }
    }

    /// A pool without workers (what is left after [`SyncPool::finish`]).
    fn idle() -> Self {
        Self {
            jobs: None,
            workers: Vec::new(),
        }
    }

    fn submit(&self, path: PathBuf, file: File) -> Result<(), PublishError> {
        let unsent = match &self.jobs {
            Some(jobs) => jobs.send((path, file)).err().map(|e| e.0),
            None => Some((path, file)),
        };
        match unsent {
            // No worker to take it: sync here.
            Some((path, file)) => file.sync_all().map_err(io(&path)),
            None => Ok(()),
        }
    }

    /// Waits for every submitted `fsync`; the first failure is the result.
    fn finish(mut self) -> Result<(), PublishError> {
        self.jobs = None;
        let mut result = Ok(());
        for w in self.workers.drain(..) {
            let r = w.join().unwrap_or_else(|_| {
                Err(PublishError::Io {
                    path: PathBuf::from("fsync worker"),
                    source: std::io::Error::other("an fsync thread panicked"),
                })
            });
            if result.is_ok() {
                result = r;
            }
        }
        result
    }

    /// Stops the workers without caring how their `fsync`s went.
    fn abandon(self) {
        let _ = self.finish();
    }
}

impl StagedDir {
    /// Checks `dest` (see [`classify`]) and creates the staging directory beside it, creating
    /// missing parent directories (removed again if the carve does not complete).
    pub(crate) fn begin(dest: &Path) -> Result<Self, PublishError> {
        let dest = if dest.file_name().is_none() {
            dest.canonicalize().map_err(io(dest))?
        } else {
            dest.to_owned()
        };
        classify(&dest)?;
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| PublishError::NotADirectory { path: dest.clone() })?;
        let parent = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
            _ => PathBuf::from("."),
        };
        let mut missing = Vec::new();
        let mut p = parent.as_path();
        while !p.as_os_str().is_empty() && fs::symlink_metadata(p).is_err() {
            missing.push(p.to_owned());
            match p.parent() {
                Some(up) => p = up,
                None => break,
            }
        }
        let mut staged = Self {
            dest,
            parent,
            name,
            staging: PathBuf::new(),
            syncs: SyncPool::start(),
            created_parents: Vec::new(),
            committed: false,
        };
        for dir in missing.into_iter().rev() {
            fs::create_dir(&dir).map_err(io(&dir))?;
            staged.created_parents.push(dir);
        }
        for attempt in 0.. {
            let candidate = staged.parent.join(format!(
                ".{}.tmp-{}-{:016x}",
                staged.name,
                std::process::id(),
                nonce()
            ));
            match fs::create_dir(&candidate) {
                Ok(()) => {
                    staged.staging = candidate;
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 8 => {}
                Err(e) => return Err(io(&candidate)(e)),
            }
        }
        Ok(staged)
    }

    /// Writes the new file `name` (a plain file name) with `bytes` into the staging directory.
    pub(crate) fn write(&self, name: &str, bytes: &[u8]) -> Result<(), PublishError> {
        let path = self.staging.join(name);
        let mut file = File::create_new(&path).map_err(io(&path))?;
        file.write_all(bytes).map_err(io(&path))?;
        self.syncs.submit(path, file)
    }

    /// `fsync`s every file and the staging directory, then moves it into place (see the module
    /// documentation). Returns notes on what could not be cleaned up after the new directory
    /// was in place (an old carve's leftovers), which are not errors.
    pub(crate) fn commit(mut self) -> Result<Vec<String>, PublishError> {
        std::mem::replace(&mut self.syncs, SyncPool::idle()).finish()?;
        sync_dir(&self.staging)?;
        let mut notes = Vec::new();
        match classify(&self.dest)? {
            Destination::Absent | Destination::Empty => {
                fs::rename(&self.staging, &self.dest).map_err(io(&self.dest))?;
            }
            Destination::EarlierCarve(old_names) => {
                let old = self.parent.join(format!(
                    ".{}.old-{}-{:016x}",
                    self.name,
                    std::process::id(),
                    nonce()
                ));
                fs::rename(&self.dest, &old).map_err(io(&self.dest))?;
                if let Err(e) = fs::rename(&self.staging, &self.dest) {
                    // Put the earlier carve back; the staging directory is removed on drop.
                    let _ = fs::rename(&old, &self.dest);
                    return Err(io(&self.dest)(e));
                }
                remove_files(&old, &old_names);
                if let Err(e) = fs::remove_dir(&old) {
                    notes.push(format!(
                        "the earlier carve moved to {} could not be removed: {e}",
                        old.display()
                    ));
                }
            }
        }
        self.committed = true;
        sync_dir(&self.parent)?;
        Ok(notes)
    }
}

/// Removes `names` from `dir`, on several threads: unlinking files whose blocks the journal
/// has just committed waits on the journal, and concurrent unlinks wait together.
fn remove_files(dir: &Path, names: &BTreeSet<String>) {
    let names: Vec<&String> = names.iter().collect();
    let per_thread = names.len().div_ceil(SYNC_THREADS).max(1);
    std::thread::scope(|s| {
        for chunk in names.chunks(per_thread) {
            s.spawn(move || {
                for name in chunk {
                    let _ = fs::remove_file(dir.join(name));
                }
            });
        }
    });
}

fn sync_dir(dir: &Path) -> Result<(), PublishError> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(io(dir))
}

impl Drop for StagedDir {
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        std::mem::replace(&mut self.syncs, SyncPool::idle()).abandon();
        if !self.staging.as_os_str().is_empty() {
            let _ = fs::remove_dir_all(&self.staging);
        }
        for dir in self.created_parents.iter().rev() {
            let _ = fs::remove_dir(dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty_manifest() -> String {
        Manifest {
            header: nrtucode_facts::ManifestHeader {
                source: "lib.so".into(),
                source_size: 0,
                source_sha256: "0".repeat(64),
                build_id: "unknown".into(),
            },
            rows: Vec::new(),
        }
        .render()
    }

    fn entries(dir: &Path) -> BTreeSet<String> {
        fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }

    fn stage(dest: &Path, files: &[(&str, &[u8])]) -> Result<Vec<String>, PublishError> {
        let s = StagedDir::begin(dest)?;
        for (name, bytes) in files {
            s.write(name, bytes)?;
        }
        s.commit()
    }

    #[test]
    fn an_absent_destination_and_its_parents_are_created() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("a/b/out");
        stage(&dest, &[("x.bin", b"1")]).unwrap();
        assert_eq!(entries(&dest), BTreeSet::from(["x.bin".to_owned()]));
        assert_eq!(entries(tmp.path()), BTreeSet::from(["a".to_owned()]));
    }

    #[test]
    fn a_dropped_stage_leaves_nothing_behind() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("a/b/out");
        let s = StagedDir::begin(&dest).unwrap();
        s.write("x.bin", b"1").unwrap();
        // A name collision inside the stage is an error, and dropping cleans up.
        assert!(s.write("x.bin", b"2").is_err());
        drop(s);
        assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
    }

    #[test]
    fn a_file_and_a_foreign_directory_are_refused_untouched() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("file");
        fs::write(&file, "mine").unwrap();
        let e = StagedDir::begin(&file).unwrap_err();
        assert!(e.to_string().contains("not a directory"), "{e}");
        let dir = tmp.path().join("dir");
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("notes.txt"), "mine").unwrap();
        let e = StagedDir::begin(&dir).unwrap_err();
        assert!(matches!(e, PublishError::Foreign { .. }), "{e}");
        assert!(e.to_string().contains("no manifest.tsv"), "{e}");
        // A manifest.tsv that is not ours is foreign too.
        fs::write(dir.join(MANIFEST_FILE), "hello\n").unwrap();
        let e = StagedDir::begin(&dir).unwrap_err();
        assert!(e.to_string().contains("not ours"), "{e}");
        assert_eq!(fs::read_to_string(dir.join("notes.txt")).unwrap(), "mine");
        assert_eq!(fs::read_to_string(&file).unwrap(), "mine");
        assert_eq!(entries(tmp.path()).len(), 2, "no staging directory left");
    }

    #[test]
    fn an_empty_directory_is_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("out");
        fs::create_dir(&dest).unwrap();
        stage(&dest, &[("y.bin", b"2")]).unwrap();
        assert_eq!(entries(&dest), BTreeSet::from(["y.bin".to_owned()]));
    }

    #[test]
    fn the_classification_of_an_earlier_carve_needs_every_file_listed() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("out");
        fs::create_dir(&dest).unwrap();
        fs::write(dest.join(MANIFEST_FILE), empty_manifest()).unwrap();
        assert_eq!(
            classify(&dest).unwrap(),
            Destination::EarlierCarve(BTreeSet::from([MANIFEST_FILE.to_owned()]))
        );
        fs::write(dest.join("stale.bin"), "x").unwrap();
        let e = classify(&dest).unwrap_err().to_string();
        assert!(e.contains("stale.bin is not listed"), "{e}");
        fs::remove_file(dest.join("stale.bin")).unwrap();
        fs::create_dir(dest.join("sub")).unwrap();
        let e = classify(&dest).unwrap_err().to_string();
        assert!(e.contains("sub is not a regular file"), "{e}");
    }
}
