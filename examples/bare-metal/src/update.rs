//! Feature `update` (QEMU only): the partition comes from one of two slots in a NOR flash
//! (`nrtucode::update`), and an update offered by the link is installed into the other one.
//! README.md, "Updates on the emulated device", has the walkthrough and the cases.
//!
//! Each boot, from the reset vector:
//!
//! 1. `Slots::boot` chooses the slot (the state record: confirmed, on trial, or reverting) and
//!    checks its signature (every slot the state names was checked whole when installed); the
//!    engine's images are loaded from it, as without `update`, each blob checked as it loads;
//! 2. the engine did not load (a blob damaged since its install): `Slots::reject` records the
//!    other slot, checked whole, and resets into it; with none to go back to, the program ends;
//! 3. on trial: the application's self-test is that load; it passed, so the slot is confirmed
//!    (which raises the minimum security counter), then a reset;
//! 4. confirmed, and the link offers an update not yet tried in this power cycle: it is
//!    streamed into the inactive slot in chunks of odd sizes (`Install::write`), checked whole
//!    (`Install::finish`), then a reset, whether it was accepted or refused. An update package
//!    (`nrtucode package`: a delta from the running partition) goes through
//!    `Slots::resume_package`, and the emulated link drops once in each power cycle, halfway
//!    through what follows the new partition's signed prefix: a reset, then the install resumes from the last blob the slot holds, checked,
//!    and takes the rest of the package from the byte `PackageInstall::offset` names;
//! 5. otherwise the program ends: status 0 when it runs the update (or none was offered), 4
//!    when the update was refused and the previous partition runs, 1 when the engine failed.
//!
//! With feature `unmapped` the same program reads the slots as on a SPI NOR without a memory
//! map (`nrtucode::update::Unmapped`): only through `ReadNorFlash::read`, the signed prefix of
//! the slot being checked in an 8 KiB buffer ([`PREFIX`]), each blob read through the driver
//! as it is loaded.
//!
//! The mailbox (four words of RAM kept across a reset: magic, boot number, update tried, link
//! dropped) tells a reset from a power-on, and stops the loop after the update was tried once:
//! the download area, written by `-device loader`, offers the same bytes again after every
//! reset.

use nrtucode::partition::TableClass;
#[cfg(feature = "unmapped")]
use nrtucode::update::Unmapped;
use nrtucode::update::package::{self, PackageHeader};
use nrtucode::update::{Config, MappedFlash, Slots, State, UpdateError};

use crate::board::{self, Outcome};
use crate::flash;
use crate::nor::{LAYOUT, NorError, RamFlash};
use crate::part::{PARTITION_KEY, TEST_KEY};

/// The table class the update build expects. Two slots of the full fixtures (9.7 MB each) and
/// a download area do not fit the 16 MiB of PSRAM; the front library's (2.9 MB) do. A board
/// with a large enough NOR flash uses `Full`, as the `partition` build does.
pub const CLASS: TableClass = TableClass::Front;

/// The flash the slots are read from: the emulated NOR through its mapping, or (feature
/// `unmapped`) through `read` alone.
#[cfg(not(feature = "unmapped"))]
type Flash = RamFlash;
/// The flash the slots are read from: the emulated NOR through `read` alone.
#[cfg(feature = "unmapped")]
type Flash = Unmapped<'static, RamFlash>;

/// Feature `unmapped`: the buffer the signed prefix of the slot being checked is read into
/// (the front set's is 7,856 bytes; the full set's 16,816).
#[cfg(feature = "unmapped")]
pub const PREFIX: usize = 8 * 1024;

/// The slots' flash over `nor` (`None`: the prefix buffer is taken already).
fn slot_flash(nor: RamFlash) -> Option<Flash> {
    #[cfg(not(feature = "unmapped"))]
    return Some(nor);
    #[cfg(feature = "unmapped")]
    {
        let prefix = cortex_m::singleton!(: [u8; PREFIX] = [0; PREFIX])?;
        defmt::info!(
            "slots read through `read` alone (no mapping): signed prefix buffer {} bytes",
            PREFIX
        );
        Some(Unmapped::new(nor, prefix))
    }
}

/// The sizes the link delivers the update in, in turn (a radio's or a UART's odd chunks).
const CHUNKS: [usize; 8] = [1, 7, 300, 4096, 13, 255, 2, 1021];

/// The mailbox's first word once it was written in this power cycle: `NRMB`.
const MAILBOX_MAGIC: u32 = u32::from_le_bytes(*b"NRMB");

/// Boots in one power cycle before the program gives up (a bug would otherwise reset forever).
const MAX_BOOTS: u32 = 8;

/// The boot: never returns (a reset, or the end of the program).
pub fn run(memory: &mut crate::DeviceMemory) -> ! {
    let mut mailbox = flash::mailbox();
    let power_on = mailbox[0] != MAILBOX_MAGIC;
    if power_on {
        mailbox = [MAILBOX_MAGIC, 0, 0, 0];
    }
    let number = mailbox[1];
    mailbox[1] = number.saturating_add(1);
    flash::set_mailbox(mailbox);
    defmt::info!(
        "boot {}: {=str}",
        number,
        if power_on {
            "power-on"
        } else {
            "after a reset"
        }
    );
    if number >= MAX_BOOTS {
        defmt::error!("{} boots in this power cycle: giving up", number);
        board::finish(Outcome::Failed);
    }
    let Some(mem) = flash::update_flash() else {
        defmt::error!("the flash is already taken");
        board::finish(Outcome::Failed);
    };
    let mut nor = RamFlash::new(mem);
    if power_on && slot_a_only(&nor) {
        // A new board's flash reads 0xFF except where the programmer wrote (slot A); QEMU's RAM
        // reads 0 at power-on. On a board this erase is the production programmer's.
        if let Err(e) = crate::nor::erase_after_slot_a(&mut nor) {
            defmt::error!("power-on erase: {}", e);
            board::finish(Outcome::Failed);
        }
        defmt::info!("flash as a new board's: slot A programmed, the rest erased");
    } else if power_on {
        defmt::info!("flash as programmed: the whole region (a factory image from provision)");
    }
    if TEST_KEY {
        defmt::warn!("partition key: the repository's test key, never for real firmware");
    }
    let config = Config {
        layout: LAYOUT,
        key: PARTITION_KEY,
        class: CLASS,
    };
    let Some(flash) = slot_flash(nor) else {
        defmt::error!("the prefix buffer is already taken");
        board::finish(Outcome::Failed);
    };
    let mut slots = match Slots::new(flash, config) {
        Ok(slots) => slots,
        Err(e) => {
            defmt::error!("flash layout refused: {}", e);
            board::finish(Outcome::Failed);
        }
    };
    let link = flash::link();

    // 1. Choose the slot (its signature: it was checked whole when installed), load the
    // engine from it (each blob checked as it is loaded).
    let (slot, state, loaded, runs_update) = {
        let boot = match slots.boot() {
            Ok(boot) => boot,
            Err(e) => {
                defmt::error!("no slot boots: {}", e);
                board::finish(Outcome::Failed);
            }
        };
        #[cfg(not(feature = "unmapped"))]
        let (p, mut source) = (*boot.partition.partition(), &boot.partition);
        #[cfg(feature = "unmapped")]
        let mut boot = boot;
        #[cfg(feature = "unmapped")]
        let (p, source) = (*boot.partition.partition.partition(), &mut boot.partition);
        defmt::info!(
            "booted slot {}: {} bytes, class {=str}, security counter {}, fell back {}; state {}",
            boot.slot,
            p.total_len(),
            p.class().name(),
            p.security_counter(),
            boot.fell_back,
            boot.state
        );
        #[cfg(not(feature = "unmapped"))]
        let (images, failed) = crate::load_engine(&mut source, memory);
        #[cfg(feature = "unmapped")]
        let (images, failed) = crate::load_engine(source, memory);
        let loaded = crate::engine_ready(images, failed);
        // The partition running is the update when their signed prefixes are one (the prefix
        // names every blob by its digest, and the running one's signature was checked).
        let running = package::base_digest(p.bytes());
        let runs_update = running.is_some()
            && match PackageHeader::parse(link) {
                Ok(h) => running == Some(h.target),
                Err(_) => running == package::base_digest(link),
            };
        (boot.slot, boot.state, loaded, runs_update)
    };

    // 2. A slot whose engine did not load (a blob failed its check on use: damaged since
    // its install, as the boot checks the signature only) is rejected: the other slot,
    // checked whole, is recorded and boots after the reset. With none, the device stops.
    if !loaded {
        match slots.reject() {
            Ok(back) => {
                defmt::warn!(
                    "slot {} rejected: its engine did not load; slot {} next; reset",
                    slot,
                    back.slot
                );
                board::reset();
            }
            Err(e) => {
                defmt::error!("slot {}: its engine did not load, and {}", slot, e);
                board::finish(Outcome::Failed);
            }
        }
    }

    // 3. A trial whose engine loaded is confirmed.
    if state.is_trial() {
        match slots.confirm(slot) {
            Ok(s) => defmt::info!(
                "confirmed slot {}: minimum security counter {}; reset",
                slot,
                s.min_security_counter
            ),
            Err(e) => defmt::error!("confirm: {}", e),
        }
        board::reset();
    }

    // 4. An update the link offers, once per power cycle (a package: once more after the
    // emulated link drop).
    if !link.is_empty() && mailbox[2] == 0 && !runs_update {
        let is_package = link.starts_with(&package::MAGIC);
        let drop_link = is_package && mailbox[3] == 0;
        mailbox[2] = u32::from(!drop_link);
        mailbox[3] = 1;
        flash::set_mailbox(mailbox);
        defmt::info!("update offered: {} bytes", link.len());
        let before = crate::nor::counts();
        let installed = if is_package {
            install_package(&mut slots, link, drop_link)
        } else {
            install(&mut slots, link)
        };
        match installed {
            Ok(s) => {
                let after = crate::nor::counts();
                defmt::info!(
                    "update installed into slot {}: {} erases, {} writes, {} bytes written; state {}; reset",
                    s.active,
                    after.erases.saturating_sub(before.erases),
                    after.writes.saturating_sub(before.writes),
                    after.written.saturating_sub(before.written),
                    s
                );
            }
            Err(e) => defmt::error!("update refused: {}; reset", e),
        }
        board::reset();
    }

    // 5. Nothing left to do.
    if runs_update {
        defmt::info!("running the update from slot {}, confirmed", slot);
    } else if !link.is_empty() {
        defmt::warn!("the update was not installed: running slot {}", slot);
        board::finish(Outcome::Kept);
    } else {
        defmt::info!("no update offered: running slot {}", slot);
    }
    board::finish(Outcome::Loaded)
}

/// Whether the programmer wrote slot A only, at power-on: the state sectors read as QEMU's RAM
/// at power-on (all 0), as no flash a programmer wrote does (erased reads 0xFF, a record starts
/// with its magic `NRUS`). A factory image (`nrtucode provision`, README.md) writes the whole region: its slot
/// B and state are kept as written.
fn slot_a_only(nor: &RamFlash) -> bool {
    let state = usize::try_from(LAYOUT.state).unwrap_or(usize::MAX);
    nor.mapped()
        .get(state..)
        .is_some_and(|sectors| sectors.iter().all(|b| *b == 0))
}

/// Installs the update package `link` as the link delivers it (`Slots::resume_package`: from
/// where the slot it writes says an earlier transfer got, checked; from its first byte after
/// the header otherwise); with `drop_link`, the link drops halfway through what follows the new
/// partition's signed prefix, and the device resets, as after a link loss with a watchdog.
fn install_package(
    slots: &mut Slots<Flash>,
    link: &[u8],
    drop_link: bool,
) -> Result<State, UpdateError<NorError>> {
    let header = link.get(..package::HEADER_LEN).unwrap_or(link);
    let mut install = slots.resume_package(header)?;
    let from = usize::try_from(install.offset()).unwrap_or(usize::MAX);
    if let Some(h) = install.header() {
        defmt::info!(
            "package: {=str}, base prefix digest {=[u8]:02x}..., {} blobs carried; resuming at package byte {} of {}, slot {}",
            h.kind.name(),
            h.base.get(..4).unwrap_or(&[]),
            h.carried,
            from,
            link.len(),
            install.target()
        );
    }
    // The emulated loss: halfway through what follows the new partition's signed prefix.
    let after_prefix = install.header().map_or(0, |h| {
        package::HEADER_LEN.saturating_add(h.prefix_len as usize)
    });
    let stop = if drop_link {
        after_prefix.saturating_add(link.len()) / 2
    } else {
        link.len()
    };
    let mut received = [0u8; 4096];
    let mut at = from;
    for size in CHUNKS.iter().cycle() {
        if at >= stop {
            break;
        }
        let end = at.saturating_add(*size).min(stop);
        let (Some(chunk), Some(buf)) = (link.get(at..end), received.get_mut(..end - at)) else {
            break;
        };
        buf.copy_from_slice(chunk);
        install.write(buf)?;
        at = end;
    }
    if drop_link {
        defmt::warn!("the link dropped at package byte {}; reset", at);
        board::reset();
    }
    install.finish()
}

/// Streams `update` into the inactive slot as the link delivers it: each chunk copied into a
/// receive buffer, then written (`Install::write`, any length); then checks it whole.
fn install(slots: &mut Slots<Flash>, update: &[u8]) -> Result<State, UpdateError<NorError>> {
    let mut install = slots.install()?;
    defmt::info!("installing into slot {}", install.target());
    let mut received = [0u8; 4096];
    let mut rest = update;
    for size in CHUNKS.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (chunk, after) = rest.split_at((*size).min(rest.len()));
        let Some(buf) = received.get_mut(..chunk.len()) else {
            break;
        };
        buf.copy_from_slice(chunk);
        install.write(buf)?;
        rest = after;
    }
    install.finish()
}
