//! [`Region`]: the memory region of a firmware image, the `region` argument of
//! `get_memory_image`.

use crate::name_and_raw_impls::name_and_raw_impls;

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
mod tests {
    extern crate std;
    use std::string::ToString;

    use super::*;
    use crate::name_and_raw_impls::checks;

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
