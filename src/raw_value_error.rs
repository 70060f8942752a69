//! [`RawValueError`]: a raw C integer outside the vendor's domain for a type (`TryFrom`).

use core::fmt;

/// A raw C integer outside the vendor's domain for the type (`TryFrom`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RawValueError {
    what: &'static str,
    expected: &'static str,
    value: i64,
}

impl RawValueError {
    pub(crate) const fn new(what: &'static str, expected: &'static str, value: i64) -> Self {
        Self {
            what,
            expected,
            value,
        }
    }

    /// The rejected integer.
    pub const fn value(&self) -> i64 {
        self.value
    }

    /// What was being converted, e.g. `memory region`.
    pub const fn what(&self) -> &'static str {
        self.what
    }
}

impl fmt::Display for RawValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is not a valid {} (expected {})",
            self.value, self.what, self.expected
        )
    }
}

impl core::error::Error for RawValueError {}
