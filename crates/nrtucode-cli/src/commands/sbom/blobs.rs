//! The blobs a bill of materials lists, the same for both documents: one per getter with
//! bytes, by vendor symbol, with every place the tables use it.

use std::collections::BTreeMap;

use crate::commands::list::ListEntry;
use crate::shared::inventory::Inventory;

/// One blob of the input, as both formats list it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FirmwareBlob {
    /// The getter's vendor symbol (or, for a getter without one, its place).
    pub name: String,
    /// The SHA-256 of its bytes (decoded), hex.
    pub sha256: String,
    /// Its size in bytes.
    pub size: usize,
    /// `generation`, `class`, `engine`, `flavor` (the key of its first use), `variant`,
    /// `region`, as far as known.
    pub identity: Vec<(&'static str, String)>,
    /// Every place the tables use it, in table order (`image_list slot 3 flavor 1 IRAM`).
    pub uses: Vec<String>,
}

/// Where an entry sits in the tables, as `nrtucode:use` says it.
fn use_of(e: &ListEntry) -> String {
    match e.flavor {
        Some(flavor) => format!("{} slot {} flavor {flavor} {}", e.table, e.slot, e.region),
        None => format!("{} slot {} {}", e.table, e.slot, e.region),
    }
}

/// The blobs of `inv`, one per getter symbol with bytes, sorted by name.
pub(crate) fn firmware(inv: &Inventory) -> Vec<FirmwareBlob> {
    let mut by_name: BTreeMap<String, FirmwareBlob> = BTreeMap::new();
    for e in inv.entries.iter().filter(|e| e.state == "real") {
        let (Some(hex), Some(size)) = (&e.sha256, e.size) else {
            continue; // never: a real getter has bytes
        };
        let name = e.symbol.clone().unwrap_or_else(|| use_of(e));
        let blob = by_name.entry(name.clone()).or_insert_with(|| {
            let mut identity = vec![("generation", e.generation.to_owned())];
            identity.extend(e.class.map(|c| ("class", c.to_owned())));
            identity.extend(e.engine.map(|c| ("engine", c.to_owned())));
            identity.extend(e.flavor.map(|f| ("flavor", f.to_string())));
            identity.push(("variant", e.variant.to_owned()));
            identity.push(("region", e.region.to_owned()));
            FirmwareBlob {
                name,
                sha256: hex.clone(),
                size,
                identity,
                uses: Vec::new(),
            }
        });
        blob.uses.push(use_of(e));
    }
    by_name.into_values().collect()
}
