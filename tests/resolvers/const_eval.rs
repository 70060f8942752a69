//! Compile-time resolution: images and profiler tables resolved in `const` items and checked
//! with `static_assertions`, so a wrong answer fails the build of this test.
#![cfg(all(
    feature = "gen-cayman",
    feature = "flavor-perf",
    feature = "gen-maverick"
))]

use nrtucode::catalog::DESCRIPTOR_COUNT;
use nrtucode::prof::{CamView, TableView, validate_pair};
use nrtucode::{
    Flavor, ImageIndex, ProfKind, Region, ResolveErr, get_hwdecode_table, get_memory_image_const,
    resolve_hwdecode, resolve_image_const,
};
use static_assertions::{const_assert, const_assert_eq};

const CAYMAN_ACT_IRAM: &[u8] = match get_memory_image_const(7, 0, 1) {
    Ok(bytes) => bytes,
    Err(_) => panic!("CAYMAN NX ACT PERF IRAM"),
};
const_assert_eq!(CAYMAN_ACT_IRAM.len(), 0x13dc0);

const MAVERICK_SP_SRAM: Result<&[u8], ResolveErr> =
    resolve_image_const(ImageIndex::MAVERICK_NX_SP, Region::Sram, Flavor::Perf);
const_assert!(matches!(MAVERICK_SP_SRAM, Ok(b) if b.len() == 0xf580));

const GAP: Result<&[u8], ResolveErr> = get_memory_image_const(36, 0, 1);
const_assert!(matches!(GAP, Err(ResolveErr::EmptySlot)));
const_assert!(matches!(
    get_memory_image_const(38, 0, 1),
    Err(ResolveErr::IndexOutOfRange)
));
const_assert!(matches!(
    get_hwdecode_table(7, 2),
    Err(ResolveErr::KindOutOfRange)
));
const_assert_eq!(DESCRIPTOR_COUNT, 102);

// The profiler views validate at compile time as well.
const CAM: &[u8] = match resolve_hwdecode(ImageIndex::MAVERICK_NX_DVE, ProfKind::Cam) {
    Ok(bytes) => bytes,
    Err(_) => panic!("MAVERICK DVE PROF_CAM"),
};
const TABLE: &[u8] = match get_hwdecode_table(31, 1) {
    Ok(bytes) => bytes,
    Err(_) => panic!("MAVERICK DVE PROF_TABLE"),
};
const ARMED: usize = match (CamView::new(CAM), TableView::new(TABLE)) {
    (Ok(cam), Ok(table)) => match validate_pair(&cam, &table) {
        Ok(summary) => summary.armed,
        Err(_) => panic!("invalid profiler pair"),
    },
    _ => panic!("profiler sizes"),
};
const_assert_eq!(ARMED, 54);

#[test]
fn const_answers_equal_run_time_answers() {
    let run_time = nrtucode::get_memory_image(7, 0, 1, &nrtucode::NoEnv).unwrap();
    assert_eq!(CAYMAN_ACT_IRAM.as_ptr(), run_time.as_ptr());
    assert_eq!(ARMED, 54);
}
