//! The injected environment: where `get_memory_image` reads `NRTUCODE_MPLUS_ON_MARIANA` and
//! `NEURON_UCODE_FLAVOR` from. Every environment reader lives in this folder; the items are
//! public at the crate root only.
//!
//! The resolver never touches the process itself. It asks an [`Env`] for the raw bytes of a
//! variable and compares them byte for byte, like the vendor's `getenv` + `strcmp`: `"debug"` is
//! not `"Debug"`, and a value need not be UTF-8. Implementations here: [`NoEnv`] (nothing set,
//! `no_env.rs`), the fixed-capacity [`MapEnv`] built on `heapless` (`map_env.rs`),
//! [`EnvSnapshot`] (the two variables captured once, `snapshot.rs`) and, with feature `std`,
//! `StdEnv`, the live process environment (`std_env.rs`); arrays and slices of `(name, value)`
//! pairs and, with `std`, maps are generic over [`EnvText`] (`pairs.rs`).

mod map_env;
mod no_env;
mod pairs;
mod snapshot;
#[cfg(feature = "std")]
mod std_env;

pub use map_env::{CapacityError, MapEnv};
pub use no_env::NoEnv;
pub use pairs::EnvText;
pub use snapshot::{EnvSnapshot, SNAPSHOT_VALUE_CAPACITY};
#[cfg(feature = "std")]
pub use std_env::StdEnv;

/// The removed flag: set to exactly `1`, every image lookup answers code 8.
pub const REMOVED_FLAG_VAR: &str = "NRTUCODE_MPLUS_ON_MARIANA";
/// The auto-flavor variable, read when the flavor argument is 0.
pub const FLAVOR_VAR: &str = "NEURON_UCODE_FLAVOR";

/// The visitor of [`Env::visit_two_vars`]: receives the values of two variables.
pub type PairVisitor<'a> = dyn FnMut(Option<&[u8]>, Option<&[u8]>) + 'a;

/// A source of environment variables for the resolver.
///
/// Values are handed to a visitor rather than returned, so an implementation can lend bytes it
/// only holds for the duration of the call (the process environment, a lock guard) without
/// allocating.
pub trait Env {
    /// Calls `visit` once with the raw bytes of `name`, or `None` when it is unset.
    fn visit_var(&self, name: &str, visit: &mut dyn FnMut(Option<&[u8]>));

    /// Calls `visit` once with the values of two variables.
    ///
    /// The default looks them up one after the other; an environment that can find both more
    /// cheaply together may override it.
    fn visit_two_vars(&self, first: &str, second: &str, visit: &mut PairVisitor<'_>) {
        self.visit_var(first, &mut |a| self.visit_var(second, &mut |b| visit(a, b)));
    }

    /// Called when the removed flag trips, before the resolver answers code 8.
    ///
    /// The vendor prints a removal notice to stderr; `StdEnv` prints one line, the default
    /// stays silent.
    fn removed_flag_notice(&self) {}
}

/// The bytes C sees of a value: everything before the first NUL.
///
/// A process environment cannot hold a NUL, but an injected one can; cutting there makes an
/// injected value answer exactly as the same bytes would through `getenv` and `strcmp`.
pub(crate) const fn as_c_string(value: &[u8]) -> &[u8] {
    let mut len = 0;
    while len < value.len() && value[len] != 0 {
        len += 1;
    }
    match value.split_at_checked(len) {
        Some((head, _)) => head,
        None => value,
    }
}

/// `true` when a value of `NRTUCODE_MPLUS_ON_MARIANA` trips the removed flag: exactly the C
/// string `1` (not `11`, not `1 `, not empty).
#[inline]
pub(crate) const fn removed_flag_trips(value: Option<&[u8]>) -> bool {
    match value {
        Some(value) => matches!(as_c_string(value), b"1"),
        None => false,
    }
}

/// The flavor a value of `NEURON_UCODE_FLAVOR` selects when the flavor argument is 0:
/// `debug`/`DEBUG` give 2, `test`/`TEST` give 3, anything else (unset, empty, `Debug`,
/// `debug `, non-UTF-8) gives 1. Compared byte for byte, as C strings.
#[inline]
pub(crate) const fn auto_flavor(value: Option<&[u8]>) -> i32 {
    let Some(value) = value else { return 1 };
    match as_c_string(value) {
        b"debug" | b"DEBUG" => 2,
        b"test" | b"TEST" => 3,
        _ => 1,
    }
}

impl<E: Env + ?Sized> Env for &E {
    fn visit_var(&self, name: &str, visit: &mut dyn FnMut(Option<&[u8]>)) {
        (**self).visit_var(name, visit);
    }

    fn visit_two_vars(&self, first: &str, second: &str, visit: &mut PairVisitor<'_>) {
        (**self).visit_two_vars(first, second, visit);
    }

    fn removed_flag_notice(&self) {
        (**self).removed_flag_notice();
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The first 8 bytes of `name`'s value in `env` (zero-padded), as the visitor sees them.
    pub(crate) fn value_of<E: Env + ?Sized>(env: &E, name: &str) -> Option<[u8; 8]> {
        let mut out = None;
        env.visit_var(name, &mut |v| {
            out = v.map(|v| {
                let mut buf = [0u8; 8];
                buf[..v.len().min(8)].copy_from_slice(&v[..v.len().min(8)]);
                buf
            })
        });
        out
    }

    #[test]
    fn slice_env_first_match_wins() {
        let env: &[(&str, &[u8])] = &[("A", b"1"), ("A", b"2")];
        assert_eq!(value_of(env, "A").map(|b| b[0]), Some(b'1'));
        assert_eq!(value_of(env, "B"), None);
        assert_eq!(value_of(&NoEnv, "A"), None);
    }

    #[test]
    fn visit_two_vars_sees_both_values_in_order() {
        let env: &[(&str, &[u8])] = &[("A", b"x"), ("B", b"y")];
        let mut seen = None;
        env.visit_two_vars("B", "A", &mut |b, a| {
            seen = Some((b.map(|v| v[0]), a.map(|v| v[0])))
        });
        assert_eq!(seen, Some((Some(b'y'), Some(b'x'))));
    }

    #[test]
    fn map_env_is_bounded_and_replaces() {
        let mut env: MapEnv<'_, 1> = MapEnv::new();
        assert_eq!(env.set("A", b"1"), Ok(()));
        assert_eq!(env.set("A", b"2"), Ok(()));
        assert_eq!(env.set("B", b"3"), Err(CapacityError));
        assert_eq!(env.get("A"), Some(b"2".as_slice()));
        assert_eq!(env.remove("A"), Some(b"2".as_slice()));
        assert!(env.is_empty());
    }

    #[test]
    fn removed_flag_is_exactly_one() {
        assert!(removed_flag_trips(Some(b"1")));
        for v in [&b""[..], b"0", b"11", b"10", b"1 ", b" 1"] {
            assert!(!removed_flag_trips(Some(v)), "{v:?}");
        }
        assert!(!removed_flag_trips(None));
    }

    #[test]
    fn auto_flavor_is_byte_exact() {
        assert_eq!(auto_flavor(Some(b"debug")), 2);
        assert_eq!(auto_flavor(Some(b"DEBUG")), 2);
        assert_eq!(auto_flavor(Some(b"Debug")), 1);
        assert_eq!(auto_flavor(Some(b"debug ")), 1);
        assert_eq!(auto_flavor(Some(b"test")), 3);
        assert_eq!(auto_flavor(Some(b"TEST")), 3);
        assert_eq!(auto_flavor(Some(b"Test")), 1);
        assert_eq!(auto_flavor(Some(b"\xffdebug")), 1);
        assert_eq!(auto_flavor(None), 1);
        // As C strings: bytes after a NUL are invisible to getenv/strcmp.
        assert_eq!(auto_flavor(Some(b"test\0junk")), 3);
        assert_eq!(auto_flavor(Some(b"\0debug")), 1);
        assert!(removed_flag_trips(Some(b"1\0")));
        assert!(!removed_flag_trips(Some(b"\x001")));
    }
}
