//! What names a blob: its table-of-contents number ([`BlobId`]), how it is stored ([`Codec`]),
//! its record ([`TocEntry`]), a getter of a table ([`Getter`], with the cursor rule,
//! [`Getter::answer_in`]) and the index's packed form of one (`Packed`). Plain values, used by
//! every other module of the partition and using none of them.

use core::fmt;
use core::num::NonZeroU16;

use super::format::MAX_TOC;

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
    /// Raw deflate (`1`, RFC 1951): decoded into a buffer by
    /// [`Blob::load_into`](super::Blob::load_into) (feature `deflate`).
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

/// One getter of a table: what a region or profiler getter returns (`None` where the vendor's
/// is NULL).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Getter {
    /// The whole blob of this table-of-contents entry.
    Blob(BlobId),
    /// A boundary cursor at the first byte of this entry's blob (present, zero bytes).
    CursorStart(BlobId),
    /// A boundary cursor one past the last byte of this entry's blob.
    CursorEnd(BlobId),
}

impl Getter {
    /// The table-of-contents entry it refers to.
    pub const fn blob(self) -> BlobId {
        match self {
            Getter::Blob(n) | Getter::CursorStart(n) | Getter::CursorEnd(n) => n,
        }
    }

    /// What it answers from its blob's `bytes`: the whole blob, or the empty slice at its start
    /// or one past its end (the vendor's cursor address). The cursor rule, written once: the
    /// index, the scan and a host's loaded partition answer through it.
    #[inline(always)]
    pub fn answer_in(self, bytes: &[u8]) -> &[u8] {
        // `get` never fails on these bounds; the fallback keeps the path free of panics.
        match self {
            Getter::Blob(_) => bytes,
            Getter::CursorStart(_) => bytes.get(..0).unwrap_or(bytes),
            Getter::CursorEnd(_) => bytes.get(bytes.len()..).unwrap_or(bytes),
        }
    }
}

/// A getter and its blob's codec in two bytes: bit 15 set (so that it is never zero and
/// `Option<Packed>` is two bytes too, `None` for NULL), bit 14 set for a compressed blob
/// ([`Packed::DEFLATE`]), in bits 12 and 13 where its answer starts and ends
/// ([`Packed::FROM_END`], [`Packed::TO_END`]: the whole blob starts at its start and ends at its
/// end, a start cursor starts and ends at the start, an end cursor at the end), in bits 0 to 11
/// its table-of-contents number.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Packed(NonZeroU16);

impl Packed {
    /// The answer starts at the blob's end (an end cursor).
    const FROM_END: u16 = 1 << 12;
    /// The answer ends at the blob's end (the whole blob, an end cursor).
    const TO_END: u16 = 1 << 13;
    /// The blob is compressed ([`Codec::Deflate`]).
    const DEFLATE: u16 = 1 << 14;

    /// `getter` packed with its blob's `codec` (from the blob's table-of-contents record);
    /// `None` if its number does not fit (never, after parse).
    pub(super) const fn new(getter: Getter, codec: Codec) -> Option<Self> {
        let (ends, n) = match getter {
            Getter::CursorStart(n) => (0, n),
            Getter::CursorEnd(n) => (Self::FROM_END | Self::TO_END, n),
            Getter::Blob(n) => (Self::TO_END, n),
        };
        if n.raw() as usize >= MAX_TOC {
            return None;
        }
        let codec = match codec {
            Codec::Stored => 0,
            Codec::Deflate => Self::DEFLATE,
        };
        match NonZeroU16::new(0x8000 | codec | ends | n.raw()) {
            Some(raw) => Some(Self(raw)),
            None => None,
        }
    }

    /// The table-of-contents entry.
    #[inline(always)]
    pub(super) const fn blob(self) -> BlobId {
        BlobId::new(self.0.get() & 0x0fff)
    }

    /// How its blob is stored.
    #[inline(always)]
    pub(super) const fn codec(self) -> Codec {
        match self.0.get() & Self::DEFLATE {
            0 => Codec::Stored,
            _ => Codec::Deflate,
        }
    }

    /// Where the answer starts and ends: (at the blob's end?, at the blob's end?).
    #[inline(always)]
    pub(super) const fn ends(self) -> (bool, bool) {
        let raw = self.0.get();
        (raw & Self::FROM_END != 0, raw & Self::TO_END != 0)
    }

    /// The handle's cursor: `None` for the whole blob.
    pub(super) const fn cursor(self) -> Option<Cursor> {
        cursor_of(self.ends())
    }

    /// The getter it packs.
    pub(super) const fn getter(self) -> Getter {
        match self.cursor() {
            Some(Cursor::Start) => Getter::CursorStart(self.blob()),
            Some(Cursor::End) => Getter::CursorEnd(self.blob()),
            None => Getter::Blob(self.blob()),
        }
    }
}

impl core::fmt::Debug for Packed {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.getter().fmt(f)
    }
}

/// The cursor of an answer that starts and ends where `ends` says (see [`Packed::ends`]).
#[inline(always)]
pub(super) const fn cursor_of(ends: (bool, bool)) -> Option<Cursor> {
    match ends {
        (_, false) => Some(Cursor::Start),
        (true, true) => Some(Cursor::End),
        (false, true) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_getter_packs_and_unpacks() {
        for n in [0, 1, 17, 4095] {
            for g in [
                Getter::Blob(BlobId::new(n)),
                Getter::CursorStart(BlobId::new(n)),
                Getter::CursorEnd(BlobId::new(n)),
            ] {
                for codec in [Codec::Stored, Codec::Deflate] {
                    let p = Packed::new(g, codec).expect("packs");
                    assert_eq!(p.getter(), g);
                    assert_eq!(p.blob(), g.blob());
                    assert_eq!(p.codec(), codec);
                }
            }
        }
        assert!(Packed::new(Getter::Blob(BlobId::new(4096)), Codec::Stored).is_none());
        assert_eq!(core::mem::size_of::<Option<Packed>>(), 2);
    }
}
