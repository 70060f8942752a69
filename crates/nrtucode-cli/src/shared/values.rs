//! The `clap` value enums and the C-argument parsers of the command line, built from the
//! core's one name table.
//!
//! Each value enum wraps a core type and lists the core's values (`Region::ALL`, ...) under the
//! core's names: shown in lowercase with `-` between words (`mariana-plus`, `dkl-perf`), and
//! accepted in any case, with `_` too, under the core's aliases (`release`, `prof-cam`).
//! Nothing here spells a name itself.
//!
//! The resolvers' arguments (idx, region, flavor, kind) take what a C caller can pass: a name,
//! or any integer of the C argument's type, negative ones included (`-1`, no `--` needed),
//! handed to the resolver as is, so an out-of-range one gets the vendor's code and message. An
//! integer outside the C type is refused as such; only a word that is neither an integer nor a
//! name is called "not a name".

use clap::ValueEnum;
use clap::builder::{PossibleValue, TypedValueParser};
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

/// `s` as an integer when it is one (an optional sign, then decimal digits): `Some(Ok(n))`,
/// or `Some(Err(message))` when it lies outside `min..=max`, the C type `c_type`; `None` for a
/// word that is not an integer.
fn c_integer(s: &str, min: i64, max: i64, c_type: &str) -> Option<Result<i64, String>> {
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(
        s.parse::<i64>()
            .ok()
            .filter(|n| (min..=max).contains(n))
            .ok_or_else(|| format!("{s} is outside C {c_type} ({min}..={max})")),
    )
}

/// Parses a slot for `resolve` and `prof`: a slot name (`cayman-nx-act`), or any integer a C
/// caller can pass as the `unsigned idx` (an `int` or an `unsigned int`; a negative one
/// converts as C converts it, `-1` to 4294967295), passed to the resolver as is (38 and above
/// answer code 1).
pub fn parse_raw_index(s: &str) -> Result<u32, String> {
    match c_integer(s, i32::MIN.into(), u32::MAX.into(), "int or unsigned int") {
        // In range: a negative one wraps like C's int-to-unsigned conversion.
        Some(n) => n.map(|n| n as u32),
        None => s
            .parse::<ImageIndex>()
            .map(ImageIndex::raw)
            .map_err(|_| format!("'{s}' is not a slot name such as cayman-nx-act, nor an integer")),
    }
}

/// The parser of one C `int` argument: a name (or alias) of the value enum `A`, or any C
/// `int`; the help lists `A`'s names.
#[derive(Clone, Copy, Debug)]
pub struct CInt<A> {
    /// The C integer of a value of `A`.
    raw: fn(&A) -> i32,
    /// What the argument is, for the message (`a region`).
    what: &'static str,
}

impl<A: ValueEnum + Clone + Send + Sync + 'static> CInt<A> {
    /// Parses `s`: an integer in C `int`'s range as is, else a name of `A` (any case, `_` or
    /// `-`).
    pub fn parse(&self, s: &str) -> Result<i32, String> {
        match c_integer(s, i32::MIN.into(), i32::MAX.into(), "int") {
            Some(n) => n.map(|n| n as i32),
            None => A::from_str(s, true)
                .map(|a| (self.raw)(&a))
                .map_err(|_| format!("'{s}' is not {} name, nor an integer", self.what)),
        }
    }
}

impl<A: ValueEnum + Clone + Send + Sync + 'static> TypedValueParser for CInt<A> {
    type Value = i32;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<i32, clap::Error> {
        let text = value.to_string_lossy();
        self.parse(&text).map_err(|message| {
            let arg = arg.map_or_else(|| "...".to_owned(), ToString::to_string);
            let names: Vec<String> = self
                .possible_values()
                .into_iter()
                .flatten()
                .map(|v| v.get_name().to_owned())
                .collect();
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!(
                    "invalid value '{text}' for '{arg}': {message}\n  [possible values: {}, or any C int]\n",
                    names.join(", ")
                ),
            )
            .with_cmd(cmd)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            A::value_variants()
                .iter()
                .filter_map(ValueEnum::to_possible_value),
        ))
    }
}

/// The region argument: a region name or any C `int`.
pub const REGION: CInt<RegionArg> = CInt {
    raw: |r| r.0.raw(),
    what: "a region",
};
/// The flavor argument: a flavor name (or alias) or any C `int`.
pub const FLAVOR: CInt<FlavorArg> = CInt {
    raw: |f| f.0.raw(),
    what: "a flavor",
};
/// The profiler table kind argument: `cam`, `table` (or an alias) or any C `int`.
pub const KIND: CInt<KindArg> = CInt {
    raw: |k| k.0.raw(),
    what: "a profiler table kind",
};

/// A table class, as `--class` and `pack --fixtures` take it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ClassArg {
    /// The full library's tables.
    Full,
    /// The front library's.
    Front,
}

impl From<ClassArg> for nrtucode::partition::TableClass {
    fn from(c: ClassArg) -> Self {
        match c {
            ClassArg::Full => nrtucode::partition::TableClass::Full,
            ClassArg::Front => nrtucode::partition::TableClass::Front,
        }
    }
}

/// How `pack --compress` stores each blob.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum CodecArg {
    /// Every blob stored as it is.
    None,
    /// Raw deflate where it saves space, stored otherwise.
    Deflate,
}

impl From<CodecArg> for nrtucode_pack::Compression {
    fn from(c: CodecArg) -> Self {
        match c {
            CodecArg::None => nrtucode_pack::Compression::Stored,
            CodecArg::Deflate => nrtucode_pack::Compression::Deflate,
        }
    }
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
    fn indices_take_what_c_takes() {
        assert_eq!(parse_raw_index("38"), Ok(38));
        assert_eq!(parse_raw_index("Cayman-NX-act"), Ok(7));
        assert_eq!(parse_raw_index("CAYMAN_NX_ACT"), Ok(7));
        assert_eq!(parse_raw_index("-1"), Ok(u32::MAX));
        assert_eq!(parse_raw_index("-2147483648"), Ok(1 << 31));
        assert_eq!(parse_raw_index("4294967295"), Ok(u32::MAX));
        assert_eq!(parse_raw_index("+7"), Ok(7));
        let big = parse_raw_index("99999999999").unwrap_err();
        assert!(big.contains("outside C int"), "{big}");
        assert!(parse_raw_index("4294967296").is_err());
        assert!(parse_raw_index("-2147483649").is_err());
        let word = parse_raw_index("cayman").unwrap_err();
        assert!(
            word.contains("cayman-nx-act") && !word.contains("expected"),
            "{word}"
        );
    }

    #[test]
    fn c_int_arguments_take_any_int_and_the_names() {
        assert_eq!(REGION.parse("iram"), Ok(0));
        assert_eq!(REGION.parse("EXTRAM"), Ok(3));
        assert_eq!(REGION.parse("5"), Ok(5));
        assert_eq!(REGION.parse("-1"), Ok(-1));
        assert_eq!(FLAVOR.parse("dkl_perf"), Ok(17));
        assert_eq!(FLAVOR.parse("release"), Ok(1));
        assert_eq!(FLAVOR.parse("99"), Ok(99));
        assert_eq!(FLAVOR.parse("-2147483648"), Ok(i32::MIN));
        assert_eq!(KIND.parse("prof-table"), Ok(1));
        assert_eq!(KIND.parse("2"), Ok(2));
        let big = FLAVOR.parse("2147483648").unwrap_err();
        assert_eq!(
            big,
            "2147483648 is outside C int (-2147483648..=2147483647)"
        );
        assert_eq!(
            REGION.parse("flash").unwrap_err(),
            "'flash' is not a region name, nor an integer"
        );
        assert!(REGION.parse("").is_err() && REGION.parse("-").is_err());
    }
}
