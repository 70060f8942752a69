//! [`CoreClass`]: the core class of an engine, NX or Q7.

use core::fmt;
use core::str::FromStr;

use crate::parse_error::{ParseError, spells};

/// Core class of an engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum CoreClass {
    /// The NX sequencer cores.
    Nx,
    /// The Q7 cores (POOL only).
    Q7,
}

impl CoreClass {
    /// Both classes.
    pub const ALL: [CoreClass; 2] = [CoreClass::Nx, CoreClass::Q7];

    /// The vendor's spelling, `NX` or `Q7`.
    pub const fn name(self) -> &'static str {
        match self {
            CoreClass::Nx => "NX",
            CoreClass::Q7 => "Q7",
        }
    }
}

impl fmt::Display for CoreClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for CoreClass {
    type Err = ParseError;

    /// `NX` or `Q7`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CoreClass::ALL
            .into_iter()
            .find(|c| spells(s, c.name()))
            .ok_or(ParseError::new("core class", "NX or Q7"))
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::ToString;

    use super::*;

    #[test]
    fn names_parse_back() {
        for c in CoreClass::ALL {
            assert_eq!(c.to_string().parse(), Ok(c));
            assert_eq!(c.name().to_ascii_lowercase().parse(), Ok(c));
        }
        assert!("Q8".parse::<CoreClass>().is_err());
    }
}
