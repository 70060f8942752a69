//! The resolvers' C arguments as types: [`Region`] (the `region` argument of
//! `get_memory_image`), [`ProfKind`] (the `kind` argument of `get_hwdecode_table`) and
//! [`Flavor`] (the `flavor` argument, or a descriptor's flavor key); each with the names,
//! raw integers and conversions `crate::names` gives every value type.

use crate::names::name_and_raw_impls;
use crate::slot::Generation;

// [`Region`]: the memory region of a firmware image, the `region` argument of
// `get_memory_image`.

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

name_and_raw_impls! {
    impl Display for Region {}

    impl FromStr for Region {
        /// `IRAM`, `DRAM`, `SRAM`, `EXTRAM` or `0`..`3`.
        accepts integers and names, else ParseError(
            "memory region",
            "IRAM, DRAM, SRAM, EXTRAM or 0..=3"
        );
    }

    impl TryFrom<i32> for Region {
        /// The region for a raw C integer; anything outside `0..=3` is an error.
        else RawValueError("memory region", "0..=3");
    }

    impl From<Region> for i32 {
        /// The raw C argument of a region.
    }
}

#[cfg(test)]
mod region_tests {
    extern crate std;
    use std::string::ToString;

    use super::*;
    use crate::names::checks;

    #[test]
    fn raw_conversions_round_trip_and_reject_the_rest() {
        checks::raw_conversions_round_trip(-5..40, Region::from_raw, |raw| (0..=3).contains(&raw));
    }

    #[test]
    fn names_and_integers_parse_nothing_else() {
        checks::names_parse_back(&Region::ALL);
        checks::rejects::<Region>(
            &["4", "-1", "", " iram", "iram ", "RAM", "99999999999"],
            "memory region",
        );
        assert_eq!(
            "dram2".parse::<Region>().unwrap_err().to_string(),
            "unknown memory region (expected IRAM, DRAM, SRAM, EXTRAM or 0..=3)"
        );
        assert_eq!(std::format!("{:<6}|", Region::Iram), "IRAM  |");
    }
}

// [`ProfKind`]: which profiler table, the `kind` argument of `get_hwdecode_table`.

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

    /// Alternative spellings `FromStr` accepts besides [`name`](ProfKind::name): the vendor's
    /// `PROF_CAM` and `PROF_TABLE`.
    pub const fn aliases(self) -> &'static [&'static str] {
        match self {
            ProfKind::Cam => &["PROF_CAM"],
            ProfKind::Table => &["PROF_TABLE"],
        }
    }
}

name_and_raw_impls! {
    impl Display for ProfKind {}

    impl FromStr for ProfKind {
        /// `CAM` (or `PROF_CAM`), `TABLE` (or `PROF_TABLE`), `0` or `1`.
        accepts integers, names and aliases, else ParseError(
            "profiler table kind",
            "CAM (PROF_CAM), TABLE (PROF_TABLE) or 0, 1"
        );
    }

    impl TryFrom<i32> for ProfKind {
        /// The kind for a raw C integer; anything outside `0..=1` is an error.
        else RawValueError("profiler table kind", "0 or 1");
    }

    impl From<ProfKind> for i32 {
        /// The raw C argument of a profiler table kind.
    }
}

#[cfg(test)]
mod prof_kind_tests {
    use super::*;
    use crate::names::checks;

    #[test]
    fn raw_conversions_round_trip_and_reject_the_rest() {
        checks::raw_conversions_round_trip(-5..40, ProfKind::from_raw, |raw| {
            (0..=1).contains(&raw)
        });
    }

    #[test]
    fn names_aliases_and_integers_parse() {
        checks::names_parse_back(&ProfKind::ALL);
        assert_eq!("prof_table".parse(), Ok(ProfKind::Table));
        assert_eq!("PROF_CAM".parse(), Ok(ProfKind::Cam));
        checks::rejects::<ProfKind>(&["2", "PROF", "prof_"], "profiler table kind");
    }
}

// [`Flavor`]: the `flavor` argument of `get_memory_image`, or a descriptor's flavor key.

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

    /// The canonical name: `AUTO`, `PERF`, `DEBUG`, `TEST`, `DKL_PERF`, `DKL_DEBUG`, `DKL_TEST`.
    ///
    /// [`variant_name`](Flavor::variant_name) gives SUNDA's `RELEASE` instead of `PERF`.
    pub const fn name(self) -> &'static str {
        match self {
            Flavor::Auto => "AUTO",
            Flavor::Perf => "PERF",
            Flavor::Debug => "DEBUG",
            Flavor::Test => "TEST",
            Flavor::DklPerf => "DKL_PERF",
            Flavor::DklDebug => "DKL_DEBUG",
            Flavor::DklTest => "DKL_TEST",
        }
    }

    /// The vendor's variant name in `generation`: the [`name`](Flavor::name), except
    /// `RELEASE` for SUNDA's PERF.
    pub const fn variant_name(self, generation: Generation) -> &'static str {
        match (self, generation) {
            (Flavor::Perf, Generation::Sunda) => "RELEASE",
            _ => self.name(),
        }
    }

    /// Alternative spellings `FromStr` accepts besides [`name`](Flavor::name): `RELEASE` for
    /// PERF (SUNDA's name for it).
    pub const fn aliases(self) -> &'static [&'static str] {
        match self {
            Flavor::Perf => &["RELEASE"],
            _ => &[],
        }
    }
}

name_and_raw_impls! {
    impl Display for Flavor {}

    impl FromStr for Flavor {
        /// `AUTO`, `PERF` (or `RELEASE`), `DEBUG`, `TEST`, `DKL_PERF`, `DKL_DEBUG`, `DKL_TEST`
        /// (`dkl-perf` too), or the integers `0`, `1`, `2`, `3`, `17`, `18`, `19`.
        accepts integers, names and aliases, else ParseError(
            "flavor",
            "AUTO, PERF (RELEASE), DEBUG, TEST, DKL_PERF, DKL_DEBUG, DKL_TEST or 0, 1, 2, 3, 17, 18, 19"
        );
    }

    impl TryFrom<i32> for Flavor {
        /// The flavor for a raw C integer; anything the vendor knows no flavor for is an error.
        else RawValueError("flavor", "0, 1, 2, 3, 17, 18, 19");
    }

    impl From<Flavor> for i32 {
        /// The raw C argument of a flavor.
    }
}

#[cfg(test)]
mod flavor_tests {
    extern crate std;
    use std::string::ToString;

    use super::*;
    use crate::names::checks;

    #[test]
    fn raw_conversions_round_trip_and_reject_the_rest() {
        checks::raw_conversions_round_trip(-5..40, Flavor::from_raw, |raw| {
            (0..=3).contains(&raw) || (17..=19).contains(&raw)
        });
        let err = Flavor::try_from(4).unwrap_err();
        assert_eq!(err.value(), 4);
        assert_eq!(
            err.to_string(),
            "4 is not a valid flavor (expected 0, 1, 2, 3, 17, 18, 19)"
        );
        assert_eq!(i32::from(Flavor::DklTest), 19);
    }

    #[test]
    fn names_aliases_and_integers_parse_back() {
        checks::names_parse_back(&Flavor::ALL);
        assert_eq!("release".parse(), Ok(Flavor::Perf));
        assert_eq!("Dkl-Debug".parse(), Ok(Flavor::DklDebug));
        checks::rejects::<Flavor>(&["4", "16", "20", "dkl", "perf_", "-0x1"], "flavor");
    }

    #[test]
    fn variant_name_is_the_name_but_for_sundas_release() {
        for f in Flavor::ALL {
            for g in Generation::ALL {
                let expected = if (f, g) == (Flavor::Perf, Generation::Sunda) {
                    "RELEASE"
                } else {
                    f.name()
                };
                assert_eq!(f.variant_name(g), expected);
            }
        }
    }
}
