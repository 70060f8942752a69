//! [`Partition::parse`]: every structural check, before any table is used.

use super::bytes::{array, byte, le16, le32, range};
use core::fmt;

use super::entry::BlobId;
use super::error::{FormatError, TableName};
use super::format::*;
use super::header::{Source, TableClass};
use super::source::ByteSource;

/// A table-of-contents entry as `parse` reads it, before its codec is known to be one.
struct RawEntry {
    offset: u32,
    stored_len: u32,
    decoded_len: u32,
    codec: u8,
    sha256: [u8; 32],
    stored_sha256: [u8; 32],
}

/// A structurally valid partition, not yet trusted: its resolvers exist only on the
/// [`VerifiedPartition`](super::VerifiedPartition) that [`verify`](Partition::verify) (or, with
/// feature `insecure-unsigned`, `insecure_trust_unsigned`) gives; inspection tools read its
/// tables through [`untrusted_tables`](Partition::untrusted_tables). `Debug` prints the header,
/// not the bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Partition<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) layout: Layout,
}

/// Where [`Partition::parse`] found the tables in a partition's bytes: the counts and offsets
/// it checked, without the borrow of the bytes (a host type that owns the bytes keeps this and
/// lends a [`Partition`] over them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Layout {
    pub(super) desc_count: usize,
    pub(super) toc_count: usize,
    pub(super) prof_off: usize,
    pub(super) toc_off: usize,
    pub(super) sig_off: usize,
}

/// What the header says, checked ([`Head::parse`]): where the tables and the blob area are,
/// the partition's total length, whether it is signed. Read from the header's
/// [`HEADER_LEN`] bytes alone, so that a reader of a flash knows how much to read next (the
/// signed prefix, `blobs_off` bytes) before it reads anything else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Head {
    pub(super) layout: Layout,
    pub(super) signed: bool,
    pub(super) blobs_off: usize,
    pub(super) total: usize,
}

impl Head {
    /// Checks the header at the start of `bytes` (only its first [`HEADER_LEN`] bytes are
    /// read), of a partition in a region of `available` bytes: magic, version, lengths, flags,
    /// class, source, build ID, reserved bytes, key ID, counts, and the offsets they give.
    pub(super) fn parse(bytes: &[u8], available: usize) -> Result<Self, FormatError> {
        let truncated = |needed: usize| FormatError::Truncated { needed, available };
        // A header shorter than 96 bytes: what there was of it is what was available.
        let short_header = FormatError::Truncated {
            needed: HEADER_LEN,
            available: available.min(bytes.len()),
        };
        let bytes = bytes.get(..HEADER_LEN.min(bytes.len())).unwrap_or(&[]);
        let Some(magic) = array::<8>(bytes, H_MAGIC) else {
            return Err(short_header);
        };
        if magic == [0xff; 8] {
            return Err(FormatError::Erased);
        }
        if magic != MAGIC {
            return Err(FormatError::BadMagic);
        }
        let version = le16(bytes, H_VERSION).ok_or(short_header)?;
        if version != VERSION {
            return Err(FormatError::UnsupportedVersion { found: version });
        }
        let head = bytes.get(..HEADER_LEN).ok_or(short_header)?;
        let u16_at = |at| le16(head, at).map_or(0, usize::from);
        let u32_at = |at| le32(head, at).unwrap_or(0);
        if u16_at(H_HEADER_LEN) != HEADER_LEN {
            return Err(header("header_len"));
        }
        let total = usize::try_from(u32_at(H_TOTAL_LEN)).map_err(|_| header("total_len"))?;
        if total > available {
            return Err(truncated(total));
        }
        if u32_at(H_FLAGS) & !FLAG_SIGNED != 0 {
            return Err(header("flags"));
        }
        if TableClass::from_raw(byte(head, H_CLASS).unwrap_or(0)).is_none() {
            return Err(header("class"));
        }
        let id_len = usize::from(byte(head, H_BUILD_ID_LEN).unwrap_or(u8::MAX));
        let id = range(head, H_BUILD_ID, BUILD_ID_MAX).unwrap_or(&[]);
        let (id_used, id_pad) = id.split_at_checked(id_len).ok_or(header("build_id_len"))?;
        if id_pad.iter().any(|&b| b != 0) {
            return Err(header("build_id"));
        }
        match byte(head, H_SOURCE) {
            Some(SOURCE_BUILD_ID) if !id_used.is_empty() => {}
            Some(SOURCE_NO_BUILD_ID) if id_used.is_empty() => {}
            Some(SOURCE_FIXTURES) if id_used == FIXTURES_ID => {}
            _ => return Err(header("source")),
        }
        let reserved = range(head, H_RESERVED1, 16).unwrap_or(&[1]);
        if byte(head, H_RESERVED0) != Some(0) || reserved.iter().any(|&b| b != 0) {
            return Err(header("reserved"));
        }
        let signed = u32_at(H_FLAGS) & FLAG_SIGNED != 0;
        let key_id = array::<8>(head, H_KEY_ID).unwrap_or([1; 8]);
        if !signed && key_id != [0; 8] {
            return Err(header("key_id"));
        }
        if u16_at(H_SLOT_COUNT) != SLOT_COUNT {
            return Err(header("slot_count"));
        }
        if u16_at(H_PROF_COUNT) != SLOT_COUNT {
            return Err(header("prof_count"));
        }
        let desc_count = u16_at(H_DESC_COUNT);
        if desc_count > MAX_DESCRIPTORS {
            return Err(header("desc_count"));
        }
        let toc_count = u16_at(H_TOC_COUNT);
        if toc_count > MAX_TOC {
            return Err(header("toc_count"));
        }
        let [prof_off, toc_off, sig_off, blobs_off] =
            layout(desc_count, toc_count).ok_or(header("desc_count"))?;
        if usize::try_from(u32_at(H_BLOBS_OFF)).ok() != Some(blobs_off) {
            return Err(header("blobs_off"));
        }
        if blobs_off > total {
            return Err(truncated(blobs_off));
        }
        Ok(Head {
            layout: Layout {
                desc_count,
                toc_count,
                prof_off,
                toc_off,
                sig_off,
            },
            signed,
            blobs_off,
            total,
        })
    }
}

impl fmt::Debug for Partition<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Partition")
            .field("len", &self.bytes.len())
            .field("class", &self.class())
            .field("signed", &self.is_signed())
            .field("security_counter", &self.security_counter())
            .field("descriptors", &self.layout.desc_count)
            .field("blobs", &self.layout.toc_count)
            .finish()
    }
}

fn table(table: TableName, entry: usize, reason: &'static str) -> FormatError {
    FormatError::Table {
        table,
        // Entries are counted in u16 (38 slots, 1024 descriptors, 4096 blobs at most).
        entry: u16::try_from(entry).unwrap_or(u16::MAX),
        reason,
    }
}

fn header(field: &'static str) -> FormatError {
    FormatError::BadHeader { field }
}

/// A parsed partition's layout without the borrow of its bytes ([`Partition::parsed`]), lent
/// again over the same bytes later ([`Parsed::lend`]): for a reader that lets go of the bytes in
/// between, as an install writing the other slot of the same flash does.
#[cfg(feature = "update")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Parsed {
    layout: Layout,
    len: usize,
}

#[cfg(feature = "update")]
impl Parsed {
    /// Its table of contents' entries.
    pub(crate) const fn toc_count(&self) -> usize {
        self.layout.toc_count
    }

    /// The partition over `bytes`, which must be the bytes it was parsed from (or start with
    /// them): `None` when they are shorter. Every read of a [`Partition`] is bounds-checked, so
    /// other bytes give other answers, never a read out of bounds.
    pub(crate) fn lend<'a>(&self, bytes: &'a [u8]) -> Option<Partition<'a>> {
        Some(Partition {
            bytes: bytes.get(..self.len)?,
            layout: self.layout,
        })
    }
}

/// Where a partition's table of contents lies and how many entries it has, and where its blob
/// area starts, from its header (checked as every parse checks it, against `available` bytes):
/// what the updater reads of a delta's base through a driver, entry by entry.
#[cfg(feature = "update")]
pub(crate) fn toc_of(header: &[u8], available: usize) -> Result<[usize; 3], FormatError> {
    let head = Head::parse(header, available)?;
    Ok([head.layout.toc_off, head.layout.toc_count, head.blobs_off])
}

impl<'a> Partition<'a> {
    /// Checks `bytes` (a flash region or a file, which may be longer than the partition) and
    /// returns the partition they start with: the header (magic, version, lengths, flags,
    /// class, source, counts, reserved bytes), the canonical layout of the tables, every slot,
    /// descriptor and getter (counts, kinds, references into the table of contents), every
    /// table-of-contents entry (codec, lengths, 16-byte alignment, order, no overlap, inside
    /// the partition, the padding after its blob) and every other padding byte; then that the
    /// layout is the one `nrtucode pack` writes: every entry named by a getter, no blob twice,
    /// cursors only onto stored blobs, a front partition's getters only where the front tables
    /// have them. Nothing is hashed and nothing is trusted yet. It reads the header first, then
    /// the tables the header sizes, then only the padding of the blob area (by offset).
    pub fn parse(bytes: &'a [u8]) -> Result<Self, FormatError> {
        let head = Head::parse(bytes, bytes.len())?;
        // Head checked blobs_off <= total <= bytes.len().
        let truncated = |needed| FormatError::Truncated {
            needed,
            available: bytes.len(),
        };
        let prefix = bytes
            .get(..head.blobs_off)
            .ok_or(truncated(head.blobs_off))?;
        Self::parse_signed(prefix, &head, &mut &*bytes)?;
        Ok(Partition {
            bytes: bytes.get(..head.total).ok_or(truncated(head.total))?,
            layout: head.layout,
        })
    }

    /// The signed prefix of the partition `bytes` start with, while its blob area is still
    /// being written (an install resumed): every check of [`parse`](Self::parse) but the
    /// padding of the blob area, which is not read. The partition it gives lends the prefix
    /// only: its tables, to find where each blob goes and what its digests are.
    #[cfg(feature = "update")]
    pub(crate) fn parse_prefix(bytes: &'a [u8]) -> Result<Self, FormatError> {
        let head = Head::parse(bytes, bytes.len())?;
        let prefix = bytes.get(..head.blobs_off).ok_or(FormatError::Truncated {
            needed: head.blobs_off,
            available: bytes.len(),
        })?;
        Self::parse_signed(prefix, &head, &mut super::source::Unwritten)
    }

    /// Every check after the header's, given the header (`head`): the signature block, the
    /// slots, the descriptors, the profiler getters, the table of contents against
    /// `head.total` and the canonical layout, all read from `prefix` (the partition's first
    /// `head.blobs_off` bytes, nothing past them), and the padding after each blob, read by
    /// offset from `blobs` (the partition's bytes: its slice, or a flash read through its
    /// driver), in the order `check_toc` meets it. The partition it gives lends only the prefix
    /// (its tables; not a blob): `parse` gives the one that lends every byte.
    pub(super) fn parse_signed<S: ByteSource>(
        prefix: &'a [u8],
        head: &Head,
        blobs: &mut S,
    ) -> Result<Self, FormatError> {
        let p = Partition {
            bytes: prefix,
            layout: head.layout,
        };
        p.check_signature_block(head.signed, head.blobs_off)?;
        p.check_slots()?;
        p.check_descriptors()?;
        p.check_prof()?;
        p.check_toc(head.blobs_off, head.total, blobs)?;
        p.check_canonical(p.class())?;
        Ok(p)
    }

    fn check_signature_block(&self, signed: bool, blobs_off: usize) -> Result<(), FormatError> {
        let sig = range(self.bytes, self.layout.sig_off, SIG_LEN).ok_or(header("blobs_off"))?;
        if !signed && sig.iter().any(|&b| b != 0) {
            return Err(table(
                TableName::Padding,
                0,
                "an unsigned partition's signature is not zero",
            ));
        }
        let pad_from = self.layout.sig_off + SIG_LEN;
        let pad = self.bytes.get(pad_from..blobs_off).unwrap_or(&[1]);
        if pad.iter().any(|&b| b != 0) {
            return Err(table(
                TableName::Padding,
                0,
                "padding before the blobs is not zero",
            ));
        }
        Ok(())
    }

    fn check_getter(
        &self,
        at: usize,
        which: TableName,
        entry: usize,
        cursors: bool,
    ) -> Result<(), FormatError> {
        let kind = byte(self.bytes, at).ok_or(table(which, entry, "truncated"))?;
        let reserved = byte(self.bytes, at + 1).ok_or(table(which, entry, "truncated"))?;
        let index =
            usize::from(le16(self.bytes, at + 2).ok_or(table(which, entry, "truncated"))?);
        if reserved != 0 {
            return Err(table(which, entry, "a getter's reserved byte is not zero"));
        }
        match kind {
            GETTER_NULL if index == 0 => Ok(()),
            GETTER_NULL => Err(table(which, entry, "a NULL getter has a non-zero index")),
            GETTER_BLOB | GETTER_CURSOR_START | GETTER_CURSOR_END
                if kind == GETTER_BLOB || cursors =>
            {
                if index < self.layout.toc_count {
                    Ok(())
                } else {
                    Err(table(
                        which,
                        entry,
                        "a getter refers past the table of contents",
                    ))
                }
            }
            GETTER_CURSOR_START | GETTER_CURSOR_END => {
                Err(table(which, entry, "a profiler getter is a cursor"))
            }
            _ => Err(table(which, entry, "unknown getter kind")),
        }
    }

    fn check_slots(&self) -> Result<(), FormatError> {
        let mut next = 0usize;
        for slot in 0..SLOT_COUNT {
            let at = SLOTS_OFF + slot * SLOT_LEN;
            let (Some(first), Some(count)) = (le16(self.bytes, at), le16(self.bytes, at + 2))
            else {
                return Err(table(TableName::ImageList, slot, "truncated"));
            };
            let (first, count) = (usize::from(first), usize::from(count));
            if count == 0 && first != 0 {
                return Err(table(
                    TableName::ImageList,
                    slot,
                    "an empty slot has a first descriptor",
                ));
            }
            if count != 0 && first != next {
                return Err(table(
                    TableName::ImageList,
                    slot,
                    "descriptors are not in slot order (first is not the previous slot's end)",
                ));
            }
            next = next.saturating_add(count);
            if next > self.layout.desc_count {
                return Err(table(
                    TableName::ImageList,
                    slot,
                    "descriptors past desc_count",
                ));
            }
        }
        if next != self.layout.desc_count {
            return Err(table(
                TableName::ImageList,
                SLOT_COUNT - 1,
                "desc_count is not the slots' total",
            ));
        }
        Ok(())
    }

    fn check_descriptors(&self) -> Result<(), FormatError> {
        for d in 0..self.layout.desc_count {
            let at = DESCS_OFF + d * DESC_LEN;
            let key = le32(self.bytes, at).ok_or(table(TableName::Descriptors, d, "truncated"))?;
            if key == 0 {
                return Err(table(
                    TableName::Descriptors,
                    d,
                    "flavor key 0 (auto) is never a key",
                ));
            }
            for r in 0..4 {
                self.check_getter(at + 4 + r * GETTER_LEN, TableName::Descriptors, d, true)?;
            }
        }
        Ok(())
    }

    fn check_prof(&self) -> Result<(), FormatError> {
        for slot in 0..SLOT_COUNT {
            for k in 0..2 {
                let at = self.layout.prof_off + slot * PROF_LEN + k * GETTER_LEN;
                self.check_getter(at, TableName::ProfList, slot, false)?;
            }
        }
        Ok(())
    }

    fn check_toc<S: ByteSource>(
        &self,
        blobs_off: usize,
        total: usize,
        blobs: &mut S,
    ) -> Result<(), FormatError> {
        let mut expected_at = blobs_off;
        let mut decoded_total = 0usize;
        for n in 0..self.layout.toc_count {
            let bad = |reason| table(TableName::Toc, n, reason);
            let e = self.toc_entry_unchecked(n).ok_or(bad("truncated"))?;
            if array::<3>(self.bytes, self.layout.toc_off + n * TOC_LEN + T_CODEC + 1)
                != Some([0; 3])
            {
                return Err(bad("reserved bytes are not zero"));
            }
            match e.codec {
                CODEC_STORED if e.stored_len != e.decoded_len => {
                    return Err(bad("a stored blob's stored and decoded lengths differ"));
                }
                CODEC_STORED if e.stored_sha256 != e.sha256 => {
                    return Err(bad("a stored blob's stored and decoded digests differ"));
                }
                CODEC_STORED | CODEC_DEFLATE => {}
                codec => {
                    return Err(FormatError::UnknownCodec {
                        blob: BlobId::new(n as u16),
                        codec,
                    });
                }
            }
            if e.decoded_len == 0 || e.stored_len == 0 {
                return Err(bad("an empty blob (a cursor is a getter, not a blob)"));
            }
            // Every decoded length is bounded before anything is sized from it.
            let decoded = usize::try_from(e.decoded_len).map_err(|_| bad("decoded_len"))?;
            if decoded > MAX_BLOB_LEN {
                return Err(bad(
                    "decoded_len is over the largest blob the format allows (1 MiB)",
                ));
            }
            let ceiling = usize::try_from(e.stored_len)
                .ok()
                .and_then(|stored| stored.checked_mul(DEFLATE_MAX_RATIO));
            if e.codec == CODEC_DEFLATE && ceiling.is_none_or(|c| decoded > c) {
                return Err(bad(
                    "decoded_len is over deflate's ceiling (1032 bytes per stored byte)",
                ));
            }
            decoded_total = decoded_total.saturating_add(decoded);
            if decoded_total > MAX_DECODED_TOTAL {
                return Err(bad(
                    "the blobs' decoded lengths add up to more than the format allows (64 MiB)",
                ));
            }
            let offset = usize::try_from(e.offset).map_err(|_| bad("offset"))?;
            if offset % BLOB_ALIGN != 0 {
                return Err(bad("offset is not 16-byte aligned"));
            }
            if offset != expected_at {
                return Err(bad(
                    "blobs are not in offset order, overlap, or leave a gap of 16 bytes or more",
                ));
            }
            let len = usize::try_from(e.stored_len).map_err(|_| bad("stored_len"))?;
            let end = offset.checked_add(len).ok_or(bad("stored_len"))?;
            if end > total {
                return Err(bad("the blob runs past total_len"));
            }
            let next = align_up(end).ok_or(bad("stored_len"))?;
            // The padding lies in the blob area: read by offset, as the blobs are.
            let mut zero = true;
            let padding = |piece: &[u8]| zero &= piece.iter().all(|&b| b == 0);
            let pad = |reason| table(TableName::Padding, n, reason);
            (blobs.read_pieces(end, next.min(total).saturating_sub(end), padding))
                .map_err(|_| pad("the padding after a blob cannot be read"))?;
            if !zero {
                return Err(pad("padding after a blob is not zero"));
            }
            expected_at = next;
        }
        let end = if self.layout.toc_count == 0 {
            blobs_off
        } else {
            expected_at
        };
        // The last blob's padding is part of the partition.
        if total != end {
            return Err(header("total_len"));
        }
        Ok(())
    }

    /// The table-of-contents entry `n`, read without the checks (for `parse` itself).
    fn toc_entry_unchecked(&self, n: usize) -> Option<RawEntry> {
        let at = self.layout.toc_off.checked_add(n.checked_mul(TOC_LEN)?)?;
        Some(RawEntry {
            offset: le32(self.bytes, at + T_OFFSET)?,
            stored_len: le32(self.bytes, at + T_STORED_LEN)?,
            decoded_len: le32(self.bytes, at + T_DECODED_LEN)?,
            codec: byte(self.bytes, at + T_CODEC)?,
            sha256: array::<32>(self.bytes, at + T_SHA256)?,
            stored_sha256: array::<32>(self.bytes, at + T_STORED_SHA256)?,
        })
    }

    /// The table of contents: its records, one after the other (parse checked they are all
    /// there).
    pub(super) fn toc_records(&self) -> &'a [u8] {
        let len = self.layout.toc_count.saturating_mul(TOC_LEN);
        range(self.bytes, self.layout.toc_off, len).unwrap_or(&[])
    }

    /// Its layout, to be lent again over the same bytes ([`Parsed::lend`]).
    #[cfg(feature = "update")]
    pub(crate) const fn parsed(&self) -> Parsed {
        Parsed {
            layout: self.layout,
            len: self.bytes.len(),
        }
    }

    /// The partition's length as its header says (`total_len`): [`bytes`](Self::bytes)'
    /// length, or more for a partition whose blob area is read through a driver
    /// ([`StreamedPartition`](super::StreamedPartition), whose bytes are the signed prefix).
    pub fn total_len(&self) -> usize {
        le32(self.bytes, H_TOTAL_LEN).unwrap_or(0) as usize
    }

    /// The bytes of the partition (its total length; the input may have been longer).
    pub const fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// `true` when the header says it is signed.
    pub fn is_signed(&self) -> bool {
        le32(self.bytes, H_FLAGS).unwrap_or(0) & FLAG_SIGNED != 0
    }

    /// The security counter.
    pub fn security_counter(&self) -> u32 {
        le32(self.bytes, H_SECURITY_COUNTER).unwrap_or(0)
    }

    /// The table class.
    pub fn class(&self) -> TableClass {
        TableClass::from_raw(byte(self.bytes, H_CLASS).unwrap_or(0)).unwrap_or(TableClass::Full)
    }

    /// Where the blobs come from, with the library's build ID.
    pub fn source(&self) -> Source<'a> {
        let len = usize::from(byte(self.bytes, H_BUILD_ID_LEN).unwrap_or(0));
        match byte(self.bytes, H_SOURCE) {
            Some(SOURCE_BUILD_ID) => {
                Source::BuildId(range(self.bytes, H_BUILD_ID, len).unwrap_or(&[]))
            }
            Some(SOURCE_FIXTURES) => Source::Fixtures,
            _ => Source::NoBuildId,
        }
    }

    /// The key ID in the header (zero when unsigned).
    pub fn key_id(&self) -> [u8; 8] {
        array::<8>(self.bytes, H_KEY_ID).unwrap_or([0; 8])
    }

    /// The bytes the signature covers: everything before the signature block.
    pub(super) fn signed_bytes(&self) -> &'a [u8] {
        self.bytes.get(..self.layout.sig_off).unwrap_or(&[])
    }

    /// The signature block.
    pub(super) fn signature(&self) -> [u8; SIG_LEN] {
        array::<SIG_LEN>(self.bytes, self.layout.sig_off).unwrap_or([0; SIG_LEN])
    }

    /// Number of descriptors.
    pub const fn descriptor_count(&self) -> usize {
        self.layout.desc_count
    }

    /// Number of table-of-contents entries (distinct blobs).
    pub const fn blob_count(&self) -> usize {
        self.layout.toc_count
    }
}
