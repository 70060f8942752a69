//! Resolving into the caller's buffer (features `partition` and `deflate`): the resolvers'
//! answer, copy-verified when the blob is stored and decode-verified when it is compressed, so
//! one call serves both codecs.

use core::fmt;

use super::error::PartitionError;
use super::format::{CODEC_DEFLATE, CODEC_STORED};
use super::parse::Getter;
use super::verify::VerifiedPartition;
use crate::deflate::{DecodeError, Inflater, decode_verified_with};
use crate::env::Env;
use crate::verify::{Sha256Hasher, SoftSha256, VerifyError, copy_checked};
use crate::{Flavor, ImageIndex, ProfKind, Region, ResolveErr};

/// Why a resolve into a buffer did not give the blob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum IntoError {
    /// The vendor's answer (codes 1, 2, 3, 8), exactly as the embedded tables give it.
    Resolve(ResolveErr),
    /// The blob did not load: the buffer is too short ([`PartitionError::BufferTooSmall`], the
    /// size needed, nothing written), its digest does not match
    /// ([`PartitionError::DigestMismatch`], naming the blob), or its compressed bytes do not
    /// decode ([`PartitionError::Decode`]). What was written has been zeroed.
    Load(PartitionError),
}

impl IntoError {
    /// The vendor's answer, when it is one.
    pub const fn resolve_err(&self) -> Option<ResolveErr> {
        match self {
            IntoError::Resolve(e) => Some(*e),
            IntoError::Load(_) => None,
        }
    }
}

impl From<ResolveErr> for IntoError {
    fn from(e: ResolveErr) -> Self {
        IntoError::Resolve(e)
    }
}

impl From<PartitionError> for IntoError {
    fn from(e: PartitionError) -> Self {
        IntoError::Load(e)
    }
}

impl fmt::Display for IntoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntoError::Resolve(e) => fmt::Display::fmt(e, f),
            IntoError::Load(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl core::error::Error for IntoError {}

impl<'a> VerifiedPartition<'a> {
    /// What `getter` returns, written to the start of `out` and checked against the digest in
    /// the signed table of contents: a stored blob copy-verified; a deflate blob's stream first
    /// hashed in place against the digest of its stored bytes (nothing unauthenticated reaches
    /// the inflater), then decode-verified against the digest of the decoded bytes (with
    /// `inflater`, the caller's ~11 KB state); a cursor as an empty slice.
    /// Returns the bytes written, `&out[..decoded_len]`; never writes past them.
    pub fn getter_into_with<'o, H: Sha256Hasher + ?Sized>(
        &self,
        getter: Getter,
        out: &'o mut [u8],
        inflater: &mut Inflater,
        hasher: &mut H,
    ) -> Result<&'o [u8], PartitionError> {
        let Getter::Blob(n) = getter else {
            return Ok(&[]); // a cursor: no bytes
        };
        let (Some(e), Some(stored)) = (self.toc_entry(n), self.stored_bytes(n)) else {
            return Err(PartitionError::NotABlob { len: 0 }); // never: parse checked every reference
        };
        match e.codec {
            CODEC_STORED => match copy_checked(stored, out, &e.sha256, hasher) {
                Ok(len) => Ok(out.get(..len).unwrap_or(&[])),
                Err(VerifyError::Mismatch { expected, actual }) => {
                    Err(PartitionError::DigestMismatch {
                        blob: n,
                        used_by: self.first_use(n),
                        expected,
                        actual,
                    })
                }
                Err(VerifyError::BufferTooSmall { needed, available }) => {
                    Err(PartitionError::BufferTooSmall { needed, available })
                }
                Err(VerifyError::NotEmbedded { len }) => Err(PartitionError::NotABlob { len }),
            },
            CODEC_DEFLATE => {
                // Authenticate, then decode: the stream's own digest (signed, in the table of
                // contents) before the inflater reads a byte of it.
                let decoded_len = usize::try_from(e.decoded_len).unwrap_or(usize::MAX);
                if out.len() < decoded_len {
                    return Err(PartitionError::BufferTooSmall {
                        needed: decoded_len,
                        available: out.len(),
                    });
                }
                self.check_blob_with(n, hasher)?;
                decode_verified_with(stored, decoded_len, &e.sha256, out, inflater, hasher).map_err(
                    |error| match error {
                        DecodeError::BufferTooSmall { needed, available } => {
                            PartitionError::BufferTooSmall { needed, available }
                        }
                        DecodeError::Mismatch { expected, actual } => {
                            PartitionError::DigestMismatch {
                                blob: n,
                                used_by: self.first_use(n),
                                expected,
                                actual,
                            }
                        }
                        error => PartitionError::Decode { blob: n, error },
                    },
                )
            }
            codec => Err(PartitionError::UnknownCodec { blob: n, codec }),
        }
    }

    /// [`get_memory_image`](Self::get_memory_image) into `out`: the vendor's answer, or the
    /// blob copy-verified (stored) or decode-verified (deflate) into `out` (software SHA-256).
    pub fn get_memory_image_into<'o, E: Env + ?Sized>(
        &self,
        idx: u32,
        region: i32,
        flavor: i32,
        env: &E,
        out: &'o mut [u8],
        inflater: &mut Inflater,
    ) -> Result<&'o [u8], IntoError> {
        let getter = self.image_getter(idx, region, flavor, env)?;
        Ok(self.getter_into_with(getter, out, inflater, &mut SoftSha256::new())?)
    }

    /// Typed [`get_memory_image_into`](Self::get_memory_image_into): resolve one image of a
    /// partition into the caller's buffer, whatever its codec.
    pub fn resolve_into<'o, E: Env + ?Sized>(
        &self,
        idx: ImageIndex,
        region: Region,
        flavor: Flavor,
        env: &E,
        out: &'o mut [u8],
        inflater: &mut Inflater,
    ) -> Result<&'o [u8], IntoError> {
        self.get_memory_image_into(idx.raw(), region.raw(), flavor.raw(), env, out, inflater)
    }

    /// [`get_hwdecode_table`](Self::get_hwdecode_table) into `out`.
    pub fn get_hwdecode_table_into<'o>(
        &self,
        idx: u32,
        kind: i32,
        out: &'o mut [u8],
        inflater: &mut Inflater,
    ) -> Result<&'o [u8], IntoError> {
        let getter = self.prof_getter(idx, kind)?;
        Ok(self.getter_into_with(getter, out, inflater, &mut SoftSha256::new())?)
    }

    /// Typed [`get_hwdecode_table_into`](Self::get_hwdecode_table_into).
    pub fn resolve_hwdecode_into<'o>(
        &self,
        idx: ImageIndex,
        kind: ProfKind,
        out: &'o mut [u8],
        inflater: &mut Inflater,
    ) -> Result<&'o [u8], IntoError> {
        self.get_hwdecode_table_into(idx.raw(), kind.raw(), out, inflater)
    }
}
