//! The benchmark compares like with like: over the mixes and a grid around them, ours, the C
//! look-alike and the dense array return the same code and the same bytes.
#![allow(unsafe_code)] // calls the C look-alike; no test here modifies the environment

use nrtucode::{EnvSnapshot, NoEnv, get_hwdecode_table, get_memory_image};
use nrtucode_bench::mix::{AUTO_MIX, HWDECODE_MIX, IMAGE_MIX};
use nrtucode_bench::{Answer, answer, c, ideal, paths};

fn same(ours: Answer, other: Answer, what: &str) {
    assert_eq!(ours.0, other.0, "{what}: code");
    if ours.0 == 0 {
        assert_eq!(ours.2, other.2, "{what}: length");
        // SAFETY: both answers are unchanged results of a resolver (`same`'s callers).
        let (a, b) = unsafe { (c::bytes_of(ours), c::bytes_of(other)) };
        assert_eq!(a, b, "{what}: bytes");
    }
}

#[test]
fn ours_c_and_ideal_agree_on_images() {
    let grid = (0..40u32).flat_map(|i| {
        (-1..5).flat_map(move |r| [-1, 0, 1, 2, 3, 4, 16, 17, 18, 19, 20].map(|f| (i, r, f)))
    });
    let snapshot = EnvSnapshot::capture();
    for (idx, region, flavor) in IMAGE_MIX.into_iter().chain(AUTO_MIX).chain(grid) {
        let what = format!("({idx}, {region}, {flavor})");
        // NoEnv: the test environment sets neither variable (checked below for the C side).
        let ours = answer(get_memory_image(idx, region, flavor, &NoEnv));
        // SAFETY: no test of this binary modifies the process environment.
        same(ours, unsafe { c::image(idx, region, flavor) }, &what);
        // The snapshot path of the bench answers like the others.
        assert_eq!(
            answer(get_memory_image(idx, region, flavor, &snapshot)),
            ours,
            "{what}: snapshot"
        );
        if flavor != 0 {
            same(ours, answer(ideal::image(idx, region, flavor)), &what);
        }
    }
}

#[test]
fn ours_c_and_ideal_agree_on_profiler_tables() {
    let grid = (0..40u32).flat_map(|i| (-1..4).map(move |k| (i, k)));
    for (idx, kind) in HWDECODE_MIX.into_iter().chain(grid) {
        let what = format!("({idx}, {kind})");
        let ours = answer(get_hwdecode_table(idx, kind));
        same(ours, c::hwdecode(idx, kind), &what);
        same(ours, answer(ideal::hwdecode(idx, kind)), &what);
    }
}

#[test]
fn mixes_cover_hits_and_every_error_class() {
    let codes: Vec<i32> = IMAGE_MIX
        .iter()
        .map(|&(i, r, f)| answer(get_memory_image(i, r, f, &NoEnv)).0)
        .collect();
    assert_eq!(codes.iter().filter(|&&c| c == 0).count(), 18);
    assert_eq!(codes.iter().filter(|&&c| c == 1).count(), 2);
    assert_eq!(codes.iter().filter(|&&c| c == 2).count(), 6);
    for p in paths::ALL {
        // SAFETY: no test of this binary modifies the process environment.
        unsafe { (p.run)() };
    }
}

#[test]
fn environment_has_neither_variable() {
    for name in ["NEURON_UCODE_FLAVOR", "NRTUCODE_MPLUS_ON_MARIANA"] {
        assert!(
            std::env::var_os(name).is_none(),
            "unset {name} to run these tests"
        );
    }
}
