//! The shapes of the two vendor tables: `image_list` slots holding flavor descriptors with four
//! region blobs, and `hwdecode_table_list` slots holding a PROF_CAM / PROF_TABLE pair.
//!
//! A getter is an `Option<&'static [u8]>`: `None` is the vendor's NULL getter (code 3 in the
//! image lane, code 2 in the profiler lane), an empty slice a boundary cursor (present, zero
//! bytes, code 0). The two are never collapsed. A cursor's pointer is the vendor's address: one
//! past the end of the same image's DRAM or SRAM blob, or the start of its DRAM blob.
//!
//! `table` holds the tables' types, [`catalog`](crate::catalog) their values (generated in
//! `src/catalog/generated.rs`).

use core::fmt;

use crate::{Flavor, ImageIndex, ProfKind, Region, SlotId};

/// The four region getters of a descriptor, indexed by [`Region`].
pub type Regions = [Option<&'static [u8]>; 4];
/// The two profiler getters of a slot, indexed by [`ProfKind`].
pub type ProfPair = [Option<&'static [u8]>; 2];
/// The `image_list`: 38 slots.
pub type ImageList = [ImageSlot; ImageIndex::COUNT];
/// The `hwdecode_table_list`: 38 slots.
pub type ProfList = [ProfSlot; ImageIndex::COUNT];

/// What a getter returns, in three states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum BlobState {
    /// Real bytes, of this length.
    Real(usize),
    /// A boundary cursor: present, zero bytes.
    Cursor,
    /// A NULL getter: not in this build.
    Null,
}

impl BlobState {
    /// The state of a getter.
    pub const fn of(blob: Option<&[u8]>) -> BlobState {
        match blob {
            None => BlobState::Null,
            Some([]) => BlobState::Cursor,
            Some(bytes) => BlobState::Real(bytes.len()),
        }
    }

    /// `real`, `cursor` or `null`.
    pub const fn name(self) -> &'static str {
        match self {
            BlobState::Real(_) => "real",
            BlobState::Cursor => "cursor",
            BlobState::Null => "null",
        }
    }
}

/// One flavor descriptor: a key and four region getters (the vendor's 40-byte record).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ImageDesc {
    flavor: Flavor,
    regions: Regions,
}

impl ImageDesc {
    /// A descriptor for `flavor` (never [`Flavor::Auto`]: that is checked at compile time for
    /// the catalog).
    pub const fn new(flavor: Flavor, regions: Regions) -> Self {
        Self { flavor, regions }
    }

    /// The flavor key.
    pub const fn flavor(&self) -> Flavor {
        self.flavor
    }

    /// The getter of `region`.
    pub const fn region(&self, region: Region) -> Option<&'static [u8]> {
        self.regions[region as usize]
    }

    /// All four getters, in region order.
    pub const fn regions(&self) -> &Regions {
        &self.regions
    }
}

impl fmt::Debug for ImageDesc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_struct("ImageDesc");
        list.field("flavor", &self.flavor);
        for region in Region::ALL {
            list.field(region.name(), &BlobDebug(self.region(region)));
        }
        list.finish()
    }
}

/// Prints a getter as `<N bytes>`, `cursor` or `NULL` instead of dumping the blob.
pub(crate) struct BlobDebug(pub(crate) Option<&'static [u8]>);

impl fmt::Debug for BlobDebug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match BlobState::of(self.0) {
            BlobState::Real(n) => write!(f, "<{n} bytes>"),
            BlobState::Cursor => f.write_str("cursor"),
            BlobState::Null => f.write_str("NULL"),
        }
    }
}

/// Prints bytes (a digest, a key, a key ID) in lower-case hex: the core's one hex printer,
/// beside [`BlobDebug`]. (The std side's `nrtucode_facts::hex::lower_hex` cannot serve here: the
/// facts crate is the core's build dependency and allocates; this one allocates nothing.)
#[cfg(feature = "digest")]
pub(crate) struct Hex<'a>(pub(crate) &'a [u8]);

#[cfg(feature = "digest")]
impl fmt::Debug for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(feature = "digest")]
impl fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// One `image_list` slot: what occupies it and its descriptors in the vendor's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageSlot {
    id: Option<SlotId>,
    descriptors: &'static [ImageDesc],
}

impl ImageSlot {
    /// The empty slot (count 0, NULL table).
    pub const EMPTY: ImageSlot = ImageSlot {
        id: None,
        descriptors: &[],
    };

    /// A populated slot.
    pub const fn new(id: SlotId, descriptors: &'static [ImageDesc]) -> Self {
        Self {
            id: Some(id),
            descriptors,
        }
    }

    /// Generation, class and engine; `None` for the empty slot.
    pub const fn id(&self) -> Option<SlotId> {
        self.id
    }

    /// The descriptors, in the vendor's scan order.
    pub const fn descriptors(&self) -> &'static [ImageDesc] {
        self.descriptors
    }

    /// The first descriptor whose key equals the raw `flavor`, as the vendor's linear scan.
    pub const fn find_raw(&self, flavor: i32) -> Option<&'static ImageDesc> {
        let descriptors = self.descriptors;
        let mut i = 0;
        while i < descriptors.len() {
            if descriptors[i].flavor as i32 == flavor {
                return Some(&descriptors[i]);
            }
            i += 1;
        }
        None
    }
}

/// One `hwdecode_table_list` slot: the PROF_CAM and PROF_TABLE getters.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ProfSlot {
    tables: ProfPair,
}

impl ProfSlot {
    /// A slot with no profiler (both getters NULL).
    pub const NONE: ProfSlot = ProfSlot {
        tables: [None, None],
    };

    /// A slot with these getters.
    pub const fn new(tables: ProfPair) -> Self {
        Self { tables }
    }

    /// The getter of `kind`.
    pub const fn get(&self, kind: ProfKind) -> Option<&'static [u8]> {
        self.tables[kind as usize]
    }

    /// Both getters, in kind order.
    pub(crate) const fn pair(&self) -> &ProfPair {
        &self.tables
    }

    /// `true` when either getter is present.
    pub const fn is_populated(&self) -> bool {
        self.tables[0].is_some() || self.tables[1].is_some()
    }
}

impl fmt::Debug for ProfSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProfSlot")
            .field("cam", &BlobDebug(self.tables[0]))
            .field("table", &BlobDebug(self.tables[1]))
            .finish()
    }
}
