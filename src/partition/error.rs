//! Why a partition, or one of its blobs, was refused: one error per step, each a small `Copy`
//! enum (at most 16 bytes on a 32-bit target, asserted below) with a precise message per case.
//!
//! - [`FormatError`]: [`Partition::parse`](super::Partition::parse), the structure;
//! - [`TrustError`]: [`Partition::verify`](super::Partition::verify), the signature and policy;
//! - [`LoadError`]: a [`Blob`](super::Blob)'s checks and loads, and
//!   [`VerifiedPartition::check_blobs`](super::VerifiedPartition::check_blobs);
//! - `update::Refusal` (feature `update`): any of the three, for a function that does several
//!   steps (`?` converts).
//!
//! Digests are not carried: the caller that wants to show one has it (the expected digests are
//! in [`TocEntry`](super::TocEntry)). Every enum may gain a reason (`#[non_exhaustive]`); one
//! variant depends on a cargo feature (`LoadError::Decode`, feature `deflate`: without it a
//! compressed blob is `LoadError::NoDecoder`).

use core::fmt;

use super::entry::{BlobId, Codec};
use super::header::TableClass;
use crate::table::Hex;
use crate::{ProfKind, Region};

/// A table of the partition, named in [`FormatError::Table`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum TableName {
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
            TableName::ImageList => "image_list",
            TableName::Descriptors => "descriptors",
            TableName::ProfList => "hwdecode_table_list",
            TableName::Toc => "table of contents",
            TableName::Padding => "padding",
        }
    }
}

/// The first getter that uses a blob ([`Tables::first_use`](super::Tables::first_use)): how a
/// message names the blob to a person.
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

/// Why [`Partition::parse`](super::Partition::parse) refused the bytes: they are not a
/// partition of this format, byte for byte (`docs/partition.md`, "What a reader checks").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum FormatError {
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
        entry: u16,
        /// The rule broken.
        reason: &'static str,
    },
    /// A table-of-contents entry with a codec this reader does not know.
    UnknownCodec {
        /// The entry.
        blob: BlobId,
        /// The codec byte.
        codec: u8,
    },
    /// A table-of-contents entry no getter names: a blob no request can answer with.
    UnreferencedBlob {
        /// The entry.
        blob: BlobId,
    },
    /// Two table-of-contents entries record the same blob (the same SHA-256 of the decoded
    /// bytes): identical blobs are one entry.
    DuplicateBlob {
        /// The later entry.
        blob: BlobId,
        /// The first entry with that digest.
        first: BlobId,
    },
    /// A cursor getter points into a compressed blob: a cursor's answer is an address at a
    /// boundary of its blob's bytes in place, which only a stored blob has.
    CursorOntoCompressed {
        /// The descriptor holding the cursor.
        descriptor: u16,
        /// The compressed entry.
        blob: BlobId,
    },
    /// A front partition (class 2) has a getter where the front tables have none (another
    /// generation than SUNDA to MARIANA_PLUS, or another flavor key than 1 and 17).
    ClassContradicted {
        /// The table of the getter: descriptors or `hwdecode_table_list`.
        table: TableName,
        /// The descriptor, or the profiler slot.
        entry: u16,
    },
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FormatError::Truncated { needed, available } => write!(
                f,
                "truncated partition: {available} bytes, the partition needs {needed}"
            ),
            FormatError::Erased => {
                f.write_str("erased flash (magic bytes are 0xff): no partition was written")
            }
            FormatError::BadMagic => f.write_str("bad magic: not an nrtucode partition"),
            FormatError::UnsupportedVersion { found } => write!(
                f,
                "unsupported partition format version {found} (this reader reads {})",
                super::format::VERSION
            ),
            FormatError::BadHeader { field } => write!(f, "bad header field {field}"),
            FormatError::Table {
                table,
                entry,
                reason,
            } => write!(f, "{} entry {entry}: {reason}", table.name()),
            FormatError::UnknownCodec { blob, codec } => {
                write!(f, "{blob}: unknown codec {codec}")
            }
            FormatError::UnreferencedBlob { blob } => {
                write!(f, "{blob}: no getter names this table-of-contents entry")
            }
            FormatError::DuplicateBlob { blob, first } => write!(
                f,
                "{blob}: the same blob (SHA-256 of the decoded bytes) as {first}; identical blobs are one entry"
            ),
            FormatError::CursorOntoCompressed { descriptor, blob } => write!(
                f,
                "descriptors entry {descriptor}: a cursor onto {blob}, which is compressed (a cursor needs a stored blob)"
            ),
            FormatError::ClassContradicted { table, entry } => write!(
                f,
                "{} entry {entry}: a getter the front tables leave NULL, in a partition of class front",
                table.name()
            ),
        }
    }
}

impl core::error::Error for FormatError {}

/// Why [`Partition::verify`](super::Partition::verify) did not trust a well-formed partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum TrustError {
    /// `verify` on a partition whose header says it is unsigned.
    Unsigned,
    /// The insecure unsigned read (feature `insecure-unsigned`) on a signed partition: verify
    /// it instead.
    Signed,
    /// The partition was signed with another key: its key ID is not the ID of the key it was
    /// checked with (which the caller has: [`PublicKey::key_id`](super::PublicKey::key_id)).
    UnknownKey {
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
}

impl fmt::Display for TrustError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TrustError::Unsigned => f.write_str(
                "the partition is unsigned; only the insecure unsigned read (feature insecure-unsigned) takes it",
            ),
            TrustError::Signed => {
                f.write_str("the partition is signed: verify it with its public key")
            }
            TrustError::UnknownKey { found } => write!(
                f,
                "signed by an unknown key: key ID {}, not the key it was checked with",
                Hex(&found)
            ),
            TrustError::BadSignature => f.write_str(
                "bad signature: the signed bytes were changed or not signed by this key",
            ),
            TrustError::Rollback { found, minimum } => write!(
                f,
                "rollback refused: security counter {found} is below the minimum {minimum}"
            ),
            TrustError::WrongClass { found, expected } => write!(
                f,
                "wrong table class: the partition follows the {} tables, {} expected",
                found.name(),
                expected.name()
            ),
        }
    }
}

impl core::error::Error for TrustError {}

/// Why a blob of a verified partition was not handed out: a digest, the buffer, or the codec.
/// Whatever was written to a buffer before the error has been zeroed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum LoadError {
    /// The blob's bytes (stored as is) do not hash to the digest in the table of contents, or,
    /// for a compressed blob, its decoded bytes do not.
    DigestMismatch {
        /// The blob.
        blob: BlobId,
    },
    /// A compressed blob's stored bytes (its deflate stream) do not hash to the digest of the
    /// stored bytes in the table of contents: refused before the decoder reads any of them.
    StoredDigestMismatch {
        /// The blob.
        blob: BlobId,
    },
    /// The destination buffer is shorter than the blob; nothing was written.
    BufferTooSmall {
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        available: usize,
    },
    /// A compressed blob's authenticated stream does not decode to its recorded length (the
    /// packer wrote a bad stream): the decoder's own error, with its positions (never
    /// [`DecodeError::BufferTooSmall`](crate::deflate::DecodeError::BufferTooSmall) or
    /// [`DecodeError::Mismatch`](crate::deflate::DecodeError::Mismatch): those are
    /// [`LoadError::BufferTooSmall`] and [`LoadError::DigestMismatch`]). Feature `deflate`:
    /// without a decoder nothing is decoded ([`LoadError::NoDecoder`]).
    #[cfg(feature = "deflate")]
    Decode {
        /// The blob.
        blob: BlobId,
        /// How.
        failure: crate::deflate::DecodeError,
    },
    /// The blob is compressed: it has no bytes in place to check ([`Blob::check`](
    /// super::Blob::check)); [`Blob::load_into`](super::Blob::load_into) decodes it.
    NotStored {
        /// The blob.
        blob: BlobId,
        /// Its codec.
        codec: Codec,
    },
    /// The blob is compressed and this build has no decoder for it (feature `deflate`).
    NoDecoder {
        /// The blob.
        blob: BlobId,
        /// Its codec.
        codec: Codec,
    },
}

impl LoadError {
    /// The blob it is about, when it is about one.
    pub const fn blob(&self) -> Option<BlobId> {
        match *self {
            LoadError::DigestMismatch { blob }
            | LoadError::StoredDigestMismatch { blob }
            | LoadError::NotStored { blob, .. }
            | LoadError::NoDecoder { blob, .. } => Some(blob),
            #[cfg(feature = "deflate")]
            LoadError::Decode { blob, .. } => Some(blob),
            LoadError::BufferTooSmall { .. } => None,
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LoadError::DigestMismatch { blob } => write!(
                f,
                "{blob}: SHA-256 mismatch: its bytes do not hash to the digest in the table of contents"
            ),
            LoadError::StoredDigestMismatch { blob } => write!(
                f,
                "{blob}: SHA-256 mismatch of the compressed bytes (not decoded): they do not hash to the digest in the table of contents"
            ),
            LoadError::BufferTooSmall { needed, available } => write!(
                f,
                "destination holds {available} bytes, the blob needs {needed}"
            ),
            #[cfg(feature = "deflate")]
            LoadError::Decode { blob, failure } => write!(f, "{blob}: {failure}"),
            LoadError::NotStored { blob, codec } => write!(
                f,
                "{blob} is compressed ({}) and cannot be read in place: load it into a buffer",
                codec.name()
            ),
            LoadError::NoDecoder { blob, codec } => write!(
                f,
                "{blob} is compressed ({}) and this build has no decoder for it (feature deflate)",
                codec.name()
            ),
        }
    }
}

impl core::error::Error for LoadError {}

/// Why the updater ([`crate::update`]) refused a slot's partition: the step that refused it,
/// with that step's own error (structure, signature and policy, or a blob's check).
#[cfg(feature = "update")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Refusal {
    /// The structure ([`Partition::parse`](super::Partition::parse)).
    Format(FormatError),
    /// The signature or policy ([`Partition::verify`](super::Partition::verify)).
    Trust(TrustError),
    /// A blob's check.
    Load(LoadError),
    /// A slot read through its driver (a flash that is not memory-mapped): its signed prefix
    /// (`needed` bytes, as its header says) does not fit the buffer lent for it (`available`).
    PrefixBuffer {
        /// The prefix's length (`blobs_off`).
        needed: usize,
        /// The buffer's length.
        available: usize,
    },
}

#[cfg(feature = "update")]
impl From<FormatError> for Refusal {
    fn from(e: FormatError) -> Self {
        Refusal::Format(e)
    }
}

#[cfg(feature = "update")]
impl From<TrustError> for Refusal {
    fn from(e: TrustError) -> Self {
        Refusal::Trust(e)
    }
}

#[cfg(feature = "update")]
impl From<LoadError> for Refusal {
    fn from(e: LoadError) -> Self {
        Refusal::Load(e)
    }
}

#[cfg(feature = "update")]
impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Format(e) => fmt::Display::fmt(e, f),
            Refusal::Trust(e) => fmt::Display::fmt(e, f),
            Refusal::Load(e) => fmt::Display::fmt(e, f),
            Refusal::PrefixBuffer { needed, available } => write!(
                f,
                "the signed prefix is {needed} bytes, the buffer lent for it {available}"
            ),
        }
    }
}

#[cfg(feature = "update")]
impl core::error::Error for Refusal {}

// Small enough to return by value on a microcontroller (at most four words on a 32-bit
// target): digests stay with the caller. CI builds the core for thumbv7em, where these hold.
#[cfg(target_pointer_width = "32")]
static_assertions::const_assert!(core::mem::size_of::<FormatError>() <= 16);
#[cfg(target_pointer_width = "32")]
static_assertions::const_assert!(core::mem::size_of::<TrustError>() <= 16);
#[cfg(target_pointer_width = "32")]
static_assertions::const_assert!(core::mem::size_of::<LoadError>() <= 16);
#[cfg(all(target_pointer_width = "32", feature = "update"))]
static_assertions::const_assert!(core::mem::size_of::<Refusal>() <= 16);

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::string::ToString as _;

    /// The wording fits every caller: a key given on a command line, and a key built into a
    /// library (whose user gave none).
    #[test]
    fn an_unknown_key_is_told_apart_from_the_key_it_was_checked_with() {
        let e = TrustError::UnknownKey {
            found: [0xab, 0, 1, 2, 3, 4, 5, 0xff],
        };
        assert_eq!(
            e.to_string(),
            "signed by an unknown key: key ID ab000102030405ff, not the key it was checked with"
        );
    }
}
