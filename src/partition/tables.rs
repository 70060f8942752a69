//! [`Tables`]: a read-only view of a parsed partition's tables (slots, descriptors, profiler
//! getters, table of contents), and the lookups the resolvers are made of. Parse checked every
//! bound, reference and count, so a lookup reads only what is there.
//!
//! A [`VerifiedPartition`](super::VerifiedPartition) gives its view with
//! [`tables`](super::VerifiedPartition::tables); an inspection tool reads an unverified one's
//! with [`Partition::untrusted_tables`](super::Partition::untrusted_tables): the same view,
//! vouched for by nothing.

use super::answer::Answer;
use super::blob::Blob;
use super::bytes::{array, byte, le16, le32, range};
use super::entry::Getter;
use super::entry::{BlobId, Codec, TocEntry};
use super::error::{BlobUse, LoadError};
use super::format::*;
use super::parse::Partition;
use super::source::{ByteSource, CheckFailure, check_stored};
use crate::digest::Sha256Hasher;
use crate::{ProfKind, Region};

/// The tables of a parsed partition, read only. `Copy`: a view, not a copy of the tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tables<'a> {
    pub(super) p: Partition<'a>,
}

/// A getter as stored: `None` for NULL. Only called on checked tables.
fn getter_at(bytes: &[u8], at: usize) -> Option<Getter> {
    let index = BlobId::new(le16(bytes, at + 2).unwrap_or(0));
    match byte(bytes, at) {
        Some(GETTER_BLOB) => Some(Getter::Blob(index)),
        Some(GETTER_CURSOR_START) => Some(Getter::CursorStart(index)),
        Some(GETTER_CURSOR_END) => Some(Getter::CursorEnd(index)),
        _ => None,
    }
}

impl<'a> Tables<'a> {
    /// The `image_list` slot `idx`: (first descriptor, count); `None` past the slots.
    pub(super) fn slot(&self, idx: usize) -> Option<(usize, usize)> {
        let at = SLOTS_OFF.checked_add(idx.checked_mul(SLOT_LEN)?)?;
        let first = le16(self.p.bytes, at)?;
        let count = le16(self.p.bytes, at + 2)?;
        Some((usize::from(first), usize::from(count)))
    }

    /// Descriptor `d`: its flavor key and four getters.
    pub(super) fn descriptor(&self, d: usize) -> Option<(i32, [Option<Getter>; 4])> {
        let at = DESCS_OFF.checked_add(d.checked_mul(DESC_LEN)?)?;
        let key = le32(self.p.bytes, at)? as i32;
        let g = |r: usize| getter_at(self.p.bytes, at + 4 + r * GETTER_LEN);
        Some((key, [g(0), g(1), g(2), g(3)]))
    }

    /// The first descriptor of slot `idx` with key `flavor` (the vendor's linear scan): its
    /// four getters; `Err(true)` for an empty slot, `Err(false)` when none has the key.
    pub(super) fn scan(&self, idx: usize, flavor: i32) -> Result<[Option<Getter>; 4], bool> {
        let (first, count) = self.slot(idx).ok_or(false)?;
        if count == 0 {
            return Err(true);
        }
        // Keys only, until the first match; then that descriptor's four getters.
        let at = |d: usize| DESCS_OFF.checked_add(d.checked_mul(DESC_LEN)?);
        (first..first.saturating_add(count))
            .find(|&d| at(d).and_then(|at| le32(self.p.bytes, at)) == Some(flavor as u32))
            .and_then(|d| self.descriptor(d))
            .map(|(_, getters)| getters)
            .ok_or(false)
    }

    /// The two profiler getters of slot `idx` (`idx` below the slot count).
    pub(super) fn prof_pair(&self, idx: usize) -> [Option<Getter>; 2] {
        let at = self.p.layout.prof_off + idx * PROF_LEN;
        [
            getter_at(self.p.bytes, at),
            getter_at(self.p.bytes, at + GETTER_LEN),
        ]
    }

    /// The bytes of entry `n`'s table-of-contents record; `None` past the table of contents.
    fn entry_bytes(&self, n: BlobId) -> Option<&'a [u8]> {
        if n.index() >= self.p.layout.toc_count {
            return None;
        }
        range(
            self.p.bytes,
            self.p.layout.toc_off + n.index() * TOC_LEN,
            TOC_LEN,
        )
    }

    /// What `getter` answers, from its table-of-contents record: the one place an [`Answer`]
    /// is made, for the index of a [`VerifiedPartition`](super::VerifiedPartition) and for the
    /// scan. `None` past the table of contents.
    pub(super) fn answer(&self, getter: Getter) -> Option<Answer<'a>> {
        Answer::new(self.p.bytes, getter, self.entry_bytes(getter.blob())?)
    }

    /// `getter` packed with its blob's codec, from its table-of-contents record alone (no blob
    /// byte is looked at); `None` past the table of contents.
    pub(super) fn packed(&self, getter: Getter) -> Option<super::entry::Packed> {
        let codec = Codec::from_raw(byte(self.entry_bytes(getter.blob())?, T_CODEC)?)?;
        super::entry::Packed::new(getter, codec)
    }

    /// What `getter` answers: the blob handle (its digests are read when a check needs them).
    pub(super) fn blob(&self, getter: Getter) -> Option<Blob<'a>> {
        Some(self.answer(getter)?.blob(self.p.toc_records()))
    }

    /// Table-of-contents entry `blob`; `None` past the table of contents.
    pub fn toc_entry(&self, blob: BlobId) -> Option<TocEntry> {
        TocEntry::of_record(self.entry_bytes(blob)?)
    }

    /// Every blob, in table-of-contents order.
    pub fn blob_ids(&self) -> impl Iterator<Item = BlobId> + use<> {
        (0..self.p.layout.toc_count as u16).map(BlobId::new)
    }

    /// The descriptors of slot `idx` in the vendor's scan order: flavor key and four getters
    /// (`None`: NULL). Empty for the empty slot and past the slots.
    pub fn descriptors(
        &self,
        idx: u32,
    ) -> impl Iterator<Item = (i32, [Option<Getter>; 4])> + use<'a> {
        let this = *self;
        let (first, count) = self.slot(idx as usize).unwrap_or((0, 0));
        (first..first + count).filter_map(move |d| this.descriptor(d))
    }

    /// The PROF_CAM and PROF_TABLE getters of slot `idx` (`None` past the slots).
    pub fn prof_getters(&self, idx: u32) -> Option<[Option<Getter>; 2]> {
        ((idx as usize) < SLOT_COUNT).then(|| self.prof_pair(idx as usize))
    }

    /// The first getter using `blob`, in table order (image list, then profiler list): how a
    /// message names a blob to a person.
    pub fn first_use(&self, blob: BlobId) -> Option<BlobUse> {
        for idx in 0..SLOT_COUNT as u32 {
            for (key, regions) in self.descriptors(idx) {
                for (region, g) in Region::ALL.into_iter().zip(regions) {
                    if g.is_some_and(|g| g.blob() == blob) {
                        return Some(BlobUse::Image {
                            idx,
                            flavor: key,
                            region,
                        });
                    }
                }
            }
        }
        for idx in 0..SLOT_COUNT as u32 {
            for (kind, g) in ProfKind::ALL.into_iter().zip(self.prof_pair(idx as usize)) {
                if g.is_some_and(|g| g.blob() == blob) {
                    return Some(BlobUse::Prof { idx, kind });
                }
            }
        }
        None
    }

    /// Hashes the stored bytes of every blob in place (compressed ones: their stream) with
    /// `hasher` against the digests of the stored bytes: the first mismatch. Nothing is
    /// decoded. Over an unverified partition the digests themselves are vouched for by nothing.
    pub fn check_stored_digests<H: Sha256Hasher + ?Sized>(
        &self,
        hasher: &mut H,
    ) -> Result<(), LoadError> {
        let mut bytes = self.p.bytes;
        self.check_stored_digests_in(&mut bytes, hasher)
            .map_err(CheckFailure::into_load_error)
    }

    /// [`check_stored_digests`](Self::check_stored_digests) with the blobs read from
    /// `source` by the offsets in the table of contents: the partition's own slice, or a flash
    /// read through `ReadNorFlash::read` (`super::source`).
    pub(super) fn check_stored_digests_in<S: ByteSource, H: Sha256Hasher + ?Sized>(
        &self,
        source: &mut S,
        hasher: &mut H,
    ) -> Result<(), CheckFailure<S::Error>> {
        self.blob_ids().try_for_each(|blob| {
            // Parse checked every entry: its codec, and that its bytes lie in the partition.
            let e = (self.toc_entry(blob))
                .ok_or(CheckFailure::Refused(LoadError::DigestMismatch { blob }))?;
            let start = e.offset as usize;
            let at = start..start.saturating_add(e.stored_len as usize);
            check_stored(source, at, blob, e.codec, &e.stored_sha256, hasher)
        })
    }
}

impl<'a> Partition<'a> {
    /// For inspection tools (`nrtucode inspect`): the tables of a partition whose signature
    /// was not checked. Parse vouches for their structure; nothing vouches for their content.
    pub const fn untrusted_tables(&self) -> Tables<'a> {
        Tables { p: *self }
    }
}

impl TocEntry {
    /// The entry a table-of-contents record (`TOC_LEN` bytes) holds; `None` if it is shorter or
    /// its codec is unknown. The one decoder of a record: a partition's, and a record the
    /// updater reads through a driver.
    pub(crate) fn of_record(e: &[u8]) -> Option<TocEntry> {
        Some(TocEntry {
            offset: le32(e, T_OFFSET)?,
            stored_len: le32(e, T_STORED_LEN)?,
            decoded_len: le32(e, T_DECODED_LEN)?,
            codec: Codec::from_raw(byte(e, T_CODEC)?)?,
            sha256: array::<32>(e, T_SHA256)?,
            stored_sha256: array::<32>(e, T_STORED_SHA256)?,
        })
    }
}
