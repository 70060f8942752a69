//! [`Region`]: the memory region of a firmware image, the `region` argument of
//! `get_memory_image`.

use core::fmt;
use core::str::FromStr;

use crate::parse_error::{ParseError, integer, spells};
use crate::raw_value_error::RawValueError;

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

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Region {
    type Err = ParseError;

    /// `IRAM`, `DRAM`, `SRAM`, `EXTRAM` or `0`..`3`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        integer(s)
            .and_then(Region::from_raw)
            .or_else(|| Region::ALL.into_iter().find(|r| spells(s, r.name())))
            .ok_or(ParseError::new(
                "memory region",
                "IRAM, DRAM, SRAM, EXTRAM or 0..=3",
            ))
    }
}

impl TryFrom<i32> for Region {
    type Error = RawValueError;

    /// The region for a raw C integer; anything outside `0..=3` is an error.
    fn try_from(raw: i32) -> Result<Self, Self::Error> {
        Region::from_raw(raw).ok_or(RawValueError::new("memory region", "0..=3", raw as i64))
    }
}

impl From<Region> for i32 {
    /// The raw C argument of a region.
    fn from(value: Region) -> i32 {
        value.raw()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::ToString;

    use super::*;

    #[test]
    fn raw_conversions_round_trip_and_reject_the_rest() {
        for raw in -5..40 {
            assert_eq!(
                Region::from_raw(raw).map(Region::raw),
                (0..=3).contains(&raw).then_some(raw)
            );
            assert_eq!(Region::try_from(raw).ok(), Region::from_raw(raw));
        }
    }

    #[test]
    fn names_and_integers_parse_nothing_else() {
        for r in Region::ALL {
            assert_eq!(r.to_string().to_ascii_lowercase().parse(), Ok(r));
            assert_eq!(r.raw().to_string().parse(), Ok(r));
        }
        for bad in ["4", "-1", "", " iram", "iram ", "RAM", "99999999999"] {
            let err = bad.parse::<Region>().unwrap_err();
            assert_eq!(err.what(), "memory region", "{bad:?}");
        }
        assert_eq!(
            "dram2".parse::<Region>().unwrap_err().to_string(),
            "unknown memory region (expected IRAM, DRAM, SRAM, EXTRAM or 0..=3)"
        );
        assert_eq!(std::format!("{:<6}|", Region::Iram), "IRAM  |");
    }
}
