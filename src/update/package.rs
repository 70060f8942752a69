//! Update packages (`docs/update.md`, "Update packages, byte for byte"): what crosses the link
//! for an update, read by one streaming reader ([`PackageReader`]) that the device's install
//! ([`Slots::install_package`](super::Slots::install_package)) and the host tools (`nrtucode
//! inspect`, `nrtucode_pack::apply_package`) share.
//!
//! A package names the partition it was made for (its **base**: the SHA-256 of the base's
//! signed prefix, every byte before its blob area) and carries the new partition:
//!
//! - **whole**: every byte of it, as a full install streams them;
//! - **delta**: its signed prefix (header, tables, table of contents, signature), then one
//!   item per table-of-contents entry, in order: the stored bytes of a blob the base does not
//!   hold, or the number of the base's entry whose stored bytes are the same (the same
//!   `stored_sha256`), which the device copies from the slot it runs.
//!
//! The reader turns a package into the bytes of the new partition, as events: bytes that
//! follow in the package, a copy from the base, zero padding. A package has no signature of
//! its own: what it yields is written into the inactive slot and checked whole, as every
//! install is (the new partition's signature and every blob's signed digest). Its fields steer
//! where bytes come from, never how much memory is used: the reader's state is at most 200
//! bytes on a 32-bit target (a `const_assert!`), whatever the partition's size.
//!
//! ```
//! # use nrtucode::update::package::{Event, PackageReader, PackageError};
//! // A package whose header is cut short is incomplete; one with another magic is refused.
//! let mut reader = PackageReader::new();
//! reader.feed(b"NRTUUPDT", |_| Ok::<(), PackageError>(())).unwrap();
//! assert_eq!(reader.finish(), Err(PackageError::Incomplete));
//! let mut reader = PackageReader::new();
//! let refused = reader.feed(&[0u8; 96], |_| Ok::<(), PackageError>(()));
//! assert_eq!(refused, Err(PackageError::Magic));
//! ```

use core::fmt;

use crate::digest::{Sha256Hasher, SoftSha256};
use crate::partition::BlobId;
use crate::partition::format::{BLOB_ALIGN, H_BLOBS_OFF, MAX_TOC};

/// The first eight bytes of a package: `NRTUUPDT`.
pub const MAGIC: [u8; 8] = *b"NRTUUPDT";
/// The package format's version.
pub const VERSION: u16 = 1;
/// Bytes of a package's header.
pub const HEADER_LEN: usize = 96;
/// Bytes of a delta package's item.
pub const ITEM_LEN: usize = 8;

const KIND_WHOLE: u8 = 1;
const KIND_DELTA: u8 = 2;
const ITEM_CARRIED: u8 = 1;
const ITEM_COPIED: u8 = 2;

/// What follows a package's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum PackageKind {
    /// The new partition, every byte.
    Whole,
    /// The new partition's signed prefix, then an item per table-of-contents entry.
    Delta,
}

impl PackageKind {
    /// `whole` or `delta`.
    pub const fn name(self) -> &'static str {
        match self {
            PackageKind::Whole => "whole",
            PackageKind::Delta => "delta",
        }
    }
}

/// A package's header, as read (nothing in it is vouched for: the new partition's signature
/// and digests are checked once it is written whole).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct PackageHeader {
    /// Whole or delta.
    pub kind: PackageKind,
    /// The new partition's `total_len`.
    pub total_len: u32,
    /// The new partition's `blobs_off`: the bytes of its signed prefix and their padding.
    pub prefix_len: u32,
    /// Delta: the items (the new partition's table-of-contents entries); whole: 0.
    pub items: u16,
    /// Delta: the items whose stored bytes the package carries; whole: 0.
    pub carried: u16,
    /// The SHA-256 of the base's signed prefix ([`base_digest`]).
    pub base: [u8; 32],
    /// The SHA-256 of the new partition's signed prefix ([`base_digest`] of it): what a
    /// resumed install finds in the slot it writes.
    pub target: [u8; 32],
}

/// One item of a delta package: where a table-of-contents entry's stored bytes come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Item {
    /// `stored_len` bytes that follow in the package.
    Carried {
        /// Bytes that follow (> 0).
        stored_len: u32,
    },
    /// The stored bytes of the base's entry `base` (`stored_len` of them, as the base's table
    /// of contents says).
    Copied {
        /// The base's table-of-contents entry.
        base: BlobId,
        /// Its stored length.
        stored_len: u32,
    },
}

impl Item {
    /// Stored bytes of the entry.
    pub const fn stored_len(&self) -> u32 {
        match *self {
            Item::Carried { stored_len } | Item::Copied { stored_len, .. } => stored_len,
        }
    }

    /// The item's eight bytes.
    pub fn encode(&self) -> [u8; ITEM_LEN] {
        let (source, base) = match *self {
            Item::Carried { .. } => (ITEM_CARRIED, 0u16),
            Item::Copied { base, .. } => (ITEM_COPIED, base.index() as u16),
        };
        let [b0, b1] = base.to_le_bytes();
        let [l0, l1, l2, l3] = self.stored_len().to_le_bytes();
        [source, 0, b0, b1, l0, l1, l2, l3]
    }

    /// The item of `bytes`, or why not ([`PackageError::Item`] with `index`, the item's
    /// number).
    pub fn parse(bytes: &[u8; ITEM_LEN], index: u16) -> Result<Self, PackageError> {
        let [source, reserved, b0, b1, l0, l1, l2, l3] = *bytes;
        let base = u16::from_le_bytes([b0, b1]);
        let stored_len = u32::from_le_bytes([l0, l1, l2, l3]);
        let bad = PackageError::Item { index };
        if reserved != 0 || stored_len == 0 {
            return Err(bad);
        }
        match source {
            ITEM_CARRIED if base == 0 => Ok(Item::Carried { stored_len }),
            ITEM_COPIED if usize::from(base) < MAX_TOC => Ok(Item::Copied {
                base: BlobId::new(base),
                stored_len,
            }),
            _ => Err(bad),
        }
    }
}

/// Why a package was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum PackageError {
    /// The first eight bytes are not `NRTUUPDT`: not a package.
    Magic,
    /// A package format version this reader does not know.
    Version(u16),
    /// A header field out of its range: the header length, the kind, a reserved byte, a
    /// prefix longer than the partition, more carried items than items, more items than a
    /// table of contents holds.
    Header,
    /// Item `index` (from 0) is malformed: an unknown source, a reserved byte, a length of 0.
    Item {
        /// The item's number.
        index: u16,
    },
    /// Item `index` copies an entry the base does not have, or of another length.
    Copy {
        /// The item's number.
        index: u16,
    },
    /// The package was made for another partition than the slot running (its base digest is
    /// not the running slot's), or the running slot holds no partition.
    BaseMismatch,
    /// The items carry another number of blobs than the header says.
    CarriedCount,
    /// Bytes after the last item (or after a whole package's partition).
    Trailing,
    /// The package ended before its last item.
    Incomplete,
    /// A delta that carries a blob its base holds (or copies one it does not): packages copy
    /// exactly the blobs the base holds, the rule a resumed install finds its place by.
    NotCanonical,
}

impl fmt::Display for PackageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PackageError::Magic => f.write_str("not an update package (no NRTUUPDT magic)"),
            PackageError::Version(v) => write!(f, "update package version {v} is not known"),
            PackageError::Header => f.write_str("update package header out of range"),
            PackageError::Item { index } => write!(f, "update package item {index} malformed"),
            PackageError::Copy { index } => write!(
                f,
                "update package item {index} copies an entry the base does not hold"
            ),
            PackageError::BaseMismatch => f.write_str(
                "the update package was made for another partition than the one running",
            ),
            PackageError::CarriedCount => {
                f.write_str("the update package carries another number of blobs than it says")
            }
            PackageError::Trailing => f.write_str("bytes after the update package's end"),
            PackageError::Incomplete => f.write_str("the update package ended early"),
            PackageError::NotCanonical => f.write_str(
                "the update package carries a blob its base holds: not as nrtucode package writes it",
            ),
        }
    }
}

impl core::error::Error for PackageError {}

impl PackageHeader {
    /// The header's 96 bytes.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        let kind = match self.kind {
            PackageKind::Whole => KIND_WHOLE,
            PackageKind::Delta => KIND_DELTA,
        };
        let fields: [(usize, &[u8]); 10] = [
            (0x00, &MAGIC),
            (0x08, &VERSION.to_le_bytes()),
            (0x0a, &(HEADER_LEN as u16).to_le_bytes()),
            (0x0c, &[kind]),
            (0x10, &self.total_len.to_le_bytes()),
            (0x14, &self.prefix_len.to_le_bytes()),
            (0x18, &self.items.to_le_bytes()),
            (0x1a, &self.carried.to_le_bytes()),
            (0x20, &self.base),
            (0x40, &self.target),
        ];
        for (at, bytes) in fields {
            if let Some(dst) = out.get_mut(at..at.saturating_add(bytes.len())) {
                dst.copy_from_slice(bytes);
            }
        }
        out
    }

    /// The header at the start of `bytes` ([`HEADER_LEN`] bytes are read), checked field by
    /// field.
    pub fn parse(bytes: &[u8]) -> Result<Self, PackageError> {
        let h = bytes.get(..HEADER_LEN).ok_or(PackageError::Incomplete)?;
        let u16_at = |at: usize| {
            h.get(at..at + 2)
                .and_then(|b| b.try_into().ok())
                .map_or(0, u16::from_le_bytes)
        };
        let u32_at = |at: usize| {
            h.get(at..at + 4)
                .and_then(|b| b.try_into().ok())
                .map_or(0, u32::from_le_bytes)
        };
        if h.get(..8) != Some(&MAGIC[..]) {
            return Err(PackageError::Magic);
        }
        if u16_at(0x08) != VERSION {
            return Err(PackageError::Version(u16_at(0x08)));
        }
        let reserved = [0x0d, 0x0e, 0x0f, 0x1c, 0x1d, 0x1e, 0x1f];
        if usize::from(u16_at(0x0a)) != HEADER_LEN
            || reserved.iter().any(|&at| h.get(at) != Some(&0))
        {
            return Err(PackageError::Header);
        }
        let (total_len, prefix_len) = (u32_at(0x10), u32_at(0x14));
        let (items, carried) = (u16_at(0x18), u16_at(0x1a));
        let kind = match h.get(0x0c) {
            Some(&KIND_WHOLE) if items == 0 && carried == 0 => PackageKind::Whole,
            Some(&KIND_DELTA) if carried <= items && usize::from(items) <= MAX_TOC => {
                PackageKind::Delta
            }
            _ => return Err(PackageError::Header),
        };
        if prefix_len == 0 || prefix_len > total_len {
            return Err(PackageError::Header);
        }
        let digest = |at: usize| {
            let mut d = [0u8; 32];
            d.copy_from_slice(h.get(at..at + 32).ok_or(PackageError::Header)?);
            Ok::<_, PackageError>(d)
        };
        Ok(PackageHeader {
            kind,
            total_len,
            prefix_len,
            items,
            carried,
            base: digest(0x20)?,
            target: digest(0x40)?,
        })
    }
}

/// The base digest of a partition: the SHA-256 of its bytes before its blob area (`blobs_off`
/// from its header: the header, the tables, the table of contents, the signature and its
/// padding), which name every blob by the digest of its stored bytes. `None` when `partition`
/// is shorter than its header says.
pub fn base_digest(partition: &[u8]) -> Option<[u8; 32]> {
    base_digest_with(partition, &mut SoftSha256::new())
}

/// [`base_digest`] with any SHA-256 (a hardware engine).
pub fn base_digest_with<H: Sha256Hasher + ?Sized>(
    partition: &[u8],
    hasher: &mut H,
) -> Option<[u8; 32]> {
    let blobs_off = partition
        .get(H_BLOBS_OFF..H_BLOBS_OFF + 4)
        .and_then(|b| b.try_into().ok())
        .map(u32::from_le_bytes)?;
    let prefix = partition.get(..usize::try_from(blobs_off).ok()?)?;
    hasher.reset();
    hasher.update(prefix);
    Some(hasher.finish())
}

/// What a package yields, in order: together, the new partition's bytes.
#[derive(Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// The header, read and checked (before any other event): the moment to check the base.
    Header(PackageHeader),
    /// Bytes of the new partition that follow in the package.
    Bytes(&'a [u8]),
    /// The stored bytes of the base's entry `base`, `stored_len` of them (a delta item).
    Copy {
        /// The item's number.
        index: u16,
        /// The base's table-of-contents entry.
        base: BlobId,
        /// Its stored length.
        stored_len: u32,
    },
    /// `n` zero bytes (the padding after a blob, to a multiple of 16).
    Zeros(u8),
}

/// Where the reader is in a package.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    Header,
    /// Bytes of the whole partition, or of the delta's prefix, still to come.
    Body {
        left: u32,
    },
    ItemHead,
    Carried {
        left: u32,
    },
    Done,
    Failed,
}

/// A package read as it arrives, in chunks of any size: the [`Event`]s that make the new
/// partition, one at a time ([`next`](Self::next), for a driver that awaits between them) or
/// all a chunk completes ([`feed`](Self::feed)). At most 200 bytes of state on a 32-bit
/// target, no allocation.
#[derive(Clone, Debug)]
pub struct PackageReader {
    buf: [u8; HEADER_LEN],
    got: usize,
    header: Option<PackageHeader>,
    phase: Phase,
    /// Items read so far.
    item: u16,
    /// Carried items read so far.
    carried: u16,
    /// Bytes of the new partition yielded so far.
    yielded: u32,
    /// The padding owed after the item just yielded ([`Event::Zeros`] comes next).
    pad: u8,
}

impl Default for PackageReader {
    fn default() -> Self {
        Self::new()
    }
}

impl PackageReader {
    /// A reader at the package's first byte.
    pub const fn new() -> Self {
        PackageReader {
            buf: [0; HEADER_LEN],
            got: 0,
            header: None,
            phase: Phase::Header,
            item: 0,
            carried: 0,
            yielded: 0,
            pad: 0,
        }
    }

    /// A reader resumed after `header` inside a package, where a resumed install found the
    /// bytes before it written and checked: at item `item` (`carried` of the items before it
    /// carried bytes), `yielded` bytes of the new partition behind it, in `phase`
    /// ([`Phase::Body`] inside the prefix or a whole package, [`Phase::Carried`] inside a
    /// carried blob, [`Phase::ItemHead`] at an item's first byte, which past the last item is
    /// the end).
    pub(crate) fn resumed(
        header: PackageHeader,
        item: u16,
        carried: u16,
        yielded: u32,
        phase: Phase,
    ) -> Result<Self, PackageError> {
        let mut reader = PackageReader {
            buf: [0; HEADER_LEN],
            got: 0,
            header: Some(header),
            phase,
            item,
            carried,
            yielded,
            pad: 0,
        };
        if phase == Phase::ItemHead && item >= header.items {
            reader.phase = reader.end()?;
        }
        Ok(reader)
    }

    /// The header, once read.
    pub fn header(&self) -> Option<PackageHeader> {
        self.header
    }

    /// Bytes of the new partition yielded so far.
    pub fn yielded(&self) -> u32 {
        self.yielded
    }

    /// Reads `chunk`, giving `each` every event it completes, in order. On an error (the
    /// package's, or one `each` returned) the reader refuses everything after it.
    pub fn feed<E: From<PackageError>>(
        &mut self,
        chunk: &[u8],
        mut each: impl FnMut(Event<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut rest = chunk;
        while let Some(event) = self.next(&mut rest)? {
            if let Err(e) = each(event) {
                self.fail();
                return Err(e);
            }
        }
        Ok(())
    }

    /// The next event of the package from `rest` (advanced past the bytes it took), or `None`
    /// when `rest` holds no more of one (give the next chunk). On an error the reader refuses
    /// everything after it.
    pub fn next<'c>(&mut self, rest: &mut &'c [u8]) -> Result<Option<Event<'c>>, PackageError> {
        let event = self.step(rest);
        if event.is_err() {
            self.fail();
        }
        event
    }

    /// Refuses everything from now on (a driver whose handling of an event failed).
    pub fn fail(&mut self) {
        self.phase = Phase::Failed;
        self.pad = 0;
    }

    fn step<'c>(&mut self, rest: &mut &'c [u8]) -> Result<Option<Event<'c>>, PackageError> {
        loop {
            if self.pad > 0 {
                let pad = core::mem::take(&mut self.pad);
                self.advance(usize::from(pad))?;
                self.next_item()?;
                return Ok(Some(Event::Zeros(pad)));
            }
            if rest.is_empty() {
                return Ok(None);
            }
            match self.phase {
                Phase::Failed => return Err(PackageError::Incomplete),
                Phase::Done => return Err(PackageError::Trailing),
                Phase::Header => {
                    *rest = self.fill(rest, HEADER_LEN);
                    if self.got == HEADER_LEN {
                        self.got = 0;
                        let header = PackageHeader::parse(&self.buf)?;
                        self.header = Some(header);
                        let left = match header.kind {
                            PackageKind::Whole => header.total_len,
                            PackageKind::Delta => header.prefix_len,
                        };
                        self.phase = Phase::Body { left };
                        return Ok(Some(Event::Header(header)));
                    }
                }
                Phase::Body { left } | Phase::Carried { left } => {
                    let carried = matches!(self.phase, Phase::Carried { .. });
                    let n = rest.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    let (now, later) = rest.split_at(n);
                    *rest = later;
                    self.advance(n)?;
                    let left = left.saturating_sub(u32::try_from(n).unwrap_or(u32::MAX));
                    if left > 0 {
                        self.phase = if carried {
                            Phase::Carried { left }
                        } else {
                            Phase::Body { left }
                        };
                    } else if carried {
                        self.end_item()?;
                    } else {
                        self.phase = self.after_prefix()?;
                    }
                    return Ok(Some(Event::Bytes(now)));
                }
                Phase::ItemHead => {
                    *rest = self.fill(rest, ITEM_LEN);
                    if self.got == ITEM_LEN {
                        self.got = 0;
                        let mut bytes = [0u8; ITEM_LEN];
                        bytes.copy_from_slice(self.buf.get(..ITEM_LEN).unwrap_or(&[0; 8]));
                        let index = self.item;
                        match Item::parse(&bytes, index)? {
                            Item::Carried { stored_len } => {
                                self.carried = self.carried.saturating_add(1);
                                self.phase = Phase::Carried { left: stored_len };
                            }
                            Item::Copied { base, stored_len } => {
                                self.advance(stored_len as usize)?;
                                self.end_item()?;
                                return Ok(Some(Event::Copy {
                                    index,
                                    base,
                                    stored_len,
                                }));
                            }
                        }
                    }
                }
            }
        }
    }

    /// Takes bytes of `rest` into the buffer until it holds `len`; the rest of `rest`.
    fn fill<'r>(&mut self, rest: &'r [u8], len: usize) -> &'r [u8] {
        let want = len.saturating_sub(self.got).min(rest.len());
        let (now, later) = rest.split_at(want);
        if let Some(dst) = self.buf.get_mut(self.got..self.got + want) {
            dst.copy_from_slice(now);
        }
        self.got += want;
        later
    }

    /// Counts `n` bytes yielded; refused past the header's `total_len`.
    fn advance(&mut self, n: usize) -> Result<(), PackageError> {
        let total = self.header.map_or(0, |h| h.total_len);
        self.yielded = u32::try_from(n)
            .ok()
            .and_then(|n| self.yielded.checked_add(n))
            .filter(|&y| y <= total)
            .ok_or(PackageError::Header)?;
        Ok(())
    }

    /// After the whole partition or the delta's prefix: the first item, or the end.
    fn after_prefix(&self) -> Result<Phase, PackageError> {
        match self.header {
            Some(h) if h.kind == PackageKind::Delta && h.items > 0 => Ok(Phase::ItemHead),
            Some(_) => self.end(),
            None => Err(PackageError::Incomplete),
        }
    }

    /// After an item's bytes: its padding is owed (the next event), or the next item.
    fn end_item(&mut self) -> Result<(), PackageError> {
        let pad = (BLOB_ALIGN - self.yielded as usize % BLOB_ALIGN) % BLOB_ALIGN;
        if pad > 0 {
            self.pad = pad as u8;
            Ok(())
        } else {
            self.next_item()
        }
    }

    /// The next item, or the end.
    fn next_item(&mut self) -> Result<(), PackageError> {
        self.item = self.item.saturating_add(1);
        let items = self.header.map_or(0, |h| h.items);
        self.phase = if self.item < items {
            Phase::ItemHead
        } else {
            self.end()?
        };
        Ok(())
    }

    /// The end: every byte the header announced, and as many carried items as it says.
    fn end(&self) -> Result<Phase, PackageError> {
        let header = self.header.ok_or(PackageError::Incomplete)?;
        if self.carried != header.carried {
            return Err(PackageError::CarriedCount);
        }
        if self.yielded != header.total_len {
            return Err(PackageError::Header);
        }
        Ok(Phase::Done)
    }

    /// `Ok` once the package was read to its end (and nothing refused).
    pub fn finish(&self) -> Result<(), PackageError> {
        match (self.phase, self.pad) {
            (Phase::Done, 0) => Ok(()),
            _ => Err(PackageError::Incomplete),
        }
    }
}

// The reader's state on a 32-bit target (CI builds the core for thumbv7em, where this holds):
// what a device keeps for a package besides its install, whatever the partition's size.
#[cfg(target_pointer_width = "32")]
static_assertions::const_assert!(core::mem::size_of::<PackageReader>() <= 200);
