//! Every row of the vendor's return-code tables and every documented quirk, one named test
//! each. Tests that need embedded bytes say which features they need.

use std::cell::Cell;

use nrtucode::{
    Env, ImageIndex, NoEnv, ProfKind, Region, ResolveErr, get_hwdecode_table, get_memory_image,
    resolve_hwdecode, resolve_image,
};
use nrtucode::{FLAVOR_VAR, REMOVED_FLAG_VAR};

type Pairs<'a> = [(&'a str, &'a [u8])];

const REMOVED_FLAG_SET: &Pairs<'static> = &[(REMOVED_FLAG_VAR, b"1")];

fn code(result: Result<&'static [u8], ResolveErr>) -> i32 {
    match result {
        Ok(_) => 0,
        Err(e) => e.code(),
    }
}

// ---- get_memory_image: code 1 --------------------------------------------------------------

#[test]
fn index_above_37_is_code_1() {
    for idx in [38, 39, 255, 1 << 31, u32::MAX] {
        assert_eq!(
            get_memory_image(idx, 0, 1, &NoEnv),
            Err(ResolveErr::IndexOutOfRange)
        );
    }
}

#[test]
fn index_bound_is_checked_before_the_removed_flag() {
    assert_eq!(code(get_memory_image(38, 0, 1, REMOVED_FLAG_SET)), 1);
    assert_eq!(
        code(get_memory_image(u32::MAX, 99, -5, REMOVED_FLAG_SET)),
        1
    );
}

// ---- code 8: the removed flag ----------------------------------------------------

#[test]
fn removed_flag_is_code_8_before_any_table_access() {
    // Answers that would otherwise be 2 (empty slot, bad flavor, bad region) become 8.
    assert_eq!(
        get_memory_image(36, 0, 1, REMOVED_FLAG_SET),
        Err(ResolveErr::RemovedFlag)
    );
    assert_eq!(code(get_memory_image(7, 0, 99, REMOVED_FLAG_SET)), 8);
    assert_eq!(code(get_memory_image(7, 9, 1, REMOVED_FLAG_SET)), 8);
    assert_eq!(code(get_memory_image(7, 0, 0, REMOVED_FLAG_SET)), 8);
}

#[test]
fn removed_flag_trips_only_on_exactly_1() {
    for value in [&b""[..], b"0", b"11", b"10", b"1 ", b" 1", b"true"] {
        let env: &Pairs<'_> = &[(REMOVED_FLAG_VAR, value)];
        assert_ne!(code(get_memory_image(36, 0, 1, env)), 8, "{value:?}");
    }
}

/// An environment that counts removal notices.
struct Counting<'a> {
    vars: &'a Pairs<'a>,
    notices: Cell<u32>,
}

impl Env for Counting<'_> {
    fn visit_var(&self, name: &str, visit: &mut dyn FnMut(Option<&[u8]>)) {
        self.vars.visit_var(name, visit);
    }

    fn removed_flag_notice(&self) {
        self.notices.set(self.notices.get() + 1);
    }
}

#[test]
fn removed_flag_notifies_the_environment_once_and_only_when_it_trips() {
    let env = Counting {
        vars: REMOVED_FLAG_SET,
        notices: Cell::new(0),
    };
    assert_eq!(code(get_memory_image(7, 0, 0, &env)), 8);
    assert_eq!(env.notices.get(), 1);
    let quiet = Counting {
        vars: &[(REMOVED_FLAG_VAR, b"0")],
        notices: Cell::new(0),
    };
    let _ = get_memory_image(7, 0, 0, &quiet);
    let _ = get_memory_image(38, 0, 0, &env); // code 1 comes first: no notice
    assert_eq!((quiet.notices.get(), env.notices.get()), (0, 1));
}

// ---- code 2 --------------------------------------------------------------------------------

#[test]
fn empty_slot_36_is_code_2() {
    for flavor in [0, 1, 2, 3, 17, 99] {
        assert_eq!(
            get_memory_image(36, 0, flavor, &NoEnv),
            Err(ResolveErr::EmptySlot)
        );
    }
    // Empty before region: a bad region still reports the empty slot.
    assert_eq!(
        get_memory_image(36, 7, 1, &NoEnv),
        Err(ResolveErr::EmptySlot)
    );
}

#[test]
fn unknown_flavor_is_code_2() {
    for flavor in [-1, i32::MIN, 4, 16, 20, 255, 256, i32::MAX] {
        assert_eq!(
            get_memory_image(7, 0, flavor, &NoEnv),
            Err(ResolveErr::FlavorNotFound),
            "{flavor}"
        );
    }
}

#[test]
fn region_is_checked_after_the_flavor_scan() {
    assert_eq!(
        get_memory_image(7, 9, 99, &NoEnv),
        Err(ResolveErr::FlavorNotFound)
    );
    for region in [-1, 4, i32::MIN, i32::MAX] {
        assert_eq!(
            get_memory_image(7, region, 1, &NoEnv),
            Err(ResolveErr::RegionOutOfRange)
        );
    }
}

#[test]
fn dkl_keys_exist_only_in_the_first_q7_pool_slots() {
    for idx in 0..38 {
        let has_dkl = [13, 21, 29].contains(&idx);
        for flavor in [17, 18, 19] {
            let answer = code(get_memory_image(idx, 0, flavor, &NoEnv));
            if has_dkl {
                assert_ne!(answer, 2, "idx {idx} flavor {flavor}");
            } else {
                assert_eq!(answer, 2, "idx {idx} flavor {flavor}");
            }
        }
    }
}

#[test]
fn auto_flavor_never_reaches_dkl_keys() {
    // The PERF/DEBUG/TEST descriptors answer auto requests, whatever the variable says.
    for value in [&b"17"[..], b"dkl", b"DYNAMIC_KERNEL_LOAD_PERF", b"debug"] {
        let env: &Pairs<'_> = &[(FLAVOR_VAR, value)];
        let auto = get_memory_image(13, 1, 0, env);
        let expected = if value == b"debug" { 2 } else { 1 };
        assert_eq!(auto, get_memory_image(13, 1, expected, env), "{value:?}");
    }
}

#[test]
fn maverick_pool_pe_sp_ship_no_debug() {
    for idx in 32..=35 {
        assert_eq!(
            get_memory_image(idx, 0, 2, &NoEnv),
            Err(ResolveErr::FlavorNotFound)
        );
        let debug_env: &Pairs<'_> = &[(FLAVOR_VAR, b"debug")];
        assert_eq!(code(get_memory_image(idx, 0, 0, debug_env)), 2);
    }
    // MAVERICK DVE (31) and Q7 POOL (37) do.
    assert_ne!(code(get_memory_image(31, 0, 2, &NoEnv)), 2);
    assert_ne!(code(get_memory_image(37, 1, 2, &NoEnv)), 2);
}

// ---- code 0 and 3: present, cursor, NULL --------------------------------------------------

#[cfg(all(feature = "gen-cayman", feature = "flavor-perf"))]
#[test]
fn boundary_cursor_is_code_0_with_zero_length() {
    let sram = get_memory_image(7, 2, 1, &NoEnv).expect("cursor resolves");
    assert!(sram.is_empty());
    let iram = get_memory_image(7, 0, 1, &NoEnv).expect("real bytes");
    assert_eq!(iram.len(), 0x13dc0);
}

#[cfg(all(feature = "gen-maverick", feature = "flavor-perf"))]
#[test]
fn maverick_sp_and_q7_keep_code_in_sram() {
    for idx in [ImageIndex::MAVERICK_NX_SP, ImageIndex::MAVERICK_Q7_POOL] {
        let iram = resolve_image(idx, Region::Iram, nrtucode::Flavor::Perf, &NoEnv).unwrap();
        let sram = resolve_image(idx, Region::Sram, nrtucode::Flavor::Perf, &NoEnv).unwrap();
        assert!(iram.is_empty(), "{idx:?} IRAM is a cursor");
        assert!(!sram.is_empty(), "{idx:?} SRAM is real");
    }
}

#[cfg(all(feature = "gen-sunda", feature = "flavor-perf"))]
#[test]
fn sunda_q7_pool_release_extram_is_the_only_non_empty_extram() {
    let mut non_empty = Vec::new();
    for idx in ImageIndex::ALL {
        for flavor in nrtucode::Flavor::KEYS {
            if let Ok(bytes) = resolve_image(idx, Region::Extram, flavor, &NoEnv)
                && !bytes.is_empty()
            {
                non_empty.push((idx, flavor));
            }
        }
    }
    assert_eq!(
        non_empty,
        [(ImageIndex::SUNDA_Q7_POOL, nrtucode::Flavor::Perf)]
    );
    let extram = get_memory_image(6, 3, 1, &NoEnv).unwrap();
    assert_eq!(extram.len(), 0x1b40);
}

#[test]
fn null_getter_is_code_3_and_only_for_deselected_cells() {
    // In a build with every feature there is no NULL getter in the image lane; each
    // deselected (generation, flavor family) turns its getters into code 3.
    for idx in ImageIndex::ALL {
        for desc in nrtucode::catalog::IMAGE_LIST[idx.as_usize()].descriptors() {
            for region in Region::ALL {
                let answer = resolve_image(idx, region, desc.flavor(), &NoEnv);
                match desc.region(region) {
                    Some(bytes) => assert_eq!(answer.map(<[u8]>::as_ptr), Ok(bytes.as_ptr())),
                    None => assert_eq!(answer, Err(ResolveErr::NullGetter)),
                }
            }
        }
    }
    let all_features = cfg!(all(
        feature = "gen-sunda",
        feature = "gen-cayman",
        feature = "gen-mariana",
        feature = "gen-mariana-plus",
        feature = "gen-maverick",
        feature = "flavor-perf",
        feature = "flavor-debug",
        feature = "flavor-test",
        feature = "flavor-dkl-perf",
        feature = "flavor-dkl-debug",
        feature = "flavor-dkl-test",
    ));
    let nulls = nrtucode::catalog::image_entries()
        .filter(|e| e.blob.is_none())
        .count();
    assert_eq!(nulls == 0, all_features, "{nulls} NULL getters");
}

#[test]
fn twin_sp_slots_resolve_to_the_same_pointer() {
    for (a, b) in ImageIndex::TWINS.map(|(a, b)| (a.raw(), b.raw())) {
        for region in 0..4 {
            let (x, y) = (
                get_memory_image(a, region, 1, &NoEnv),
                get_memory_image(b, region, 1, &NoEnv),
            );
            assert_eq!(x.map(<[u8]>::as_ptr), y.map(<[u8]>::as_ptr));
        }
    }
}

// ---- get_hwdecode_table ------------------------------------------------------------------

#[test]
fn prof_table_index_above_37_is_code_1() {
    for idx in [38, 1 << 31, u32::MAX] {
        assert_eq!(get_hwdecode_table(idx, 0), Err(ResolveErr::IndexOutOfRange));
        assert_eq!(code(get_hwdecode_table(idx, 7)), 1);
    }
}

#[test]
fn prof_table_bad_kind_is_code_2_not_1() {
    for kind in [-1, 2, 3, i32::MIN, i32::MAX] {
        assert_eq!(get_hwdecode_table(7, kind), Err(ResolveErr::KindOutOfRange));
        assert_eq!(get_hwdecode_table(0, kind), Err(ResolveErr::KindOutOfRange));
    }
}

#[test]
fn prof_table_null_slots_are_code_2() {
    // SUNDA, every SP and Q7 slot, the gap.
    for idx in [
        0, 3, 4, 5, 6, 11, 12, 13, 14, 19, 22, 27, 30, 34, 35, 36, 37,
    ] {
        for kind in [0, 1] {
            assert_eq!(get_hwdecode_table(idx, kind), Err(ResolveErr::NoProfiler));
        }
    }
}

#[test]
fn prof_table_has_no_code_3_and_ignores_the_environment() {
    // There is no environment argument at all; the removed flag cannot reach this lane.
    for idx in 0..=40 {
        for kind in -1..=2 {
            assert_ne!(code(get_hwdecode_table(idx, kind)), 3);
            assert_ne!(code(get_hwdecode_table(idx, kind)), 8);
        }
    }
}

#[cfg(feature = "gen-maverick")]
#[test]
fn prof_table_maverick_profiles_dve_pool_pe() {
    for idx in [31, 32, 33] {
        assert_eq!(get_hwdecode_table(idx, 0).map(<[u8]>::len), Ok(0x400));
        assert_eq!(get_hwdecode_table(idx, 1).map(<[u8]>::len), Ok(0x2000));
    }
}

#[test]
fn typed_and_raw_prof_table_lookups_agree() {
    for idx in ImageIndex::ALL {
        for kind in ProfKind::ALL {
            assert_eq!(
                resolve_hwdecode(idx, kind),
                get_hwdecode_table(idx.raw(), kind.raw())
            );
        }
    }
}

#[test]
fn error_codes_and_messages() {
    let codes: Vec<i32> = ResolveErr::ALL.iter().map(ResolveErr::code).collect();
    assert_eq!(codes, [1, 2, 2, 2, 2, 2, 3, 8]);
    for e in ResolveErr::ALL {
        let text = e.to_string();
        assert!(text.ends_with(&format!("(code {})", e.code())), "{text}");
    }
}
