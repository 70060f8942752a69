//! The typed vocabulary of the resolvers: generations, classes, engines, regions, profiler
//! kinds, flavors and the flat image index.
//!
//! Every enum carries the vendor's integer as its discriminant, converts from the raw C integer
//! with a `const fn from_raw` that returns `None` outside the vendor's domain, and back with
//! `raw()`. The typed API built on these cannot express an out-of-range request; the raw API
//! accepts any integer and answers like the vendor.

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
    /// The vendor's spelling, `NX` or `Q7`.
    pub const fn name(self) -> &'static str {
        match self {
            CoreClass::Nx => "NX",
            CoreClass::Q7 => "Q7",
        }
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

/// Memory region of a firmware image: the `region` argument of `get_memory_image`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(i32)]
pub enum Region {
    /// Instruction RAM (0).
    Iram = 0,
    /// Data RAM (1).
    Dram = 1,
    /// Shared RAM (2).
    Sram = 2,
    /// External RAM (3).
    Extram = 3,
}

impl Region {
    /// All regions in argument order.
    pub const ALL: [Region; 4] = [Region::Iram, Region::Dram, Region::Sram, Region::Extram];

    /// The region for a raw argument, `None` outside `0..=3`.
    pub const fn from_raw(raw: i32) -> Option<Region> {
        match raw {
            0 => Some(Region::Iram),
            1 => Some(Region::Dram),
            2 => Some(Region::Sram),
            3 => Some(Region::Extram),
            _ => None,
        }
    }

    /// The raw argument.
    pub const fn raw(self) -> i32 {
        self as i32
    }

    /// The vendor's spelling, e.g. `EXTRAM`.
    pub const fn name(self) -> &'static str {
        match self {
            Region::Iram => "IRAM",
            Region::Dram => "DRAM",
            Region::Sram => "SRAM",
            Region::Extram => "EXTRAM",
        }
    }
}

/// Which profiler table: the `kind` argument of `get_hwdecode_table`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(i32)]
pub enum ProfKind {
    /// PROF_CAM (0): 64 × 16-byte opcode-match records, 1 KiB.
    Cam = 0,
    /// PROF_TABLE (1): 64 × 128-byte profiler descriptors, 8 KiB.
    Table = 1,
}

impl ProfKind {
    /// Both kinds in argument order.
    pub const ALL: [ProfKind; 2] = [ProfKind::Cam, ProfKind::Table];

    /// The kind for a raw argument, `None` outside `0..=1`.
    pub const fn from_raw(raw: i32) -> Option<ProfKind> {
        match raw {
            0 => Some(ProfKind::Cam),
            1 => Some(ProfKind::Table),
            _ => None,
        }
    }

    /// The raw argument.
    pub const fn raw(self) -> i32 {
        self as i32
    }

    /// The vendor's spelling, `CAM` or `TABLE`.
    pub const fn name(self) -> &'static str {
        match self {
            ProfKind::Cam => "CAM",
            ProfKind::Table => "TABLE",
        }
    }
}

/// A requested flavor (the `flavor` argument), or a descriptor's flavor key.
///
/// `Auto` (0) is resolved from `NEURON_UCODE_FLAVOR` and only ever yields PERF, DEBUG or TEST;
/// the dynamic-kernel-load keys are reachable only by asking for them explicitly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(i32)]
pub enum Flavor {
    /// 0: resolve from the environment.
    Auto = 0,
    /// 1: PERF (RELEASE in SUNDA).
    Perf = 1,
    /// 2: DEBUG.
    Debug = 2,
    /// 3: TEST.
    Test = 3,
    /// 17: dynamic-kernel-load PERF (Q7 POOL of CAYMAN, MARIANA, MARIANA_PLUS).
    DklPerf = 17,
    /// 18: dynamic-kernel-load DEBUG.
    DklDebug = 18,
    /// 19: dynamic-kernel-load TEST.
    DklTest = 19,
}

impl Flavor {
    /// Every flavor in argument order: `Auto`, then the six descriptor keys.
    pub const ALL: [Flavor; 7] = {
        let mut all = [Flavor::Auto; 7];
        let mut i = 0;
        while i < Flavor::KEYS.len() {
            all[i + 1] = Flavor::KEYS[i];
            i += 1;
        }
        all
    };

    /// The six descriptor keys (every flavor but `Auto`).
    pub const KEYS: [Flavor; 6] = [
        Flavor::Perf,
        Flavor::Debug,
        Flavor::Test,
        Flavor::DklPerf,
        Flavor::DklDebug,
        Flavor::DklTest,
    ];

    /// The flavor for a raw argument, `None` for integers the vendor knows no flavor for.
    pub const fn from_raw(raw: i32) -> Option<Flavor> {
        match raw {
            0 => Some(Flavor::Auto),
            1 => Some(Flavor::Perf),
            2 => Some(Flavor::Debug),
            3 => Some(Flavor::Test),
            17 => Some(Flavor::DklPerf),
            18 => Some(Flavor::DklDebug),
            19 => Some(Flavor::DklTest),
            _ => None,
        }
    }

    /// The raw argument.
    pub const fn raw(self) -> i32 {
        self as i32
    }

    /// The vendor's variant name in `generation` (`RELEASE` for SUNDA's PERF).
    pub const fn variant_name(self, generation: Generation) -> &'static str {
        match self {
            Flavor::Auto => "AUTO",
            Flavor::Perf if matches!(generation, Generation::Sunda) => "RELEASE",
            Flavor::Perf => "PERF",
            Flavor::Debug => "DEBUG",
            Flavor::Test => "TEST",
            Flavor::DklPerf => "DKL_PERF",
            Flavor::DklDebug => "DKL_DEBUG",
            Flavor::DklTest => "DKL_TEST",
        }
    }
}

/// Number of slots in the vendor's flat (generation, engine) index.
pub const SLOT_COUNT: usize = 38;

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
            pub const NAMES: [&'static str; SLOT_COUNT] = [$(stringify!($name)),*];
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
    /// Every index, 0 to 37, in table order.
    pub const ALL: [ImageIndex; SLOT_COUNT] = {
        let mut all = [ImageIndex(0); SLOT_COUNT];
        let mut i = 0;
        while i < SLOT_COUNT {
            all[i] = ImageIndex(i as u8);
            i += 1;
        }
        all
    };

    /// The index for a raw argument, `None` above 37.
    pub const fn from_raw(raw: u32) -> Option<ImageIndex> {
        if raw < SLOT_COUNT as u32 {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_conversions_round_trip_and_reject_the_rest() {
        for raw in -3..25 {
            if let Some(f) = Flavor::from_raw(raw) {
                assert_eq!(f.raw(), raw);
            } else {
                assert!(!(0..=3).contains(&raw) && !(17..=19).contains(&raw));
            }
            assert_eq!(
                Region::from_raw(raw).map(Region::raw),
                (0..=3).contains(&raw).then_some(raw)
            );
            assert_eq!(
                ProfKind::from_raw(raw).map(ProfKind::raw),
                (0..=1).contains(&raw).then_some(raw)
            );
        }
        assert_eq!(ImageIndex::from_raw(37), Some(ImageIndex::MAVERICK_Q7_POOL));
        assert_eq!(ImageIndex::from_raw(38), None);
        assert_eq!(ImageIndex::from_raw(u32::MAX), None);
        for (position, idx) in ImageIndex::ALL.iter().enumerate() {
            assert_eq!(idx.as_usize(), position);
            assert_eq!(ImageIndex::from_raw(idx.raw()), Some(*idx));
        }
    }
}
