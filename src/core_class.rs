//! [`CoreClass`]: the core class of an engine, NX or Q7.

use crate::name_and_raw_impls::name_and_raw_impls;

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

name_and_raw_impls! {
    impl Display for CoreClass {}

    impl FromStr for CoreClass {
        /// `NX` or `Q7`.
        accepts names, else ParseError("core class", "NX or Q7");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::name_and_raw_impls::checks;

    #[test]
    fn names_parse_back() {
        checks::names_parse_back(&CoreClass::ALL);
        checks::rejects::<CoreClass>(&["Q8", "0"], "core class");
    }
}
