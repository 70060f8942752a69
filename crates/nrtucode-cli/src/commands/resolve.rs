//! `nrtucode resolve`: call the core crate's resolvers like a C caller would.
//!
//! The arguments go to the resolver as raw integers, so out-of-range values give the vendor's
//! codes (index 38 → 1, region 4 → 2, ...). The exit code is the resolver's code.

use std::path::Path;
use std::process::ExitCode;

use nrtucode::{Env, Flavor, Generation, ProfKind, Region, get_hwdecode_table, get_memory_image};
use nrtucode_facts::hex::lower_hex;
use sha2::{Digest, Sha256};

use crate::commands::output::{err_fmt, exit_code, fail, out_fmt};

/// What to resolve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Query {
    /// `get_memory_image(idx, region, flavor)`.
    Image {
        /// Flat slot index.
        idx: u32,
        /// Region 0..=3 (anything else gives code 2).
        region: i32,
        /// Flavor key, 0 = from `NEURON_UCODE_FLAVOR`.
        flavor: i32,
    },
    /// `get_hwdecode_table(idx, kind)`.
    Prof {
        /// Flat slot index.
        idx: u32,
        /// 0 PROF_CAM, 1 PROF_TABLE.
        kind: i32,
    },
}

/// Parses a region: `0`..`3` or a region name (`iram`, `dram`, `sram`, `extram`, any case);
/// other integers pass through to the resolver.
pub(crate) fn parse_region(s: &str) -> Result<i32, String> {
    if let Some(region) = Region::ALL
        .into_iter()
        .find(|r| r.name().eq_ignore_ascii_case(s))
    {
        return Ok(region.raw());
    }
    s.parse().map_err(|_| {
        let names = Region::ALL.map(|r| r.name().to_ascii_lowercase());
        format!("region {s:?}: expected 0-3 or {}", names.join(", "))
    })
}

/// The spelling of `flavor` in the error message of [`parse_flavor`]: the name every
/// generation but SUNDA uses (SUNDA's `RELEASE` for PERF is accepted too), lowercase, `-`
/// between words.
fn flavor_spelling(flavor: Flavor) -> String {
    flavor
        .variant_name(Generation::Cayman)
        .to_ascii_lowercase()
        .replace('_', "-")
}

/// Parses a flavor: an integer, or a flavor name as any generation spells it (`auto`,
/// `perf`/`release`, `debug`, `test`, `dkl-perf`, `dkl-debug`, `dkl-test`; any case, `-` or
/// `_`).
pub(crate) fn parse_flavor(s: &str) -> Result<i32, String> {
    let wanted = s.to_ascii_uppercase().replace('-', "_");
    let named = Flavor::ALL.into_iter().find(|f| {
        Generation::ALL
            .into_iter()
            .any(|g| f.variant_name(g) == wanted)
    });
    if let Some(flavor) = named {
        return Ok(flavor.raw());
    }
    wanted.parse().map_err(|_| {
        let names = Flavor::ALL.map(flavor_spelling);
        format!("flavor {s:?}: expected an integer or {}", names.join(", "))
    })
}

/// Parses a profiler kind: `cam`/`0` or `table`/`1` (any case); other integers pass through.
pub(crate) fn parse_kind(s: &str) -> Result<i32, String> {
    if let Some(kind) = ProfKind::ALL
        .into_iter()
        .find(|k| k.name().eq_ignore_ascii_case(s))
    {
        return Ok(kind.raw());
    }
    s.parse().map_err(|_| {
        let names = ProfKind::ALL.map(|k| k.name().to_ascii_lowercase());
        format!("profiler kind {s:?}: expected {}", names.join(" or "))
    })
}

/// How to show the bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Show {
    /// Hex-dump this many leading bytes.
    pub hex: Option<usize>,
    /// Print the sha256.
    pub sha256: bool,
}

/// The result of one resolve: the text to print and the exit code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The bytes (empty on error).
    pub bytes: &'static [u8],
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// The resolver's code.
    pub code: i32,
}

/// Classic 16-bytes-a-line hex dump of `bytes`.
pub(crate) fn hex_dump(bytes: &[u8]) -> String {
    let mut out = String::new();
    for (i, chunk) in bytes.chunks(16).enumerate() {
        out.push_str(&format!("{:08x}:", i * 16));
        for b in chunk {
            out.push_str(&format!(" {b:02x}"));
        }
        out.push_str(&"   ".repeat(16 - chunk.len()));
        out.push_str("  |");
        out.extend(chunk.iter().map(|&b| {
            if (0x20..0x7f).contains(&b) {
                b as char
            } else {
                '.'
            }
        }));
        out.push_str("|\n");
    }
    out
}

/// Resolves `query` with `env` and renders the result.
pub fn resolve<E: Env + ?Sized>(query: Query, show: Show, env: &E) -> Resolved {
    let (what, result) = match query {
        Query::Image {
            idx,
            region,
            flavor,
        } => (
            format!("get_memory_image(idx {idx}, region {region}, flavor {flavor})"),
            get_memory_image(idx, region, flavor, env),
        ),
        Query::Prof { idx, kind } => (
            format!("get_hwdecode_table(idx {idx}, kind {kind})"),
            get_hwdecode_table(idx, kind),
        ),
    };
    match result {
        Ok(bytes) => {
            let mut stdout = format!("{what}: code 0, {} bytes\n", bytes.len());
            if show.sha256 {
                stdout.push_str(&format!("sha256 {}\n", lower_hex(&Sha256::digest(bytes))));
            }
            if let Some(n) = show.hex {
                stdout.push_str(&hex_dump(&bytes[..n.min(bytes.len())]));
            }
            Resolved {
                bytes,
                stdout,
                stderr: String::new(),
                code: 0,
            }
        }
        Err(e) => Resolved {
            bytes: &[],
            stdout: String::new(),
            stderr: format!("{what}: code {} ({})\n", e.code(), e.message()),
            code: e.code(),
        },
    }
}

/// Resolves `query` with the process environment, prints the result and, on success, writes
/// the bytes to `output`; the exit code is the resolver's code.
pub(crate) fn run(query: Query, show: Show, output: Option<&Path>) -> ExitCode {
    let r = resolve(query, show, &nrtucode::StdEnv);
    out_fmt!("{}", r.stdout);
    err_fmt!("{}", r.stderr);
    if r.code == 0
        && let Some(path) = output
        && let Err(e) = std::fs::write(path, r.bytes)
    {
        return fail(format!("{}: {e}", path.display()));
    }
    exit_code(r.code)
}

#[cfg(test)]
mod tests {
    use super::{parse_flavor, parse_kind, parse_region};

    #[test]
    fn region_names_and_integers_parse_to_the_raw_argument() {
        for (text, raw) in [
            ("iram", 0),
            ("DRAM", 1),
            ("Sram", 2),
            ("extram", 3),
            ("7", 7),
        ] {
            assert_eq!(parse_region(text), Ok(raw), "{text}");
        }
        assert_eq!(
            parse_region("flash"),
            Err("region \"flash\": expected 0-3 or iram, dram, sram, extram".into())
        );
    }

    #[test]
    fn flavor_names_in_any_generation_spelling_parse_to_the_raw_argument() {
        for (text, raw) in [
            ("auto", 0),
            ("perf", 1),
            ("RELEASE", 1),
            ("debug", 2),
            ("Test", 3),
            ("dkl-perf", 17),
            ("DKL_DEBUG", 18),
            ("dkl_test", 19),
            ("42", 42),
        ] {
            assert_eq!(parse_flavor(text), Ok(raw), "{text}");
        }
        assert_eq!(
            parse_flavor("fast"),
            Err(
                "flavor \"fast\": expected an integer or auto, perf, debug, test, dkl-perf, \
                 dkl-debug, dkl-test"
                    .into()
            )
        );
    }

    #[test]
    fn profiler_kind_names_and_integers_parse_to_the_raw_argument() {
        for (text, raw) in [("cam", 0), ("TABLE", 1), ("5", 5)] {
            assert_eq!(parse_kind(text), Ok(raw), "{text}");
        }
        assert_eq!(
            parse_kind("map"),
            Err("profiler kind \"map\": expected cam or table".into())
        );
    }
}
