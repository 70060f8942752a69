//! Compile-time resolution that cannot fail at run time: [`image!`](crate::image) and
//! [`hwdecode!`](crate::hwdecode) yield a `&'static [u8]` from a typed request, evaluated in a
//! `const`, and a request that does not resolve stops the build with a message naming the
//! request and the reason.

/// The image of `(slot, region, flavor)` as a `&'static [u8]`, resolved at compile time with
/// nothing in the environment ([`resolve_image_const`](crate::resolve_image_const)).
///
/// Arguments are constant expressions of type [`ImageIndex`](crate::ImageIndex),
/// [`Region`](crate::Region) and [`Flavor`](crate::Flavor). A binary that only resolves this way
/// links only the blobs it names (see README "Flash: what a binary links").
///
/// ```
/// use nrtucode::{image, Flavor, ImageIndex, Region};
/// const ACT_IRAM: &[u8] = image!(ImageIndex::CAYMAN_NX_ACT, Region::Iram, Flavor::Perf);
/// static_assertions::const_assert_eq!(ACT_IRAM.len(), 0x13dc0);
/// static_assertions::const_assert!(ACT_IRAM.len() % 4 == 0);
/// ```
///
/// A request that does not resolve fails compilation, for instance MAVERICK's NX POOL, which
/// ships no DEBUG image:
///
/// ```compile_fail
/// use nrtucode::{image, Flavor, ImageIndex, Region};
/// const X: &[u8] = image!(ImageIndex::MAVERICK_NX_POOL, Region::Iram, Flavor::Debug);
/// // error[E0080]: evaluation panicked: nrtucode::image!(ImageIndex::MAVERICK_NX_POOL,
/// //   Region::Iram, Flavor::Debug): no descriptor for the requested flavor in this slot (code 2)
/// ```
#[macro_export]
macro_rules! image {
    ($slot:expr, $region:expr, $flavor:expr $(,)?) => {{
        const BYTES: &'static [u8] = match $crate::resolve_image_const($slot, $region, $flavor) {
            ::core::result::Result::Ok(bytes) => bytes,
            ::core::result::Result::Err(err) => $crate::__nrtucode_const_fail!(
                err,
                ::core::concat!(
                    "nrtucode::image!(",
                    ::core::stringify!($slot),
                    ", ",
                    ::core::stringify!($region),
                    ", ",
                    ::core::stringify!($flavor),
                    ")"
                )
            ),
        };
        BYTES
    }};
}

/// The profiler table of `(slot, kind)` as a `&'static [u8]`, resolved at compile time
/// ([`resolve_hwdecode`](crate::resolve_hwdecode)); a slot without that table fails
/// compilation, naming the request.
///
/// ```
/// use nrtucode::{hwdecode, ImageIndex, ProfKind};
/// const CAM: &[u8] = hwdecode!(ImageIndex::CAYMAN_NX_ACT, ProfKind::Cam);
/// static_assertions::const_assert_eq!(CAM.len(), 0x400);
/// ```
///
/// ```compile_fail
/// use nrtucode::{hwdecode, ImageIndex, ProfKind};
/// const CAM: &[u8] = hwdecode!(ImageIndex::SUNDA_NX_ACT, ProfKind::Cam); // no profiler
/// ```
#[macro_export]
macro_rules! hwdecode {
    ($slot:expr, $kind:expr $(,)?) => {{
        const BYTES: &'static [u8] = match $crate::resolve_hwdecode($slot, $kind) {
            ::core::result::Result::Ok(bytes) => bytes,
            ::core::result::Result::Err(err) => $crate::__nrtucode_const_fail!(
                err,
                ::core::concat!(
                    "nrtucode::hwdecode!(",
                    ::core::stringify!($slot),
                    ", ",
                    ::core::stringify!($kind),
                    ")"
                )
            ),
        };
        BYTES
    }};
}

/// A `const` panic naming the request and the reason: a const panic message can only be a
/// literal, so each reason is its own arm. Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __nrtucode_const_fail {
    ($err:expr, $what:expr) => {
        match $err {
            $crate::ResolveErr::IndexOutOfRange => ::core::panic!(::core::concat!(
                $what,
                ": image index out of range (code 1)"
            )),
            $crate::ResolveErr::EmptySlot => {
                ::core::panic!(::core::concat!($what, ": the slot is empty (code 2)"))
            }
            $crate::ResolveErr::FlavorNotFound => ::core::panic!(::core::concat!(
                $what,
                ": no descriptor for the requested flavor in this slot (code 2)"
            )),
            $crate::ResolveErr::RegionOutOfRange => ::core::panic!(::core::concat!(
                $what,
                ": memory region out of range (code 2)"
            )),
            $crate::ResolveErr::KindOutOfRange => ::core::panic!(::core::concat!(
                $what,
                ": profiler table kind out of range (code 2)"
            )),
            $crate::ResolveErr::NoProfiler => ::core::panic!(::core::concat!(
                $what,
                ": no profiler table in this slot (code 2)"
            )),
            $crate::ResolveErr::NullGetter => ::core::panic!(::core::concat!(
                $what,
                ": not embedded in this build, enable its gen-* and flavor-* features (code 3)"
            )),
            $crate::ResolveErr::RemovedFlag => ::core::panic!(::core::concat!(
                $what,
                ": removed flag NRTUCODE_MPLUS_ON_MARIANA=1 (code 8)"
            )),
        }
    };
}
