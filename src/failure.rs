//! [`Failure`]: a [`ResolveErr`] with the [`Request`] that produced it, for a message that names
//! the slot, region and flavor; still `Copy`, `no_std` and allocation-free.

use core::fmt;

use crate::request::Request;
use crate::resolve_err::ResolveErr;

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
        assert_eq!(auto.request, Request::image(7, 9, 2));
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
        assert_eq!(prof.request, Request::prof(0, 1));
        assert_eq!(prof.error, ResolveErr::NoProfiler);
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
