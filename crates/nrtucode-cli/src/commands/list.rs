//! `nrtucode list`: the catalog embedded in the core crate.
//!
//! One entry per (slot, descriptor, region) of `image_list` (`nrtucode::catalog::image_entries`;
//! the empty slot 36 has no descriptor, so no entry) and per (slot, kind) of all 38 slots of
//! `hwdecode_table_list` (`nrtucode::catalog::prof_entries`, 76 entries; slot 36's have no
//! class, engine or symbol), in table order: image entries first, then profiler entries.
//!
//! JSON (`--json`), one object, keys in this order:
//!
//! ```text
//! { "format": "nrtucode-list/1",
//!   "blob_source": "fixtures" | "directory",
//!   "entries": [ { "table": "image_list" | "hwdecode_table_list",
//!                  "slot": 7, "generation": "CAYMAN",
//!                  "class": "NX" | null, "engine": "ACT" | null,   // null for slot 36
//!                  "flavor": 1 | null,          // descriptor key; null for profiler rows
//!                  "variant": "PERF",           // PROF for profiler rows
//!                  "region": "IRAM",            // IRAM DRAM SRAM EXTRAM | CAM TABLE
//!                  "symbol": "CAYMAN_NX_ACT_PERF_IRAM_get" | null,  // null for slot 36
//!                  "state": "real" | "cursor" | "null",
//!                  "size": 81344 | null,        // null when state is null
//!                  "sha256": "<64 hex>" | null } ] }
//! ```

use std::collections::HashMap;
use std::process::ExitCode;

use nrtucode::Generation;
use nrtucode::table::BlobState;
use nrtucode_carve::Names;
use nrtucode_facts::hex::lower_hex;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::shared::output::{err_line, out_fmt};
use crate::shared::tables::TableSource;
use crate::shared::text_table;

/// One listed getter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct ListEntry {
    /// `image_list` or `hwdecode_table_list`.
    pub table: &'static str,
    /// Flat slot index.
    pub slot: u32,
    /// Generation.
    pub generation: &'static str,
    /// Core class (`None` for the empty slot).
    pub class: Option<&'static str>,
    /// Engine (`None` for the empty slot).
    pub engine: Option<&'static str>,
    /// Descriptor flavor key (`None` for profiler rows).
    pub flavor: Option<i32>,
    /// Variant name.
    pub variant: &'static str,
    /// Region or profiler kind.
    pub region: &'static str,
    /// Vendor getter symbol (`None` for the empty slot).
    pub symbol: Option<String>,
    /// `real`, `cursor` or `null`.
    pub state: &'static str,
    /// Blob size (`None` for a NULL getter).
    pub size: Option<usize>,
    /// Blob sha256 (`None` for a NULL getter).
    pub sha256: Option<String>,
}

/// The JSON document of `list --json`.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ListDoc {
    /// `nrtucode-list/1`.
    pub format: &'static str,
    /// `fixtures` or `directory`.
    pub blob_source: &'static str,
    /// The entries.
    pub entries: Vec<ListEntry>,
}

/// The entries of `tables`, optionally only of generation `gen_filter`.
pub(crate) fn entries<T: TableSource>(
    tables: &'static T,
    gen_filter: Option<Generation>,
) -> Vec<ListEntry> {
    let names = Names::new();
    let wanted = |generation: Generation| gen_filter.is_none_or(|g| g == generation);
    let mut hashes: HashMap<(usize, usize), String> = HashMap::new();
    let mut hash = |blob: Option<&'static [u8]>| {
        blob.map(|b| {
            hashes
                .entry((b.as_ptr() as usize, b.len()))
                .or_insert_with(|| lower_hex(&Sha256::digest(b)))
                .clone()
        })
    };
    let mut out = Vec::new();
    for e in tables.image_entries() {
        if !wanted(e.slot.generation) {
            continue;
        }
        let symbol = names
            .image(e.index.as_usize(), 0, e.flavor.raw() as u64, e.region)
            .ok()
            .map(|n| n.symbol);
        out.push(ListEntry {
            table: "image_list",
            slot: e.index.raw(),
            generation: e.slot.generation.name(),
            class: Some(e.slot.class.name()),
            engine: Some(e.slot.engine.name()),
            flavor: Some(e.flavor.raw()),
            variant: e.flavor.variant_name(e.slot.generation),
            region: e.region.name(),
            symbol,
            state: BlobState::of(e.blob).name(),
            size: e.blob.map(<[u8]>::len),
            sha256: hash(e.blob),
        });
    }
    for e in tables.prof_entries() {
        // Slot 36 has no engine but belongs to MAVERICK's range.
        let generation = e.index.generation();
        if !wanted(generation) {
            continue;
        }
        let symbol = e
            .slot
            .and_then(|_| names.prof(e.index.as_usize(), 0, e.kind).ok())
            .map(|n| n.symbol);
        out.push(ListEntry {
            table: "hwdecode_table_list",
            slot: e.index.raw(),
            generation: generation.name(),
            class: e.slot.map(|s| s.class.name()),
            engine: e.slot.map(|s| s.engine.name()),
            flavor: None,
            variant: "PROF",
            region: e.kind.name(),
            symbol,
            state: BlobState::of(e.blob).name(),
            size: e.blob.map(<[u8]>::len),
            sha256: hash(e.blob),
        });
    }
    out
}

/// `list` output: an aligned table, or the JSON document.
pub fn render(gen_filter: Option<Generation>, json: bool) -> String {
    render_from(&nrtucode::Embedded, gen_filter, json)
}

/// [`render`] of `tables` (the embedded ones or a partition's).
pub fn render_from<T: TableSource>(
    tables: &'static T,
    gen_filter: Option<Generation>,
    json: bool,
) -> String {
    let entries = entries(tables, gen_filter);
    if json {
        let doc = ListDoc {
            format: "nrtucode-list/1",
            blob_source: tables.blob_source(),
            entries,
        };
        return crate::shared::output::json_document(&doc);
    }
    let rows: Vec<Vec<String>> = entries
        .iter()
        .map(|e| {
            vec![
                e.slot.to_string(),
                e.generation.into(),
                e.class.unwrap_or("-").into(),
                e.engine.unwrap_or("-").into(),
                e.flavor.map_or("-".into(), |f| f.to_string()),
                e.variant.into(),
                e.region.into(),
                e.size.map_or("-".into(), |s| s.to_string()),
                e.sha256
                    .as_deref()
                    .map_or("-".into(), |h| h[..16].to_string()),
                e.state.into(),
            ]
        })
        .collect();
    text_table::render(
        &[
            "slot", "gen", "class", "engine", "flavor", "variant", "region", "size", "sha256",
            "state",
        ],
        &rows,
    )
}

/// Prints the listing (see [`render`]).
pub(crate) fn run<T: TableSource>(
    tables: &'static T,
    gen_filter: Option<Generation>,
    json: bool,
) -> ExitCode {
    out_fmt!("{}", render_from(tables, gen_filter, json));
    if let Some(note) = tables.fixtures_note().filter(|_| !json) {
        err_line!("{note}");
    }
    ExitCode::SUCCESS
}
