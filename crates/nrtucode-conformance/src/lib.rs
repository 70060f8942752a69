//! Inputs and bookkeeping of the differential oracle (`tests/differential.rs`).
//!
//! The oracle builds the C look-alike of the vendor library with gcc, loads it, and compares its
//! two resolvers with ours: the raw API ([`nrtucode::get_memory_image`]), the typed API
//! ([`nrtucode::resolve_image`]) and the C ABI (`nrtucode_capi`), on the input grid and the
//! environment matrix below plus seeded random tuples.
//!
//! Which look-alike to compare with follows this crate's features: `full` (default) compares
//! the complete build with `libnrtucode_internal.so`'s look-alike, `front` (with
//! `--no-default-features`, in a cargo invocation of its own so that no other workspace member
//! unifies the core's features back to the defaults) compares the front selection with
//! `libnrtucode.so`'s. [`build_matches_library`] refuses to compare a mismatched pair.
#![forbid(unsafe_code)]

pub mod partition_set;

use nrtucode::NoEnv;
pub use nrtucode_lookalike::LibraryBuild;

/// The look-alike build this build of the core must match.
pub const LIBRARY: LibraryBuild = if nrtucode_capi::FRONT {
    LibraryBuild::Front
} else {
    LibraryBuild::Full
};

/// Symbol prefix of the look-alike's resolvers in the oracle (no clash with the C ABI's names).
pub const LOOKALIKE_PREFIX: &str = "lookalike_";

/// Every `idx` of the grid: 0..=40 and the edges of the 32-bit range.
pub fn idx_values() -> Vec<u32> {
    (0..=40).chain([(1 << 31) - 1, 1 << 31, u32::MAX]).collect()
}

/// Every `region` of the grid.
pub fn region_values() -> Vec<i32> {
    [i32::MIN, -1]
        .into_iter()
        .chain(0..=4)
        .chain([i32::MAX])
        .collect()
}

/// Every `flavor` of the grid.
pub fn flavor_values() -> Vec<i32> {
    [i32::MIN, -1]
        .into_iter()
        .chain(0..=20)
        .chain([255, 256, i32::MAX])
        .collect()
}

/// Every profiler `kind` of the grid.
pub const KIND_VALUES: [i32; 4] = [-1, 0, 1, 2];

/// Values of `NRTUCODE_MPLUS_ON_MARIANA` in the matrix (`None` = unset).
pub use nrtucode_testcases::env_matrix::REMOVED_FLAG_VALUES;
/// Values of `NEURON_UCODE_FLAVOR` in the matrix (`None` = unset).
pub use nrtucode_testcases::env_matrix::flavor_values as flavor_env_values;

/// One cell of the environment matrix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvCase {
    /// `NEURON_UCODE_FLAVOR`, `None` = unset.
    pub flavor: Option<Vec<u8>>,
    /// `NRTUCODE_MPLUS_ON_MARIANA`, `None` = unset.
    pub removed_flag: Option<&'static [u8]>,
}

impl EnvCase {
    /// The same variables as `(name, value)` pairs for the core's slice [`nrtucode::Env`].
    pub fn pairs(&self) -> Vec<(&'static str, &[u8])> {
        let mut out = Vec::new();
        if let Some(v) = &self.flavor {
            out.push((nrtucode::FLAVOR_VAR, v.as_slice()));
        }
        if let Some(v) = self.removed_flag {
            out.push((nrtucode::REMOVED_FLAG_VAR, v));
        }
        out
    }

    /// A short printable label.
    pub fn label(&self) -> String {
        let show = |v: Option<&[u8]>| match v {
            None => "unset".to_owned(),
            Some(v) if v.len() > 16 => format!("<{} bytes>", v.len()),
            Some(v) => format!("{:?}", String::from_utf8_lossy(v)),
        };
        format!(
            "FLAVOR={} REMOVED_FLAG={}",
            show(self.flavor.as_deref()),
            show(self.removed_flag)
        )
    }
}

/// The full matrix: every flavor value × every removed-flag value (13 × 7 = 91 cells).
pub fn env_matrix() -> Vec<EnvCase> {
    let mut out = Vec::new();
    for flavor in flavor_env_values() {
        for removed_flag in REMOVED_FLAG_VALUES {
            out.push(EnvCase {
                flavor: flavor.clone(),
                removed_flag,
            });
        }
    }
    out
}

/// SplitMix64: a tiny deterministic generator for the random tuples.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator with a fixed seed.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value below `n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    /// A random `idx`: mostly in and around the table, sometimes anywhere in `u32`.
    pub fn idx(&mut self) -> u32 {
        match self.below(8) {
            0..=4 => self.below(41) as u32,
            5 => self.pick(&[(1 << 31) - 1, 1 << 31, u32::MAX, 38, 37]),
            _ => self.next_u64() as u32,
        }
    }

    /// A random `region`: mostly near 0..=3, sometimes anywhere in `i32`.
    pub fn region(&mut self) -> i32 {
        match self.below(8) {
            0..=4 => self.below(7) as i32 - 1,
            5 => self.pick(&[i32::MIN, i32::MAX, -2, 4, 5]),
            _ => self.next_u64() as i32,
        }
    }

    /// A random `flavor`: mostly keys and their neighbours, sometimes anywhere in `i32`.
    pub fn flavor(&mut self) -> i32 {
        match self.below(8) {
            0..=2 => self.pick(&[0, 1, 2, 3, 17, 18, 19]),
            3..=4 => self.below(24) as i32 - 2,
            5 => self.pick(&[i32::MIN, i32::MAX, 255, 256, 0x1_0001, -17]),
            _ => self.next_u64() as i32,
        }
    }

    /// A random profiler `kind`.
    pub fn kind(&mut self) -> i32 {
        match self.below(4) {
            0..=2 => self.below(4) as i32 - 1,
            _ => self.next_u64() as i32,
        }
    }
}

/// Checks that the core was built with the feature selection [`LIBRARY`] mirrors, so that a
/// feature-unification surprise fails loudly instead of comparing the wrong pair.
pub fn build_matches_library() -> Result<(), String> {
    let debug = nrtucode::get_memory_image(7, 0, 2, &NoEnv);
    let maverick = nrtucode::get_memory_image(37, 2, 1, &NoEnv);
    let perf = nrtucode::get_memory_image(7, 0, 1, &NoEnv);
    // The look-alike serves the built-in fixtures; a core built from NRTUCODE_BLOB_DIR serves
    // other bytes and cannot be compared with it.
    let fixture = perf
        .map(|b| b.starts_with(b"NRTUCODE FIXTURE CAYMAN_NX_ACT_PERF_IRAM\n"))
        .unwrap_or(false);
    if !fixture {
        return Err(
            "nrtucode does not embed the built-in fixtures (NRTUCODE_BLOB_DIR set?); \
                    the look-alike mirrors the fixture set only"
                .to_owned(),
        );
    }
    let ok = match LIBRARY {
        LibraryBuild::Full => debug.is_ok() && maverick.is_ok() && perf.is_ok(),
        LibraryBuild::Front => debug.is_err() && maverick.is_err() && perf.is_ok(),
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "nrtucode was built with features that do not match the {} look-alike \
             (CAYMAN ACT DEBUG: {:?}, MAVERICK Q7 PERF: {:?}); run the front comparison in its \
             own cargo invocation",
            LIBRARY.name(),
            debug.map(<[u8]>::len),
            maverick.map(<[u8]>::len)
        ))
    }
}

/// Mismatch bookkeeping: counts every comparison and keeps the first few failures.
#[derive(Debug, Default)]
pub struct Tally {
    /// Comparisons made.
    pub comparisons: u64,
    /// Comparisons that failed.
    pub mismatches: u64,
    /// The first failures, for the report.
    pub samples: Vec<String>,
}

impl Tally {
    /// Records one comparison; `describe` is called only on a mismatch.
    pub fn check(&mut self, ok: bool, describe: impl FnOnce() -> String) {
        self.comparisons += 1;
        if !ok {
            self.mismatches += 1;
            if self.samples.len() < 20 {
                self.samples.push(describe());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_cover_every_boundary_value_and_the_whole_env_matrix() {
        assert_eq!(idx_values().len(), 44);
        assert_eq!(region_values().len(), 8);
        assert_eq!(flavor_values().len(), 26);
        assert_eq!(env_matrix().len(), 14 * 7); // 14 flavor values (two non-UTF-8) x 7 flag values
        assert!(
            flavor_env_values()
                .iter()
                .flatten()
                .any(|v| v.len() == 4096)
        );
    }

    #[test]
    fn pairs_follow_the_case() {
        let case = EnvCase {
            flavor: None,
            removed_flag: Some(b"1"),
        };
        assert_eq!(case.pairs(), vec![("NRTUCODE_MPLUS_ON_MARIANA", &b"1"[..])]);
        assert!(case.label().contains("unset"));
    }

    #[test]
    fn rng_is_deterministic_and_spread() {
        let mut a = SplitMix64::new(7);
        let mut b = SplitMix64::new(7);
        assert_eq!(a.next_u64(), b.next_u64());
        let idx: Vec<u32> = (0..1000).map(|_| a.idx()).collect();
        assert!(idx.iter().any(|&i| i <= 37) && idx.iter().any(|&i| i > 40));
    }

    #[test]
    fn this_build_matches_its_library() {
        assert_eq!(build_matches_library(), Ok(()));
    }
}
