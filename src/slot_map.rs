//! What each flat index names: an [`ImageIndex`]'s generation, class and engine, and the slots
//! of a [`Generation`], all `const` and read from the one table, [`IMAGE_LIST`].

use core::fmt;

use crate::catalog::IMAGE_LIST;
use crate::model::{CoreClass, Engine, Generation, ImageIndex, SLOT_COUNT, SlotId};

/// The first index of each generation, in [`Generation::ALL`] order, then the end.
const GENERATION_STARTS: [usize; 6] = [0, 7, 15, 23, 31, SLOT_COUNT];

impl ImageIndex {
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
        let idx = self.as_usize();
        let mut g = 0;
        while g + 1 < Generation::ALL.len() && idx >= GENERATION_STARTS[g + 1] {
            g += 1;
        }
        Generation::ALL[g]
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
        let all: &'static [ImageIndex; SLOT_COUNT] = &ImageIndex::ALL;
        let (_, from_start) = all.split_at(start);
        from_start.split_at(end - start).0
    }
}

// The ranges agree with the identities the table records.
const _: () = {
    let mut i = 0;
    while i < SLOT_COUNT {
        let idx = ImageIndex::ALL[i];
        if let Some(id) = idx.slot() {
            assert!(id.generation as usize == idx.generation() as usize);
        }
        i += 1;
    }
    let mut g = 0;
    while g < Generation::ALL.len() {
        assert!(Generation::ALL[g] as usize == g);
        g += 1;
    }
};

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

#[cfg(test)]
mod tests {
    extern crate std;
    use std::format;

    use super::*;

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
    fn generations_partition_the_index_space() {
        let mut seen = 0;
        for g in Generation::ALL {
            for idx in g.slots() {
                assert_eq!(idx.raw() as usize, seen, "{g:?}");
                assert_eq!(idx.generation(), g);
                seen += 1;
            }
        }
        assert_eq!(seen, SLOT_COUNT);
        assert_eq!(Generation::Sunda.slots().len(), 7);
        assert_eq!(Generation::Maverick.slots().len(), 7);
    }

    #[test]
    fn accessors_agree_with_the_table_and_the_constant_names() {
        for idx in ImageIndex::ALL {
            match idx.slot() {
                Some(id) => {
                    assert_eq!(idx.class(), Some(id.class));
                    assert_eq!(idx.engine(), Some(id.engine));
                    // The constant's name starts with the slot's names.
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
}
