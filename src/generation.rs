//! [`Generation`]: the accelerator generation. Which index slots it owns
//! ([`Generation::slots`](crate::Generation::slots), [`ImageIndex::generation`](crate::ImageIndex::generation))
//! is read from the one table, `IMAGE_LIST`, at compile time, in `image_index`.

use crate::name_and_raw_impls::name_and_raw_impls;

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
mod tests {
    extern crate std;
    use std::string::ToString;

    use super::*;
    use crate::ImageIndex;
    use crate::name_and_raw_impls::checks;

    #[test]
    fn names_parse_back_in_any_case_and_with_dashes() {
        checks::names_parse_back(&Generation::ALL);
        checks::rejects::<Generation>(&["0", "MARIANAPLUS"], "generation");
        assert_eq!(Generation::MarianaPlus.to_string(), "MARIANA_PLUS");
    }

    #[test]
    fn generations_partition_the_index_space() {
        let mut seen = 0;
        for g in Generation::ALL {
            for idx in g.slots() {
                assert_eq!(idx.as_usize(), seen, "{g:?}");
                assert_eq!(idx.generation(), g);
                seen += 1;
            }
        }
        assert_eq!(seen, ImageIndex::COUNT);
        assert_eq!(Generation::Sunda.slots().len(), 7);
        assert_eq!(Generation::Maverick.slots().len(), 7);
        assert_eq!(ImageIndex::MAVERICK_GAP.generation(), Generation::Maverick);
    }
}
