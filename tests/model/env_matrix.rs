//! The environment matrix: `NEURON_UCODE_FLAVOR` × `NRTUCODE_MPLUS_ON_MARIANA` × explicit and
//! auto flavor, over every slot and region, through the injected environment and against the
//! independent model in `common`.

use crate::common::{Model, check};
use nrtucode::{EnvSnapshot, Flavor, ImageIndex, MapEnv, Region, get_memory_image, resolve_image};
use nrtucode::{FLAVOR_VAR, REMOVED_FLAG_VAR};
use nrtucode_testcases::env_matrix::{REMOVED_FLAG_VALUES, flavor_values};

#[test]
fn matrix_matches_the_model_for_every_slot_region_and_flavor() {
    let model = Model::new();
    let mut codes_seen = std::collections::BTreeSet::new();
    let mut cursors_seen = 0;
    for flavor_value in flavor_values() {
        for flag in REMOVED_FLAG_VALUES {
            let mut env: MapEnv<'_, 2> = MapEnv::new();
            if let Some(v) = &flavor_value {
                env.set(FLAVOR_VAR, v).unwrap();
            }
            if let Some(v) = flag {
                env.set(REMOVED_FLAG_VAR, v).unwrap();
            }
            for idx in 0..38 {
                for region in 0..4 {
                    for flavor in [0, 1, 2, 3, 17, 18, 19] {
                        let expected =
                            model.memory_image(idx, region, flavor, flag, flavor_value.as_deref());
                        let answer = get_memory_image(idx, region, flavor, &env);
                        check(answer, &expected);
                        codes_seen.insert(answer.map_or_else(|e| e.code(), |_| 0));
                        cursors_seen += usize::from(answer.is_ok_and(<[u8]>::is_empty));
                    }
                }
            }
        }
    }
    // The matrix reaches every answer these inputs can give in this build: code 2 (empty slot,
    // unknown flavor) and 8 (the flag) always, success and boundary cursors where images are
    // embedded, code 3 where a getter is not. A matrix that lost its tripping flag value or its
    // regions fails here.
    let entries = || nrtucode::catalog::image_entries();
    let mut expected_codes = std::collections::BTreeSet::from([2, 8]);
    if entries().any(|e| e.blob.is_some()) {
        expected_codes.insert(0);
    }
    if entries().any(|e| e.blob.is_none()) {
        expected_codes.insert(3);
    }
    assert_eq!(codes_seen, expected_codes);
    let cursors_embedded = entries().any(|e| e.blob.is_some_and(<[u8]>::is_empty));
    assert_eq!(
        cursors_seen > 0,
        cursors_embedded,
        "{cursors_seen} cursors resolved"
    );
}

/// The snapshot answers like the environment it was built from, in every cell of the matrix
/// (including the 4 KiB value, longer than its capacity, and the non-UTF-8 ones).
#[test]
fn snapshot_matches_the_model_and_the_map_in_every_cell() {
    let model = Model::new();
    let mut truncated = 0;
    for flavor_value in flavor_values() {
        for flag in REMOVED_FLAG_VALUES {
            let snapshot = EnvSnapshot::from_values(flag, flavor_value.as_deref());
            truncated += usize::from(snapshot.is_truncated());
            let mut map: MapEnv<'_, 2> = MapEnv::new();
            if let Some(v) = &flavor_value {
                map.set(FLAVOR_VAR, v).unwrap();
            }
            if let Some(v) = flag {
                map.set(REMOVED_FLAG_VAR, v).unwrap();
            }
            for idx in 0..39 {
                for region in -1..5 {
                    for flavor in [0, 1, 2, 3, 4, 17, 18, 19] {
                        let from_snapshot = get_memory_image(idx, region, flavor, &snapshot);
                        assert_eq!(from_snapshot, get_memory_image(idx, region, flavor, &map));
                        if idx < 38 && (0..4).contains(&region) && flavor != 4 {
                            let expected = model.memory_image(
                                idx,
                                region,
                                flavor,
                                flag,
                                flavor_value.as_deref(),
                            );
                            check(from_snapshot, &expected);
                        }
                    }
                }
            }
        }
    }
    // The 4 KiB value is kept truncated in every cell of its row, and still answers PERF.
    assert_eq!(truncated, REMOVED_FLAG_VALUES.len());
}

#[test]
fn auto_flavor_equals_the_explicit_flavor_it_selects() {
    let expectations: [(&[u8], Flavor); 6] = [
        (b"debug", Flavor::Debug),
        (b"DEBUG", Flavor::Debug),
        (b"test", Flavor::Test),
        (b"TEST", Flavor::Test),
        (b"Debug", Flavor::Perf),
        (b"\xffdebug", Flavor::Perf),
    ];
    for (value, flavor) in expectations {
        let env = &[(FLAVOR_VAR, value)][..];
        for idx in ImageIndex::ALL {
            for region in Region::ALL {
                let auto = resolve_image(idx, region, Flavor::Auto, env);
                let explicit = resolve_image(idx, region, flavor, env);
                assert_eq!(
                    auto.map(<[u8]>::as_ptr),
                    explicit.map(<[u8]>::as_ptr),
                    "{value:?} {idx:?} {region:?}"
                );
            }
        }
    }
}

#[test]
fn explicit_flavor_ignores_the_flavor_variable() {
    let env = &[(FLAVOR_VAR, b"debug".as_slice())][..];
    for flavor in [1, 3, 17] {
        assert_eq!(
            get_memory_image(13, 1, flavor, env),
            get_memory_image(13, 1, flavor, &nrtucode::NoEnv)
        );
    }
}
