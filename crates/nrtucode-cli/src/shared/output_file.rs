//! The one writer of every output file (`pack -o`, `key generate -o`, `key public -o`,
//! `resolve -o`), and the check every output (`carve --out` too) makes first: it is not one of
//! the command's inputs.
//!
//! [`write_output`] writes `bytes` where the path points, never replacing what is not a
//! regular file:
//!
//! * absent, or a regular file: through a temporary file in the same directory
//!   (`.nrtucode-out-PID-RANDOM.tmp`), written, flushed to disk (`fsync`) and renamed over
//!   it only once complete: a failure leaves the file as it was. A signal the tool catches
//!   (`SIGINT`, `SIGTERM`, `SIGHUP`, `SIGQUIT`, `SIGUSR1`, `SIGUSR2`, `SIGALRM`; Ctrl-C on
//!   Windows) removes the temporary file before the tool exits 128 + N (`interrupt`); the
//!   rename and that removal exclude each other, so the result is the old file or the new
//!   one, and never a stray temporary file;
//! * a symbolic link: written through, never replaced: onto its target by these rules (a link
//!   to nothing is refused);
//! * a device, FIFO, socket or terminal (`/dev/null`, `/proc/self/fd/1`): opened (without
//!   waiting: a FIFO nobody reads is waited for at most [`FIFO_WAIT`], then refused) and
//!   written to, as `cp` and `dd` do (`/dev/full`: exit 74);
//! * a directory: refused.
//!
//! An output that is the same file as one of the command's inputs (the private key, the
//! public key, the library, the partition, a blob directory's manifest or blobs), compared
//! by device and inode after following links, is refused before anything is written, exit 73:
//! [`note_input`] records each input as it is read, [`write_output`] and [`refuse_input`]
//! check against them.
//!
//! The temporary file is made here, not with the `tempfile` crate (a test dependency): it is
//! created and registered with the signal handler under one lock, so that a signal finds it
//! registered or not yet made, and a signal exit runs no destructor, which is when
//! `NamedTempFile` would remove it; and its publication is two `std` calls (`rename`, or for a
//! new private key `hard_link` then `remove_file`, which never replaces a file). `tempfile`
//! would take over only the random name and the exclusive open, about fifteen lines, as a
//! runtime dependency.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::shared::error::Error;
use crate::shared::exit::{self, Exit};
use crate::shared::interrupt;

/// How long a write into a FIFO waits for a reader before it is refused (Unix: elsewhere a
/// FIFO is opened blocking).
#[cfg(unix)]
pub(crate) const FIFO_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// What identifies a file: device and inode on Unix, the canonical path elsewhere.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Identity(#[cfg(unix)] (u64, u64), #[cfg(not(unix))] PathBuf);

/// The identity of the file `path`, whose metadata (links followed) is `meta`.
fn identity(meta: &std::fs::Metadata, path: &Path) -> Option<Identity> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let _ = path;
        Some(Identity((meta.dev(), meta.ino())))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        std::fs::canonicalize(path).ok().map(Identity)
    }
}

/// The inputs this process has read: their identity and name.
static INPUTS: Mutex<Vec<(Identity, PathBuf)>> = Mutex::new(Vec::new());

fn inputs() -> std::sync::MutexGuard<'static, Vec<(Identity, PathBuf)>> {
    INPUTS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Records `path` (`meta`: its metadata, from the descriptor it was read through) as an input
/// of this command: no output may be the same file.
pub(crate) fn note_input(path: &Path, meta: &std::fs::Metadata) {
    if let Some(id) = identity(meta, path) {
        inputs().push((id, path.to_owned()));
    }
}

/// Records the file at `path` (following links) as an input, when it exists.
pub(crate) fn note_input_path(path: &Path) {
    if let Ok(meta) = std::fs::metadata(path) {
        note_input(path, &meta);
    }
}

/// The input that `meta` (of `path`) is, if any.
fn input_named(meta: &std::fs::Metadata, path: &Path) -> Option<PathBuf> {
    let id = identity(meta, path)?;
    inputs()
        .iter()
        .find(|(input, _)| *input == id)
        .map(|(_, name)| name.clone())
}

/// Refuses (exit 73) an output `path` that is, after following links, one of the inputs
/// noted, or (`contains`) a directory holding one of them: `what` names the option.
pub(crate) fn refuse_input(path: &Path, what: &str, contains: bool) -> Result<(), Error> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    if let Some(input) = input_named(&meta, path) {
        return Err(same_file(path, &input, what));
    }
    if contains && meta.is_dir() {
        let dir = identity(&meta, path);
        let held = inputs().iter().find_map(|(_, input)| {
            let input = std::fs::canonicalize(input).ok()?;
            input
                .ancestors()
                .skip(1)
                .any(|a| std::fs::metadata(a).ok().and_then(|m| identity(&m, a)) == dir)
                .then_some(input)
        });
        if let Some(input) = held {
            return Err(Error::new(
                Exit::CantCreate,
                format!(
                    "{}: holds the input {}; {what} would replace it: name another directory",
                    path.display(),
                    input.display()
                ),
            ));
        }
    }
    Ok(())
}

fn same_file(path: &Path, input: &Path, what: &str) -> Error {
    Error::new(
        Exit::CantCreate,
        format!(
            "{}: is the input {} (the same file); {what} names a file to write, not one the command reads: nothing was written",
            path.display(),
            input.display()
        ),
    )
}

/// How [`write_output`] creates a regular file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Readable by all (0644 less the umask), replacing a regular file there.
    Replace,
    /// Readable by its owner only (0600: a private key), and never replacing anything: an
    /// existing name of any kind is refused (exit 73).
    NewPrivate,
}

/// Writes `bytes` to `path` as the module documentation says; `mode` says how a regular file
/// is created. The error is the exit code and the message.
pub(crate) fn write_output(path: &Path, bytes: &[u8], mode: Mode) -> Result<(), Error> {
    let shown = path.display();
    refuse_input(path, "-o", false)?;
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::new(exit::creating(&e), format!("{shown}: {e}"))),
    };
    let Some(meta) = meta else {
        return replace_regular(path, path, bytes, mode);
    };
    if mode == Mode::NewPrivate {
        return Err(Error::new(
            Exit::CantCreate,
            format!("{shown}: exists; not replacing it"),
        ));
    }
    let meta = if meta.file_type().is_symlink() {
        match std::fs::metadata(path) {
            Ok(target) => target,
            Err(e) => {
                return Err(Error::new(
                    exit::creating(&e),
                    format!(
                        "{shown}: is a symbolic link to a file that cannot be reached ({e}); -o writes through a link but does not create its target"
                    ),
                ));
            }
        }
    } else {
        meta
    };
    if meta.is_dir() {
        return Err(Error::new(
            Exit::CantCreate,
            format!("{shown}: is a directory; -o names the file to write"),
        ));
    }
    if meta.is_file() {
        // Through a link: replace its target, in the target's directory, keeping the link.
        let target = std::fs::canonicalize(path)
            .map_err(|e| Error::new(exit::creating(&e), format!("{shown}: {e}")))?;
        return replace_regular(path, &target, bytes, mode);
    }
    write_through(path, bytes)
}

/// Opens the device, FIFO, socket or terminal `path` for writing. On Unix without blocking
/// (a FIFO with no reader answers at once; it is tried again until [`FIFO_WAIT`] has passed),
/// refusing what is a regular file by then, and made blocking again for the writes.
fn open_through(path: &Path) -> Result<std::fs::File, Error> {
    let shown = path.display();
    let cannot = |e: std::io::Error| {
        Error::new(
            exit::creating(&e),
            format!("cannot open {shown} for writing: {e}"),
        )
    };
    #[cfg(unix)]
    {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::WRONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let start = std::time::Instant::now();
        let fd = loop {
            match rustix::fs::open(path, flags, Mode::empty()) {
                Ok(fd) => break fd,
                Err(rustix::io::Errno::NXIO) if start.elapsed() < FIFO_WAIT => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(rustix::io::Errno::NXIO) => {
                    return Err(Error::new(
                        Exit::CantCreate,
                        format!(
                            "{shown}: is a FIFO that no process read within {} s; nothing was written",
                            FIFO_WAIT.as_secs()
                        ),
                    ));
                }
                Err(e) => return Err(cannot(e.into())),
            }
        };
        let file = std::fs::File::from(fd);
        let meta = file.metadata().map_err(cannot)?;
        if meta.is_file() {
            return Err(Error::new(
                Exit::CantCreate,
                format!(
                    "{shown}: became a regular file while it was opened; not writing into it in place"
                ),
            ));
        }
        let flags = rustix::fs::fcntl_getfl(&file).map_err(|e| cannot(e.into()))?;
        rustix::fs::fcntl_setfl(&file, flags - OFlags::NONBLOCK).map_err(|e| cannot(e.into()))?;
        Ok(file)
    }
    #[cfg(not(unix))]
    {
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(cannot)
    }
}

/// Writes into the device, FIFO, socket or terminal `path`, as `cp` and `dd` do.
fn write_through(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let mut file = open_through(path)?;
    file.write_all(bytes)
        .and_then(|()| file.flush())
        .map_err(|e| Error::new(Exit::IoErr, format!("{}: {e}", path.display())))
}

/// Writes `bytes` to the regular (or absent) file `target` through a temporary file beside it,
/// renamed into place once complete (with [`Mode::NewPrivate`], linked into place, which fails
/// if the name appeared meanwhile); `shown` names it in messages. The temporary file is
/// registered with `interrupt` while it exists.
fn replace_regular(shown: &Path, target: &Path, bytes: &[u8], mode: Mode) -> Result<(), Error> {
    if target.file_name().is_none() {
        return Err(Error::new(
            Exit::CantCreate,
            format!("{}: not a file name", shown.display()),
        ));
    }
    interrupt::clean_up_on_signals().map_err(|e| {
        Error::new(
            Exit::IoErr,
            format!("cannot handle interrupts (SIGINT, SIGTERM, SIGHUP, Ctrl-C): {e}"),
        )
    })?;
    // A random part, so that a temporary file a killed run left never blocks this one; short
    // enough beside any name the filesystem accepts (255 bytes).
    let random = || {
        use std::hash::BuildHasher as _;
        std::collections::hash_map::RandomState::new().hash_one(std::process::id())
    };
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(if mode == Mode::NewPrivate {
            0o600
        } else {
            0o644
        });
    }
    let mut attempt = 0;
    let (temp, mut file) = loop {
        let temp = target.with_file_name(format!(
            ".nrtucode-out-{}-{:016x}.tmp",
            std::process::id(),
            random()
        ));
        // Created and registered at once: a signal finds it registered, or not yet made.
        let mut temps = interrupt::temp_files();
        match options.open(&temp) {
            Ok(file) => {
                temps.push(temp.clone());
                break (temp, file);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 8 => {
                attempt += 1;
            }
            Err(e) => {
                return Err(Error::new(
                    exit::creating(&e),
                    format!("cannot create {}: {e}", shown.display()),
                ));
            }
        }
    };
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    drop(file);
    // Published (or removed) and unregistered at once: a signal waits for this to end, then
    // finds the temporary file gone, or still registered and unpublished.
    let mut temps = interrupt::temp_files();
    let done = written.map_err(|e| (Exit::IoErr, e)).and_then(|()| {
        match mode {
            Mode::Replace => std::fs::rename(&temp, target),
            // Never replace: a hard link fails if the name appeared meanwhile.
            Mode::NewPrivate => {
                std::fs::hard_link(&temp, target).and_then(|()| std::fs::remove_file(&temp))
            }
        }
        .map_err(|e| (exit::creating(&e), e))
    });
    if done.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    temps.retain(|t| *t != temp);
    drop(temps);
    done.map_err(|(exit, e)| {
        Error::new(exit, format_args!("{}: {e}", shown.display())).caused_by(e)
    })?;
    sync_dir(target);
    Ok(())
}

/// Flushes the directory entry of `path` to disk, where that can be done (best effort: the
/// file itself is already on disk).
fn sync_dir(path: &Path) {
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(dir) = std::fs::File::open(dir) {
            let _ = dir.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}
