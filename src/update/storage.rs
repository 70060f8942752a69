//! [`UpdateFlash`]: the flash operations an update makes, written once as `async` for every kind
//! of driver, and how a slot is read. Every blocking [`MappedFlash`] is one, its slots read in
//! place; so is [`Unmapped`] over any blocking `NorFlash`, its slots read through `read` (the
//! signed prefix into a buffer lent to it, the blobs by offset: `partition::StreamedPartition`);
//! their operations are futures that are ready at once, and the blocking API drives them with
//! [`block_on`]. With feature `async`, so is `Async` over an `embedded-storage-async` flash,
//! whose API awaits them. The state machine, the checks and every write are the same code for
//! all three.

use core::fmt;
use core::future::Future;
use core::pin::pin;
use core::task::{Context, Poll, Waker};

use embedded_storage::nor_flash::NorFlash;

use super::record::Geometry;
use super::{MappedFlash, Refusal, UpdateError};
use crate::digest::SoftSha256;
use crate::partition::{
    BlobArea, CheckedPartition, Parsed, Partition, Policy, PublicKey, StreamError,
    StreamedPartition, VerifiedPartition, aligned_reads, check_blobs_of,
};

pub(crate) mod sealed {
    use crate::partition::Parsed;

    /// Only this crate's flash kinds are update flashes.
    pub trait Sealed {}

    /// Where a slot lies in the flash.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct SlotRegion {
        /// Its offset.
        pub(crate) base: u32,
        /// Its length.
        pub(crate) len: u32,
    }

    impl SlotRegion {
        /// Its bytes in the flash's mapping (empty if the layout lies beyond it, which
        /// `Slots::new` refused).
        pub(crate) fn of(self, mapped: &[u8]) -> &[u8] {
            let start = self.base as usize;
            mapped
                .get(start..start.saturating_add(self.len as usize))
                .unwrap_or(&[])
        }
    }

    /// How much of a slot a check reads.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Check {
        /// The signed prefix alone (its signature and policy), the blob area unread: an install
        /// resumed, whose blobs are not all written yet.
        Prefix,
        /// The structure (the blob area's padding too), the signature and policy: a boot.
        Signature,
        /// And every blob's stored bytes hashed against their signed digests: an install's
        /// end, a fallback, a recovery.
        Whole,
    }

    /// A slot's partition that passed a check: what lends it later without checking again.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Vetted {
        /// Its layout, lent again over its bytes.
        pub(crate) parsed: Parsed,
        /// Its security counter.
        pub(crate) security_counter: u32,
        /// Its length (`total_len`).
        pub(crate) total_len: u32,
    }
}

pub(crate) use sealed::{Check, SlotRegion, Vetted};

/// A flash the updater reads slots from and changes through its driver: every blocking
/// [`MappedFlash`] (its slots read in place), [`Unmapped`] over any blocking `NorFlash` (its
/// slots read through `read`), and (feature `async`) `Async` over an async mapped one. Sealed:
/// the three are the only kinds.
pub trait UpdateFlash: sealed::Sealed {
    /// The driver's error.
    type Error: fmt::Debug;
    /// The driver's `READ_SIZE`.
    const READ_SIZE: usize;
    /// The driver's `WRITE_SIZE`.
    const WRITE_SIZE: usize;
    /// The driver's `ERASE_SIZE`.
    const ERASE_SIZE: usize;

    /// What a boot answers: a [`VerifiedPartition`] over a mapped slot, a [`StreamedSlot`]
    /// (a [`StreamedPartition`] and the driver) over a slot read through the driver.
    type Partition<'s>
    where
        Self: 's;

    /// What a boot that hashed every blob answers: a [`CheckedPartition`] over a mapped slot
    /// (its stored blobs plain slices), a [`StreamedSlot`] over a slot read through the driver
    /// (its blobs read, and checked, again when used).
    type Checked<'s>
    where
        Self: 's;

    /// The flash's capacity in bytes (for a mapped flash, what its mapping also covers).
    fn capacity(&self) -> usize;

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

    /// The partition in `slot` checked as `check` says: its layout and counter to lend it by,
    /// or why it was refused (the outer error: the driver's, or a read outside the flash).
    #[doc(hidden)]
    fn vet(
        &mut self,
        slot: SlotRegion,
        key: &PublicKey,
        policy: &Policy,
        check: Check,
    ) -> Result<Result<Vetted, Refusal>, UpdateError<Self::Error>>;

    /// The partition `vetted` (the last slot [`vet`](Self::vet) passed, nothing written there
    /// since), with no check made again; `None` for another slot.
    #[doc(hidden)]
    fn lend(&mut self, slot: SlotRegion, vetted: &Vetted) -> Option<Self::Partition<'_>>;

    /// [`lend`](Self::lend) for a slot vetted [`Check::Whole`].
    #[doc(hidden)]
    fn lend_checked(&mut self, slot: SlotRegion, vetted: &Vetted) -> Option<Self::Checked<'_>>;

    /// The partition `vetted`, parsed (as [`lend`](Self::lend); after [`Check::Prefix`], its
    /// signed prefix alone).
    #[doc(hidden)]
    fn lend_parsed(&self, slot: SlotRegion, vetted: &Vetted) -> Option<Partition<'_>>;
}

/// A blocking update flash: the blocking API (`Slots::boot`, `install`, ...) is theirs. Every
/// [`MappedFlash`] and every [`Unmapped`]; sealed.
pub trait BlockingFlash: UpdateFlash {}

impl<F: MappedFlash> BlockingFlash for F {}
impl<F: NorFlash> BlockingFlash for Unmapped<'_, F> {}

/// [`UpdateFlash::vet`] over a flash's mapping (or a host's image of one).
pub(crate) fn vet_mapped(
    mapped: &[u8],
    slot: SlotRegion,
    key: &PublicKey,
    policy: &Policy,
    check: Check,
) -> Result<Vetted, Refusal> {
    let bytes = slot.of(mapped);
    let p = match check {
        Check::Prefix => Partition::parse_prefix(bytes)?,
        Check::Signature | Check::Whole => Partition::parse(bytes)?,
    };
    let vetted = vetted(p, key, policy)?;
    if check == Check::Whole {
        (p.untrusted_tables()).check_stored_digests(&mut SoftSha256::new())?;
    }
    Ok(vetted)
}

/// The partition `vetted` in `slot` of a flash's mapping, parsed (no check made again).
fn lent<'m>(mapped: &'m [u8], slot: SlotRegion, vetted: &Vetted) -> Option<Partition<'m>> {
    vetted.parsed.lend(slot.of(mapped))
}

/// The signature and policy of the parsed `p` (the one place a slot's are checked), and what
/// lends it again.
fn vetted(p: Partition<'_>, key: &PublicKey, policy: &Policy) -> Result<Vetted, Refusal> {
    p.check_signature(key)?;
    p.check_policy(policy)?;
    Ok(Vetted {
        parsed: p.parsed(),
        security_counter: p.security_counter(),
        total_len: u32::try_from(p.total_len()).unwrap_or(u32::MAX),
    })
}

impl<F: MappedFlash> sealed::Sealed for F {}

impl<F: MappedFlash> UpdateFlash for F {
    type Error = F::Error;
    const READ_SIZE: usize = F::READ_SIZE;
    const WRITE_SIZE: usize = F::WRITE_SIZE;
    const ERASE_SIZE: usize = F::ERASE_SIZE;
    type Partition<'s>
        = VerifiedPartition<'s>
    where
        Self: 's;
    type Checked<'s>
        = CheckedPartition<'s>
    where
        Self: 's;

    fn capacity(&self) -> usize {
        embedded_storage::nor_flash::ReadNorFlash::capacity(self).min(F::mapped(self).len())
    }

    fn vet(
        &mut self,
        slot: SlotRegion,
        key: &PublicKey,
        policy: &Policy,
        check: Check,
    ) -> Result<Result<Vetted, Refusal>, UpdateError<F::Error>> {
        Ok(vet_mapped(F::mapped(self), slot, key, policy, check))
    }

    fn lend(&mut self, slot: SlotRegion, vetted: &Vetted) -> Option<VerifiedPartition<'_>> {
        lent(F::mapped(self), slot, vetted).map(Partition::vouched)
    }

    fn lend_checked(&mut self, slot: SlotRegion, vetted: &Vetted) -> Option<CheckedPartition<'_>> {
        lent(F::mapped(self), slot, vetted).map(Partition::vouched_checked)
    }

    fn lend_parsed(&self, slot: SlotRegion, vetted: &Vetted) -> Option<Partition<'_>> {
        lent(F::mapped(self), slot, vetted)
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
    type Partition<'s>
        = VerifiedPartition<'s>
    where
        Self: 's;
    type Checked<'s>
        = CheckedPartition<'s>
    where
        Self: 's;

    fn capacity(&self) -> usize {
        embedded_storage_async::nor_flash::ReadNorFlash::capacity(&self.0)
            .min(self.0.mapped().len())
    }

    fn vet(
        &mut self,
        slot: SlotRegion,
        key: &PublicKey,
        policy: &Policy,
        check: Check,
    ) -> Result<Result<Vetted, Refusal>, UpdateError<F::Error>> {
        Ok(vet_mapped(self.0.mapped(), slot, key, policy, check))
    }

    fn lend(&mut self, slot: SlotRegion, vetted: &Vetted) -> Option<VerifiedPartition<'_>> {
        lent(self.0.mapped(), slot, vetted).map(Partition::vouched)
    }

    fn lend_checked(&mut self, slot: SlotRegion, vetted: &Vetted) -> Option<CheckedPartition<'_>> {
        lent(self.0.mapped(), slot, vetted).map(Partition::vouched_checked)
    }

    fn lend_parsed(&self, slot: SlotRegion, vetted: &Vetted) -> Option<Partition<'_>> {
        lent(self.0.mapped(), slot, vetted)
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

/// A NOR flash the CPU cannot read memory-mapped (a SPI NOR on a bus, no execute-in-place), as
/// an update flash: `Slots::new(Unmapped::new(flash, &mut prefix), config)`. Every read of a
/// slot goes through `ReadNorFlash::read`: the signed prefix of the slot being checked into
/// `prefix`, which must hold the longest partition's (`blobs_off`: 16,816 bytes for the
/// vendor's full set, 7,856 for the front set; a longer one is refused,
/// [`Refusal::PrefixBuffer`]), and the blobs by offset, 256 bytes at a time. A boot answers a
/// [`StreamedSlot`]: the [`StreamedPartition`] over that buffer, and the driver its blobs are
/// read through when used.
pub struct Unmapped<'b, F> {
    flash: F,
    prefix: &'b mut [u8],
    /// The slot whose signed prefix `prefix` holds, as its last check found it.
    held: Option<(SlotRegion, Parsed)>,
}

impl<F> fmt::Debug for Unmapped<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Unmapped")
            .field("prefix", &self.prefix.len())
            .finish_non_exhaustive()
    }
}

impl<'b, F: NorFlash> Unmapped<'b, F> {
    /// `flash`, its slots read through `read`, the signed prefix of each into `prefix`.
    pub fn new(flash: F, prefix: &'b mut [u8]) -> Self {
        Self {
            flash,
            prefix,
            held: None,
        }
    }

    /// The driver.
    pub fn driver(&self) -> &F {
        &self.flash
    }

    /// The driver, to use between the updater's operations (a blob read through it needs no
    /// more than the [`StreamedSlot`] a boot gives).
    pub fn driver_mut(&mut self) -> &mut F {
        &mut self.flash
    }

    /// The driver and the prefix buffer, given back.
    pub fn into_parts(self) -> (F, &'b mut [u8]) {
        (self.flash, self.prefix)
    }
}

/// What a boot of an [`Unmapped`] flash answers: the slot's partition, its signed prefix in the
/// buffer lent to the flash, and the driver its blobs are read through, both borrowed from the
/// `Slots` until the boot is dropped:
/// `boot.partition.partition.get_memory_image(..)?.load_into(boot.partition.flash, ..)`.
#[derive(Debug)]
pub struct StreamedSlot<'s, F> {
    /// The partition: signature and policy checked.
    pub partition: StreamedPartition<'s>,
    /// The driver, to read its blobs.
    pub flash: &'s mut F,
}

impl<F: NorFlash> sealed::Sealed for Unmapped<'_, F> {}

impl<F: NorFlash> UpdateFlash for Unmapped<'_, F> {
    type Error = F::Error;
    const READ_SIZE: usize = F::READ_SIZE;
    const WRITE_SIZE: usize = F::WRITE_SIZE;
    const ERASE_SIZE: usize = F::ERASE_SIZE;
    type Partition<'s>
        = StreamedSlot<'s, F>
    where
        Self: 's;
    type Checked<'s>
        = StreamedSlot<'s, F>
    where
        Self: 's;

    fn capacity(&self) -> usize {
        self.flash.capacity()
    }

    fn read(
        &mut self,
        offset: u32,
        bytes: &mut [u8],
    ) -> impl Future<Output = Result<(), Self::Error>> {
        core::future::ready(self.flash.read(offset, bytes))
    }

    fn write(
        &mut self,
        offset: u32,
        bytes: &[u8],
    ) -> impl Future<Output = Result<(), Self::Error>> {
        core::future::ready(self.flash.write(offset, bytes))
    }

    fn erase(&mut self, from: u32, to: u32) -> impl Future<Output = Result<(), Self::Error>> {
        core::future::ready(self.flash.erase(from, to))
    }

    fn vet(
        &mut self,
        slot: SlotRegion,
        key: &PublicKey,
        policy: &Policy,
        check: Check,
    ) -> Result<Result<Vetted, Refusal>, UpdateError<F::Error>> {
        let Unmapped {
            flash,
            prefix,
            held,
        } = self;
        *held = None;
        let area = match check {
            Check::Prefix => BlobArea::Unwritten,
            Check::Signature | Check::Whole => BlobArea::Written,
        };
        let len = slot.len as usize;
        let p = match StreamedPartition::parse(flash, slot.base, len, prefix, area) {
            Ok(p) => p,
            Err(e) => return stream_failure(e),
        };
        let vetted = match vetted(p, key, policy) {
            Ok(v) => v,
            Err(refusal) => return Ok(Err(refusal)),
        };
        if check == Check::Whole
            && let Err(e) = check_blobs_of(&p, slot.base, flash, &mut SoftSha256::new())
        {
            return stream_failure(e);
        }
        *held = Some((slot, vetted.parsed));
        Ok(Ok(vetted))
    }

    fn lend(&mut self, slot: SlotRegion, vetted: &Vetted) -> Option<StreamedSlot<'_, F>> {
        if self.held != Some((slot, vetted.parsed)) {
            return None;
        }
        let p = vetted.parsed.lend(self.prefix)?;
        Some(StreamedSlot {
            partition: StreamedPartition::vouched(p, slot.base),
            flash: &mut self.flash,
        })
    }

    fn lend_checked(&mut self, slot: SlotRegion, vetted: &Vetted) -> Option<StreamedSlot<'_, F>> {
        self.lend(slot, vetted)
    }

    fn lend_parsed(&self, slot: SlotRegion, vetted: &Vetted) -> Option<Partition<'_>> {
        if self.held != Some((slot, vetted.parsed)) {
            return None;
        }
        vetted.parsed.lend(self.prefix)
    }
}

/// A read through the driver that failed or was refused, as [`UpdateFlash::vet`] says it.
fn stream_failure<T, E>(e: StreamError<E>) -> Result<Result<T, Refusal>, UpdateError<E>> {
    match e {
        StreamError::Read(e) => Err(UpdateError::Flash(e)),
        StreamError::OutOfRange => Err(UpdateError::Geometry("a slot read outside the flash")),
        StreamError::Refused(refusal) => Ok(Err(refusal)),
    }
}

/// Gives `each` the `len` bytes at `offset` of `flash`, in order, read through its driver in
/// aligned pieces of at most 256 bytes (`READ_SIZE` divides 256: `Geometry::records`). The
/// updater's one read of slot bytes (a copy, a check, a digest), for every kind of flash.
pub(crate) async fn read_pieces<F: UpdateFlash>(
    flash: &mut F,
    offset: u32,
    len: usize,
    mut each: impl FnMut(&[u8]),
) -> Result<(), UpdateError<F::Error>> {
    const PIECE: usize = 256;
    let outside = || UpdateError::Geometry("a slot read outside the flash");
    let start = offset as usize;
    let end = start.checked_add(len).ok_or_else(outside)?;
    let reads =
        aligned_reads(start..end, F::READ_SIZE, PIECE, flash.capacity()).ok_or_else(outside)?;
    let mut buf = [0u8; PIECE];
    for read in reads {
        let piece = buf.get_mut(..read.len).ok_or_else(outside)?;
        let at = u32::try_from(read.at).map_err(|_| outside())?;
        flash.read(at, piece).await.map_err(UpdateError::Flash)?;
        if let Some(kept) = piece.get(read.keep) {
            each(kept);
        }
    }
    Ok(())
}
