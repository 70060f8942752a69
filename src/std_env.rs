//! `StdEnv`: the live process environment (feature `std`).

extern crate std;

use crate::env::Env;

/// The live process environment, read on every call like the vendor's `getenv`.
///
/// Values are compared as raw bytes ([`OsStr::as_encoded_bytes`](std::ffi::OsStr), exactly the
/// bytes of the environment on Unix). When the removed flag trips it prints a one-line notice to
/// stderr, as the vendor does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StdEnv;

impl Env for StdEnv {
    fn visit_var(&self, name: &str, visit: &mut dyn FnMut(Option<&[u8]>)) {
        let value = std::env::var_os(name);
        visit(value.as_deref().map(std::ffi::OsStr::as_encoded_bytes));
    }

    fn removed_flag_notice(&self) {
        std::eprintln!(
            "nrtucode: {}=1 is a removed flag; unset it (code 8, no image resolved)",
            crate::env::REMOVED_FLAG_VAR
        );
    }
}
