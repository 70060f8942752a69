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
//! the entry's NUL; an empty name is never set. A name on which C libraries differ (one holding
//! `=` or NUL) is handed to `std::env::var_os`, that is to the C library's own `getenv`, as soon
//! as the scan meets it; so are all names on targets other than Linux.
//!
//! Values are copied out of the environment before the visitor runs (into a stack buffer, or for
//! values longer than [`INLINE`] bytes through `std::env::var_os`), so no borrow of the process
//! environment ever reaches caller code, which may itself call `std::env::set_var`.

extern crate std;

use std::ffi::{OsStr, OsString};

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

/// What the scan found for one name; the bytes of an inline value are in the caller's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Found {
    /// No entry matched.
    Unset,
    /// A value of this many bytes, copied into the buffer.
    Inline(usize),
    /// A matching entry whose value is longer than [`INLINE`].
    Long,
}

/// A stack buffer for one value.
type Buf = [u8; INLINE];

impl Found {
    /// The value's bytes: in `buf`, or read again into `long` through `std::env::var_os`.
    fn bytes<'a>(
        self,
        buf: &'a Buf,
        name: &str,
        long: &'a mut Option<OsString>,
    ) -> Option<&'a [u8]> {
        match self {
            Found::Unset => None,
            Found::Inline(len) => buf.get(..len),
            Found::Long => {
                *long = std::env::var_os(name);
                long.as_deref().map(OsStr::as_encoded_bytes)
            }
        }
    }
}

/// `std::env::var_os` as raw bytes into `slot`.
fn var_os<'a>(name: &str, slot: &'a mut Option<OsString>) -> Option<&'a [u8]> {
    *slot = std::env::var_os(name);
    slot.as_deref().map(OsStr::as_encoded_bytes)
}

/// Finds `names` in the process environment in one pass, copying values into `bufs`; `None`
/// when this target or a name needs `std::env::var_os`.
#[inline(always)]
fn scan<const N: usize>(names: [&str; N], bufs: &mut [Buf; N]) -> Option<[Found; N]> {
    if names.iter().any(|n| n.is_empty()) {
        // Never set for any C library; `var_os` agrees.
        return None;
    }
    environ::scan(&names.map(str::as_bytes), bufs)
}

impl Env for StdEnv {
    #[inline]
    fn visit_var(&self, name: &str, visit: &mut dyn FnMut(Option<&[u8]>)) {
        let mut bufs = [[0; INLINE]];
        let mut long = None;
        match scan([name], &mut bufs) {
            Some([found]) => visit(found.bytes(&bufs[0], name, &mut long)),
            None => visit(var_os(name, &mut long)),
        }
    }

    #[inline]
    fn visit_vars2(&self, first: &str, second: &str, visit: &mut PairVisitor<'_>) {
        let mut bufs = [[0; INLINE]; 2];
        let (mut long_a, mut long_b) = (None, None);
        match scan([first, second], &mut bufs) {
            Some([a, b]) => visit(
                a.bytes(&bufs[0], first, &mut long_a),
                b.bytes(&bufs[1], second, &mut long_b),
            ),
            None => visit(var_os(first, &mut long_a), var_os(second, &mut long_b)),
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
    use super::{Buf, Found, INLINE};
    use core::ffi::c_char;

    unsafe extern "C" {
        /// The C library's environment: a NULL-terminated array of pointers to NUL-terminated
        /// `NAME=value` strings (POSIX `environ`).
        static environ: *const *const c_char;
    }

    /// Scans the process environment once for `names` (each non-empty).
    #[inline(always)]
    pub(super) fn scan<const N: usize>(
        names: &[&[u8]; N],
        bufs: &mut [Buf; N],
    ) -> Option<[Found; N]> {
        // SAFETY: reads the pointer value of the C library's `environ`. The only writers are
        // `setenv`/`putenv`/`unsetenv`/`clearenv`, reached from Rust through
        // `std::env::set_var`/`remove_var`, which are `unsafe` with the contract that no other
        // thread reads or writes the environment concurrently "through functions or global
        // variables other than the ones in this module"; this read is such an access, so a
        // concurrent writer is excluded by that contract, exactly as for C's `getenv`.
        let envp = unsafe { environ };
        // SAFETY: as above, `envp` is `environ`, and nothing changes it or its strings while
        // this thread scans and copies: no caller code runs before the copies are made.
        unsafe { scan_envp(envp, names, bufs) }
    }

    /// The scan over any `environ`-shaped array (separate for tests over synthetic arrays):
    /// finds each name's first entry, then copies its value into `bufs`. `None` when a name
    /// holding `=` or NUL reached comparison (C libraries differ on those).
    ///
    /// # Safety
    ///
    /// `envp` is NULL or points to a NULL-terminated array of pointers to NUL-terminated
    /// strings, and neither the array nor the strings change during the call. No name is
    /// empty.
    #[inline]
    pub(super) unsafe fn scan_envp<const N: usize>(
        envp: *const *const c_char,
        names: &[&[u8]; N],
        bufs: &mut [Buf; N],
    ) -> Option<[Found; N]> {
        let first = names[0][0];
        // The prefilter only skips entries whose first byte differs from every name's.
        let values = if names.iter().all(|n| n[0] == first) {
            // SAFETY: forwarded from the caller (`envp` shape, no concurrent change, names
            // non-empty).
            unsafe { find(envp, names, |b| b == first) }
        } else {
            // SAFETY: as above.
            unsafe { find(envp, names, |b| names.iter().any(|n| n[0] == b)) }
        }?;
        let mut found = [Found::Unset; N];
        for ((value, buf), out) in values.iter().zip(bufs.iter_mut()).zip(found.iter_mut()) {
            if let Some(value) = *value {
                // SAFETY: `value` points into a NUL-terminated string of the unchanged array.
                *out = unsafe { copy_value(value, buf) };
            }
        }
        Some(found)
    }

    /// One pass over the array: where each name's value starts in its first matching entry.
    /// `maybe(b)` is `false` only for a first byte no name starts with.
    ///
    /// # Safety
    ///
    /// As for [`scan_envp`].
    #[inline(always)]
    unsafe fn find<const N: usize>(
        envp: *const *const c_char,
        names: &[&[u8]; N],
        maybe: impl Fn(u8) -> bool,
    ) -> Option<[Option<*const u8>; N]> {
        let mut found = [None; N];
        if envp.is_null() {
            return Some(found);
        }
        let mut missing = N;
        let mut entry_at = envp;
        loop {
            // SAFETY: `entry_at` points into the NULL-terminated array: it starts at its first
            // element and advances only past non-NULL elements.
            let entry = unsafe { *entry_at }.cast::<u8>();
            if entry.is_null() {
                return Some(found);
            }
            // SAFETY: a non-NULL element is a NUL-terminated string: byte 0 is inside it.
            if maybe(unsafe { *entry }) {
                for (name, slot) in names.iter().zip(found.iter_mut()) {
                    if slot.is_none() {
                        // SAFETY: `entry` is such a string.
                        match unsafe { value_start(entry, name) } {
                            Match::No => {}
                            Match::Value(value) => {
                                *slot = Some(value);
                                missing -= 1;
                            }
                            Match::Unusual => return None,
                        }
                    }
                }
                if missing == 0 {
                    return Some(found);
                }
            }
            // SAFETY: `entry` was not NULL, so the terminator comes later in the array.
            entry_at = unsafe { entry_at.add(1) };
        }
    }

    /// What comparing one entry with one name found.
    enum Match {
        /// Another entry.
        No,
        /// `name=value`: the value starts here.
        Value(*const u8),
        /// The entry matched up to a `=` or NUL inside the name.
        Unusual,
    }

    /// Compares `entry` with `name=`.
    ///
    /// # Safety
    ///
    /// `entry` points to a NUL-terminated string.
    #[inline(always)]
    unsafe fn value_start(entry: *const u8, name: &[u8]) -> Match {
        for (i, &want) in name.iter().enumerate() {
            if want == b'=' || want == 0 {
                return Match::Unusual;
            }
            // SAFETY: bytes `0..i` of `entry` equal `name[..i]`, none of them NUL, so the
            // string's terminator is at `i` or later: byte `i` is inside the string.
            if unsafe { *entry.add(i) } != want {
                return Match::No;
            }
        }
        // SAFETY: bytes `0..name.len()` matched `name` (no NUL), so byte `name.len()` is inside.
        if unsafe { *entry.add(name.len()) } != b'=' {
            return Match::No;
        }
        // SAFETY: byte `name.len()` is `=`, not the terminator: the next byte is inside.
        Match::Value(unsafe { entry.add(name.len() + 1) })
    }

    /// Copies the NUL-terminated value at `value` into `buf`.
    ///
    /// # Safety
    ///
    /// `value` points into a NUL-terminated string that does not change during the call.
    #[inline(always)]
    unsafe fn copy_value(value: *const u8, buf: &mut Buf) -> Found {
        for (len, out) in buf.iter_mut().enumerate() {
            // SAFETY: none of the bytes before `len` was NUL, so byte `len` is inside the string
            // (at worst its terminator).
            let b = unsafe { *value.add(len) };
            if b == 0 {
                return Found::Inline(len);
            }
            *out = b;
        }
        // SAFETY: as above, for byte `INLINE`.
        if unsafe { *value.add(INLINE) } == 0 {
            Found::Inline(INLINE)
        } else {
            Found::Long
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        extern crate std;
        use std::ffi::CString;
        use std::vec::Vec;

        /// The reference: glibc's `getenv` over a list of entries, first `NAME=` prefix wins.
        fn reference<'a>(entries: &'a [&[u8]], name: &[u8]) -> Option<&'a [u8]> {
            entries.iter().find_map(|e| {
                e.strip_prefix(name)
                    .and_then(|rest| rest.strip_prefix(b"=".as_slice()))
            })
        }

        fn run<const N: usize>(
            envp: *const *const c_char,
            names: [&[u8]; N],
        ) -> Vec<Option<Vec<u8>>> {
            let mut bufs = [[0; INLINE]; N];
            // SAFETY: every caller passes a NULL-terminated array whose strings outlive the
            // call and are not changed; names are non-empty.
            let found = unsafe { scan_envp(envp, &names, &mut bufs) }.expect("plain names");
            found
                .iter()
                .zip(&bufs)
                .map(|(f, buf)| match f {
                    Found::Unset => None,
                    Found::Inline(len) => Some(buf[..*len].to_vec()),
                    Found::Long => Some(b"<long>".to_vec()),
                })
                .collect()
        }

        #[test]
        fn scan_matches_getenv_semantics_on_synthetic_arrays() {
            let long = [b'd'; INLINE + 1];
            let mut long_entry = b"NEURON_UCODE_FLAVOR=".to_vec();
            long_entry.extend_from_slice(&long);
            let mut exact_entry = b"NEURON_UCODE_FLAVOR=".to_vec();
            exact_entry.extend_from_slice(&long[..INLINE]);
            let entries: [&[&[u8]]; 9] = [
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
                &[
                    b"NEURON_UCODE_FLAVOR=\xff\xfedebug\x80",
                    b"N=1",
                    b"",
                    b"NRTUCODE",
                ],
                &[&long_entry, b"NRTUCODE_MPLUS_ON_MARIANA=1 "],
                &[&exact_entry],
                &[b"XNEURON_UCODE_FLAVOR=debug", b"A=B", b"PATH=x"],
            ];
            let (flag, flavor): (&[u8], &[u8]) =
                (b"NRTUCODE_MPLUS_ON_MARIANA", b"NEURON_UCODE_FLAVOR");
            for list in entries {
                let owned: Vec<CString> = list.iter().map(|e| CString::new(*e).unwrap()).collect();
                let mut envp: Vec<*const c_char> = owned.iter().map(|c| c.as_ptr()).collect();
                envp.push(core::ptr::null());
                let want = |name: &[u8]| {
                    reference(list, name).map(|v| {
                        if v.len() > INLINE {
                            b"<long>".to_vec()
                        } else {
                            v.to_vec()
                        }
                    })
                };
                let both = run(envp.as_ptr(), [flag, flavor]);
                assert_eq!(both, [want(flag), want(flavor)], "{list:?}");
                // Different first bytes take the general prefilter.
                let mixed = run(envp.as_ptr(), [b"PATH".as_slice(), flavor]);
                assert_eq!(mixed, [want(b"PATH"), want(flavor)], "{list:?}");
                assert_eq!(run(envp.as_ptr(), [flavor]), [want(flavor)], "{list:?}");
                // A name holding `=` goes to the C library once an entry matches up to it.
                let mut bufs = [[0; INLINE]];
                // SAFETY: as in `run`.
                let unusual = unsafe { scan_envp(envp.as_ptr(), &[b"A=B"], &mut bufs) };
                assert_eq!(unusual.is_none(), list.iter().any(|e| e.starts_with(b"A")));
            }
            assert_eq!(run(core::ptr::null(), [flag, flavor]), [None, None]);
        }
    }
}

/// Targets without a known `environ`: the scan defers to `std::env::var_os`.
#[cfg(not(target_os = "linux"))]
mod environ {
    use super::{Buf, Found};

    pub(super) fn scan<const N: usize>(
        _names: &[&[u8]; N],
        _bufs: &mut [Buf; N],
    ) -> Option<[Found; N]> {
        None
    }
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
    /// binary) reads the same through `StdEnv` as through `std::env::var_os`.
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
