//! How much of an exhaustive sweep a test runs (the power-cut sweeps: every erase and write of
//! a script cut in turn), chosen by the environment variable [`SWEEP_VAR`]:
//!
//! - unset or `sampled` (README's test command and CI): every case of the geometry a test
//!   names as its exhaustive one, and every [`SAMPLE_STRIDE`]-th case of each other geometry,
//!   from an offset the test gives (so different tests sample different cases);
//! - `full`: every case of every geometry (`NRTUCODE_SWEEP=full cargo test --release -p … --test
//!   …`).
//!
//! A sweep prints what it ran: [`Sample::describe`] says which of the two it is.

/// The environment variable that chooses the sweep.
pub const SWEEP_VAR: &str = "NRTUCODE_SWEEP";

/// One case in this many, in a sampled geometry.
pub const SAMPLE_STRIDE: usize = 8;

/// The sweep the environment asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sweep {
    /// Every case of the exhaustive geometry, a sample of the others.
    Sampled,
    /// Every case of every geometry.
    Full,
}

impl Sweep {
    /// [`SWEEP_VAR`] read: unset, empty or `sampled` is [`Sweep::Sampled`], `full` is
    /// [`Sweep::Full`]; anything else is an error naming the variable and its values.
    pub fn from_env() -> Result<Self, String> {
        match std::env::var(SWEEP_VAR).as_deref() {
            Err(std::env::VarError::NotPresent) | Ok("" | "sampled") => Ok(Self::Sampled),
            Ok("full") => Ok(Self::Full),
            other => Err(format!(
                "{SWEEP_VAR}={other:?}: expected `sampled` (the default) or `full`"
            )),
        }
    }

    /// The cases a geometry runs: all of them in the exhaustive geometry (`exhaustive`) or in a
    /// full sweep, else every [`SAMPLE_STRIDE`]-th from `offset`.
    pub fn sample(self, exhaustive: bool, offset: u64) -> Sample {
        let stride = if exhaustive || self == Self::Full {
            1
        } else {
            SAMPLE_STRIDE
        };
        Sample {
            stride,
            offset: usize::try_from(offset % stride as u64).unwrap_or(0),
        }
    }
}

/// Which cases of one geometry run (see [`Sweep::sample`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    stride: usize,
    offset: usize,
}

impl Sample {
    /// Whether case `n` (counted from 0) runs.
    pub fn takes(&self, n: usize) -> bool {
        n % self.stride == self.offset
    }

    /// 1 when every case runs, else [`SAMPLE_STRIDE`].
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// `every case` or `1 case in N (NRTUCODE_SWEEP=full for all)`.
    pub fn describe(&self) -> String {
        if self.stride == 1 {
            "every case".into()
        } else {
            format!("1 case in {} ({SWEEP_VAR}=full for all)", self.stride)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exhaustive_geometry_and_a_full_sweep_take_every_case_the_others_one_in_the_stride() {
        for sweep in [Sweep::Sampled, Sweep::Full] {
            let all = sweep.sample(true, 5);
            assert!((0..100).all(|n| all.takes(n)));
            assert_eq!(all.describe(), "every case");
        }
        let full = Sweep::Full.sample(false, 5);
        assert!((0..100).all(|n| full.takes(n)));
        let some = Sweep::Sampled.sample(false, 5);
        let taken: Vec<usize> = (0..3 * SAMPLE_STRIDE).filter(|&n| some.takes(n)).collect();
        assert_eq!(taken, [5, 5 + SAMPLE_STRIDE, 5 + 2 * SAMPLE_STRIDE]);
        assert!(some.describe().contains("NRTUCODE_SWEEP=full"));
    }
}
