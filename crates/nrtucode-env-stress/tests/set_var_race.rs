//! `StdEnv` under `std::env::set_var` from another thread (issue 9): no crash, no freed memory,
//! every answer one the environment could have given. Bounded to 3 seconds.
#![forbid(unsafe_code)]

use std::time::Duration;

#[test]
fn std_env_survives_set_var_from_another_thread() {
    let report = nrtucode_env_stress::run(Duration::from_secs(3), 2);
    println!("{report:?}");
    assert_eq!(report.impossible, 0, "{report:?}");
    // The race really ran: both sides made progress.
    assert!(report.writes > 1000, "{report:?}");
    assert!(report.live_lookups > 1000, "{report:?}");
    assert!(report.snapshot_lookups > 10, "{report:?}");
    // The reads are live: the writer's changes of NEURON_UCODE_FLAVOR were seen.
    assert!(report.live_flavors_seen >= 2, "{report:?}");
}
