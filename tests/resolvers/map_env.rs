//! `MapEnv`'s own operations (set, replace, remove, capacity) against a model: a `Vec` of
//! `(name, value)` pairs holding each name once, limited to the same capacity.

use nrtucode::{CapacityError, Env, MapEnv};
use proptest::prelude::*;

/// The capacity under test: small, so that random operations often fill it.
const CAPACITY: usize = 3;
/// Names to pick from: more than `CAPACITY`, so that a full environment meets new names.
const NAMES: [&str; 5] = [
    "A",
    "B",
    "NEURON_UCODE_FLAVOR",
    "NRTUCODE_MPLUS_ON_MARIANA",
    "",
];
/// Values to pick from, the empty one included.
const VALUES: [&[u8]; 4] = [b"", b"perf", b"1", b"\xff\x00"];

/// One step applied to both the environment and the model.
#[derive(Clone, Debug)]
enum Op {
    Set(usize, usize),
    Remove(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..NAMES.len(), 0..VALUES.len()).prop_map(|(n, v)| Op::Set(n, v)),
        (0..NAMES.len()).prop_map(Op::Remove),
    ]
}

/// What `env` reports for `name` through the `Env` trait (what the resolver sees).
fn visited(env: &MapEnv<'static, CAPACITY>, name: &str) -> Option<Vec<u8>> {
    let mut seen = None;
    env.visit_var(name, &mut |value| seen = value.map(<[u8]>::to_vec));
    seen
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn map_env_behaves_like_the_model(ops in prop::collection::vec(op(), 0..24)) {
        let mut env: MapEnv<'static, CAPACITY> = MapEnv::new();
        let mut model: Vec<(&str, &[u8])> = Vec::new();
        for op in ops {
            match op {
                Op::Set(n, v) => {
                    let (name, value) = (NAMES[n], VALUES[v]);
                    let expected = match model.iter().position(|(m, _)| *m == name) {
                        Some(at) => {
                            model[at].1 = value;
                            Ok(())
                        }
                        None if model.len() < CAPACITY => {
                            model.push((name, value));
                            Ok(())
                        }
                        None => Err(CapacityError),
                    };
                    prop_assert_eq!(env.set(name, value), expected);
                }
                Op::Remove(n) => {
                    let name = NAMES[n];
                    let expected = model
                        .iter()
                        .position(|(m, _)| *m == name)
                        .map(|at| model.remove(at).1);
                    prop_assert_eq!(env.remove(name), expected);
                }
            }
            prop_assert_eq!(env.len(), model.len());
            prop_assert_eq!(env.is_empty(), model.is_empty());
            for name in NAMES {
                let expected = model.iter().find(|(m, _)| *m == name).map(|(_, v)| *v);
                prop_assert_eq!(env.get(name), expected);
                prop_assert_eq!(visited(&env, name), expected.map(<[u8]>::to_vec));
            }
        }
    }
}

#[test]
fn a_zero_capacity_environment_refuses_every_variable() {
    let mut env: MapEnv<'_, 0> = MapEnv::default();
    assert_eq!(env.set("A", b"1"), Err(CapacityError));
    assert_eq!(env.remove("A"), None);
    assert_eq!(env.get("A"), None);
    assert!(env.is_empty());
}

#[test]
fn debug_lists_only_the_variables_set() {
    let mut env: MapEnv<'_, 4> = MapEnv::new();
    env.set("A", b"1").expect("room for A");
    env.set("B", b"2").expect("room for B");
    assert_eq!(env.remove("A"), Some(b"1".as_slice()));
    assert_eq!(format!("{env:?}"), r#"MapEnv { vars: [("B", [50])] }"#);
}
