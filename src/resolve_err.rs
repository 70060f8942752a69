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
    /// Code 2: the slot has no profiler table of that kind (a NULL getter in the vendor's `hwdecode_table_list`).
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

    /// A one-line description (also what [`image!`](crate::image) and
    /// [`prof_table!`](crate::prof_table) print when a request does not resolve at compile
    /// time: both take the text from the hidden `__nrtucode_message!`).
    pub const fn message(&self) -> &'static str {
        match self {
            ResolveErr::IndexOutOfRange => crate::__nrtucode_message!(IndexOutOfRange),
            ResolveErr::EmptySlot => crate::__nrtucode_message!(EmptySlot),
            ResolveErr::FlavorNotFound => crate::__nrtucode_message!(FlavorNotFound),
            ResolveErr::RegionOutOfRange => crate::__nrtucode_message!(RegionOutOfRange),
            ResolveErr::KindOutOfRange => crate::__nrtucode_message!(KindOutOfRange),
            ResolveErr::NoProfiler => crate::__nrtucode_message!(NoProfiler),
            ResolveErr::NullGetter => crate::__nrtucode_message!(NullGetter),
            ResolveErr::RemovedFlag => crate::__nrtucode_message!(RemovedFlag),
        }
    }

    /// The error with the request that produced it, for a message that names the slot, region
    /// and flavor.
    pub const fn with_request(self, request: Request) -> Failure {
        Failure {
            error: self,
            request,
        }
    }
}

/// The text of each [`ResolveErr::message`], as a literal, so that the const macros can
/// `concat!` it into a compile-time panic message (which can only be a literal). Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __nrtucode_message {
    (IndexOutOfRange) => {
        "image index out of range (0..=37)"
    };
    (EmptySlot) => {
        "image slot is empty"
    };
    (FlavorNotFound) => {
        "no descriptor for the requested flavor in this slot"
    };
    (RegionOutOfRange) => {
        "memory region out of range (0..=3)"
    };
    (KindOutOfRange) => {
        "profiler table kind out of range (0..=1)"
    };
    (NoProfiler) => {
        "no profiler table in this slot"
    };
    (NullGetter) => {
        "image not present in this build (NULL getter)"
    };
    (RemovedFlag) => {
        "NRTUCODE_MPLUS_ON_MARIANA=1 is a removed flag; unset it to resolve images"
    };
}

impl fmt::Display for ResolveErr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message(), self.code())
    }
}

impl core::error::Error for ResolveErr {}
