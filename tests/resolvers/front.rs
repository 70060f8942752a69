//! The vendor's reduced front library (`libnrtucode.so`): only PERF and DKL_PERF getters of
//! SUNDA..MARIANA_PLUS are linked. Built with exactly that feature selection, every answer must
//! equal the front library's. The test exists only in that build (`build.rs` sets
//! `nrtucode_front_selection` when the enabled generation and flavor features are exactly
//! `nrtucode_facts::facts::FRONT_FEATURES`); run it with
//!
//! `cargo test -p nrtucode --no-default-features --features front`
#![cfg(nrtucode_front_selection)]

use nrtucode::{NoEnv, ResolveErr, get_hwdecode_table, get_memory_image};

#[test]
fn front_selection_answers_like_the_front_library() {
    let facts = nrtucode_facts::image_slots();
    for slot in &facts {
        for key in &slot.flavor_keys {
            for region in 0..4 {
                let answer = get_memory_image(slot.idx, region, *key as i32, &NoEnv);
                let linked = matches!(key, 1 | 17) && slot.gen_name != Some("MAVERICK");
                if linked {
                    assert!(answer.is_ok(), "idx {} key {key}: {answer:?}", slot.idx);
                } else {
                    // The descriptor resolves, then its getter is NULL.
                    assert_eq!(answer, Err(ResolveErr::NullGetter), "idx {}", slot.idx);
                }
            }
        }
    }
    // Auto flavor with DEBUG/TEST selected finds the descriptor and its NULL getter.
    let debug = &[("NEURON_UCODE_FLAVOR", b"debug".as_slice())][..];
    assert_eq!(
        get_memory_image(7, 0, 0, debug),
        Err(ResolveErr::NullGetter)
    );
    // Profiler lane: only 7-10, 15-18, 23-26; MAVERICK 31-33 answer 2.
    for idx in 0..38 {
        let expected = matches!(idx, 7..=10 | 15..=18 | 23..=26);
        for kind in [0, 1] {
            let answer = get_hwdecode_table(idx, kind);
            assert_eq!(answer.is_ok(), expected, "idx {idx}");
            if !expected {
                assert_eq!(answer.unwrap_err().code(), 2);
            }
        }
    }
}
