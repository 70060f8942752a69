//! [`Request`]: the arguments of one resolver call, as the C integers, printed with the names
//! of the slot, region, flavor or profiler table kind.

use core::fmt;

use crate::env::{Env, FLAVOR_VAR, auto_flavor};
use crate::failure::Failure;
use crate::flavor::Flavor;
use crate::image_index::ImageIndex;
use crate::prof_kind::ProfKind;
use crate::region::Region;
use crate::resolve::{get_hwdecode_table, get_memory_image};

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
