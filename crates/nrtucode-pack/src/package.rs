//! Update packages (`docs/update.md`, "Update packages, byte for byte"): [`update_package`]
//! writes one from the partition a device runs (the base) and the new one; [`apply_package`]
//! gives the new partition back from the base and a package, through the reader the device
//! uses (`nrtucode::update::package::PackageReader`), and [`read_package`] says what a package
//! holds.

use std::collections::HashMap;

use nrtucode::partition::format::{BLOB_ALIGN, H_BLOBS_OFF, MAX_TOC};
use nrtucode::partition::{BlobId, Partition, TocEntry};
use nrtucode::update::package::{
    Event, HEADER_LEN, Item, PackageError, PackageHeader, PackageKind, PackageReader, base_digest,
};

use crate::PackError;

/// What [`read_package`] found in a package.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackageSummary {
    /// The header.
    pub header: PackageHeader,
    /// Blobs whose stored bytes the package carries (delta), and their bytes.
    pub carried: (u16, u64),
    /// Blobs copied from the base (delta), and their bytes.
    pub copied: (u16, u64),
}

/// An update package that turns `base` (the partition a device runs) into `new`: a delta that
/// carries `new`'s signed prefix and the stored bytes of the blobs `base` does not hold (by
/// the SHA-256 of their stored bytes), the rest copied by the device from its running slot;
/// or, when that is not smaller, the whole of `new` after the header. So a package is never
/// longer than `new` plus [`HEADER_LEN`] bytes. Both must parse as partitions (the signatures
/// are the device's to check); the package is read back through the device's reader and must
/// give `new`, byte for byte, before it is returned.
pub fn update_package(base: &[u8], new: &[u8]) -> Result<Vec<u8>, PackError> {
    let base_p = Partition::parse(base).map_err(|_| PackError::NotPartition("the base"))?;
    let new_p = Partition::parse(new).map_err(|_| PackError::NotPartition("the new one"))?;
    let (base, new) = (base_p.bytes(), new_p.bytes());
    let digest = base_digest(base).ok_or(PackError::NotPartition("the base"))?;
    let total_len = u32::try_from(new.len()).map_err(|_| PackError::TooLarge("total_len"))?;
    let prefix_len = blobs_off(new).ok_or(PackError::NotPartition("the new one"))?;
    let target = base_digest(new).ok_or(PackError::NotPartition("the new one"))?;

    let base_tables = base_p.untrusted_tables();
    let mut held: HashMap<[u8; 32], (BlobId, u32)> = HashMap::new();
    for id in base_tables.blob_ids() {
        let e = entry(&base_tables.toc_entry(id))?;
        held.entry(e.stored_sha256).or_insert((id, e.stored_len));
    }
    let new_tables = new_p.untrusted_tables();
    let mut body = Vec::new();
    let mut carried = 0u16;
    let mut items = 0u16;
    for id in new_tables.blob_ids() {
        let e = entry(&new_tables.toc_entry(id))?;
        let item = match held.get(&e.stored_sha256) {
            Some(&(base, stored_len)) if stored_len == e.stored_len => {
                Item::Copied { base, stored_len }
            }
            _ => Item::Carried {
                stored_len: e.stored_len,
            },
        };
        body.extend_from_slice(&item.encode());
        if let Item::Carried { stored_len } = item {
            let at = e.offset as usize;
            let bytes = new
                .get(at..at + stored_len as usize)
                .ok_or(PackError::NotPartition("the new one"))?;
            body.extend_from_slice(bytes);
            carried += 1;
        }
        items += 1;
    }
    let delta_len = HEADER_LEN + prefix_len as usize + body.len();
    let header = |kind, items, carried| PackageHeader {
        kind,
        total_len,
        prefix_len,
        items,
        carried,
        base: digest,
        target,
    };
    let mut out;
    if delta_len < HEADER_LEN + new.len() {
        out = header(PackageKind::Delta, items, carried).encode().to_vec();
        out.extend_from_slice(&new[..prefix_len as usize]);
        out.extend_from_slice(&body);
    } else {
        out = header(PackageKind::Whole, 0, 0).encode().to_vec();
        out.extend_from_slice(new);
    }
    // What the device will read must be the new partition: checked here, through its reader.
    let back = apply_package(base, &out)?;
    if back != new {
        return Err(PackError::Package(PackageError::Header));
    }
    Ok(out)
}

/// The new partition a package gives over `base`, read by the device's reader: its header's
/// base must be `base`'s, every copied item must name an entry of `base` of its length, and
/// the package must be read to its end. Nothing is sized from the package: the output grows as
/// its bytes arrive, and is refused past `base` and the package together (plus each item's
/// padding), which bounds what a package can give.
pub fn apply_package(base: &[u8], package: &[u8]) -> Result<Vec<u8>, PackError> {
    let base_p = Partition::parse(base).map_err(|_| PackError::NotPartition("the base"))?;
    let tables = base_p.untrusted_tables();
    let base = base_p.bytes();
    let digest = base_digest(base);
    let limit = base.len() + package.len() + BLOB_ALIGN * MAX_TOC;
    let mut out = Vec::new();
    let mut reader = PackageReader::new();
    reader.feed(package, |event| -> Result<(), PackError> {
        match event {
            Event::Header(h) if Some(h.base) != digest => {
                return Err(PackageError::BaseMismatch.into());
            }
            Event::Header(h) if h.total_len as usize > limit => {
                return Err(PackError::TooLarge("the package's total_len"));
            }
            Event::Header(_) => {}
            Event::Bytes(bytes) => out.extend_from_slice(bytes),
            Event::Zeros(n) => out.resize(out.len() + usize::from(n), 0),
            Event::Copy {
                index,
                base: blob,
                stored_len,
            } => {
                let refused = PackageError::Copy { index };
                let e = tables
                    .toc_entry(blob)
                    .filter(|e| e.stored_len == stored_len)
                    .ok_or(refused)?;
                let at = e.offset as usize;
                out.extend_from_slice(base.get(at..at + stored_len as usize).ok_or(refused)?);
            }
        }
        Ok(())
    })?;
    reader.finish()?;
    Ok(out)
}

/// What a package holds, read to its end by the device's reader (no base needed): its header,
/// the blobs it carries and the blobs it copies, with their stored bytes.
pub fn read_package(package: &[u8]) -> Result<PackageSummary, PackError> {
    let mut reader = PackageReader::new();
    let mut copied = (0u16, 0u64);
    let mut zeros = 0u64;
    reader.feed(package, |event| -> Result<(), PackError> {
        match event {
            Event::Copy { stored_len, .. } => {
                copied = (copied.0 + 1, copied.1 + u64::from(stored_len));
            }
            Event::Zeros(n) => zeros += u64::from(n),
            Event::Header(_) | Event::Bytes(_) => {}
        }
        Ok(())
    })?;
    reader.finish()?;
    let header = reader.header().ok_or(PackageError::Incomplete)?;
    // The reader checked that the bytes given add up to `total_len`: the carried blobs' are
    // what the prefix, the copies and the padding leave.
    let carried = match header.kind {
        PackageKind::Delta => (
            header.carried,
            u64::from(header.total_len) - u64::from(header.prefix_len) - copied.1 - zeros,
        ),
        PackageKind::Whole => (0, 0),
    };
    Ok(PackageSummary {
        header,
        carried,
        copied,
    })
}

/// A table-of-contents entry parse vouched for (`None` only past the table).
fn entry(e: &Option<TocEntry>) -> Result<TocEntry, PackError> {
    e.ok_or(PackError::NotPartition("a table-of-contents entry"))
}

/// The `blobs_off` field of a parsed partition: its signed prefix's length.
fn blobs_off(partition: &[u8]) -> Option<u32> {
    let b = partition.get(H_BLOBS_OFF..H_BLOBS_OFF + 4)?;
    Some(u32::from_le_bytes(b.try_into().ok()?))
}
