//! `StdEnv`: the live process environment (feature `std`).
//!
//! On Linux the two variables the image resolver needs are found in **one pass** over the C
//! library's `environ` array, comparing name bytes in place, with no allocation and no lock: the
//! vendor's two `getenv` calls cost two passes, and `std::env::var_os` adds a C-string copy of
//! the name, a read lock and a `Vec` for the value (`README.md`, "Performance"). This is the
//! crate's only `unsafe` code; it exists only with feature `std`, the `no_std` core forbids
//! `unsafe`.
//!
//! The scan keeps `getenv`'s semantics byte for byte: an entry matches when it starts with the
//! name's bytes followed by `=`, the first matching entry wins, and the value is the bytes up to
//! the entry's NUL. Names for which C libraries differ (empty, or containing `=` or NUL) are not
//! scanned: they go to `std::env::var_os`, that is to the C library's own `getenv`. Other
//! targets use `std::env::var_os` throughout.
//!
//! Values are copied out of the environment before the visitor runs (into a stack buffer, or for
//! values longer than [`INLINE`] bytes through `std::env::var_os`), so no borrow of the process
//! environment ever reaches caller code, which may itself call `std::env::set_var`.

extern crate std;

use crate::env::{Env, PairVisitor};

/// The live process environment, read on every call like the vendor's `getenv`.
///
/// Values are compared as raw bytes (exactly the bytes of the environment on Unix). When the
/// removed flag trips it prints a one-line notice to stderr, as the vendor does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StdEnv;

/// Values up to this many bytes are copied to the stack; longer ones are read again through
/// `std::env::var_os` (allocating). Every value the resolver distinguishes is 5 bytes or less.
pub(crate) const INLINE: usize = 32;

/// What the scan found for one name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Found {
    /// No entry matched.
    Unset,
    /// A value of `len` bytes, copied into `bytes[..len]`.
    Inline { bytes: [u8; INLINE], len: usize },
    /// A matching entry whose value is longer than [`INLINE`].
    Long,
}

impl Found {
    /// Hands the value to `visit`, reading a long value again through `std::env::var_os`.
    fn visit<R>(&self, name: &str, visit: impl FnOnce(Option<&[u8]>) -> R) -> R {
        match self {
            Found::Unset => visit(None),
            Found::Inline { bytes, len } => visit(Some(&bytes[..*len])),
            Found::Long => {
                let value = std::env::var_os(name);
                visit(value.as_deref().map(std::ffi::OsStr::as_encoded_bytes))
            }
        }
    }
}

/// `true` for a name every C library's `getenv` looks up the same way: non-empty, with no `=`
/// and no NUL.
fn plain(name: &str) -> bool {
    !name.is_empty() && !name.bytes().any(|b| b == b'=' || b == 0)
}

/// Finds `names` in the process environment in one pass; `None` when this target or a name
/// needs the `std::env::var_os` path.
fn scan<const N: usize>(names: [&str; N]) -> Option<[Found; N]> {
    if !names.iter().all(|n| plain(n)) {
        return None;
    }
    let names = names.map(str::as_bytes);
    environ::scan(&names)
}

impl Env for StdEnv {
    fn visit_var(&self, name: &str, visit: &mut dyn FnMut(Option<&[u8]>)) {
        match scan([name]) {
            Some([found]) => found.visit(name, visit),
            None => {
                let value = std::env::var_os(name);
                visit(value.as_deref().map(std::ffi::OsStr::as_encoded_bytes));
            }
        }
    }

    fn visit_vars2(&self, first: &str, second: &str, visit: &mut PairVisitor<'_>) {
        match scan([first, second]) {
            Some([a, b]) => a.visit(first, |a| b.visit(second, |b| visit(a, b))),
            None => {
                let a = std::env::var_os(first);
                let b = std::env::var_os(second);
                visit(
                    a.as_deref().map(std::ffi::OsStr::as_encoded_bytes),
                    b.as_deref().map(std::ffi::OsStr::as_encoded_bytes),
                );
            }
        }
    }

    fn removed_flag_notice(&self) {
        std::eprintln!(
            "nrtucode: {}=1 is a removed flag; unset it (code 8, no image resolved)",
            crate::env::REMOVED_FLAG_VAR
        );
    }
}

/// The one-pass reader over the C library's `environ` (Linux: glibc, musl, bionic).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod environ {
    use super::{Found, INLINE};
    use core::ffi::c_char;

    unsafe extern "C" {
        /// The C library's environment: a NULL-terminated array of pointers to NUL-terminated
        /// `NAME=value` strings (POSIX `environ`).
        static environ: *const *const c_char;
    }

    /// Scans the process environment once for `names` (each non-empty, without `=` or NUL).
    pub(super) fn scan<const N: usize>(names: &[&[u8]; N]) -> Option<[Found; N]> {
        // SAFETY: reads the pointer value of the C library's `environ`. The only writers are
        // `setenv`/`putenv`/`unsetenv`/`clearenv`, reached from Rust through
        // `std::env::set_var`/`remove_var`, which are `unsafe` with the contract that no other
        // thread reads or writes the environment concurrently "through functions or global
        // variables other than the ones in this module"; this read is such an access, so a
        // concurrent writer is excluded by that contract, exactly as for C's `getenv`.
        let envp = unsafe { environ };
        // SAFETY: as above, `envp` is `environ`, stable for the duration of this call.
        Some(unsafe { scan_envp(envp, names) })
    }

    /// The scan over any `environ`-shaped array (separate for tests over synthetic arrays).
    ///
    /// # Safety
    ///
    /// `envp` is NULL or points to a NULL-terminated array of pointers to NUL-terminated
    /// strings, and neither the array nor the strings change during the call.
    pub(super) unsafe fn scan_envp<const N: usize>(
        envp: *const *const c_char,
        names: &[&[u8]; N],
    ) -> [Found; N] {
        let mut found = [Found::Unset; N];
        if envp.is_null() {
            return found;
        }
        let mut missing = N;
        let mut entry_at = envp;
        loop {
            // SAFETY: `entry_at` points into the NULL-terminated array: it starts at its first
            // element and advances only past non-NULL elements.
            let entry = unsafe { *entry_at };
            if entry.is_null() || missing == 0 {
                return found;
            }
            for (name, slot) in names.iter().zip(found.iter_mut()) {
                if *slot == Found::Unset {
                    // SAFETY: `entry` is a non-NULL element of the array: a NUL-terminated
                    // string that does not change during the call.
                    if let Some(value) = unsafe { value_of(entry, name) } {
                        *slot = value;
                        missing -= 1;
                    }
                }
            }
            // SAFETY: `entry` was not NULL, so the terminator comes later in the array.
            entry_at = unsafe { entry_at.add(1) };
        }
    }

    /// The value of `entry` if it is `name=value`, copied out; `None` if it is another entry.
    ///
    /// # Safety
    ///
    /// `entry` points to a NUL-terminated string that does not change during the call; `name`
    /// holds no NUL byte.
    #[inline(always)]
    unsafe fn value_of(entry: *const c_char, name: &[u8]) -> Option<Found> {
        let entry = entry.cast::<u8>();
        for (i, &want) in name.iter().enumerate() {
            // SAFETY: bytes `0..i` of `entry` equal `name[..i]`, none of them NUL, so the
            // string's terminator is at `i` or later: byte `i` is inside the string.
            if unsafe { *entry.add(i) } != want {
                return None;
            }
        }
        // SAFETY: bytes `0..name.len()` matched `name` (no NUL), so byte `name.len()` is inside.
        if unsafe { *entry.add(name.len()) } != b'=' {
            return None;
        }
        let mut bytes = [0u8; INLINE];
        let mut len = 0;
        loop {
            // SAFETY: bytes up to `name.len() + len` are inside the string and none of the value
            // bytes read so far was NUL, so the next byte is inside too (at worst the NUL).
            let b = unsafe { *entry.add(name.len() + 1 + len) };
            if b == 0 {
                return Some(Found::Inline { bytes, len });
            }
            if len == INLINE {
                return Some(Found::Long);
            }
            bytes[len] = b;
            len += 1;
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        extern crate std;
        use std::ffi::CString;
        use std::vec::Vec;

        /// The reference: `getenv` over a list of entries, first `NAME=` prefix wins.
        fn reference<'a>(entries: &'a [&[u8]], name: &[u8]) -> Option<&'a [u8]> {
            entries.iter().find_map(|e| {
                e.strip_prefix(name)
                    .and_then(|rest| rest.strip_prefix(b"=".as_slice()))
            })
        }

        fn as_value(found: &Found) -> Option<Vec<u8>> {
            match found {
                Found::Unset => None,
                Found::Inline { bytes, len } => Some(bytes[..*len].to_vec()),
                Found::Long => Some(b"<long>".to_vec()),
            }
        }

        #[test]
        fn scan_matches_getenv_semantics_on_synthetic_arrays() {
            let long = [b'd'; INLINE + 1];
            let mut long_entry = b"NEURON_UCODE_FLAVOR=".to_vec();
            long_entry.extend_from_slice(&long);
            let mut exact_entry = b"NEURON_UCODE_FLAVOR=".to_vec();
            exact_entry.extend_from_slice(&long[..INLINE]);
            let entries: [&[&[u8]]; 8] = [
                &[],
                &[
                    b"PATH=/bin",
                    b"NEURON_UCODE_FLAVOR=debug",
                    b"NRTUCODE_MPLUS_ON_MARIANA=1",
                ],
                &[b"NEURON_UCODE_FLAVOR=test", b"NEURON_UCODE_FLAVOR=debug"],
                &[
                    b"NEURON_UCODE_FLAVORX=debug",
                    b"NEURON_UCODE_FLAVO=debug",
                    b"NEURON_UCODE_FLAVOR",
                ],
                &[
                    b"NEURON_UCODE_FLAVOR=",
                    b"NRTUCODE_MPLUS_ON_MARIANA==1",
                    b"=x",
                ],
                &[b"NEURON_UCODE_FLAVOR=\xff\xfedebug\x80", b"N=1", b""],
                &[&long_entry, b"NRTUCODE_MPLUS_ON_MARIANA=1 "],
                &[&exact_entry],
            ];
            let names: [&[u8]; 2] = [b"NRTUCODE_MPLUS_ON_MARIANA", b"NEURON_UCODE_FLAVOR"];
            for list in entries {
                let owned: Vec<CString> = list.iter().map(|e| CString::new(*e).unwrap()).collect();
                let mut envp: Vec<*const c_char> = owned.iter().map(|c| c.as_ptr()).collect();
                envp.push(core::ptr::null());
                // SAFETY: `envp` is NULL-terminated, its strings live in `owned` and are not
                // changed during the call.
                let both = unsafe { scan_envp(envp.as_ptr(), &names) };
                for (name, found) in names.iter().zip(&both) {
                    let want = reference(list, name).map(|v| {
                        if v.len() > INLINE {
                            b"<long>".to_vec()
                        } else {
                            v.to_vec()
                        }
                    });
                    assert_eq!(as_value(found), want, "{list:?} {name:?}");
                    // SAFETY: as above.
                    let [one] = unsafe { scan_envp(envp.as_ptr(), &[*name]) };
                    assert_eq!(one, *found);
                }
            }
            // SAFETY: a NULL `envp` is allowed.
            let none = unsafe { scan_envp(core::ptr::null(), &names) };
            assert_eq!(none, [Found::Unset, Found::Unset]);
        }
    }
}

/// Targets without a known `environ`: the scan defers to `std::env::var_os`.
#[cfg(not(target_os = "linux"))]
mod environ {
    use super::Found;

    pub(super) fn scan<const N: usize>(_names: &[&[u8]; N]) -> Option<[Found; N]> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn via_std(name: &str) -> Option<Vec<u8>> {
        std::env::var_os(name).map(|v| v.as_encoded_bytes().to_vec())
    }

    /// Every variable of the test process (never modified here: no `set_var` in a threaded test
    /// binary) reads the same through `StdEnv` as through `std::env::var_os`.
    #[test]
    fn agrees_with_var_os_on_the_live_environment() {
        let mut names: Vec<std::string::String> = std::env::vars_os()
            .filter_map(|(k, _)| k.into_string().ok())
            .collect();
        names.extend(
            [
                "NEURON_UCODE_FLAVOR",
                "NRTUCODE_MPLUS_ON_MARIANA",
                "",
                "A=B",
                "NUL\0",
            ]
            .map(std::string::String::from),
        );
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
        assert!(plain("PATH") && !plain("") && !plain("A=B") && !plain("A\0"));
    }
}
