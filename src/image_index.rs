//! [`ImageIndex`]: the flat (generation, engine) index 0..=37, the `idx` argument of both
//! resolvers: its named constants, raw conversions, names, and what occupies each slot. The
//! constants, their names and occupants and the twin pairs are generated from the fact tables
//! (`generated.rs`, written by `crates/nrtucode-codegen`) with the catalog's tables; this module does not
//! read the catalog (the catalog checks at compile time that its slots are these).

use core::fmt;

use crate::names::name_and_raw_impls;
use crate::slot::Generation;
use crate::slot::{CoreClass, Engine, SlotId};

/// A valid flat (generation, engine) index, `0..=37`: the `idx` argument of both resolvers.
///
/// It is not a coretype. Per generation the order is NX ACT, DVE, POOL, PE, SP, SP (the same
/// SP images twice), then Q7 POOL; CAYMAN, MARIANA and MARIANA_PLUS add a second Q7 POOL slot
/// without the dynamic-kernel-load flavors; MAVERICK has no NX ACT, which leaves slot 36 empty.
///
/// `Debug` names the slot (`ImageIndex(7: CAYMAN NX ACT)`), `Display` prints the constant's
/// name (`CAYMAN_NX_ACT`), and `FromStr` takes either that name or the integer.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ImageIndex(u8);

/// Turns the generated list (`generated.rs`) into the named constants, [`ImageIndex::NAMES`]
/// and the slot identities [`ImageIndex::slot`] reads.
macro_rules! image_indices {
    ($(#[doc = $doc:literal] $name:ident = $value:literal => $slot:expr;)*) => {
        impl ImageIndex {
            $(#[doc = $doc] pub const $name: ImageIndex = ImageIndex($value);)*

            /// The constants' names, in index order (`NAMES[7]` is `"CAYMAN_NX_ACT"`).
            pub const NAMES: [&'static str; ImageIndex::COUNT] = [$(stringify!($name)),*];

            /// What occupies each slot, in index order (`None`: the empty slot).
            pub(crate) const SLOT_IDS: [Option<SlotId>; ImageIndex::COUNT] = [$($slot),*];
        }

        // The names are listed in index order, so `NAMES[i]` names index `i`.
        const _: () = {
            let values = [$($value),*];
            let mut i = 0;
            while i < values.len() {
                assert!(values[i] == i);
                i += 1;
            }
        };
    };
}
use image_indices;

#[rustfmt::skip] // generated: `cargo run -p nrtucode-codegen` writes it, CI checks it
mod generated;

impl ImageIndex {
    /// Number of slots in the vendor's flat index (both tables have this many).
    pub const COUNT: usize = 38;

    /// Every index, 0 to 37, in table order.
    pub const ALL: [ImageIndex; ImageIndex::COUNT] = {
        let mut all = [ImageIndex(0); ImageIndex::COUNT];
        let mut i = 0;
        while i < ImageIndex::COUNT {
            all[i] = ImageIndex(i as u8);
            i += 1;
        }
        all
    };

    /// The index for a raw argument, `None` above 37.
    pub const fn from_raw(raw: u32) -> Option<ImageIndex> {
        if raw < ImageIndex::COUNT as u32 {
            Some(ImageIndex(raw as u8))
        } else {
            None
        }
    }

    /// The raw argument.
    pub const fn raw(self) -> u32 {
        self.0 as u32
    }

    /// The index as a table position.
    pub const fn as_usize(self) -> usize {
        self.0 as usize
    }

    /// The constant's name, e.g. `CAYMAN_NX_ACT`, `CAYMAN_NX_SP_TWIN`, `MAVERICK_GAP`.
    pub const fn name(self) -> &'static str {
        ImageIndex::NAMES[self.as_usize()]
    }

    /// What occupies the slot: `None` only for [`ImageIndex::MAVERICK_GAP`] (36).
    ///
    /// ```
    /// use nrtucode::{CoreClass, Engine, Generation, ImageIndex, SlotId};
    /// const ID: Option<SlotId> = ImageIndex::CAYMAN_NX_ACT.slot();
    /// assert_eq!(ID, Some(SlotId::new(Generation::Cayman, CoreClass::Nx, Engine::Act)));
    /// assert_eq!(ImageIndex::MAVERICK_GAP.slot(), None);
    /// ```
    pub const fn slot(self) -> Option<SlotId> {
        ImageIndex::SLOT_IDS[self.as_usize()]
    }

    /// The generation whose range holds the index (36, the empty slot, is MAVERICK's).
    pub const fn generation(self) -> Generation {
        SLOT_GENERATIONS[self.as_usize()]
    }

    /// The core class, `None` for the empty slot.
    pub const fn class(self) -> Option<CoreClass> {
        match self.slot() {
            Some(id) => Some(id.class),
            None => None,
        }
    }

    /// The engine, `None` for the empty slot.
    pub const fn engine(self) -> Option<Engine> {
        match self.slot() {
            Some(id) => Some(id.engine),
            None => None,
        }
    }
}

impl fmt::Debug for ImageIndex {
    /// `ImageIndex(7: CAYMAN NX ACT)`, `ImageIndex(36: MAVERICK, empty)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.slot() {
            Some(id) => write!(f, "ImageIndex({}: {id})", self.raw()),
            None => write!(
                f,
                "ImageIndex({}: {}, empty)",
                self.raw(),
                self.generation().name()
            ),
        }
    }
}

name_and_raw_impls! {
    impl Display for ImageIndex {
        /// The constant's name, e.g. `CAYMAN_NX_ACT`.
    }

    impl FromStr for ImageIndex {
        /// `0`..`37`, or the name of the constant (`CAYMAN_NX_ACT`, `cayman-nx-act`).
        accepts integers and names, else ParseError(
            "image index",
            "0..=37 or a slot name such as CAYMAN_NX_ACT"
        );
    }

    impl TryFrom<u32> for ImageIndex {
        /// The index for a raw C integer; anything above 37 is an error.
        else RawValueError("image index", "0..=37");
    }

    impl From<ImageIndex> for u32 {
        /// The raw C argument of an image index.
    }
}

/// The generation of every slot, read from the table: a populated slot's own, the empty slot
/// its predecessor's (MAVERICK's missing NX ACT).
pub(crate) const SLOT_GENERATIONS: [Generation; ImageIndex::COUNT] = {
    let mut generations = [Generation::Sunda; ImageIndex::COUNT];
    let mut i = 0;
    while i < ImageIndex::COUNT {
        generations[i] = match ImageIndex::SLOT_IDS[i] {
            Some(id) => id.generation,
            None => {
                assert!(i > 0, "slot 0 is populated");
                generations[i - 1]
            }
        };
        i += 1;
    }
    generations
};

// Which index slots a generation owns, from the generation of every slot (the generated
// table): here, with the slot numbers, so that `crate::slot` needs nothing of this module.
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
    use std::format;
    use std::string::ToString;

    use super::*;
    use crate::names::checks;

    #[test]
    fn raw_conversions_round_trip_and_reject_the_rest() {
        checks::raw_conversions_round_trip(
            (0..50).chain([u32::MAX]),
            ImageIndex::from_raw,
            |raw| raw < 38,
        );
        assert_eq!(ImageIndex::from_raw(37), Some(ImageIndex::MAVERICK_Q7_POOL));
        for (position, idx) in ImageIndex::ALL.iter().enumerate() {
            assert_eq!(idx.as_usize(), position);
        }
        assert_eq!(u32::from(ImageIndex::CAYMAN_NX_ACT), 7);
    }

    #[test]
    fn names_and_integers_parse_back() {
        checks::names_parse_back(&ImageIndex::ALL);
        assert_eq!(
            "cayman_nx_sp_twin".parse(),
            Ok(ImageIndex::CAYMAN_NX_SP_TWIN)
        );
        assert_eq!(ImageIndex::MAVERICK_GAP.to_string(), "MAVERICK_GAP");
        checks::rejects::<ImageIndex>(&["38", "-1", "CAYMAN"], "image index");
    }

    #[test]
    fn debug_names_the_slot() {
        assert_eq!(
            format!("{:?}", ImageIndex::CAYMAN_NX_ACT),
            "ImageIndex(7: CAYMAN NX ACT)"
        );
        assert_eq!(
            format!("{:?}", ImageIndex::MAVERICK_GAP),
            "ImageIndex(36: MAVERICK, empty)"
        );
        assert_eq!(
            format!("{:?}", Some(ImageIndex::MARIANA_PLUS_Q7_POOL_TWIN)),
            "Some(ImageIndex(30: MARIANA_PLUS Q7 POOL))"
        );
    }

    #[test]
    fn accessors_agree_with_the_table_and_the_constant_names() {
        for idx in ImageIndex::ALL {
            match idx.slot() {
                Some(id) => {
                    assert_eq!(idx.class(), Some(id.class));
                    assert_eq!(idx.engine(), Some(id.engine));
                    let spelled = format!("{}_{}_{}", id.generation, id.class, id.engine);
                    assert!(idx.name().starts_with(&spelled), "{idx:?}");
                }
                None => {
                    assert_eq!(idx, ImageIndex::MAVERICK_GAP);
                    assert_eq!((idx.class(), idx.engine()), (None, None));
                }
            }
        }
        assert_eq!(ImageIndex::MARIANA_NX_PE.engine(), Some(Engine::Pe));
        assert_eq!(ImageIndex::SUNDA_Q7_POOL.class(), Some(CoreClass::Q7));
    }

    #[test]
    fn twins_are_the_sp_slots_named_twin() {
        for (first, twin) in ImageIndex::TWINS {
            assert_eq!(twin.name(), format!("{}_TWIN", first.name()));
            assert_eq!(first.engine(), Some(Engine::Sp));
            assert_eq!(first.slot(), twin.slot());
        }
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
