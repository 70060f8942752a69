//! Errors with context: which request failed.
//!
//! [`ResolveErr`] stays the small `Copy` enum whose [`code`](ResolveErr::code) is the vendor's
//! integer. To report a failure to a person, attach the request with
//! [`ResolveErr::with_request`]: the resulting [`Failure`] prints the slot with its names, the
//! region and the flavor, and is still `Copy`, `no_std` and allocation-free.

use core::fmt;

use crate::env::{Env, FLAVOR_VAR, auto_flavor};
use crate::error::ResolveErr;
use crate::model::{Flavor, ImageIndex, ProfKind, Region};

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
    Hwdecode {
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
    pub const fn hwdecode(idx: u32, kind: i32) -> Self {
        Request::Hwdecode { idx, kind }
    }

    /// A typed `resolve_hwdecode` request.
    pub const fn typed_hwdecode(idx: ImageIndex, kind: ProfKind) -> Self {
        Request::hwdecode(idx.raw(), kind.raw())
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
            Request::Image { idx, .. } | Request::Hwdecode { idx, .. } => idx,
        }
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
            Request::Hwdecode { idx, kind } => {
                let kind = Named(kind, ProfKind::from_raw(kind), "kind");
                write!(f, "{}, profiler {kind}", SlotName(idx))
            }
        }
    }
}

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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Failure {
    /// What went wrong.
    pub error: ResolveErr,
    /// The call that failed.
    pub request: Request,
}

impl Failure {
    /// The vendor's return code of the error.
    pub const fn code(&self) -> i32 {
        self.error.code()
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

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.request, self.error)
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

#[cfg(test)]
mod tests {
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
            .map_err(|e| e.with_request(Request::hwdecode(0, 1)))
            .unwrap_err();
        assert_eq!(
            prof.to_string(),
            "SUNDA NX ACT (slot 0), profiler TABLE: no profiler table in this slot (code 2)"
        );
        assert_eq!(prof.code(), 2);
        assert_eq!(ResolveErr::from(prof), ResolveErr::NoProfiler);
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
            Request::hwdecode(7, 0).with_effective_flavor(&debug),
            Request::hwdecode(7, 0)
        );
    }
}
