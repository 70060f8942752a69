//! What a partition's header says of it besides its layout: the vendor table set it follows
//! ([`TableClass`]) and where its blobs come from ([`Source`]).

use super::format;

/// The vendor table set a partition follows: which getters are NULL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum TableClass {
    /// The full library's tables (`libnrtucode_internal.so`): every generation and flavor.
    Full,
    /// The reduced front library's (`libnrtucode.so`): PERF/RELEASE and DKL_PERF of SUNDA to
    /// MARIANA_PLUS; every other getter NULL.
    Front,
}

impl TableClass {
    /// The header byte.
    pub const fn raw(self) -> u8 {
        match self {
            TableClass::Full => format::CLASS_FULL,
            TableClass::Front => format::CLASS_FRONT,
        }
    }

    /// The class of a header byte.
    pub const fn from_raw(raw: u8) -> Option<Self> {
        match raw {
            format::CLASS_FULL => Some(TableClass::Full),
            format::CLASS_FRONT => Some(TableClass::Front),
            _ => None,
        }
    }

    /// `full` or `front`.
    pub const fn name(self) -> &'static str {
        match self {
            TableClass::Full => "full",
            TableClass::Front => "front",
        }
    }
}

/// Where a partition's blobs come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Source<'a> {
    /// A library with this GNU build ID.
    BuildId(&'a [u8]),
    /// A library without a build ID.
    NoBuildId,
    /// The built-in fixture set.
    Fixtures,
}
