//! The blobs of a partition: [`BlobId`], [`Codec`], [`TocEntry`], and [`Blob`], the handle a
//! [`VerifiedPartition`](super::VerifiedPartition) resolver answers with. A blob's bytes lie
//! outside the signed bytes: only their digests are signed, so a `Blob` hands its bytes out
//! through a check ([`Blob::check`] in place, [`Blob::load_into`] into a buffer), or through
//! the one loudly named way that checks nothing ([`Blob::unchecked_in_place`]).

use core::fmt;

use super::format::{T_DECODED_LEN, T_SHA256, T_STORED_SHA256, TOC_LEN};
use super::index::Packed;
use super::parse::{array, le32};

/// The number of a table-of-contents entry: one distinct blob of a partition. A number past
/// the table of contents names no blob ([`Tables::toc_entry`](super::Tables::toc_entry) answers
/// `None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct BlobId(u16);

impl BlobId {
    /// The entry with this number.
    pub const fn new(raw: u16) -> Self {
        Self(raw)
    }

    /// Its number.
    pub const fn raw(self) -> u16 {
        self.0
    }

    /// Its number as an index.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for BlobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "blob {}", self.0)
    }
}

/// How a blob is stored (the table-of-contents `codec` byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Codec {
    /// As is (`0`): the stored bytes are the blob.
    Stored,
    /// Raw deflate (`1`, RFC 1951): decoded into a buffer by [`Blob::load_into`] (feature
    /// `deflate`).
    Deflate,
}

impl Codec {
    /// The byte.
    pub const fn raw(self) -> u8 {
        match self {
            Codec::Stored => super::format::CODEC_STORED,
            Codec::Deflate => super::format::CODEC_DEFLATE,
        }
    }

    /// The codec of a byte, `None` for one this reader does not know.
    pub const fn from_raw(raw: u8) -> Option<Self> {
        match raw {
            super::format::CODEC_STORED => Some(Codec::Stored),
            super::format::CODEC_DEFLATE => Some(Codec::Deflate),
            _ => None,
        }
    }

    /// `stored` or `deflate`.
    pub const fn name(self) -> &'static str {
        match self {
            Codec::Stored => "stored",
            Codec::Deflate => "deflate",
        }
    }
}

/// One table-of-contents entry, as the format stores it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TocEntry {
    /// Offset of the stored bytes from the start of the partition.
    pub offset: u32,
    /// Stored length.
    pub stored_len: u32,
    /// Decoded length: the blob's length.
    pub decoded_len: u32,
    /// Codec.
    pub codec: Codec,
    /// SHA-256 of the decoded bytes: the blob the resolvers answer with.
    pub sha256: [u8; 32],
    /// SHA-256 of the stored bytes, checked before anything reads them (a decoder included);
    /// the same as [`sha256`](Self::sha256) for a stored blob.
    pub stored_sha256: [u8; 32],
}

impl fmt::Debug for TocEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TocEntry")
            .field("offset", &self.offset)
            .field("stored_len", &self.stored_len)
            .field("decoded_len", &self.decoded_len)
            .field("codec", &self.codec)
            .finish_non_exhaustive()
    }
}

/// Which boundary of its blob a cursor getter names (the vendor's zero-length images whose
/// address is a neighbour's start or end).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Cursor {
    /// The blob's first byte.
    Start,
    /// One past its last byte.
    End,
}

/// A resolver's answer over a verified partition: one blob (or a cursor onto one), its
/// table-of-contents entry, and its bytes, reachable only through a check:
///
/// - [`check`](Self::check) hashes a stored blob in place and then yields its bytes;
/// - [`load_into`](Self::load_into) copies (stored) or decodes (deflate) it into your buffer,
///   checking what it wrote;
/// - [`unchecked_in_place`](Self::unchecked_in_place) yields them with no check at all, for a
///   caller that checked the whole partition before ([`VerifiedPartition::check_blobs`](
///   super::VerifiedPartition::check_blobs)) or accepts the risk.
///
/// The embedded tables answer `&'static [u8]` instead: their bytes are part of the program
/// image, which whoever flashed it vouched for as a whole. A partition travels and is updated
/// apart from the program, so each of its blobs is vouched for only by its signed digest.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Blob<'a> {
    /// The answer's stored bytes, in place: the whole blob's, or for a cursor the empty slice
    /// at its boundary (what the vendor answers). Found once, when the partition was verified,
    /// so that reading them is a field.
    pub(super) stored: &'a [u8],
    /// The partition's table of contents: the blob's record (decoded length, digests) is read
    /// from it at the blob's number when asked for.
    pub(super) toc: &'a [u8],
    /// The table-of-contents number, the cursor and the codec.
    pub(super) getter: Packed,
}

impl fmt::Debug for Blob<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Blob")
            .field("id", &self.id())
            .field("cursor", &self.cursor())
            .field("codec", &self.codec())
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

impl<'a> Blob<'a> {
    /// The table-of-contents entry it is (a cursor: the entry it points into).
    pub const fn id(&self) -> BlobId {
        self.getter.blob()
    }

    /// `Some` for a cursor getter: zero bytes at a boundary of [`id`](Self::id)'s blob.
    pub const fn cursor(&self) -> Option<Cursor> {
        self.getter.cursor()
    }

    /// How its blob is stored.
    pub const fn codec(&self) -> Codec {
        self.getter.codec()
    }

    /// Bytes of the answer: the decoded length, 0 for a cursor.
    pub const fn len(&self) -> usize {
        match self.cursor() {
            Some(_) => 0,
            None => self.decoded_len(),
        }
    }

    /// Where its table-of-contents record starts in [`toc`](Self::toc) (the number is below
    /// 4096, so this cannot overflow).
    const fn record_at(&self) -> usize {
        self.id().index() * TOC_LEN
    }

    /// The blob's decoded length (a cursor's too), from its table-of-contents record.
    pub(super) const fn decoded_len(&self) -> usize {
        match le32(self.toc, self.record_at() + T_DECODED_LEN) {
            Some(n) => n as usize,
            None => 0, // never: parse checked that every getter names a record
        }
    }

    /// `true` for a cursor.
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The digest of the answer's bytes (of the decoded blob), as the signed table of contents
    /// records it.
    pub fn sha256(&self) -> [u8; 32] {
        array::<32>(self.toc, self.record_at() + T_SHA256).unwrap_or([0; 32])
    }

    /// The digest of the stored bytes, as the signed table of contents records it.
    pub fn stored_sha256(&self) -> [u8; 32] {
        array::<32>(self.toc, self.record_at() + T_STORED_SHA256).unwrap_or([0; 32])
    }

    /// The bytes in place, **checked by nothing here**: neither hashed nor compared with the
    /// signed digest. `None` for a compressed blob (its bytes in place are a deflate stream,
    /// not the blob). For a cursor, the empty slice at its boundary (the vendor's address).
    /// Use it only after [`VerifiedPartition::check_blobs`](
    /// super::VerifiedPartition::check_blobs) held over memory nobody can change since, or
    /// where reading unverified firmware is acceptable.
    #[inline]
    pub fn unchecked_in_place(&self) -> Option<&'a [u8]> {
        match self.codec() {
            Codec::Stored => Some(self.stored),
            Codec::Deflate => None,
        }
    }
}

// A handle is five words on a 32-bit target: its bytes, the table of contents, its packed
// getter.
#[cfg(target_pointer_width = "32")]
static_assertions::const_assert_eq!(core::mem::size_of::<Blob<'static>>(), 20);
