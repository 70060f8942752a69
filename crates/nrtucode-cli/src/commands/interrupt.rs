//! What an interrupted carve does: on `SIGINT` or `SIGTERM` the tool removes the staging
//! directory of the carve under way (and the parent directories it created), waiting for a
//! publication under way to finish, then exits 130 (`SIGINT`) or 143 (`SIGTERM`), so the
//! destination is left exactly as it was.

/// Starts a thread that waits for `SIGINT` or `SIGTERM`, then cleans up and exits (see the
/// module documentation).
pub(crate) fn clean_up_on_signals() -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            // Held until the process is gone: no publication starts after the clean-up.
            let _no_more_publications = nrtucode_carve::clean_up_staging();
            std::process::exit(128 + signal);
        }
    });
    Ok(())
}
