//! A NOR flash in memory for tests (feature `mem-flash`, which needs `alloc`), with a NOR
//! flash's rules enforced rather than assumed: erased bytes read `0xff`; a write only clears
//! bits and must find every word it writes erased (no word written twice between erases); reads
//! and writes aligned to `READ_SIZE` and `WRITE_SIZE`, erases to `ERASE_SIZE`; nothing beyond
//! the capacity. A breach is a typed error, never a silent success: the core never asks for
//! one, and a test that sees one has found a fault.
//!
//! Every erase and write is journaled ([`MemFlash::journal`]), so that a test can cut the
//! power at each of them afterwards ([`each_cut`]): the operations before the cut done, the
//! one in progress **torn** (an erase leaves a random part of its bytes `0xff` and the others
//! as they were; a write clears a random part of the bits it would have cleared), none after
//! it. [`MemFlash::fail_from`] makes the driver itself fail from an operation on.
//!
//! ```
//! # use embedded_storage::nor_flash::{NorFlash, ReadNorFlash};
//! # use nrtucode::update::mem_flash::{MemFlash, MemFlashError};
//! // QSPI NOR: 1-byte reads, 4-byte writes, 4 KiB sectors.
//! let mut flash = MemFlash::<1, 4, 4096>::erased(8192);
//! flash.write(0, &[0x0f, 0xff, 0x00, 0xaa]).unwrap();
//! assert_eq!(flash.write(0, &[0; 4]), Err(MemFlashError::NotErased));
//! assert_eq!(flash.write(2, &[0; 4]), Err(MemFlashError::NotAligned));
//! flash.erase(0, 4096).unwrap();
//! assert_eq!(&flash.bytes()[..4], &[0xff; 4]);
//! assert_eq!(flash.journal().len(), 2);
//! ```

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use embedded_storage::nor_flash::{
    ErrorType, NorFlash, NorFlashError, NorFlashErrorKind, ReadNorFlash,
};

use super::MappedFlash;

/// Why a [`MemFlash`] refused an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemFlashError {
    /// Beyond the capacity, or a range that ends before it starts.
    OutOfBounds,
    /// Not aligned to `READ_SIZE`, `WRITE_SIZE` or `ERASE_SIZE`.
    NotAligned,
    /// A word written twice without an erase between.
    NotErased,
    /// The power is off ([`MemFlash::fail_from`]): nothing was done.
    PowerOff,
}

impl NorFlashError for MemFlashError {
    fn kind(&self) -> NorFlashErrorKind {
        match self {
            MemFlashError::OutOfBounds => NorFlashErrorKind::OutOfBounds,
            MemFlashError::NotAligned => NorFlashErrorKind::NotAligned,
            MemFlashError::NotErased | MemFlashError::PowerOff => NorFlashErrorKind::Other,
        }
    }
}

impl fmt::Display for MemFlashError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemFlashError::OutOfBounds => "beyond the flash",
            MemFlashError::NotAligned => "not aligned to the flash's geometry",
            MemFlashError::NotErased => "a word written twice without an erase",
            MemFlashError::PowerOff => "the power is off",
        })
    }
}

impl core::error::Error for MemFlashError {}

/// An erase or a write, as the journal records it (offsets from the flash's start).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `from..to` erased.
    Erase {
        /// The first byte.
        from: usize,
        /// One past the last.
        to: usize,
    },
    /// `bytes` written at `at`.
    Write {
        /// The first byte.
        at: usize,
        /// What was written.
        bytes: Vec<u8>,
    },
}

impl Op {
    /// The first byte the operation changes.
    pub fn start(&self) -> usize {
        match self {
            Op::Erase { from, .. } => *from,
            Op::Write { at, .. } => *at,
        }
    }

    /// `mem` after the operation completed.
    pub fn apply(&self, mem: &mut [u8]) {
        match self {
            Op::Erase { from, to } => {
                if let Some(range) = mem.get_mut(*from..*to) {
                    range.fill(0xff);
                }
            }
            Op::Write { at, bytes } => {
                let words = mem.get_mut(*at..).unwrap_or_default();
                words.iter_mut().zip(bytes).for_each(|(m, b)| *m &= *b);
            }
        }
    }

    /// `mem` after the operation was cut by a power loss while in progress, torn as `seed`
    /// says: an erase leaves a random part of its bytes `0xff` and the others as they were; a
    /// write clears a random part of the bits it would have cleared (a NOR write only ever
    /// clears bits).
    pub fn tear(&self, mem: &mut [u8], seed: u64) {
        let mut rng = Rng::new(seed);
        match self {
            Op::Erase { from, to } => {
                let range = mem.get_mut(*from..*to).unwrap_or_default();
                range
                    .iter_mut()
                    .filter(|_| rng.next() & 1 == 0)
                    .for_each(|b| *b = 0xff);
            }
            Op::Write { at, bytes } => {
                let words = mem.get_mut(*at..).unwrap_or_default();
                words
                    .iter_mut()
                    .zip(bytes)
                    .for_each(|(m, b)| *m &= !(!*b & rng.next().to_le_bytes()[0]));
            }
        }
    }
}

/// Every power cut of the operations `journal` does on `before`: `at_cut(n, mem)` with the
/// memory each cut leaves, in order (operations `0..n` done, operation `n` torn with a seed
/// derived from `seed` and `n`, none after it). Exact for a deterministic program: its
/// operations up to a cut are those of the uncut run, having read the same bytes.
pub fn each_cut(before: &[u8], journal: &[Op], seed: u64, mut at_cut: impl FnMut(usize, Vec<u8>)) {
    let mut mem = before.to_vec();
    for (n, op) in journal.iter().enumerate() {
        let mut torn = mem.clone();
        let n64 = u64::try_from(n).unwrap_or(u64::MAX);
        op.tear(&mut torn, seed ^ n64.wrapping_shl(20));
        at_cut(n, torn);
        op.apply(&mut mem);
    }
}

/// A small deterministic generator (xorshift64*) for the torn states.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// A NOR flash of `bytes().len()` bytes in memory: `R`-byte reads, `W`-byte writes, `E`-byte
/// erases, every erase and write journaled (module docs).
#[derive(Clone, PartialEq, Eq)]
pub struct MemFlash<const R: usize, const W: usize, const E: usize> {
    mem: Vec<u8>,
    journal: Vec<Op>,
    fail_from: Option<usize>,
}

impl<const R: usize, const W: usize, const E: usize> MemFlash<R, W, E> {
    /// A flash holding `mem` (its length the capacity).
    pub fn new(mem: Vec<u8>) -> Self {
        MemFlash {
            mem,
            journal: Vec::new(),
            fail_from: None,
        }
    }

    /// A flash of `len` erased bytes.
    pub fn erased(len: usize) -> Self {
        Self::new(vec![0xff; len])
    }

    /// The flash's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.mem
    }

    /// The flash's bytes, to change behind the driver's back (bit rot, a damaged byte).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.mem
    }

    /// The flash's bytes, given back.
    pub fn into_bytes(self) -> Vec<u8> {
        self.mem
    }

    /// Every erase and write done so far, in order.
    pub fn journal(&self) -> &[Op] {
        &self.journal
    }

    /// From the `n`th operation of the journal on (`Some(journal().len())`: the next one),
    /// every erase and write fails with [`MemFlashError::PowerOff`], doing nothing; `None`
    /// restores the power.
    pub fn fail_from(&mut self, n: Option<usize>) {
        self.fail_from = n;
    }

    /// `offset..offset + len` if it lies in the flash and is `align`-aligned.
    fn range(
        &self,
        offset: u32,
        len: usize,
        align: usize,
    ) -> Result<(usize, usize), MemFlashError> {
        let at = usize::try_from(offset).map_err(|_| MemFlashError::OutOfBounds)?;
        let end = (at.checked_add(len))
            .filter(|end| *end <= self.mem.len())
            .ok_or(MemFlashError::OutOfBounds)?;
        if align == 0 || at % align != 0 || len % align != 0 {
            return Err(MemFlashError::NotAligned);
        }
        Ok((at, end))
    }

    fn record(&mut self, op: Op) -> Result<(), MemFlashError> {
        if self.fail_from.is_some_and(|n| self.journal.len() >= n) {
            return Err(MemFlashError::PowerOff);
        }
        op.apply(&mut self.mem);
        self.journal.push(op);
        Ok(())
    }
}

impl<const R: usize, const W: usize, const E: usize> From<Vec<u8>> for MemFlash<R, W, E> {
    fn from(mem: Vec<u8>) -> Self {
        Self::new(mem)
    }
}

impl<const R: usize, const W: usize, const E: usize> fmt::Debug for MemFlash<R, W, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "MemFlash<{R}, {W}, {E}>({} bytes, {} operations)",
            self.mem.len(),
            self.journal.len()
        )
    }
}

impl<const R: usize, const W: usize, const E: usize> ErrorType for MemFlash<R, W, E> {
    type Error = MemFlashError;
}

impl<const R: usize, const W: usize, const E: usize> ReadNorFlash for MemFlash<R, W, E> {
    const READ_SIZE: usize = R;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), MemFlashError> {
        let (at, end) = self.range(offset, bytes.len(), R)?;
        let from = self.mem.get(at..end).ok_or(MemFlashError::OutOfBounds)?;
        bytes.copy_from_slice(from);
        Ok(())
    }

    fn capacity(&self) -> usize {
        self.mem.len()
    }
}

impl<const R: usize, const W: usize, const E: usize> NorFlash for MemFlash<R, W, E> {
    const WRITE_SIZE: usize = W;
    const ERASE_SIZE: usize = E;

    fn erase(&mut self, from: u32, to: u32) -> Result<(), MemFlashError> {
        let len = to.checked_sub(from).ok_or(MemFlashError::OutOfBounds)?;
        let len = usize::try_from(len).map_err(|_| MemFlashError::OutOfBounds)?;
        let (from, to) = self.range(from, len, E)?;
        self.record(Op::Erase { from, to })
    }

    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), MemFlashError> {
        let (at, end) = self.range(offset, bytes.len(), W)?;
        // A reboot can only tell a word written from one erased by its bits, so a word whose
        // interrupted write cleared no bit counts as erased (as on a NOR flash without ECC).
        let words = self.mem.get(at..end).ok_or(MemFlashError::OutOfBounds)?;
        if words.iter().any(|b| *b != 0xff) {
            return Err(MemFlashError::NotErased);
        }
        self.record(Op::Write {
            at,
            bytes: bytes.to_vec(),
        })
    }
}

impl<const R: usize, const W: usize, const E: usize> MappedFlash for MemFlash<R, W, E> {
    fn mapped(&self) -> &[u8] {
        &self.mem
    }
}
