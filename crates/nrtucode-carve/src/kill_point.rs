//! Kill points: each step of a carve's publication that changes the filesystem (a directory
//! made, a file created or written, a rename, an exchange, a removal) passes [`reached`]
//! first. Outside this crate's tests a point is nothing. In its tests, [`Armed`] lets a given
//! number of points pass on the current thread, and the next one and every later one fail as
//! if the process had been killed there: nothing after it happens, not even the clean-up a
//! failed carve does (`Drop`), and the `flock`s are released as the kernel releases a dead
//! process's. So a test can stop a carve at each of its steps in turn, by count, not by timing.

/// `Err` when the process is (in a test: is taken to be) dead at this point.
pub(crate) fn reached() -> std::io::Result<()> {
    #[cfg(test)]
    {
        match LEFT.get() {
            None => {}
            Some(0) => {
                DEAD.set(true);
                return Err(std::io::Error::other("killed (a kill point of a test)"));
            }
            Some(n) => LEFT.set(Some(n - 1)),
        }
    }
    Ok(())
}

#[cfg(test)]
thread_local! {
    /// How many more points pass on this thread; `None`: all (not armed).
    static LEFT: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
    /// Whether a point failed since [`Armed::new`].
    static DEAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// While it lives, `passing` points pass on this thread and the next kills (see the module
/// documentation).
#[cfg(test)]
#[derive(Debug)]
pub(crate) struct Armed;

#[cfg(test)]
impl Armed {
    pub(crate) fn new(passing: u64) -> Self {
        LEFT.set(Some(passing));
        DEAD.set(false);
        Self
    }

    /// Whether the kill point was reached (the process is taken to be dead).
    pub(crate) fn killed(&self) -> bool {
        DEAD.get()
    }
}

#[cfg(test)]
impl Drop for Armed {
    fn drop(&mut self) {
        LEFT.set(None);
        DEAD.set(false);
    }
}

/// Runs the filesystem step `op` after its kill point.
pub(crate) fn step<T>(op: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
    reached()?;
    op()
}
