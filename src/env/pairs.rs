//! [`Env`] for plain data: arrays and slices of `(name, value)` pairs (`no_std`) and, with
//! feature `std`, `Vec`s of pairs and maps; see [`EnvText`].

use super::{Env, as_c_string};

/// Text an injected environment can hold as a name or value: its raw bytes, as the process
/// environment would hold them.
///
/// With it, [`Env`] is implemented for plain data: arrays and slices of `(name, value)` pairs
/// (`no_std`) and, with feature `std`, `Vec`s of pairs, `HashMap`s and `BTreeMap`s keyed by
/// `String` or `OsString`. Each answers exactly like `getenv` on a process environment holding those variables:
///
/// * a name that cannot be set in a process environment (empty, or holding `=` or NUL) is never
///   found;
/// * in a list of pairs the first pair with the name wins (a map holds one value per name);
/// * a value is seen as a C string: the bytes before its first NUL.
///
/// Names and values are anything `EnvText`: `&str`, byte strings (`b"debug"`), `String`,
/// `Vec<u8>`, `OsString`, … so all of these work:
///
/// ```
/// use nrtucode::{get_memory_image, Flavor, ImageIndex, Region};
/// let (idx, region) = (ImageIndex::CAYMAN_NX_ACT.raw(), Region::Iram.raw());
/// let debug = get_memory_image(idx, region, Flavor::Debug.raw(), &nrtucode::NoEnv)?;
/// let by_array = get_memory_image(idx, region, 0, &[("NEURON_UCODE_FLAVOR", b"debug")])?;
/// let by_str: &[(&str, &str)] = &[("NEURON_UCODE_FLAVOR", "DEBUG")];
/// let by_slice = get_memory_image(idx, region, 0, by_str)?;
/// assert_eq!(by_array.as_ptr(), debug.as_ptr());
/// assert_eq!(by_slice.as_ptr(), debug.as_ptr());
/// # Ok::<(), nrtucode::ResolveErr>(())
/// ```
///
/// Implemented for `str`, `[u8]`, `[u8; N]` and references to them, and with `std` for
/// `String`, `Vec<u8>`, `OsStr`, `OsString` and `Box<str>` (an `OsStr` gives its
/// platform bytes: exactly the environment's bytes on Unix, WTF-8 on Windows).
pub trait EnvText {
    /// The bytes.
    fn env_bytes(&self) -> &[u8];
}

impl EnvText for str {
    fn env_bytes(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl EnvText for [u8] {
    fn env_bytes(&self) -> &[u8] {
        self
    }
}

impl<const N: usize> EnvText for [u8; N] {
    fn env_bytes(&self) -> &[u8] {
        self
    }
}

impl<T: EnvText + ?Sized> EnvText for &T {
    fn env_bytes(&self) -> &[u8] {
        (**self).env_bytes()
    }
}

/// `true` when `name` can be set in a process environment, so `getenv` can find it: not
/// empty, no `=`, no NUL.
const fn is_settable_name(name: &[u8]) -> bool {
    if name.is_empty() {
        return false;
    }
    let mut i = 0;
    while i < name.len() {
        if name[i] == b'=' || name[i] == 0 {
            return false;
        }
        i += 1;
    }
    true
}

/// `getenv(name)` over `(name, value)` pairs: the first pair whose name is `name`.
fn first_match<'a, K: EnvText, V: EnvText>(pairs: &'a [(K, V)], name: &str) -> Option<&'a [u8]> {
    if !is_settable_name(name.as_bytes()) {
        return None;
    }
    pairs
        .iter()
        .find(|(key, _)| key.env_bytes() == name.as_bytes())
        .map(|(_, value)| as_c_string(value.env_bytes()))
}

/// `(name, value)` pairs; the first pair with a matching name wins, as in `getenv`.
impl<K: EnvText, V: EnvText> Env for [(K, V)] {
    fn visit_var(&self, name: &str, visit: &mut dyn FnMut(Option<&[u8]>)) {
        visit(first_match(self, name));
    }
}

/// An array of `(name, value)` pairs, as the slice.
impl<K: EnvText, V: EnvText, const N: usize> Env for [(K, V); N] {
    fn visit_var(&self, name: &str, visit: &mut dyn FnMut(Option<&[u8]>)) {
        visit(first_match(self.as_slice(), name));
    }
}

#[cfg(feature = "std")]
mod with_std {
    extern crate std;

    use std::boxed::Box;
    use std::collections::{BTreeMap, HashMap};
    use std::ffi::{OsStr, OsString};
    use std::hash::BuildHasher;
    use std::string::String;
    use std::vec::Vec;

    use super::{EnvText, first_match, is_settable_name};
    use crate::env::{Env, as_c_string};

    impl EnvText for String {
        fn env_bytes(&self) -> &[u8] {
            self.as_bytes()
        }
    }

    impl EnvText for Box<str> {
        fn env_bytes(&self) -> &[u8] {
            self.as_bytes()
        }
    }

    impl EnvText for Vec<u8> {
        fn env_bytes(&self) -> &[u8] {
            self
        }
    }

    impl EnvText for OsStr {
        fn env_bytes(&self) -> &[u8] {
            self.as_encoded_bytes()
        }
    }

    impl EnvText for OsString {
        fn env_bytes(&self) -> &[u8] {
            self.as_encoded_bytes()
        }
    }

    /// A `Vec` of `(name, value)` pairs, as the slice.
    impl<K: EnvText, V: EnvText> Env for Vec<(K, V)> {
        fn visit_var(&self, name: &str, visit: &mut dyn FnMut(Option<&[u8]>)) {
            visit(first_match(self.as_slice(), name));
        }
    }

    /// The value of a map entry, as `getenv` would see it.
    fn lookup<'a, V: EnvText + 'a>(
        name: &str,
        get: impl FnOnce() -> Option<&'a V>,
    ) -> Option<&'a [u8]> {
        if !is_settable_name(name.as_bytes()) {
            return None;
        }
        get().map(|value| as_c_string(value.env_bytes()))
    }

    impl<V: EnvText, S: BuildHasher> Env for HashMap<String, V, S> {
        fn visit_var(&self, name: &str, visit: &mut dyn FnMut(Option<&[u8]>)) {
            visit(lookup(name, || self.get(name)));
        }
    }

    impl<V: EnvText, S: BuildHasher> Env for HashMap<OsString, V, S> {
        fn visit_var(&self, name: &str, visit: &mut dyn FnMut(Option<&[u8]>)) {
            visit(lookup(name, || self.get(OsStr::new(name))));
        }
    }

    impl<V: EnvText> Env for BTreeMap<String, V> {
        fn visit_var(&self, name: &str, visit: &mut dyn FnMut(Option<&[u8]>)) {
            visit(lookup(name, || self.get(name)));
        }
    }

    impl<V: EnvText> Env for BTreeMap<OsString, V> {
        fn visit_var(&self, name: &str, visit: &mut dyn FnMut(Option<&[u8]>)) {
            visit(lookup(name, || self.get(OsStr::new(name))));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::tests::value_of;

    #[test]
    fn first_match_wins_and_unsettable_names_are_never_found() {
        let env: &[(&str, &[u8])] = &[("A", b"1"), ("A", b"2"), ("", b"3"), ("B=C", b"4")];
        assert_eq!(value_of(env, "A").map(|b| b[0]), Some(b'1'));
        assert_eq!(value_of(env, "B"), None);
        assert_eq!(value_of(env, ""), None);
        assert_eq!(value_of(env, "B=C"), None);
        assert_eq!(value_of(&[("A\0", "x")], "A\0"), None);
        assert_eq!(value_of(&[("A", "x")], "A\0"), None);
    }

    #[test]
    fn values_are_c_strings() {
        assert_eq!(value_of(&[("A", b"te\0st")], "A"), Some(*b"te\0\0\0\0\0\0"));
        let mut seen = None;
        [("A", b"\0x")].visit_var("A", &mut |v| seen = v.map(<[u8]>::len));
        assert_eq!(seen, Some(0));
    }

    #[test]
    fn is_settable_name_rejects_what_setenv_rejects() {
        assert!(is_settable_name(b"NEURON_UCODE_FLAVOR"));
        for bad in [&b""[..], b"=", b"A=", b"=A", b"A\0B"] {
            assert!(!is_settable_name(bad), "{bad:?}");
        }
    }
}
