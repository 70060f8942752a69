//! Features `update` and `mem-flash`: update packages (`docs/update.md`, "Update packages, byte
//! for byte"). A delta made by `nrtucode_pack::update_package` from the partition running and
//! a new one with a few blobs changed: its size against the whole partition (printed), the new
//! partition it gives (host and device), the refusals (another base before anything is
//! written; a changed byte by the whole check; a malformed package with its reason), and a power
//! cut at every flash operation of a delta install (printed counts: the device always boots
//! the old or the new partition, whole).

use nrtucode::partition::format::HEADER_LEN as PART_HEADER_LEN;
use nrtucode::partition::{Partition, Policy, PublicKey, TableClass};
use nrtucode::update::mem_flash::{MemFlash, MemFlashError, each_cut};
use nrtucode::update::package::{HEADER_LEN, ITEM_LEN, PackageError, PackageHeader, PackageKind};
use nrtucode::update::{BlockingFlash, Config, MappedFlash, Slot, Slots, Unmapped, UpdateError};
use nrtucode_pack::{
    Blobs, PackError, PackOptions, SigningKey, apply_package, pack, read_package, update_package,
};
use nrtucode_testcases::sweep::Sweep;
use proptest::prelude::*;

mod partitions;
use partitions::{le32, qspi_with, rewrite, shrink};

type Qspi = MemFlash<1, 4, 4096>;

/// Chunk lengths of a streamed package, cycled: odd sizes, odd alignments.
const CHUNKS: &[usize] = &[1, 7, 300, 4096, 13, 255, 2];

fn key() -> SigningKey {
    SigningKey::from_pem(include_str!("../keys/test-ed25519.pem")).unwrap()
}

fn public(key: &SigningKey) -> PublicKey {
    PublicKey::from_bytes(*key.public_key().as_bytes())
}

/// The table-of-contents entries of `partition` by stored length, longest first.
fn largest_entries(partition: &[u8]) -> Vec<usize> {
    let tables = Partition::parse(partition).unwrap().untrusted_tables();
    let mut ids: Vec<_> = tables.blob_ids().collect();
    ids.sort_by_key(|&id| std::cmp::Reverse(tables.toc_entry(id).unwrap().stored_len));
    ids.into_iter().map(|id| id.index()).collect()
}

/// `base` with the first byte of each entry in `changed` flipped, security counter 2.
fn changed(base: &[u8], changed: &[usize], key: &SigningKey) -> Vec<u8> {
    rewrite(base, 2, key, |n, bytes| {
        let mut b = bytes.to_vec();
        if changed.contains(&n) {
            b[0] ^= 0xa5;
        }
        b
    })
}

fn fixtures(class: TableClass, key: &SigningKey) -> Vec<u8> {
    let options = PackOptions {
        security_counter: 1,
        key: Some(key),
    };
    pack(&Blobs::fixtures(class), &options).unwrap()
}

#[test]
fn a_delta_for_three_changed_blobs_of_the_full_set_is_at_most_five_percent_of_it() {
    let key = key();
    for class in [TableClass::Full, TableClass::Front] {
        let base = fixtures(class, &key);
        let entries = largest_entries(&base).len();
        // The worst case: the three largest blobs changed; and three from the middle.
        let largest = largest_entries(&base)[..3].to_vec();
        let middle = largest_entries(&base)[entries / 2..entries / 2 + 3].to_vec();
        for (which, blobs) in [("the 3 largest", largest), ("3 middle-sized", middle)] {
            let new = changed(&base, &blobs, &key);
            let package = update_package(&base, &new).unwrap();
            assert_eq!(apply_package(&base, &package).unwrap(), new);
            let summary = read_package(&package).unwrap();
            assert_eq!(summary.header.kind, PackageKind::Delta);
            assert_eq!(summary.carried.0, 3);
            assert_eq!(usize::from(summary.copied.0), entries - 3);
            let share = package.len() as f64 / new.len() as f64;
            println!(
                "{class:?} set, {which} of {entries} blobs changed: package {} B of the \
                 partition's {} B ({:.2}%): {} B carried, {} blobs copied ({} B)",
                package.len(),
                new.len(),
                100.0 * share,
                summary.carried.1,
                summary.copied.0,
                summary.copied.1
            );
            // The bound is the full set's; the front set's figure is printed.
            if class == TableClass::Full {
                assert!(share <= 0.05, "{class:?}, {which}: {:.2}%", 100.0 * share);
            }
            // Never more than the partition plus the package's header.
            assert!(package.len() <= new.len() + HEADER_LEN);
        }
    }
}

#[test]
fn a_package_is_never_longer_than_the_new_partition_and_its_header() {
    let key = key();
    let base = shrink(&fixtures(TableClass::Front, &key), 16, &key);
    // Every blob changed: a delta would carry them all, and its items too: the whole is sent.
    let all: Vec<usize> = (0..largest_entries(&base).len()).collect();
    let new = changed(&base, &all, &key);
    let package = update_package(&base, &new).unwrap();
    let header = PackageHeader::parse(&package).unwrap();
    assert_eq!(header.kind, PackageKind::Whole);
    assert_eq!(package.len(), new.len() + HEADER_LEN);
    assert_eq!(apply_package(&base, &package).unwrap(), new);
    // The same partition again: a delta of the prefix and one item per blob.
    let same = update_package(&base, &base).unwrap();
    let summary = read_package(&same).unwrap();
    assert_eq!(
        (summary.header.kind, summary.carried.0),
        (PackageKind::Delta, 0)
    );
    let prefix = le32(&base, nrtucode::partition::format::H_BLOBS_OFF);
    assert_eq!(same.len(), HEADER_LEN + prefix + ITEM_LEN * all.len());
}

/// Streams `package` into `slots` in [`CHUNKS`], then finishes: the state, or the error.
fn install<F: MappedFlash>(
    slots: &mut Slots<F>,
    package: &[u8],
) -> Result<nrtucode::update::State, UpdateError<F::Error>> {
    let mut install = slots.install_package()?;
    let mut at = 0;
    for n in CHUNKS.iter().cycle() {
        if at == package.len() {
            break;
        }
        let end = (at + n).min(package.len());
        install.write(&package[at..end])?;
        at = end;
    }
    install.finish()
}

fn slot_b(flash: &Qspi, config: &Config, len: usize) -> Vec<u8> {
    let at = config.layout.slot_b as usize;
    flash.bytes()[at..at + len].to_vec()
}

#[test]
fn a_delta_install_writes_the_new_partition_and_boots_it_on_trial() {
    let key = key();
    let base = fixtures(TableClass::Front, &key);
    let blobs = largest_entries(&base)[10..13].to_vec();
    let new = changed(&base, &blobs, &key);
    let package = update_package(&base, &new).unwrap();
    let (flash, config) = qspi_with(&base, base.len().max(new.len()), public(&key));
    let mut slots = Slots::new(flash, config).unwrap();
    assert_eq!(slots.boot().unwrap().slot, Slot::A);
    let state = install(&mut slots, &package).unwrap();
    assert_eq!((state.active, state.is_trial()), (Slot::B, true));
    let flash = slots.into_flash();
    assert_eq!(slot_b(&flash, &config, new.len()), new);
    println!(
        "front set, 3 blobs changed: {} B crossed the link for a partition of {} B",
        package.len(),
        new.len()
    );
    let mut slots = Slots::new(flash, config).unwrap();
    let boot = slots.boot().unwrap();
    assert_eq!(boot.slot, Slot::B);
    assert_eq!(boot.partition.partition().bytes(), &new[..]);
}

#[test]
fn a_package_for_another_base_is_refused_before_anything_is_written() {
    let key = key();
    let base = shrink(&fixtures(TableClass::Front, &key), 16, &key);
    let new = changed(&base, &[1, 2, 3], &key);
    let package = update_package(&base, &new).unwrap();
    // Slot A runs another partition than the package's base (one blob differs).
    let other = changed(&base, &[5], &key);
    let (flash, config) = qspi_with(&other, new.len(), public(&key));
    let mut slots = Slots::new(flash, config).unwrap();
    slots.boot().unwrap();
    let ops = slots.flash().journal().len();
    let state = slots.state().unwrap();
    assert_eq!(
        install(&mut slots, &package),
        Err(UpdateError::Package(PackageError::BaseMismatch))
    );
    assert_eq!(
        slots.flash().journal().len(),
        ops,
        "a write or an erase happened"
    );
    assert_eq!(slots.state().unwrap(), state);
    // The host says the same.
    assert!(matches!(
        apply_package(&other, &package),
        Err(PackError::Package(PackageError::BaseMismatch))
    ));
}

#[test]
fn a_changed_carried_byte_is_refused_by_the_whole_check_and_the_state_is_kept() {
    let key = key();
    let base = shrink(&fixtures(TableClass::Front, &key), 16, &key);
    let new = changed(&base, &[1, 2, 3], &key);
    let package = update_package(&base, &new).unwrap();
    let (flash, config) = qspi_with(&base, new.len(), public(&key));
    let mut slots = Slots::new(flash, config).unwrap();
    slots.boot().unwrap();
    let state = slots.state().unwrap();
    // A byte of the last carried blob (entry 3; entries 4 on are copies, 8 bytes each).
    let copies_after = largest_entries(&base).len() - 4;
    let mut tampered = package.clone();
    let last = tampered.len() - 1 - ITEM_LEN * copies_after;
    tampered[last] ^= 1;
    let refused = install(&mut slots, &tampered);
    assert!(
        matches!(refused, Err(UpdateError::Refused(_))),
        "{refused:?}"
    );
    assert_eq!(slots.state().unwrap(), state);
    assert_eq!(slots.boot().unwrap().slot, Slot::A);
    // The intact package installs after it.
    let state = install(&mut slots, &package).unwrap();
    assert_eq!(state.active, Slot::B);
}

#[test]
fn malformed_packages_are_refused_with_their_reason() {
    let key = key();
    let base = shrink(&fixtures(TableClass::Front, &key), 16, &key);
    let new = changed(&base, &[1, 2, 3], &key);
    let package = update_package(&base, &new).unwrap();
    let prefix = PackageHeader::parse(&package).unwrap().prefix_len as usize;
    let first_item = HEADER_LEN + prefix;
    let refusal = |bytes: &[u8]| match apply_package(&base, bytes) {
        Err(PackError::Package(e)) => e,
        other => panic!("not a package refusal: {other:?}"),
    };
    assert_eq!(
        refusal(&package[..package.len() - 1]),
        PackageError::Incomplete
    );
    assert_eq!(
        refusal(&package[..HEADER_LEN - 1]),
        PackageError::Incomplete
    );
    assert_eq!(
        refusal(&[package.as_slice(), &[0]].concat()),
        PackageError::Trailing
    );
    let mut bad = package.clone();
    bad[0] ^= 1;
    assert_eq!(refusal(&bad), PackageError::Magic);
    let mut bad = package.clone();
    bad[8] = 9;
    assert_eq!(refusal(&bad), PackageError::Version(9));
    let mut bad = package.clone();
    bad[0x0c] = 7; // kind
    assert_eq!(refusal(&bad), PackageError::Header);
    let mut bad = package.clone();
    bad[first_item] = 3; // an item's source
    assert_eq!(refusal(&bad), PackageError::Item { index: 0 });
    // Item 0 copies the base's entry 0 (entries 1 to 3 changed): name one past the base.
    assert_eq!(package[first_item], 2);
    let mut bad = package.clone();
    let count = largest_entries(&base).len() as u16;
    bad[first_item + 2..first_item + 4].copy_from_slice(&count.to_le_bytes());
    assert_eq!(refusal(&bad), PackageError::Copy { index: 0 });
    // A copy of another length than the base's entry.
    let mut bad = package.clone();
    bad[first_item + 4] ^= 1;
    assert!(matches!(refusal(&bad), PackageError::Copy { index: 0 }));
    // The carried count the header states must be the items'.
    let mut bad = package.clone();
    bad[0x1a] = 2;
    assert_eq!(refusal(&bad), PackageError::CarriedCount);
    // Not a partition where one is expected.
    assert!(matches!(
        update_package(&base[..PART_HEADER_LEN], &new),
        Err(PackError::NotPartition(_))
    ));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// Any byte of a package changed: the host's reading refuses it, or gives bytes that are
    /// the new partition or that the whole check refuses; never a panic.
    #[test]
    fn a_changed_package_gives_the_new_partition_or_a_refusal(at in 0usize..1 << 20, bit in 0u8..8) {
        let (base, new, package, key) = small();
        let mut bad = package.clone();
        let at = at % bad.len();
        bad[at] ^= 1 << bit;
        if let Ok(bytes) = apply_package(&base, &bad) {
            let policy = Policy { min_security_counter: 0, expected_class: TableClass::Front };
            let checked = Partition::parse(&bytes)
                .ok()
                .and_then(|p| p.verify(&public(&key), &policy).ok())
                .and_then(|v| v.check_blobs(&mut nrtucode::digest::SoftSha256::new()).ok());
            if checked.is_some() {
                prop_assert_eq!(bytes, new);
            }
        }
    }
}

/// A small front partition, the same with blobs 1 to 3 changed, the delta, and the key.
fn small() -> (Vec<u8>, Vec<u8>, Vec<u8>, SigningKey) {
    let key = key();
    let base = shrink(&fixtures(TableClass::Front, &key), 16, &key);
    let new = changed(&base, &[1, 2, 3], &key);
    let package = update_package(&base, &new).unwrap();
    (base, new, package, key)
}

/// A power cut at every erase and write of a delta install (the operation torn), each followed
/// by a boot that must use the old partition or the new one, byte for byte; then the recovery
/// (the boot, the install again from the start, its boot) must end on the new one on trial.
#[test]
fn a_delta_install_cut_at_every_flash_operation_boots_the_old_or_the_new_partition() {
    let (base, new, package, key) = small();
    let (flash, config) = qspi_with(&base, new.len(), public(&key));
    let before = flash.bytes().to_vec();
    let mut slots = Slots::new(flash, config).unwrap();
    slots.boot().unwrap();
    install(&mut slots, &package).unwrap();
    let journal = slots.flash().journal().to_vec();
    // The boot after a cut: the old partition or the new, whole (`true`: the new).
    let boots_either = |mem: &[u8]| -> Result<bool, String> {
        let mut slots = Slots::new(Qspi::new(mem.to_vec()), config).unwrap();
        let booted = slots.boot().map_err(|e| format!("no boot: {e}"))?;
        match booted.partition.partition().bytes() {
            b if b == &base[..] => Ok(false),
            b if b == &new[..] => Ok(true),
            _ => Err("booted a partition that is neither".to_string()),
        }
    };
    // The recovery: a boot, the install again unless the new one is on trial; then the next
    // boot must use the new one. The flash it leaves, whose journal is the recovery's.
    let recover = |mem: &[u8]| -> Result<Qspi, String> {
        let mut slots = Slots::new(Qspi::new(mem.to_vec()), config).unwrap();
        let trial = (slots.boot().map_err(|e| format!("no boot: {e}"))?)
            .state
            .is_trial();
        if !trial {
            install(&mut slots, &package).map_err(|e| format!("install again: {e}"))?;
        }
        let flash = slots.into_flash();
        let mut after = Slots::new(Qspi::new(flash.bytes().to_vec()), config).unwrap();
        match after
            .boot()
            .map(|b| b.partition.partition().bytes() == &new[..])
        {
            Ok(true) => Ok(flash),
            other => Err(format!("after the recovery: {other:?}")),
        }
    };
    let (mut cuts, mut failed, mut old, mut fresh, mut second_cuts) = (0, 0, 0, 0, 0);
    each_cut(&before, &journal, 0x5eed, |n, mem| {
        cuts += 1;
        let outcome = (|| {
            if boots_either(&mem)? {
                fresh += 1;
            } else {
                old += 1;
            }
            let recovery = recover(&mem)?.journal().to_vec();
            // For 1 cut in 8, the recovery is cut too, at each of its operations.
            if n % 8 == 0 {
                let mut second = Ok(());
                each_cut(&mem, &recovery, n as u64, |m, mem| {
                    if second.is_ok() {
                        second_cuts += 1;
                        second = boots_either(&mem)
                            .and_then(|_| recover(&mem))
                            .map(|_| ())
                            .map_err(|e| format!("second cut {m}: {e}"));
                    }
                });
                second?;
            }
            Ok::<(), String>(())
        })();
        if let Err(e) = outcome {
            failed += 1;
            eprintln!("cut {n}: {e}");
        }
    });
    println!(
        "delta install ({} B package, {} B partition), QSPI NOR: {cuts} cut points, {old} \
         booted the old partition, {fresh} the new, {failed} failed; {second_cuts} second cuts \
         (every operation of the recovery after 1 cut in 8)",
        package.len(),
        new.len()
    );
    assert_eq!(cuts, journal.len());
    assert!(second_cuts > 0);
    assert_eq!(failed, 0);
}

// ---------------------------------------------------------------------------------------------
// Resumed installs.

/// A front partition of blobs an eighth of the fixtures' (each followed by its entry number,
/// so that distinct blobs stay distinct), counter 1; the same with three blobs changed,
/// counter 2; the delta; the key.
fn medium() -> (Vec<u8>, Vec<u8>, Vec<u8>, SigningKey) {
    let key = key();
    let base = rewrite(&fixtures(TableClass::Front, &key), 1, &key, |n, bytes| {
        let mut b = bytes[..(bytes.len() / 8).max(1)].to_vec();
        b.extend((n as u16).to_le_bytes());
        b
    });
    let entries = largest_entries(&base);
    let new = changed(
        &base,
        &entries[entries.len() / 2..entries.len() / 2 + 3],
        &key,
    );
    let package = update_package(&base, &new).unwrap();
    (base, new, package, key)
}

/// A small deterministic generator (xorshift64*), so that every run cuts the same places.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
    }
}

/// The largest stored length of a blob a package carries.
fn largest_carried(base: &[u8], new: &[u8]) -> usize {
    let (b, n) = (
        Partition::parse(base).unwrap().untrusted_tables(),
        Partition::parse(new).unwrap().untrusted_tables(),
    );
    let held: Vec<[u8; 32]> = b
        .blob_ids()
        .map(|id| b.toc_entry(id).unwrap().stored_sha256)
        .collect();
    n.blob_ids()
        .map(|id| n.toc_entry(id).unwrap())
        .filter(|e| !held.contains(&e.stored_sha256))
        .map(|e| e.stored_len as usize)
        .max()
        .unwrap_or(0)
}

#[test]
fn installs_cut_by_the_link_1000_times_resume_and_take_the_package_once_plus_a_unit_per_cut() {
    let (base, new, package, key) = medium();
    let (flash, config) = qspi_with(&base, new.len(), public(&key));
    let factory = flash.bytes().to_vec();
    // What a cut may cost again: the header, one erase sector and the blob under way.
    let unit = HEADER_LEN + 4096 + largest_carried(&base, &new);
    let mut rng = Rng(0x0dd_5eed);
    let (mut cuts, mut installs, mut link) = (0usize, 0usize, 0usize);
    while cuts < 1000 {
        installs += 1;
        let mut flash = Qspi::new(factory.clone());
        // Ten cut points of this transfer, uniformly over the package's bytes.
        let mut points: Vec<usize> = (0..10)
            .map(|_| HEADER_LEN + rng.below(package.len() - HEADER_LEN))
            .collect();
        points.sort_unstable();
        loop {
            // A reset: the device knows only what its flash holds.
            let mut slots = Slots::new(flash, config).unwrap();
            slots.boot().unwrap();
            let mut install = slots.resume_package(&package[..HEADER_LEN]).unwrap();
            link += HEADER_LEN;
            let from = install.offset() as usize;
            let cut = points.iter().copied().find(|&p| p > from);
            let to = cut.unwrap_or(package.len());
            let mut at = from;
            while at < to {
                let end = (at + 1 + rng.below(5000)).min(to);
                install.write(&package[at..end]).unwrap();
                at = end;
            }
            link += to - from;
            if cut.is_none() {
                let state = install.finish().unwrap();
                assert_eq!((state.active, state.is_trial()), (Slot::B, true));
                let flash = slots.into_flash();
                assert_eq!(slot_b(&flash, &config, new.len()), new);
                break;
            }
            // The link drops: the install is abandoned with what it staged (the device resets).
            points.retain(|&p| p > to);
            cuts += 1;
            flash = slots.into_flash();
        }
    }
    let once = installs * package.len();
    let bound = (1.02 * once as f64) as usize + cuts * unit;
    println!(
        "{installs} resumed installs of a {} B package with {cuts} link cuts: {link} B from the \
         link, {:.1} B again per cut (the bound: 1.02 x {once} B + {cuts} x {unit} B, the header, \
         a 4 KiB sector and the largest carried blob = {bound} B)",
        package.len(),
        (link - once) as f64 / cuts as f64
    );
    assert!(link <= bound, "{link} B > {bound} B");
}

/// A flash the resumed-install test drives, mapped or read through `read` alone: a boot (its
/// slot and state), and an install of a package (started with its first bytes, or resumed to
/// its end).
trait Device {
    /// The boot's slot and state.
    fn boot_slot(&mut self) -> Result<(Slot, nrtucode::update::State), String>;
    /// `install_package`, then `first` written (the link drops there).
    fn start(&mut self, first: &[u8]) -> Result<(), String>;
    /// `resume_package` from the header of `package`, its rest written, `finish`: the package
    /// offset the transfer continued from.
    fn resume(&mut self, package: &[u8]) -> Result<u64, String>;
}

impl<F: BlockingFlash<Error = MemFlashError>> Device for Slots<F> {
    fn boot_slot(&mut self) -> Result<(Slot, nrtucode::update::State), String> {
        (self.boot().map(|b| (b.slot, b.state))).map_err(|e| format!("no boot: {e}"))
    }

    fn start(&mut self, first: &[u8]) -> Result<(), String> {
        let mut install = self.install_package().map_err(|e| e.to_string())?;
        install.write(first).map_err(|e| e.to_string())
    }

    fn resume(&mut self, package: &[u8]) -> Result<u64, String> {
        let mut install =
            (self.resume_package(&package[..HEADER_LEN])).map_err(|e| format!("resume: {e}"))?;
        let from = install.offset();
        for chunk in package[from as usize..].chunks(999) {
            install.write(chunk).map_err(|e| format!("write: {e}"))?;
        }
        install.finish().map_err(|e| format!("finish: {e}"))?;
        Ok(from)
    }
}

/// `body` over the slots of `mem` (a QSPI flash), mapped, or with `unmapped` read through
/// `read` alone (`Unmapped`, the prefix into a buffer of its own); what it gives and the flash it
/// leaves, whose journal is what `body` did.
fn on_slots<T>(
    mem: Vec<u8>,
    config: Config,
    unmapped: bool,
    body: impl FnOnce(&mut dyn Device) -> T,
) -> (T, Qspi) {
    if unmapped {
        let mut prefix = vec![0u8; 8 * 1024];
        let mut slots = Slots::new(Unmapped::new(Qspi::new(mem), &mut prefix), config).unwrap();
        let out = body(&mut slots);
        (out, slots.into_flash().into_parts().0)
    } else {
        let mut slots = Slots::new(Qspi::new(mem), config).unwrap();
        let out = body(&mut slots);
        (out, slots.into_flash())
    }
}

/// A power cut at every erase and write of an install resumed after a link cut (in the middle
/// of its carried blobs), each followed by a boot that must use the old or the new partition,
/// byte for byte; then a resume (or, once recorded, nothing) that must end on the new one; for
/// a sample, that recovery is cut again, with the same rules. Mapped, and with `unmapped` every
/// slot read through `read` alone.
/// README's test command takes 1 cut in 8 (each resume hashes what the slot holds, in a debug
/// build); `NRTUCODE_SWEEP=full` every one (`nrtucode_testcases::sweep`).
fn resumed_install_cuts(unmapped: bool) {
    let (base, new, package, key) = medium();
    let (flash, config) = qspi_with(&base, new.len(), public(&key));
    let half = package.len() * 2 / 3;
    let (started, flash) = on_slots(flash.bytes().to_vec(), config, unmapped, |slots| {
        slots.boot_slot()?;
        // The link drops after two thirds: the install is abandoned with what it staged.
        slots.start(&package[..half])
    });
    started.unwrap();
    let before = flash.bytes().to_vec();
    // The recovery: a boot, and the install resumed unless the new partition is on trial.
    let resume = |mem: Vec<u8>| -> (Result<u64, String>, Qspi) {
        on_slots(mem, config, unmapped, |slots| {
            if slots.boot_slot()?.1.is_trial() {
                return Ok(package.len() as u64);
            }
            slots.resume(&package)
        })
    };
    // Which partition the slot a boot over `mem` uses holds, whole: the old (`false`) or the new.
    let booted = |mem: &[u8]| -> Result<bool, String> {
        let (slot, _) = on_slots(mem.to_vec(), config, unmapped, |s| s.boot_slot()).0?;
        let at = match slot {
            Slot::A => config.layout.slot_a,
            Slot::B => config.layout.slot_b,
        } as usize;
        let region = &mem[at..at + config.layout.slot_len as usize];
        match (region.starts_with(&new), region.starts_with(&base)) {
            (true, _) => Ok(true),
            (_, true) => Ok(false),
            _ => Err(format!("slot {slot:?} booted, holding neither partition")),
        }
    };
    let (from, flash) = resume(before.clone());
    let from = from.unwrap();
    assert!(
        from as usize > HEADER_LEN,
        "the resume restarted from the first byte"
    );
    // The resume's operations: those the flash journaled after `before` (a new `MemFlash`
    // starts an empty journal).
    let journal = flash.journal().to_vec();
    let sweep = Sweep::from_env().unwrap_or_else(|e| panic!("{e}"));
    let sample = sweep.sample(false, 3);
    // The second cuts: (1 first cut taken in N, 1 of its recovery's operations in M).
    let second_every: (usize, usize) = match sweep {
        Sweep::Full => (16, 8),
        Sweep::Sampled => (64, 32),
    };
    // After a recovery: the next boot uses the new partition.
    let ends_new = |flash: Qspi| -> Result<(), String> {
        match booted(flash.bytes()) {
            Ok(true) => Ok(()),
            Ok(false) => Err("the recovery did not end on the new partition".to_string()),
            Err(e) => Err(format!("after the recovery: {e}")),
        }
    };
    let (mut cuts, mut failed, mut old, mut fresh, mut second_cuts) = (0, 0, 0, 0, 0);
    each_cut(&before, &journal, 0xc0ffee, |n, mem| {
        if !sample.takes(n) {
            return;
        }
        cuts += 1;
        let taken = cuts;
        let outcome = (|| {
            if booted(&mem)? {
                fresh += 1;
            } else {
                old += 1;
            }
            let (resumed, flash) = resume(mem.clone());
            resumed?;
            let recovery = flash.journal().to_vec();
            ends_new(flash)?;
            // For a sample of the first cuts, the recovery is cut too, at a sample of its
            // operations: each boot the old partition or the new, and a second recovery ends on
            // the new.
            if taken % second_every.0 == 1 {
                let mut second = Ok(());
                each_cut(&mem, &recovery, n as u64, |m, mem| {
                    if m % second_every.1 != 0 || second.is_err() {
                        return;
                    }
                    second_cuts += 1;
                    second = (|| -> Result<(), String> {
                        booted(&mem)?;
                        let (resumed, flash) = resume(mem);
                        resumed?;
                        ends_new(flash)
                    })()
                    .map_err(|e| format!("second cut {m}: {e}"));
                });
                second?;
            }
            Ok::<(), String>(())
        })();
        if let Err(e) = outcome {
            failed += 1;
            eprintln!("cut {n}: {e}");
        }
    });
    let how = if unmapped {
        "read through `read` alone"
    } else {
        "mapped"
    };
    println!(
        "resumed delta install (from package byte {from} of {}), QSPI NOR {how}, {}: {cuts} of \
         {} cut points, {old} booted the old partition, {fresh} the new, {failed} failed; \
         {second_cuts} second cuts in the recoveries of 1 first cut taken in {} (1 operation \
         in {})",
        package.len(),
        sample.describe(),
        journal.len(),
        second_every.0,
        second_every.1
    );
    assert!(second_cuts > 0);
    assert_eq!(
        cuts,
        (0..journal.len()).filter(|&n| sample.takes(n)).count()
    );
    assert_eq!(failed, 0);
}

#[test]
fn a_resumed_install_cut_at_every_flash_operation_boots_the_old_or_the_new_partition() {
    resumed_install_cuts(false);
}

#[test]
fn a_resumed_install_read_through_read_alone_cut_at_every_flash_operation_boots_either() {
    resumed_install_cuts(true);
}
