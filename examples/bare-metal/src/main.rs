//! A bare-metal loader, as a starting point: brings up one accelerator engine by copying its
//! firmware images from external flash into device memory, verifying each copy's SHA-256 in the
//! same pass, reading the copy back, and logging through `defmt`.
//!
//! - `memory/board.x` (through `memory/blobs.x`) places every blob (`.rodata.nrtucode.*`) in
//!   the XFLASH region; code and the resolver tables stay in internal FLASH. Feature `qemu`
//!   links QEMU's mps2-an386 map instead and logs and exits through semihosting
//!   (`src/board.rs`).
//! - The "device memory" here is RAM buffers; on a real board write the engine's memory windows
//!   or DMA buffers instead.
//! - Default: resolve at run time (any engine, any flavor, chosen by integers that could come
//!   from a host) and copy-check. Feature `const-resolve`: resolve at compile time with
//!   `nrtucode::image!` and look the digests up at compile time, so only the named blobs are
//!   linked; copy-check the same way.
//! - An image is a region's non-empty blob; a region without one (a boundary cursor, zero
//!   bytes) has nothing to load. The loader succeeds only when every image verified.
//! - Feature `partition` (with `--no-default-features`): no blob is linked. The images come
//!   from a signed partition flashed on its own (`src/part.rs`): its signature is checked once,
//!   then each image is copy-checked (or, with `deflate`, decode-checked) into its window.
#![no_std]
#![no_main]

mod board;
#[cfg(feature = "partition")]
mod flash;
// Key IDs, build IDs and digests in the log; the update build logs none of them.
#[cfg(not(feature = "update"))]
mod hex;
#[cfg(not(feature = "partition"))]
mod load;
#[cfg(feature = "update")]
mod nor;
#[cfg(feature = "partition")]
mod part;
#[cfg(feature = "update")]
mod update;

use cortex_m_rt::entry;
use nrtucode::{Flavor, ImageIndex, Region};

use crate::board::Outcome;

/// What a region held.
pub enum Loaded {
    /// Its image was copied and verified.
    Image,
    /// The region has no image (zero bytes): nothing to load.
    Nothing,
}

/// The engine this loader brings up, and its flavor.
const ENGINE: ImageIndex = ImageIndex::CAYMAN_NX_ACT;
const FLAVOR: Flavor = Flavor::Perf;
/// Its name in the log (`CAYMAN_NX_ACT`), looked up at compile time: the table of every
/// engine's name would cost internal flash.
const ENGINE_NAME: &str = ImageIndex::NAMES[ENGINE.as_usize()];

/// Bytes of device memory per region: IRAM holds the largest image of this engine.
const IRAM_WINDOW: usize = 96 * 1024;
const DATA_WINDOW: usize = 16 * 1024;
/// Bytes per hwdecode table window (feature `partition`).
#[cfg(feature = "partition")]
const TABLE_WINDOW: usize = 8 * 1024;

/// Device memory standing in for the engine's four memories, in `.bss`. One static: separate
/// ones were laid out in an order that followed cargo's crate hashes, which change with the
/// checkout path (README.md, "Reproducible images").
struct DeviceMemory {
    iram: [u8; IRAM_WINDOW],
    dram: [u8; DATA_WINDOW],
    sram: [u8; DATA_WINDOW],
    extram: [u8; DATA_WINDOW],
    /// The engine's two hwdecode tables (PROF_CAM 1 KiB, PROF_TABLE 8 KiB), read from a
    /// partition.
    #[cfg(feature = "partition")]
    tables: [[u8; TABLE_WINDOW]; 2],
    /// What reading a partition needs besides the windows (the inflater, with `deflate`).
    #[cfg(feature = "partition")]
    scratch: part::Scratch,
}

#[entry]
fn main() -> ! {
    defmt::info!(
        "nrtucode loader: engine {=str} ({}), flavor {}",
        ENGINE_NAME,
        ENGINE.raw(),
        FLAVOR
    );
    // Which blobs this build embedded: a boot log shows whether they are the vendor's.
    #[cfg(not(feature = "partition"))]
    match nrtucode::catalog::BLOB_SOURCE {
        nrtucode::catalog::BlobSource::Fixtures => {
            defmt::info!("blobs: the built-in fixtures, not the vendor's")
        }
        nrtucode::catalog::BlobSource::Directory => defmt::info!(
            "blobs: carved from the vendor library with GNU BuildID {=str}",
            nrtucode::catalog::BLOB_ORIGIN
        ),
    }
    // The partition: its signature and policy, once per boot; nothing is loaded without it.
    #[cfg(all(feature = "partition", not(feature = "update")))]
    let Some(partition) = part::open() else {
        board::finish(Outcome::Failed);
    };
    let Some(memory) = cortex_m::singleton!(: DeviceMemory = DeviceMemory {
        iram: [0; IRAM_WINDOW],
        dram: [0; DATA_WINDOW],
        sram: [0; DATA_WINDOW],
        extram: [0; DATA_WINDOW],
        #[cfg(feature = "partition")]
        tables: [[0; TABLE_WINDOW]; 2],
        #[cfg(feature = "partition")]
        scratch: part::scratch(),
    }) else {
        defmt::error!("device memory already taken");
        board::finish(Outcome::Failed);
    };
    // Feature `update`: the partition comes from one of two slots, and an update is installed
    // (src/update.rs); it ends the program itself.
    #[cfg(feature = "update")]
    update::run(memory);
    #[cfg(not(feature = "update"))]
    {
        let (loaded, failed) = load_engine(
            #[cfg(feature = "partition")]
            &mut &partition,
            memory,
        );
        if failed == 0 && loaded > 0 {
            defmt::info!("engine ready: {} of {} images loaded", loaded, loaded);
            board::finish(Outcome::Loaded)
        } else {
            defmt::error!(
                "engine not loaded: {} of {} images loaded, {} failed",
                loaded,
                loaded + failed,
                failed
            );
            board::finish(Outcome::Failed)
        }
    }
}

/// Feature `update`: logs the engine's summary line, as `main` does without it: `true` when
/// every image loaded (and at least one).
#[cfg(feature = "update")]
fn engine_ready(loaded: u32, failed: u32) -> bool {
    if failed == 0 && loaded > 0 {
        defmt::info!("engine ready: {} of {} images loaded", loaded, loaded);
        true
    } else {
        defmt::error!(
            "engine not loaded: {} of {} images loaded, {} failed",
            loaded,
            loaded + failed,
            failed
        );
        false
    }
}

/// Loads the engine's images (and, from a partition, its hwdecode tables) into device memory,
/// each verified and logged: how many loaded and how many failed. (Inlined: as one function with
/// `main`, the builds without `update` keep their size.)
#[inline(always)]
fn load_engine(
    #[cfg(feature = "partition")] partition: &mut impl part::ItemSource,
    memory: &mut DeviceMemory,
) -> (u32, u32) {
    // On a board the engine and flavor come from the host (a mailbox register, a command);
    // black_box stands in for that, so the compiler cannot resolve the request early.
    let (engine, flavor) = core::hint::black_box((ENGINE, FLAVOR));
    let windows = [
        &mut memory.iram[..],
        &mut memory.dram[..],
        &mut memory.sram[..],
        &mut memory.extram[..],
    ];
    let (mut loaded, mut failed) = (0u32, 0u32);
    for (region, window) in Region::ALL.into_iter().zip(windows) {
        #[cfg(not(feature = "partition"))]
        let result = load::load(engine, region, flavor, window);
        #[cfg(feature = "partition")]
        let result = part::load(
            partition,
            engine,
            part::Item::Image(region),
            flavor,
            window,
            &mut memory.scratch,
        );
        match result {
            Ok(Loaded::Image) => loaded += 1,
            Ok(Loaded::Nothing) => {}
            Err(()) => failed += 1,
        }
    }
    // From a partition, the engine's hwdecode tables too (compressed ones decode-checked).
    #[cfg(feature = "partition")]
    for (kind, window) in nrtucode::ProfKind::ALL.into_iter().zip(&mut memory.tables) {
        match part::load(
            partition,
            engine,
            part::Item::Table(kind),
            flavor,
            window,
            &mut memory.scratch,
        ) {
            Ok(Loaded::Image) => loaded += 1,
            Ok(Loaded::Nothing) => {}
            Err(()) => failed += 1,
        }
    }
    (loaded, failed)
}
