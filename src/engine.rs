//! [`Engine`]: the engine of a core (ACT, DVE, POOL, PE, SP).

use crate::name_and_raw_impls::name_and_raw_impls;

/// Engine of a core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Engine {
    /// Activation engine.
    Act,
    /// Vector engine.
    Dve,
    /// Pool engine.
    Pool,
    /// Processing-element array.
    Pe,
    /// SP engine.
    Sp,
}

impl Engine {
    /// All engines, in slot order.
    pub const ALL: [Engine; 5] = [
        Engine::Act,
        Engine::Dve,
        Engine::Pool,
        Engine::Pe,
        Engine::Sp,
    ];

    /// The vendor's spelling, e.g. `POOL`.
    pub const fn name(self) -> &'static str {
        match self {
            Engine::Act => "ACT",
            Engine::Dve => "DVE",
            Engine::Pool => "POOL",
            Engine::Pe => "PE",
            Engine::Sp => "SP",
        }
    }
}

name_and_raw_impls! {
    impl Display for Engine {}

    impl FromStr for Engine {
        /// `ACT`, `DVE`, `POOL`, `PE` or `SP`.
        accepts names, else ParseError("engine", "ACT, DVE, POOL, PE or SP");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::name_and_raw_impls::checks;

    #[test]
    fn names_parse_back_in_any_case() {
        checks::names_parse_back(&Engine::ALL);
        checks::rejects::<Engine>(&["0", "ACT2"], "engine");
    }
}
