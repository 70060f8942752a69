//! `name_and_raw_impls!`: the one definition of the `Display`, `FromStr`, `TryFrom<raw>` and
//! `From<T> for raw` impls the core's value types share, so each type's file lists what it
//! implements and spells only what differs: the doc comments, what `FromStr` accepts and the
//! error texts.
//!
//! The type provides `ALL` and `const fn name(self)`; `FromStr` with integers needs
//! `const fn from_raw(raw) -> Option<Self>`, with aliases `const fn aliases(self)`, and the raw
//! conversions need `from_raw` and `const fn raw(self)`.
//!
//! ```text
//! name_and_raw_impls! {
//!     impl Display for Region {}
//!     impl FromStr for Region {
//!         /// `IRAM`, `DRAM`, `SRAM`, `EXTRAM` or `0`..`3`.
//!         accepts integers and names, else ParseError("memory region", "IRAM, DRAM, SRAM, EXTRAM or 0..=3");
//!     }
//!     impl TryFrom<i32> for Region {
//!         /// The region for a raw C integer; anything outside `0..=3` is an error.
//!         else RawValueError("memory region", "0..=3");
//!     }
//!     impl From<Region> for i32 {
//!         /// The raw C argument of a region.
//!     }
//! }
//! ```

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
        $crate::name_and_raw_impls::name_and_raw_impls!($($rest)*);
    };

    // `FromStr`: a decimal integer `from_raw` knows first, then a spelling of a name or an alias
    // (`parse_error::spells`).
    (
        impl FromStr for $ty:ident {
            $(#[$doc:meta])*
            accepts integers, names and aliases, else ParseError($what:literal, $expected:literal);
        }
        $($rest:tt)*
    ) => {
        $crate::name_and_raw_impls::name_and_raw_impls!(@from_str $ty, [$(#[$doc])*], $what, $expected,
            s => $crate::parse_error::integer(s).and_then($ty::from_raw).or_else(|| {
                $ty::ALL.into_iter().find(|v| {
                    $crate::parse_error::spells(s, v.name())
                        || v.aliases().iter().any(|a| $crate::parse_error::spells(s, a))
                })
            })
        );
        $crate::name_and_raw_impls::name_and_raw_impls!($($rest)*);
    };
    (
        impl FromStr for $ty:ident {
            $(#[$doc:meta])*
            accepts integers and names, else ParseError($what:literal, $expected:literal);
        }
        $($rest:tt)*
    ) => {
        $crate::name_and_raw_impls::name_and_raw_impls!(@from_str $ty, [$(#[$doc])*], $what, $expected,
            s => $crate::parse_error::integer(s).and_then($ty::from_raw).or_else(|| {
                $ty::ALL.into_iter().find(|v| $crate::parse_error::spells(s, v.name()))
            })
        );
        $crate::name_and_raw_impls::name_and_raw_impls!($($rest)*);
    };
    (
        impl FromStr for $ty:ident {
            $(#[$doc:meta])*
            accepts names, else ParseError($what:literal, $expected:literal);
        }
        $($rest:tt)*
    ) => {
        $crate::name_and_raw_impls::name_and_raw_impls!(@from_str $ty, [$(#[$doc])*], $what, $expected,
            s => $ty::ALL.into_iter().find(|v| $crate::parse_error::spells(s, v.name()))
        );
        $crate::name_and_raw_impls::name_and_raw_impls!($($rest)*);
    };
    (@from_str $ty:ident, [$(#[$doc:meta])*], $what:literal, $expected:literal, $s:ident => $find:expr) => {
        impl ::core::str::FromStr for $ty {
            type Err = $crate::parse_error::ParseError;

            $(#[$doc])*
            fn from_str($s: &str) -> ::core::result::Result<Self, Self::Err> {
                $find.ok_or($crate::parse_error::ParseError::new($what, $expected))
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
            type Error = $crate::raw_value_error::RawValueError;

            $(#[$doc])*
            fn try_from(raw: $raw) -> ::core::result::Result<Self, Self::Error> {
                $ty::from_raw(raw).ok_or($crate::raw_value_error::RawValueError::new(
                    $what,
                    $expected,
                    raw as i64,
                ))
            }
        }
        $crate::name_and_raw_impls::name_and_raw_impls!($($rest)*);
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
        $crate::name_and_raw_impls::name_and_raw_impls!($($rest)*);
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

    use crate::parse_error::ParseError;

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
