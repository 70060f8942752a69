//! [`ImageIndex`]: the flat (generation, engine) index 0..=37, the `idx` argument of both
//! resolvers: its named constants, raw conversions, names, and what occupies each slot (read
//! from [`IMAGE_LIST`], the one table).

use core::fmt;

// One circle is kept on purpose: this module reads `catalog::IMAGE_LIST` (what occupies each
// slot is the table's fact, not restated here), and `catalog` names and iterates its slots by
// `ImageIndex`. Breaking it would mean writing the slot identities a second time.

use crate::catalog::IMAGE_LIST;
use crate::core_class::CoreClass;
use crate::engine::Engine;
use crate::generation::Generation;
use crate::name_and_raw_impls::name_and_raw_impls;
use crate::slot_id::SlotId;

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

macro_rules! image_indices {
    ($($name:ident = $value:literal: $doc:literal,)*) => {
        impl ImageIndex {
            $(#[doc = $doc] pub const $name: ImageIndex = ImageIndex($value);)*

            /// The constants' names, in index order (`NAMES[7]` is `"CAYMAN_NX_ACT"`).
            pub const NAMES: [&'static str; ImageIndex::COUNT] = [$(stringify!($name)),*];
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

image_indices! {
    SUNDA_NX_ACT = 0: "SUNDA NX ACT (0).",
    SUNDA_NX_DVE = 1: "SUNDA NX DVE (1).",
    SUNDA_NX_POOL = 2: "SUNDA NX POOL (2).",
    SUNDA_NX_PE = 3: "SUNDA NX PE (3).",
    SUNDA_NX_SP = 4: "SUNDA NX SP (4).",
    SUNDA_NX_SP_TWIN = 5: "SUNDA NX SP, second slot (5): the same images as 4.",
    SUNDA_Q7_POOL = 6: "SUNDA Q7 POOL (6).",
    CAYMAN_NX_ACT = 7: "CAYMAN NX ACT (7).",
    CAYMAN_NX_DVE = 8: "CAYMAN NX DVE (8).",
    CAYMAN_NX_POOL = 9: "CAYMAN NX POOL (9).",
    CAYMAN_NX_PE = 10: "CAYMAN NX PE (10).",
    CAYMAN_NX_SP = 11: "CAYMAN NX SP (11).",
    CAYMAN_NX_SP_TWIN = 12: "CAYMAN NX SP, second slot (12): the same images as 11.",
    CAYMAN_Q7_POOL = 13: "CAYMAN Q7 POOL (13), with the dynamic-kernel-load flavors.",
    CAYMAN_Q7_POOL_TWIN = 14: "CAYMAN Q7 POOL, second slot (14): PERF/DEBUG/TEST of 13.",
    MARIANA_NX_ACT = 15: "MARIANA NX ACT (15).",
    MARIANA_NX_DVE = 16: "MARIANA NX DVE (16).",
    MARIANA_NX_POOL = 17: "MARIANA NX POOL (17).",
    MARIANA_NX_PE = 18: "MARIANA NX PE (18).",
    MARIANA_NX_SP = 19: "MARIANA NX SP (19).",
    MARIANA_NX_SP_TWIN = 20: "MARIANA NX SP, second slot (20): the same images as 19.",
    MARIANA_Q7_POOL = 21: "MARIANA Q7 POOL (21), with the dynamic-kernel-load flavors.",
    MARIANA_Q7_POOL_TWIN = 22: "MARIANA Q7 POOL, second slot (22): PERF/DEBUG/TEST of 21.",
    MARIANA_PLUS_NX_ACT = 23: "MARIANA_PLUS NX ACT (23).",
    MARIANA_PLUS_NX_DVE = 24: "MARIANA_PLUS NX DVE (24).",
    MARIANA_PLUS_NX_POOL = 25: "MARIANA_PLUS NX POOL (25).",
    MARIANA_PLUS_NX_PE = 26: "MARIANA_PLUS NX PE (26).",
    MARIANA_PLUS_NX_SP = 27: "MARIANA_PLUS NX SP (27).",
    MARIANA_PLUS_NX_SP_TWIN = 28: "MARIANA_PLUS NX SP, second slot (28): the same images as 27.",
    MARIANA_PLUS_Q7_POOL = 29: "MARIANA_PLUS Q7 POOL (29), with the dynamic-kernel-load flavors.",
    MARIANA_PLUS_Q7_POOL_TWIN = 30: "MARIANA_PLUS Q7 POOL, second slot (30): PERF/DEBUG/TEST of 29.",
    MAVERICK_NX_DVE = 31: "MAVERICK NX DVE (31).",
    MAVERICK_NX_POOL = 32: "MAVERICK NX POOL (32).",
    MAVERICK_NX_PE = 33: "MAVERICK NX PE (33).",
    MAVERICK_NX_SP = 34: "MAVERICK NX SP (34).",
    MAVERICK_NX_SP_TWIN = 35: "MAVERICK NX SP, second slot (35): the same images as 34.",
    MAVERICK_GAP = 36: "The empty slot (36) MAVERICK's missing NX ACT leaves: every lookup answers code 2.",
    MAVERICK_Q7_POOL = 37: "MAVERICK Q7 POOL (37).",
}

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

    /// The twin slots, `(first, second)`: each NX SP engine occupies two consecutive slots whose
    /// second holds the same descriptors as the first, so both answer every request with the
    /// same bytes at the same address.
    pub const TWINS: [(ImageIndex, ImageIndex); 5] = [
        (ImageIndex::SUNDA_NX_SP, ImageIndex::SUNDA_NX_SP_TWIN),
        (ImageIndex::CAYMAN_NX_SP, ImageIndex::CAYMAN_NX_SP_TWIN),
        (ImageIndex::MARIANA_NX_SP, ImageIndex::MARIANA_NX_SP_TWIN),
        (
            ImageIndex::MARIANA_PLUS_NX_SP,
            ImageIndex::MARIANA_PLUS_NX_SP_TWIN,
        ),
        (ImageIndex::MAVERICK_NX_SP, ImageIndex::MAVERICK_NX_SP_TWIN),
    ];

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
        IMAGE_LIST[self.as_usize()].id()
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

// A twin holds the same descriptors as its first slot (the bytes alias; tested at run time).
const _: () = {
    let mut t = 0;
    while t < ImageIndex::TWINS.len() {
        let (a, b) = ImageIndex::TWINS[t];
        assert!(b.as_usize() == a.as_usize() + 1);
        let (da, db) = (
            IMAGE_LIST[a.as_usize()].descriptors(),
            IMAGE_LIST[b.as_usize()].descriptors(),
        );
        assert!(da.len() == db.len());
        let mut d = 0;
        while d < da.len() {
            assert!(da[d].flavor() as i32 == db[d].flavor() as i32);
            d += 1;
        }
        t += 1;
    }
};

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

// The generation of each slot lives here, in the index space's module, not in `generation`:
// `Generation` is a plain enum that knows nothing of slots (no import circle).
/// The generation of every slot, read from the table: a populated slot's own, the empty slot
/// its predecessor's (MAVERICK's missing NX ACT).
pub(crate) const SLOT_GENERATIONS: [Generation; ImageIndex::COUNT] = {
    let mut generations = [Generation::Sunda; ImageIndex::COUNT];
    let mut i = 0;
    while i < ImageIndex::COUNT {
        generations[i] = match IMAGE_LIST[i].id() {
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
    use crate::name_and_raw_impls::checks;

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
}
