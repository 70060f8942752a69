//! Features `update` and `mem-flash`: updates that cannot brick, proved by power cuts.
//!
//! The core's in-memory NOR flash (`nrtucode::update::mem_flash`: erased bytes read `0xff`, a
//! write only clears bits, writes and erases must be aligned, no word written twice between
//! erases, every operation journaled) in two geometries: QSPI NOR (4 KiB
//! erase, 4-byte write) and internal flash (2 KiB erase, 8-byte write, 4-byte read). A script
//! installs, boots on trial, confirms, installs again, boots on trial until it reverts and is
//! offered a replayed old partition; the power is cut at **every** erase and write of it, the
//! interrupted operation leaving its word or sector torn (a write: a random part of its bits
//! cleared; an erase: a random part of its bytes `0xff`, the others unchanged); after each cut
//! a boot must use a partition that is byte for byte one of the two the interrupted step was
//! between (so fully verified: both are signed, and never a mix), and the recovery (the boot,
//! then the interrupted step done again) is cut at every one of its operations too, each
//! followed by a boot with the same rule. Each of those boots is also predicted from the bytes
//! alone, as a host tool reads an image (`update::image::FlashImage::next_boot`), and the
//! prediction must be the boot (slot, fallback, state). It prints how many cut points it tried
//! and how many failed (0).
//!
//! README's test command and CI cut at every operation of QSPI NOR and at one in 8 of internal
//! flash (from an offset each test varies); `NRTUCODE_SWEEP=full` cuts at every operation of
//! both (`nrtucode_testcases::sweep`). Each test prints its geometry, what it sampled and its
//! counts: `NRTUCODE_SWEEP=full cargo test --release -p nrtucode --features update,mem-flash
//! --test update_power_cut -- --nocapture` (it runs under `cargo test --workspace` too, where
//! the CLI's dev-dependency on the core enables both features).
//! The recoveries' cuts are sampled unless `NRTUCODE_SWEEP=full` ([`Recoveries`]); every
//! sampled cut of the script is booted and recovered either way.

use std::fmt::Write as _;

use nrtucode::partition::format::*;
use nrtucode::partition::{
    BlobId, CheckedPartition, PublicKey, TableClass, TrustError, VerifiedPartition,
};
use nrtucode::update::Refusal;
use nrtucode::update::image::FlashImage;
use nrtucode::update::mem_flash::{MemFlash, MemFlashError, Op, each_cut};
use nrtucode::update::record::{Geometry as FlashGeometry, Record};
use nrtucode::update::{
    BlockingFlash, Config, Layout, MAX_TRIAL_BOOTS, Slot, Slots, State, Status, Unmapped,
    UpdateError,
};
use nrtucode_pack::{Blobs, PackOptions, SigningKey, pack};
use nrtucode_testcases::sweep::{Sample, Sweep};
use sha2::{Digest, Sha256};

mod partitions;
use partitions::{le32, shrink, two_slots};

// ---------------------------------------------------------------------------------------------
// Small signed partitions (`partitions::shrink`).

struct Parts {
    key: PublicKey,
    /// Security counters 1, 2 and 3, each a small signed front partition.
    p1: Vec<u8>,
    p2: Vec<u8>,
    p3: Vec<u8>,
}

fn parts() -> Parts {
    let key = SigningKey::from_pem(include_str!("../keys/test-ed25519.pem")).unwrap();
    let blobs = Blobs::fixtures(TableClass::Front);
    let make = |counter: u32| {
        let options = PackOptions {
            security_counter: counter,
            key: Some(&key),
        };
        shrink(&pack(&blobs, &options).unwrap(), 16, &key)
    };
    Parts {
        key: PublicKey::from_bytes(*key.public_key().as_bytes()),
        p1: make(1),
        p2: make(2),
        p3: make(3),
    }
}

// ---------------------------------------------------------------------------------------------
// The script.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    P1,
    P2,
    P3,
}

#[derive(Clone, Copy, Debug)]
enum Step {
    Install(Part),
    Boot,
    Confirm,
}

/// Each step, and the partitions a boot after a cut in it may use (the one before and the one
/// after the step).
const SCRIPT: &[(Step, &[Part])] = &[
    (Step::Install(Part::P2), &[Part::P1, Part::P2]),
    (Step::Boot, &[Part::P2]),
    (Step::Confirm, &[Part::P2]),
    (Step::Install(Part::P3), &[Part::P2, Part::P3]),
    (Step::Boot, &[Part::P3]),
    (Step::Boot, &[Part::P3]),
    (Step::Boot, &[Part::P3, Part::P2]),
    (Step::Boot, &[Part::P3, Part::P2]),    // the revert
    (Step::Install(Part::P1), &[Part::P2]), // a replayed old partition: refused
    (Step::Boot, &[Part::P2]),
];

/// Chunk lengths of a streamed install, cycled: odd sizes, odd alignments.
const CHUNKS: &[usize] = &[1, 7, 300, 4096, 13, 255, 2];

/// The flash the script runs on, as this test reads it: its bytes and its journal, through a
/// mapping ([`MemFlash`]) or through `read` alone ([`Unmapped`]).
trait Mem: BlockingFlash<Error = MemFlashError> {
    fn bytes(&self) -> &[u8];
    fn journal(&self) -> &[Op];
}

impl<const R: usize, const W: usize, const E: usize> Mem for MemFlash<R, W, E> {
    fn bytes(&self) -> &[u8] {
        MemFlash::bytes(self)
    }
    fn journal(&self) -> &[Op] {
        MemFlash::journal(self)
    }
}

impl<const R: usize, const W: usize, const E: usize> Mem for Unmapped<'_, MemFlash<R, W, E>> {
    fn bytes(&self) -> &[u8] {
        self.driver().bytes()
    }
    fn journal(&self) -> &[Op] {
        self.driver().journal()
    }
}

/// A prefix buffer for an [`Unmapped`] flash: the small partitions' prefix fits.
const PREFIX: usize = 8 * 1024;

/// `$body` with `$slots` over `$mem` (a `Vec<u8>`), mapped or read through `read` alone as
/// `$unmapped` says.
macro_rules! with_slots {
    ($run:expr, $mem:expr, $unmapped:expr, <$r:ident, $w:ident, $e:ident>, |$slots:ident| $body:expr) => {
        if $unmapped {
            let mut prefix = vec![0u8; PREFIX];
            let flash = Unmapped::new(MemFlash::<$r, $w, $e>::new($mem), &mut prefix);
            let mut $slots = $run.slots(flash);
            $body
        } else {
            let mut $slots = $run.slots(MemFlash::<$r, $w, $e>::new($mem));
            $body
        }
    };
}

struct Geometry {
    name: &'static str,
    /// The slots read through `read` alone ([`Unmapped`]), not through a mapping.
    unmapped: bool,
    slot_len: u32,
    /// Every cut point of it runs in README's test command and CI; the other geometry's are
    /// sampled there (`nrtucode_testcases::sweep`: `NRTUCODE_SWEEP=full` runs all of both).
    exhaustive: bool,
}

struct Run<'p> {
    parts: &'p Parts,
    layout: Layout,
}

impl Run<'_> {
    fn bytes(&self, part: Part) -> &[u8] {
        match part {
            Part::P1 => &self.parts.p1,
            Part::P2 => &self.parts.p2,
            Part::P3 => &self.parts.p3,
        }
    }

    fn config(&self) -> Config {
        Config {
            layout: self.layout,
            key: self.parts.key,
            class: TableClass::Front,
        }
    }

    fn slots<F: BlockingFlash>(&self, flash: F) -> Slots<F> {
        Slots::new(flash, self.config()).expect("the layout fits the geometry")
    }

    /// Runs `step`; `Ok(description)` when it did what the uncut script expects of it there
    /// (checked by the caller on the uncut run).
    fn step<F: Mem>(
        &self,
        slots: &mut Slots<F>,
        step: Step,
    ) -> Result<String, UpdateError<F::Error>> {
        match step {
            Step::Install(part) => {
                let mut install = slots.install()?;
                let target = install.target();
                let bytes = self.bytes(part);
                let mut at = 0;
                for n in CHUNKS.iter().cycle() {
                    if at == bytes.len() {
                        break;
                    }
                    let end = (at + n).min(bytes.len());
                    install.write(&bytes[at..end])?;
                    at = end;
                }
                let state = install.finish()?;
                Ok(format!("installed {part:?} into {target:?}: {state:?}"))
            }
            Step::Boot => {
                let (slot, state) = slots.boot().map(|boot| (boot.slot, boot.state))?;
                let part = self.in_slot(slots.flash().bytes(), slot);
                Ok(format!("booted {slot:?} ({part:?}), {state:?}"))
            }
            Step::Confirm => {
                let state = slots.state()?;
                let state = slots.confirm(state.active)?;
                Ok(format!("confirmed: {state:?}"))
            }
        }
    }

    /// The partition `slot` holds, byte for byte, in the flash bytes `mem`.
    fn in_slot(&self, mem: &[u8], slot: Slot) -> Option<Part> {
        let start = match slot {
            Slot::A => self.layout.slot_a,
            Slot::B => self.layout.slot_b,
        } as usize;
        let region = &mem[start..start + self.layout.slot_len as usize];
        [Part::P1, Part::P2, Part::P3]
            .into_iter()
            .find(|p| region.starts_with(self.bytes(*p)))
    }

    /// A boot after a cut: it must answer, with a partition byte for byte one of `allowed`.
    fn check_boot<const R: usize, const W: usize, const E: usize>(
        &self,
        mem: &[u8],
        allowed: &[Part],
        unmapped: bool,
    ) -> Result<(), String> {
        // What a host reading the same bytes predicts (`update::image`, no driver), compared
        // with the device's boot below.
        let geometry = FlashGeometry::of::<MemFlash<R, W, E>>();
        let image = FlashImage::new(mem, self.config(), geometry).expect("the layout fits");
        let predicted = (image.next_boot())
            .map(|n| (n.boot.slot, n.boot.fell_back, n.boot.state))
            .map_err(|e| e.to_string());
        let booted = with_slots!(self, mem.to_vec(), unmapped, <R, W, E>, |slots| {
            (slots.boot()).map(|boot| (boot.slot, boot.fell_back, boot.state))
        });
        let (slot, fell_back, state) = booted.map_err(|e| format!("no boot: {e}"))?;
        if predicted != Ok((slot, fell_back, state)) {
            return Err(format!(
                "the host's prediction {predicted:?} is not the boot: {slot:?} fell back \
                 {fell_back} {state:?}"
            ));
        }
        match self.in_slot(mem, slot) {
            Some(p) if allowed.contains(&p) => {}
            other => {
                return Err(format!(
                    "booted {slot:?} holding {other:?}, allowed {allowed:?}"
                ));
            }
        }
        Ok(())
    }

    /// The recovery after a cut in `step`: a boot, then `step` again where it still applies.
    fn recover<F: Mem>(
        &self,
        slots: &mut Slots<F>,
        step: Step,
    ) -> Result<(), UpdateError<F::Error>> {
        let (slot, state) = slots.boot().map(|boot| (boot.slot, boot.state))?;
        match step {
            Step::Install(_) if !state.is_trial() => self.step(slots, step).map(|_| ()),
            Step::Confirm if state.is_trial() && state.active == slot => {
                slots.confirm(slot).map(|_| ())
            }
            _ => Ok(()),
        }
    }
}

/// Bytes of a record's payload and of its check (docs/update.md, "The byte layout").
const PAYLOAD_LEN: usize = 24;
const CHECK_LEN: usize = 8;
/// Bytes of an install's writes but its last (docs/update.md).
const STAGE_LEN: usize = 256;

/// A slot's byte in a record: 0 for A, 1 for B.
fn raw(slot: Slot) -> u8 {
    match slot {
        Slot::A => 0,
        Slot::B => 1,
    }
}

/// The record bytes of `state` as docs/update.md lays them out, written by this test's own
/// encoder: the payload padded with zeros to `unit`, then the first 8 bytes of its SHA-256,
/// padded with zeros to `unit`.
fn record(state: &State, unit: usize) -> Vec<u8> {
    let mut head = Vec::new();
    head.extend(*b"NRUS");
    head.extend(state.seq.to_le_bytes());
    let (status, boots) = match state.status {
        Status::Confirmed => (1, 0),
        Status::Trial { boots } => (2, boots),
    };
    head.extend([
        1, // the version
        raw(state.active),
        status,
        boots,
        state.previous.map_or(0xff, raw),
        0,
        0,
        0,
    ]);
    head.extend(state.min_security_counter.to_le_bytes());
    head.extend([0; 4]);
    assert_eq!(head.len(), PAYLOAD_LEN);
    head.resize(PAYLOAD_LEN.div_ceil(unit) * unit, 0);
    let mut check = Sha256::digest(&head)[..CHECK_LEN].to_vec();
    check.resize(CHECK_LEN.div_ceil(unit) * unit, 0);
    head.extend(check);
    head
}

/// One geometry, every cut point of the script that `sample` takes, with the state's first
/// sector holding `fill` records before it (so that a change of sector falls inside the
/// script) and the other sector full of older ones; and every cut point of the recovery after
/// each of them. Returns the cut points tried and failed, and a line of what it did.
fn exhaustive<const R: usize, const W: usize, const E: usize>(
    parts: &Parts,
    geometry: &Geometry,
    fill: usize,
    sample: Sample,
) -> (usize, usize, String) {
    let slot_len = geometry.slot_len;
    let state = 2 * slot_len;
    let run = Run {
        parts,
        layout: Layout {
            slot_a: 0,
            slot_b: slot_len,
            slot_len,
            state,
        },
    };
    let capacity = state as usize + 2 * E;
    let mut factory = vec![0xff; capacity];
    factory[..parts.p1.len()].copy_from_slice(&parts.p1);
    let unit = R.max(W);
    let per_sector = FlashGeometry::of::<MemFlash<R, W, E>>()
        .records()
        .unwrap()
        .per_sector();
    if fill > 0 {
        // Sector 1: a full sector of older records; sector 0: `fill` newer ones. All say what
        // the factory default says: slot A confirmed, counter 1.
        let state_of = |seq: u32| State {
            seq,
            active: Slot::A,
            status: Status::Confirmed,
            previous: None,
            min_security_counter: 1,
        };
        let len = record(&state_of(1), unit).len();
        for i in 0..per_sector {
            let at = state as usize + E + i * len;
            factory[at..at + len].copy_from_slice(&record(&state_of(1 + i as u32), unit));
        }
        for i in 0..fill {
            let at = state as usize + i * len;
            let seq = (per_sector + 1 + i) as u32;
            factory[at..at + len].copy_from_slice(&record(&state_of(seq), unit));
        }
    }

    // The uncut script: what each step does, and where its operations end in the journal.
    let unmapped = geometry.unmapped;
    let (ends, journal) = with_slots!(run, factory.clone(), unmapped, <R, W, E>, |slots| {
        uncut(&run, &mut slots, geometry, fill)
    });
    let recoveries = Recoveries::from_env();
    let (mut tried, mut failed, mut script_cuts) = (0usize, 0usize, 0usize);
    let mut failures = String::new();
    let mut fail = |what: String| {
        failed += 1;
        if failed <= 20 {
            let _ = writeln!(failures, "FAILED {} fill {fill}: {what}", geometry.name);
        }
    };
    each_cut(&factory, &journal, fill as u64, |cut, torn| {
        if !sample.takes(cut) {
            return;
        }
        tried += 1;
        script_cuts += 1;
        let n = ends.iter().position(|end| cut < *end).unwrap();
        let (step, allowed) = SCRIPT[n];
        if let Err(e) = run.check_boot::<R, W, E>(&torn, allowed, unmapped) {
            fail(format!("cut {cut} in step {n} {step:?}: {e}"));
            return;
        }
        // The recovery (a boot, then the step again), and every cut of it.
        let (recovered, recovery) = with_slots!(run, torn.clone(), unmapped, <R, W, E>, |slots| {
            (run.recover(&mut slots, step), slots.flash().journal().to_vec())
        });
        // The replayed old partition is refused again: what the recovery should do.
        if let Err(e) = recovered
            && !matches!(
                (step, &e),
                (Step::Install(Part::P1), UpdateError::Refused(_))
            )
        {
            fail(format!("cut {cut} in step {n} {step:?}: recovery: {e}"));
        }
        let state_op = journal[cut].start() >= state as usize;
        if recoveries == Recoveries::Sampled && !state_op && cut % SAMPLE_EVERY != 0 {
            return;
        }
        each_cut(&torn, &recovery, cut as u64, |again, torn_again| {
            tried += 1;
            if let Err(e) = run.check_boot::<R, W, E>(&torn_again, allowed, unmapped) {
                fail(format!(
                    "cut {cut} in step {n} {step:?}, then {again} in its recovery: {e}"
                ));
            }
        });
    });
    // Every cut of the script the sample takes was tried, and the recoveries were cut too.
    let taken = (0..journal.len()).filter(|n| sample.takes(*n)).count();
    assert!(
        taken > 0 && script_cuts == taken && tried > script_cuts,
        "{}: {script_cuts} of {taken} sampled script cuts tried, {tried} cut points in all",
        geometry.name
    );
    let line = format!(
        "{}, {per_sector} records a state sector, {fill:3} filled, recoveries {recoveries:?}: {} operations in the script, cuts: {}, {tried} cut points tried, {failed} failed\n{failures}",
        geometry.name,
        journal.len(),
        sample.describe(),
    );
    (tried, failed, line)
}

/// The uncut script over `slots`: each step does what the script expects of it. Where each
/// step's operations end in the journal, and the journal.
fn uncut<F: Mem>(
    run: &Run<'_>,
    slots: &mut Slots<F>,
    geometry: &Geometry,
    fill: usize,
) -> (Vec<usize>, Vec<Op>) {
    let first = slots.state().unwrap();
    assert_eq!((first.active, first.min_security_counter), (Slot::A, 1));
    let mut ends = Vec::new();
    for (n, (step, _)) in SCRIPT.iter().enumerate() {
        let outcome = run.step(slots, *step);
        let expected = match n {
            0 | 3 => outcome
                .as_ref()
                .is_ok_and(|o| o.contains("Trial { boots: 0 }")),
            1 => outcome
                .as_ref()
                .is_ok_and(|o| o.contains("booted B (Some(P2))")),
            2 => outcome
                .as_ref()
                .is_ok_and(|o| o.contains("min_security_counter: 2")),
            4..=6 => outcome
                .as_ref()
                .is_ok_and(|o| o.contains("booted A (Some(P3))")),
            7 => outcome
                .as_ref()
                .is_ok_and(|o| o.contains("booted B (Some(P2))") && o.contains("Confirmed")),
            8 => matches!(
                outcome,
                Err(UpdateError::Refused(Refusal::Trust(TrustError::Rollback {
                    found: 1,
                    minimum: 2
                })))
            ),
            _ => outcome
                .as_ref()
                .is_ok_and(|o| o.contains("booted B (Some(P2))")),
        };
        assert!(
            expected,
            "{} fill {fill}: step {n} {step:?}: {outcome:?}",
            geometry.name
        );
        ends.push(slots.flash().journal().len());
    }
    assert_eq!(slots.state().unwrap().min_security_counter, 2);
    (ends, slots.flash().journal().to_vec())
}

/// How much of the recoveries is cut: with `NRTUCODE_SWEEP=full` every operation of the
/// recovery after every cut of the script; otherwise (README's test command and CI) after every
/// cut of a state-sector operation (the records and the sector erases) and after every
/// [`SAMPLE_EVERY`]th cut of a slot operation, and still a boot and a recovery after every cut
/// of the script the sweep takes. Each run prints which, and its counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Recoveries {
    Full,
    Sampled,
}

impl Recoveries {
    fn from_env() -> Self {
        match Sweep::from_env().unwrap_or_else(|e| panic!("{e}")) {
            Sweep::Full => Recoveries::Full,
            Sweep::Sampled => Recoveries::Sampled,
        }
    }
}

/// In a sampled sweep, the recovery of one slot operation's cut in this many is cut too.
const SAMPLE_EVERY: usize = 8;

const QSPI: Geometry = Geometry {
    name: "QSPI NOR (4 KiB erase, 4 B write, 1 B read)",
    unmapped: false,
    slot_len: 16 * 1024,
    exhaustive: true,
};
const INTERNAL: Geometry = Geometry {
    name: "internal flash (2 KiB erase, 8 B write, 4 B read)",
    unmapped: false,
    slot_len: 16 * 1024,
    exhaustive: false,
};

/// A SPI NOR on a bus: QSPI's geometry, every slot read through `read` alone.
const SPI_UNMAPPED: Geometry = Geometry {
    name: "SPI NOR without a mapping (4 KiB erase, 4 B write, 1 B read; read only)",
    unmapped: true,
    slot_len: 16 * 1024,
    exhaustive: true,
};
/// Internal flash's geometry, read through `read` alone.
const INTERNAL_UNMAPPED: Geometry = Geometry {
    name: "internal flash's geometry without a mapping (2 KiB erase, 8 B write, 4 B read)",
    unmapped: true,
    slot_len: 16 * 1024,
    exhaustive: false,
};

/// One exhaustive run per test, so the harness runs them side by side; each prints its line
/// and the totals so far are printed by the last (`-- --nocapture --test-threads 1` prints
/// them in order).
fn cut_test<const R: usize, const W: usize, const E: usize>(geometry: &Geometry, fill: usize) {
    let parts = parts();
    assert!(
        parts.p1.len() < 16 * 1024,
        "small partitions: {}",
        parts.p1.len()
    );
    let sample = Sweep::from_env()
        .unwrap_or_else(|e| panic!("{e}"))
        .sample(geometry.exhaustive, fill as u64);
    let (tried, failed, line) = exhaustive::<R, W, E>(&parts, geometry, fill, sample);
    println!("power cuts: {line}power cuts: {tried} cut points tried, {failed} failed");
    assert_eq!(failed, 0, "{line}");
}

// No record yet (the factory default), then a first sector so nearly full that the change of
// sector falls on the first install's record, the boot after it, the confirmation, the revert.
#[test]
fn power_cuts_qspi_factory_state() {
    cut_test::<1, 4, 4096>(&QSPI, 0);
}
#[test]
fn power_cuts_qspi_sector_change_at_the_install() {
    cut_test::<1, 4, 4096>(&QSPI, 128);
}
#[test]
fn power_cuts_qspi_sector_change_at_the_trial_boot() {
    cut_test::<1, 4, 4096>(&QSPI, 127);
}
#[test]
fn power_cuts_qspi_sector_change_at_the_confirmation() {
    cut_test::<1, 4, 4096>(&QSPI, 126);
}
#[test]
fn power_cuts_qspi_sector_change_at_the_revert() {
    cut_test::<1, 4, 4096>(&QSPI, 121);
}
#[test]
fn power_cuts_internal_factory_state() {
    cut_test::<4, 8, 2048>(&INTERNAL, 0);
}
#[test]
fn power_cuts_internal_sector_change_at_the_install() {
    cut_test::<4, 8, 2048>(&INTERNAL, 64);
}
#[test]
fn power_cuts_internal_sector_change_at_the_trial_boot() {
    cut_test::<4, 8, 2048>(&INTERNAL, 63);
}
#[test]
fn power_cuts_internal_sector_change_at_the_confirmation() {
    cut_test::<4, 8, 2048>(&INTERNAL, 62);
}
#[test]
fn power_cuts_internal_sector_change_at_the_revert() {
    cut_test::<4, 8, 2048>(&INTERNAL, 57);
}

// The same script and cuts with every slot read through `read` alone (`Unmapped`).
#[test]
fn power_cuts_unmapped_factory_state() {
    cut_test::<1, 4, 4096>(&SPI_UNMAPPED, 0);
}
#[test]
fn power_cuts_unmapped_sector_change_at_the_install() {
    cut_test::<1, 4, 4096>(&SPI_UNMAPPED, 128);
}
#[test]
fn power_cuts_unmapped_sector_change_at_the_revert() {
    cut_test::<1, 4, 4096>(&SPI_UNMAPPED, 121);
}
#[test]
fn power_cuts_unmapped_internal_factory_state() {
    cut_test::<4, 8, 2048>(&INTERNAL_UNMAPPED, 0);
}
#[test]
fn power_cuts_unmapped_internal_sector_change_at_the_trial_boot() {
    cut_test::<4, 8, 2048>(&INTERNAL_UNMAPPED, 63);
}

#[test]
fn a_refused_update_leaves_the_state_and_the_active_slot_as_they_were() {
    let parts = parts();
    let (mut sim, config) = small_flash(&parts, &parts.p1);
    let mut slots = Slots::new(&mut sim, config).unwrap();
    let before = slots.state().unwrap();
    // A changed blob byte (after the signed bytes): the digest check refuses it.
    let mut tampered = parts.p2.clone();
    let last_blob = tampered.len() - 16;
    tampered[last_blob] ^= 0x40;
    let mut install = slots.install().unwrap();
    assert_eq!(install.target(), Slot::B);
    install.write(&tampered).unwrap();
    let refused = install.finish().unwrap_err();
    assert!(
        matches!(refused, UpdateError::Refused(Refusal::Load(_))),
        "{refused:?}"
    );
    assert_eq!(slots.state().unwrap(), before);
    // Too long for the slot: refused before anything of the chunk is written.
    let mut install = slots.install().unwrap();
    install.write(&parts.p2).unwrap();
    assert!(matches!(
        install.write(&vec![0; 16 * 1024]),
        Err(UpdateError::TooLarge { .. })
    ));
    // More bytes than the partition: refused by length.
    let mut install = slots.install().unwrap();
    install.write(&parts.p2).unwrap();
    install.write(&[0; 16]).unwrap();
    assert!(matches!(install.finish(), Err(UpdateError::Length { .. })));
    // Another key's partition.
    let other = SigningKey::generate();
    let foreign = shrink(&parts.p2, 16, &other);
    let mut install = slots.install().unwrap();
    install.write(&foreign).unwrap();
    assert!(matches!(
        install.finish(),
        Err(UpdateError::Refused(Refusal::Trust(
            TrustError::UnknownKey { .. }
        )))
    ));
    assert_eq!(slots.state().unwrap(), before);
    let boot = slots.boot().unwrap();
    assert_eq!(
        (boot.slot, boot.partition.partition().bytes()),
        (Slot::A, &parts.p1[..])
    );
}

fn layout_sig_off(p: &[u8]) -> usize {
    let toc = u16::from_le_bytes(p[H_TOC_COUNT..H_TOC_COUNT + 2].try_into().unwrap()) as usize;
    let desc = u16::from_le_bytes(p[H_DESC_COUNT..H_DESC_COUNT + 2].try_into().unwrap()) as usize;
    layout(desc, toc).unwrap()[2]
}

#[test]
fn a_trial_reverts_after_its_boots_and_confirmation_is_for_the_booted_slot_only() {
    let parts = parts();
    let layout = Layout {
        slot_a: 0,
        slot_b: 16 * 1024,
        slot_len: 16 * 1024,
        state: 32 * 1024,
    };
    let mut mem = vec![0xff; 32 * 1024 + 2 * 2048];
    mem[..parts.p1.len()].copy_from_slice(&parts.p1);
    let mut sim = MemFlash::<4, 8, 2048>::new(mem);
    let config = Config {
        layout,
        key: parts.key,
        class: TableClass::Front,
    };
    let mut slots = Slots::new(&mut sim, config).unwrap();
    let mut install = slots.install().unwrap();
    install.write(&parts.p2).unwrap();
    let candidate = install.finish().unwrap();
    assert_eq!(candidate.status, Status::Trial { boots: 0 });
    assert!(matches!(slots.install(), Err(UpdateError::TrialPending)));
    // Nothing booted yet: a confirmation has no counter to raise the minimum to.
    assert!(matches!(
        slots.confirm(Slot::B),
        Err(UpdateError::NotBooted)
    ));
    for n in 1..=MAX_TRIAL_BOOTS {
        let boot = slots.boot().unwrap();
        assert_eq!(
            (boot.slot, boot.state.status),
            (Slot::B, Status::Trial { boots: n })
        );
        // Only the slot this boot ran can be confirmed.
        assert!(matches!(
            slots.confirm(Slot::A),
            Err(UpdateError::NotBooted)
        ));
    }
    let boot = slots.boot().unwrap();
    assert_eq!((boot.slot, boot.state.status), (Slot::A, Status::Confirmed));
    assert_eq!(boot.partition.partition().bytes(), &parts.p1[..]);
    assert_eq!(slots.state().unwrap().min_security_counter, 1);
}

#[test]
fn the_layout_is_checked_against_the_geometry() {
    let parts = parts();
    let mut sim = MemFlash::<1, 4, 4096>::new(vec![0xff; 64 * 1024]);
    let config = |layout| Config {
        layout,
        key: parts.key,
        class: TableClass::Front,
    };
    for (layout, why) in [
        (
            Layout {
                slot_a: 0,
                slot_b: 100,
                slot_len: 4096,
                state: 8192,
            },
            "multiples",
        ),
        (
            Layout {
                slot_a: 0,
                slot_b: 4096,
                slot_len: 8192,
                state: 16384,
            },
            "overlap",
        ),
        (
            Layout {
                slot_a: 0,
                slot_b: 8192,
                slot_len: 8192,
                state: 60 * 1024,
            },
            "beyond",
        ),
        (
            Layout {
                slot_a: 0,
                slot_b: 8192,
                slot_len: 0,
                state: 16384,
            },
            "not be 0",
        ),
    ] {
        match Slots::new(&mut sim, config(layout)) {
            Err(UpdateError::Geometry(rule)) => assert!(rule.contains(why), "{rule}"),
            other => panic!("{layout:?}: {other:?}"),
        }
    }
}

/// A flash error returned by the driver comes back typed (`UpdateError::Flash`), at every
/// operation of an install, and leaves the state and the active slot as they were.
#[test]
fn a_flash_error_is_returned_typed_and_changes_nothing() {
    let parts = parts();
    let (sim, config) = small_flash(&parts, &parts.p1);
    let mem = sim.into_bytes();
    let run = Run {
        parts: &parts,
        layout: config.layout,
    };
    let uncut = {
        let mut slots = Slots::new(MemFlash::<1, 4, 4096>::new(mem.clone()), config).unwrap();
        run.step(&mut slots, Step::Install(Part::P2)).unwrap();
        slots.into_flash().journal().to_vec().len()
    };
    for n in 0..uncut {
        let mut sim = MemFlash::<1, 4, 4096>::new(mem.clone());
        sim.fail_from(Some(n));
        let mut slots = Slots::new(sim, config).unwrap();
        let before = slots.state().unwrap();
        let e = run.step(&mut slots, Step::Install(Part::P2)).unwrap_err();
        assert_eq!(e, UpdateError::Flash(MemFlashError::PowerOff));
        let mut sim = slots.into_flash();
        sim.fail_from(None);
        let mut slots = Slots::new(sim, config).unwrap();
        assert_eq!(slots.state().unwrap(), before);
        let boot = slots.boot().unwrap();
        assert_eq!(
            (boot.slot, boot.partition.partition().bytes()),
            (Slot::A, &parts.p1[..])
        );
    }
}

/// The operation counts of a vendor-sized update (the full fixtures, 9.7 MB, stored): an
/// install, its first trial boot and its confirmation, in both geometries, and the same
/// arithmetic for CAYMAN's blobs alone. Slow in debug (it packs and hashes megabytes):
/// `cargo test -p nrtucode --features update,mem-flash --test update_power_cut -- --ignored --nocapture`.
#[test]
#[ignore = "packs and installs the full fixtures (9.7 MB): run with --ignored"]
fn vendor_sized_update_operation_counts() {
    let key = SigningKey::from_pem(include_str!("../keys/test-ed25519.pem")).unwrap();
    let options = PackOptions {
        security_counter: 2,
        key: Some(&key),
    };
    let full = pack(&Blobs::fixtures(TableClass::Full), &options).unwrap();
    let public = PublicKey::from_bytes(*key.public_key().as_bytes());
    fn counts<const R: usize, const W: usize, const E: usize>(
        name: &str,
        part: &[u8],
        key: PublicKey,
    ) {
        let slot_len = part.len().div_ceil(E) * E;
        let config = two_slots(slot_len, key, TableClass::Full);
        let mut slots = Slots::new(
            MemFlash::<R, W, E>::new(vec![0xff; 2 * slot_len + 2 * E]),
            config,
        )
        .unwrap();
        let started = std::time::Instant::now();
        let mut install = slots.install().unwrap();
        for chunk in part.chunks(4096 + 3) {
            install.write(chunk).unwrap();
        }
        let streamed = started.elapsed();
        install.finish().unwrap();
        let finished = started.elapsed() - streamed;
        let after_install = slots.flash().journal().len();
        // Wall time on the host, informative only (never asserted): the simulated flash's writes
        // journal a copy of every byte.
        let mb = part.len() as f64 / 1e6;
        println!(
            "{name}: host install of {mb:.1} MB into the simulated flash: install() and the writes {:.0} ms ({:.0} MB/s), finish() {:.0} ms ({:.0} MB/s)",
            streamed.as_secs_f64() * 1e3,
            mb / streamed.as_secs_f64(),
            finished.as_secs_f64() * 1e3,
            mb / finished.as_secs_f64()
        );
        let boot = slots.boot().unwrap();
        assert_eq!(boot.partition.partition().bytes(), part);
        let slot = boot.slot;
        slots.confirm(slot).unwrap();
        let journal = slots.flash().journal();
        let erases = journal
            .iter()
            .filter(|o| matches!(o, Op::Erase { .. }))
            .count();
        println!(
            "{name}: a {} B partition: install {after_install} operations ({erases} erases, {} writes), then boot and confirm 2 records of 2 writes: {} cut points",
            part.len(),
            after_install - erases,
            journal.len()
        );
    }
    counts::<1, 4, 4096>(QSPI.name, &full, public);
    counts::<4, 8, 2048>(INTERNAL.name, &full, public);

    // CAYMAN alone: the full partition's tables and CAYMAN's distinct blobs (arithmetic).
    let blobs_off = layout_sig_off(&full) + SIG_LEN;
    let mut seen = std::collections::HashSet::new();
    let cayman: usize = nrtucode_facts::getters()
        .into_iter()
        .filter(|g| g.gen_name == "CAYMAN" && g.real && g.size > 0)
        .map(|g| nrtucode_facts::fixture_bytes(&g))
        .filter(|b| seen.insert(b.clone()))
        .map(|b| b.len().div_ceil(16) * 16)
        .sum();
    let len = blobs_off.div_ceil(16) * 16 + cayman;
    for (name, e) in [(QSPI.name, 4096), (INTERNAL.name, 2048)] {
        let (erases, writes) = (len.div_ceil(e), len.div_ceil(STAGE_LEN) + 2);
        println!(
            "{name}: CAYMAN alone, {len} B: install {} operations ({erases} erases, {writes} writes)",
            erases + writes
        );
    }
}

// ---------------------------------------------------------------------------------------------
// A slot checked whole once: a boot checks the signature only; bit rot after the install is
// found when a blob is used, and `reject` is the way back.

/// A QSPI-geometry flash of two 16 KiB slots with `a` in slot A, and its layout's config.
fn small_flash(parts: &Parts, a: &[u8]) -> (MemFlash<1, 4, 4096>, Config) {
    let layout = Layout {
        slot_a: 0,
        slot_b: 16 * 1024,
        slot_len: 16 * 1024,
        state: 32 * 1024,
    };
    let mut mem = vec![0xff; 32 * 1024 + 2 * 4096];
    mem[..a.len()].copy_from_slice(a);
    let config = Config {
        layout,
        key: parts.key,
        class: TableClass::Front,
    };
    (MemFlash::new(mem), config)
}

/// Installs `part` (the next boot's trial), boots it and, with `confirm`, confirms it.
fn install_and_boot(
    slots: &mut Slots<&mut MemFlash<1, 4, 4096>>,
    part: &[u8],
    confirm: bool,
) -> Slot {
    let mut install = slots.install().unwrap();
    install.write(part).unwrap();
    install.finish().unwrap();
    let slot = slots.boot().unwrap().slot;
    if confirm {
        slots.confirm(slot).unwrap();
    }
    slot
}

/// The offset in the slot of a byte of the last blob (after the signed bytes: only that blob's
/// digest check can see a change there).
fn last_blob_byte(part: &[u8]) -> usize {
    part.len() - 16
}

fn blobs_check(boot: &nrtucode::update::Boot<VerifiedPartition<'_>>) -> bool {
    boot.partition
        .check_blobs(&mut nrtucode::digest::SoftSha256::new())
        .is_ok()
}

/// The table-of-contents entry of `part` whose stored bytes hold byte `at`, and those bytes'
/// range in `part`.
fn blob_holding(part: &[u8], at: usize) -> (BlobId, std::ops::Range<usize>) {
    let toc_count = u16::from_le_bytes(part[H_TOC_COUNT..H_TOC_COUNT + 2].try_into().unwrap());
    let desc_count = u16::from_le_bytes(part[H_DESC_COUNT..H_DESC_COUNT + 2].try_into().unwrap());
    let [_, toc_off, _, _] = layout(desc_count as usize, toc_count as usize).unwrap();
    (0..toc_count)
        .find_map(|n| {
            let e = toc_off + n as usize * TOC_LEN;
            let (offset, len) = (le32(part, e + T_OFFSET), le32(part, e + T_STORED_LEN));
            (offset..offset + len)
                .contains(&at)
                .then_some((BlobId::new(n), offset..offset + len))
        })
        .unwrap()
}

/// The stored bytes of `blob` as the checked partition answers them: a plain slice, no hash.
fn plain_slice<'a>(partition: &CheckedPartition<'a>, blob: BlobId) -> Option<&'a [u8]> {
    let handle = partition.blob(blob).unwrap();
    assert!(handle.is_checked());
    handle.bytes()
}

#[test]
fn a_boot_checks_the_signature_only_and_a_rotten_blob_is_found_on_use() {
    let parts = parts();
    let (mut sim, config) = small_flash(&parts, &parts.p1);
    let mut slots = Slots::new(&mut sim, config).unwrap();
    // The same counter in both slots, so that slot A stays above the minimum.
    assert_eq!(install_and_boot(&mut slots, &parts.p1, true), Slot::B);
    // The full check at boot gives the checked type: a stored blob is a plain slice, the
    // signed bytes (a plain boot's handle gives none: its bytes come through a check).
    let rot_at = last_blob_byte(&parts.p1);
    let (rotten, stored) = blob_holding(&parts.p1, rot_at);
    let mut slots = Slots::new(&mut sim, config).unwrap();
    let boot = slots.boot_checked().unwrap();
    assert_eq!((boot.slot, boot.fell_back), (Slot::B, false));
    assert_eq!(
        plain_slice(&boot.partition, rotten),
        Some(&parts.p1[stored.clone()])
    );
    let mut slots = Slots::new(&mut sim, config).unwrap();
    assert_eq!(
        slots
            .boot()
            .unwrap()
            .partition
            .blob(rotten)
            .unwrap()
            .bytes(),
        None
    );
    // Bit rot in slot B after its install.
    sim.bytes_mut()[16 * 1024 + rot_at] ^= 0x04;
    let mut slots = Slots::new(&mut sim, config).unwrap();
    let boot = slots.boot().unwrap();
    assert_eq!((boot.slot, boot.fell_back), (Slot::B, false));
    assert!(
        !blobs_check(&boot),
        "the rotten blob fails its check on use"
    );
    // The full check at boot sees it, and boots slot A (checked whole) instead, as the checked
    // type: A's copy of the blob, unrotted, as a plain slice.
    let mut slots = Slots::new(&mut sim, config).unwrap();
    let boot = slots.boot_checked().unwrap();
    assert_eq!((boot.slot, boot.fell_back), (Slot::A, true));
    assert_eq!(
        plain_slice(&boot.partition, rotten),
        Some(&parts.p1[stored.clone()])
    );
    // An image with the rot in both slots: the full check at boot refuses both.
    sim.bytes_mut()[rot_at] ^= 0x04;
    let mut slots = Slots::new(&mut sim, config).unwrap();
    assert!(matches!(
        slots.boot_checked(),
        Err(UpdateError::NoBootableSlot)
    ));
    sim.bytes_mut()[rot_at] ^= 0x04;
    // A damaged signed byte (the header) is seen by the plain boot.
    sim.bytes_mut()[16 * 1024 + H_SECURITY_COUNTER] ^= 0x01;
    let mut slots = Slots::new(&mut sim, config).unwrap();
    let boot = slots.boot().unwrap();
    assert_eq!((boot.slot, boot.fell_back), (Slot::A, true));
}

/// The way back from a rotten blob: `reject` reverts a trial, or moves a confirmed slot's
/// state to the other slot when it passes its whole check; refuses (writing nothing) when the
/// other slot is below the minimum security counter; and needs a boot first.
#[test]
fn reject_goes_back_to_the_other_slot_or_writes_nothing() {
    let parts = parts();
    // A trial: reverted.
    let (mut sim, config) = small_flash(&parts, &parts.p1);
    let mut slots = Slots::new(&mut sim, config).unwrap();
    assert!(matches!(slots.reject(), Err(UpdateError::NotBooted)));
    assert_eq!(install_and_boot(&mut slots, &parts.p2, false), Slot::B);
    let boot = slots.reject().unwrap();
    assert_eq!((boot.slot, boot.state.status), (Slot::A, Status::Confirmed));
    assert_eq!(boot.partition.partition().bytes(), &parts.p1[..]);
    assert_eq!(slots.state().unwrap().min_security_counter, 1);
    let mut slots = Slots::new(&mut sim, config).unwrap();
    assert_eq!(slots.boot().unwrap().slot, Slot::A);

    // A confirmed slot whose counter the other slot's matches: the other one, confirmed.
    let (mut sim, config) = small_flash(&parts, &parts.p2);
    let mut slots = Slots::new(&mut sim, config).unwrap();
    assert_eq!(install_and_boot(&mut slots, &parts.p2, true), Slot::B);
    let boot = slots.reject().unwrap();
    assert_eq!((boot.slot, boot.state.active), (Slot::A, Slot::A));
    // And an install then writes slot B, the one not running.
    assert_eq!(slots.install().unwrap().target(), Slot::B);

    // A confirmed slot above the other's counter: nothing to go back to, nothing written.
    let (mut sim, config) = small_flash(&parts, &parts.p1);
    let mut slots = Slots::new(&mut sim, config).unwrap();
    assert_eq!(install_and_boot(&mut slots, &parts.p2, true), Slot::B);
    let before = slots.state().unwrap();
    let ops = slots.flash().journal().len();
    assert!(matches!(
        slots.reject(),
        Err(UpdateError::NoFallback { slot: Slot::A })
    ));
    assert_eq!(
        slots.refusal(Slot::A),
        Some(Refusal::Trust(TrustError::Rollback {
            found: 1,
            minimum: 2
        }))
    );
    assert_eq!(slots.flash().journal().len(), ops);
    assert_eq!(slots.state().unwrap(), before);
    // The install that follows writes the other slot, never the running one.
    assert_eq!(slots.install().unwrap().target(), Slot::A);
}

/// A boot that fell back from the state's slot: the install first records the running slot
/// as the state's, so that the slot it writes is never the state's (whose boot checks only
/// the signature), and a cut anywhere in the install or its recovery boots a slot checked whole.
#[test]
fn an_install_after_a_fallback_never_writes_the_states_slot() {
    let parts = parts();
    let (mut sim, config) = small_flash(&parts, &parts.p1);
    let mut slots = Slots::new(&mut sim, config).unwrap();
    assert_eq!(install_and_boot(&mut slots, &parts.p1, true), Slot::B);
    sim.bytes_mut()[16 * 1024 + H_SECURITY_COUNTER] ^= 0x01; // B's signature no longer holds
    let before = sim.bytes().to_vec();
    let start = sim.journal().len();
    let mut slots = Slots::new(&mut sim, config).unwrap();
    let boot = slots.boot().unwrap();
    assert_eq!(
        (boot.slot, boot.fell_back, boot.state.active),
        (Slot::A, true, Slot::B)
    );
    let mut install = slots.install().unwrap();
    assert_eq!(install.target(), Slot::B);
    install.write(&parts.p2).unwrap();
    let state = install.finish().unwrap();
    assert_eq!((state.active, state.previous), (Slot::B, Some(Slot::A)));
    let journal = sim.journal()[start..].to_vec();
    let run = Run {
        parts: &parts,
        layout: config.layout,
    };
    let mut tried = 0;
    each_cut(&before, &journal, 7, |cut, torn| {
        tried += 1;
        // Before the candidate's record: slot A (P1); after it: B on trial (P2).
        if let Err(e) = run.check_boot::<1, 4, 4096>(&torn, &[Part::P1, Part::P2], false) {
            panic!("cut {cut}: {e}");
        }
    });
    println!("power cuts: an install after a fallback: {tried} cut points tried, 0 failed");
    assert!(tried > 10);
}

/// Every power cut of a `reject` (and of the `reject` a boot after it needs again): each boot
/// uses the rotten slot or the other one, checked whole; the recovery ends on the other one.
#[test]
fn power_cuts_in_reject() {
    let parts = parts();
    for confirm in [false, true] {
        let (mut sim, config) = small_flash(&parts, &parts.p1);
        let mut slots = Slots::new(&mut sim, config).unwrap();
        assert_eq!(install_and_boot(&mut slots, &parts.p1, confirm), Slot::B);
        sim.bytes_mut()[16 * 1024 + last_blob_byte(&parts.p1)] ^= 0x04;
        let before = sim.bytes().to_vec();
        let start = sim.journal().len();
        let mut slots = Slots::new(&mut sim, config).unwrap();
        let boot = slots.boot().unwrap();
        assert!(!blobs_check(&boot));
        assert_eq!(slots.reject().unwrap().slot, Slot::A);
        let journal = sim.journal()[start..].to_vec();
        let (mut tried, mut failed) = (0, 0);
        // A boot, then, as the application would, `reject` when a blob fails: `Some` slot it
        // ends on with every blob good.
        let settle = |mem: Vec<u8>, tried: &mut usize, failed: &mut usize| {
            let mut sim = MemFlash::<1, 4, 4096>::new(mem);
            let mut slots = Slots::new(&mut sim, config).unwrap();
            let boot = slots.boot().unwrap();
            let ended = if blobs_check(&boot) {
                boot.slot
            } else {
                slots.reject().unwrap().slot
            };
            *tried += 1;
            if ended != Slot::A {
                *failed += 1;
            }
            sim
        };
        each_cut(&before, &journal, 11, |_, torn| {
            let sim = settle(torn.clone(), &mut tried, &mut failed);
            // Every cut of that recovery too.
            let recovery = sim.journal().to_vec();
            each_cut(&torn, &recovery, 13, |_, torn_again| {
                settle(torn_again, &mut tried, &mut failed);
            });
        });
        println!(
            "power cuts: reject of a {} slot: {tried} cut points tried, {failed} failed",
            if confirm { "confirmed" } else { "trial" }
        );
        assert_eq!(failed, 0);
        assert!(tried >= 2);
    }
}

/// What the record's check guards: a record whose payload write was torn can still have
/// every field in range (a torn write clears only some of the bits it would clear: here the
/// minimum security counter reads 6 where 2 was being written, every other byte complete), and
/// its check part is still erased, the cut having come before it. Only the check refuses it;
/// without the check this record would be the state, and its minimum (6) would refuse both
/// slots: a device that no longer boots.
#[test]
fn a_torn_record_with_valid_fields_is_refused_by_its_check() {
    let parts = parts();
    let (mut sim, config) = small_flash(&parts, &parts.p1);
    let mut slots = Slots::new(&mut sim, config).unwrap();
    assert_eq!(install_and_boot(&mut slots, &parts.p2, false), Slot::B);
    let before = slots.state().unwrap();
    let records = FlashGeometry::of::<MemFlash<1, 4, 4096>>()
        .records()
        .unwrap();
    let len = records.record_len();
    let intended = State {
        seq: before.seq + 1,
        status: Status::Confirmed,
        previous: None,
        min_security_counter: 2,
        ..before
    };
    let mut torn = record(&intended, 4);
    torn[16] = 0x06; // 0x02 being written over 0xff: the 0x04 bit not yet cleared
    // Every field of the torn payload is in range: with a check of its own, it is a record.
    let fields = State {
        min_security_counter: 6,
        ..intended
    };
    assert_eq!(record(&fields, 4)[..PAYLOAD_LEN], torn[..PAYLOAD_LEN]);
    assert_eq!(records.decode(&record(&fields, 4)), Record::Valid(fields));
    torn[PAYLOAD_LEN..].fill(0xff); // the check part: not yet written
    // The next free place of the state (sector 0: the candidate and a trial count before it).
    let at = 32 * 1024 + 2 * len;
    assert!(sim.bytes_mut()[at..at + len].iter().all(|b| *b == 0xff));
    sim.bytes_mut()[at..at + len].copy_from_slice(&torn);
    let mut slots = Slots::new(&mut sim, config).unwrap();
    assert_eq!(
        records.decode(&slots.flash().bytes()[at..at + len]),
        Record::Invalid
    );
    assert_eq!(slots.state().unwrap(), before);
    let sim = slots.into_flash();
    let mut copy = Slots::new(MemFlash::<1, 4, 4096>::new(sim.bytes().to_vec()), config).unwrap();
    let boot = copy.boot().unwrap();
    assert_eq!((boot.slot, boot.fell_back), (Slot::B, false));
    // The same payload with its check written is a valid record, the state: and no slot
    // boots with its minimum. The check is all that told the two apart.
    sim.bytes_mut()[at..at + len].copy_from_slice(&record(&fields, 4));
    let mut slots = Slots::new(sim, config).unwrap();
    assert_eq!(slots.state().unwrap(), fields);
    assert!(matches!(slots.boot(), Err(UpdateError::NoBootableSlot)));
    // Each slot's reason: below the minimum the record gives (6).
    for slot in [Slot::A, Slot::B] {
        assert!(
            matches!(
                slots.refusal(slot),
                Some(Refusal::Trust(TrustError::Rollback { minimum: 6, .. }))
            ),
            "{slot:?}: {:?}",
            slots.refusal(slot)
        );
    }
}
