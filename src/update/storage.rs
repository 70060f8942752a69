//! [`UpdateFlash`]: the flash operations an update makes, written once as `async` for both kinds
//! of driver. Every blocking [`MappedFlash`] is one (its operations are futures that are ready
//! at once, and the blocking API drives them with [`block_on`]); with feature `async`, so is
//! `Async` over an `embedded-storage-async` flash, whose API awaits them. The state machine,
//! the checks and every write are the same code either way.

use core::fmt;
use core::future::Future;
use core::pin::pin;
use core::task::{Context, Poll, Waker};

use super::MappedFlash;
use super::record::Geometry;

mod sealed {
    /// Only this crate's flash kinds are update flashes.
    pub trait Sealed {}
}

/// A flash the updater reads through its mapping and changes through its driver: every
/// blocking [`MappedFlash`], and (feature `async`) `Async` over an async one. Sealed: the two
/// are the only kinds.
pub trait UpdateFlash: sealed::Sealed {
    /// The driver's error.
    type Error: fmt::Debug;
    /// The driver's `READ_SIZE`.
    const READ_SIZE: usize;
    /// The driver's `WRITE_SIZE`.
    const WRITE_SIZE: usize;
    /// The driver's `ERASE_SIZE`.
    const ERASE_SIZE: usize;

    /// The flash's capacity in bytes.
    fn capacity(&self) -> usize;

    /// The flash's bytes from offset 0, as the CPU reads them ([`MappedFlash::mapped`]).
    fn mapped(&self) -> &[u8];

    /// Reads `bytes.len()` bytes at `offset`.
    fn read(
        &mut self,
        offset: u32,
        bytes: &mut [u8],
    ) -> impl Future<Output = Result<(), Self::Error>>;

    /// Writes `bytes` at `offset`.
    fn write(&mut self, offset: u32, bytes: &[u8])
    -> impl Future<Output = Result<(), Self::Error>>;

    /// Erases `from..to`.
    fn erase(&mut self, from: u32, to: u32) -> impl Future<Output = Result<(), Self::Error>>;
}

impl<F: MappedFlash> sealed::Sealed for F {}

impl<F: MappedFlash> UpdateFlash for F {
    type Error = F::Error;
    const READ_SIZE: usize = F::READ_SIZE;
    const WRITE_SIZE: usize = F::WRITE_SIZE;
    const ERASE_SIZE: usize = F::ERASE_SIZE;

    fn capacity(&self) -> usize {
        embedded_storage::nor_flash::ReadNorFlash::capacity(self)
    }

    fn mapped(&self) -> &[u8] {
        MappedFlash::mapped(self)
    }

    fn read(
        &mut self,
        offset: u32,
        bytes: &mut [u8],
    ) -> impl Future<Output = Result<(), Self::Error>> {
        core::future::ready(embedded_storage::nor_flash::ReadNorFlash::read(
            self, offset, bytes,
        ))
    }

    fn write(
        &mut self,
        offset: u32,
        bytes: &[u8],
    ) -> impl Future<Output = Result<(), Self::Error>> {
        core::future::ready(embedded_storage::nor_flash::NorFlash::write(
            self, offset, bytes,
        ))
    }

    fn erase(&mut self, from: u32, to: u32) -> impl Future<Output = Result<(), Self::Error>> {
        core::future::ready(embedded_storage::nor_flash::NorFlash::erase(self, from, to))
    }
}

/// The geometry of an update flash.
pub(crate) const fn geometry<F: UpdateFlash>() -> Geometry {
    Geometry {
        read_size: F::READ_SIZE,
        write_size: F::WRITE_SIZE,
        erase_size: F::ERASE_SIZE,
    }
}

/// Runs `future` to its end on the caller's stack, polling it with a waker that does nothing.
/// The blocking API's futures are made of the blocking driver's operations, each ready when it
/// is first polled (`core::future::ready`), so the first poll completes: the loop is never
/// taken again. No allocation, no panic.
pub(crate) fn block_on<T>(future: impl Future<Output = T>) -> T {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
    }
}

/// A flash with an async driver (`embedded-storage-async`) whose bytes the CPU also reads
/// memory-mapped, as [`MappedFlash`] is for a blocking one (the same contract: the slice is
/// borrowed from the flash, and a write is visible in it before the write's future completes).
#[cfg(feature = "async")]
pub trait AsyncMappedFlash: embedded_storage_async::nor_flash::NorFlash {
    /// The flash's bytes from offset 0, at least `capacity` of them.
    fn mapped(&self) -> &[u8];
}

/// An async flash as the updater's: `Slots::new(Async(flash), config)` gives the async API
/// (feature `async`).
#[cfg(feature = "async")]
#[derive(Debug)]
pub struct Async<F>(pub F);

#[cfg(feature = "async")]
impl<F: AsyncMappedFlash> sealed::Sealed for Async<F> {}

#[cfg(feature = "async")]
impl<F: AsyncMappedFlash> UpdateFlash for Async<F> {
    type Error = F::Error;
    const READ_SIZE: usize = F::READ_SIZE;
    const WRITE_SIZE: usize = F::WRITE_SIZE;
    const ERASE_SIZE: usize = F::ERASE_SIZE;

    fn capacity(&self) -> usize {
        embedded_storage_async::nor_flash::ReadNorFlash::capacity(&self.0)
    }

    fn mapped(&self) -> &[u8] {
        self.0.mapped()
    }

    fn read(
        &mut self,
        offset: u32,
        bytes: &mut [u8],
    ) -> impl Future<Output = Result<(), Self::Error>> {
        embedded_storage_async::nor_flash::ReadNorFlash::read(&mut self.0, offset, bytes)
    }

    fn write(
        &mut self,
        offset: u32,
        bytes: &[u8],
    ) -> impl Future<Output = Result<(), Self::Error>> {
        embedded_storage_async::nor_flash::NorFlash::write(&mut self.0, offset, bytes)
    }

    fn erase(&mut self, from: u32, to: u32) -> impl Future<Output = Result<(), Self::Error>> {
        embedded_storage_async::nor_flash::NorFlash::erase(&mut self.0, from, to)
    }
}
