//! `StdEnv`: the live process environment (feature `std`).
//!
//! Every read goes through `std::env::var_os`, that is through std's environment lock, the only
//! thing `std::env::set_var` / `remove_var` synchronise with. So no program, in any edition and
//! whatever its other threads do with the environment through std, can make a lookup read a
//! freed `environ` array or a freed string: the value is copied out under the lock before any
//! caller code runs. (An earlier version scanned `environ` directly, without the lock, in one
//! pass; an edition-2021 program calling the then-safe `set_var` from another thread crashed it,
//! see `crates/nrtucode-env-stress`.)
//!
//! The cost, measured in `README.md` ("Performance"): per variable one lock, the C library's
//! `getenv`, and a copy of the name into a NUL-terminated buffer (on the stack); a set variable
//! also allocates its value. Hosts that settle their environment at start-up can resolve with an
//! [`EnvSnapshot`](crate::EnvSnapshot) instead, which reads nothing per lookup.

extern crate std;

use std::ffi::{OsStr, OsString};

use super::{Env, PairVisitor};

/// The live process environment, read on every call like the vendor's `getenv`.
///
/// Values are compared as raw bytes (exactly the bytes of the environment on Unix). When the
/// removed flag trips it prints a one-line notice to stderr, as the vendor does. Sound under
/// concurrent `std::env::set_var` / `remove_var` from other threads: every read takes std's
/// environment lock.
///
/// ```
/// use nrtucode::{get_memory_image, NoEnv, StdEnv};
/// // The variables the doc test runs with are unknown; flavor 0 answers like some flavor 1..=3.
/// let live = get_memory_image(7, 0, 0, &StdEnv);
/// assert!((1..=3).any(|f| get_memory_image(7, 0, f, &NoEnv) == live) || live.is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StdEnv;

/// `std::env::var_os` as raw bytes, owned by `slot`.
fn var_os<'a>(name: &str, slot: &'a mut Option<OsString>) -> Option<&'a [u8]> {
    *slot = std::env::var_os(name);
    slot.as_deref().map(OsStr::as_encoded_bytes)
}

impl Env for StdEnv {
    #[inline]
    fn visit_var(&self, name: &str, visit: &mut dyn FnMut(Option<&[u8]>)) {
        let mut value = None;
        visit(var_os(name, &mut value));
    }

    #[inline]
    fn visit_vars2(&self, first: &str, second: &str, visit: &mut PairVisitor<'_>) {
        let (mut a, mut b) = (None, None);
        visit(var_os(first, &mut a), var_os(second, &mut b));
    }

    fn removed_flag_notice(&self) {
        print_removal_notice();
    }
}

/// The one-line removal notice on stderr, written like C's `fprintf(stderr, ...)`: if stderr is
/// closed, full or a broken pipe, the notice is lost and the lookup still answers code 8
/// (`eprintln!` would panic there, and through the C ABI a panic aborts the host).
pub(crate) fn print_removal_notice() {
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "nrtucode: {}=1 is a removed flag; unset it (code 8, no image resolved)",
        super::REMOVED_FLAG_VAR
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::String;
    use std::vec::Vec;

    fn via_std(name: &str) -> Option<Vec<u8>> {
        std::env::var_os(name).map(|v| v.as_encoded_bytes().to_vec())
    }

    /// Every variable of the test process (never modified here: no `set_var` in a threaded test
    /// binary) reads the same through `StdEnv` as through `std::env::var_os`, including names
    /// no C library can hold.
    #[test]
    fn agrees_with_var_os_on_the_live_environment() {
        let mut names: Vec<String> = std::env::vars_os()
            .filter_map(|(k, _)| k.into_string().ok())
            .collect();
        let odd = [
            "NEURON_UCODE_FLAVOR",
            "NRTUCODE_MPLUS_ON_MARIANA",
            "",
            "A=B",
            "NUL\0",
            "=",
        ];
        names.extend(odd.map(String::from));
        for name in &names {
            let mut one = None;
            StdEnv.visit_var(name, &mut |v| one = Some(v.map(<[u8]>::to_vec)));
            assert_eq!(one, Some(via_std(name)), "{name:?}");
        }
        for pair in names.windows(2) {
            let mut both = None;
            StdEnv.visit_vars2(&pair[0], &pair[1], &mut |a, b| {
                both = Some((a.map(<[u8]>::to_vec), b.map(<[u8]>::to_vec)))
            });
            assert_eq!(both, Some((via_std(&pair[0]), via_std(&pair[1]))));
        }
    }
}
