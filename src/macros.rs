//! Compile-time resolution that cannot fail at run time: [`image!`](crate::image) and
//! [`prof_table!`](crate::prof_table) yield a `&'static [u8]` from a typed request, evaluated in a
//! `const`, and a request that does not resolve stops the build with a message naming the
//! request and the reason.

/// The image of `(slot, region, flavor)` as a `&'static [u8]`, resolved at compile time with
/// nothing in the environment ([`resolve_image_const`](crate::resolve_image_const)).
///
/// Arguments are constant expressions of type [`ImageIndex`](crate::ImageIndex),
/// [`Region`](crate::Region) and [`Flavor`](crate::Flavor). A binary that only resolves this way
/// links only the blobs it names (see docs/bare-metal.md, "Flash: what a binary links").
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
/// use nrtucode::{prof_table, ImageIndex, ProfKind};
/// const CAM: &[u8] = prof_table!(ImageIndex::CAYMAN_NX_ACT, ProfKind::Cam);
/// static_assertions::const_assert_eq!(CAM.len(), 0x400);
/// ```
///
/// ```compile_fail
/// use nrtucode::{prof_table, ImageIndex, ProfKind};
/// const CAM: &[u8] = prof_table!(ImageIndex::SUNDA_NX_ACT, ProfKind::Cam); // no profiler
/// ```
#[macro_export]
macro_rules! prof_table {
    ($slot:expr, $kind:expr $(,)?) => {{
        const BYTES: &'static [u8] = match $crate::resolve_hwdecode($slot, $kind) {
            ::core::result::Result::Ok(bytes) => bytes,
            ::core::result::Result::Err(err) => $crate::__nrtucode_const_fail!(
                err,
                ::core::concat!(
                    "nrtucode::prof_table!(",
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

/// A `const` panic naming the request and the reason, worded like `Failure`'s `Display`:
/// `<request>: <ResolveErr::message()> (code N)`. A const panic message can only be a literal,
/// so each reason is its own arm, its text taken from `__nrtucode_message!`. Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __nrtucode_const_fail {
    ($err:expr, $what:expr) => {
        match $err {
            $crate::ResolveErr::IndexOutOfRange => $crate::__nrtucode_const_fail!(@panic $what, IndexOutOfRange, "1"),
            $crate::ResolveErr::EmptySlot => $crate::__nrtucode_const_fail!(@panic $what, EmptySlot, "2"),
            $crate::ResolveErr::FlavorNotFound => $crate::__nrtucode_const_fail!(@panic $what, FlavorNotFound, "2"),
            $crate::ResolveErr::RegionOutOfRange => $crate::__nrtucode_const_fail!(@panic $what, RegionOutOfRange, "2"),
            $crate::ResolveErr::KindOutOfRange => $crate::__nrtucode_const_fail!(@panic $what, KindOutOfRange, "2"),
            $crate::ResolveErr::NoProfiler => $crate::__nrtucode_const_fail!(@panic $what, NoProfiler, "2"),
            $crate::ResolveErr::NullGetter => ::core::panic!(::core::concat!(
                $what,
                ": ",
                $crate::__nrtucode_message!(NullGetter),
                " (code 3); enable its gen-* and flavor-* features"
            )),
            $crate::ResolveErr::RemovedFlag => $crate::__nrtucode_const_fail!(@panic $what, RemovedFlag, "8"),
        }
    };
    (@panic $what:expr, $reason:ident, $code:literal) => {
        ::core::panic!(::core::concat!(
            $what,
            ": ",
            $crate::__nrtucode_message!($reason),
            " (code ",
            $code,
            ")"
        ))
    };
}
