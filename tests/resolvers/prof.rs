//! The profiler views on every embedded PROF pair, and the validator on corrupted copies.

use nrtucode::catalog::{HWDECODE_LIST, IMAGE_LIST};
use nrtucode::prof::{
    CAM_RECORD_SIZE, CAM_SIZE, CamRecord, CamView, ProfError, TABLE_RECORD_SIZE, TABLE_SIZE,
    TableView, validate_pair,
};
use nrtucode::{ImageIndex, ProfKind, resolve_hwdecode};

fn pair(idx: ImageIndex) -> Option<(&'static [u8], &'static [u8])> {
    Some((
        resolve_hwdecode(idx, ProfKind::Cam).ok()?,
        resolve_hwdecode(idx, ProfKind::Table).ok()?,
    ))
}

#[test]
fn every_embedded_pair_is_valid_with_the_vendor_armed_count() {
    let facts = nrtucode_facts::prof_blobs();
    let mut validated = 0;
    for idx in ImageIndex::ALL {
        let Some((cam, table)) = pair(idx) else {
            continue;
        };
        let id = IMAGE_LIST[idx.as_usize()]
            .id()
            .expect("profiled slots are populated");
        let fact = facts
            .iter()
            .find(|f| f.gen_name == id.generation.name() && f.engine == id.engine.name())
            .expect("facts for every profiled slot");
        let cam = CamView::new(cam).unwrap();
        let table = TableView::new(table).unwrap();
        let summary = validate_pair(&cam, &table).unwrap();
        assert_eq!(summary.armed, fact.cam_armed, "{idx:?}");
        assert_eq!(table.populated_count(), fact.table_populated);
        assert_eq!(cam.armed_count(), fact.cam_armed);
        assert!(cam.record(summary.armed - 1).unwrap().is_wildcard());
        assert_eq!(cam.records().count(), 64);
        assert_eq!(
            table.records().filter(|r| r.is_populated()).count(),
            summary.armed
        );
        validated += 1;
    }
    let expected = HWDECODE_LIST.iter().filter(|s| s.is_populated()).count();
    assert_eq!(validated, expected);
}

#[test]
#[cfg_attr(
    not(all(nrtucode_fixtures, feature = "gen-cayman")),
    ignore = "pins the CAYMAN fixture records: needs the built-in fixtures and feature gen-cayman"
)]
fn fixture_pins_match_the_published_records() {
    // CAYMAN: slot 13 arms ACTIVATE (0x21); MARIANA DVE: slot 43 is the one 9-bit match.
    let (cam, _) = pair(ImageIndex::CAYMAN_NX_ACT).unwrap();
    assert_eq!(
        CamView::new(cam).unwrap().record(13).unwrap().opcode_id,
        0x21
    );
    if let Some((cam, table)) = pair(ImageIndex::MARIANA_NX_DVE) {
        let cam = CamView::new(cam).unwrap();
        let r = cam.record(43).unwrap();
        assert_eq!((r.opcode_id, r.mask), (0x1e3, 0x1ff));
        let summary = validate_pair(&cam, &TableView::new(table).unwrap()).unwrap();
        assert_eq!(summary.nine_bit_matches, 1);
    }
}

/// A valid pair to corrupt: three armed records (two opcodes and the wildcard).
fn valid() -> (Vec<u8>, Vec<u8>) {
    let mut cam = vec![0u8; CAM_SIZE];
    let records = [(0x21u32, 0xffu32), (0x1e3, 0x1ff), (0, 0)];
    for (i, (op, mask)) in records.iter().enumerate() {
        let at = i * CAM_RECORD_SIZE;
        cam[at..at + 4].copy_from_slice(&op.to_le_bytes());
        cam[at + 4..at + 8].copy_from_slice(&mask.to_le_bytes());
        cam[at + 8..at + 12].copy_from_slice(&1u32.to_le_bytes());
    }
    let mut table = vec![0u8; TABLE_SIZE];
    for i in 0..3 {
        table[i * TABLE_RECORD_SIZE + 0x14] = 1;
    }
    (cam, table)
}

fn check(cam: &[u8], table: &[u8]) -> Result<usize, ProfError> {
    let cam = CamView::new(cam)?;
    let table = TableView::new(table)?;
    validate_pair(&cam, &table).map(|s| s.armed)
}

#[test]
fn the_validator_accepts_a_minimal_valid_pair() {
    let (cam, table) = valid();
    assert_eq!(check(&cam, &table), Ok(3));
    let view = CamView::new(&cam).unwrap();
    assert_eq!(view.record(2), Some(CamRecord::WILDCARD));
    assert_eq!(view.record(64), None);
}

#[test]
fn the_validator_names_each_broken_invariant() {
    let (cam, table) = valid();
    let put = |bytes: &[u8], at: usize, value: u32| {
        let mut copy = bytes.to_vec();
        copy[at..at + 4].copy_from_slice(&value.to_le_bytes());
        copy
    };
    assert_eq!(
        check(&cam[..100], &table),
        Err(ProfError::WrongSize {
            expected: CAM_SIZE,
            found: 100
        })
    );
    assert_eq!(
        check(&cam, &table[..TABLE_SIZE - 1]),
        Err(ProfError::WrongSize {
            expected: TABLE_SIZE,
            found: TABLE_SIZE - 1
        })
    );
    assert_eq!(
        check(&put(&cam, 8, 2), &table),
        Err(ProfError::BadEnable {
            record: 0,
            value: 2
        })
    );
    assert_eq!(
        check(&put(&cam, 4, 0x7f), &table),
        Err(ProfError::BadMask {
            record: 0,
            value: 0x7f
        })
    );
    assert_eq!(
        check(&put(&cam, 12, 5), &table),
        Err(ProfError::ReservedNotZero {
            record: 0,
            value: 5
        })
    );
    assert_eq!(
        check(&vec![0u8; CAM_SIZE], &table),
        Err(ProfError::NothingArmed)
    );
    // Clear record 1: record 2 is armed after a gap.
    let mut gap = cam.clone();
    gap[16..32].fill(0);
    assert_eq!(
        check(&gap, &table),
        Err(ProfError::ArmedAfterGap { record: 2 })
    );
    // Only disarm it: the disarmed record still holds an opcode.
    assert_eq!(
        check(&put(&cam, 16 + 8, 0), &table),
        Err(ProfError::DisarmedNotZero { record: 1 })
    );
    // The last armed record is an opcode, not the wildcard.
    assert_eq!(
        check(&put(&cam, 32, 0x42), &table),
        Err(ProfError::WildcardNotLast { record: 2 })
    );
    // A disarmed record with an opcode left in it.
    assert_eq!(
        check(&put(&cam, 5 * 16, 9), &table),
        Err(ProfError::DisarmedNotZero { record: 5 })
    );
    let mut t = table.clone();
    t[TABLE_RECORD_SIZE + 0x40] = 1;
    assert_eq!(
        check(&cam, &t),
        Err(ProfError::TableUnusedByte {
            record: 1,
            offset: 0x40
        })
    );
    let mut t = table.clone();
    t[9 * TABLE_RECORD_SIZE] = 1;
    assert_eq!(
        check(&cam, &t),
        Err(ProfError::PopulatedAfterGap { record: 9 })
    );
    let mut t = table.clone();
    t[2 * TABLE_RECORD_SIZE + 0x14] = 0;
    assert_eq!(
        check(&cam, &t),
        Err(ProfError::CountMismatch {
            cam_armed: 3,
            table_populated: 2
        })
    );
    for e in [
        ProfError::NothingArmed,
        ProfError::BadMask {
            record: 1,
            value: 3,
        },
    ] {
        assert!(!e.to_string().is_empty());
    }
}

#[test]
fn table_records_expose_their_words() {
    let (_, mut table) = valid();
    table[0..4].copy_from_slice(&0xdead_beefu32.to_le_bytes());
    table[4..8].copy_from_slice(&7u32.to_le_bytes());
    table[8] = 0xaa;
    let view = TableView::new(&table).unwrap();
    let r = view.record(0).unwrap();
    assert_eq!((r.cfg0(), r.cfg1(), r.class()), (0xdead_beef, 7, 1));
    assert_eq!(r.descriptor()[0], 0xaa);
    assert!(!r.is_control());
    assert!(view.record(1).unwrap().is_control());
    assert!(view.record(64).is_none());
}
