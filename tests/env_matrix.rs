//! The environment matrix: `NEURON_UCODE_FLAVOR` × `NRTUCODE_MPLUS_ON_MARIANA` × explicit and
//! auto flavor, over every slot and region, through the injected environment and against the
//! independent model in `common`.

mod common;

use common::{Model, check};
use nrtucode::env::{FLAVOR_VAR, REMOVED_FLAG_VAR};
use nrtucode::{Flavor, ImageIndex, MapEnv, Region, get_memory_image, resolve_image};

fn flavor_values() -> Vec<Option<Vec<u8>>> {
    let mut values: Vec<Option<Vec<u8>>> = vec![None];
    for v in [
        &b""[..],
        b"debug",
        b"DEBUG",
        b"Debug",
        b"test",
        b"TEST",
        b"Test",
        b"perf",
        b"2",
        b"debug ",
        b"\xff\xfedebug\x80",
    ] {
        values.push(Some(v.to_vec()));
    }
    values.push(Some(vec![b'd'; 4096]));
    values
}

fn flag_values() -> Vec<Option<&'static [u8]>> {
    vec![
        None,
        Some(b""),
        Some(b"1"),
        Some(b"0"),
        Some(b"11"),
        Some(b"10"),
        Some(b"1 "),
    ]
}

#[test]
fn matrix_matches_the_model_for_every_slot_region_and_flavor() {
    let model = Model::new();
    let mut cases = 0;
    for flavor_value in flavor_values() {
        for flag in flag_values() {
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
                        check(get_memory_image(idx, region, flavor, &env), &expected);
                        cases += 1;
                    }
                }
            }
        }
    }
    assert_eq!(cases, 13 * 7 * 38 * 4 * 7);
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
        for idx in ImageIndex::all() {
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
