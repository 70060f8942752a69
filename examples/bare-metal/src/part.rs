//! Feature `partition`: the engine's images come from a signed partition (`nrtucode pack`),
//! flashed on its own at the memory map's `__nrtucode_partition_start`, not from blobs linked
//! into the program. Its structure and signature are checked once, at boot ([`open`]); each
//! image is then copy-verified (stored) or decode-verified (deflate, feature `deflate`) into its
//! window against the SHA-256 in the signed table of contents ([`load`]).

use nrtucode::partition::format::CODEC_STORED;
use nrtucode::partition::{Getter, Partition, Policy, TableClass, TocEntry, VerifiedPartition};
use nrtucode::{Flavor, ImageIndex, NoEnv, ProfKind, Region};

use crate::Loaded;

include!(concat!(env!("OUT_DIR"), "/partition_key.rs"));

/// The lowest security counter this firmware accepts (`nrtucode pack --security-counter`): a
/// partition below it is a downgrade. A real loader keeps it where the partition cannot
/// rewrite it (OTP, a monotonic counter) and raises it after an update.
pub const MIN_SECURITY_COUNTER: u32 = 1;

/// What the partition must be: at least this counter, the full library's tables.
const POLICY: Policy = Policy {
    min_security_counter: MIN_SECURITY_COUNTER,
    expected_class: TableClass::Full,
};

/// The state a decode lends to the reader: the inflater with `deflate` (~11 KB, kept in the
/// device-memory static), nothing without.
#[cfg(feature = "deflate")]
pub type Scratch = nrtucode::deflate::Inflater;
/// The state a decode lends to the reader: the inflater with `deflate` (~11 KB, kept in the
/// device-memory static), nothing without.
#[cfg(not(feature = "deflate"))]
pub type Scratch = ();

/// A fresh [`Scratch`].
pub fn scratch() -> Scratch {
    Scratch::default()
}

/// Parses the partition and checks its signature, key, security counter and class, once.
/// `None` (logged) when anything is refused: nothing of it is used then.
pub fn open() -> Option<VerifiedPartition<'static>> {
    let flash = crate::flash::partition();
    let at = flash.as_ptr() as usize;
    if TEST_KEY {
        defmt::warn!("partition key: the repository's test key, never for real firmware");
    }
    let checked = Partition::parse(flash).and_then(|p| p.verify(&PARTITION_KEY, &POLICY));
    match checked {
        Ok(p) => {
            defmt::info!(
                "partition at {:#010x}: {} bytes, {} blobs, class {=str}, security counter {} (minimum {}), source {}, signature ok",
                at,
                p.partition().bytes().len(),
                p.partition().blob_count(),
                p.class().name(),
                p.security_counter(),
                MIN_SECURITY_COUNTER,
                p.source()
            );
            Some(p)
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
    partition: &VerifiedPartition<'static>,
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
        Ok(0) => {
            defmt::info!(
                "{=str} {=str} {} {=str}: none, nothing to load",
                what,
                name,
                flavor,
                part
            );
            Ok(Loaded::Nothing)
        }
        Ok(n) => {
            // Where it came from: its table-of-contents entry (the signed tables, trusted now).
            let (blob, entry) = stored(partition, engine, item, flavor).unwrap_or((0, EMPTY));
            defmt::info!(
                "{=str} {=str} {} {=str} verified: {} bytes to {:#010x}, SHA-256 ok; blob {} at partition offset {:#x}, {=str}, {} bytes stored",
                what,
                name,
                flavor,
                part,
                n,
                at,
                blob,
                entry.offset,
                if entry.codec == CODEC_STORED {
                    "stored"
                } else {
                    "deflate"
                },
                entry.stored_len
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

/// What the log shows of an entry it could not look up (never, after a successful read).
const EMPTY: TocEntry = TocEntry {
    offset: 0,
    stored_len: 0,
    decoded_len: 0,
    codec: CODEC_STORED,
    sha256: [0; 32],
    stored_sha256: [0; 32],
};

/// The table-of-contents entry (number and entry) an item's getter names.
fn stored(
    partition: &VerifiedPartition<'static>,
    engine: ImageIndex,
    item: Item,
    flavor: Flavor,
) -> Option<(u16, TocEntry)> {
    let getter = match item {
        Item::Image(region) => {
            partition.image_getter(engine.raw(), region.raw(), flavor.raw(), &NoEnv)
        }
        Item::Table(kind) => partition.prof_getter(engine.raw(), kind.raw()),
    };
    match getter {
        Ok(Getter::Blob(n)) => Some((n, partition.toc_entry(n)?)),
        _ => None,
    }
}

/// Decode-verifies (deflate) or copy-verifies (stored) the item into `window`: its length.
#[cfg(feature = "deflate")]
fn read(
    partition: &VerifiedPartition<'static>,
    engine: ImageIndex,
    item: Item,
    flavor: Flavor,
    window: &mut [u8],
    inflater: &mut Scratch,
) -> Result<usize, nrtucode::partition::IntoError> {
    let read = match item {
        Item::Image(region) => {
            partition.resolve_into(engine, region, flavor, &NoEnv, window, inflater)
        }
        Item::Table(kind) => partition.resolve_hwdecode_into(engine, kind, window, inflater),
    };
    read.map(<[u8]>::len)
}

/// Copy-verifies the stored item into `window`: its length.
#[cfg(not(feature = "deflate"))]
fn read(
    partition: &VerifiedPartition<'static>,
    engine: ImageIndex,
    item: Item,
    flavor: Flavor,
    window: &mut [u8],
    _: &mut Scratch,
) -> Result<usize, ReadError> {
    let blob = match item {
        Item::Image(region) => partition.resolve_image(engine, region, flavor, &NoEnv),
        Item::Table(kind) => partition.resolve_hwdecode(engine, kind),
    }
    .map_err(ReadError::Resolve)?;
    if blob.is_empty() {
        return Ok(0);
    }
    partition
        .copy_verified(blob, window)
        .map_err(ReadError::Load)
}

/// Why an item was not read (without `deflate`).
#[cfg(not(feature = "deflate"))]
#[derive(defmt::Format)]
enum ReadError {
    /// The resolver's answer (the vendor's code), or a compressed blob (`NotStored`).
    Resolve(nrtucode::partition::InPlaceError),
    /// The copy did not verify.
    Load(nrtucode::partition::PartitionError),
}
