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
