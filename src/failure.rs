//! Why a resolver call failed and which call it was: [`ResolveErr`] (the resolvers' error, one
//! small `Copy` enum whose [`code`](ResolveErr::code) is the vendor's integer), [`Request`]
//! (the arguments of one call, printed with the names of the slot, region, flavor or table
//! kind) and [`Failure`] (the two together, for a message that names the call).

use crate::args::Flavor;
use crate::args::ProfKind;
use crate::args::Region;
use crate::env::{Env, FLAVOR_VAR, auto_flavor};
use crate::image_index::ImageIndex;
use crate::resolve::{get_hwdecode_table, get_memory_image};
use core::fmt;

// The resolvers' error: one small `Copy` enum whose [`code`](ResolveErr::code) is the vendor's
// integer.

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
        Failure::new(self, request)
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

// Small enough to return by value on a microcontroller (at most four words on a 32-bit
// target; CI's no_std cross build compiles this for thumbv7em).
static_assertions::const_assert!(core::mem::size_of::<ResolveErr>() <= 16);

// [`Request`]: the arguments of one resolver call, as the C integers, printed with the names
// of the slot, region, flavor or profiler table kind.

/// The arguments of one resolver call, as the C integers (so out-of-range requests can be
/// reported too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Request {
    /// A `get_memory_image` call.
    Image {
        /// The flat index.
        idx: u32,
        /// The region argument.
        region: i32,
        /// The flavor argument (or, after [`Request::with_effective_flavor`], the flavor the
        /// environment selected for `0`).
        flavor: i32,
    },
    /// A `get_hwdecode_table` call.
    Prof {
        /// The flat index.
        idx: u32,
        /// The kind argument.
        kind: i32,
    },
}

impl Request {
    /// A `get_memory_image(idx, region, flavor)` request.
    pub const fn image(idx: u32, region: i32, flavor: i32) -> Self {
        Request::Image {
            idx,
            region,
            flavor,
        }
    }

    /// A typed `resolve_image` request.
    pub const fn typed_image(idx: ImageIndex, region: Region, flavor: Flavor) -> Self {
        Request::image(idx.raw(), region.raw(), flavor.raw())
    }

    /// A `get_hwdecode_table(idx, kind)` request.
    pub const fn prof(idx: u32, kind: i32) -> Self {
        Request::Prof { idx, kind }
    }

    /// A typed `resolve_hwdecode` request.
    pub const fn typed_prof(idx: ImageIndex, kind: ProfKind) -> Self {
        Request::prof(idx.raw(), kind.raw())
    }

    /// The request with flavor `0` (auto) replaced by the flavor `env` selects, exactly as
    /// `get_memory_image` chooses it; other requests are returned unchanged.
    ///
    /// ```
    /// use nrtucode::{Flavor, Request};
    /// let env = [("NEURON_UCODE_FLAVOR", "debug")];
    /// let request = Request::image(7, 0, 0).with_effective_flavor(&env);
    /// assert_eq!(request, Request::image(7, 0, Flavor::Debug.raw()));
    /// ```
    pub fn with_effective_flavor<E: Env + ?Sized>(self, env: &E) -> Self {
        match self {
            Request::Image {
                idx,
                region,
                flavor: 0,
            } => {
                let mut flavor = 0;
                env.visit_var(FLAVOR_VAR, &mut |value| flavor = auto_flavor(value));
                Request::image(idx, region, flavor)
            }
            other => other,
        }
    }

    /// The flat index.
    pub const fn idx(&self) -> u32 {
        match *self {
            Request::Image { idx, .. } | Request::Prof { idx, .. } => idx,
        }
    }

    /// Makes the resolver call this request describes (`get_memory_image` with `env`, or
    /// `get_hwdecode_table`); a failure carries the request, so its message names the slot,
    /// region and flavor without the caller restating them.
    ///
    /// An auto flavor (`0`) is reported as the flavor `env` selects
    /// ([`Request::with_effective_flavor`]), read again after the call.
    ///
    /// ```
    /// use nrtucode::{Flavor, ImageIndex, NoEnv, Region, Request};
    /// let image = Request::typed_image(ImageIndex::CAYMAN_NX_ACT, Region::Iram, Flavor::Perf)
    ///     .resolve(&NoEnv)?;
    /// assert_eq!(image.len(), 81344);
    /// let failure = Request::image(7, 0, 19).resolve(&NoEnv).unwrap_err();
    /// assert_eq!(failure.code(), 2);
    /// assert_eq!(
    ///     failure.to_string(),
    ///     "CAYMAN NX ACT (slot 7), IRAM, flavor DKL_TEST: \
    ///      no descriptor for the requested flavor in this slot (code 2)"
    /// );
    /// # Ok::<(), nrtucode::Failure>(())
    /// ```
    pub fn resolve<E: Env + ?Sized>(self, env: &E) -> Result<&'static [u8], Failure> {
        let result = match self {
            Request::Image {
                idx,
                region,
                flavor,
            } => get_memory_image(idx, region, flavor, env),
            Request::Prof { idx, kind } => get_hwdecode_table(idx, kind),
        };
        result.map_err(|e| e.with_request(self.with_effective_flavor(env)))
    }
}

/// Prints the slot: `CAYMAN NX ACT (slot 7)`, `MAVERICK empty slot (slot 36)`, `slot 38`.
struct SlotName(u32);

impl fmt::Display for SlotName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match ImageIndex::from_raw(self.0) {
            Some(idx) => match idx.slot() {
                Some(id) => write!(f, "{id} (slot {})", self.0),
                None => write!(f, "{} empty slot (slot {})", idx.generation(), self.0),
            },
            None => write!(f, "slot {}", self.0),
        }
    }
}

/// Prints a raw argument by its name when it has one (`IRAM`), else the label and the integer
/// (`region 7`).
struct Named<T>(i32, Option<T>, &'static str);

impl<T: fmt::Display> fmt::Display for Named<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.1 {
            Some(named) => write!(f, "{named}"),
            None if self.2.is_empty() => write!(f, "{}", self.0),
            None => write!(f, "{} {}", self.2, self.0),
        }
    }
}

impl fmt::Display for Request {
    /// `CAYMAN NX ACT (slot 7), IRAM, flavor DEBUG`; `CAYMAN NX ACT (slot 7), profiler CAM`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Request::Image {
                idx,
                region,
                flavor,
            } => {
                let region = Named(region, Region::from_raw(region), "region");
                let flavor = Named(flavor, Flavor::from_raw(flavor), "");
                write!(f, "{}, {region}, flavor {flavor}", SlotName(idx))
            }
            Request::Prof { idx, kind } => {
                let kind = Named(kind, ProfKind::from_raw(kind), "kind");
                write!(f, "{}, profiler {kind}", SlotName(idx))
            }
        }
    }
}

// [`Failure`]: a [`ResolveErr`] with the [`Request`] that produced it, for a message that names
// the slot, region and flavor; still `Copy`, `no_std` and allocation-free.

/// A [`ResolveErr`] with the [`Request`] that produced it.
///
/// `Display` names the request, then the error: `CAYMAN NX ACT (slot 7), IRAM, flavor DEBUG:
/// no descriptor for the requested flavor in this slot (code 2)`. The error is the
/// [`source`](core::error::Error::source).
///
/// ```
/// use nrtucode::{get_memory_image, NoEnv, Request};
/// let request = Request::image(7, 0, 19); // CAYMAN NX ACT, IRAM, DKL_TEST
/// let failure = get_memory_image(7, 0, 19, &NoEnv)
///     .map_err(|e| e.with_request(request))
///     .unwrap_err();
/// assert_eq!(failure.code(), 2);
/// assert_eq!(
///     failure.to_string(),
///     "CAYMAN NX ACT (slot 7), IRAM, flavor DKL_TEST: \
///      no descriptor for the requested flavor in this slot (code 2)"
/// );
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Failure {
    // The request's arguments and the error side by side (16 bytes on a 32-bit target, where a
    // `Request` beside a `ResolveErr` would take 20): `first` is the region or the kind.
    idx: u32,
    first: i32,
    flavor: i32,
    error: ResolveErr,
    image: bool,
}

impl Failure {
    /// `error`, produced by `request`.
    pub const fn new(error: ResolveErr, request: Request) -> Self {
        let (image, idx, first, flavor) = match request {
            Request::Image {
                idx,
                region,
                flavor,
            } => (true, idx, region, flavor),
            Request::Prof { idx, kind } => (false, idx, kind, 0),
        };
        Failure {
            idx,
            first,
            flavor,
            error,
            image,
        }
    }

    /// What went wrong.
    pub const fn error(&self) -> ResolveErr {
        self.error
    }

    /// The call that failed.
    pub const fn request(&self) -> Request {
        if self.image {
            Request::image(self.idx, self.first, self.flavor)
        } else {
            Request::prof(self.idx, self.first)
        }
    }

    /// The vendor's return code of the error.
    pub const fn code(&self) -> i32 {
        self.error.code()
    }
}

impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Failure")
            .field("error", &self.error)
            .field("request", &self.request())
            .finish()
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.request(), self.error)
    }
}

impl core::error::Error for Failure {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl From<Failure> for ResolveErr {
    fn from(failure: Failure) -> ResolveErr {
        failure.error
    }
}

// Small enough to return by value on a microcontroller (at most four words on a 32-bit
// target; CI's no_std cross build compiles this for thumbv7em).
static_assertions::const_assert!(core::mem::size_of::<Failure>() <= 16);

#[cfg(test)]
mod failure_tests {
    extern crate std;
    use std::string::ToString;

    use super::*;
    use crate::{NoEnv, get_hwdecode_table, get_memory_image};

    fn failure(idx: u32, region: i32, flavor: i32) -> std::string::String {
        get_memory_image(idx, region, flavor, &NoEnv)
            .map_err(|e| e.with_request(Request::image(idx, region, flavor)))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn messages_name_slot_region_and_flavor() {
        assert_eq!(
            failure(7, 0, 19),
            "CAYMAN NX ACT (slot 7), IRAM, flavor DKL_TEST: no descriptor for the requested flavor in this slot (code 2)"
        );
        assert_eq!(
            failure(36, 3, 1),
            "MAVERICK empty slot (slot 36), EXTRAM, flavor PERF: image slot is empty (code 2)"
        );
        assert_eq!(
            failure(38, 9, 4),
            "slot 38, region 9, flavor 4: image index out of range (0..=37) (code 1)"
        );
        assert_eq!(
            failure(13, -1, 17),
            "CAYMAN Q7 POOL (slot 13), region -1, flavor DKL_PERF: memory region out of range (0..=3) (code 2)"
        );
        let prof = get_hwdecode_table(0, 1)
            .map_err(|e| e.with_request(Request::prof(0, 1)))
            .unwrap_err();
        assert_eq!(
            prof.to_string(),
            "SUNDA NX ACT (slot 0), profiler TABLE: no profiler table in this slot (code 2)"
        );
        assert_eq!(prof.code(), 2);
        assert_eq!(ResolveErr::from(prof), ResolveErr::NoProfiler);
    }

    #[test]
    fn a_request_resolves_itself_and_its_failure_names_it() {
        let debug = [("NEURON_UCODE_FLAVOR", "debug")];
        assert_eq!(
            Request::image(7, 0, 0).resolve(&debug).ok(),
            get_memory_image(7, 0, 0, &debug).ok()
        );
        // The auto flavor is reported as the flavor the environment selected.
        let auto = Request::image(7, 9, 0).resolve(&debug).unwrap_err();
        assert_eq!(auto.request(), Request::image(7, 9, 2));
        assert_eq!(
            auto.to_string(),
            "CAYMAN NX ACT (slot 7), region 9, flavor DEBUG: memory region out of range (0..=3) (code 2)"
        );
        assert_eq!(
            failure(38, 9, 4),
            Request::image(38, 9, 4)
                .resolve(&NoEnv)
                .unwrap_err()
                .to_string()
        );
        let prof = Request::prof(0, 1).resolve(&debug).unwrap_err();
        assert_eq!(prof.request(), Request::prof(0, 1));
        assert_eq!(prof.error(), ResolveErr::NoProfiler);
        assert_eq!(
            Request::prof(7, 0).resolve(&NoEnv).ok(),
            get_hwdecode_table(7, 0).ok()
        );
    }

    #[test]
    fn effective_flavor_reads_the_environment_only_for_auto() {
        let debug = [("NEURON_UCODE_FLAVOR", "DEBUG")];
        assert_eq!(
            Request::image(7, 0, 0).with_effective_flavor(&debug),
            Request::image(7, 0, 2)
        );
        assert_eq!(
            Request::image(7, 0, 0).with_effective_flavor(&NoEnv),
            Request::image(7, 0, 1)
        );
        assert_eq!(
            Request::image(7, 0, 3).with_effective_flavor(&debug),
            Request::image(7, 0, 3)
        );
        assert_eq!(
            Request::prof(7, 0).with_effective_flavor(&debug),
            Request::prof(7, 0)
        );
    }
}
