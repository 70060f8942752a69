//! The async updater on the device (`cargo xtask qemu --case update` boots it): slot A holds a
//! front fixtures partition with counter 1, the download area the same with counter 2. Over an
//! `embedded-storage-async` adapter of the NOR flash `src/nor.rs` emulates over PSRAM, which
//! yields to the executor before every operation (as a DMA-driven driver would), run by
//! embassy-futures' `block_on`: `Slots::new(Async(flash), ..)`, `boot().await` (slot A),
//! `install().await`, the update written in odd chunks, `finish().await`; then, as after a
//! reset, a new `Slots` over the same flash: `boot_checked().await` (slot B on trial, hashed
//! whole), `confirm(B).await`. It logs each step, the suspensions, and ends with status 0 when
//! each did what it should. Feature `async`, `--no-default-features`.
#![no_std]
#![no_main]

#[path = "../src/board.rs"]
#[allow(dead_code)] // `reset` and `Outcome::Kept` are the loader's
mod board;
#[path = "../src/flash.rs"]
#[allow(dead_code)] // the mailbox is the loader's
mod flash;
#[path = "../src/nor.rs"]
#[allow(dead_code)] // the counts are the loader's
mod nor;

use core::sync::atomic::{AtomicU32, Ordering};

use cortex_m_rt::entry;
use embassy_futures::{block_on, yield_now};
use embedded_storage::nor_flash::{ErrorType, NorFlash, ReadNorFlash};
use nrtucode::partition::TableClass;
use nrtucode::update::{Async, AsyncMappedFlash, Config, MappedFlash, Slot, UpdateError};

use crate::board::Outcome;
use crate::nor::{LAYOUT, NorError, RamFlash};

include!(concat!(env!("OUT_DIR"), "/partition_key.rs"));

/// The chunk sizes src/update.rs streams an update in.
const CHUNKS: [usize; 8] = [1, 7, 300, 4096, 13, 255, 2, 1021];

/// How many times a flash operation suspended its task.
static SUSPENSIONS: AtomicU32 = AtomicU32::new(0);

/// The emulated NOR flash behind an async driver's traits: each operation first yields to the
/// executor once (`Pending`, the task woken), then runs.
struct AsyncNor(RamFlash);

impl AsyncNor {
    async fn suspend() {
        SUSPENSIONS.fetch_add(1, Ordering::Relaxed);
        yield_now().await;
    }
}

impl ErrorType for AsyncNor {
    type Error = NorError;
}

impl embedded_storage_async::nor_flash::ReadNorFlash for AsyncNor {
    const READ_SIZE: usize = RamFlash::READ_SIZE;

    async fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), NorError> {
        Self::suspend().await;
        self.0.read(offset, bytes)
    }

    fn capacity(&self) -> usize {
        self.0.capacity()
    }
}

impl embedded_storage_async::nor_flash::NorFlash for AsyncNor {
    const WRITE_SIZE: usize = RamFlash::WRITE_SIZE;
    const ERASE_SIZE: usize = RamFlash::ERASE_SIZE;

    async fn erase(&mut self, from: u32, to: u32) -> Result<(), NorError> {
        Self::suspend().await;
        self.0.erase(from, to)
    }

    async fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), NorError> {
        Self::suspend().await;
        self.0.write(offset, bytes)
    }
}

impl AsyncMappedFlash for AsyncNor {
    fn mapped(&self) -> &[u8] {
        self.0.mapped()
    }
}

type Slots = nrtucode::update::Slots<Async<AsyncNor>>;

/// Installs `update` from the running slot A into B, then, over a new `Slots` (a reset), boots
/// B on trial checked whole and confirms it: each step logged, the first failure returned.
async fn update(slots: &mut Slots, update: &[u8]) -> Result<(), UpdateError<NorError>> {
    let (slot, trial) = slots.boot().await.map(|b| (b.slot, b.state.is_trial()))?;
    defmt::info!("async: booted slot {}, on trial {}", slot, trial);
    let mut install = slots.install().await?;
    let mut rest = update;
    for size in CHUNKS.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (chunk, after) = rest.split_at((*size).min(rest.len()));
        install.write(chunk).await?;
        rest = after;
    }
    let state = install.finish().await?;
    defmt::info!("async: update installed; state {}", state);
    Ok(())
}

/// After the reset: B on trial, every blob hashed, then confirmed.
async fn trial(slots: &mut Slots) -> Result<Slot, UpdateError<NorError>> {
    let (slot, trial) = (slots.boot_checked().await).map(|b| (b.slot, b.state.is_trial()))?;
    defmt::info!(
        "async: booted slot {} hashed whole, on trial {}",
        slot,
        trial
    );
    let state = slots.confirm(slot).await?;
    defmt::info!("async: confirmed slot {}; state {}", slot, state);
    Ok(slot)
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
    let Ok(mut slots) = Slots::new(Async(AsyncNor(nor)), config) else {
        board::finish(Outcome::Failed);
    };
    if let Err(e) = block_on(update(&mut slots, flash::link())) {
        defmt::error!("async: update: {}", e);
        board::finish(Outcome::Failed);
    }
    // A reset: a new `Slots` over the same flash, with nothing known.
    let Ok(mut slots) = Slots::new(slots.into_flash(), config) else {
        board::finish(Outcome::Failed);
    };
    match block_on(trial(&mut slots)) {
        Ok(Slot::B) => {
            defmt::info!(
                "async: done, {} flash operations suspended the task",
                SUSPENSIONS.load(Ordering::Relaxed)
            );
            board::finish(Outcome::Loaded)
        }
        Ok(other) => {
            defmt::error!("async: booted slot {}, not B", other);
            board::finish(Outcome::Failed)
        }
        Err(e) => {
            defmt::error!("async: trial: {}", e);
            board::finish(Outcome::Failed)
        }
    }
}
