//! [`EnvSnapshot`]: the two variables the image resolver reads, captured once.
//!
//! For hosts that settle their environment at start-up: capture once (from the process with
//! feature `std`, or from bytes in `no_std`, also in `const`), then every lookup reads two
//! fixed-capacity fields, with no lock, no allocation and no system call. The one difference
//! from the vendor: later changes to the process environment are not seen.

use super::{Env, FLAVOR_VAR, PairVisitor, REMOVED_FLAG_VAR, as_c_string};

/// Bytes of a value an [`EnvSnapshot`] keeps. Longer than every value the resolver tells apart
/// (`1`, `debug`, `DEBUG`, `test`, `TEST`), so a longer value is kept as its first
/// `SNAPSHOT_VALUE_CAPACITY` bytes, which, like the whole value, match none of them.
pub const SNAPSHOT_VALUE_CAPACITY: usize = 15;

static_assertions::const_assert!(SNAPSHOT_VALUE_CAPACITY > "debug".len());
static_assertions::const_assert!(SNAPSHOT_VALUE_CAPACITY < u8::MAX as usize);

/// One captured value: unset, or its first bytes as a C string (up to the first NUL).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
struct Captured {
    /// `false`: unset.
    set: bool,
    /// `true`: the value was longer than the capacity; `bytes` holds its first bytes.
    truncated: bool,
    /// Bytes used in `bytes`.
    len: u8,
    bytes: [u8; SNAPSHOT_VALUE_CAPACITY],
}

impl Captured {
    const UNSET: Captured = Captured {
        set: false,
        truncated: false,
        len: 0,
        bytes: [0; SNAPSHOT_VALUE_CAPACITY],
    };

    const fn of(value: Option<&[u8]>) -> Captured {
        let Some(value) = value else {
            return Captured::UNSET;
        };
        let value = as_c_string(value);
        let mut bytes = [0; SNAPSHOT_VALUE_CAPACITY];
        let mut len = 0;
        while len < value.len() && len < SNAPSHOT_VALUE_CAPACITY {
            bytes[len] = value[len];
            len += 1;
        }
        Captured {
            set: true,
            truncated: value.len() > SNAPSHOT_VALUE_CAPACITY,
            len: len as u8,
            bytes,
        }
    }

    #[inline]
    const fn get(&self) -> Option<&[u8]> {
        if !self.set {
            return None;
        }
        match self.bytes.split_at_checked(self.len as usize) {
            Some((value, _)) => Some(value),
            None => Some(&self.bytes),
        }
    }
}

/// `NRTUCODE_MPLUS_ON_MARIANA` and `NEURON_UCODE_FLAVOR`, captured once; an [`Env`] that
/// answers every lookup from the capture.
///
/// Answers exactly like the vendor's `getenv` + `strcmp` over the environment as it was when
/// captured: values are kept as C strings (up to the first NUL); a value longer than
/// [`SNAPSHOT_VALUE_CAPACITY`] is kept as its first bytes and flagged
/// ([`is_truncated`](Self::is_truncated)): present, equal to none of the values the resolver
/// tells apart, exactly as the whole value. Every other variable reads as unset. **Later
/// changes to the environment are not seen**; take a new snapshot after changing it.
///
/// ```
/// use nrtucode::{get_memory_image, EnvSnapshot};
/// const ENV: EnvSnapshot = EnvSnapshot::from_values(None, Some(b"debug"));
/// let debug = get_memory_image(7, 0, 0, &ENV)?;
/// assert_eq!(debug, get_memory_image(7, 0, 2, &ENV)?);
/// # Ok::<(), nrtucode::ResolveErr>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct EnvSnapshot {
    removed_flag: Captured,
    flavor: Captured,
    /// Print the vendor's removal notice to stderr (captured from the process, feature `std`).
    notice: bool,
}

impl Default for EnvSnapshot {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl EnvSnapshot {
    /// Nothing set: like [`NoEnv`](crate::NoEnv).
    pub const EMPTY: EnvSnapshot = EnvSnapshot::from_values(None, None);

    /// A snapshot of these values of `NRTUCODE_MPLUS_ON_MARIANA` and `NEURON_UCODE_FLAVOR`
    /// (`None`: unset), as raw bytes. Usable in `const` and `no_std`; prints nothing when the
    /// removed flag trips.
    pub const fn from_values(removed_flag: Option<&[u8]>, flavor: Option<&[u8]>) -> Self {
        EnvSnapshot {
            removed_flag: Captured::of(removed_flag),
            flavor: Captured::of(flavor),
            notice: false,
        }
    }

    /// Captures the two variables from the process environment now (through
    /// `std::env::var_os`, so it is safe whatever other threads do with the environment). Like
    /// the vendor, a lookup that trips the removed flag prints one line to stderr.
    #[cfg(feature = "std")]
    pub fn capture() -> Self {
        extern crate std;
        let read = |name| std::env::var_os(name);
        let (flag, flavor) = (read(REMOVED_FLAG_VAR), read(FLAVOR_VAR));
        EnvSnapshot {
            notice: true,
            ..Self::from_values(
                flag.as_deref().map(std::ffi::OsStr::as_encoded_bytes),
                flavor.as_deref().map(std::ffi::OsStr::as_encoded_bytes),
            )
        }
    }

    /// The captured `NRTUCODE_MPLUS_ON_MARIANA`, as the resolver sees it.
    pub const fn removed_flag(&self) -> Option<&[u8]> {
        self.removed_flag.get()
    }

    /// The captured `NEURON_UCODE_FLAVOR`, as the resolver sees it.
    pub const fn flavor(&self) -> Option<&[u8]> {
        self.flavor.get()
    }

    /// `true` when a value was longer than [`SNAPSHOT_VALUE_CAPACITY`] and only its first
    /// bytes are kept (the resolver's answers are unchanged by that).
    pub const fn is_truncated(&self) -> bool {
        self.removed_flag.truncated || self.flavor.truncated
    }

    #[inline]
    fn value(&self, name: &str) -> Option<&[u8]> {
        if name == REMOVED_FLAG_VAR {
            self.removed_flag.get()
        } else if name == FLAVOR_VAR {
            self.flavor.get()
        } else {
            None
        }
    }
}

impl Env for EnvSnapshot {
    #[inline]
    fn visit_var(&self, name: &str, visit: &mut dyn FnMut(Option<&[u8]>)) {
        visit(self.value(name));
    }

    #[inline]
    fn visit_two_vars(&self, first: &str, second: &str, visit: &mut PairVisitor<'_>) {
        visit(self.value(first), self.value(second));
    }

    fn removed_flag_notice(&self) {
        #[cfg(feature = "std")]
        if self.notice {
            super::std_env::print_removal_notice();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(env: &EnvSnapshot, name: &str) -> Option<([u8; 32], usize)> {
        let mut out = None;
        env.visit_var(name, &mut |v| {
            out = v.map(|v| {
                let mut buf = [0; 32];
                buf[..v.len()].copy_from_slice(v);
                (buf, v.len())
            })
        });
        out
    }

    #[test]
    fn values_are_c_strings_of_bounded_length() {
        let env = EnvSnapshot::from_values(Some(b"1\0junk"), Some(b"test"));
        assert_eq!(env.removed_flag(), Some(b"1".as_slice()));
        assert_eq!(env.flavor(), Some(b"test".as_slice()));
        assert!(!env.is_truncated());
        let long = [b'd'; 40];
        let env = EnvSnapshot::from_values(Some(b""), Some(&long));
        assert_eq!(env.removed_flag(), Some(b"".as_slice()));
        assert_eq!(env.flavor(), Some(&long[..SNAPSHOT_VALUE_CAPACITY]));
        assert!(env.is_truncated());
        let exact = [b'x'; SNAPSHOT_VALUE_CAPACITY];
        let env = EnvSnapshot::from_values(None, Some(&exact));
        assert!(!env.is_truncated());
        assert_eq!(env.flavor(), Some(exact.as_slice()));
        assert_eq!(EnvSnapshot::EMPTY, EnvSnapshot::default());
        assert_eq!(EnvSnapshot::EMPTY.flavor(), None);
    }

    #[test]
    fn only_the_two_variables_are_visible() {
        let env = EnvSnapshot::from_values(Some(b"0"), Some(b"debug"));
        assert_eq!(seen(&env, REMOVED_FLAG_VAR).map(|(_, n)| n), Some(1));
        assert_eq!(
            seen(&env, FLAVOR_VAR).map(|(b, n)| (b[..5] == *b"debug", n)),
            Some((true, 5))
        );
        assert_eq!(seen(&env, "PATH"), None);
        let mut pair = None;
        env.visit_two_vars(FLAVOR_VAR, REMOVED_FLAG_VAR, &mut |a, b| {
            pair = Some((a.map(<[u8]>::len), b.map(<[u8]>::len)))
        });
        assert_eq!(pair, Some((Some(5), Some(1))));
    }

    #[test]
    fn built_in_const() {
        const ENV: EnvSnapshot = EnvSnapshot::from_values(Some(b"1"), None);
        assert_eq!(ENV.removed_flag(), Some(b"1".as_slice()));
        assert_eq!(
            crate::get_memory_image(7, 0, 1, &ENV),
            Err(crate::ResolveErr::RemovedFlag)
        );
    }
}
