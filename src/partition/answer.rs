//! [`Answer`]: what one getter of a partition answers, from its table-of-contents record: its
//! stored bytes in place and the getter packed with its codec. The index of a verified
//! partition holds each of its getters' (`super::index`, found once, at verification), so that
//! a lookup makes the [`Blob`] handle with no table-of-contents read and no bounds check.

use super::blob::Blob;
use super::bytes::le32;
use super::entry::Getter;
use super::entry::Packed;
use super::format::{T_OFFSET, T_STORED_LEN};

/// One getter's answer: the stored bytes it answers in place (the whole blob's, or for a
/// cursor the empty slice at its boundary, what the vendor answers) and the getter, packed with
/// its blob's codec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Answer<'a> {
    /// The answer's stored bytes, in place.
    pub(super) stored: &'a [u8],
    /// The getter (table-of-contents number, cursor) and the codec.
    pub(super) getter: Packed,
}

impl<'a> Answer<'a> {
    /// The answer of `getter` whose table-of-contents record is `entry`, in the partition
    /// `bytes`; `None` if the record's bytes do not lie in `bytes` or the number does not pack
    /// (never, after parse, which checked every blob's bounds and codec).
    pub(super) fn new(bytes: &'a [u8], getter: Getter, entry: &[u8]) -> Option<Self> {
        let codec = super::Codec::from_raw(*entry.get(super::format::T_CODEC)?)?;
        let packed = Packed::new(getter, codec)?;
        let start = usize::try_from(le32(entry, T_OFFSET)?).ok()?;
        let len = usize::try_from(le32(entry, T_STORED_LEN)?).ok()?;
        let blob = bytes.get(start..start.checked_add(len)?)?;
        Some(Answer {
            stored: getter.answer_in(blob),
            getter: packed,
        })
    }

    /// The handle of this answer; `toc` is the partition's table of contents, where the handle
    /// finds its record when asked for its length or digests.
    #[inline(always)]
    pub(super) const fn blob(self, toc: &'a [u8]) -> Blob<'a> {
        Blob {
            stored: self.stored,
            toc,
            getter: self.getter,
            checked: false,
        }
    }
}
