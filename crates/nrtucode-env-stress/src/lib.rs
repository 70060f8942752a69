//! `StdEnv` racing `set_var`, as a host-runtime author would write it in edition 2021 without any
//! `unsafe`: one thread keeps adding new variables with `std::env::set_var` (so the C library
//! reallocates and frees `environ`) and changes `NEURON_UCODE_FLAVOR`, while other threads
//! resolve flavor 0 through [`nrtucode::StdEnv`] (and capture [`nrtucode::EnvSnapshot`]s).
//!
//! [`run`] drives it for a bounded time and checks that every answer is one the environment
//! could have given at some moment; `tests/set_var_race.rs` runs it in CI. A reader that
//! bypasses std's environment lock crashes this program (SIGSEGV) within a second or two.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use nrtucode::FLAVOR_VAR;
use nrtucode::{get_memory_image, EnvSnapshot, NoEnv, StdEnv};

/// The values the writer gives `NEURON_UCODE_FLAVOR` (`None`: removed).
pub const FLAVOR_VALUES: [Option<&str>; 5] = [
    Some("debug"),
    Some("test"),
    Some("perf"),
    Some("TEST"),
    None,
];

/// The image every reader resolves with flavor 0: CAYMAN NX ACT IRAM.
const IDX: u32 = 7;

/// What a run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Lookups through `StdEnv`, all answered with a possible image.
    pub live_lookups: u64,
    /// Snapshots captured and resolved, all answered with a possible image.
    pub snapshot_lookups: u64,
    /// `set_var` / `remove_var` calls of the writer.
    pub writes: u64,
    /// Answers that no environment state could have given (must be 0).
    pub impossible: u64,
    /// How many of the flavors 1, 2, 3 the live lookups answered with (the reads are live).
    pub live_flavors_seen: u32,
}

/// Runs the race for `duration` with `readers` reader threads.
pub fn run(duration: Duration, readers: usize) -> Report {
    // Flavor 1, 2 and 3 are every answer flavor 0 can give, whatever the variable holds.
    let possible: Vec<usize> = [1, 2, 3]
        .iter()
        .map(|&f| {
            get_memory_image(IDX, 0, f, &NoEnv)
                .expect("CAYMAN NX ACT IRAM is embedded in every flavor")
                .as_ptr() as usize
        })
        .collect();
    let stop = AtomicBool::new(false);
    let live = AtomicU64::new(0);
    let snap = AtomicU64::new(0);
    let impossible = AtomicU64::new(0);
    // Bit `i`: a live lookup answered like flavor `i + 1`.
    let seen = AtomicU64::new(0);
    let writes = thread::scope(|s| {
        for _ in 0..readers {
            s.spawn(|| {
                let which = |answer: Result<&'static [u8], nrtucode::ResolveErr>| {
                    let at = answer.ok()?.as_ptr() as usize;
                    possible.iter().position(|&p| p == at)
                };
                let ok = |answer| which(answer).is_some();
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    match which(get_memory_image(IDX, 0, 0, &StdEnv)) {
                        Some(i) => {
                            seen.fetch_or(1 << i, Ordering::Relaxed);
                        }
                        None => {
                            impossible.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    n += 1;
                    if n.is_multiple_of(64) {
                        let snapshot = EnvSnapshot::capture();
                        if !ok(get_memory_image(IDX, 0, 0, &snapshot)) {
                            impossible.fetch_add(1, Ordering::Relaxed);
                        }
                        snap.fetch_add(1, Ordering::Relaxed);
                    }
                }
                live.fetch_add(n, Ordering::Relaxed);
            });
        }
        let writer = s.spawn(|| {
            let start = Instant::now();
            let mut writes = 0u64;
            let mut round = 0u64;
            while start.elapsed() < duration {
                // New names grow `environ` (realloc, freeing the old array); removing them
                // keeps it bounded so that every round reallocates again.
                for i in 0..64 {
                    std::env::set_var(format!("NRTUCODE_STRESS_{round}_{i}"), "x");
                    writes += 1;
                }
                match FLAVOR_VALUES[(round % FLAVOR_VALUES.len() as u64) as usize] {
                    Some(value) => std::env::set_var(FLAVOR_VAR, value),
                    None => std::env::remove_var(FLAVOR_VAR),
                }
                for i in 0..64 {
                    std::env::remove_var(format!("NRTUCODE_STRESS_{round}_{i}"));
                    writes += 1;
                }
                writes += 1;
                round += 1;
            }
            stop.store(true, Ordering::Relaxed);
            writes
        });
        writer.join().expect("the writer does not panic")
    });
    Report {
        live_lookups: live.into_inner(),
        snapshot_lookups: snap.into_inner(),
        writes,
        impossible: impossible.into_inner(),
        live_flavors_seen: seen.into_inner().count_ones(),
    }
}
