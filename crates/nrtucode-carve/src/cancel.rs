//! The caller's way to stop a carve under way, without the library keeping any process state:
//! a token the caller owns (a `static` in the `nrtucode` tool, set by its signal thread) and
//! passes in; the library only reads it, between steps.

use std::sync::atomic::{AtomicBool, Ordering};

/// Asks a carve under way to stop: set from any thread (a signal handler's, say), it is
/// checked before each file is written and before the publication starts (see
/// [`carve_into_dir_cancellable`](crate::carve_into_dir_cancellable)). A carve that sees it
/// removes its staging directory and fails with [`PublishError::Cancelled`](crate::PublishError::Cancelled); one whose
/// publication has started finishes it. It can be a `static`: [`Cancel::new`] is `const`.
#[derive(Debug, Default)]
pub struct Cancel {
    requested: AtomicBool,
}

impl Cancel {
    /// A token not yet set.
    pub const fn new() -> Self {
        Self {
            requested: AtomicBool::new(false),
        }
    }

    /// Asks every carve using this token to stop (it stays set).
    pub fn cancel(&self) {
        self.requested.store(true, Ordering::SeqCst);
    }

    /// `true` once [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.requested.load(Ordering::SeqCst)
    }
}
