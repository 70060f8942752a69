//! [`ParseError`]: a name that `FromStr` did not recognise, and the spelling rules every type's
//! `FromStr` shares.
//!
//! Every type's `FromStr` accepts its canonical name in any ASCII case with `-` and `_`
//! interchangeable (`mariana-plus`), the aliases the vendor uses (`RELEASE` for PERF,
//! `PROF_CAM` for CAM), and, for the types that are C arguments, the integers the vendor gives
//! a meaning to (`0`..`3` for a region, `17` for DKL_PERF).

use core::fmt;
use core::str::FromStr;

/// A name that `FromStr` did not recognise.
///
/// The message lists what is accepted: `unknown memory region (expected IRAM, DRAM, SRAM,
/// EXTRAM or 0..=3)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ParseError {
    what: &'static str,
    expected: &'static str,
}

impl ParseError {
    pub(crate) const fn new(what: &'static str, expected: &'static str) -> Self {
        Self { what, expected }
    }

    /// What was being parsed, e.g. `memory region`.
    pub const fn what(&self) -> &'static str {
        self.what
    }

    /// The accepted spellings, e.g. `IRAM, DRAM, SRAM, EXTRAM or 0..=3`.
    pub const fn expected(&self) -> &'static str {
        self.expected
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown {} (expected {})", self.what, self.expected)
    }
}

impl core::error::Error for ParseError {}

/// `true` when `input` spells `name`: ASCII case ignored, `-` and `_` interchangeable.
pub(crate) const fn spells(input: &str, name: &str) -> bool {
    let (a, b) = (input.as_bytes(), name.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if fold(a[i]) != fold(b[i]) {
            return false;
        }
        i += 1;
    }
    true
}

const fn fold(byte: u8) -> u8 {
    match byte {
        b'-' => b'_',
        other => other.to_ascii_uppercase(),
    }
}

/// `input` as a decimal integer of the C argument's type, `None` otherwise.
pub(crate) fn integer<T: FromStr>(input: &str) -> Option<T> {
    input.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::spells;

    #[test]
    fn spelling_ignores_case_and_dash_versus_underscore_only() {
        assert!(spells("mariana-plus", "MARIANA_PLUS"));
        assert!(spells("Dkl_Perf", "DKL_PERF"));
        assert!(!spells("MARIANAPLUS", "MARIANA_PLUS"));
        assert!(!spells(" IRAM", "IRAM"));
    }
}
