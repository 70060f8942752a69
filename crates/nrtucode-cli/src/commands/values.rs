//! The `clap` value enums of the command line, built from the core's one name table.
//!
//! Each wraps a core type and lists the core's values (`Region::ALL`, ...) under the core's
//! names: shown in lowercase with `-` between words (`mariana-plus`, `dkl-perf`), and accepted
//! in any case, with `_` too, under the core's aliases (`release`, `prof-cam`) and, for the C
//! arguments, the vendor's integers (`0` for IRAM, `17` for DKL_PERF). A value outside these is
//! a usage error that lists the valid ones. Nothing here spells a name itself.

use clap::ValueEnum;
use clap::builder::PossibleValue;
use nrtucode::{Flavor, Generation, ImageIndex, ProfKind, Region};

/// The displayed spelling of a core name: lowercase, `-` between words.
fn shown(name: &str) -> String {
    name.to_ascii_lowercase().replace('_', "-")
}

/// A possible value for the core name `name`, with `aliases` (core spellings) and `number`
/// (the C integer) accepted too.
fn possible(name: &str, aliases: &[&str], number: Option<i32>) -> PossibleValue {
    let mut value = PossibleValue::new(shown(name));
    let mut spellings: Vec<String> = vec![name.to_owned()];
    spellings.extend(aliases.iter().map(|a| (*a).to_owned()));
    spellings.extend(aliases.iter().map(|a| shown(a)));
    spellings.extend(number.map(|n| n.to_string()));
    for spelling in spellings {
        if spelling != shown(name) {
            value = value.alias(spelling);
        }
    }
    value
}

macro_rules! value_enum {
    ($(#[$doc:meta])* $arg:ident($core:ty), $count:literal, |$v:ident| $possible:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $arg(pub $core);

        impl $arg {
            /// Every value, in the core's order.
            const ALL: [$arg; $count] = {
                let mut all = [$arg(<$core>::ALL[0]); $count];
                let mut i = 0;
                while i < $count {
                    all[i] = $arg(<$core>::ALL[i]);
                    i += 1;
                }
                all
            };
        }

        impl ValueEnum for $arg {
            fn value_variants<'a>() -> &'a [Self] {
                &Self::ALL
            }

            fn to_possible_value(&self) -> Option<PossibleValue> {
                let $v = self.0;
                Some($possible)
            }
        }
    };
}

value_enum!(
    /// `--gen`: a generation.
    GenerationArg(Generation), 5, |g| possible(g.name(), &[], None)
);
value_enum!(
    /// A memory region: name or `0`..`3`.
    RegionArg(Region), 4, |r| possible(r.name(), &[], Some(r.raw()))
);
value_enum!(
    /// A flavor: name (`release` for PERF) or its integer.
    FlavorArg(Flavor), 7, |f| possible(f.name(), f.aliases(), Some(f.raw()))
);
value_enum!(
    /// A profiler table kind: `cam`, `table` (`prof-cam`, `prof-table`) or `0`, `1`.
    KindArg(ProfKind), 2, |k| possible(k.name(), k.aliases(), Some(k.raw()))
);

/// Parses a slot for `resolve`: any unsigned integer, passed to the resolver as is (38 and
/// above answer code 1), or a slot name (`cayman-nx-act`).
pub(crate) fn parse_raw_index(s: &str) -> Result<u32, String> {
    s.parse::<u32>()
        .ok()
        .or_else(|| s.parse::<ImageIndex>().ok().map(ImageIndex::raw))
        .ok_or_else(|| "expected an integer or a slot name such as cayman-nx-act".to_owned())
}

/// Parses a valid slot: `0`..`37` or a slot name.
pub(crate) fn parse_index(s: &str) -> Result<ImageIndex, String> {
    s.parse::<ImageIndex>().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every spelling clap accepts means what the core's `FromStr` says it means.
    fn agrees<A: ValueEnum + Copy, T: std::str::FromStr + PartialEq + std::fmt::Debug>(
        core: impl Fn(A) -> T,
    ) -> usize {
        let mut spellings = 0;
        for arg in A::value_variants() {
            let value = arg.to_possible_value().unwrap();
            for name in value.get_name_and_aliases() {
                for spelling in [name.to_owned(), name.to_ascii_uppercase()] {
                    let parsed = A::from_str(&spelling, true).unwrap();
                    assert_eq!(core(parsed), core(*arg), "{spelling}");
                    assert_eq!(spelling.parse::<T>().ok(), Some(core(*arg)), "{spelling}");
                    spellings += 1;
                }
            }
        }
        spellings
    }

    #[test]
    fn clap_spellings_are_the_cores() {
        assert!(agrees(|g: GenerationArg| g.0) >= 10);
        assert!(agrees(|r: RegionArg| r.0) >= 16);
        assert!(agrees(|f: FlavorArg| f.0) >= 7 * 4);
        assert!(agrees(|k: KindArg| k.0) >= 2 * 4);
        let names: Vec<String> = FlavorArg::value_variants()
            .iter()
            .map(|f| f.to_possible_value().unwrap().get_name().to_owned())
            .collect();
        assert_eq!(
            names,
            [
                "auto",
                "perf",
                "debug",
                "test",
                "dkl-perf",
                "dkl-debug",
                "dkl-test"
            ]
        );
        assert!(FlavorArg::from_str("4", true).is_err());
        assert!(RegionArg::from_str("4", true).is_err());
    }

    #[test]
    fn indices_raw_for_resolve_valid_for_the_rest() {
        assert_eq!(parse_raw_index("38"), Ok(38));
        assert_eq!(parse_raw_index("Cayman-NX-act"), Ok(7));
        assert!(parse_raw_index("-1").is_err());
        assert_eq!(parse_index("7"), Ok(ImageIndex::CAYMAN_NX_ACT));
        assert!(parse_index("38").is_err());
    }
}
