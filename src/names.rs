//! The one name table: how the model's types are spelled, parsed and converted from the raw C
//! integers.
//!
//! * `Display` prints the vendor's canonical spelling (`MARIANA_PLUS`, `IRAM`, `DKL_PERF`).
//! * `FromStr` accepts those names in any case, with `-` and `_` interchangeable
//!   (`mariana-plus`), the aliases the vendor uses (`RELEASE` for PERF, `PROF_CAM` for CAM), and
//!   for the types that are C arguments the integers the vendor gives a meaning to (`0`..`3` for
//!   a region, `17` for DKL_PERF).
//! * `TryFrom<i32>` (`TryFrom<u32>` for [`ImageIndex`]) takes the raw C integer and rejects
//!   every value outside the vendor's domain.
//!
//! Everything here is `no_std` and allocation-free; the `ALL` arrays and `name()` functions are
//! `const`.

use core::fmt;
use core::str::FromStr;

use crate::model::{
    CoreClass, Engine, Flavor, Generation, ImageIndex, ProfKind, Region, SLOT_COUNT,
};

/// A name that `FromStr` did not recognise.
///
/// The message lists what is accepted: `unknown memory region (expected IRAM, DRAM, SRAM,
/// EXTRAM or 0..=3)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ParseError {
    what: &'static str,
    expected: &'static str,
}

impl ParseError {
    const fn new(what: &'static str, expected: &'static str) -> Self {
        Self { what, expected }
    }

    /// What was being parsed, e.g. `memory region`.
    pub const fn what(&self) -> &'static str {
        self.what
    }

    /// The accepted spellings, e.g. `IRAM, DRAM, SRAM, EXTRAM or 0..=3`.
    pub const fn expected(&self) -> &'static str {
        self.expected
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown {} (expected {})", self.what, self.expected)
    }
}

impl core::error::Error for ParseError {}

/// A raw C integer outside the vendor's domain for the type (`TryFrom`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RawValueError {
    what: &'static str,
    expected: &'static str,
    value: i64,
}

impl RawValueError {
    const fn new(what: &'static str, expected: &'static str, value: i64) -> Self {
        Self {
            what,
            expected,
            value,
        }
    }

    /// The rejected integer.
    pub const fn value(&self) -> i64 {
        self.value
    }

    /// What was being converted, e.g. `memory region`.
    pub const fn what(&self) -> &'static str {
        self.what
    }
}

impl fmt::Display for RawValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is not a valid {} (expected {})",
            self.value, self.what, self.expected
        )
    }
}

impl core::error::Error for RawValueError {}

/// `true` when `input` spells `name`: ASCII case ignored, `-` and `_` interchangeable.
const fn spells(input: &str, name: &str) -> bool {
    let (a, b) = (input.as_bytes(), name.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        let (x, y) = (fold(a[i]), fold(b[i]));
        if x != y {
            return false;
        }
        i += 1;
    }
    true
}

const fn fold(byte: u8) -> u8 {
    match byte {
        b'-' => b'_',
        other => other.to_ascii_uppercase(),
    }
}

/// `input` as a decimal integer of the C argument's type, `None` otherwise.
fn integer<T: FromStr>(input: &str) -> Option<T> {
    input.parse().ok()
}

impl CoreClass {
    /// Both classes.
    pub const ALL: [CoreClass; 2] = [CoreClass::Nx, CoreClass::Q7];
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
}

impl Flavor {
    /// The canonical name: `AUTO`, `PERF`, `DEBUG`, `TEST`, `DKL_PERF`, `DKL_DEBUG`, `DKL_TEST`.
    ///
    /// [`variant_name`](Flavor::variant_name) gives SUNDA's `RELEASE` instead of `PERF`.
    pub const fn name(self) -> &'static str {
        // PERF's name outside SUNDA is the canonical one.
        self.variant_name(Generation::Cayman)
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

impl ProfKind {
    /// Alternative spellings `FromStr` accepts besides [`name`](ProfKind::name): the vendor's
    /// `PROF_CAM` and `PROF_TABLE`.
    pub const fn aliases(self) -> &'static [&'static str] {
        match self {
            ProfKind::Cam => &["PROF_CAM"],
            ProfKind::Table => &["PROF_TABLE"],
        }
    }
}

macro_rules! display_by_name {
    ($($ty:ty),*) => {$(
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.pad(self.name())
            }
        }
    )*};
}

display_by_name!(
    Generation, CoreClass, Engine, Region, ProfKind, Flavor, ImageIndex
);

impl FromStr for Generation {
    type Err = ParseError;

    /// `SUNDA`, `CAYMAN`, `MARIANA`, `MARIANA_PLUS` (or `mariana-plus`), `MAVERICK`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Generation::ALL
            .into_iter()
            .find(|g| spells(s, g.name()))
            .ok_or(ParseError::new(
                "generation",
                "SUNDA, CAYMAN, MARIANA, MARIANA_PLUS or MAVERICK",
            ))
    }
}

impl FromStr for CoreClass {
    type Err = ParseError;

    /// `NX` or `Q7`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CoreClass::ALL
            .into_iter()
            .find(|c| spells(s, c.name()))
            .ok_or(ParseError::new("core class", "NX or Q7"))
    }
}

impl FromStr for Engine {
    type Err = ParseError;

    /// `ACT`, `DVE`, `POOL`, `PE` or `SP`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Engine::ALL
            .into_iter()
            .find(|e| spells(s, e.name()))
            .ok_or(ParseError::new("engine", "ACT, DVE, POOL, PE or SP"))
    }
}

const REGION_EXPECTED: &str = "IRAM, DRAM, SRAM, EXTRAM or 0..=3";
const FLAVOR_EXPECTED: &str =
    "AUTO, PERF (RELEASE), DEBUG, TEST, DKL_PERF, DKL_DEBUG, DKL_TEST or 0, 1, 2, 3, 17, 18, 19";
const KIND_EXPECTED: &str = "CAM (PROF_CAM), TABLE (PROF_TABLE) or 0, 1";
const INDEX_EXPECTED: &str = "0..=37 or a slot name such as CAYMAN_NX_ACT";

impl FromStr for Region {
    type Err = ParseError;

    /// `IRAM`, `DRAM`, `SRAM`, `EXTRAM` or `0`..`3`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let by_number = integer(s).and_then(Region::from_raw);
        by_number
            .or_else(|| Region::ALL.into_iter().find(|r| spells(s, r.name())))
            .ok_or(ParseError::new("memory region", REGION_EXPECTED))
    }
}

impl FromStr for Flavor {
    type Err = ParseError;

    /// `AUTO`, `PERF` (or `RELEASE`), `DEBUG`, `TEST`, `DKL_PERF`, `DKL_DEBUG`, `DKL_TEST`
    /// (`dkl-perf` too), or the integers `0`, `1`, `2`, `3`, `17`, `18`, `19`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let by_number = integer(s).and_then(Flavor::from_raw);
        by_number
            .or_else(|| {
                Flavor::ALL
                    .into_iter()
                    .find(|f| spells(s, f.name()) || f.aliases().iter().any(|a| spells(s, a)))
            })
            .ok_or(ParseError::new("flavor", FLAVOR_EXPECTED))
    }
}

impl FromStr for ProfKind {
    type Err = ParseError;

    /// `CAM` (or `PROF_CAM`), `TABLE` (or `PROF_TABLE`), `0` or `1`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let by_number = integer(s).and_then(ProfKind::from_raw);
        by_number
            .or_else(|| {
                ProfKind::ALL
                    .into_iter()
                    .find(|k| spells(s, k.name()) || k.aliases().iter().any(|a| spells(s, a)))
            })
            .ok_or(ParseError::new("profiler table kind", KIND_EXPECTED))
    }
}

impl FromStr for ImageIndex {
    type Err = ParseError;

    /// `0`..`37`, or the name of the constant (`CAYMAN_NX_ACT`, `cayman-nx-act`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let by_number = integer(s).and_then(ImageIndex::from_raw);
        by_number
            .or_else(|| {
                ImageIndex::ALL
                    .into_iter()
                    .find(|idx| spells(s, idx.name()))
            })
            .ok_or(ParseError::new("image index", INDEX_EXPECTED))
    }
}

macro_rules! try_from_raw {
    ($ty:ty, $raw:ty, $what:literal, $expected:expr, $from_raw:expr) => {
        impl TryFrom<$raw> for $ty {
            type Error = RawValueError;

            #[doc = concat!("The ", $what, " for a raw C integer; anything outside the vendor's domain is an error.")]
            fn try_from(raw: $raw) -> Result<Self, Self::Error> {
                let from_raw = $from_raw;
                from_raw(raw).ok_or(RawValueError::new($what, $expected, raw as i64))
            }
        }
    };
}

try_from_raw!(Region, i32, "memory region", "0..=3", Region::from_raw);
try_from_raw!(
    Flavor,
    i32,
    "flavor",
    "0, 1, 2, 3, 17, 18, 19",
    Flavor::from_raw
);
try_from_raw!(
    ProfKind,
    i32,
    "profiler table kind",
    "0 or 1",
    ProfKind::from_raw
);
try_from_raw!(
    ImageIndex,
    u32,
    "image index",
    "0..=37",
    ImageIndex::from_raw
);

macro_rules! into_raw {
    ($($ty:ty => $raw:ty),*) => {$(
        impl From<$ty> for $raw {
            #[doc = concat!("The raw C argument of a ", stringify!($ty), ".")]
            fn from(value: $ty) -> $raw {
                value.raw()
            }
        }
    )*};
}

into_raw!(Region => i32, Flavor => i32, ProfKind => i32, ImageIndex => u32);

impl ImageIndex {
    /// The constant's name, e.g. `CAYMAN_NX_ACT`, `CAYMAN_NX_SP_TWIN`, `MAVERICK_GAP`.
    pub const fn name(self) -> &'static str {
        ImageIndex::NAMES[self.as_usize()]
    }
}

static_assertions::const_assert_eq!(ImageIndex::NAMES.len(), SLOT_COUNT);

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::ToString;

    use super::*;

    #[test]
    fn every_name_parses_back_in_any_case_and_with_dashes() {
        for g in Generation::ALL {
            assert_eq!(g.to_string().parse(), Ok(g));
            assert_eq!(
                g.name().to_ascii_lowercase().replace('_', "-").parse(),
                Ok(g)
            );
        }
        for e in Engine::ALL {
            assert_eq!(e.to_string().to_ascii_lowercase().parse(), Ok(e));
        }
        for c in CoreClass::ALL {
            assert_eq!(c.to_string().parse(), Ok(c));
        }
        for r in Region::ALL {
            assert_eq!(r.to_string().to_ascii_lowercase().parse(), Ok(r));
            assert_eq!(r.raw().to_string().parse(), Ok(r));
        }
        for f in Flavor::ALL {
            assert_eq!(f.to_string().parse(), Ok(f));
            assert_eq!(
                f.to_string().to_ascii_lowercase().replace('_', "-").parse(),
                Ok(f)
            );
            assert_eq!(f.raw().to_string().parse(), Ok(f));
        }
        for k in ProfKind::ALL {
            assert_eq!(k.to_string().parse(), Ok(k));
            assert_eq!(k.raw().to_string().parse(), Ok(k));
        }
        for idx in ImageIndex::ALL {
            assert_eq!(idx.to_string().parse(), Ok(idx));
            assert_eq!(idx.raw().to_string().parse(), Ok(idx));
        }
    }

    #[test]
    fn aliases_and_canonical_names() {
        assert_eq!("release".parse(), Ok(Flavor::Perf));
        assert_eq!("Dkl-Debug".parse(), Ok(Flavor::DklDebug));
        assert_eq!("prof_table".parse(), Ok(ProfKind::Table));
        assert_eq!(
            "cayman_nx_sp_twin".parse(),
            Ok(ImageIndex::CAYMAN_NX_SP_TWIN)
        );
        assert_eq!(Flavor::DklPerf.to_string(), "DKL_PERF");
        assert_eq!(Flavor::Perf.to_string(), "PERF");
        assert_eq!(Generation::MarianaPlus.to_string(), "MARIANA_PLUS");
        assert_eq!(ImageIndex::MAVERICK_GAP.to_string(), "MAVERICK_GAP");
        assert_eq!(std::format!("{:<6}|", Region::Iram), "IRAM  |");
    }

    #[test]
    fn integers_only_where_the_vendor_gives_them_a_meaning() {
        for bad in ["4", "-1", "", " iram", "iram ", "RAM", "99999999999"] {
            let err = bad.parse::<Region>().unwrap_err();
            assert_eq!(err.what(), "memory region", "{bad:?}");
        }
        for bad in ["4", "16", "20", "dkl", "perf_", "-0x1"] {
            assert!(bad.parse::<Flavor>().is_err(), "{bad:?}");
        }
        assert!("0".parse::<Generation>().is_err());
        assert!("38".parse::<ImageIndex>().is_err());
        assert!("2".parse::<ProfKind>().is_err());
        assert_eq!(
            "dram2".parse::<Region>().unwrap_err().to_string(),
            "unknown memory region (expected IRAM, DRAM, SRAM, EXTRAM or 0..=3)"
        );
    }

    #[test]
    fn try_from_follows_from_raw() {
        for raw in -5..40 {
            assert_eq!(Region::try_from(raw).ok(), Region::from_raw(raw));
            assert_eq!(Flavor::try_from(raw).ok(), Flavor::from_raw(raw));
            assert_eq!(ProfKind::try_from(raw).ok(), ProfKind::from_raw(raw));
        }
        for raw in 0..50u32 {
            assert_eq!(ImageIndex::try_from(raw).ok(), ImageIndex::from_raw(raw));
        }
        let err = Flavor::try_from(4).unwrap_err();
        assert_eq!(err.value(), 4);
        assert_eq!(
            err.to_string(),
            "4 is not a valid flavor (expected 0, 1, 2, 3, 17, 18, 19)"
        );
        assert!(ImageIndex::try_from(u32::MAX).is_err());
        assert_eq!(i32::from(Flavor::DklTest), 19);
        assert_eq!(u32::from(ImageIndex::CAYMAN_NX_ACT), 7);
    }
}
