//! [`ProfKind`]: which profiler table, the `kind` argument of `get_hwdecode_table`.

use crate::name_and_raw_impls::name_and_raw_impls;

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
mod tests {
    use super::*;
    use crate::name_and_raw_impls::checks;

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
