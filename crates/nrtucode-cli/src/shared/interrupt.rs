//! What an interrupted command does: a carve, or a write of an output file
//! (`output_file`). On `SIGINT`, `SIGTERM`, `SIGHUP` (a closed terminal),
//! `SIGQUIT`, `SIGUSR1`, `SIGUSR2` or `SIGALRM` (Unix), or Ctrl-C / Ctrl-Break (Windows), the
//! tool asks the carve under way to stop (a [`Cancel`] token the carve library checks before
//! each file and before publishing), waits for it to remove its staging directory (and the
//! parent directories it created), or for a publication under way to finish, then exits
//! 128 + the signal (130 for `SIGINT`, Ctrl-C, Ctrl-Break; 143 for `SIGTERM`; 129 `SIGHUP`,
//! 131 `SIGQUIT`, 138 `SIGUSR1`, 140 `SIGUSR2`, 142 `SIGALRM`), so the destination is left
//! exactly as it was (or holds the complete new carve). An output file being written
//! (`pack -o`, `key ... -o`, `resolve -o`) has its temporary file registered here
//! ([`temp_files`]) from its creation until its rename; the signal thread removes every
//! registered one before exiting, and since creation, rename and removal all hold the
//! registry's lock, the output is either as it was or complete, with no temporary file left.
//! Known limit: a signal ignored when the tool starts (`nohup` ignores `SIGHUP`, a script's
//! background job `SIGINT` and `SIGQUIT`) is handled all the same, so it ends the carve
//! cleanly; telling would need `sigaction(2)` and `unsafe`, which this crate forbids.
//! A `SIGKILL` cannot be caught: the next carve into or beside the destination recognises the
//! staging directory it left (nobody holds its lock) and removes it.
//!
//! The process state lives here, in the program, not in the carve library: the token, and a
//! lock the carve holds while it runs, which the signal thread takes before it exits.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use nrtucode_carve::Cancel;

/// Exit status of a carve interrupted by `SIGINT` (Ctrl-C): 128 + 2, as shells report it.
#[cfg(windows)]
const INTERRUPTED: i32 = 130;

/// Set by the signal thread: every carve of this process stops at its next check.
static CANCEL: Cancel = Cancel::new();

/// Held by [`interruptible`] while its carve runs; the signal thread takes it before exiting.
static CARVING: Mutex<()> = Mutex::new(());

fn carving() -> MutexGuard<'static, ()> {
    CARVING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The temporary files of outputs being written, removed by the signal thread.
static TEMP_FILES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The registry of temporary output files: hold it while creating and registering one, and
/// while renaming (or removing) and unregistering it; the signal thread takes it, removes
/// what is registered and exits holding it.
pub(crate) fn temp_files() -> MutexGuard<'static, Vec<PathBuf>> {
    TEMP_FILES.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether the handler was installed (once per process), or why not.
static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();

/// Installs the handler of the module documentation, once per process (later calls answer
/// the first one's result).
pub(crate) fn clean_up_on_signals() -> std::io::Result<()> {
    INSTALLED
        .get_or_init(|| install().map_err(|e| e.to_string()))
        .clone()
        .map_err(std::io::Error::other)
}

/// Runs `carve` with the process's [`Cancel`] token. When a signal came meanwhile, this never
/// returns: the signal thread, which waited for `carve` to end, exits the process with the
/// signal's status (one thread exits, never two at once).
pub(crate) fn interruptible<T>(carve: impl FnOnce(&Cancel) -> T) -> T {
    let running = carving();
    let result = carve(&CANCEL);
    drop(running);
    if CANCEL.is_cancelled() {
        loop {
            std::thread::park();
        }
    }
    result
}

/// Starts a thread that waits for one of the signals of the module documentation, then stops
/// the carve and exits.
#[cfg(unix)]
fn install() -> std::io::Result<()> {
    use signal_hook::consts::{SIGALRM, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2};
    let mut signals = signal_hook::iterator::Signals::new([
        SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
    ])?;
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            exit_cleanly(128 + signal);
        }
    });
    Ok(())
}

/// Handles Ctrl-C and Ctrl-Break (on a thread of its own, `ctrlc`'s): stops the carve and
/// exits 130 (see the module documentation).
#[cfg(windows)]
fn install() -> std::io::Result<()> {
    ctrlc::set_handler(|| exit_cleanly(INTERRUPTED)).map_err(std::io::Error::other)
}

/// Other platforms: no handler; an interrupted carve may leave its hidden staging directory.
#[cfg(not(any(unix, windows)))]
fn install() -> std::io::Result<()> {
    Ok(())
}

/// Stops the carve under way, waits until it has removed its staging directory (or finished
/// publishing), removes the temporary output files registered (waiting for a rename under way
/// to finish) and exits with `status`.
#[cfg(any(unix, windows))]
fn exit_cleanly(status: i32) -> ! {
    CANCEL.cancel();
    // Held until the process is gone: no carve starts after this.
    let _carve_ended = carving();
    // Held until the process is gone too: no temporary file is made or renamed after this.
    let mut temps = temp_files();
    for temp in temps.drain(..) {
        let _ = std::fs::remove_file(temp);
    }
    std::process::exit(status);
}
