//! The checked ways to a [`Blob`]'s bytes: [`Blob::check`] (in place) and [`Blob::load_into`]
//! (into the caller's buffer, either codec), with the [`Loader`] that lends them a SHA-256 and,
//! with feature `deflate`, the inflater's state.

use super::blob::Blob;
use super::entry::Codec;
use super::error::LoadError;
use super::source::{CheckFailure, check_stored, load_stored};
use crate::digest::{Sha256Hasher, SoftSha256};

/// What loading a blob needs and keeps between blobs: a SHA-256 (`H`, the software one by
/// default, or your hardware block) and, with feature `deflate`, the inflater's state
/// (`nrtucode::deflate::Inflater`, about 11 KB: construct a `Loader` where it is to live, a
/// `static` cell or a `Box`, not on a small stack).
pub struct Loader<H = SoftSha256> {
    hasher: H,
    #[cfg(feature = "deflate")]
    inflater: crate::deflate::Inflater,
}

impl Loader<SoftSha256> {
    /// A loader with the software SHA-256.
    pub fn new() -> Self {
        Self::with_hasher(SoftSha256::new())
    }
}

impl Default for Loader<SoftSha256> {
    fn default() -> Self {
        Self::new()
    }
}

impl<H: Sha256Hasher> Loader<H> {
    /// A loader with your SHA-256.
    pub fn with_hasher(hasher: H) -> Self {
        Self {
            hasher,
            #[cfg(feature = "deflate")]
            inflater: crate::deflate::Inflater::new(),
        }
    }

    /// The SHA-256 it lends ([`Blob::check`] takes one too).
    pub fn hasher(&mut self) -> &mut H {
        &mut self.hasher
    }
}

#[cfg(feature = "deflate")]
impl<H: Sha256Hasher> Loader<H> {
    /// `stream`, the authenticated stored bytes of the compressed `blob`, decoded into
    /// `out[..len]` while hashing the output against `sha256`, its signed decoded digest: the
    /// one decode every load of a compressed blob makes.
    pub(super) fn decode<'o>(
        &mut self,
        stream: &[u8],
        len: usize,
        sha256: &[u8; 32],
        blob: super::BlobId,
        out: &'o mut [u8],
    ) -> Result<&'o [u8], LoadError> {
        use crate::deflate::{DecodeError, decode_checked_with};
        decode_checked_with(
            stream,
            len,
            sha256,
            out,
            &mut self.inflater,
            &mut self.hasher,
        )
        .map_err(|failure| match failure {
            DecodeError::BufferTooSmall { needed, available } => {
                LoadError::BufferTooSmall { needed, available }
            }
            DecodeError::Mismatch => LoadError::DigestMismatch { blob },
            failure => LoadError::Decode { blob, failure },
        })
    }
}

impl<H> core::fmt::Debug for Loader<H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Loader")
    }
}

impl<'a> Blob<'a> {
    /// A stored blob's bytes in place, after hashing them with `hasher` and comparing with the
    /// digest in the signed table of contents ([`LoadError::DigestMismatch`] otherwise); a
    /// handle of a [`CheckedPartition`](super::CheckedPartition) was hashed once already and
    /// is not hashed again. A cursor answers its empty slice (no bytes to vouch for); a
    /// compressed blob has no bytes in place ([`LoadError::NotStored`]:
    /// [`load_into`](Self::load_into) decodes it).
    pub fn check<H: Sha256Hasher + ?Sized>(&self, hasher: &mut H) -> Result<&'a [u8], LoadError> {
        if self.codec() != Codec::Stored {
            return Err(LoadError::NotStored {
                blob: self.id(),
                codec: self.codec(),
            });
        }
        if self.cursor().is_some() || self.checked {
            return Ok(self.stored); // the empty slice at its boundary, or hashed already
        }
        self.check_stored(hasher)?;
        Ok(self.stored)
    }

    /// Hashes the stored bytes in place against the signed digest of the stored bytes: for a
    /// stored blob its bytes ([`LoadError::DigestMismatch`]), for a compressed one its stream
    /// ([`LoadError::StoredDigestMismatch`]). What vouches for a stream before it is decoded.
    pub(super) fn check_stored<H: Sha256Hasher + ?Sized>(
        &self,
        hasher: &mut H,
    ) -> Result<(), LoadError> {
        let (mut stored, expected) = (self.stored, self.stored_sha256());
        let at = 0..stored.len();
        check_stored(&mut stored, at, self.id(), self.codec(), &expected, hasher)
            .map_err(CheckFailure::into_load_error)
    }

    /// The blob written to the start of `out` and checked, whatever its codec: a stored blob
    /// copied while hashing what was written; a compressed one's stream first hashed in place
    /// against its signed digest (nothing unauthenticated reaches the inflater), then decoded
    /// while hashing the output (feature `deflate`; [`LoadError::NoDecoder`] without it).
    /// Returns `&out[..len]`; never writes past it. A buffer shorter than the blob is refused
    /// before anything is written ([`LoadError::BufferTooSmall`]); on any other error what was
    /// written is zeroed. A cursor writes nothing and answers an empty slice. A handle of a
    /// [`CheckedPartition`](super::CheckedPartition) hashes nothing already hashed: a stored
    /// blob is copied, a compressed one decoded (its output hashed) without hashing its
    /// stream again.
    pub fn load_into<'o, H: Sha256Hasher>(
        &self,
        out: &'o mut [u8],
        loader: &mut Loader<H>,
    ) -> Result<&'o [u8], LoadError> {
        if self.cursor().is_some() {
            return Ok(out.split_at(0).0);
        }
        let needed = self.decoded_len();
        let available = out.len();
        let Some(out) = out.get_mut(..needed) else {
            return Err(LoadError::BufferTooSmall { needed, available });
        };
        match self.codec() {
            // Hashed by the whole-partition check: copied (zip: no length panic; parse made
            // the stored and decoded lengths of a stored blob one).
            Codec::Stored if self.checked => match self.stored.get(..needed) {
                Some(src) => {
                    out.iter_mut().zip(src).for_each(|(o, s)| *o = *s);
                    Ok(out)
                }
                None => Err(LoadError::DigestMismatch { blob: self.id() }),
            },
            Codec::Stored => {
                let (mut stored, expected) = (self.stored, self.sha256());
                let at = 0..stored.len();
                let hasher = &mut loader.hasher;
                load_stored(&mut stored, at, self.id(), out, &expected, hasher)
                    .map_err(CheckFailure::into_load_error)?;
                Ok(out)
            }
            Codec::Deflate => self.decode_into(out, loader),
        }
    }

    #[cfg(feature = "deflate")]
    fn decode_into<'o, H: Sha256Hasher>(
        &self,
        out: &'o mut [u8],
        loader: &mut Loader<H>,
    ) -> Result<&'o [u8], LoadError> {
        // Authenticate (unless the whole-partition check did), then decode.
        if !self.checked {
            self.check_stored(&mut loader.hasher)?;
        }
        let len = out.len();
        loader.decode(self.stored, len, &self.sha256(), self.id(), out)
    }

    #[cfg(not(feature = "deflate"))]
    fn decode_into<'o, H: Sha256Hasher>(
        &self,
        _: &'o mut [u8],
        _: &mut Loader<H>,
    ) -> Result<&'o [u8], LoadError> {
        Err(LoadError::NoDecoder {
            blob: self.id(),
            codec: self.codec(),
        })
    }
}
