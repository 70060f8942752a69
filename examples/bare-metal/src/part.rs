//! Feature `partition`: the engine's images come from a signed partition (`nrtucode pack`),
//! flashed on its own at the memory map's `__nrtucode_partition_start`, not from blobs linked
//! into the program. Its structure and signature are checked once, at boot ([`open`]); each
//! image is then copy-checked (stored) or decode-checked (deflate, feature `deflate`) into its
//! window against the SHA-256 in the signed table of contents ([`load`]).

use nrtucode::partition::{Blob, LoadError, Loader, VerifiedPartition};
#[cfg(not(feature = "update"))]
use nrtucode::partition::{Partition, Policy, Source, TableClass, TrustError};
use nrtucode::{Flavor, ImageIndex, NoEnv, ProfKind, Region, ResolveErr};

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

/// One item of the engine from the partition into `window`, verified; logged with its name.
pub fn load(
    partition: &VerifiedPartition<'_>,
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
    match read(partition, engine, item, flavor, window, scratch) {
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
            // Where it came from: its table-of-contents entry (the signed tables, trusted now).
            let entry = partition.tables().toc_entry(blob.id());
            let (offset, stored_len) = entry.map_or((0, 0), |e| (e.offset, e.stored_len));
            defmt::info!(
                "{=str} {=str} {} {=str} verified: {} bytes to {:#010x}, SHA-256 ok; blob {} at partition offset {:#x}, {=str}, {} bytes stored",
                what,
                name,
                flavor,
                part,
                n,
                at,
                blob.id().raw(),
                offset,
                blob.codec().name(),
                stored_len
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

/// Resolves the item, then loads it into `window` through its checked way (stored:
/// copy-checked; deflate: its stream checked, then decode-checked, or refused without the
/// `deflate` feature): the bytes written and the blob.
fn read<'p>(
    partition: &VerifiedPartition<'p>,
    engine: ImageIndex,
    item: Item,
    flavor: Flavor,
    window: &mut [u8],
    loader: &mut Scratch,
) -> Result<(usize, Blob<'p>), ReadError> {
    let blob = match item {
        Item::Image(region) => partition.resolve_image(engine, region, flavor, &NoEnv),
        Item::Table(kind) => partition.resolve_hwdecode(engine, kind),
    }
    .map_err(ReadError::Resolve)?;
    let written = blob.load_into(window, loader).map_err(ReadError::Load)?;
    Ok((written.len(), blob))
}

/// Why an item was not read.
#[derive(defmt::Format)]
enum ReadError {
    /// The resolver's answer (the vendor's code).
    Resolve(ResolveErr),
    /// The blob did not load: a digest, the window's size, or no decoder for its codec.
    Load(LoadError),
}
