//! [`SlotId`]: what occupies an index slot (generation, class and engine).

use core::fmt;

use crate::core_class::CoreClass;
use crate::engine::Engine;
use crate::generation::Generation;

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
