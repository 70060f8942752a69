//! Feature `partition`: the engine's images come from a signed partition (`nrtucode pack`),
//! flashed on its own at the memory map's `__nrtucode_partition_start`, not from blobs linked
//! into the program. Its structure and signature are checked once, at boot ([`open`]); each
//! image is then copy-checked (stored) or decode-checked (deflate, feature `deflate`) into its
//! window against the SHA-256 in the signed table of contents ([`load`]).

use nrtucode::partition::{BlobId, Codec, LoadError, Loader, VerifiedPartition};
#[cfg(not(feature = "update"))]
use nrtucode::partition::{Partition, Policy, Source, TableClass, TrustError};
use nrtucode::{Flavor, ImageIndex, NoEnv, ProfKind, Region, ResolveErr, Resolver};

use crate::Loaded;
#[cfg(not(feature = "update"))]
use crate::hex::{HexBuf, hex};

include!(concat!(env!("OUT_DIR"), "/partition_key.rs"));

/// The lowest security counter this firmware accepts (`nrtucode pack --security-counter`): a
/// partition below it is a downgrade. A real loader keeps it where the partition cannot
/// rewrite it (OTP, a monotonic counter) and raises it after an update. (Feature `update`: the
/// state record keeps the minimum, raised by each confirmation.)
#[cfg(not(feature = "update"))]
pub const MIN_SECURITY_COUNTER: u32 = 1;

/// What the partition must be: at least this counter, the full library's tables.
#[cfg(not(feature = "update"))]
const POLICY: Policy = Policy {
    min_security_counter: MIN_SECURITY_COUNTER,
    expected_class: TableClass::Full,
};

/// What loading an item lends the reader: the software SHA-256 and, with `deflate`, the
/// inflater's ~11 KB (kept in the device-memory static).
pub type Scratch = Loader;

/// A fresh [`Scratch`].
pub fn scratch() -> Scratch {
    Loader::new()
}

/// Parses the partition and checks its signature, key, security counter and class, once.
/// `None` (logged) when anything is refused: nothing of it is used then.
#[cfg(not(feature = "update"))]
pub fn open() -> Option<VerifiedPartition<'static>> {
    let flash = crate::flash::partition();
    let at = flash.as_ptr() as usize;
    if TEST_KEY {
        defmt::warn!("partition key: the repository's test key, never for real firmware");
    }
    // Each step's own error in the log (`Erased`, `BadSignature`, `Rollback { … }`).
    let parsed = match Partition::parse(flash) {
        Ok(p) => p,
        Err(e) => {
            defmt::error!("partition at {:#010x} refused: {}", at, e);
            return None;
        }
    };
    match parsed.verify(&PARTITION_KEY, &POLICY) {
        Ok(p) => {
            let mut id_hex = HexBuf::new();
            // As the derived Format prints the source, with the build ID in hex.
            let (source, id, close) = match p.partition().source() {
                Source::BuildId(id) => ("BuildId(", hex(id, &mut id_hex), ")"),
                Source::NoBuildId => ("NoBuildId", "", ""),
                Source::Fixtures => ("Fixtures", "", ""),
            };
            defmt::info!(
                "partition at {:#010x}: {} bytes, {} blobs, class {=str}, security counter {} (minimum {}), source {=str}{=str}{=str}, signature ok",
                at,
                p.partition().bytes().len(),
                p.partition().blob_count(),
                p.partition().class().name(),
                p.partition().security_counter(),
                MIN_SECURITY_COUNTER,
                source,
                id,
                close
            );
            Some(p)
        }
        // The key ID as `nrtucode inspect` prints it, not as a decimal byte array.
        Err(TrustError::UnknownKey { found }) => {
            let mut found_hex = HexBuf::new();
            defmt::error!(
                "partition at {:#010x} refused: UnknownKey {{ found: {=str} }}",
                at,
                hex(&found, &mut found_hex)
            );
            None
        }
        Err(e) => {
            defmt::error!("partition at {:#010x} refused: {}", at, e);
            None
        }
    }
}

/// What is read from the partition: a region's memory image, or a hwdecode table.
#[derive(Clone, Copy)]
pub enum Item {
    /// `get_memory_image(engine, region, flavor)`.
    Image(Region),
    /// `get_hwdecode_table(engine, kind)`: the engine's profiler tables (deflate-compressed by
    /// `nrtucode pack --compress deflate` where that saves space, as the fixtures' are).
    Table(ProfKind),
}

impl Item {
    /// What the log calls it: `image` or `hwdecode table`, then the region or kind.
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Item::Image(region) => ("image", region.name()),
            Item::Table(kind) => ("hwdecode table", kind.name()),
        }
    }
}

/// The blob an item was read from, as its table-of-contents entry (the signed tables) says.
pub struct Found {
    id: BlobId,
    codec: Codec,
    offset: u32,
    stored_len: u32,
}

/// Where the engine's items are read from: a verified partition read in place, or (feature
/// `unmapped`) a slot whose blobs are read through the flash driver.
pub trait ItemSource {
    /// Resolves the item, then loads it into `window` through its checked way (stored:
    /// copy-checked; deflate: its stream checked, then decode-checked, or refused without the
    /// `deflate` feature): the bytes written and the blob.
    fn read(
        &mut self,
        engine: ImageIndex,
        item: Item,
        flavor: Flavor,
        window: &mut [u8],
        scratch: &mut Scratch,
    ) -> Result<(usize, Found), ReadError>;
}

impl ItemSource for &VerifiedPartition<'_> {
    fn read(
        &mut self,
        engine: ImageIndex,
        item: Item,
        flavor: Flavor,
        window: &mut [u8],
        scratch: &mut Scratch,
    ) -> Result<(usize, Found), ReadError> {
        let blob = resolve(*self, engine, item, flavor)?;
        let written = blob.load_into(window, scratch).map_err(ReadError::Load)?;
        let entry = self.tables().toc_entry(blob.id());
        Ok((written.len(), found(blob.id(), blob.codec(), entry)))
    }
}

/// Feature `unmapped`: a slot read through the driver, its blobs too (`StreamedBlob::load_into`:
/// a stored blob copy-checked as it is read; the update build keeps blobs stored).
#[cfg(feature = "unmapped")]
impl<F: embedded_storage::nor_flash::ReadNorFlash> ItemSource
    for nrtucode::update::StreamedSlot<'_, F>
{
    fn read(
        &mut self,
        engine: ImageIndex,
        item: Item,
        flavor: Flavor,
        window: &mut [u8],
        scratch: &mut Scratch,
    ) -> Result<(usize, Found), ReadError> {
        use nrtucode::partition::StreamError;
        use nrtucode::update::Refusal;
        let partition = &self.partition;
        let blob = resolve(partition, engine, item, flavor)?;
        let written = match blob.load_into(&mut *self.flash, window, scratch) {
            Ok(written) => written.len(),
            Err(StreamError::Refused(Refusal::Load(e))) => return Err(ReadError::Load(e)),
            Err(_) => return Err(ReadError::Flash),
        };
        let entry = partition.tables().toc_entry(blob.id());
        Ok((written, found(blob.id(), blob.codec(), entry)))
    }
}

/// The item's answer from `tables` (any resolver of a partition).
fn resolve<R: Resolver>(
    tables: &R,
    engine: ImageIndex,
    item: Item,
    flavor: Flavor,
) -> Result<R::Answer<'_>, ReadError> {
    match item {
        Item::Image(region) => tables.resolve_image(engine, region, flavor, &NoEnv),
        Item::Table(kind) => tables.resolve_hwdecode(engine, kind),
    }
    .map_err(ReadError::Resolve)
}

/// The [`Found`] of a blob and its entry.
fn found(id: BlobId, codec: Codec, entry: Option<nrtucode::partition::TocEntry>) -> Found {
    let (offset, stored_len) = entry.map_or((0, 0), |e| (e.offset, e.stored_len));
    Found {
        id,
        codec,
        offset,
        stored_len,
    }
}

/// One item of the engine from the partition into `window`, verified; logged with its name.
pub fn load(
    source: &mut impl ItemSource,
    engine: ImageIndex,
    item: Item,
    flavor: Flavor,
    window: &mut [u8],
    scratch: &mut Scratch,
) -> Result<Loaded, ()> {
    let name = if engine == crate::ENGINE {
        crate::ENGINE_NAME
    } else {
        "engine"
    };
    let (what, part) = item.names();
    let at = window.as_ptr() as usize;
    match source.read(engine, item, flavor, window, scratch) {
        Ok((0, _)) => {
            defmt::info!(
                "{=str} {=str} {} {=str}: none, nothing to load",
                what,
                name,
                flavor,
                part
            );
            Ok(Loaded::Nothing)
        }
        Ok((n, blob)) => {
            defmt::info!(
                "{=str} {=str} {} {=str} verified: {} bytes to {:#010x}, SHA-256 ok; blob {} at partition offset {:#x}, {=str}, {} bytes stored",
                what,
                name,
                flavor,
                part,
                n,
                at,
                blob.id.raw(),
                blob.offset,
                blob.codec.name(),
                blob.stored_len
            );
            Ok(Loaded::Image)
        }
        Err(e) => {
            defmt::error!(
                "{=str} {=str} {} {=str}: verification failed: {}",
                what,
                name,
                flavor,
                part,
                e
            );
            Err(())
        }
    }
}

/// Why an item was not read.
#[derive(defmt::Format)]
pub enum ReadError {
    /// The resolver's answer (the vendor's code).
    Resolve(ResolveErr),
    /// The blob did not load: a digest, the window's size, or no decoder for its codec.
    Load(LoadError),
    /// Feature `unmapped`: the flash driver's read failed.
    #[cfg(feature = "unmapped")]
    Flash,
}
