//! What an interrupted carve does: on `SIGINT` or `SIGTERM` (Unix), or Ctrl-C / Ctrl-Break
//! (Windows), the tool removes the staging directory of the carve under way (and the parent
//! directories it created), waiting for a publication under way to finish, then exits 130
//! (`SIGINT`, Ctrl-C, Ctrl-Break) or 143 (`SIGTERM`), so the destination is left exactly as it
//! was.

/// Exit status of a carve interrupted by `SIGINT` (Ctrl-C): 128 + 2, as shells report it.
#[cfg(windows)]
const INTERRUPTED: i32 = 130;

/// Starts a thread that waits for `SIGINT` or `SIGTERM`, then cleans up and exits (see the
/// module documentation).
#[cfg(unix)]
pub(crate) fn clean_up_on_signals() -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
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
