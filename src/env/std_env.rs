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
//! The cost, measured in `docs/performance.md` ("Lookups"): per variable one lock, the C library's
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
/// Flavor 0 picks the image by the rule the vendor's `getenv` + `strcmp` apply to the process
/// environment this example runs in (CI runs it with `NEURON_UCODE_FLAVOR=test` too):
///
/// ```
/// use nrtucode::{get_memory_image, NoEnv, ResolveErr, StdEnv};
/// let var = |name| std::env::var_os(name).map(|v| v.into_encoded_bytes());
/// let expected_flavor = match var("NEURON_UCODE_FLAVOR").as_deref() {
///     Some(b"debug" | b"DEBUG") => 2,
///     Some(b"test" | b"TEST") => 3,
///     _ => 1,
/// };
/// let live = get_memory_image(7, 0, 0, &StdEnv);
/// if var("NRTUCODE_MPLUS_ON_MARIANA").as_deref() == Some(b"1") {
///     assert_eq!(live, Err(ResolveErr::RemovedFlag));
/// } else {
///     let explicit = get_memory_image(7, 0, expected_flavor, &NoEnv)?;
///     assert_eq!(live?.as_ptr(), explicit.as_ptr());
/// }
/// # Ok::<(), ResolveErr>(())
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
    fn visit_two_vars(&self, first: &str, second: &str, visit: &mut PairVisitor<'_>) {
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
