//! Writing a directory all or nothing.
//!
//! Files are written into a fresh hidden staging directory; [`StagedDir::commit`] `fsync`s
//! every file and the directory, then publishes it. Until then the destination is untouched; a
//! `StagedDir` dropped without a commit (any error on the way) removes itself and any parent
//! directories it created. A [`Cancel`] token the caller sets (the `nrtucode` tool does, from
//! its signal handler) is checked before each file and before the publication starts: the
//! stage then fails with [`PublishError::Cancelled`] and removes itself the same way; once the
//! publication has started it runs to its end. So a failure at any point (`ENOSPC`, `EACCES`,
//! `EROFS`, a name collision, bad input, Ctrl-C) leaves the destination exactly as it was.
//!
//! This module keeps no process state: no registry, and no thread outlives the call that
//! writes the directory (the `fsync` workers run in the caller's `std::thread::scope`).
//!
//! What the destination may be ([`Destination`]), and how it is published:
//!
//! * absent: the staging directory is beside it (`.nrtucode-<tag>.tmp`, `<tag>` 16 hex digits
//!   of the SHA-256 of the destination's name, so any name the filesystem accepts, up to 255
//!   bytes, leaves room for it) and is renamed into place;
//! * an empty directory: it keeps its inode (so its mode, owner, a mount on it and a shell
//!   whose working directory it is are unaffected). The staging directory is inside it
//!   (`.nrtucode-<tag>.tmp`); the files are renamed into it one by one, `manifest.tsv`
//!   last, moved back if one fails, and the staging directory is removed. Until the manifest
//!   is in place the staging directory, holding it, is the record of the publication: a carve
//!   killed in between leaves blobs that the staged manifest lists, and the next carve
//!   removes them with the staging directory, so the destination is empty again;
//! * an earlier carve (a `manifest.tsv` in our format and nothing but the files it lists):
//!   the staging directory beside it is exchanged with it in one step (Linux
//!   `renameat2(RENAME_EXCHANGE)`, macOS `renamex_np(RENAME_SWAP)`; elsewhere, or where the
//!   filesystem lacks it, two renames through `.nrtucode-<tag>.old-<pid>-<random>`: a carve
//!   killed between the two leaves the destination absent and the earlier carve there, whole,
//!   and the next carve puts it back before anything else), then the
//!   old files (exactly those the old manifest lists, and the manifest) and the old directory
//!   are removed, so no blob the new manifest does not list remains. A carve whose entries this user may not delete is refused before
//!   anything is written, and if removing it fails anyway the exchange is undone;
//!   An earlier carve is what `nrtucode_facts::blob_dir::read_blob_dir` reads without a
//!   problem, holding nothing its manifest does not list, every file hashing to its name
//!   (`BlobDir::check_contents`): only then is anything of it deleted;
//! * anything else (a symbolic link, a file, a directory holding files this tool did not
//!   write, a manifest naming a file that is not `<sha256>.bin` or does not hash to its name):
//!   refused before anything is written. Files the carver did not write are never deleted or
//!   overwritten.
//!
//! The staging directory is made under a random name (`.nrtucode-<tag>-<random>`), locked
//! (`flock`, held until the carve ends, released by the kernel when the process dies, even by
//! `SIGKILL`) and only then renamed, without replacing, to its fixed name. So a second carve
//! into the same destination finds the fixed name taken and locked, and fails naming the
//! destination ([`PublishError::Busy`]); a staging entry of that kind (inside the destination,
//! or beside it for the same name) that nobody holds locked was left by a killed carve, and
//! the next carve removes it (only the `<sha256>.bin` files and `manifest.tsv` a carve writes;
//! anything else in it makes the carve refuse) and says so in its notes. Where `flock` is not
//! available (not Unix) a staging entry is never taken for stale: the carve refuses.
//!
//! Every step that changes the filesystem passes a kill point (`kill_point`): the tests kill
//! a carve at each of them in turn, into each kind of destination, and check what is left and
//! that the next carve succeeds.
//!
//! Messages name the destination as the caller gave it (`.` stays `.`) and name no
//! command-line flag: a program adds its own (the `nrtucode` tool names `--out`).
//!
//! What differs between platforms is in the crate documentation (its table is public).

use std::collections::BTreeSet;
use std::collections::hash_map::RandomState;
use std::ffi::OsString;
use std::fs::{self, File};
use std::hash::BuildHasher as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::{Scope, ScopedJoinHandle};

use crate::cancel::Cancel;
use crate::kill_point::{self, step};
use crate::rename::{exchange, rename_no_replace};
use nrtucode_facts::blob_dir::{BlobDirError, is_blob_file_name, read_blob_dir};
use nrtucode_facts::manifest::MANIFEST_FILE;

/// Why a directory could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PublishError {
    /// The destination exists and is not a directory.
    #[error("{}: exists and is not a directory", path.display())]
    NotADirectory {
        /// The destination.
        path: PathBuf,
    },
    /// The destination is a symbolic link, which is not followed.
    #[error(
        "{}: is a symbolic link, which is not followed; name the directory itself",
        path.display()
    )]
    SymbolicLink {
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
    /// The destination is an earlier carve plus a file its manifest does not list.
    #[error(
        "{}: refusing to replace an earlier carve that holds a file its {MANIFEST_FILE} does not list: {file} was not written by this tool; nothing was written. Move {file} away or choose a new or empty directory.",
        path.display()
    )]
    ForeignFile {
        /// The destination.
        path: PathBuf,
        /// The unlisted file.
        file: String,
    },
    /// The destination is an earlier carve whose files this user may not remove.
    #[error(
        "{}: cannot replace this earlier carve: its files cannot be removed ({source}); nothing was written",
        path.display()
    )]
    CannotRemove {
        /// The destination.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Another carve is writing the same destination (its staging directory is locked).
    #[error(
        "{}: another carve is writing this destination (its staging directory {} is in use); nothing was written",
        path.display(), staging.display()
    )]
    Busy {
        /// The destination.
        path: PathBuf,
        /// The other carve's staging directory.
        staging: PathBuf,
    },
    /// The destination changed while the carve was being written.
    #[error("{}: changed while the carve was written ({what}); nothing was written", path.display())]
    Changed {
        /// The destination.
        path: PathBuf,
        /// What changed.
        what: String,
    },
    /// The caller's [`Cancel`] was set before the publication started; the staging directory
    /// is removed.
    #[error("{}: cancelled; nothing was written", path.display())]
    Cancelled {
        /// The destination.
        path: PathBuf,
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

/// Classifies `dest`, refusing a symbolic link, a file and a directory with foreign content.
#[cfg(test)]
pub(crate) fn classify(dest: &Path) -> Result<Destination, PublishError> {
    classify_shown(dest, dest, None, &mut Vec::new())
}

/// [`classify`] naming the destination `shown` in messages and ignoring the entry `ours`
/// (a staging directory inside it). Another carve's staging directory inside it is
/// [`PublishError::Busy`] while that carve runs; a stale one is removed (noted in `notes`).
fn classify_shown(
    dest: &Path,
    shown: &Path,
    ours: Option<&OsString>,
    notes: &mut Vec<String>,
) -> Result<Destination, PublishError> {
    recover_moved_aside(dest, shown, notes)?;
    let meta = match fs::symlink_metadata(dest) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Destination::Absent),
        Err(e) => return Err(io(shown)(e)),
    };
    if meta.file_type().is_symlink() {
        return Err(PublishError::SymbolicLink {
            path: shown.to_owned(),
        });
    }
    if !meta.is_dir() {
        return Err(PublishError::NotADirectory {
            path: shown.to_owned(),
        });
    }
    // First the staging directories inside it: a stale one is taken over, and with it the
    // files its carve had already moved into the destination (see `take_over_stale`).
    for entry in fs::read_dir(dest).map_err(io(shown))? {
        let name = entry.map_err(io(shown))?.file_name();
        if ours != Some(&name) && is_staging_name(&name.to_string_lossy()) {
            take_over_stale(&dest.join(&name), Some(dest), shown, notes)?;
        }
    }
    let mut names = BTreeSet::new();
    for entry in fs::read_dir(dest).map_err(io(shown))? {
        let entry = entry.map_err(io(shown))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if ours == Some(&entry.file_name()) || is_staging_name(&name) {
            continue;
        }
        let is_file = entry.file_type().map_err(io(shown))?.is_file();
        if !is_file {
            return Err(PublishError::Foreign {
                path: shown.to_owned(),
                reason: format!("{name} is not a regular file"),
            });
        }
        names.insert(name);
    }
    if names.is_empty() {
        return Ok(Destination::Empty);
    }
    let foreign = |reason: String| PublishError::Foreign {
        path: shown.to_owned(),
        reason,
    };
    if !names.contains(MANIFEST_FILE) {
        return Err(foreign(format!("it has no {MANIFEST_FILE}")));
    }
    let problems = |e: BlobDirError| {
        e.problems
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    };
    let earlier = read_blob_dir(dest)
        .map_err(|e| foreign(format!("{MANIFEST_FILE} is not ours: {}", problems(e))))?;
    if let Some(extra) = earlier.unlisted.iter().find(|u| names.contains(&u.name)) {
        return Err(PublishError::ForeignFile {
            path: shown.to_owned(),
            file: extra.name.clone(),
        });
    }
    // Nothing is deleted unless it is exactly what a carve wrote.
    earlier
        .check_contents()
        .map_err(|e| foreign(format!("it is not as a carve wrote it: {}", problems(e))))?;
    Ok(Destination::EarlierCarve(names))
}

/// Where the portable replacement of an earlier carve (two renames, see the module
/// documentation) moved it aside: `.nrtucode-<tag>.old-<pid>-<random>` beside `dest`. One that
/// no carve holds locked was left by a killed carve: while `dest` is absent (killed between
/// the two renames) it is put back in place, as it was; once `dest` is the new carve, it is
/// removed like a stale staging directory. Both are noted.
fn recover_moved_aside(
    dest: &Path,
    shown: &Path,
    notes: &mut Vec<String>,
) -> Result<(), PublishError> {
    let Some(name) = dest.file_name() else {
        return Ok(());
    };
    let parent = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let prefix = format!(".nrtucode-{}.old-", tag(&name.to_string_lossy()));
    let Ok(entries) = fs::read_dir(parent) else {
        return Ok(());
    };
    let aside: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .filter(|n| n.to_string_lossy().starts_with(&prefix))
        .map(|n| parent.join(n))
        .collect();
    for old in aside {
        match try_lock(&old) {
            Ok(Some(_stale)) => {}
            // A carve is replacing it now (or, without `flock`, it cannot be told apart).
            Ok(None) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io(&old)(e)),
        }
        if fs::symlink_metadata(dest).is_err() {
            step(|| rename_no_replace(&old, dest)).map_err(io(shown))?;
            notes.push(format!(
                "put back the earlier carve an interrupted carve had moved to {}",
                old.display()
            ));
        } else {
            take_over_stale(&old, None, shown, notes)?;
        }
    }
    Ok(())
}

/// The tag of a destination name in its staging names: 16 hex digits of its SHA-256.
fn tag(name: &str) -> String {
    use sha2::{Digest as _, Sha256};
    nrtucode_facts::hex::lower_hex(&Sha256::digest(name.as_bytes())[..8])
}

/// `true` for the names of staging directories: `.nrtucode-<16 hex>.tmp` and
/// `.nrtucode-<16 hex>-<16 hex>`.
fn is_staging_name(name: &str) -> bool {
    let hex16 = |s: &str| s.len() == 16 && s.bytes().all(|b| b.is_ascii_hexdigit());
    name.strip_prefix(".nrtucode-").is_some_and(|rest| {
        rest.get(..16).is_some_and(hex16)
            && match &rest[16..] {
                ".tmp" => true,
                random => random.strip_prefix('-').is_some_and(hex16),
            }
    })
}

/// Tries to lock the directory `dir` (`flock`, exclusive, not waiting): `Ok(Some(file))` holds
/// the lock, `Ok(None)` when another process holds it (or, without `flock`, always).
fn try_lock(dir: &Path) -> std::io::Result<Option<File>> {
    #[cfg(unix)]
    {
        use rustix::fs::{FlockOperation, flock};
        let file = File::open(dir)?;
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(Some(file)),
            Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(None)
    }
}

/// Locks a staging directory this carve just made (`Ok(None)` where there is no `flock`).
fn lock_own(dir: &Path) -> std::io::Result<Option<File>> {
    #[cfg(unix)]
    {
        try_lock(dir)?
            .map(Some)
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::WouldBlock))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(None)
    }
}

/// The staging directory `staging` of the destination `shown` is in the way: while another
/// carve holds it, [`PublishError::Busy`] for the fixed name (`.tmp`: that carve has the
/// destination) and nothing for a random one (a carve that has not yet taken the fixed name:
/// of the two, whoever renames first wins); left by a killed carve, it is removed (the files a
/// carve writes only) and noted.
///
/// A staging directory inside the destination (`inside`, an empty directory when that carve
/// began) is also the record of a publication under way: its files are renamed into the
/// destination one by one, its `manifest.tsv` last. A carve killed in between leaves some
/// blobs in the destination and the rest, with the manifest, in the staging directory. Those
/// blobs are part of the staging: each file of the destination that the staged manifest lists
/// and that hashes to its name is removed first, then the staging directory (its manifest
/// last), so that a kill during this removal leaves what the next carve removes the same way.
/// The destination is then empty again, as it was.
fn take_over_stale(
    staging: &Path,
    inside: Option<&Path>,
    shown: &Path,
    notes: &mut Vec<String>,
) -> Result<(), PublishError> {
    let busy = || PublishError::Busy {
        path: shown.to_owned(),
        staging: staging.to_owned(),
    };
    let fixed = staging
        .file_name()
        .is_some_and(|n| n.to_string_lossy().ends_with(".tmp"));
    let _lock = match try_lock(staging) {
        Ok(Some(lock)) => lock,
        Ok(None) if fixed || cfg!(not(unix)) => return Err(busy()),
        Ok(None) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(staging)(e)),
    };
    let entries: Vec<(OsString, bool)> = fs::read_dir(staging)
        .and_then(|entries| {
            entries
                .map(|e| e.and_then(|e| Ok((e.file_name(), e.file_type()?.is_file()))))
                .collect()
        })
        .map_err(io(staging))?;
    for (name, is_file) in &entries {
        let text = name.to_string_lossy();
        if !is_file || !(text == MANIFEST_FILE || is_blob_file_name(&text)) {
            return Err(PublishError::Foreign {
                path: shown.to_owned(),
                reason: format!(
                    "{} looks like the staging directory of an interrupted carve but holds {text}, which a carve does not write",
                    staging.display()
                ),
            });
        }
    }
    if let Some(dest) = inside {
        let staged: BTreeSet<&OsString> = entries.iter().map(|(name, _)| name).collect();
        remove_moved_blobs(staging, &staged, dest)?;
    }
    // The manifest last: while it is there, the removal can be taken up again.
    let mut entries = entries;
    entries.sort_by_key(|(name, _)| name == MANIFEST_FILE);
    for (name, _) in &entries {
        step(|| fs::remove_file(staging.join(name))).map_err(io(staging))?;
    }
    step(|| fs::remove_dir(staging)).map_err(io(staging))?;
    notes.push(format!(
        "removed {}, the staging directory an interrupted carve left",
        staging.display()
    ));
    Ok(())
}

/// Removes from `dest` the blobs an interrupted publication had moved there from `staging`
/// (see [`take_over_stale`]): the files its `manifest.tsv` lists that are no longer in
/// `staging` (its entries `staged`) and that hash to their names. Nothing when the staging
/// directory holds no manifest that parses (the carve was killed before its publication).
fn remove_moved_blobs(
    staging: &Path,
    staged: &BTreeSet<&OsString>,
    dest: &Path,
) -> Result<(), PublishError> {
    use sha2::{Digest as _, Sha256};
    let manifest = staging.join(MANIFEST_FILE);
    let Ok(text) = fs::read_to_string(&manifest) else {
        return Ok(());
    };
    let Ok(manifest) = nrtucode_facts::Manifest::parse(&text) else {
        return Ok(());
    };
    for file in manifest.rows.iter().filter_map(|row| row.file.as_deref()) {
        if !is_blob_file_name(file) || staged.contains(&OsString::from(file)) {
            continue;
        }
        let path = dest.join(file);
        let is_file = fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
        let ours = is_file
            && fs::read(&path).is_ok_and(|bytes| {
                let sha = nrtucode_facts::hex::lower_hex(&Sha256::digest(&bytes));
                file.strip_suffix(".bin") == Some(sha.as_str())
            });
        if ours {
            step(|| fs::remove_file(&path)).map_err(io(&path))?;
        }
    }
    Ok(())
}

/// `Ok` when this process may remove entries of the directory `dir` (write and search
/// permission on it).
fn may_remove_entries(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use rustix::fs::{Access, access};
        access(dir, Access::WRITE_OK | Access::EXEC_OK).map_err(std::io::Error::from)
    }
    // Windows: the read-only attribute is the one permission std can read; an ACL that forbids
    // deleting shows only when the removal fails (and then the exchange is undone).
    #[cfg(not(unix))]
    {
        if fs::metadata(dir)?.permissions().readonly() {
            return Err(std::io::ErrorKind::PermissionDenied.into());
        }
        Ok(())
    }
}

/// A random number for temporary names (std's per-process random hash keys).
fn nonce() -> u64 {
    RandomState::new().hash_one(std::process::id())
}

/// Where the staging directory is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Staging {
    /// Beside the destination, renamed into place.
    Beside,
    /// Inside the (empty) destination, its files renamed into place.
    Inside,
}

/// What the staging path holds after a failed replacement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StagingHolds {
    /// The new carve, or nothing: removed as usual.
    Nothing,
    /// The earlier carve (exchanged, and not exchanged back): never removed.
    EarlierCarve,
}

/// A directory being written; see the module documentation.
#[derive(Debug)]
pub(crate) struct StagedDir<'c, 's> {
    /// The destination as the caller named it (for messages).
    shown: PathBuf,
    dest: PathBuf,
    parent: PathBuf,
    name: String,
    staging: PathBuf,
    placement: Staging,
    syncs: SyncPool<'s>,
    cancel: Option<&'c Cancel>,
    created_parents: Vec<PathBuf>,
    committed: bool,
    /// The `flock` on the staging directory, held while this carve runs.
    _lock: Option<File>,
    /// What was found and done on the way (stale staging directories removed).
    notes: Vec<String>,
}

/// Threads that `fsync` the staged files while the next ones are written (the filesystem
/// commits concurrent `fsync`s as a group, so the waits overlap instead of adding up).
const SYNC_THREADS: usize = 16;

type SyncJob = (PathBuf, File);

/// `fsync` workers fed through a channel, on threads of the caller's scope (so none outlives
/// the call that writes the directory).
#[derive(Debug)]
struct SyncPool<'s> {
    jobs: Option<mpsc::Sender<SyncJob>>,
    workers: Vec<ScopedJoinHandle<'s, Result<(), PublishError>>>,
}

impl<'s> SyncPool<'s> {
    fn start(scope: &'s Scope<'s, '_>) -> Self {
        let (jobs, queue) = mpsc::channel::<SyncJob>();
        let queue = Arc::new(Mutex::new(queue));
        let workers = (0..SYNC_THREADS)
            .map(|_| {
                let queue = Arc::clone(&queue);
                scope.spawn(move || {
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

    /// Waits for every submitted `fsync` (the workers end); the first failure is the result.
    /// The pool takes no more jobs after it (they are synced on the caller's thread).
    fn finish(&mut self) -> Result<(), PublishError> {
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
}

impl<'c, 's> StagedDir<'c, 's> {
    /// Checks `dest` (see [`classify`]) and creates the staging directory (see the module
    /// documentation), creating missing parent directories (removed again if the carve does
    /// not complete). `cancel`, when given, is checked before each step (see [`Cancel`]). The
    /// `fsync` workers run in `scope`.
    pub(crate) fn begin(
        dest: &Path,
        cancel: Option<&'c Cancel>,
        scope: &'s Scope<'s, '_>,
    ) -> Result<Self, PublishError> {
        let shown = dest.to_owned();
        if cancel.is_some_and(Cancel::is_cancelled) {
            return Err(PublishError::Cancelled { path: shown });
        }
        let mut notes = Vec::new();
        let found = classify_shown(dest, &shown, None, &mut notes)?;
        if let Destination::EarlierCarve(_) = found {
            may_remove_entries(dest).map_err(|source| PublishError::CannotRemove {
                path: shown.clone(),
                source,
            })?;
        }
        // `.`, `..` and `dir/.` have no file name: use the real one, and reach the parent
        // through `..` so messages keep the caller's (relative) spelling.
        let (parent, name) = match dest.file_name() {
            Some(name) => (
                match dest.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
                    _ => PathBuf::from("."),
                },
                name.to_string_lossy().into_owned(),
            ),
            None => {
                let real = dest.canonicalize().map_err(io(&shown))?;
                let name = real
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .ok_or_else(|| PublishError::NotADirectory {
                        path: shown.clone(),
                    })?;
                (dest.join(".."), name)
            }
        };
        // Renaming `.` itself fails (`EBUSY`): operate on `<parent>/<name>`.
        let dest = if dest.file_name().is_some() {
            dest.to_owned()
        } else {
            parent.join(&name)
        };
        let placement = if found == Destination::Empty {
            Staging::Inside
        } else {
            Staging::Beside
        };
        let mut missing = Vec::new();
        if placement == Staging::Beside {
            let mut p = parent.as_path();
            while !p.as_os_str().is_empty() && fs::symlink_metadata(p).is_err() {
                missing.push(p.to_owned());
                match p.parent() {
                    Some(up) => p = up,
                    None => break,
                }
            }
        }
        let mut staged = Self {
            shown,
            dest,
            parent,
            name,
            staging: PathBuf::new(),
            placement,
            syncs: SyncPool::start(scope),
            cancel,
            created_parents: Vec::new(),
            committed: false,
            _lock: None,
            notes,
        };
        for dir in missing.into_iter().rev() {
            step(|| fs::create_dir(&dir)).map_err(io(&dir))?;
            staged.created_parents.push(dir);
        }
        let tag = tag(&staged.name);
        let home = match placement {
            Staging::Beside => staged.parent.clone(),
            Staging::Inside => staged.dest.clone(),
        };
        if placement == Staging::Beside {
            // Random-named staging directories of this name a killed carve left beside it.
            let prefix = format!(".nrtucode-{tag}-");
            let stale: Vec<PathBuf> = fs::read_dir(&home)
                .map(|entries| {
                    entries
                        .filter_map(|e| e.ok().map(|e| e.file_name()))
                        .filter(|n| {
                            let n = n.to_string_lossy();
                            n.starts_with(&prefix) && is_staging_name(&n)
                        })
                        .map(|n| home.join(n))
                        .collect()
                })
                .unwrap_or_default();
            for path in stale {
                take_over_stale(&path, None, &staged.shown, &mut staged.notes)?;
            }
        }
        let fixed = home.join(format!(".nrtucode-{tag}.tmp"));
        let mut made = None;
        for _ in 0..8 {
            let candidate = home.join(format!(".nrtucode-{tag}-{:016x}", nonce()));
            match step(|| fs::create_dir(&candidate)) {
                Ok(()) => {
                    made = Some(candidate);
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io(&candidate)(e)),
            }
        }
        let Some(made) = made else {
            return Err(io(&home)(std::io::ErrorKind::AlreadyExists.into()));
        };
        staged.staging = made.clone();
        staged._lock = lock_own(&made).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                // Another carve took it for stale in the instant before it was locked.
                PublishError::Busy {
                    path: staged.shown.clone(),
                    staging: made.clone(),
                }
            } else {
                io(&made)(e)
            }
        })?;
        for attempt in 0.. {
            match step(|| rename_no_replace(&made, &fixed)) {
                Ok(()) => break,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 4 => {
                    let inside = (placement == Staging::Inside).then_some(staged.dest.as_path());
                    take_over_stale(&fixed, inside, &staged.shown, &mut staged.notes)?;
                }
                Err(e) => return Err(io(&fixed)(e)),
            }
        }
        staged.staging = fixed;
        Ok(staged)
    }

    /// Writes the new file `name` (a plain file name) with `bytes` into the staging directory.
    pub(crate) fn write(&self, name: &str, bytes: &[u8]) -> Result<(), PublishError> {
        self.check_cancel()?;
        let path = self.staging.join(name);
        let mut file = step(|| File::create_new(&path)).map_err(io(&path))?;
        step(|| file.write_all(bytes)).map_err(io(&path))?;
        self.syncs.submit(path, file)
    }

    /// [`PublishError::Cancelled`] once the caller's [`Cancel`] is set.
    fn check_cancel(&self) -> Result<(), PublishError> {
        if self.cancel.is_some_and(Cancel::is_cancelled) {
            return Err(PublishError::Cancelled {
                path: self.shown.clone(),
            });
        }
        Ok(())
    }

    /// `fsync`s every file and the staging directory, then publishes it (see the module
    /// documentation). Returns notes on what could not be cleaned up after the new directory
    /// was in place, which are not errors.
    pub(crate) fn commit(mut self) -> Result<Vec<String>, PublishError> {
        self.check_cancel()?;
        self.syncs.finish()?;
        sync_dir(&self.staging)?;
        // The last check: from here on the publication runs to its end.
        self.check_cancel()?;
        let staging_name = self.staging.file_name().map(OsString::from);
        let ours = match self.placement {
            Staging::Inside => staging_name.as_ref(),
            Staging::Beside => None,
        };
        let mut notes = std::mem::take(&mut self.notes);
        let found = classify_shown(&self.dest, &self.shown, ours, &mut notes)?;
        let published = match (found, self.placement) {
            (Destination::Absent | Destination::Empty, Staging::Beside) => {
                step(|| fs::rename(&self.staging, &self.dest)).map_err(io(&self.shown))?;
                Vec::new()
            }
            (Destination::Empty, Staging::Inside) => {
                self.move_files_in()?;
                Vec::new()
            }
            (Destination::EarlierCarve(old_names), Staging::Beside) => {
                match self.replace_earlier_carve(&old_names) {
                    Ok(notes) => notes,
                    Err((e, StagingHolds::EarlierCarve)) => {
                        // Never remove it: forget the staging directory.
                        self.staging = PathBuf::new();
                        return Err(e);
                    }
                    Err((e, StagingHolds::Nothing)) => return Err(e),
                }
            }
            (found, _) => {
                return Err(PublishError::Changed {
                    path: self.shown.clone(),
                    what: match found {
                        Destination::Absent => "it was removed".into(),
                        _ => "files appeared in it".into(),
                    },
                });
            }
        };
        notes.extend(published);
        self.committed = true;
        let synced = match self.placement {
            Staging::Beside => &self.parent,
            Staging::Inside => &self.dest,
        };
        sync_dir(synced)?;
        Ok(notes)
    }

    /// Renames the staged files into the (empty) destination, `manifest.tsv` last, and removes
    /// the staging directory; on failure moves them back.
    fn move_files_in(&self) -> Result<(), PublishError> {
        let mut names: Vec<OsString> = fs::read_dir(&self.staging)
            .map_err(io(&self.staging))?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<_, _>>()
            .map_err(io(&self.staging))?;
        names.sort_by_key(|n| (n == MANIFEST_FILE, n.clone()));
        let mut moved: Vec<&OsString> = Vec::new();
        for name in &names {
            if let Err(e) =
                step(|| rename_no_replace(&self.staging.join(name), &self.dest.join(name)))
            {
                for done in moved.into_iter().rev() {
                    let _ = step(|| fs::rename(self.dest.join(done), self.staging.join(done)));
                }
                return Err(PublishError::Io {
                    path: self.shown.join(name),
                    source: e,
                });
            }
            moved.push(name);
        }
        step(|| fs::remove_dir(&self.staging)).map_err(io(&self.staging))
    }

    /// Puts the staged directory in the place of the earlier carve `old_names` (see the module
    /// documentation); on failure the earlier carve is back in place.
    fn replace_earlier_carve(
        &self,
        old_names: &BTreeSet<String>,
    ) -> Result<Vec<String>, (PublishError, StagingHolds)> {
        let nothing = |e| (e, StagingHolds::Nothing);
        // Held while the earlier carve is removed, so that no other carve takes it, once it
        // has the staging directory's name, for a stale staging directory.
        let _earlier = match try_lock(&self.dest) {
            Ok(Some(lock)) => Some(lock),
            #[cfg(unix)]
            Ok(None) => {
                return Err(nothing(PublishError::Busy {
                    path: self.shown.clone(),
                    staging: self.dest.clone(),
                }));
            }
            #[cfg(not(unix))]
            Ok(None) => None,
            Err(e) => return Err(nothing(io(&self.shown)(e))),
        };
        // Where the earlier carve is once the new one is in place.
        let old = if step(|| exchange(&self.staging, &self.dest))
            .map_err(io(&self.shown))
            .map_err(nothing)?
        {
            self.staging.clone()
        } else {
            let old = self.parent.join(format!(
                ".nrtucode-{}.old-{}-{:016x}",
                tag(&self.name),
                std::process::id(),
                nonce()
            ));
            step(|| fs::rename(&self.dest, &old))
                .map_err(io(&self.shown))
                .map_err(nothing)?;
            if let Err(e) = step(|| fs::rename(&self.staging, &self.dest)) {
                if let Err(back) = step(|| fs::rename(&old, &self.dest)) {
                    return Err(nothing(PublishError::Io {
                        path: self.shown.clone(),
                        source: std::io::Error::other(format!(
                            "{e}; the earlier carve could not be put back ({back}): it is in {}",
                            old.display()
                        )),
                    }));
                }
                return Err(nothing(io(&self.shown)(e)));
            }
            old
        };
        let (removed, failed) = remove_files(&old, old_names);
        let result = match failed {
            None => step(|| fs::remove_dir(&old)),
            Some(e) => Err(e),
        };
        let Err(e) = result else {
            return Ok(Vec::new());
        };
        if removed > 0 {
            // Part of the earlier carve is gone: the new one stays.
            return Ok(vec![format!(
                "part of the earlier carve could not be removed from {}: {e}",
                old.display()
            )]);
        }
        // Nothing of the earlier carve was removed: put it back and drop the new one.
        let undone = if old == self.staging {
            step(|| exchange(&self.staging, &self.dest)).and_then(|swapped| {
                if swapped {
                    Ok(())
                } else {
                    Err(std::io::Error::other("cannot exchange back"))
                }
            })
        } else {
            step(|| fs::rename(&self.dest, &self.staging))
                .and_then(|()| step(|| fs::rename(&old, &self.dest)))
        };
        match undone {
            Ok(()) => Err(nothing(PublishError::CannotRemove {
                path: self.shown.clone(),
                source: e,
            })),
            Err(undo) => Err((
                PublishError::Io {
                    path: self.shown.clone(),
                    source: std::io::Error::other(format!(
                        "the earlier carve could not be removed ({e}) nor put back ({undo}); it is in {}",
                        old.display()
                    )),
                },
                if old == self.staging {
                    StagingHolds::EarlierCarve
                } else {
                    StagingHolds::Nothing
                },
            )),
        }
    }
}

/// Removes `names` from `dir`, on several threads: unlinking files whose blocks the journal
/// has just committed waits on the journal, and concurrent unlinks wait together. Returns how
/// many were removed and the first failure.
fn remove_files(dir: &Path, names: &BTreeSet<String>) -> (usize, Option<std::io::Error>) {
    // The kill points of the removals, on this thread, in order (the workers have none).
    let mut killed = None;
    let names: Vec<&String> = names
        .iter()
        .take_while(|_| {
            killed = kill_point::reached().err();
            killed.is_none()
        })
        .collect();
    let per_thread = names.len().div_ceil(SYNC_THREADS).max(1);
    let results: Vec<(usize, Option<std::io::Error>)> = std::thread::scope(|s| {
        let workers: Vec<_> = names
            .chunks(per_thread)
            .map(|chunk| {
                s.spawn(move || {
                    let mut removed = 0;
                    let mut failed = None;
                    for name in chunk {
                        match fs::remove_file(dir.join(name)) {
                            Ok(()) => removed += 1,
                            Err(e) => failed = failed.or(Some(e)),
                        }
                    }
                    (removed, failed)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join().unwrap_or_else(|_| {
                    (0, Some(std::io::Error::other("a remover thread panicked")))
                })
            })
            .collect()
    });
    results
        .into_iter()
        .fold((0, killed), |(n, first), (removed, failed)| {
            (n + removed, first.or(failed))
        })
}

/// Makes the entries of `dir` durable (`fsync` on the directory) on Unix. Windows cannot
/// open a directory as a `File` nor flush one: there the files themselves are flushed (as
/// everywhere) and the renames are as durable as NTFS makes them.
fn sync_dir(dir: &Path) -> Result<(), PublishError> {
    #[cfg(unix)]
    {
        File::open(dir).and_then(|d| d.sync_all()).map_err(io(dir))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

impl Drop for StagedDir<'_, '_> {
    /// Removes the staging directory of a carve not committed, and the parent directories it
    /// created.
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        // The workers first (their files closed), so that nothing holds the directory open.
        let _ = self.syncs.finish();
        if !self.staging.as_os_str().is_empty() {
            let _ = step(|| fs::remove_dir_all(&self.staging));
        }
        for dir in self.created_parents.iter().rev() {
            let _ = step(|| fs::remove_dir(dir));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rename::PortableOnly;
    use nrtucode_facts::Manifest;

    fn empty_manifest() -> String {
        empty_manifest_of("lib.so")
    }

    /// A manifest listing no blobs, naming `source` as the library it came from.
    fn empty_manifest_of(source: &str) -> String {
        Manifest {
            header: nrtucode_facts::ManifestHeader {
                source: source.into(),
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
        std::thread::scope(|sc| {
            let s = StagedDir::begin(dest, None, sc)?;
            for (name, bytes) in files {
                s.write(name, bytes)?;
            }
            s.commit()
        })
    }

    /// [`StagedDir::begin`] without a token, its workers in a scope of their own: for the
    /// tests that expect it to fail.
    fn begin_err(dest: &Path) -> PublishError {
        std::thread::scope(|sc| StagedDir::begin(dest, None, sc).unwrap_err())
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
        std::thread::scope(|sc| {
            let s = StagedDir::begin(&dest, None, sc).unwrap();
            s.write("x.bin", b"1").unwrap();
            // A name collision inside the stage is an error, and dropping cleans up.
            assert!(s.write("x.bin", b"2").is_err());
            drop(s);
            assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
        });
    }

    #[test]
    fn a_file_and_a_foreign_directory_are_refused_untouched() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("file");
        fs::write(&file, "mine").unwrap();
        let e = begin_err(&file);
        assert!(e.to_string().contains("not a directory"), "{e}");
        let dir = tmp.path().join("dir");
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("notes.txt"), "mine").unwrap();
        let e = begin_err(&dir);
        assert!(matches!(e, PublishError::Foreign { .. }), "{e}");
        assert!(e.to_string().contains("no manifest.tsv"), "{e}");
        // A manifest.tsv that is not ours is foreign too.
        fs::write(dir.join(MANIFEST_FILE), "hello\n").unwrap();
        let e = begin_err(&dir);
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
        assert!(e.contains("stale.bin was not written by this tool"), "{e}");
        fs::remove_file(dest.join("stale.bin")).unwrap();
        fs::create_dir(dest.join("sub")).unwrap();
        let e = classify(&dest).unwrap_err().to_string();
        assert!(e.contains("sub is not a regular file"), "{e}");
    }

    #[test]
    fn an_earlier_carve_is_replaced_whole_by_one_exchange_or_by_two_renames() {
        for portable in [false, true] {
            let _mode = PortableOnly::set(portable);
            let tmp = tempfile::tempdir().unwrap();
            let dest = tmp.path().join("out");
            fs::create_dir(&dest).unwrap();
            fs::write(dest.join(MANIFEST_FILE), empty_manifest_of("old.so")).unwrap();
            let new_manifest = empty_manifest_of("new.so");
            let notes = stage(
                &dest,
                &[("y.bin", b"2"), (MANIFEST_FILE, new_manifest.as_bytes())],
            )
            .unwrap();
            assert!(notes.is_empty(), "portable {portable}: {notes:?}");
            assert_eq!(
                entries(&dest),
                BTreeSet::from(["y.bin".to_owned(), MANIFEST_FILE.to_owned()]),
                "portable {portable}"
            );
            assert_eq!(
                fs::read_to_string(dest.join(MANIFEST_FILE)).unwrap(),
                new_manifest
            );
            // Neither the staging directory nor the earlier carve's `.old-` is left.
            assert_eq!(
                entries(tmp.path()),
                BTreeSet::from(["out".to_owned()]),
                "portable {portable}"
            );
        }
    }

    #[test]
    fn a_cancelled_stage_writes_no_more_removes_itself_and_its_parents_and_publishes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("a/out");
        let cancel = Cancel::new();
        std::thread::scope(|sc| {
            let s = StagedDir::begin(&dest, Some(&cancel), sc).unwrap();
            s.write("x.bin", b"1").unwrap();
            assert_eq!(entries(tmp.path()), BTreeSet::from(["a".to_owned()]));
            cancel.cancel();
            let e = s.write("y.bin", b"2").unwrap_err();
            assert!(matches!(e, PublishError::Cancelled { .. }), "{e}");
            assert_eq!(
                e.to_string(),
                format!("{}: cancelled; nothing was written", dest.display())
            );
            assert!(matches!(
                s.commit().unwrap_err(),
                PublishError::Cancelled { .. }
            ));
            assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
            // A token set before the carve starts: nothing is made at all.
            let e = StagedDir::begin(&dest, Some(&cancel), sc).unwrap_err();
            assert!(matches!(e, PublishError::Cancelled { .. }), "{e}");
            assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
        });
    }

    #[test]
    fn a_cancel_after_the_last_file_still_stops_the_publication() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("out");
        let cancel = Cancel::new();
        std::thread::scope(|sc| {
            let s = StagedDir::begin(&dest, Some(&cancel), sc).unwrap();
            s.write("x.bin", b"1").unwrap();
            cancel.cancel();
            assert!(matches!(
                s.commit().unwrap_err(),
                PublishError::Cancelled { .. }
            ));
            assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
        });
    }

    /// The files of a carve of the test library, its manifest naming `source`.
    fn carve_files(source: &str) -> Vec<(String, Vec<u8>)> {
        let data = nrtucode_test_elf::TinyElf::default().build();
        let carve = crate::carve_bytes(&data, source).unwrap();
        let mut files: BTreeSet<(String, Vec<u8>)> = carve
            .getters
            .iter()
            .filter(|g| g.size > 0)
            .map(|g| {
                (
                    format!("{}.bin", g.sha256),
                    carve.blob(&data, g).unwrap().to_vec(),
                )
            })
            .collect();
        files.insert((
            MANIFEST_FILE.to_owned(),
            carve.manifest().render().into_bytes(),
        ));
        let mut files: Vec<_> = files.into_iter().collect();
        // The manifest last, as the carve writes it.
        files.sort_by_key(|(name, _)| name == MANIFEST_FILE);
        files
    }

    /// The regular files of `dir` and their bytes, leaving out staging entries (`None`: no
    /// directory there).
    fn published(dir: &Path) -> Option<BTreeSet<(String, Vec<u8>)>> {
        let entries = fs::read_dir(dir).ok()?;
        Some(
            entries
                .map(|e| e.unwrap())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| !name.starts_with(".nrtucode-"))
                .map(|name| {
                    let bytes = fs::read(dir.join(&name)).unwrap();
                    (name, bytes)
                })
                .collect(),
        )
    }

    fn stage_owned(dest: &Path, files: &[(String, Vec<u8>)]) -> Result<Vec<String>, PublishError> {
        std::thread::scope(|sc| {
            let s = StagedDir::begin(dest, None, sc)?;
            for (name, bytes) in files {
                s.write(name, bytes)?;
            }
            s.commit()
        })
    }

    /// Every step of a carve that changes the filesystem, killed in turn (by count: see
    /// `kill_point`), into each kind of destination and by each kind of rename: what the kill
    /// leaves is the destination as it was or the complete new carve, apart from staging
    /// entries; and the next carve then succeeds, leaving the complete new carve and no
    /// staging entry.
    #[test]
    fn a_carve_killed_at_any_step_leaves_the_destination_as_it_was_or_complete() {
        let new = carve_files("new.so");
        let earlier = carve_files("earlier.so");
        let expected: BTreeSet<_> = new.iter().cloned().collect();
        for portable in [false, true] {
            let _mode = PortableOnly::set(portable);
            for kind in ["absent", "absent, parent too", "empty", "earlier carve"] {
                for passing in 0.. {
                    let tmp = tempfile::tempdir().unwrap();
                    let dest = match kind {
                        "absent, parent too" => tmp.path().join("a/out"),
                        _ => tmp.path().join("out"),
                    };
                    match kind {
                        "empty" => fs::create_dir(&dest).unwrap(),
                        "earlier carve" => stage_owned(&dest, &earlier).map(drop).unwrap(),
                        _ => {}
                    }
                    let before = published(&dest);
                    let armed = kill_point::Armed::new(passing);
                    let result = stage_owned(&dest, &new);
                    let killed = armed.killed();
                    drop(armed);
                    let case = format!("{kind}, portable {portable}, killed after {passing} steps");
                    if !killed {
                        // Past the last step: the carve ran to its end.
                        assert!(result.is_ok(), "{case}: {result:?}");
                        assert_eq!(published(&dest), Some(expected.clone()), "{case}");
                        assert!(passing > 5, "{case}: only {passing} steps");
                        break;
                    }
                    let after = published(&dest);
                    // Into an empty directory the files are renamed one by one: until the
                    // manifest is, the blobs already there belong to the staging directory
                    // beside them, which lists them.
                    let staging_holds_the_rest = kind == "empty"
                        && after.as_ref().is_some_and(|files| {
                            files
                                .iter()
                                .all(|f| f.0 != MANIFEST_FILE && expected.contains(f))
                        })
                        && entries(&dest).iter().any(|n| {
                            n.starts_with(".nrtucode-")
                                && dest.join(n).join(MANIFEST_FILE).is_file()
                        });
                    // Without an exchange call (two renames), between them the earlier
                    // carve is aside, whole, and the destination absent: the next carve puts
                    // it back (`recover_moved_aside`).
                    let parent = dest.parent().unwrap();
                    let earlier_aside = portable
                        && kind == "earlier carve"
                        && after.is_none()
                        && entries(parent).iter().any(|n| {
                            n.contains(".old-")
                                && published(&parent.join(n))
                                    == Some(earlier.iter().cloned().collect())
                        });
                    assert!(
                        after == before
                            || after.as_ref() == Some(&expected)
                            || staging_holds_the_rest
                            || earlier_aside,
                        "{case}: neither as it was nor the complete carve: {:?}",
                        after.map(|a| a.into_iter().map(|f| f.0).collect::<Vec<_>>())
                    );
                    let notes = stage_owned(&dest, &new);
                    assert!(notes.is_ok(), "{case}: the next carve: {notes:?}");
                    assert_eq!(published(&dest), Some(expected.clone()), "{case}");
                    let staging = |dir: &Path| {
                        entries(dir)
                            .into_iter()
                            .filter(|n| n.starts_with(".nrtucode-"))
                            .collect::<Vec<_>>()
                    };
                    assert_eq!(staging(parent), Vec::<String>::new(), "{case}");
                    assert_eq!(staging(&dest), Vec::<String>::new(), "{case}");
                }
            }
        }
    }
}
