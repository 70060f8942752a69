//! What an interrupted carve does: on `SIGINT`, `SIGTERM`, `SIGHUP` (a closed terminal),
//! `SIGQUIT`, `SIGUSR1`, `SIGUSR2` or `SIGALRM` (Unix), or Ctrl-C / Ctrl-Break (Windows), the
//! tool asks the carve under way to stop (a [`Cancel`] token the carve library checks before
//! each file and before publishing), waits for it to remove its staging directory (and the
//! parent directories it created), or for a publication under way to finish, then exits
//! 128 + the signal (130 for `SIGINT`, Ctrl-C, Ctrl-Break; 143 for `SIGTERM`; 129 `SIGHUP`,
//! 131 `SIGQUIT`, 138 `SIGUSR1`, 140 `SIGUSR2`, 142 `SIGALRM`), so the destination is left
//! exactly as it was (or holds the complete new carve).
//! Known limit: a signal ignored when the tool starts (`nohup` ignores `SIGHUP`, a script's
//! background job `SIGINT` and `SIGQUIT`) is handled all the same, so it ends the carve
//! cleanly; telling would need `sigaction(2)` and `unsafe`, which this crate forbids.
//! A `SIGKILL` cannot be caught: the next carve into or beside the destination recognises the
//! staging directory it left (nobody holds its lock) and removes it.
//!
//! The process state lives here, in the program, not in the carve library: the token, and a
//! lock the carve holds while it runs, which the signal thread takes before it exits.

use std::sync::{Mutex, MutexGuard, PoisonError};

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
pub(crate) fn clean_up_on_signals() -> std::io::Result<()> {
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
pub(crate) fn clean_up_on_signals() -> std::io::Result<()> {
    ctrlc::set_handler(|| exit_cleanly(INTERRUPTED)).map_err(std::io::Error::other)
}

/// Other platforms: no handler; an interrupted carve may leave its hidden staging directory.
#[cfg(not(any(unix, windows)))]
pub(crate) fn clean_up_on_signals() -> std::io::Result<()> {
    Ok(())
}

/// Stops the carve under way, waits until it has removed its staging directory (or finished
/// publishing) and exits with `status`.
#[cfg(any(unix, windows))]
fn exit_cleanly(status: i32) -> ! {
    CANCEL.cancel();
    // Held until the process is gone: no carve starts after this.
    let _carve_ended = carving();
    std::process::exit(status);
}
