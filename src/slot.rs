//! What occupies an index slot: its [`Generation`],
//! and [`SlotId`] (generation, class and engine) with its parts [`CoreClass`] (NX or Q7) and
//! [`Engine`] (ACT, DVE, POOL, PE, SP). The slot numbers themselves are `crate::image_index`'s.

use crate::names::name_and_raw_impls;
use core::fmt;

// [`Generation`]: the accelerator generation (which index slots it owns, `Generation::slots`,
// is `crate::image_index`'s: read at compile time from the generation of every slot).

/// Accelerator generation, in index order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Generation {
    /// SUNDA: one RELEASE flavor per engine, no profiler.
    Sunda,
    /// CAYMAN.
    Cayman,
    /// MARIANA.
    Mariana,
    /// MARIANA_PLUS.
    MarianaPlus,
    /// MAVERICK: no NX ACT engine (slot 36 is empty).
    Maverick,
}

impl Generation {
    /// All generations in index order.
    pub const ALL: [Generation; 5] = [
        Generation::Sunda,
        Generation::Cayman,
        Generation::Mariana,
        Generation::MarianaPlus,
        Generation::Maverick,
    ];

    /// The vendor's spelling, e.g. `MARIANA_PLUS`.
    pub const fn name(self) -> &'static str {
        match self {
            Generation::Sunda => "SUNDA",
            Generation::Cayman => "CAYMAN",
            Generation::Mariana => "MARIANA",
            Generation::MarianaPlus => "MARIANA_PLUS",
            Generation::Maverick => "MAVERICK",
        }
    }
}

name_and_raw_impls! {
    impl Display for Generation {}

    impl FromStr for Generation {
        /// `SUNDA`, `CAYMAN`, `MARIANA`, `MARIANA_PLUS` (or `mariana-plus`), `MAVERICK`.
        accepts names, else ParseError(
            "generation",
            "SUNDA, CAYMAN, MARIANA, MARIANA_PLUS or MAVERICK"
        );
    }
}

#[cfg(test)]
mod generation_tests {
    extern crate std;
    use std::string::ToString;

    use super::*;
    use crate::names::checks;

    #[test]
    fn names_parse_back_in_any_case_and_with_dashes() {
        checks::names_parse_back(&Generation::ALL);
        checks::rejects::<Generation>(&["0", "MARIANAPLUS"], "generation");
        assert_eq!(Generation::MarianaPlus.to_string(), "MARIANA_PLUS");
    }
}

// What occupies an index slot: [`SlotId`] (generation, class and engine) and its parts,
// [`CoreClass`] (NX or Q7) and [`Engine`] (ACT, DVE, POOL, PE, SP).

/// What occupies an index slot: generation, class and engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SlotId {
    /// Generation.
    pub generation: Generation,
    /// Core class.
    pub class: CoreClass,
    /// Engine.
    pub engine: Engine,
}

impl SlotId {
    /// A slot identity.
    pub const fn new(generation: Generation, class: CoreClass, engine: Engine) -> Self {
        Self {
            generation,
            class,
            engine,
        }
    }
}

impl fmt::Display for SlotId {
    /// `CAYMAN NX ACT`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {}",
            self.generation.name(),
            self.class.name(),
            self.engine.name()
        )
    }
}

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
mod engine_tests {
    use super::*;
    use crate::names::checks;

    #[test]
    fn names_parse_back_in_any_case() {
        checks::names_parse_back(&Engine::ALL);
        checks::rejects::<Engine>(&["0", "ACT2"], "engine");
    }
}

#[cfg(test)]
mod core_class_tests {
    use super::*;
    use crate::names::checks;

    #[test]
    fn names_parse_back() {
        checks::names_parse_back(&CoreClass::ALL);
        checks::rejects::<CoreClass>(&["Q8", "0"], "core class");
    }
}
