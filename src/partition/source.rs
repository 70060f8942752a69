//! [`ByteSource`]: where the steps that read a partition's blob area take its bytes from, by
//! offset: the parser's padding check, the whole-partition check, and a stored blob's check and
//! load.
//!
//! The signed prefix (header, tables, table of contents, signature block) is parsed and
//! verified on its own, with the partition's total length beside it (`Partition::parse` reads
//! the header, then the prefix, and the padding after each blob through a source), so a reader
//! can hold the prefix in RAM and read the blobs by offset. Today the source is the partition's
//! slice, read in place (one piece, nothing copied). `FlashSource` (feature `update`) reads the
//! same bytes through `ReadNorFlash::read` into a buffer of its own, aligned to the flash's read
//! size: how a slot on a flash that is not memory-mapped is read
//! ([`StreamedPartition`](super::StreamedPartition)).

use super::entry::{BlobId, Codec};
use super::error::{FormatError, LoadError};
use crate::digest::{Sha256Hasher, copy_hashing};

/// Bytes read by offset, in pieces.
pub(crate) trait ByteSource {
    /// Why a read failed.
    type Error;

    /// Gives `each` the `len` bytes at `offset`, in order, in one or more pieces. On an error
    /// some pieces may have been given already: a caller trusts nothing of a failed read.
    fn read_pieces(
        &mut self,
        offset: usize,
        len: usize,
        each: impl FnMut(&[u8]),
    ) -> Result<(), Self::Error>;
}

/// A slice read in place: one piece, nothing copied. Past its end: `Truncated`.
impl ByteSource for &[u8] {
    type Error = FormatError;

    fn read_pieces(
        &mut self,
        offset: usize,
        len: usize,
        mut each: impl FnMut(&[u8]),
    ) -> Result<(), FormatError> {
        let truncated = FormatError::Truncated {
            needed: offset.saturating_add(len),
            available: self.len(),
        };
        let end = offset.checked_add(len).ok_or(truncated)?;
        each(self.get(offset..end).ok_or(truncated)?);
        Ok(())
    }
}

/// The blob area of a partition still being written (an install resumed): every byte reads as
/// zero, so a parse of its signed prefix passes the padding checks it cannot make yet. The
/// blobs and their padding are checked as the resumed install reads them, and the whole
/// partition at its end.
#[cfg(feature = "update")]
pub(crate) struct Unwritten;

#[cfg(feature = "update")]
impl ByteSource for Unwritten {
    type Error = FormatError;

    fn read_pieces(
        &mut self,
        _offset: usize,
        len: usize,
        mut each: impl FnMut(&[u8]),
    ) -> Result<(), FormatError> {
        let zeros = [0u8; 16];
        let mut left = len;
        while left > 0 {
            let n = left.min(zeros.len());
            each(zeros.get(..n).unwrap_or(&[]));
            left -= n;
        }
        Ok(())
    }
}

/// A partition at `base` of a flash, read through `ReadNorFlash::read` into a buffer of `N`
/// bytes (a multiple of the flash's `READ_SIZE`): each read is aligned to `READ_SIZE` and the
/// bytes outside the range asked for are not given.
#[cfg(feature = "update")]
pub(crate) struct FlashSource<'f, F, const N: usize> {
    flash: &'f mut F,
    base: u32,
    buf: [u8; N],
}

/// Why a `FlashSource` read failed.
#[cfg(feature = "update")]
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FlashReadError<E> {
    /// The range is not inside the flash (or the buffer is not a multiple of `READ_SIZE`).
    OutOfRange,
    /// The driver's own failure.
    Driver(E),
}

#[cfg(feature = "update")]
impl<'f, F: embedded_storage::nor_flash::ReadNorFlash, const N: usize> FlashSource<'f, F, N> {
    /// The partition at `base` of `flash`.
    pub(crate) fn new(flash: &'f mut F, base: u32) -> Self {
        Self {
            flash,
            base,
            buf: [0; N],
        }
    }
}

#[cfg(feature = "update")]
impl<F: embedded_storage::nor_flash::ReadNorFlash, const N: usize> ByteSource
    for FlashSource<'_, F, N>
{
    type Error = FlashReadError<F::Error>;

    fn read_pieces(
        &mut self,
        offset: usize,
        len: usize,
        mut each: impl FnMut(&[u8]),
    ) -> Result<(), Self::Error> {
        if len == 0 {
            return Ok(());
        }
        let unit = F::READ_SIZE.max(1);
        if N == 0 || N % unit != 0 {
            return Err(FlashReadError::OutOfRange);
        }
        let start = usize::try_from(self.base)
            .ok()
            .and_then(|base| base.checked_add(offset))
            .ok_or(FlashReadError::OutOfRange)?;
        let end = start.checked_add(len).ok_or(FlashReadError::OutOfRange)?;
        let reads = aligned_reads(start..end, unit, N, self.flash.capacity())
            .ok_or(FlashReadError::OutOfRange)?;
        for read in reads {
            let buf = self
                .buf
                .get_mut(..read.len)
                .ok_or(FlashReadError::OutOfRange)?;
            let from = u32::try_from(read.at).map_err(|_| FlashReadError::OutOfRange)?;
            self.flash.read(from, buf).map_err(FlashReadError::Driver)?;
            match buf.get(read.keep) {
                Some(piece) if !piece.is_empty() => each(piece),
                _ => {}
            }
        }
        Ok(())
    }
}

/// One read of [`aligned_reads`].
#[cfg(feature = "update")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AlignedRead {
    /// Its flash offset (a multiple of the read unit).
    pub(crate) at: usize,
    /// Its length (a multiple of the read unit, at most the buffer).
    pub(crate) len: usize,
    /// The part of it inside the range asked for.
    pub(crate) keep: core::ops::Range<usize>,
}

/// The reads that give the flash bytes `range` through a buffer of `buf` bytes, on a flash of
/// `capacity` bytes read in units of `unit`: whole units around the range, each read at most
/// `buf`, in order. `None` when a read would leave the flash or `buf` is not a whole number of
/// units. The one read plan of every read through a driver (the partition's blob area, the
/// updater's copies and checks).
#[cfg(feature = "update")]
pub(crate) fn aligned_reads(
    range: core::ops::Range<usize>,
    unit: usize,
    buf: usize,
    capacity: usize,
) -> Option<impl Iterator<Item = AlignedRead>> {
    let unit = unit.max(1);
    if buf == 0 || buf % unit != 0 {
        return None;
    }
    let (start, end) = (range.start, range.end.max(range.start));
    let first = start - start % unit;
    let stop = end
        .checked_next_multiple_of(unit)
        .filter(|&stop| stop <= capacity)?;
    Some((first..stop).step_by(buf).map(move |at| {
        let len = (stop - at).min(buf);
        let keep = start.saturating_sub(at).min(len)..end.saturating_sub(at).min(len);
        AlignedRead { at, len, keep }
    }))
}

/// Why a check that reads through a [`ByteSource`] failed: the bytes could not be read, or
/// they are not the signed ones.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum CheckFailure<E> {
    /// The source could not give `blob`'s bytes.
    Read {
        /// The blob being read.
        blob: BlobId,
        /// The source's error.
        error: E,
    },
    /// The bytes were read and refused.
    Refused(LoadError),
}

impl<E> CheckFailure<E> {
    /// As a [`LoadError`], for a source that cannot fail once parse has checked its bounds (a
    /// partition's own slice): a read failure refuses the blob as a mismatch would.
    pub(crate) fn into_load_error(self) -> LoadError {
        match self {
            CheckFailure::Read { blob, .. } => LoadError::DigestMismatch { blob },
            CheckFailure::Refused(e) => e,
        }
    }
}

/// The bytes `at` of `source` (a blob's stored bytes: the whole blob's, or a compressed one's
/// stream) hashed with `hasher` and compared with `expected`, the signed digest of the stored
/// bytes: a stored blob's mismatch is [`LoadError::DigestMismatch`], a stream's
/// [`LoadError::StoredDigestMismatch`]. The one hash of stored bytes every check makes.
pub(crate) fn check_stored<S: ByteSource, H: Sha256Hasher + ?Sized>(
    source: &mut S,
    at: core::ops::Range<usize>,
    blob: BlobId,
    codec: Codec,
    expected: &[u8; 32],
    hasher: &mut H,
) -> Result<(), CheckFailure<S::Error>> {
    hasher.reset();
    source
        .read_pieces(at.start, at.len(), |piece| hasher.update(piece))
        .map_err(|error| CheckFailure::Read { blob, error })?;
    if hasher.finish() == *expected {
        Ok(())
    } else if codec == Codec::Stored {
        Err(CheckFailure::Refused(LoadError::DigestMismatch { blob }))
    } else {
        Err(CheckFailure::Refused(LoadError::StoredDigestMismatch {
            blob,
        }))
    }
}

/// The stored blob `blob` (the bytes `at` of `source`) copied into `out`, which is exactly
/// `at.len()` bytes, hashing what was written and comparing it with `expected`, the signed
/// digest of its bytes. On any failure `out` is zeroed: nothing unvouched is left in it. The one
/// copy of a stored blob every load makes.
pub(crate) fn load_stored<S: ByteSource, H: Sha256Hasher + ?Sized>(
    source: &mut S,
    at: core::ops::Range<usize>,
    blob: BlobId,
    out: &mut [u8],
    expected: &[u8; 32],
    hasher: &mut H,
) -> Result<(), CheckFailure<S::Error>> {
    hasher.reset();
    let mut rest = &mut *out;
    let mut fits = true;
    let read = source.read_pieces(at.start, at.len(), |piece| {
        let copied = copy_hashing(piece, rest, hasher);
        fits &= copied == piece.len();
        let after = core::mem::take(&mut rest).split_at_mut_checked(copied);
        rest = after.map(|(_, tail)| tail).unwrap_or_default();
    });
    let outcome = match read {
        Err(error) => Err(CheckFailure::Read { blob, error }),
        Ok(()) if fits && rest.is_empty() && hasher.finish() == *expected => Ok(()),
        Ok(()) => Err(CheckFailure::Refused(LoadError::DigestMismatch { blob })),
    };
    if outcome.is_err() {
        out.iter_mut().for_each(|b| *b = 0);
    }
    outcome
}

#[cfg(test)]
#[cfg(feature = "mem-flash")]
mod tests {
    //! A partition read both ways: in place from its slice, and from a flash through
    //! `ReadNorFlash::read` (its header, then its signed prefix, then its blob area by offset).
    //! The same verdicts for the intact partition and for a byte changed in a blob, in the
    //! padding after one, or in the table of contents.
    extern crate std;

    use std::string::{String, ToString};
    use std::vec::Vec;

    use embedded_storage::nor_flash::{NorFlash, ReadNorFlash};

    use super::super::format::*;
    use super::super::parse::{Head, Partition};
    use super::*;
    use crate::digest::SoftSha256;
    use crate::update::mem_flash::MemFlash;

    /// The blobs' stored lengths: shorter than a read unit, around the 16-byte alignment,
    /// longer than the test's smaller buffer.
    const LENGTHS: [usize; 6] = [1, 15, 16, 17, 100, 333];

    /// An unsigned full partition: slot 0 has one descriptor (flavor 1) naming blobs 0 to 3,
    /// slot 1 one naming blobs 4 and 5; blob `b` is `LENGTHS[b]` bytes of `b + n`, with its
    /// real digests.
    fn build() -> Vec<u8> {
        let toc = LENGTHS.len();
        let [prof_off, toc_off, _, blobs_off] = layout(2, toc).unwrap();
        let mut at = blobs_off;
        let offsets: Vec<usize> = (LENGTHS.iter())
            .map(|len| {
                let here = at;
                at = align_up(at + len).unwrap();
                here
            })
            .collect();
        let total = at;
        let mut out = std::vec![0u8; total];
        write_test_header(&mut out, total, blobs_off, 2, toc);
        let mut put = |at: usize, b: &[u8]| out[at..at + b.len()].copy_from_slice(b);
        // Slot 0: descriptor 0; slot 1: descriptor 1.
        put(SLOTS_OFF, &[0, 0, 1, 0]);
        put(SLOTS_OFF + SLOT_LEN, &[1, 0, 1, 0]);
        for (d, blobs) in [[0u8, 1, 2, 3], [4, 5, 0, 0]].iter().enumerate() {
            let at = DESCS_OFF + d * DESC_LEN;
            put(at, &1u32.to_le_bytes());
            for (r, &b) in blobs.iter().enumerate().take(4 - 2 * d) {
                put(at + 4 + r * GETTER_LEN, &[GETTER_BLOB, 0, b, 0]);
            }
        }
        let _ = prof_off; // every profiler getter NULL (zero)
        for (b, (&len, &offset)) in LENGTHS.iter().zip(&offsets).enumerate() {
            let bytes: Vec<u8> = (0..len).map(|n| (b + n) as u8).collect();
            let digest = sha256(&bytes);
            let at = toc_off + b * TOC_LEN;
            put(at + T_OFFSET, &(offset as u32).to_le_bytes());
            put(at + T_STORED_LEN, &(len as u32).to_le_bytes());
            put(at + T_DECODED_LEN, &(len as u32).to_le_bytes());
            put(at + T_SHA256, &digest);
            put(at + T_STORED_SHA256, &digest);
            put(offset, &bytes);
        }
        out
    }

    fn sha256(bytes: &[u8]) -> [u8; 32] {
        let mut hasher = SoftSha256::new();
        hasher.update(bytes);
        hasher.finish()
    }

    /// A flash with 4-byte reads and writes, holding `bytes` at `base` (any base: the flash is
    /// written whole, from 0).
    fn flash_with(bytes: &[u8], base: usize) -> MemFlash<4, 4, 4096> {
        let len = (base + bytes.len()).next_multiple_of(4096);
        let mut flash = MemFlash::<4, 4, 4096>::erased(len);
        let mut image = std::vec![0xff; len];
        image[base..base + bytes.len()].copy_from_slice(bytes);
        flash.write(0, &image).unwrap();
        flash
    }

    /// Parse and the whole check of the partition at `base`, every byte read through `read`:
    /// the header, then the signed prefix it sizes (into RAM), then the blob area by offset,
    /// in reads of at most `N` bytes. The number of blobs checked, or the refusal.
    fn through_read<const N: usize>(
        flash: &mut MemFlash<4, 4, 4096>,
        base: usize,
    ) -> Result<usize, String> {
        let available = flash.capacity() - base;
        let mut source = FlashSource::<_, N>::new(flash, base as u32);
        let mut read = |len: usize| {
            let mut bytes = Vec::with_capacity(len);
            source
                .read_pieces(0, len, |piece| bytes.extend_from_slice(piece))
                .map(|()| bytes)
        };
        let header = read(HEADER_LEN).unwrap();
        let head = Head::parse(&header, available).map_err(|e| e.to_string())?;
        let prefix = read(head.blobs_off).unwrap();
        let tables =
            Partition::parse_signed(&prefix, &head, &mut source).map_err(|e| e.to_string())?;
        let view = tables.untrusted_tables();
        (view.check_stored_digests_in(&mut source, &mut SoftSha256::new())).map_err(
            |e| match e {
                CheckFailure::Read { blob, error } => std::format!("{blob:?}: {error:?}"),
                CheckFailure::Refused(e) => e.to_string(),
            },
        )?;
        Ok(view.blob_ids().count())
    }

    /// The same steps over the slice, in place.
    fn in_place(bytes: &[u8]) -> Result<usize, String> {
        let view = Partition::parse(bytes)
            .map_err(|e| e.to_string())?
            .untrusted_tables();
        (view.check_stored_digests(&mut SoftSha256::new())).map_err(|e| e.to_string())?;
        Ok(view.blob_ids().count())
    }

    #[test]
    fn a_partition_read_through_read_by_offset_gets_the_verdicts_it_gets_in_place() {
        let bytes = build();
        let p = Partition::parse(&bytes).unwrap();
        let toc_off = p.layout.toc_off;
        let offset_of = |b: usize| {
            let at = toc_off + b * TOC_LEN + T_OFFSET;
            u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize
        };
        let cases = [
            ("intact", None),
            (
                "the last byte of blob 4",
                Some(offset_of(4) + LENGTHS[4] - 1),
            ),
            ("a byte of blob 5", Some(offset_of(5) + 200)),
            ("the padding after blob 1", Some(offset_of(1) + LENGTHS[1])),
            ("the padding after the last blob", Some(bytes.len() - 1)),
            (
                "blob 2's stored digest",
                Some(toc_off + 2 * TOC_LEN + T_STORED_SHA256),
            ),
        ];
        for (what, flip) in cases {
            let mut changed = bytes.clone();
            if let Some(at) = flip {
                changed[at] ^= 0x40;
            }
            let expected = in_place(&changed);
            match flip {
                None => assert_eq!(expected, Ok(LENGTHS.len()), "{what}"),
                Some(_) => assert!(expected.is_err(), "{what}: {expected:?}"),
            }
            // Two bases, one of them not a multiple of the 4-byte read unit, and two buffer
            // sizes: reads that start and end inside a unit, and pieces split across reads.
            for base in [0, 4096 + 13] {
                let mut flash = flash_with(&changed, base);
                assert_eq!(through_read::<8>(&mut flash, base), expected, "{what}");
                assert_eq!(through_read::<4096>(&mut flash, base), expected, "{what}");
            }
        }
    }

    #[test]
    fn a_stored_blob_loads_through_read_as_it_loads_in_place_and_a_changed_one_leaves_zeros() {
        let bytes = build();
        let view = Partition::parse(&bytes).unwrap().untrusted_tables();
        for changed_blob in [None, Some(3usize)] {
            let mut image = bytes.clone();
            if let Some(b) = changed_blob {
                let e = view.toc_entry(BlobId::new(b as u16)).unwrap();
                image[e.offset as usize] ^= 1;
            }
            let mut flash = flash_with(&image, 4096 + 5);
            let mut source = FlashSource::<_, 8>::new(&mut flash, 4096 + 5);
            for blob in view.blob_ids() {
                let e = view.toc_entry(blob).unwrap();
                let at = e.offset as usize..(e.offset + e.stored_len) as usize;
                let mut hasher = SoftSha256::new();
                let mut out = std::vec![0x5a; at.len()];
                let got = load_stored(
                    &mut source,
                    at.clone(),
                    blob,
                    &mut out,
                    &e.sha256,
                    &mut hasher,
                );
                if changed_blob == Some(blob.index()) {
                    let refused = CheckFailure::Refused(LoadError::DigestMismatch { blob });
                    assert_eq!(got, Err(refused));
                    assert!(out.iter().all(|&b| b == 0), "{blob:?} left bytes behind");
                } else {
                    assert_eq!(got, Ok(()), "{blob:?}");
                    assert_eq!(out, &bytes[at], "{blob:?}");
                }
            }
        }
    }

    #[test]
    fn the_signed_prefix_is_parsed_without_a_byte_of_the_blob_area() {
        let bytes = build();
        let head = Head::parse(&bytes, bytes.len()).unwrap();
        assert_eq!(head.total, bytes.len());
        assert!(head.blobs_off < head.total);
        // The header alone sizes the rest; a region shorter than the partition is refused.
        assert!(Head::parse(&bytes[..HEADER_LEN], bytes.len()).is_ok());
        assert!(Head::parse(&bytes[..HEADER_LEN], bytes.len() - 1).is_err());
        // The prefix alone parses, and one byte short of it is refused, never read past.
        let blobs = &mut &bytes[..];
        let tables = Partition::parse_signed(&bytes[..head.blobs_off], &head, blobs).unwrap();
        assert_eq!(tables.blob_count(), LENGTHS.len());
        assert!(Partition::parse_signed(&bytes[..head.blobs_off - 1], &head, blobs).is_err());
        // A flash read that runs past the flash is refused, not made.
        let mut flash = flash_with(&bytes, 0);
        let capacity = flash.capacity();
        let mut source = FlashSource::<_, 8>::new(&mut flash, 0);
        assert_eq!(
            source.read_pieces(capacity - 2, 4, |_| {}),
            Err(FlashReadError::OutOfRange)
        );
        let mut given = Vec::new();
        source
            .read_pieces(capacity - 11, 11, |p| given.extend_from_slice(p))
            .unwrap();
        assert_eq!(given, [0xff; 11]);
    }
}
