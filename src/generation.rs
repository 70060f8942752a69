//! [`Generation`]: the accelerator generation, and which index slots it owns
//! ([`Generation::slots`]), read at compile time from the generation of every slot that
//! `image_index` reads from the one table ([`ImageIndex::generation`]).

use crate::image_index::{ImageIndex, SLOT_GENERATIONS};
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

impl Generation {
    /// The generation's slots, in index order (MAVERICK's include the empty 36).
    ///
    /// ```
    /// use nrtucode::{Generation, ImageIndex};
    /// const CAYMAN: &[ImageIndex] = Generation::Cayman.slots();
    /// assert_eq!(CAYMAN.first(), Some(&ImageIndex::CAYMAN_NX_ACT));
    /// assert_eq!(CAYMAN.len(), 8);
    /// ```
    pub const fn slots(self) -> &'static [ImageIndex] {
        let g = self as usize;
        let (start, end) = (GENERATION_STARTS[g], GENERATION_STARTS[g + 1]);
        let all: &'static [ImageIndex; ImageIndex::COUNT] = &ImageIndex::ALL;
        let (_, from_start) = all.split_at(start);
        from_start.split_at(end - start).0
    }
}

/// The first slot of each generation, in [`Generation::ALL`] order, then the end; derived
/// from [`SLOT_GENERATIONS`], which must list each generation in one run, in order.
const GENERATION_STARTS: [usize; Generation::ALL.len() + 1] = {
    let mut starts = [ImageIndex::COUNT; Generation::ALL.len() + 1];
    starts[0] = 0;
    let mut i = 1;
    while i < ImageIndex::COUNT {
        let (before, here) = (
            SLOT_GENERATIONS[i - 1] as usize,
            SLOT_GENERATIONS[i] as usize,
        );
        assert!(
            here == before || here == before + 1,
            "generations run in order"
        );
        if here != before {
            starts[here] = i;
        }
        i += 1;
    }
    assert!(SLOT_GENERATIONS[ImageIndex::COUNT - 1] as usize == Generation::ALL.len() - 1);
    let mut g = 0;
    while g < Generation::ALL.len() {
        assert!(Generation::ALL[g] as usize == g);
        g += 1;
    }
    starts
};

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::ToString;

    use super::*;
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
