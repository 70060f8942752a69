//! Every plain-data `Env` (arrays and slices of pairs; with `std`, `Vec`s and maps keyed by
//! `String` and `OsString`) answers the environment matrix exactly like the independent model
//! of `getenv`, over every slot, region and flavor.

use crate::common::{Model, check};
use nrtucode::{Env, get_memory_image};
use nrtucode::{FLAVOR_VAR, REMOVED_FLAG_VAR};
use nrtucode_testcases::env_matrix::{REMOVED_FLAG_VALUES, flavor_values};

/// Every (idx, region, flavor) of the image resolver through `env`, against the model.
fn matches_model<E: Env + ?Sized>(
    model: &Model,
    env: &E,
    flag: Option<&[u8]>,
    flavor_var: Option<&[u8]>,
) -> usize {
    let mut calls = 0;
    for idx in 0..39 {
        for region in -1..5 {
            for flavor in [0, 1, 2, 3, 4, 17, 18, 19] {
                let expected = model.memory_image(idx, region, flavor, flag, flavor_var);
                check(get_memory_image(idx, region, flavor, env), &expected);
                calls += 1;
            }
        }
    }
    calls
}

/// The matrix as `(name, value)` byte pairs: every combination of the two variables, with a
/// decoy pair after the real one (first match wins) and an unsettable name before it.
fn matrix() -> Vec<Vec<(&'static str, Vec<u8>)>> {
    let mut all = Vec::new();
    for flavor in flavor_values() {
        for flag in REMOVED_FLAG_VALUES {
            let mut pairs = vec![("", b"debug".to_vec()), ("A=B", b"1".to_vec())];
            if let Some(v) = &flavor {
                pairs.push((FLAVOR_VAR, v.clone()));
            }
            if let Some(v) = flag {
                pairs.push((REMOVED_FLAG_VAR, v.to_vec()));
            }
            // Decoys: shadowed by the pairs above when those are set.
            pairs.push((FLAVOR_VAR, b"DEBUG".to_vec()));
            pairs.push((REMOVED_FLAG_VAR, b"1".to_vec()));
            all.push(pairs);
        }
    }
    all
}

/// The values `getenv` would see for a list of pairs: the first of each name.
fn getenv<'a>(pairs: &'a [(&str, Vec<u8>)], name: &str) -> Option<&'a [u8]> {
    pairs
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.as_slice())
}

#[test]
fn slices_arrays_and_str_pairs_answer_like_getenv() {
    let model = Model::new();
    let mut calls = 0;
    for pairs in matrix() {
        let (flag, flavor) = (getenv(&pairs, REMOVED_FLAG_VAR), getenv(&pairs, FLAVOR_VAR));
        let bytes: Vec<(&str, &[u8])> = pairs.iter().map(|(n, v)| (*n, v.as_slice())).collect();
        calls += matches_model(&model, bytes.as_slice(), flag, flavor);
        // `&[(&str, &str)]` where the values are UTF-8.
        if pairs.iter().all(|(_, v)| std::str::from_utf8(v).is_ok()) {
            let strs: Vec<(&str, &str)> = pairs
                .iter()
                .map(|(n, v)| (*n, std::str::from_utf8(v).unwrap()))
                .collect();
            calls += matches_model(&model, strs.as_slice(), flag, flavor);
        }
    }
    // Arrays, with fixed-size byte-string values as a caller writes them.
    let array = [(FLAVOR_VAR, b"debug"), (FLAVOR_VAR, b"xtest")];
    calls += matches_model(&model, &array, None, Some(b"debug"));
    let array = [(REMOVED_FLAG_VAR, "1"), (FLAVOR_VAR, "test")];
    calls += matches_model(&model, &array, Some(b"1"), Some(b"test"));
    assert!(calls > 98 * 39 * 6 * 8, "{calls}");
}

#[cfg(feature = "std")]
mod with_std {
    use std::collections::{BTreeMap, HashMap};
    use std::ffi::OsString;

    use super::*;

    /// An `OsString` holding exactly `bytes` (any bytes on Unix).
    #[cfg(unix)]
    fn os(bytes: &[u8]) -> OsString {
        use std::os::unix::ffi::OsStringExt;
        OsString::from_vec(bytes.to_vec())
    }

    #[test]
    fn vecs_and_maps_answer_like_getenv() {
        let model = Model::new();
        let mut calls = 0;
        for pairs in matrix() {
            let (flag, flavor) = (getenv(&pairs, REMOVED_FLAG_VAR), getenv(&pairs, FLAVOR_VAR));
            let owned: Vec<(String, Vec<u8>)> = pairs
                .iter()
                .map(|(n, v)| ((*n).to_owned(), v.clone()))
                .collect();
            calls += matches_model(&model, &owned, flag, flavor);
            // A map holds one value per name: the first, as a process environment would.
            let mut hash: HashMap<String, Vec<u8>> = HashMap::new();
            let mut btree: BTreeMap<String, Vec<u8>> = BTreeMap::new();
            for (name, value) in &owned {
                hash.entry(name.clone()).or_insert_with(|| value.clone());
                btree.entry(name.clone()).or_insert_with(|| value.clone());
            }
            calls += matches_model(&model, &hash, flag, flavor);
            calls += matches_model(&model, &btree, flag, flavor);
            #[cfg(unix)]
            {
                let mut os_hash: HashMap<OsString, OsString> = HashMap::new();
                let mut os_btree: BTreeMap<OsString, OsString> = BTreeMap::new();
                for (name, value) in &pairs {
                    os_hash
                        .entry(os(name.as_bytes()))
                        .or_insert_with(|| os(value));
                    os_btree
                        .entry(os(name.as_bytes()))
                        .or_insert_with(|| os(value));
                }
                calls += matches_model(&model, &os_hash, flag, flavor);
                calls += matches_model(&model, &os_btree, flag, flavor);
            }
        }
        assert!(calls >= 98 * 3 * 39 * 6 * 8, "{calls}");
    }

    #[test]
    fn the_process_environment_collected_into_a_map_answers_like_std_env() {
        let vars: HashMap<OsString, OsString> = std::env::vars_os().collect();
        for idx in [7, 13, 36] {
            for flavor in [0, 1, 2] {
                assert_eq!(
                    get_memory_image(idx, 0, flavor, &vars),
                    get_memory_image(idx, 0, flavor, &nrtucode::StdEnv)
                );
            }
        }
    }
}
