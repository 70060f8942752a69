//! `StdEnv` under `std::env::set_var` from another thread: no crash, no freed memory,
//! every answer one the environment could have given. Bounded to 3 seconds (natively); under
//! miri, which checks every access of the race for undefined behaviour and data races, a short
//! run of the same program.
#![forbid(unsafe_code)]

use std::time::Duration;

#[test]
fn std_env_survives_set_var_from_another_thread() {
    let (duration, progress) = if cfg!(miri) {
        (Duration::from_millis(200), 1)
    } else {
        (Duration::from_secs(3), 1000)
    };
    let report = nrtucode_env_stress::run(duration, 2);
    println!("{report:?}");
    assert_eq!(report.impossible, 0, "{report:?}");
    // The race really ran: both sides made progress.
    assert!(report.writes >= progress, "{report:?}");
    assert!(report.live_lookups >= progress, "{report:?}");
    if !cfg!(miri) {
        assert!(report.snapshot_lookups > 10, "{report:?}");
        // The reads are live: the writer's changes of NEURON_UCODE_FLAVOR were seen.
        assert!(report.live_flavors_seen >= 2, "{report:?}");
    }
}
