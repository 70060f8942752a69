//! `nrtucode diff OLD NEW [--json]`: what changed between two vendor drops, each a library, a
//! blob directory or a partition ([`inventory`]), in any pairing.
//!
//! Every getter of both tables is matched by its place: table, slot, flavor key (its n-th
//! descriptor with that key) and region, or (profiler) table, slot and kind. A getter is
//! `added` (NULL or absent before, a blob now), `removed` (the reverse), `changed` (a blob in
//! both, another size or SHA-256, or a cursor become a blob) or `unchanged`. The counts are
//! given per generation, engine, flavor (variant) and region. Changes of the tables' shape
//! (an `image_list` slot's descriptors, by flavor key; which profiler getters a slot has) are
//! called out apart from the blobs. When the inputs' files differ but every blob and the shape
//! are the same (a rebuilt library, another key or counter), the output says so.
//!
//! Exit 0 when the blobs and the shape are the same, 1 when they differ (as diff(1)); any
//! failure exits with the tool's codes (64 usage, 65 bad data, 66 no input, 74 I/O), never 1.
//!
//! JSON (`--json`), one object, keys in this order:
//!
//! ```text
//! { "format": "nrtucode-diff/1",
//!   "old": ORIGIN, "new": ORIGIN,   // kind, name, sha256, build_id, class, key_id, security_counter, source
//!   "equal": false,                  // blobs and shape the same (the exit code)
//!   "files_identical": false,        // the same file digest (a directory: its library's)
//!   "totals": { "added": 0, "removed": 0, "changed": 3, "unchanged": 481 },
//!   "groups": [ { "generation": "CAYMAN", "engine": "ACT", "variant": "PERF", "region": "IRAM",
//!                 "added": 0, "removed": 0, "changed": 1, "unchanged": 5 } ],
//!   "changes": [ { "status": "changed", "table": "image_list", "slot": 7,
//!                  "generation": "CAYMAN", "class": "NX", "engine": "ACT", "flavor": 1,
//!                  "variant": "PERF", "region": "IRAM", "symbol": "CAYMAN_NX_ACT_PERF_IRAM_get",
//!                  "old": SIDE | null, "new": SIDE | null } ],   // SIDE: { "state", "size", "sha256" }
//!   "shape": [ { "table": "image_list", "slot": 7, "old": [1, 2, 3], "new": [1, 17] } ] }
//!                // hwdecode_table_list: "old"/"new" list the kinds present: ["CAM", "TABLE"]
//! ```

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use serde::Serialize;

use crate::commands::list::ListEntry;
use crate::shared::inventory::{self, Inventory, Origin};
use crate::shared::output::Mode;
use crate::shared::output::{json_document, out_fmt};
use crate::shared::text_table;
use crate::shared::trust::TrustArgs;

/// What a getter is on one side.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Side {
    /// `real`, `cursor` or `null`.
    pub state: &'static str,
    /// The blob's size (`None` for NULL).
    pub size: Option<usize>,
    /// Its SHA-256 (`None` for NULL).
    pub sha256: Option<String>,
}

/// One getter that is not the same on both sides.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Change {
    /// `added`, `removed` or `changed`.
    pub status: &'static str,
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
    /// Flavor key (`None` for a profiler getter).
    pub flavor: Option<i32>,
    /// Variant name (`PROF` for a profiler getter).
    pub variant: &'static str,
    /// Region, or profiler kind.
    pub region: &'static str,
    /// The vendor symbol, if it has one.
    pub symbol: Option<String>,
    /// The old getter (`None`: the old tables have no such place).
    pub old: Option<Side>,
    /// The new getter.
    pub new: Option<Side>,
}

/// Counts of one group, or of all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Counts {
    /// NULL or absent before, a blob now.
    pub added: usize,
    /// A blob before, NULL or absent now.
    pub removed: usize,
    /// Another size, digest or state.
    pub changed: usize,
    /// The same.
    pub unchanged: usize,
}

impl Counts {
    fn add(&mut self, status: &str) {
        match status {
            "added" => self.added += 1,
            "removed" => self.removed += 1,
            "changed" => self.changed += 1,
            _ => self.unchanged += 1,
        }
    }

    fn differ(&self) -> bool {
        self.added + self.removed + self.changed > 0
    }
}

/// The counts of one generation, engine, variant and region.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Group {
    generation: &'static str,
    engine: Option<&'static str>,
    variant: &'static str,
    region: &'static str,
    #[serde(flatten)]
    counts: Counts,
}

/// A slot whose shape differs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct ShapeChange {
    /// `image_list` or `hwdecode_table_list`.
    pub table: &'static str,
    /// Flat slot index.
    pub slot: u32,
    /// Before: the descriptors' flavor keys in table order, or the profiler kinds present.
    pub old: ShapeOf,
    /// After.
    pub new: ShapeOf,
}

/// The shape of one slot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub(crate) enum ShapeOf {
    /// An `image_list` slot: its descriptors' flavor keys.
    Flavors(Vec<i32>),
    /// A `hwdecode_table_list` slot: the kinds with a getter (`CAM`, `TABLE`).
    Kinds(Vec<&'static str>),
}

impl std::fmt::Display for ShapeOf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let items: Vec<String> = match self {
            ShapeOf::Flavors(v) => v.iter().map(ToString::to_string).collect(),
            ShapeOf::Kinds(v) => v.iter().map(ToString::to_string).collect(),
        };
        if items.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&items.join(" "))
        }
    }
}

/// The comparison of two inputs.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct DiffDoc {
    format: &'static str,
    /// The old input.
    pub old: Origin,
    /// The new input.
    pub new: Origin,
    /// Blobs and shape the same.
    pub equal: bool,
    /// The same file digest.
    pub files_identical: bool,
    /// All getters' counts.
    pub totals: Counts,
    /// The counts per generation, engine, variant and region.
    pub groups: Vec<Group>,
    /// Every getter not unchanged, in table order (old's, then places only the new has).
    pub changes: Vec<Change>,
    /// Every slot whose shape differs.
    pub shape: Vec<ShapeChange>,
}

/// Where a getter sits: table, slot, flavor key, the n-th descriptor of the slot with that
/// key, region.
type Place = (&'static str, u32, Option<i32>, usize, &'static str);

/// The entries of `inv` by place, in table order.
fn by_place(inv: &Inventory) -> Vec<(Place, &ListEntry)> {
    let mut seen: BTreeMap<(&'static str, u32, Option<i32>, &'static str), usize> = BTreeMap::new();
    inv.entries
        .iter()
        .map(|e| {
            let n = seen
                .entry((e.table, e.slot, e.flavor, e.region))
                .or_default();
            let place = (e.table, e.slot, e.flavor, *n, e.region);
            *n += 1;
            (place, e)
        })
        .collect()
}

fn side(e: &ListEntry) -> Side {
    Side {
        state: e.state,
        size: e.size,
        sha256: e.sha256.clone(),
    }
}

/// `added`, `removed`, `changed` or `unchanged`, from the two sides (`None`: no such place).
fn status(old: Option<&Side>, new: Option<&Side>) -> &'static str {
    let has_bytes = |s: Option<&Side>| s.is_some_and(|s| s.state != "null");
    match (has_bytes(old), has_bytes(new)) {
        (false, false) => "unchanged",
        (false, true) => "added",
        (true, false) => "removed",
        (true, true) if old == new => "unchanged",
        (true, true) => "changed",
    }
}

/// Each slot's shape: `image_list` slots by their descriptors' keys, profiler slots by the
/// kinds that have a getter.
fn shapes(inv: &Inventory) -> BTreeMap<(&'static str, u32), ShapeOf> {
    let mut out: BTreeMap<(&'static str, u32), ShapeOf> = BTreeMap::new();
    for e in &inv.entries {
        let shape = out.entry((e.table, e.slot)).or_insert_with(|| {
            if e.table == "image_list" {
                ShapeOf::Flavors(Vec::new())
            } else {
                ShapeOf::Kinds(Vec::new())
            }
        });
        match shape {
            // One descriptor: its first region.
            ShapeOf::Flavors(keys) if e.region == nrtucode::Region::Iram.name() => {
                keys.extend(e.flavor);
            }
            ShapeOf::Kinds(kinds) if e.state != "null" => kinds.push(e.region),
            _ => {}
        }
    }
    out
}

/// The comparison of `old` with `new`.
pub(crate) fn compare(old: &Inventory, new: &Inventory) -> DiffDoc {
    let old_places = by_place(old);
    let new_places = by_place(new);
    let new_by: BTreeMap<Place, &ListEntry> = new_places.iter().copied().collect();
    let old_by: BTreeMap<Place, &ListEntry> = old_places.iter().copied().collect();
    // Old's places in table order, then the places only the new has.
    let mut pairs: Vec<(Option<&ListEntry>, Option<&ListEntry>)> = old_places
        .iter()
        .map(|(place, e)| (Some(*e), new_by.get(place).copied()))
        .collect();
    pairs.extend(
        new_places
            .iter()
            .filter(|(place, _)| !old_by.contains_key(place))
            .map(|(_, e)| (None, Some(*e))),
    );
    let mut totals = Counts::default();
    let mut groups: BTreeMap<(&str, Option<&str>, &str, &str), Counts> = BTreeMap::new();
    let mut changes = Vec::new();
    for (o, n) in pairs {
        let Some(e) = o.or(n) else { continue };
        let (os, ns) = (o.map(side), n.map(side));
        let status = status(os.as_ref(), ns.as_ref());
        totals.add(status);
        groups
            .entry((e.generation, e.engine, e.variant, e.region))
            .or_default()
            .add(status);
        if status != "unchanged" {
            changes.push(Change {
                status,
                table: e.table,
                slot: e.slot,
                generation: e.generation,
                class: e.class,
                engine: e.engine,
                flavor: e.flavor,
                variant: e.variant,
                region: e.region,
                symbol: e.symbol.clone(),
                old: os,
                new: ns,
            });
        }
    }
    let (old_shape, new_shape) = (shapes(old), shapes(new));
    let mut slots: Vec<(&'static str, u32)> = old_shape.keys().copied().collect();
    slots.extend(new_shape.keys().filter(|k| !old_shape.contains_key(k)));
    slots.sort_by_key(|&(table, slot)| (table != "image_list", slot));
    let empty = |table: &str| {
        if table == "image_list" {
            ShapeOf::Flavors(Vec::new())
        } else {
            ShapeOf::Kinds(Vec::new())
        }
    };
    let shape: Vec<ShapeChange> = slots
        .into_iter()
        .filter_map(|(table, slot)| {
            let o = old_shape
                .get(&(table, slot))
                .cloned()
                .unwrap_or_else(|| empty(table));
            let n = new_shape
                .get(&(table, slot))
                .cloned()
                .unwrap_or_else(|| empty(table));
            (o != n).then_some(ShapeChange {
                table,
                slot,
                old: o,
                new: n,
            })
        })
        .collect();
    DiffDoc {
        format: "nrtucode-diff/1",
        equal: !totals.differ() && shape.is_empty(),
        files_identical: old.origin.sha256.is_some() && old.origin.sha256 == new.origin.sha256,
        old: old.origin.clone(),
        new: new.origin.clone(),
        totals,
        groups: groups
            .into_iter()
            .map(|((generation, engine, variant, region), counts)| Group {
                generation,
                engine,
                variant,
                region,
                counts,
            })
            .collect(),
        changes,
        shape,
    }
}

/// One input as the text output names it.
fn origin_line(label: &str, o: &Origin) -> String {
    let mut parts = vec![format!("{} tables", o.class)];
    if let Some(id) = &o.build_id {
        parts.push(format!("build ID {id}"));
    }
    if let Some(counter) = o.security_counter {
        parts.push(format!("security counter {counter}"));
    }
    if let Some(key) = &o.key_id {
        parts.push(format!("key ID {key}"));
    }
    if let Some(h) = &o.sha256 {
        let what = if o.kind == inventory::InputKind::BlobDir {
            "library sha256"
        } else {
            "sha256"
        };
        parts.push(format!("{what} {}", &h[..16.min(h.len())]));
    }
    format!(
        "{label}: {} {} ({})",
        o.kind.name(),
        o.name,
        parts.join(", ")
    )
}

fn side_cells(s: Option<&Side>) -> [String; 2] {
    match s {
        None => ["-".into(), "absent".into()],
        Some(Side { state: "null", .. }) => ["-".into(), "null".into()],
        Some(Side {
            state: "cursor", ..
        }) => ["0".into(), "cursor".into()],
        Some(s) => [
            s.size.map_or("-".into(), |n| n.to_string()),
            s.sha256
                .as_deref()
                .map_or("-".into(), |h| h[..16.min(h.len())].to_owned()),
        ],
    }
}

/// The text output.
pub(crate) fn text(doc: &DiffDoc) -> String {
    let t = &doc.totals;
    let mut out = format!(
        "{}\n{}\ngetters: {} added, {} removed, {} changed, {} unchanged\n",
        origin_line("old", &doc.old),
        origin_line("new", &doc.new),
        t.added,
        t.removed,
        t.changed,
        t.unchanged
    );
    out.push_str(&if doc.shape.is_empty() {
        "table shape: the same\n".to_owned()
    } else {
        format!("table shape: {} slots differ\n", doc.shape.len())
    });
    if doc.equal {
        out.push_str(if doc.files_identical && doc.old.kind == doc.new.kind {
            "the same: identical files\n"
        } else if doc.files_identical {
            "the same blobs and tables, from the same library\n"
        } else {
            "the same blobs and tables; the files differ (another build, key, counter or container)\n"
        });
        return out;
    }
    if !doc.shape.is_empty() {
        let rows: Vec<Vec<String>> = doc
            .shape
            .iter()
            .map(|s| {
                vec![
                    s.table.into(),
                    s.slot.to_string(),
                    s.old.to_string(),
                    s.new.to_string(),
                ]
            })
            .collect();
        out.push('\n');
        out.push_str(&text_table::render(
            &["shape", "slot", "old (flavor keys or kinds)", "new"],
            &rows,
        ));
    }
    let rows: Vec<Vec<String>> = doc
        .groups
        .iter()
        .filter(|g| g.counts.differ())
        .map(|g| {
            vec![
                g.generation.into(),
                g.engine.unwrap_or("-").into(),
                g.variant.into(),
                g.region.into(),
                g.counts.added.to_string(),
                g.counts.removed.to_string(),
                g.counts.changed.to_string(),
                g.counts.unchanged.to_string(),
            ]
        })
        .collect();
    out.push('\n');
    out.push_str(&text_table::render(
        &[
            "gen",
            "engine",
            "flavor",
            "region",
            "added",
            "removed",
            "changed",
            "unchanged",
        ],
        &rows,
    ));
    let rows: Vec<Vec<String>> = doc
        .changes
        .iter()
        .map(|c| {
            let mut row = vec![
                c.status.into(),
                c.table.into(),
                c.slot.to_string(),
                c.flavor.map_or("-".into(), |f| f.to_string()),
                c.region.into(),
                c.symbol.clone().unwrap_or_else(|| "-".into()),
            ];
            row.extend(side_cells(c.old.as_ref()));
            row.extend(side_cells(c.new.as_ref()));
            row
        })
        .collect();
    out.push('\n');
    out.push_str(&text_table::render(
        &[
            "status",
            "table",
            "slot",
            "flavor",
            "region",
            "symbol",
            "old size",
            "old sha256",
            "new size",
            "new sha256",
        ],
        &rows,
    ));
    out
}

/// Compares the inputs at `old` and `new`; exit 0 the same, 1 different.
pub(crate) fn run(old: &Path, new: &Path, trust: &TrustArgs, json: bool) -> ExitCode {
    let read = inventory::read(old, trust).and_then(|o| Ok((o, inventory::read(new, trust)?)));
    let (o, n) = match read {
        Ok(x) => x,
        Err(e) => return Mode::json(json).fail(e),
    };
    let doc = compare(&o, &n);
    if json {
        out_fmt!("{}", json_document(&doc));
    } else {
        out_fmt!("{}", text(&doc));
    }
    if doc.equal {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

#[cfg(test)]
mod tests {
    use super::{Side, status};

    fn side(state: &'static str, size: usize, sha: &str) -> Side {
        Side {
            state,
            size: (state != "null").then_some(size),
            sha256: (state != "null").then(|| sha.to_owned()),
        }
    }

    #[test]
    fn each_pair_of_sides_has_its_status() {
        let null = side("null", 0, "");
        let cursor = side("cursor", 0, "e3b0");
        let a = side("real", 16, "aaaa");
        let b = side("real", 16, "bbbb");
        let longer = side("real", 32, "aaaa");
        let cases = [
            (None, None, "unchanged"),
            (Some(&null), Some(&null), "unchanged"),
            (None, Some(&null), "unchanged"),
            (Some(&null), Some(&a), "added"),
            (None, Some(&a), "added"),
            (Some(&a), Some(&null), "removed"),
            (Some(&a), None, "removed"),
            (Some(&cursor), None, "removed"),
            (Some(&a), Some(&a), "unchanged"),
            (Some(&cursor), Some(&cursor), "unchanged"),
            (Some(&a), Some(&b), "changed"),
            (Some(&a), Some(&longer), "changed"),
            (Some(&cursor), Some(&a), "changed"),
        ];
        for (old, new, want) in cases {
            assert_eq!(status(old, new), want, "{old:?} -> {new:?}");
        }
    }
}
