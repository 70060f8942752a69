//! The measured paths: one pass over a mix, every answer folded into the result.
//!
//! Each function is `#[inline(never)]` so that criterion and callgrind see the same machine
//! code; inputs go through [`black_box`] so nothing is constant-folded.
//!
//! The C look-alike's paths read the process environment with C's `getenv`, outside std's
//! lock, so every path is an `unsafe fn`: the caller promises that no thread modifies the
//! environment while one runs.
#![allow(unsafe_code)]

use core::hint::black_box;

use std::sync::LazyLock;

use nrtucode::{EnvSnapshot, NoEnv, StdEnv, get_hwdecode_table, get_memory_image};

#[cfg(feature = "partition")]
use crate::blob_answer;
use crate::mix::{AUTO_MIX, HWDECODE_MIX, IMAGE_MIX};
use crate::{Answer, answer, c, fold, ideal};

/// A measured path: its name, how many resolver calls one pass makes, and the pass.
#[derive(Clone, Copy)]
pub struct Path {
    /// Row name in the tables.
    pub name: &'static str,
    /// What it measures.
    pub about: &'static str,
    /// Calls per pass.
    pub calls: usize,
    /// One pass over the mix.
    ///
    /// # Safety
    ///
    /// No other thread may modify the process environment while it runs (see the module docs).
    pub run: unsafe fn() -> u64,
}

#[inline(always)]
fn image_pass(mix: &[(u32, i32, i32)], f: impl Fn(u32, i32, i32) -> Answer) -> u64 {
    let mut acc = 0;
    for &(idx, region, flavor) in black_box(mix) {
        acc = fold(acc, f(black_box(idx), black_box(region), black_box(flavor)));
    }
    acc
}

#[inline(always)]
fn hwdecode_pass(mix: &[(u32, i32)], f: impl Fn(u32, i32) -> Answer) -> u64 {
    let mut acc = 0;
    for &(idx, kind) in black_box(mix) {
        acc = fold(acc, f(black_box(idx), black_box(kind)));
    }
    acc
}

/// Ours, explicit flavor, nothing in the environment.
#[inline(never)]
pub fn ours_explicit() -> u64 {
    image_pass(&IMAGE_MIX, |i, r, f| {
        answer(get_memory_image(i, r, f, &NoEnv))
    })
}

/// Ours, explicit flavor, the live process environment (the removed flag is read, as in C).
#[inline(never)]
pub fn ours_explicit_std() -> u64 {
    image_pass(&IMAGE_MIX, |i, r, f| {
        answer(get_memory_image(i, r, f, &StdEnv))
    })
}

/// Ours, flavor 0, the live process environment.
#[inline(never)]
pub fn ours_auto_std() -> u64 {
    image_pass(&AUTO_MIX, |i, r, f| {
        answer(get_memory_image(i, r, f, &StdEnv))
    })
}

/// The snapshot the `ours_auto_snapshot` path resolves with, captured once per process.
static SNAPSHOT: LazyLock<EnvSnapshot> = LazyLock::new(EnvSnapshot::capture);

/// Ours, flavor 0, the two variables captured once at start-up ([`EnvSnapshot::capture`]).
#[inline(never)]
pub fn ours_auto_snapshot() -> u64 {
    let env: &EnvSnapshot = &SNAPSHOT;
    image_pass(&AUTO_MIX, |i, r, f| answer(get_memory_image(i, r, f, env)))
}

/// Ours, profiler tables.
#[inline(never)]
pub fn ours_hwdecode() -> u64 {
    hwdecode_pass(&HWDECODE_MIX, |i, k| answer(get_hwdecode_table(i, k)))
}

/// The C look-alike, explicit flavor.
///
/// # Safety
///
/// No other thread may modify the process environment while it runs.
#[inline(never)]
pub unsafe fn c_explicit() -> u64 {
    // SAFETY: forwarded from this function's caller.
    image_pass(&IMAGE_MIX, |i, r, f| unsafe { c::image(i, r, f) })
}

/// The C look-alike, flavor 0.
///
/// # Safety
///
/// No other thread may modify the process environment while it runs.
#[inline(never)]
pub unsafe fn c_auto() -> u64 {
    // SAFETY: forwarded from this function's caller.
    image_pass(&AUTO_MIX, |i, r, f| unsafe { c::image(i, r, f) })
}

/// The C look-alike, profiler tables.
#[inline(never)]
pub fn c_hwdecode() -> u64 {
    hwdecode_pass(&HWDECODE_MIX, c::hwdecode)
}

/// The dense array, explicit flavor.
#[inline(never)]
pub fn ideal_explicit() -> u64 {
    image_pass(&IMAGE_MIX, |i, r, f| answer(ideal::image(i, r, f)))
}

/// The dense array, profiler tables.
#[inline(never)]
pub fn ideal_hwdecode() -> u64 {
    hwdecode_pass(&HWDECODE_MIX, |i, k| answer(ideal::hwdecode(i, k)))
}

/// The loop and fold alone (no resolver): the harness overhead per call.
#[inline(never)]
pub fn empty() -> u64 {
    image_pass(&IMAGE_MIX, |i, r, f| (f, i as usize, r as usize))
}

/// Every path, in table order.
pub const ALL: [Path; 11] = [
    Path {
        name: "ours_explicit",
        about: "get_memory_image, explicit flavor, NoEnv",
        calls: IMAGE_MIX.len(),
        run: ours_explicit,
    },
    Path {
        name: "ours_explicit_std",
        about: "get_memory_image, explicit flavor, StdEnv",
        calls: IMAGE_MIX.len(),
        run: ours_explicit_std,
    },
    Path {
        name: "ours_auto_std",
        about: "get_memory_image, flavor 0, StdEnv",
        calls: AUTO_MIX.len(),
        run: ours_auto_std,
    },
    Path {
        name: "ours_auto_snapshot",
        about: "get_memory_image, flavor 0, EnvSnapshot",
        calls: AUTO_MIX.len(),
        run: ours_auto_snapshot,
    },
    Path {
        name: "ours_hwdecode",
        about: "get_hwdecode_table",
        calls: HWDECODE_MIX.len(),
        run: ours_hwdecode,
    },
    Path {
        name: "c_explicit",
        about: "C look-alike, explicit flavor",
        calls: IMAGE_MIX.len(),
        run: c_explicit,
    },
    Path {
        name: "c_auto",
        about: "C look-alike, flavor 0",
        calls: AUTO_MIX.len(),
        run: c_auto,
    },
    Path {
        name: "c_hwdecode",
        about: "C look-alike, profiler table",
        calls: HWDECODE_MIX.len(),
        run: c_hwdecode,
    },
    Path {
        name: "ideal_explicit",
        about: "dense array, explicit flavor",
        calls: IMAGE_MIX.len(),
        run: ideal_explicit,
    },
    Path {
        name: "ideal_hwdecode",
        about: "dense array, profiler table",
        calls: HWDECODE_MIX.len(),
        run: ideal_hwdecode,
    },
    Path {
        name: "empty",
        about: "loop + fold only (harness overhead)",
        calls: IMAGE_MIX.len(),
        run: empty,
    },
];

/// The full fixture set packed into a partition signed with the committed test key, parsed
/// and verified once per process (in the warm-up pass, outside the measured region).
#[cfg(feature = "partition")]
static PARTITION: LazyLock<nrtucode::partition::CheckedPartition<'static>> = LazyLock::new(|| {
    use nrtucode::partition::{Partition, Policy, TableClass};
    let key = nrtucode_pack::SigningKey::from_pem(include_str!("../../../keys/test-ed25519.pem"))
        .expect("the committed test key");
    let options = nrtucode_pack::PackOptions {
        security_counter: 0,
        key: Some(&key),
    };
    let bytes = nrtucode_pack::pack(&nrtucode_pack::Blobs::fixtures(TableClass::Full), &options)
        .expect("pack the fixtures");
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    let policy = Policy {
        min_security_counter: 0,
        expected_class: TableClass::Full,
    };
    let verified = Partition::parse(bytes)
        .expect("a partition")
        .verify(&key.public_key(), &policy)
        .expect("a verified partition");
    verified
        .check_blobs(&mut nrtucode::digest::SoftSha256::new())
        .expect("every blob checks")
});

/// Ours over a signed partition, explicit flavor, nothing in the environment.
#[cfg(feature = "partition")]
#[inline(never)]
pub fn partition_explicit() -> u64 {
    let p = &*PARTITION;
    image_pass(&IMAGE_MIX, |i, r, f| {
        blob_answer(p.get_memory_image(i, r, f, &NoEnv))
    })
}

/// Ours over a signed partition, profiler tables.
#[cfg(feature = "partition")]
#[inline(never)]
pub fn partition_hwdecode() -> u64 {
    let p = &*PARTITION;
    hwdecode_pass(&HWDECODE_MIX, |i, k| {
        blob_answer(p.get_hwdecode_table(i, k))
    })
}

/// The partition paths (feature `partition`).
#[cfg(feature = "partition")]
pub const PARTITION_PATHS: [Path; 2] = [
    Path {
        name: "partition_explicit",
        about: "CheckedPartition::get_memory_image, explicit flavor, NoEnv",
        calls: IMAGE_MIX.len(),
        run: partition_explicit,
    },
    Path {
        name: "partition_hwdecode",
        about: "CheckedPartition::get_hwdecode_table",
        calls: HWDECODE_MIX.len(),
        run: partition_hwdecode,
    },
];

/// Every path of this build: [`ALL`], and with feature `partition` the partition paths.
pub fn every() -> impl Iterator<Item = Path> {
    #[cfg(feature = "partition")]
    let extra = PARTITION_PATHS;
    #[cfg(not(feature = "partition"))]
    let extra: [Path; 0] = [];
    ALL.into_iter().chain(extra)
}

/// The path named `name`.
pub fn by_name(name: &str) -> Option<Path> {
    every().find(|p| p.name == name)
}
