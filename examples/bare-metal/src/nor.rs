//! Feature `update`: a NOR flash emulated over RAM. QEMU's mps2-an386 has no flash a program can
//! erase and write, so this gives the `embedded-storage` traits (`ReadNorFlash`, `NorFlash`)
//! and `nrtucode::update::MappedFlash` over a memory region of the board map
//! (`__nrtucode_update_flash_start` .. `__nrtucode_update_flash_end`, [`crate::flash`]), with a
//! NOR flash's rules:
//!
//! - an erase takes whole [`ERASE_SIZE`](NorFlash::ERASE_SIZE) sectors (4 KiB) and sets every
//!   byte to `0xFF`;
//! - a write takes whole [`WRITE_SIZE`](NorFlash::WRITE_SIZE) words (4 bytes) and only clears
//!   bits (the new byte is the old one AND the one written: setting a bit back takes an erase);
//! - a read takes any byte; the CPU also reads the bytes in place ([`MappedFlash::mapped`]).
//!
//! A board implements the same traits over its QSPI NOR driver: `erase` as sector-erase
//! commands, `write` as page programs, `mapped` as the memory-mapped (XIP) window, its data
//! cache invalidated over what a write changed before `write` returns.

use core::sync::atomic::{AtomicU32, Ordering};

use embedded_storage::nor_flash::{
    ErrorType, NorFlash, NorFlashError, NorFlashErrorKind, ReadNorFlash,
};
use nrtucode::update::{Layout, MappedFlash};

/// Where the slots and the state are in the emulated flash (memory/mps2-an386.x): slot A at
/// 0x21000000 (where `-device loader` writes the factory partition), slot B at 0x21400000, 4
/// MiB each, the two 4 KiB state sectors at 0x21800000. The loader's and the examples'.
pub const LAYOUT: Layout = Layout {
    slot_a: 0,
    slot_b: 0x40_0000,
    slot_len: 0x40_0000,
    state: 0x80_0000,
};

/// Erases everything after slot A: the flash as a new board's, slot A as the programmer wrote
/// it (QEMU's RAM reads 0 at power-on; on a board this erase is the production programmer's).
pub fn erase_after_slot_a(nor: &mut RamFlash) -> Result<(), NorError> {
    let end = u32::try_from(nor.capacity()).map_err(|_| NorError::OutOfBounds)?;
    nor.erase(LAYOUT.slot_len, end)
}

/// Why an operation was refused (nothing of it was done).
#[derive(Clone, Copy, Debug, PartialEq, Eq, defmt::Format)]
pub enum NorError {
    /// An offset or a length is not a multiple of the operation's size.
    NotAligned,
    /// The range leaves the flash (or ends before it starts).
    OutOfBounds,
}

impl NorFlashError for NorError {
    fn kind(&self) -> NorFlashErrorKind {
        match self {
            NorError::NotAligned => NorFlashErrorKind::NotAligned,
            NorError::OutOfBounds => NorFlashErrorKind::OutOfBounds,
        }
    }
}

/// What was done to the flash so far (the update's figures: `cargo xtask cost --what update`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, defmt::Format)]
pub struct Counts {
    /// Sectors erased.
    pub erases: u32,
    /// `write` calls.
    pub writes: u32,
    /// Bytes written.
    pub written: u32,
}

/// The chip's operation counters ([`counts`]): readable while an `Install` holds the flash.
static ERASES: AtomicU32 = AtomicU32::new(0);
static WRITES: AtomicU32 = AtomicU32::new(0);
static WRITTEN: AtomicU32 = AtomicU32::new(0);

/// What was erased and written since the program started.
pub fn counts() -> Counts {
    Counts {
        erases: ERASES.load(Ordering::Relaxed),
        writes: WRITES.load(Ordering::Relaxed),
        written: WRITTEN.load(Ordering::Relaxed),
    }
}

/// A NOR flash over a RAM region: 4 KiB sectors, 4-byte words, any byte read.
pub struct RamFlash {
    mem: &'static mut [u8],
}

impl RamFlash {
    /// The flash over `mem`, as it holds it (nothing is erased here).
    pub fn new(mem: &'static mut [u8]) -> Self {
        RamFlash { mem }
    }

    /// The range `offset .. offset + len`, if it lies in the flash and both ends are multiples
    /// of `unit`.
    fn range(&self, offset: u32, len: usize, unit: usize) -> Result<(usize, usize), NorError> {
        let from = usize::try_from(offset).map_err(|_| NorError::OutOfBounds)?;
        let to = from.checked_add(len).ok_or(NorError::OutOfBounds)?;
        if to > self.mem.len() {
            return Err(NorError::OutOfBounds);
        }
        if !from.is_multiple_of(unit) || !len.is_multiple_of(unit) {
            return Err(NorError::NotAligned);
        }
        Ok((from, to))
    }
}

impl ErrorType for RamFlash {
    type Error = NorError;
}

impl ReadNorFlash for RamFlash {
    const READ_SIZE: usize = 1;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), NorError> {
        let (from, to) = self.range(offset, bytes.len(), Self::READ_SIZE)?;
        let stored = self.mem.get(from..to).ok_or(NorError::OutOfBounds)?;
        bytes.copy_from_slice(stored);
        Ok(())
    }

    fn capacity(&self) -> usize {
        self.mem.len()
    }
}

impl NorFlash for RamFlash {
    const WRITE_SIZE: usize = 4;
    const ERASE_SIZE: usize = 4096;

    fn erase(&mut self, from: u32, to: u32) -> Result<(), NorError> {
        let len = to.checked_sub(from).ok_or(NorError::OutOfBounds)?;
        let len = usize::try_from(len).map_err(|_| NorError::OutOfBounds)?;
        let (start, end) = self.range(from, len, Self::ERASE_SIZE)?;
        let sectors = self.mem.get_mut(start..end).ok_or(NorError::OutOfBounds)?;
        sectors.fill(0xff);
        let erased = u32::try_from(len / Self::ERASE_SIZE).unwrap_or(u32::MAX);
        ERASES.fetch_add(erased, Ordering::Relaxed);
        Ok(())
    }

    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), NorError> {
        let (from, to) = self.range(offset, bytes.len(), Self::WRITE_SIZE)?;
        let words = self.mem.get_mut(from..to).ok_or(NorError::OutOfBounds)?;
        // A NOR cell only goes from 1 to 0 when programmed.
        words.iter_mut().zip(bytes).for_each(|(m, b)| *m &= *b);
        WRITES.fetch_add(1, Ordering::Relaxed);
        WRITTEN.fetch_add(
            u32::try_from(bytes.len()).unwrap_or(u32::MAX),
            Ordering::Relaxed,
        );
        Ok(())
    }
}

impl MappedFlash for RamFlash {
    fn mapped(&self) -> &[u8] {
        self.mem
    }
}
