//! The tool's one error type: why a command failed, as a kind that is its exit code
//! ([`Exit`]: 64 usage, 65 bad data, 66 no input, 73 cannot create, 74 I/O), the message the
//! user reads (`path: what is wrong`), and the error underneath, when there is one (an
//! [`std::io::Error`], a partition's refusal), for [`std::error::Error::source`].
//!
//! Every command returns it; [`Mode::fail`](crate::shared::output::Mode::fail) prints it
//! (and, under `--json`, its JSON object) and exits with its kind's code.

use std::fmt;
use std::path::Path;

use crate::shared::exit::{self, Exit};

/// Why a command failed.
#[derive(Debug)]
pub(crate) struct Error {
    kind: Exit,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl Error {
    /// A failure of kind `kind` said as `message`.
    pub(crate) fn new(kind: Exit, message: impl fmt::Display) -> Self {
        Error {
            kind,
            message: message.to_string(),
            source: None,
        }
    }

    /// `path: error`, reading an input: 66 when it is missing or unreadable, 74 otherwise.
    pub(crate) fn reading(path: &Path, error: std::io::Error) -> Self {
        Error::new(
            exit::reading(&error),
            format_args!("{}: {error}", path.display()),
        )
        .caused_by(error)
    }

    /// `path: error`, bad data (65), with the error as its source.
    pub(crate) fn refused<E>(path: &Path, error: E) -> Self
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        Error::new(Exit::DataErr, format_args!("{}: {error}", path.display())).caused_by(error)
    }

    /// `path: message`, bad data (65), for a refusal that is text (no typed error under it).
    pub(crate) fn bad_data(path: &Path, message: impl fmt::Display) -> Self {
        Error::new(Exit::DataErr, format_args!("{}: {message}", path.display()))
    }

    /// The same failure, with `source` as the error underneath.
    pub(crate) fn caused_by(
        mut self,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    /// Its kind: the exit code.
    pub(crate) fn kind(&self) -> Exit {
        self.kind
    }

    /// The same kind and source, the message rewritten by `f` (a hint added, say).
    pub(crate) fn map_message(mut self, f: impl FnOnce(String) -> String) -> Self {
        self.message = f(self.message);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_is_the_exit_code_and_the_source_is_kept() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let e = Error::reading(Path::new("a.part"), io);
        assert_eq!(e.kind(), Exit::NoInput);
        assert_eq!(e.to_string(), "a.part: gone");
        assert!(std::error::Error::source(&e).is_some());
        let e = Error::new(Exit::Usage, "bad").map_message(|m| format!("{m}; hint"));
        assert_eq!(
            (e.kind(), e.to_string().as_str()),
            (Exit::Usage, "bad; hint")
        );
        assert!(std::error::Error::source(&e).is_none());
    }
}
