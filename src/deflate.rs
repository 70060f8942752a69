//! Compressed blobs (feature `deflate`): decode a raw-deflate blob (RFC 1951, no zlib or gzip
//! wrapper) into the caller's buffer while hashing what is written, as a boot loader inflates
//! and checks an image in one pass.
//!
//! [`decode_checked`] takes the stored (compressed) bytes, the decoded length and the SHA-256
//! of the **decoded** bytes, as a partition's table of contents records them, and a caller's
//! `&mut [u8]`:
//!
//! - it writes only `out[..decoded_len]`: a shorter buffer is refused before anything is
//!   written ([`DecodeError::BufferTooSmall`], with the size needed), and bytes past
//!   `decoded_len` are never touched;
//! - it hashes each step of output as it is written, so the check covers what landed in the
//!   buffer;
//! - bad compressed data, a truncated stream, a stream that decodes to another length than
//!   recorded, bytes after the final block and a digest mismatch are typed errors; on any error
//!   the bytes written so far are zeroed again, so a caller that ignores it does not load a
//!   partial image.
//!
//! The inflater is miniz_oxide's core inflater (`miniz_oxide::inflate::core`, no default
//! features: no allocation), driven with its non-wrapping output mode, so the caller's buffer
//! is also the 32 KiB history window and no separate window is needed. Its state, the Huffman
//! tables, is an [`Inflater`] of [`Inflater::SIZE`] bytes (about 11 KB) that **the caller
//! holds**: nothing here puts it on the stack behind your back. Create it once where it fits
//! (a `static` through `cortex_m::singleton!`/`static_cell`, a `Box` on a host, or `main`'s
//! stack if it is known to have the room) and pass it to every call; it carries nothing from
//! one blob to the next.
//!
//! No allocation, no `unsafe`, no panic (the link check `tests/nopanic` covers
//! [`decode_checked`] and [`decode_checked_with`]).
//!
//! ```
//! use nrtucode::deflate::{decode_checked, Inflater};
//!
//! // "firmware" as one stored deflate block (BFINAL=1, BTYPE=00, LEN, NLEN, bytes).
//! let stored = [0x01, 0x08, 0x00, 0xf7, 0xff, b'f', b'i', b'r', b'm', b'w', b'a', b'r', b'e'];
//! let sha256 = [
//!     0xc3, 0xbf, 0x47, 0xea, 0x1f, 0x4a, 0x4a, 0x60, 0x54, 0x70, 0x31, 0x3c, 0xac, 0xb3, 0xa4,
//!     0x4f, 0x4a, 0x46, 0x1f, 0x68, 0xc6, 0xfa, 0xea, 0xb0, 0x7e, 0x73, 0x76, 0x10, 0xcb, 0x5a,
//!     0xc8, 0x35,
//! ]; // SHA-256 of b"firmware"
//! let mut inflater = Box::new(Inflater::new()); // ~11 KB: not on a small stack
//! let mut device = [0u8; 64];
//! let image = decode_checked(&stored, 8, &sha256, &mut device, &mut inflater)?;
//! assert_eq!(image, b"firmware");
//! # Ok::<(), nrtucode::deflate::DecodeError>(())
//! ```

use core::fmt;

use miniz_oxide::inflate::TINFLStatus;
use miniz_oxide::inflate::core::{
    DecompressorOxide, decompress_with_limit,
    inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
};

use crate::digest::{Sha256Digest, Sha256Hasher, SoftSha256};

/// Bytes decoded, then hashed, per step: small enough to still be in cache when hashed, large
/// enough that the inflater's per-call cost (saving and restoring its state) stays small.
pub const DECODE_STEP: usize = 4096;

/// The inflater's state (Huffman tables and bit buffer): [`Inflater::SIZE`] bytes, held by the
/// caller and lent to each decode. See the [module documentation](self) for where to put it.
#[derive(Clone, Default)]
pub struct Inflater(DecompressorOxide);

impl Inflater {
    /// Its size in bytes (about 11 KB on 32- and 64-bit targets).
    pub const SIZE: usize = core::mem::size_of::<Self>();

    /// A fresh state. It is returned by value: construct it where it is to live (a `static`
    /// cell, a `Box`), not on a stack that cannot spare [`Self::SIZE`] bytes.
    pub fn new() -> Self {
        Self::default()
    }
}

impl fmt::Debug for Inflater {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Inflater")
    }
}

/// Why a compressed blob did not decode to the recorded bytes. Except for `BufferTooSmall`
/// (nothing written), the bytes written into the buffer have been zeroed again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum DecodeError {
    /// The destination is shorter than the decoded length; nothing was written.
    BufferTooSmall {
        /// Bytes needed (the decoded length).
        needed: usize,
        /// Bytes available.
        available: usize,
    },
    /// The stored bytes are not a valid raw-deflate stream (a reserved block type, a bad
    /// Huffman table, a stored block whose length check fails, a distance before the start).
    Corrupt {
        /// Stored bytes consumed when it was found.
        consumed: usize,
        /// Bytes decoded before it.
        decoded: usize,
    },
    /// The stored bytes end before the stream's final block does.
    Truncated {
        /// Bytes decoded before the input ran out.
        decoded: usize,
    },
    /// The stream decodes to more bytes than the recorded decoded length.
    TooLong {
        /// The recorded decoded length.
        expected: usize,
    },
    /// The stream ends after fewer bytes than the recorded decoded length.
    TooShort {
        /// The recorded decoded length.
        expected: usize,
        /// Bytes it decoded to.
        decoded: usize,
    },
    /// Stored bytes follow the stream's final block.
    TrailingBytes {
        /// How many.
        count: usize,
    },
    /// The decoded bytes hash to something else than the recorded digest (the caller has it;
    /// the digest of what was decoded is not kept: the bytes were zeroed).
    Mismatch,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::BufferTooSmall { needed, available } => write!(
                f,
                "destination holds {available} bytes, the decoded blob needs {needed}"
            ),
            DecodeError::Corrupt { consumed, decoded } => write!(
                f,
                "bad deflate data at stored byte {consumed} (after {decoded} decoded bytes)"
            ),
            DecodeError::Truncated { decoded } => write!(
                f,
                "the deflate stream is truncated (input ran out after {decoded} decoded bytes)"
            ),
            DecodeError::TooLong { expected } => write!(
                f,
                "the deflate stream decodes to more than the recorded {expected} bytes"
            ),
            DecodeError::TooShort { expected, decoded } => write!(
                f,
                "the deflate stream decodes to less than its decoded length: {decoded} bytes, {expected} recorded"
            ),
            DecodeError::TrailingBytes { count } => {
                write!(f, "{count} stored bytes follow the final deflate block")
            }
            DecodeError::Mismatch => f.write_str(
                "SHA-256 mismatch: the decoded bytes do not hash to the recorded digest",
            ),
        }
    }
}

impl core::error::Error for DecodeError {}

/// Decodes the raw-deflate `stored` bytes into `out[..decoded_len]`, hashing the output with
/// the software SHA-256, and checks the length and `sha256` (the digest of the decoded bytes).
/// Returns the decoded bytes, `&out[..decoded_len]`. See the [module documentation](self).
pub fn decode_checked<'o>(
    stored: &[u8],
    decoded_len: usize,
    sha256: &Sha256Digest,
    out: &'o mut [u8],
    inflater: &mut Inflater,
) -> Result<&'o [u8], DecodeError> {
    decode_checked_with(
        stored,
        decoded_len,
        sha256,
        out,
        inflater,
        &mut SoftSha256::new(),
    )
}

/// [`decode_checked`] with your hasher (a hardware SHA block).
pub fn decode_checked_with<'o, H: Sha256Hasher + ?Sized>(
    stored: &[u8],
    decoded_len: usize,
    sha256: &Sha256Digest,
    out: &'o mut [u8],
    inflater: &mut Inflater,
    hasher: &mut H,
) -> Result<&'o [u8], DecodeError> {
    let available = out.len();
    let Some(out) = out.get_mut(..decoded_len) else {
        return Err(DecodeError::BufferTooSmall {
            needed: decoded_len,
            available,
        });
    };
    hasher.reset();
    let (written, outcome) = inflate_hashing(stored, out, &mut inflater.0, hasher);
    let outcome = outcome.and_then(|()| {
        let actual = hasher.finish();
        if actual == *sha256 {
            Ok(())
        } else {
            Err(DecodeError::Mismatch)
        }
    });
    match outcome {
        Ok(()) => Ok(out),
        Err(e) => {
            if let Some(dirty) = out.get_mut(..written) {
                dirty.fill(0);
            }
            Err(e)
        }
    }
}

/// Inflates all of `stored` into all of `out`, step by step, feeding each step's output to
/// `hasher`; returns the bytes written and whether the stream was exactly `out.len()` long.
fn inflate_hashing<H: Sha256Hasher + ?Sized>(
    stored: &[u8],
    out: &mut [u8],
    state: &mut DecompressorOxide,
    hasher: &mut H,
) -> (usize, Result<(), DecodeError>) {
    state.init();
    let expected = out.len();
    let (mut consumed, mut decoded) = (0usize, 0usize);
    loop {
        let input = stored.get(consumed..).unwrap_or(&[]);
        let (status, read, written) = decompress_with_limit(
            state,
            input,
            out,
            decoded,
            DECODE_STEP,
            TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
        );
        let end = decoded.saturating_add(written);
        match out.get(decoded..end) {
            Some(fresh) => hasher.update(fresh),
            // The inflater never reports more than it had room for; refuse rather than trust.
            None => return (decoded, Err(DecodeError::Corrupt { consumed, decoded })),
        }
        consumed = consumed.saturating_add(read);
        decoded = end;
        let progressed = read != 0 || written != 0;
        let result = match status {
            TINFLStatus::Done if decoded != expected => {
                Err(DecodeError::TooShort { expected, decoded })
            }
            TINFLStatus::Done => match stored.len().saturating_sub(consumed) {
                0 => Ok(()),
                count => Err(DecodeError::TrailingBytes { count }),
            },
            // A step's worth decoded: go on. With the buffer full, one more call finds the end
            // of the stream (or that it wants to write more).
            TINFLStatus::HasMoreOutput if progressed => continue,
            TINFLStatus::HasMoreOutput if decoded == expected => {
                Err(DecodeError::TooLong { expected })
            }
            TINFLStatus::FailedCannotMakeProgress | TINFLStatus::NeedsMoreInput => {
                Err(DecodeError::Truncated { decoded })
            }
            _ => Err(DecodeError::Corrupt { consumed, decoded }),
        };
        return (decoded, result);
    }
}

// Small enough to return by value on a microcontroller: the digests stay with the caller.
#[cfg(target_pointer_width = "32")]
static_assertions::const_assert!(core::mem::size_of::<DecodeError>() <= 12);
