//! Property tests: for arbitrary C integers the raw API, the typed API and the const API agree
//! with each other and with the independent model written from the fact TSVs.

use crate::common::{check, model};
use nrtucode::{
    Flavor, ImageIndex, NoEnv, ProfKind, Region, get_hwdecode_table, get_memory_image,
    get_memory_image_const, resolve_hwdecode, resolve_image,
};
use proptest::prelude::*;

fn any_idx() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..=40, any::<u32>()]
}

fn any_region() -> impl Strategy<Value = i32> {
    prop_oneof![-2i32..=5, any::<i32>()]
}

fn any_flavor() -> impl Strategy<Value = i32> {
    prop_oneof![-1i32..=20, Just(255), Just(256), any::<i32>()]
}

fn env_value() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop_oneof![
        Just(None),
        prop::sample::select(vec![
            b"debug".to_vec(),
            b"DEBUG".to_vec(),
            b"test".to_vec(),
            b"TEST".to_vec(),
            b"1".to_vec(),
            b"11".to_vec(),
            b"1\0x".to_vec(),
            b"debug\0".to_vec(),
        ])
        .prop_map(Some),
        prop::collection::vec(any::<u8>(), 0..8).prop_map(Some),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn raw_typed_const_and_model_agree(idx in any_idx(), region in any_region(), flavor in any_flavor()) {
        let model = model();
        let raw = get_memory_image(idx, region, flavor, &NoEnv);
        check(raw, &model.memory_image(idx, region, flavor, None, None));
        prop_assert_eq!(raw, get_memory_image_const(idx, region, flavor));
        if let (Some(i), Some(r), Some(f)) =
            (ImageIndex::from_raw(idx), Region::from_raw(region), Flavor::from_raw(flavor))
        {
            prop_assert_eq!(raw, resolve_image(i, r, f, &NoEnv));
        }
    }

    #[test]
    fn environment_answers_match_the_model(
        idx in 0u32..=38,
        region in -1i32..=4,
        flavor in prop::sample::select(vec![0, 1, 2, 3, 17, 19, 4]),
        flavor_var in env_value(),
        flag in env_value(),
    ) {
        let model = model();
        let mut pairs: Vec<(&str, &[u8])> = Vec::new();
        if let Some(v) = &flavor_var { pairs.push(("NEURON_UCODE_FLAVOR", v)); }
        if let Some(v) = &flag { pairs.push(("NRTUCODE_MPLUS_ON_MARIANA", v)); }
        let expected = model.memory_image(idx, region, flavor, flag.as_deref(), flavor_var.as_deref());
        check(get_memory_image(idx, region, flavor, pairs.as_slice()), &expected);
    }

    #[test]
    fn prof_table_raw_typed_and_model_agree(idx in any_idx(), kind in prop_oneof![-2i32..=3, any::<i32>()]) {
        let model = model();
        let raw = get_hwdecode_table(idx, kind);
        check(raw, &model.prof_table(idx, kind));
        if let (Some(i), Some(k)) = (ImageIndex::from_raw(idx), ProfKind::from_raw(kind)) {
            prop_assert_eq!(raw, resolve_hwdecode(i, k));
        }
    }
}
