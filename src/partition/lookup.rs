//! The resolvers over a [`VerifiedPartition`], through the same body of checks as the embedded
//! tables (`crate::resolve`: `before_tables`, `after_scan`, `prof_pick`), answering a [`Blob`]
//! handle; and the whole-partition digest check.

use super::blob::{Blob, BlobId};
use super::error::LoadError;
use super::format::SLOT_COUNT;
use super::tables::Getter;
use super::trust::VerifiedPartition;
use crate::digest::Sha256Hasher;
use crate::env::Env;
use crate::resolve::{Scan, after_scan, before_tables, prof_pick};
use crate::{Flavor, ImageIndex, ProfKind, Region, ResolveErr};

impl<'a> VerifiedPartition<'a> {
    /// The blob a getter names. Every getter of a verified partition names an entry of its
    /// table of contents (parse checked each); a `None` here would be a broken invariant and
    /// answers the NULL getter's code rather than a blob.
    fn answer(&self, getter: Getter, null: ResolveErr) -> Result<Blob<'a>, ResolveErr> {
        self.tables().blob(getter).ok_or(null)
    }

    /// [`crate::get_memory_image`] over this partition: the same arguments, order of checks,
    /// environment reads and codes (1, 2, 3, 8), answering the blob's handle; its bytes come
    /// through [`Blob::check`] or [`Blob::load_into`].
    pub fn get_memory_image<E: Env + ?Sized>(
        &self,
        idx: u32,
        region: i32,
        flavor: i32,
        env: &E,
    ) -> Result<Blob<'a>, ResolveErr> {
        let flavor = before_tables(idx, SLOT_COUNT, flavor, env)?;
        let tables = self.tables();
        let found = tables.scan(idx as usize, flavor);
        let scan = match &found {
            Ok(regions) => Scan::Found(regions),
            Err(true) => Scan::EmptySlot,
            Err(false) => Scan::NotFound,
        };
        self.answer(after_scan(scan, region)?, ResolveErr::NullGetter)
    }

    /// Typed [`get_memory_image`](Self::get_memory_image).
    pub fn resolve_image<E: Env + ?Sized>(
        &self,
        idx: ImageIndex,
        region: Region,
        flavor: Flavor,
        env: &E,
    ) -> Result<Blob<'a>, ResolveErr> {
        self.get_memory_image(idx.raw(), region.raw(), flavor.raw(), env)
    }

    /// [`crate::get_hwdecode_table`] over this partition (codes 1 and 2), answering the blob's
    /// handle.
    pub fn get_hwdecode_table(&self, idx: u32, kind: i32) -> Result<Blob<'a>, ResolveErr> {
        let idx = idx as usize;
        if idx >= SLOT_COUNT {
            return Err(ResolveErr::IndexOutOfRange);
        }
        let getter = prof_pick(&self.tables().prof_pair(idx), kind)?;
        self.answer(getter, ResolveErr::NoProfiler)
    }

    /// Typed [`get_hwdecode_table`](Self::get_hwdecode_table).
    pub fn resolve_hwdecode(
        &self,
        idx: ImageIndex,
        kind: ProfKind,
    ) -> Result<Blob<'a>, ResolveErr> {
        self.get_hwdecode_table(idx.raw(), kind.raw())
    }

    /// The whole blob of table-of-contents entry `blob` (what a getter naming it answers), for
    /// a host that checks or loads every blob by number; `None` past the table of contents.
    pub fn blob(&self, blob: BlobId) -> Option<Blob<'a>> {
        self.tables().blob(Getter::Blob(blob))
    }

    /// The whole partition's digests, once: the stored bytes of every blob hashed in place with
    /// `hasher` (a compressed blob's stream included) against the signed digests of the stored
    /// bytes. The first mismatch. After it held, over memory nobody can change since, every
    /// stored blob's [`Blob::unchecked_in_place`] bytes are the signed ones (a compressed blob
    /// is checked again, decoded, by [`Blob::load_into`]).
    pub fn check_blobs<H: Sha256Hasher + ?Sized>(&self, hasher: &mut H) -> Result<(), LoadError> {
        self.tables().check_stored_digests(hasher)
    }
}
