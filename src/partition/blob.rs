//! The blobs of a partition: [`BlobId`], [`Codec`], [`TocEntry`], and [`Blob`], the handle a
//! [`VerifiedPartition`](super::VerifiedPartition) resolver answers with. A blob's bytes lie
//! outside the signed bytes: only their digests are signed, so a `Blob` hands its bytes out
//! through a check ([`Blob::check`] in place, [`Blob::load_into`] into a buffer), or, from a
//! [`CheckedPartition`](super::CheckedPartition) whose every blob was hashed once, as a plain
//! slice ([`Blob::bytes`]).

use core::fmt;

use super::bytes::{array, le32};
use super::entry::{BlobId, Codec, Cursor, Packed};
use super::format::{T_DECODED_LEN, T_SHA256, T_STORED_SHA256, TOC_LEN};

/// A resolver's answer over a verified partition: one blob (or a cursor onto one), its
/// table-of-contents entry, and its bytes, reachable only through a check:
///
/// - [`check`](Self::check) hashes a stored blob in place and then yields its bytes;
/// - [`load_into`](Self::load_into) copies (stored) or decodes (deflate) it into your buffer,
///   checking what it wrote;
/// - [`bytes`](Self::bytes) yields a stored blob's bytes in place with no second hash, for a
///   handle of a [`CheckedPartition`](super::CheckedPartition), whose whole-partition check
///   ([`VerifiedPartition::check_blobs`](super::VerifiedPartition::check_blobs)) hashed them
///   once; [`check`](Self::check) and [`load_into`](Self::load_into) of such a handle hash
///   nothing they were vouched for already.
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
    /// It comes from a [`CheckedPartition`](super::CheckedPartition): its stored bytes were
    /// hashed against their signed digest.
    pub(super) checked: bool,
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

    /// This handle marked checked or not (by the type whose resolver made it).
    #[inline(always)]
    pub(super) const fn marked(mut self, checked: bool) -> Self {
        self.checked = checked;
        self
    }

    /// `true` for a handle of a [`CheckedPartition`](super::CheckedPartition): its stored
    /// bytes were hashed against their signed digest.
    pub const fn is_checked(&self) -> bool {
        self.checked
    }

    /// A stored blob's bytes in place, as the embedded resolvers answer them, for a handle of
    /// a [`CheckedPartition`](super::CheckedPartition) (hashed once, by its whole-partition
    /// check); for a cursor, the empty slice at its boundary (the vendor's address). `None` for
    /// a handle of a partition whose blobs were not checked ([`check`](Self::check) hashes it)
    /// and for a compressed blob (its bytes in place are a deflate stream:
    /// [`load_into`](Self::load_into) decodes it).
    #[inline]
    pub const fn bytes(&self) -> Option<&'a [u8]> {
        match (self.checked, self.codec()) {
            (true, Codec::Stored) => Some(self.stored),
            _ => None,
        }
    }
}

// A handle is five words on a 32-bit target: its bytes, the table of contents, its packed
// getter.
#[cfg(target_pointer_width = "32")]
static_assertions::const_assert_eq!(core::mem::size_of::<Blob<'static>>(), 20);
