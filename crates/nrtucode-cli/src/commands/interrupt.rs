//! What an interrupted carve does: on `SIGINT`, `SIGTERM`, `SIGHUP` (a closed terminal),
//! `SIGQUIT`, `SIGUSR1`, `SIGUSR2` or `SIGALRM` (Unix), or Ctrl-C / Ctrl-Break (Windows), the
//! tool removes the staging directory of the carve under way (and the parent directories it
//! created), waiting for a publication under way to finish, then exits 128 + the signal (130
//! for `SIGINT`, Ctrl-C, Ctrl-Break; 143 for `SIGTERM`; 129 `SIGHUP`, 131 `SIGQUIT`, 138
//! `SIGUSR1`, 140 `SIGUSR2`, 142 `SIGALRM`), so the destination is left exactly as it was.
//! Known limit: a signal ignored when the tool starts (`nohup` ignores `SIGHUP`, a script's
//! background job `SIGINT` and `SIGQUIT`) is handled all the same, so it ends the carve
//! cleanly; telling would need `sigaction(2)` and `unsafe`, which this crate forbids.
//! A `SIGKILL` cannot be caught: the next carve into or beside the destination recognises the
//! staging directory it left (nobody holds its lock) and removes it.

/// Exit status of a carve interrupted by `SIGINT` (Ctrl-C): 128 + 2, as shells report it.
#[cfg(windows)]
const INTERRUPTED: i32 = 130;

/// Starts a thread that waits for one of the signals of the module documentation, then cleans
/// up and exits.
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

/// Handles Ctrl-C and Ctrl-Break (on a thread of its own, `ctrlc`'s): cleans up and exits 130
/// (see the module documentation).
#[cfg(windows)]
pub(crate) fn clean_up_on_signals() -> std::io::Result<()> {
    ctrlc::set_handler(|| exit_cleanly(INTERRUPTED)).map_err(std::io::Error::other)
}

/// Other platforms: no handler; an interrupted carve may leave its hidden staging directory.
#[cfg(not(any(unix, windows)))]
pub(crate) fn clean_up_on_signals() -> std::io::Result<()> {
    Ok(())
}

/// Removes the staging directories of the carves under way and exits with `status`.
#[cfg(any(unix, windows))]
fn exit_cleanly(status: i32) -> ! {
    // Held until the process is gone: no publication starts after the clean-up.
    let _no_more_publications = nrtucode_carve::clean_up_staging();
    std::process::exit(status);
}
