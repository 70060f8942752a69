//! Integrity on the device (feature `digest`): check that the bytes a loader is about to hand
//! to the accelerator are the bytes that were embedded, as boot loaders check a SHA-256 per
//! image.
//!
//! The build records the SHA-256 of every distinct embedded blob next to its bytes
//! ([`embedded_blobs`]). A bad flash write, a half-programmed part or bit rot then shows up as
//! [`CheckError::Mismatch`] instead of going into the device:
//!
//! - [`check_blob`] hashes an embedded blob in place;
//! - [`copy_blob_checked`] copies it into a caller's buffer (a DMA buffer, device memory) and hashes
//!   the copy in the same pass, so the check covers what was written, not only what was read.
//!
//! Both come in a `_with` form taking any [`Sha256Hasher`], the seam through which a hardware
//! SHA block replaces the default software one ([`SoftSha256`], RustCrypto `sha2`). No
//! allocation, no panic (the link check `tests/nopanic` covers these paths).
//!
//! Finding a blob's digest compares its address and length with the table of every embedded
//! blob, so a binary that calls these functions links every blob of the build's selection, as
//! a binary that resolves at run time already does. A blob known only by its digest (or a copy
//! of one) is checked with [`check_sha256`] / [`copy_checked`].
//!
//! ```
//! use nrtucode::digest::{copy_blob_checked, check_blob};
//! use nrtucode::{resolve_image, Flavor, ImageIndex, NoEnv, Region};
//!
//! let image = resolve_image(ImageIndex::CAYMAN_NX_ACT, Region::Dram, Flavor::Perf, &NoEnv)?;
//! check_blob(image)?;
//! let mut device = [0u8; 0x4000];
//! let written = copy_blob_checked(image, &mut device)?;
//! assert_eq!(&device[..written], image);
//! # Ok::<(), Box<dyn core::error::Error>>(())
//! ```

use core::fmt;

use crate::catalog::blob_table;

/// A SHA-256 digest.
pub type Sha256Digest = [u8; 32];

pub use crate::catalog::EmbeddedBlob;

/// SHA-256 of zero bytes: what an empty blob (a boundary cursor) is checked against.
pub const EMPTY_SHA256: Sha256Digest = [
    0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
    0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
];

/// Bytes copied, then hashed, per step of [`copy_checked`]: small enough to still be in cache
/// when hashed, large enough to amortise the calls.
const COPY_CHUNK: usize = 1024;

/// A SHA-256 implementation: the seam for a hardware hash block.
///
/// One digest at a time: [`reset`](Self::reset), any number of [`update`](Self::update)s, then
/// [`finish`](Self::finish). The functions of this module call `reset` before they start.
pub trait Sha256Hasher {
    /// Starts a new digest, discarding any previous input.
    fn reset(&mut self);
    /// Feeds `bytes`.
    fn update(&mut self, bytes: &[u8]);
    /// The digest of everything fed since the last reset.
    fn finish(&mut self) -> Sha256Digest;
}

/// The default software SHA-256 (RustCrypto `sha2`, `no_std`).
#[derive(Clone, Default)]
pub struct SoftSha256(sha2::Sha256);

impl SoftSha256 {
    /// A fresh hasher.
    pub fn new() -> Self {
        Self::default()
    }
}

impl fmt::Debug for SoftSha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SoftSha256")
    }
}

impl Sha256Hasher for SoftSha256 {
    fn reset(&mut self) {
        sha2::Digest::reset(&mut self.0);
    }

    fn update(&mut self, bytes: &[u8]) {
        sha2::Digest::update(&mut self.0, bytes);
    }

    fn finish(&mut self) -> Sha256Digest {
        sha2::Digest::finalize_reset(&mut self.0).into()
    }
}

/// Why a blob failed its check against its recorded SHA-256.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum CheckError {
    /// The slice is not one of this build's embedded blobs (by address and length), so there is
    /// no recorded digest to check it against.
    NotEmbedded {
        /// Its length.
        len: usize,
    },
    /// The destination buffer is shorter than the blob; nothing was written.
    BufferTooSmall {
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        available: usize,
    },
    /// The bytes hash to something else than the recorded digest (the caller has it:
    /// [`expected_sha256`]). After a copy, the copied bytes have been zeroed.
    Mismatch,
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::NotEmbedded { len } => {
                write!(f, "the {len}-byte slice is not an embedded blob")
            }
            CheckError::BufferTooSmall { needed, available } => write!(
                f,
                "destination holds {available} bytes, the blob needs {needed}"
            ),
            CheckError::Mismatch => {
                f.write_str("SHA-256 mismatch: the bytes do not hash to the recorded digest")
            }
        }
    }
}

impl core::error::Error for CheckError {}

/// Every distinct blob embedded in this build, with its recorded SHA-256.
pub fn embedded_blobs() -> &'static [EmbeddedBlob] {
    blob_table()
}

/// The recorded SHA-256 of an embedded blob: `blob` must be a slice a resolver returned (same
/// address and length). An empty slice (a boundary cursor) has [`EMPTY_SHA256`].
pub fn expected_sha256(blob: &[u8]) -> Result<&'static Sha256Digest, CheckError> {
    if blob.is_empty() {
        return Ok(&EMPTY_SHA256);
    }
    blob_table()
        .iter()
        .find(|e| core::ptr::eq(e.bytes().as_ptr(), blob.as_ptr()) && e.bytes().len() == blob.len())
        .map(|e| e.sha256())
        .ok_or(CheckError::NotEmbedded { len: blob.len() })
}

/// The recorded SHA-256 of an embedded blob, found by content: for `const` contexts, where a
/// blob resolved at compile time ([`image!`](crate::image)) is checked against its digest
/// without linking the digest table (and with it every blob). `None` when no embedded blob has
/// these bytes. At run time prefer [`expected_sha256`], which compares addresses.
///
/// ```
/// use nrtucode::digest::{copy_checked, expected_sha256_const, Sha256Digest, SoftSha256};
/// use nrtucode::{image, Flavor, ImageIndex, Region};
///
/// const IRAM: &[u8] = image!(ImageIndex::CAYMAN_NX_ACT, Region::Iram, Flavor::Perf);
/// const IRAM_SHA256: Sha256Digest = match expected_sha256_const(IRAM) {
///     Some(digest) => digest,
///     None => panic!("not an embedded blob"),
/// };
/// let mut device = vec![0u8; IRAM.len()];
/// copy_checked(IRAM, &mut device, &IRAM_SHA256, &mut SoftSha256::new())?;
/// # Ok::<(), nrtucode::digest::CheckError>(())
/// ```
pub const fn expected_sha256_const(blob: &[u8]) -> Option<Sha256Digest> {
    if blob.is_empty() {
        return Some(EMPTY_SHA256);
    }
    let table = blob_table();
    let mut i = 0;
    while i < table.len() {
        if same_bytes(table[i].bytes(), blob) {
            return Some(*table[i].sha256());
        }
        i += 1;
    }
    None
}

const fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Hashes an embedded blob in place (software SHA-256) and compares with its recorded digest.
pub fn check_blob(blob: &[u8]) -> Result<(), CheckError> {
    check_blob_with(blob, &mut SoftSha256::new())
}

/// [`check_blob`] with your hasher.
pub fn check_blob_with<H: Sha256Hasher + ?Sized>(
    blob: &[u8],
    hasher: &mut H,
) -> Result<(), CheckError> {
    check_sha256(blob, expected_sha256(blob)?, hasher)
}

/// Copies an embedded blob to the start of `dst`, hashing the copy in the same pass (software
/// SHA-256); returns the bytes written. On a mismatch they are zeroed again.
pub fn copy_blob_checked(blob: &[u8], dst: &mut [u8]) -> Result<usize, CheckError> {
    copy_blob_checked_with(blob, dst, &mut SoftSha256::new())
}

/// [`copy_blob_checked`] with your hasher.
pub fn copy_blob_checked_with<H: Sha256Hasher + ?Sized>(
    blob: &[u8],
    dst: &mut [u8],
    hasher: &mut H,
) -> Result<usize, CheckError> {
    copy_checked(blob, dst, expected_sha256(blob)?, hasher)
}

/// Hashes `bytes` and compares with `expected`.
pub fn check_sha256<H: Sha256Hasher + ?Sized>(
    bytes: &[u8],
    expected: &Sha256Digest,
    hasher: &mut H,
) -> Result<(), CheckError> {
    hasher.reset();
    hasher.update(bytes);
    compare(expected, hasher.finish())
}

/// Copies `src` to the start of `dst` chunk by chunk, hashing each chunk as written, and
/// compares with `expected`; returns the bytes written. `dst` shorter than `src`: nothing is
/// written. On a mismatch the written bytes are zeroed, so a caller that ignores the error
/// does not load corrupted firmware.
pub fn copy_checked<H: Sha256Hasher + ?Sized>(
    src: &[u8],
    dst: &mut [u8],
    expected: &Sha256Digest,
    hasher: &mut H,
) -> Result<usize, CheckError> {
    let available = dst.len();
    let Some(dst) = dst.get_mut(..src.len()) else {
        return Err(CheckError::BufferTooSmall {
            needed: src.len(),
            available,
        });
    };
    hasher.reset();
    copy_hashing(src, dst, hasher);
    match compare(expected, hasher.finish()) {
        Ok(()) => Ok(src.len()),
        Err(e) => {
            dst.fill(0);
            Err(e)
        }
    }
}

/// Copies `from` to the start of `to` a chunk (at most 1 KiB) at a time, while each chunk fits
/// whole, hashing each as written (not as read) with `hasher`; the number of bytes copied (all
/// of `from` when `to` is at least as long). The one copy loop of every checked copy.
pub(crate) fn copy_hashing<H: Sha256Hasher + ?Sized>(
    from: &[u8],
    to: &mut [u8],
    hasher: &mut H,
) -> usize {
    // Chunk by splitting (no division, no bounds check a small opt-level might keep).
    let (mut from, mut to, mut copied) = (from, to, 0);
    while !from.is_empty() {
        let n = from.len().min(COPY_CHUNK);
        let (Some((chunk, from_rest)), Some((written, to_rest))) = (
            from.split_at_checked(n),
            core::mem::take(&mut to).split_at_mut_checked(n),
        ) else {
            break;
        };
        written.iter_mut().zip(chunk).for_each(|(t, f)| *t = *f);
        hasher.update(written);
        (from, to, copied) = (from_rest, to_rest, copied + n);
    }
    copied
}

fn compare(expected: &Sha256Digest, actual: Sha256Digest) -> Result<(), CheckError> {
    if *expected == actual {
        Ok(())
    } else {
        Err(CheckError::Mismatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_digest_is_sha256_of_nothing() {
        let mut h = SoftSha256::new();
        h.update(b"");
        assert_eq!(h.finish(), EMPTY_SHA256);
    }

    #[test]
    fn hasher_resets_between_digests() {
        let mut h = SoftSha256::new();
        h.update(b"abc");
        let first = h.finish();
        h.update(b"junk");
        h.reset();
        h.update(b"abc");
        assert_eq!(h.finish(), first);
        assert_eq!(first[..4], [0xba, 0x78, 0x16, 0xbf]); // FIPS 180-2 "abc"
    }
}

// Small enough to return by value on a microcontroller: the digests stay with the caller.
#[cfg(target_pointer_width = "32")]
static_assertions::const_assert!(core::mem::size_of::<CheckError>() <= 12);
