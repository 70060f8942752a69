//! Names and raw values of the core's value types, written once: `name_and_raw_impls!` (the
//! `Display`, `FromStr`, `TryFrom<raw>` and `From<T> for raw` impls they share), the spelling
//! rules every `FromStr` follows, and the errors of a value outside a type's domain:
//! [`ParseError`] (a name `FromStr` did not recognise) and [`RawValueError`] (a raw C integer
//! outside the vendor's domain, `TryFrom`).

use core::fmt;
use core::str::FromStr;

// `name_and_raw_impls!`: the one definition of the `Display`, `FromStr`, `TryFrom<raw>` and
// `From<T> for raw` impls the core's value types share, so each type's file lists what it
// implements and spells only what differs: the doc comments, what `FromStr` accepts and the
// error texts.
//
// The type provides `ALL` and `const fn name(self)`; `FromStr` with integers needs
// `const fn from_raw(raw) -> Option<Self>`, with aliases `const fn aliases(self)`, and the raw
// conversions need `from_raw` and `const fn raw(self)`.
//
// ```text
// name_and_raw_impls! {
// impl Display for Region {}
// impl FromStr for Region {
// /// `IRAM`, `DRAM`, `SRAM`, `EXTRAM` or `0`..`3`.
// accepts integers and names, else ParseError("memory region", "IRAM, DRAM, SRAM, EXTRAM or 0..=3");
// }
// impl TryFrom<i32> for Region {
// /// The region for a raw C integer; anything outside `0..=3` is an error.
// else RawValueError("memory region", "0..=3");
// }
// impl From<Region> for i32 {
// /// The raw C argument of a region.
// }
// }
// ```

/// Expands each listed impl; see the module documentation for the input it takes.
macro_rules! name_and_raw_impls {
    () => {};

    // `Display` pads the name (so `{:<6}` aligns it).
    (
        impl Display for $ty:ident { $(#[$doc:meta])* }
        $($rest:tt)*
    ) => {
        impl ::core::fmt::Display for $ty {
            $(#[$doc])*
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.pad(self.name())
            }
        }
        $crate::names::name_and_raw_impls!($($rest)*);
    };

    // `FromStr`: a decimal integer `from_raw` knows first, then a spelling of a name or an alias
    // (`spells`).
    (
        impl FromStr for $ty:ident {
            $(#[$doc:meta])*
            accepts integers, names and aliases, else ParseError($what:literal, $expected:literal);
        }
        $($rest:tt)*
    ) => {
        $crate::names::name_and_raw_impls!(@from_str $ty, [$(#[$doc])*], $what, $expected,
            s => $crate::names::integer(s).and_then($ty::from_raw).or_else(|| {
                $ty::ALL.into_iter().find(|v| {
                    $crate::names::spells(s, v.name())
                        || v.aliases().iter().any(|a| $crate::names::spells(s, a))
                })
            })
        );
        $crate::names::name_and_raw_impls!($($rest)*);
    };
    (
        impl FromStr for $ty:ident {
            $(#[$doc:meta])*
            accepts integers and names, else ParseError($what:literal, $expected:literal);
        }
        $($rest:tt)*
    ) => {
        $crate::names::name_and_raw_impls!(@from_str $ty, [$(#[$doc])*], $what, $expected,
            s => $crate::names::integer(s).and_then($ty::from_raw).or_else(|| {
                $ty::ALL.into_iter().find(|v| $crate::names::spells(s, v.name()))
            })
        );
        $crate::names::name_and_raw_impls!($($rest)*);
    };
    (
        impl FromStr for $ty:ident {
            $(#[$doc:meta])*
            accepts names, else ParseError($what:literal, $expected:literal);
        }
        $($rest:tt)*
    ) => {
        $crate::names::name_and_raw_impls!(@from_str $ty, [$(#[$doc])*], $what, $expected,
            s => $ty::ALL.into_iter().find(|v| $crate::names::spells(s, v.name()))
        );
        $crate::names::name_and_raw_impls!($($rest)*);
    };
    (@from_str $ty:ident, [$(#[$doc:meta])*], $what:literal, $expected:literal, $s:ident => $find:expr) => {
        impl ::core::str::FromStr for $ty {
            type Err = $crate::names::ParseError;

            $(#[$doc])*
            fn from_str($s: &str) -> ::core::result::Result<Self, Self::Err> {
                $find.ok_or($crate::names::ParseError::new(&$crate::names::Domain {
                    what: $what,
                    expected: $expected,
                }))
            }
        }
    };

    // `TryFrom<raw>`: `from_raw`, or the raw value and what is accepted.
    (
        impl TryFrom<$raw:ty> for $ty:ident {
            $(#[$doc:meta])*
            else RawValueError($what:literal, $expected:literal);
        }
        $($rest:tt)*
    ) => {
        impl ::core::convert::TryFrom<$raw> for $ty {
            type Error = $crate::names::RawValueError;

            $(#[$doc])*
            fn try_from(raw: $raw) -> ::core::result::Result<Self, Self::Error> {
                $ty::from_raw(raw).ok_or($crate::names::RawValueError::new(
                    &$crate::names::Domain {
                        what: $what,
                        expected: $expected,
                    },
                    raw as i64,
                ))
            }
        }
        $crate::names::name_and_raw_impls!($($rest)*);
    };

    // `From<T> for raw`: `raw`.
    (
        impl From<$ty:ident> for $raw:ty { $(#[$doc:meta])* }
        $($rest:tt)*
    ) => {
        impl ::core::convert::From<$ty> for $raw {
            $(#[$doc])*
            fn from(value: $ty) -> $raw {
                value.raw()
            }
        }
        $crate::names::name_and_raw_impls!($($rest)*);
    };
}

pub(crate) use name_and_raw_impls;

/// The checks every type's tests run on what `name_and_raw_impls!` gave it; each type's tests
/// add what is particular to it (aliases, messages, the exact domain).
#[cfg(test)]
pub(crate) mod checks {
    extern crate std;
    use core::fmt::{Debug, Display};
    use core::str::FromStr;
    use std::string::ToString;

    use crate::names::ParseError;

    /// Each value's `Display` parses back to it, as written, in lower case and with `-` for `_`.
    pub(crate) fn names_parse_back<T>(all: &[T])
    where
        T: Copy + Debug + Display + PartialEq + FromStr<Err = ParseError>,
    {
        for &value in all {
            let name = value.to_string();
            assert_eq!(name.parse(), Ok(value), "{name:?}");
            let respelled = name.to_ascii_lowercase().replace('_', "-");
            assert_eq!(respelled.parse(), Ok(value), "{respelled:?}");
        }
    }

    /// Each of `bad` is rejected with a `ParseError` naming `what`.
    pub(crate) fn rejects<T>(bad: &[&str], what: &str)
    where
        T: Debug + FromStr<Err = ParseError>,
    {
        for input in bad {
            let err = input.parse::<T>().expect_err(input);
            assert_eq!(err.what(), what, "{input:?}");
        }
    }

    /// Over `raws`: `from_raw` yields a value exactly for the raws in `domain`, that value
    /// converts back to the same raw (`From`) and parses from its decimal spelling, and
    /// `TryFrom` agrees with `from_raw`.
    pub(crate) fn raw_conversions_round_trip<T, R>(
        raws: impl IntoIterator<Item = R>,
        from_raw: fn(R) -> Option<T>,
        domain: impl Fn(R) -> bool,
    ) where
        T: Copy + Debug + PartialEq + TryFrom<R> + FromStr<Err = ParseError>,
        R: Copy + Debug + Display + PartialEq + From<T>,
    {
        for raw in raws {
            let value = from_raw(raw);
            assert_eq!(value.map(R::from), domain(raw).then_some(raw), "{raw}");
            assert_eq!(T::try_from(raw).ok(), value, "{raw}");
            if let Some(value) = value {
                assert_eq!(raw.to_string().parse(), Ok(value), "{raw}");
            }
        }
    }
}

// The errors of a value outside a type's domain: [`ParseError`], a name that `FromStr` did
// not recognise, with the spelling rules every type's `FromStr` shares, and
// [`RawValueError`], a raw C integer outside the vendor's domain for a type (`TryFrom`).
//
// Every type's `FromStr` accepts its canonical name in any ASCII case with `-` and `_`
// interchangeable (`mariana-plus`), the aliases the vendor uses (`RELEASE` for PERF,
// `PROF_CAM` for CAM), and, for the types that are C arguments, the integers the vendor gives
// a meaning to (`0`..`3` for a region, `17` for DKL_PERF).

/// What a type's values are, as its errors name them: what is converted (`memory region`) and
/// what is accepted. One `static` a type, so that an error holds a pointer to it, not two
/// strings (4 bytes instead of 16 on a 32-bit target).
#[derive(Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct Domain {
    /// What is converted, e.g. `memory region`.
    pub(crate) what: &'static str,
    /// The accepted spellings or values, e.g. `IRAM, DRAM, SRAM, EXTRAM or 0..=3`.
    pub(crate) expected: &'static str,
}

/// A name that `FromStr` did not recognise.
///
/// The message lists what is accepted: `unknown memory region (expected IRAM, DRAM, SRAM,
/// EXTRAM or 0..=3)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ParseError {
    domain: &'static Domain,
}

impl ParseError {
    pub(crate) const fn new(domain: &'static Domain) -> Self {
        Self { domain }
    }

    /// What was being parsed, e.g. `memory region`.
    pub const fn what(&self) -> &'static str {
        self.domain.what
    }

    /// The accepted spellings, e.g. `IRAM, DRAM, SRAM, EXTRAM or 0..=3`.
    pub const fn expected(&self) -> &'static str {
        self.domain.expected
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} (expected {})",
            self.domain.what, self.domain.expected
        )
    }
}

impl core::error::Error for ParseError {}

/// `true` when `input` spells `name`: ASCII case ignored, `-` and `_` interchangeable.
pub(crate) const fn spells(input: &str, name: &str) -> bool {
    let (a, b) = (input.as_bytes(), name.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if fold(a[i]) != fold(b[i]) {
            return false;
        }
        i += 1;
    }
    true
}

const fn fold(byte: u8) -> u8 {
    match byte {
        b'-' => b'_',
        other => other.to_ascii_uppercase(),
    }
}

/// `input` as a decimal integer of the C argument's type, `None` otherwise.
pub(crate) fn integer<T: FromStr>(input: &str) -> Option<T> {
    input.parse().ok()
}

/// A raw C integer outside the vendor's domain for the type (`TryFrom`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RawValueError {
    domain: &'static Domain,
    value: i64,
}

impl RawValueError {
    pub(crate) const fn new(domain: &'static Domain, value: i64) -> Self {
        Self { domain, value }
    }

    /// The rejected integer.
    pub const fn value(&self) -> i64 {
        self.value
    }

    /// What was being converted, e.g. `memory region`.
    pub const fn what(&self) -> &'static str {
        self.domain.what
    }
}

impl fmt::Display for RawValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is not a valid {} (expected {})",
            self.value, self.domain.what, self.domain.expected
        )
    }
}

impl core::error::Error for RawValueError {}

// Small enough to return by value on a microcontroller (at most four words on a 32-bit
// target; CI's no_std cross build compiles this for thumbv7em).
#[cfg(target_pointer_width = "32")]
static_assertions::const_assert!(core::mem::size_of::<ParseError>() <= 16);
#[cfg(target_pointer_width = "32")]
static_assertions::const_assert!(core::mem::size_of::<RawValueError>() <= 16);

#[cfg(test)]
mod value_error_tests {
    use super::spells;

    #[test]
    fn spelling_ignores_case_and_dash_versus_underscore_only() {
        assert!(spells("mariana-plus", "MARIANA_PLUS"));
        assert!(spells("Dkl_Perf", "DKL_PERF"));
        assert!(!spells("MARIANAPLUS", "MARIANA_PLUS"));
        assert!(!spells(" IRAM", "IRAM"));
    }
}
