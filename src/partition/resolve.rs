//! The resolvers over a [`VerifiedPartition`], through the same body of checks as the embedded
//! tables (`crate::resolve`: `before_tables`, `after_scan`, `prof_pick`), and the digest checks.

use super::error::{BlobUse, InPlaceError, PartitionError};
use super::format::*;
use super::parse::{Getter, TocEntry, array, getter_at, le16, le32};
use super::verify::VerifiedPartition;
use crate::env::Env;
use crate::resolve::{Scan, after_scan, before_tables, prof_pick};
use crate::verify::{Sha256Digest, Sha256Hasher, SoftSha256, VerifyError, copy_checked};
use crate::{Flavor, ImageIndex, ProfKind, Region, ResolveErr};

impl<'a> VerifiedPartition<'a> {
    /// The `image_list` slot `idx`: (first descriptor, count); `None` past the slots.
    fn slot(&self, idx: usize) -> Option<(usize, usize)> {
        let at = SLOTS_OFF.checked_add(idx.checked_mul(SLOT_LEN)?)?;
        let first = le16(self.p.bytes, at)?;
        let count = le16(self.p.bytes, at + 2)?;
        Some((usize::from(first), usize::from(count)))
    }

    /// Descriptor `d`: its flavor key and four getters.
    fn descriptor(&self, d: usize) -> Option<(i32, [Option<Getter>; 4])> {
        let at = DESCS_OFF.checked_add(d.checked_mul(DESC_LEN)?)?;
        let key = le32(self.p.bytes, at)? as i32;
        let g = |r: usize| getter_at(self.p.bytes, at + 4 + r * GETTER_LEN);
        Some((key, [g(0), g(1), g(2), g(3)]))
    }

    /// The two profiler getters of slot `idx`.
    fn prof_pair(&self, idx: usize) -> [Option<Getter>; 2] {
        let at = self.p.prof_off + idx * PROF_LEN;
        [
            getter_at(self.p.bytes, at),
            getter_at(self.p.bytes, at + GETTER_LEN),
        ]
    }

    /// Table-of-contents entry `n`.
    pub fn toc_entry(&self, n: u16) -> Option<TocEntry> {
        let n = usize::from(n);
        if n >= self.p.toc_count {
            return None;
        }
        let at = self.p.toc_off + n * TOC_LEN;
        Some(TocEntry {
            offset: le32(self.p.bytes, at + T_OFFSET)?,
            stored_len: le32(self.p.bytes, at + T_STORED_LEN)?,
            decoded_len: le32(self.p.bytes, at + T_DECODED_LEN)?,
            codec: self.p.bytes.get(at + T_CODEC).copied()?,
            sha256: array::<32>(self.p.bytes, at + T_SHA256)?,
            stored_sha256: array::<32>(self.p.bytes, at + T_STORED_SHA256)?,
        })
    }

    /// The stored bytes of entry `n` (compressed ones too).
    pub fn stored_bytes(&self, n: u16) -> Option<&'a [u8]> {
        self.stored(n).map(|(bytes, _)| bytes)
    }

    /// The stored bytes and the codec of entry `n`, reading only those fields (the lookup's
    /// path; [`toc_entry`](Self::toc_entry) also copies the digest).
    fn stored(&self, n: u16) -> Option<(&'a [u8], u8)> {
        let n = usize::from(n);
        if n >= self.p.toc_count {
            return None;
        }
        let at = self.p.toc_off.checked_add(n * TOC_LEN)?;
        let start = usize::try_from(le32(self.p.bytes, at + T_OFFSET)?).ok()?;
        let len = usize::try_from(le32(self.p.bytes, at + T_STORED_LEN)?).ok()?;
        let codec = *self.p.bytes.get(at + T_CODEC)?;
        Some((self.p.bytes.get(start..start.checked_add(len)?)?, codec))
    }

    /// What a getter returns in place: the blob, or an empty slice at its start or one past its
    /// end (the vendor's cursor address); a compressed blob cannot be returned in place.
    pub fn getter_bytes(&self, getter: Getter) -> Result<&'a [u8], InPlaceError> {
        let n = getter.blob();
        let not_stored = |codec| InPlaceError::NotStored { blob: n, codec };
        let Some((bytes, codec)) = self.stored(n) else {
            return Err(not_stored(u8::MAX)); // never: parse checked every reference
        };
        match getter {
            Getter::Blob(_) if codec != CODEC_STORED => Err(not_stored(codec)),
            Getter::Blob(_) => Ok(bytes),
            Getter::CursorStart(_) => Ok(bytes.split_at(0).0),
            Getter::CursorEnd(_) => Ok(bytes.split_at(bytes.len()).1),
        }
    }

    /// The first descriptor of slot `idx` with key `flavor` (the vendor's linear scan), or the
    /// empty-slot / not-found answer.
    fn scan(&self, idx: usize, flavor: i32) -> Result<(i32, [Option<Getter>; 4]), bool> {
        let (first, count) = self.slot(idx).ok_or(false)?;
        if count == 0 {
            return Err(true);
        }
        // Keys only, until the first match; then that descriptor's four getters.
        let at = |d: usize| DESCS_OFF.checked_add(d.checked_mul(DESC_LEN)?);
        (first..first.saturating_add(count))
            .find(|&d| at(d).and_then(|at| le32(self.p.bytes, at)) == Some(flavor as u32))
            .and_then(|d| self.descriptor(d))
            .ok_or(false)
    }

    /// The getter `get_memory_image` reaches, or the vendor's answer.
    pub fn image_getter<E: Env + ?Sized>(
        &self,
        idx: u32,
        region: i32,
        flavor: i32,
        env: &E,
    ) -> Result<Getter, ResolveErr> {
        let flavor = before_tables(idx, SLOT_COUNT, flavor, env)?;
        let found = self.scan(idx as usize, flavor);
        let scan = match &found {
            Ok((_, regions)) => Scan::Found(regions),
            Err(true) => Scan::EmptySlot,
            Err(false) => Scan::NotFound,
        };
        after_scan(scan, region)
    }

    /// The getter `get_hwdecode_table` reaches, or the vendor's answer.
    pub fn prof_getter(&self, idx: u32, kind: i32) -> Result<Getter, ResolveErr> {
        let idx = idx as usize;
        if idx >= SLOT_COUNT {
            return Err(ResolveErr::IndexOutOfRange);
        }
        prof_pick(&self.prof_pair(idx), kind)
    }

    /// [`crate::get_memory_image`] over this partition: the same arguments, order of checks,
    /// environment reads and codes, and the bytes in place.
    ///
    /// A getter whose blob is stored compressed answers [`InPlaceError::NotStored`].
    pub fn get_memory_image<E: Env + ?Sized>(
        &self,
        idx: u32,
        region: i32,
        flavor: i32,
        env: &E,
    ) -> Result<&'a [u8], InPlaceError> {
        let getter = self.image_getter(idx, region, flavor, env)?;
        self.getter_bytes(getter)
    }

    /// [`crate::get_hwdecode_table`] over this partition.
    pub fn get_hwdecode_table(&self, idx: u32, kind: i32) -> Result<&'a [u8], InPlaceError> {
        let getter = self.prof_getter(idx, kind)?;
        self.getter_bytes(getter)
    }

    /// Typed [`get_memory_image`](Self::get_memory_image).
    pub fn resolve_image<E: Env + ?Sized>(
        &self,
        idx: ImageIndex,
        region: Region,
        flavor: Flavor,
        env: &E,
    ) -> Result<&'a [u8], InPlaceError> {
        self.get_memory_image(idx.raw(), region.raw(), flavor.raw(), env)
    }

    /// Typed [`get_hwdecode_table`](Self::get_hwdecode_table).
    pub fn resolve_hwdecode(
        &self,
        idx: ImageIndex,
        kind: ProfKind,
    ) -> Result<&'a [u8], InPlaceError> {
        self.get_hwdecode_table(idx.raw(), kind.raw())
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

    /// The first getter using blob `n`, in table order (image list, then profiler list).
    pub fn first_use(&self, n: u16) -> Option<BlobUse> {
        for idx in 0..SLOT_COUNT as u32 {
            for (key, regions) in self.descriptors(idx) {
                for (region, g) in Region::ALL.into_iter().zip(regions) {
                    if g.is_some_and(|g| g.blob() == n) {
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
            let pair = self.prof_pair(idx as usize);
            for (kind, g) in ProfKind::ALL.into_iter().zip(pair) {
                if g.is_some_and(|g| g.blob() == n) {
                    return Some(BlobUse::Prof { idx, kind });
                }
            }
        }
        None
    }

    /// The entry whose stored bytes are `blob` (same address and length).
    fn entry_of(&self, blob: &[u8]) -> Result<(u16, TocEntry), PartitionError> {
        (0..self.p.toc_count as u16)
            .find_map(|n| {
                let bytes = self.stored_bytes(n)?;
                (core::ptr::eq(bytes.as_ptr(), blob.as_ptr()) && bytes.len() == blob.len())
                    .then(|| self.toc_entry(n).map(|e| (n, e)))
                    .flatten()
            })
            .ok_or(PartitionError::NotABlob { len: blob.len() })
    }

    fn mismatch(&self, n: u16, expected: Sha256Digest, actual: Sha256Digest) -> PartitionError {
        PartitionError::DigestMismatch {
            blob: n,
            used_by: self.first_use(n),
            expected,
            actual,
        }
    }

    /// Hashes the stored bytes of blob `n` in place with `hasher` and compares them with the
    /// digest of the stored bytes in the signed table of contents: for a stored blob, its
    /// bytes ([`PartitionError::DigestMismatch`]); for a compressed one, its compressed stream
    /// ([`PartitionError::StoredDigestMismatch`]), which is what vouches for it before a
    /// decoder reads it.
    pub fn check_blob_with<H: Sha256Hasher + ?Sized>(
        &self,
        n: u16,
        hasher: &mut H,
    ) -> Result<(), PartitionError> {
        let (Some(e), Some(stored)) = (self.toc_entry(n), self.stored_bytes(n)) else {
            return Err(PartitionError::NotABlob { len: 0 });
        };
        hasher.reset();
        hasher.update(stored);
        let actual = hasher.finish();
        if actual == e.stored_sha256 {
            Ok(())
        } else if e.codec == CODEC_STORED {
            Err(self.mismatch(n, e.stored_sha256, actual))
        } else {
            Err(PartitionError::StoredDigestMismatch {
                blob: n,
                used_by: self.first_use(n),
                expected: e.stored_sha256,
                actual,
            })
        }
    }

    /// Hashes the stored bytes of every blob in place (software SHA-256), compressed ones
    /// included (their stream; their decoded bytes are checked again when they are decoded):
    /// the first mismatch, naming the blob and its first user.
    pub fn check_blobs(&self) -> Result<(), PartitionError> {
        let mut hasher = SoftSha256::new();
        (0..self.p.toc_count as u16).try_for_each(|n| self.check_blob_with(n, &mut hasher))
    }

    /// Copies `blob`, a slice a resolver of this partition returned, to the start of `dst`,
    /// hashing the copy in the same pass (software SHA-256) and comparing with the digest in
    /// the signed table of contents; returns the bytes written. On a mismatch they are zeroed.
    /// An empty slice (a cursor) copies nothing.
    pub fn copy_verified(&self, blob: &[u8], dst: &mut [u8]) -> Result<usize, PartitionError> {
        self.copy_verified_with(blob, dst, &mut SoftSha256::new())
    }

    /// [`copy_verified`](Self::copy_verified) with your hasher.
    pub fn copy_verified_with<H: Sha256Hasher + ?Sized>(
        &self,
        blob: &[u8],
        dst: &mut [u8],
        hasher: &mut H,
    ) -> Result<usize, PartitionError> {
        if blob.is_empty() {
            return Ok(0);
        }
        let (n, e) = self.entry_of(blob)?;
        if e.codec != CODEC_STORED {
            return Err(PartitionError::NotStored {
                blob: n,
                codec: e.codec,
            });
        }
        copy_checked(blob, dst, &e.sha256, hasher).map_err(|err| match err {
            VerifyError::Mismatch { expected, actual } => self.mismatch(n, expected, actual),
            VerifyError::BufferTooSmall { needed, available } => {
                PartitionError::BufferTooSmall { needed, available }
            }
            VerifyError::NotEmbedded { len } => PartitionError::NotABlob { len },
        })
    }
}
