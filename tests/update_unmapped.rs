//! Features `update` and `mem-flash`: the updater over a flash without a mapping
//! (`nrtucode::update::Unmapped`: every slot read through `ReadNorFlash::read`, the signed
//! prefix into a buffer lent to it). The same scenarios over the same bytes through a mapping
//! and through `read` alone write the same journal and reach the same states; a boot answers a
//! `StreamedSlot` whose blobs load through the driver as they do in place; the refusals (a
//! changed byte at `finish`, a rotten blob on use and `reject`, a prefix buffer too small). The
//! power cuts over `Unmapped` are where the mapped ones are: the whole-install script's in
//! `tests/update_power_cut.rs` (`power_cuts_unmapped_*`), a resumed delta install's in
//! `tests/update_package.rs`.

use nrtucode::partition::{
    LoadError, Loader, Partition, Policy, PublicKey, StreamError, TableClass,
};
use nrtucode::update::mem_flash::{MemFlash, MemFlashError, Op};
use nrtucode::update::package::HEADER_LEN;
use nrtucode::update::{BlockingFlash, Config, Refusal, Slot, Slots, State, Unmapped, UpdateError};
use nrtucode_pack::{Blobs, PackOptions, SigningKey, pack, update_package};

mod partitions;
use partitions::{qspi_with, rewrite, shrink};

type Qspi = MemFlash<1, 4, 4096>;

/// The front set's signed prefix (7,856 B) fits.
const PREFIX: usize = 8 * 1024;

fn key() -> SigningKey {
    SigningKey::from_pem(include_str!("../keys/test-ed25519.pem")).unwrap()
}

fn public(key: &SigningKey) -> PublicKey {
    PublicKey::from_bytes(*key.public_key().as_bytes())
}

/// The front fixtures, signed, counter 1.
fn front(key: &SigningKey) -> Vec<u8> {
    let options = PackOptions {
        security_counter: 1,
        key: Some(key),
    };
    pack(&Blobs::fixtures(TableClass::Front), &options).unwrap()
}

/// `base` with the first byte of entries `changed` flipped, counter 2.
fn changed(base: &[u8], changed: &[usize], key: &SigningKey) -> Vec<u8> {
    rewrite(base, 2, key, |n, bytes| {
        let mut b = bytes.to_vec();
        if changed.contains(&n) {
            b[0] ^= 0xa5;
        }
        b
    })
}

/// The bytes of `slot` in `mem`, `len` of them.
fn slot_bytes(mem: &[u8], config: &Config, slot: Slot, len: usize) -> Vec<u8> {
    let at = match slot {
        Slot::A => config.layout.slot_a,
        Slot::B => config.layout.slot_b,
    } as usize;
    mem[at..at + len].to_vec()
}

/// What a scenario did, step by step: each step's outcome, and the flash's journal.
type Trace = (Vec<String>, Vec<Op>);

/// Install `new` whole, boot it on trial, confirm it, install `newer` as a package (a delta
/// of `new`) cut halfway by the link and resumed, boot and confirm: over `slots`.
fn scenario<F: BlockingFlash<Error = MemFlashError>>(
    slots: &mut Slots<F>,
    new: &[u8],
    package: &[u8],
) -> Vec<String> {
    let mut out = Vec::new();
    let mut note = |what: &str, s: Result<State, UpdateError<MemFlashError>>| {
        out.push(format!("{what}: {s:?}"));
    };
    note("boot", slots.boot().map(|b| b.state));
    let mut install = slots.install().unwrap();
    for chunk in new.chunks(777) {
        install.write(chunk).unwrap();
    }
    note("install", install.finish());
    let booted = slots.boot().map(|b| (b.slot, b.state)).unwrap();
    note("trial boot", Ok(booted.1));
    note("confirm", slots.confirm(booted.0));
    // Half the package, then the link drops (the install is abandoned).
    (slots.install_package().unwrap())
        .write(&package[..package.len() / 2])
        .unwrap();
    let mut install = slots.resume_package(&package[..HEADER_LEN]).unwrap();
    let from = install.offset() as usize;
    note(&format!("resumed at package byte {from}"), Ok(booted.1));
    for chunk in package[from..].chunks(999) {
        install.write(chunk).unwrap();
    }
    note("package", install.finish());
    let booted = slots.boot().map(|b| (b.slot, b.state)).unwrap();
    note("package trial boot", Ok(booted.1));
    note("confirm", slots.confirm(booted.0));
    out
}

struct Fixture {
    base: Vec<u8>,
    new: Vec<u8>,
    newer: Vec<u8>,
    package: Vec<u8>,
    config: Config,
    factory: Vec<u8>,
}

fn fixture() -> Fixture {
    let key = key();
    let base = shrink(&front(&key), 24, &key);
    let new = changed(&base, &[1, 2], &key);
    let newer = rewrite(&new, 3, &key, |n, b| {
        let mut b = b.to_vec();
        if n == 5 || n == 9 {
            b[1] ^= 0x5a;
        }
        b
    });
    let package = update_package(&new, &newer).unwrap();
    let (flash, config) = qspi_with(&base, base.len().max(newer.len()), public(&key));
    Fixture {
        factory: flash.bytes().to_vec(),
        base,
        new,
        newer,
        package,
        config,
    }
}

#[test]
fn read_through_read_alone_the_updater_writes_what_it_writes_through_a_mapping() {
    let f = fixture();
    let mapped: Trace = {
        let mut slots = Slots::new(Qspi::new(f.factory.clone()), f.config).unwrap();
        let steps = scenario(&mut slots, &f.new, &f.package);
        (steps, slots.into_flash().journal().to_vec())
    };
    let mut prefix = vec![0u8; PREFIX];
    let unmapped: Trace = {
        let flash = Unmapped::new(Qspi::new(f.factory.clone()), &mut prefix);
        let mut slots = Slots::new(flash, f.config).unwrap();
        let steps = scenario(&mut slots, &f.new, &f.package);
        let (flash, _) = slots.into_flash().into_parts();
        (steps, flash.journal().to_vec())
    };
    assert!(
        mapped
            .0
            .iter()
            .any(|s| s.contains("resumed at package byte"))
    );
    assert!(
        !mapped.0.iter().any(|s| s.contains("Err")),
        "{:#?}",
        mapped.0
    );
    assert_eq!(mapped.0, unmapped.0);
    assert_eq!(mapped.1.len(), unmapped.1.len());
    assert!(mapped.1 == unmapped.1, "the journals differ");
    println!(
        "through a mapping and through read alone: {} steps, {} flash operations, the same",
        mapped.0.len(),
        mapped.1.len()
    );
    // The slot B holds the newer partition, whole.
    let mut flash = Qspi::new(f.factory.clone());
    for op in &unmapped.1 {
        op.apply(flash.bytes_mut());
    }
    assert_eq!(
        slot_bytes(flash.bytes(), &f.config, Slot::A, f.newer.len()),
        f.newer
    );
}

#[test]
fn a_boot_answers_a_streamed_slot_whose_blobs_load_through_the_driver() {
    let f = fixture();
    let mut prefix = vec![0u8; PREFIX];
    let mut slots = Slots::new(
        Unmapped::new(Qspi::new(f.factory.clone()), &mut prefix),
        f.config,
    )
    .unwrap();
    let boot = slots.boot().unwrap();
    assert_eq!(boot.slot, Slot::A);
    let slot = boot.partition;
    let in_place = Partition::parse(&f.base)
        .unwrap()
        .verify(
            &f.config.key,
            &Policy {
                min_security_counter: 0,
                expected_class: TableClass::Front,
            },
        )
        .unwrap();
    let mut loader = Loader::new();
    let mut loaded = 0;
    for idx in 0..38 {
        for region in 0..4 {
            let (Ok(a), Ok(b)) = (
                slot.partition
                    .get_memory_image(idx, region, 1, &nrtucode::NoEnv),
                in_place.get_memory_image(idx, region, 1, &nrtucode::NoEnv),
            ) else {
                continue;
            };
            let mut out = vec![0u8; a.len()];
            let got = a
                .load_into(&mut *slot.flash, &mut out, &mut loader)
                .unwrap();
            let mut want = vec![0u8; b.len()];
            assert_eq!(got, b.load_into(&mut want, &mut loader).unwrap());
            loaded += 1;
        }
    }
    assert!(loaded > 10, "{loaded} answers loaded");
}

#[test]
fn unmapped_refusals_a_changed_byte_at_finish_a_rotten_blob_on_use_a_small_buffer() {
    let f = fixture();
    let key = key();
    // A blob byte changed in transit: the whole check through `read` refuses it at `finish`.
    let mut prefix = vec![0u8; PREFIX];
    let mut slots = Slots::new(
        Unmapped::new(Qspi::new(f.factory.clone()), &mut prefix),
        f.config,
    )
    .unwrap();
    let state = slots.state().unwrap();
    let tables = Partition::parse(&f.new).unwrap().untrusted_tables();
    let entry = tables
        .toc_entry(nrtucode::partition::BlobId::new(3))
        .unwrap();
    let mut tampered = f.new.clone();
    tampered[entry.offset as usize] ^= 1;
    let mut install = slots.install().unwrap();
    install.write(&tampered).unwrap();
    let blob = nrtucode::partition::BlobId::new(3);
    assert_eq!(
        install.finish(),
        Err(UpdateError::Refused(Refusal::Load(
            LoadError::DigestMismatch { blob }
        )))
    );
    assert_eq!(slots.state().unwrap(), state);
    // The intact one installs; then its blob rots: the boot (signature only) uses it, the
    // blob's load refuses it, and `reject` goes back to slot A, checked whole through `read`.
    let mut install = slots.install().unwrap();
    install.write(&f.new).unwrap();
    install.finish().unwrap();
    // (the device resets with the byte rotten)
    let (mut q, prefix) = slots.into_flash().into_parts();
    q.bytes_mut()[f.config.layout.slot_b as usize + entry.offset as usize] ^= 0x80;
    let mut slots = Slots::new(Unmapped::new(q, prefix), f.config).unwrap();
    let boot = slots.boot().unwrap();
    assert_eq!(boot.slot, Slot::B);
    let slot = boot.partition;
    let rotten = slot.partition.blob(blob).unwrap();
    let mut out = vec![0u8; rotten.len()];
    let mut loader = Loader::new();
    assert_eq!(
        rotten.load_into(&mut *slot.flash, &mut out, &mut loader),
        Err(StreamError::Refused(Refusal::Load(
            LoadError::DigestMismatch { blob }
        )))
    );
    let back = slots.reject().unwrap();
    assert_eq!((back.slot, back.state.active), (Slot::A, Slot::A));
    drop(key);

    // A prefix buffer shorter than the partition's prefix: neither slot boots, and each
    // slot's refusal says why.
    let mut small = vec![0u8; 1024];
    let mut slots = Slots::new(
        Unmapped::new(Qspi::new(f.factory.clone()), &mut small),
        f.config,
    )
    .unwrap();
    assert!(matches!(slots.boot(), Err(UpdateError::NoBootableSlot)));
    assert!(matches!(
        slots.refusal(Slot::A),
        Some(Refusal::PrefixBuffer {
            available: 1024,
            ..
        })
    ));
}
