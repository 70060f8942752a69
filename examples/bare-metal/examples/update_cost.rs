//! What an update costs on the Cortex-M, in instructions counted by QEMU (`cargo xtask cost
//! --what update`, which loads a front fixtures partition with counter 1 at slot A
//! (0x21000000), the same with counter 2 in the download area (0x21900000: length word, then the
//! bytes) and with counter 3, `--compress deflate`, in a second one at 0x21c00000; and in a third
//! one at 0x21f00000 the update package from that one to counter 4, stored: the blobs deflate
//! changed are carried, the others copied). Each step runs
//! once between the markers `cost_begin` and `cost_end`, on the NOR flash `src/nor.rs` emulates
//! over PSRAM, and logs what it erased and wrote. Feature `update`, `--no-default-features`;
//! with `unmapped` too, the slots are read through `read` alone (`nrtucode::update::Unmapped`,
//! the signed prefix in an 8 KiB buffer), as on a SPI NOR without a memory map.
#![no_std]
#![no_main]

#[path = "../src/board.rs"]
#[allow(dead_code)] // `reset` and `Outcome::Kept` are the loader's
mod board;
#[path = "../src/flash.rs"]
#[allow(dead_code)] // the mailbox is the loader's
mod flash;
#[path = "../src/nor.rs"]
mod nor;

use core::hint::black_box;

use cortex_m_rt::entry;
use embedded_storage::nor_flash::NorFlash;
use nrtucode::partition::TableClass;
#[cfg(feature = "unmapped")]
use nrtucode::update::Unmapped;
use nrtucode::update::record::Geometry;
use nrtucode::update::{BlockingFlash, Config, Slot, Slots, UpdateError};

use crate::board::Outcome;
use crate::nor::{LAYOUT, NorError, RamFlash};

include!(concat!(env!("OUT_DIR"), "/partition_key.rs"));

/// The slots' flash: the emulated NOR through its mapping, or (feature `unmapped`) through
/// `read` alone.
#[cfg(not(feature = "unmapped"))]
type Flash = RamFlash;
/// The slots' flash: the emulated NOR through `read` alone.
#[cfg(feature = "unmapped")]
type Flash = Unmapped<'static, RamFlash>;

/// The slots' flash over `nor` (`None`: the prefix buffer is taken already).
fn slot_flash(nor: RamFlash) -> Option<Flash> {
    #[cfg(not(feature = "unmapped"))]
    return Some(nor);
    #[cfg(feature = "unmapped")]
    Some(Unmapped::new(
        nor,
        cortex_m::singleton!(: [u8; 8192] = [0; 8192])?,
    ))
}

/// The second download area: its length word, then its bytes.
const LINK_2: usize = 0x21c0_0000;
/// The third: the update package.
const LINK_3: usize = 0x21f0_0000;

/// The chunk sizes src/update.rs streams an update in.
const CHUNKS: [usize; 8] = [1, 7, 300, 4096, 13, 255, 2, 1021];

/// The steps, in order.
const STEPS: [&str; 16] = [
    "`state()`, factory flash (no record; slot A's signature read for the minimum)",
    "`boot()`, factory flash: slot A confirmed (A's signature; the scan known from `state()`)",
    "`install()`, after the boot (the running slot is known: nothing checked)",
    "`Install::write`, the stored update in odd chunks",
    "`finish()`, stored update: the full check, then the candidate's record",
    "`boot()`, B on trial: a record, B's signature",
    "`confirm(B)` (the counter the boot read)",
    "`state()`, three records, a new `Slots` (the scan that chooses the slot)",
    "`boot()`, B confirmed, a new `Slots`: the scan, B's signature",
    "`boot_checked()`, B confirmed: B hashed whole",
    "`Install::write`, the deflate update in odd chunks",
    "`finish()`, deflate update: the full check, then the candidate's record",
    "`boot()`, A on trial (the deflate update): a record, A's signature",
    "`confirm(A)`",
    "`install_package()` and `PackageInstall::write`, the package in odd chunks: the carried blobs from the link, the others copied from slot A",
    "`PackageInstall::finish()`: the full check, the copy rule, then the candidate's record",
];

/// Marks the start of a measured step (QEMU's exec log shows the symbol).
#[unsafe(no_mangle)]
#[inline(never)]
extern "C" fn cost_begin(step: u32) {
    black_box(step);
}

/// Marks its end.
#[unsafe(no_mangle)]
#[inline(never)]
extern "C" fn cost_end(ok: bool) {
    black_box(ok);
}

/// The download areas after the link's own, which `area` reads.
#[derive(Clone, Copy)]
enum Area {
    /// At [`LINK_2`]: the deflate update.
    Second,
    /// At [`LINK_3`]: the update package.
    Third,
}

/// The second download area's bytes.
fn link_2() -> &'static [u8] {
    area(Area::Second)
}

/// The bytes of a download area: its length word, then at most what lies below the mailbox.
fn area(which: Area) -> &'static [u8] {
    let at = match which {
        Area::Second => LINK_2,
        Area::Third => LINK_3,
    };
    let start = at as *const u32;
    // SAFETY: `at` is one of the two constants above (0x21c00000, 0x21f00000), whatever the
    // caller: a 4-aligned word of PSRAM (mps2-an386's XFLASH) below the mailbox and inside the
    // first download area's region, where `-device loader` writes and nothing in this program
    // writes or holds a Rust object: a volatile read of the length word.
    let len = unsafe { start.read_volatile() } as usize;
    let data = start.wrapping_add(1).cast::<u8>();
    let room = 0x2200_0000usize.saturating_sub(16 + data as usize);
    // SAFETY: `data .. data + room` lies in PSRAM below the mailbox, readable for the whole
    // program and never written by it, so no `&mut` aliases the slice.
    unsafe { core::slice::from_raw_parts(data, len.min(room)) }
}

/// Gives `write` the bytes of `update` in [`CHUNKS`], each copied into a receive buffer first
/// (as a link delivers them), until one fails.
fn stream<E>(update: &[u8], mut write: impl FnMut(&[u8]) -> Result<(), E>) -> Result<(), E> {
    let mut received = [0u8; 4096];
    let mut rest = black_box(update);
    for size in CHUNKS.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (chunk, after) = rest.split_at((*size).min(rest.len()));
        if let Some(buf) = received.get_mut(..chunk.len()) {
            buf.copy_from_slice(chunk);
            write(buf)?;
        }
        rest = after;
    }
    Ok(())
}

/// Measures `finish` as step `step` after the writes (which began at `start`); what the writes
/// and the finish did to the flash.
fn finish_step<T>(
    step: u32,
    start: nor::Counts,
    finish: impl FnOnce() -> Result<T, UpdateError<NorError>>,
) -> Result<[nor::Counts; 2], UpdateError<NorError>> {
    let streamed = nor::counts();
    cost_begin(step);
    let finished = finish();
    cost_end(finished.is_ok());
    finished?;
    Ok([delta(start, streamed), delta(streamed, nor::counts())])
}

/// Streams `update` in [`CHUNKS`] (steps `write` and `finish` measured, and `install()` with
/// `measure_install`); what the write and the finish steps did to the flash.
fn install(
    slots: &mut Slots<Flash>,
    update: &[u8],
    write_step: u32,
    measure_install: bool,
) -> Result<[nor::Counts; 2], UpdateError<NorError>> {
    if measure_install {
        cost_begin(write_step - 1);
    }
    let install = slots.install();
    if measure_install {
        cost_end(install.is_ok());
    }
    let mut install = install?;
    let start = nor::counts();
    cost_begin(write_step);
    let written = stream(update, |buf| install.write(buf));
    cost_end(written.is_ok());
    written?;
    finish_step(write_step + 1, start, || install.finish())
}

/// Streams the update package `package` in [`CHUNKS`] (`install_package` and the writes are
/// step `step`, `finish` the next); what each did to the flash.
fn install_package<F: BlockingFlash<Error = NorError>>(
    slots: &mut Slots<F>,
    package: &[u8],
    step: u32,
) -> Result<[nor::Counts; 2], UpdateError<NorError>> {
    let start = nor::counts();
    cost_begin(step);
    let written = slots
        .install_package()
        .and_then(|mut install| stream(package, |buf| install.write(buf)).map(|()| install));
    cost_end(written.is_ok());
    let install = written?;
    finish_step(step + 1, start, || install.finish())
}

#[entry]
fn main() -> ! {
    let Some(mem) = flash::update_flash() else {
        board::finish(Outcome::Failed);
    };
    let mut nor = RamFlash::new(mem);
    if nor::erase_after_slot_a(&mut nor).is_err() {
        board::finish(Outcome::Failed);
    }
    let config = Config {
        layout: LAYOUT,
        key: PARTITION_KEY,
        class: TableClass::Front,
    };
    let Some(Ok(mut slots)) = slot_flash(nor).map(|flash| Slots::new(flash, config)) else {
        board::finish(Outcome::Failed);
    };
    let (link, link_2) = (flash::link(), link_2());
    let mut ok = [false; STEPS.len()];
    let mut flash = [nor::Counts::default(); STEPS.len()];
    let counts = |_: &Slots<Flash>| nor::counts();

    let before = counts(&slots);
    cost_begin(0);
    let state = slots.state();
    cost_end(state.is_ok());
    ok[0] = state.is_ok();
    flash[0] = delta(before, counts(&slots));

    let mut at = counts(&slots);
    cost_begin(1);
    let booted = slots.boot().map(|b| (b.slot, b.state.is_trial()));
    cost_end(booted.is_ok());
    ok[1] = booted == Ok((Slot::A, false));
    flash[1] = delta(at, counts(&slots));

    let installed = install(&mut slots, link, 3, true);
    ok[2..5].fill(installed.is_ok());
    [flash[3], flash[4]] = installed.unwrap_or_default();

    at = counts(&slots);
    cost_begin(5);
    let booted = slots.boot().map(|b| (b.slot, b.state.is_trial()));
    cost_end(booted.is_ok());
    ok[5] = booted == Ok((Slot::B, true));
    flash[5] = delta(at, counts(&slots));

    at = counts(&slots);
    cost_begin(6);
    let confirmed = slots.confirm(Slot::B);
    cost_end(confirmed.is_ok());
    ok[6] = confirmed.is_ok_and(|s| !s.is_trial() && s.min_security_counter == 2);
    flash[6] = delta(at, counts(&slots));

    // A power-on: a new `Slots` over the same flash, with nothing known.
    let Ok(mut slots) = Slots::new(slots.into_flash(), config) else {
        board::finish(Outcome::Failed);
    };
    at = counts(&slots);
    cost_begin(7);
    let state = slots.state();
    cost_end(state.is_ok());
    ok[7] = state.is_ok_and(|s| s.active == Slot::B && s.seq == 3);
    flash[7] = delta(at, counts(&slots));

    let Ok(mut slots) = Slots::new(slots.into_flash(), config) else {
        board::finish(Outcome::Failed);
    };
    at = counts(&slots);
    cost_begin(8);
    let booted = slots.boot().map(|b| (b.slot, b.fell_back));
    cost_end(booted.is_ok());
    ok[8] = booted == Ok((Slot::B, false));
    flash[8] = delta(at, counts(&slots));

    at = counts(&slots);
    cost_begin(9);
    let booted = slots.boot_checked().map(|b| (b.slot, b.fell_back));
    cost_end(booted.is_ok());
    ok[9] = booted == Ok((Slot::B, false));
    flash[9] = delta(at, counts(&slots));

    let installed = install(&mut slots, link_2, 10, false);
    ok[10..12].fill(installed.is_ok());
    [flash[10], flash[11]] = installed.unwrap_or_default();

    at = counts(&slots);
    cost_begin(12);
    let booted = slots.boot().map(|b| (b.slot, b.state.is_trial()));
    cost_end(booted.is_ok());
    ok[12] = booted == Ok((Slot::A, true));
    flash[12] = delta(at, counts(&slots));

    at = counts(&slots);
    cost_begin(13);
    let confirmed = slots.confirm(Slot::A);
    cost_end(confirmed.is_ok());
    ok[13] = confirmed.is_ok_and(|s| !s.is_trial() && s.min_security_counter == 3);
    flash[13] = delta(at, counts(&slots));

    let package = area(Area::Third);
    let installed = install_package(&mut slots, package, 14);
    ok[14..16].fill(installed.is_ok());
    [flash[14], flash[15]] = installed.unwrap_or_default();

    let Ok(records) = Geometry::of::<RamFlash>().records() else {
        board::finish(Outcome::Failed);
    };
    for (i, (step, ok)) in STEPS.iter().zip(ok).enumerate() {
        let f = flash[i];
        defmt::info!(
            "{=str}: ok {}, flash {} erases {} writes {} bytes",
            step,
            ok,
            f.erases,
            f.writes,
            f.written
        );
    }
    defmt::info!(
        "sizes: stored update {} bytes, deflate update {} bytes, package {} bytes for a partition of {} bytes, record {} bytes, {} records per {}-byte sector, 2 sectors",
        link.len(),
        link_2.len(),
        package.len(),
        nrtucode::update::package::PackageHeader::parse(package).map_or(0, |h| h.total_len),
        records.record_len(),
        records.per_sector(),
        RamFlash::ERASE_SIZE
    );
    board::finish(if ok.iter().all(|&ok| ok) {
        Outcome::Loaded
    } else {
        Outcome::Failed
    })
}

/// What was done between two counts.
fn delta(before: nor::Counts, after: nor::Counts) -> nor::Counts {
    nor::Counts {
        erases: after.erases.saturating_sub(before.erases),
        writes: after.writes.saturating_sub(before.writes),
        written: after.written.saturating_sub(before.written),
    }
}
