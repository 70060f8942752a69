//! The resolvers' error: one small `Copy` enum whose [`code`](ResolveErr::code) is the vendor's
//! integer.

use core::fmt;

use crate::failure::Failure;
use crate::request::Request;

/// Why a resolver returned no blob.
///
/// The vendor folds several causes into code 2; the variants keep them apart while
/// [`code`](ResolveErr::code) gives the vendor's integer back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ResolveErr {
    /// Code 1: `idx` above 37.
    IndexOutOfRange,
    /// Code 2: the slot has no descriptors (MAVERICK's gap, idx 36).
    EmptySlot,
    /// Code 2: no descriptor of the slot carries the requested flavor key.
    FlavorNotFound,
    /// Code 2: `region` outside 0..=3 (checked after the flavor scan, as the vendor does).
    RegionOutOfRange,
    /// Code 2: profiler `kind` outside 0..=1.
    KindOutOfRange,
    /// Code 2: the slot has no profiler table of that kind (a NULL getter in the hwdecode list).
    NoProfiler,
    /// Code 3: the descriptor exists but its getter for the region is NULL (not in this build).
    NullGetter,
    /// Code 8: `NRTUCODE_MPLUS_ON_MARIANA` is set to `1`, a removed flag.
    RemovedFlag,
}

impl ResolveErr {
    /// Every variant, for exhaustive tests and tables.
    pub const ALL: [ResolveErr; 8] = [
        ResolveErr::IndexOutOfRange,
        ResolveErr::EmptySlot,
        ResolveErr::FlavorNotFound,
        ResolveErr::RegionOutOfRange,
        ResolveErr::KindOutOfRange,
        ResolveErr::NoProfiler,
        ResolveErr::NullGetter,
        ResolveErr::RemovedFlag,
    ];

    /// The vendor's return code: 1, 2, 3 or 8.
    pub const fn code(&self) -> i32 {
        match self {
            ResolveErr::IndexOutOfRange => 1,
            ResolveErr::EmptySlot
            | ResolveErr::FlavorNotFound
            | ResolveErr::RegionOutOfRange
            | ResolveErr::KindOutOfRange
            | ResolveErr::NoProfiler => 2,
            ResolveErr::NullGetter => 3,
            ResolveErr::RemovedFlag => 8,
        }
    }

    /// A one-line description.
    pub const fn message(&self) -> &'static str {
        match self {
            ResolveErr::IndexOutOfRange => "image index out of range (0..=37)",
            ResolveErr::EmptySlot => "image slot is empty",
            ResolveErr::FlavorNotFound => "no descriptor for the requested flavor in this slot",
            ResolveErr::RegionOutOfRange => "memory region out of range (0..=3)",
            ResolveErr::KindOutOfRange => "profiler table kind out of range (0..=1)",
            ResolveErr::NoProfiler => "no profiler table in this slot",
            ResolveErr::NullGetter => "image not present in this build (NULL getter)",
            ResolveErr::RemovedFlag => {
                "NRTUCODE_MPLUS_ON_MARIANA=1 is a removed flag; unset it to resolve images"
            }
        }
    }
}

impl ResolveErr {
    /// The error with the request that produced it, for a message that names the slot, region
    /// and flavor.
    pub const fn with_request(self, request: Request) -> Failure {
        Failure {
            error: self,
            request,
        }
    }
}

impl fmt::Display for ResolveErr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message(), self.code())
    }
}

impl core::error::Error for ResolveErr {}
