//! Why a partition was refused: [`PartitionError`], one small `Copy` enum with a precise
//! message per case; and [`InPlaceError`], a resolver's answer over a partition that is not a
//! blob.

use core::fmt;

use crate::verify::Sha256Digest;
use crate::{ProfKind, Region, ResolveErr};

/// A table of the partition, named in [`PartitionError::Table`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum TableName {
    /// The header.
    Header,
    /// The `image_list` slots.
    ImageList,
    /// The descriptors.
    Descriptors,
    /// The `hwdecode_table_list` slots.
    ProfList,
    /// The table of contents.
    Toc,
    /// Padding that must be zero.
    Padding,
}

impl TableName {
    /// The table's name, as the format document spells it.
    pub const fn name(self) -> &'static str {
        match self {
            TableName::Header => "header",
            TableName::ImageList => "image_list",
            TableName::Descriptors => "descriptors",
            TableName::ProfList => "hwdecode_table_list",
            TableName::Toc => "table of contents",
            TableName::Padding => "padding",
        }
    }
}

/// The first getter that uses a blob: how an error names the blob.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum BlobUse {
    /// A region getter of an `image_list` descriptor.
    Image {
        /// Slot.
        idx: u32,
        /// The descriptor's flavor key.
        flavor: i32,
        /// Region.
        region: Region,
    },
    /// A `hwdecode_table_list` getter.
    Prof {
        /// Slot.
        idx: u32,
        /// Kind.
        kind: ProfKind,
    },
}

impl fmt::Display for BlobUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            BlobUse::Image {
                idx,
                flavor,
                region,
            } => write!(f, "image_list slot {idx} flavor {flavor} {}", region.name()),
            BlobUse::Prof { idx, kind } => {
                write!(f, "hwdecode_table_list slot {idx} PROF_{}", kind.name())
            }
        }
    }
}

/// Why a partition is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum PartitionError {
    /// Fewer bytes than the header, or than the header's total length.
    Truncated {
        /// Bytes the partition needs.
        needed: usize,
        /// Bytes there are.
        available: usize,
    },
    /// The magic bytes are all `0xff`: erased flash, nothing written.
    Erased,
    /// The first eight bytes are not `NRTUPART`.
    BadMagic,
    /// A format version this reader does not read.
    UnsupportedVersion {
        /// The version in the header.
        found: u16,
    },
    /// A header field outside its allowed values.
    BadHeader {
        /// The field, as the format document names it.
        field: &'static str,
    },
    /// A table entry that breaks a rule of the format.
    Table {
        /// Which table.
        table: TableName,
        /// Entry number in it.
        entry: usize,
        /// The rule broken.
        reason: &'static str,
    },
    /// A table-of-contents entry with a codec this reader does not know.
    UnknownCodec {
        /// Entry number.
        blob: u16,
        /// The codec byte.
        codec: u8,
    },
    /// `verify` on a partition whose header says it is unsigned.
    Unsigned,
    /// `trust_unsigned_for_testing` on a signed partition: verify it instead.
    Signed,
    /// The partition was signed with another key (its key ID is not the given key's).
    UnknownKey {
        /// The key ID of the given public key.
        expected: [u8; 8],
        /// The key ID in the header.
        found: [u8; 8],
    },
    /// The signature does not verify with the given key: the signed bytes were changed.
    BadSignature,
    /// The security counter is below the minimum: a downgrade.
    Rollback {
        /// The partition's counter.
        found: u32,
        /// The minimum the policy accepts.
        minimum: u32,
    },
    /// The partition follows another table class than the one expected.
    WrongClass {
        /// The class in the header.
        found: TableClass,
        /// The class the policy expects.
        expected: TableClass,
    },
    /// A blob's SHA-256 is not the one in the table of contents.
    DigestMismatch {
        /// Table-of-contents entry.
        blob: u16,
        /// The first getter that uses it.
        used_by: Option<BlobUse>,
        /// The digest in the table of contents.
        expected: Sha256Digest,
        /// The digest of the bytes.
        actual: Sha256Digest,
    },
    /// A compressed blob's stored bytes (its deflate stream) do not hash to the digest of the
    /// stored bytes in the table of contents: refused before the decoder reads any of them.
    StoredDigestMismatch {
        /// Table-of-contents entry.
        blob: u16,
        /// The first getter that uses it.
        used_by: Option<BlobUse>,
        /// The digest of the stored bytes in the table of contents.
        expected: Sha256Digest,
        /// The digest of the stored bytes.
        actual: Sha256Digest,
    },
    /// The destination buffer of a verified copy is shorter than the blob.
    BufferTooSmall {
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        available: usize,
    },
    /// The slice is not a blob of this partition (by address and length).
    NotABlob {
        /// Its length.
        len: usize,
    },
    /// The blob is not stored as is (its codec is not 0): it cannot be read in place.
    NotStored {
        /// Table-of-contents entry.
        blob: u16,
        /// Its codec.
        codec: u8,
    },
    /// A compressed blob's stored bytes do not decode to its recorded length (feature
    /// `deflate`): corrupt, truncated, too long or too short, or bytes after its final block.
    #[cfg(feature = "deflate")]
    Decode {
        /// Table-of-contents entry.
        blob: u16,
        /// What the decoder found.
        error: crate::deflate::DecodeError,
    },
}

use super::TableClass;

impl fmt::Display for PartitionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PartitionError::Truncated { needed, available } => write!(
                f,
                "truncated partition: {available} bytes, the partition needs {needed}"
            ),
            PartitionError::Erased => {
                f.write_str("erased flash (magic bytes are 0xff): no partition was written")
            }
            PartitionError::BadMagic => f.write_str("bad magic: not an nrtucode partition"),
            PartitionError::UnsupportedVersion { found } => write!(
                f,
                "unsupported partition format version {found} (this reader reads {})",
                super::format::VERSION
            ),
            PartitionError::BadHeader { field } => write!(f, "bad header field {field}"),
            PartitionError::Table {
                table,
                entry,
                reason,
            } => write!(f, "{} entry {entry}: {reason}", table.name()),
            PartitionError::UnknownCodec { blob, codec } => {
                write!(f, "blob {blob}: unknown codec {codec}")
            }
            PartitionError::Unsigned => {
                f.write_str("the partition is unsigned; only trust_unsigned_for_testing reads it")
            }
            PartitionError::Signed => {
                f.write_str("the partition is signed: verify it with its public key")
            }
            PartitionError::UnknownKey { expected, found } => write!(
                f,
                "signed by an unknown key: key ID {}, the given public key's is {}",
                Hex8(&found),
                Hex8(&expected)
            ),
            PartitionError::BadSignature => f.write_str(
                "bad signature: the signed bytes were changed or not signed by this key",
            ),
            PartitionError::Rollback { found, minimum } => write!(
                f,
                "rollback refused: security counter {found} is below the minimum {minimum}"
            ),
            PartitionError::WrongClass { found, expected } => write!(
                f,
                "wrong table class: the partition follows the {} tables, {} expected",
                found.name(),
                expected.name()
            ),
            PartitionError::DigestMismatch {
                blob,
                used_by,
                expected,
                actual,
            } => {
                write!(f, "blob {blob}")?;
                if let Some(user) = used_by {
                    write!(f, " ({user})")?;
                }
                write!(
                    f,
                    ": SHA-256 mismatch: the table of contents says {}, the bytes hash to {}",
                    Hex32(&expected),
                    Hex32(&actual)
                )
            }
            PartitionError::StoredDigestMismatch {
                blob,
                used_by,
                expected,
                actual,
            } => {
                write!(f, "blob {blob}")?;
                if let Some(user) = used_by {
                    write!(f, " ({user})")?;
                }
                write!(
                    f,
                    ": SHA-256 mismatch of the compressed bytes (not decoded): the table of contents says {}, the bytes hash to {}",
                    Hex32(&expected),
                    Hex32(&actual)
                )
            }
            PartitionError::BufferTooSmall { needed, available } => write!(
                f,
                "destination holds {available} bytes, the blob needs {needed}"
            ),
            PartitionError::NotABlob { len } => {
                write!(f, "the {len}-byte slice is not a blob of this partition")
            }
            PartitionError::NotStored { blob, codec } => write!(
                f,
                "blob {blob} is compressed (codec {codec}) and cannot be read in place"
            ),
            #[cfg(feature = "deflate")]
            PartitionError::Decode { blob, error } => write!(f, "blob {blob}: {error}"),
        }
    }
}

impl core::error::Error for PartitionError {}

struct Hex8<'a>(&'a [u8; 8]);
impl fmt::Display for Hex8<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}
struct Hex32<'a>(&'a [u8; 32]);
impl fmt::Display for Hex32<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// The code [`InPlaceError::code`] gives a blob that cannot be read in place: not a vendor
/// code (those are 1, 2, 3 and 8).
pub const NOT_STORED_CODE: i32 = 16;

/// A resolver's answer over a partition that is not a blob: the vendor's answer, or a blob
/// the partition holds compressed, which only a decoding read returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum InPlaceError {
    /// The vendor's answer (codes 1, 2, 3, 8), exactly as the embedded tables give it.
    Resolve(ResolveErr),
    /// The getter's blob is stored with a codec other than 0 ([`NOT_STORED_CODE`]).
    NotStored {
        /// Table-of-contents entry.
        blob: u16,
        /// Its codec.
        codec: u8,
    },
}

impl InPlaceError {
    /// The vendor's code, or [`NOT_STORED_CODE`].
    pub const fn code(&self) -> i32 {
        match self {
            InPlaceError::Resolve(e) => e.code(),
            InPlaceError::NotStored { .. } => NOT_STORED_CODE,
        }
    }

    /// The vendor's answer, when it is one.
    pub const fn resolve_err(&self) -> Option<ResolveErr> {
        match self {
            InPlaceError::Resolve(e) => Some(*e),
            InPlaceError::NotStored { .. } => None,
        }
    }
}

impl From<ResolveErr> for InPlaceError {
    fn from(e: ResolveErr) -> Self {
        InPlaceError::Resolve(e)
    }
}

impl fmt::Display for InPlaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InPlaceError::Resolve(e) => fmt::Display::fmt(e, f),
            InPlaceError::NotStored { blob, codec } => write!(
                f,
                "blob {blob} is compressed (codec {codec}) and cannot be read in place (code {NOT_STORED_CODE})"
            ),
        }
    }
}

impl core::error::Error for InPlaceError {}
