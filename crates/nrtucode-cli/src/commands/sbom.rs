//! `nrtucode sbom PART|LIB|DIR [-o FILE] [--timestamp]`: a CycloneDX 1.6 JSON bill of
//! materials of what a partition, a vendor library or a blob directory carries.
//!
//! The input ([`inventory`]) is the top component (`metadata.component`): a partition
//! (`firmware`) with the SHA-256 of its file, its key ID, security counter, table class and the
//! vendor library's build ID it records; a library (`library`) with its SHA-256 and build ID; a
//! blob directory (`firmware`) with the SHA-256 and build ID of the library it was carved from.
//! Every getter with bytes (a blob, not a cursor or NULL) is one `firmware` component, named by
//! its vendor symbol, with the SHA-256 of its bytes and, as `nrtucode:` properties, its size,
//! generation, class, engine, flavor, variant and region, and one `nrtucode:use` per place the
//! tables use it (`image_list slot 3 flavor 1 IRAM`). The top component depends on each.
//!
//! Reproducible: the same input gives the same bytes. Components are sorted by `bom-ref`, the
//! input is named by its file name only, and there is no serial number and no timestamp unless
//! `--timestamp` asks (then `SOURCE_DATE_EPOCH` if set, else the current time, in UTC).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use serde::Serialize;

use crate::commands::exit::Exit;
use crate::commands::inventory::{self, InputKind, Inventory, Trust};
use crate::commands::list::ListEntry;
use crate::commands::output::{fail, json_document, out_fmt, out_line};
use crate::commands::output_file::{Mode, refuse_input, write_output};

/// The CycloneDX specification version written.
pub(crate) const SPEC_VERSION: &str = "1.6";

/// A CycloneDX BOM (the fields written).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Bom {
    bom_format: &'static str,
    spec_version: &'static str,
    version: u32,
    metadata: Metadata,
    components: Vec<Component>,
    dependencies: Vec<Dependency>,
}

#[derive(Serialize)]
struct Metadata {
    #[serde(skip_serializing_if = "Option::is_none")]
    timestamp: Option<String>,
    tools: Tools,
    component: Component,
}

#[derive(Serialize)]
struct Tools {
    components: Vec<Tool>,
}

#[derive(Serialize)]
struct Tool {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'static str,
    version: &'static str,
}

#[derive(Serialize)]
struct Component {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(rename = "bom-ref")]
    bom_ref: String,
    name: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    hashes: Vec<Hash>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    properties: Vec<Property>,
}

#[derive(Serialize)]
struct Hash {
    alg: &'static str,
    content: String,
}

#[derive(Serialize)]
struct Property {
    name: String,
    value: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Dependency {
    #[serde(rename = "ref")]
    reference: String,
    depends_on: Vec<String>,
}

fn property(name: &str, value: impl ToString) -> Property {
    Property {
        name: format!("nrtucode:{name}"),
        value: value.to_string(),
    }
}

fn sha256(hex: &str) -> Hash {
    Hash {
        alg: "SHA-256",
        content: hex.to_owned(),
    }
}

/// The `bom-ref` of the top component.
const TOP_REF: &str = "input";

/// Where an entry sits in the tables, as `nrtucode:use` says it.
fn use_of(e: &ListEntry) -> String {
    match e.flavor {
        Some(flavor) => format!("{} slot {} flavor {flavor} {}", e.table, e.slot, e.region),
        None => format!("{} slot {} {}", e.table, e.slot, e.region),
    }
}

/// The top component: the input itself.
fn top(inv: &Inventory) -> Component {
    let o = &inv.origin;
    let mut properties = vec![property("input", o.kind.name()), property("class", o.class)];
    let mut hashes = Vec::new();
    match (o.kind, &o.sha256) {
        // A directory has no digest of its own: its library's is a property.
        (InputKind::BlobDir, Some(h)) => properties.push(property("source_sha256", h)),
        (_, Some(h)) => hashes.push(sha256(h)),
        (_, None) => {}
    }
    if let Some(id) = &o.build_id {
        properties.push(property("build_id", id));
    }
    if let Some(source) = o.source {
        properties.push(property("source", source));
    }
    if let Some(counter) = o.security_counter {
        properties.push(property("security_counter", counter));
    }
    if o.kind == InputKind::Partition {
        properties.push(property(
            "key_id",
            o.key_id.as_deref().unwrap_or("unsigned"),
        ));
    }
    Component {
        kind: if o.kind == InputKind::Library {
            "library"
        } else {
            "firmware"
        },
        bom_ref: TOP_REF.to_owned(),
        name: o.name.clone(),
        hashes,
        properties,
    }
}

/// One `firmware` component per getter with bytes, keyed (and so sorted) by `bom-ref`.
fn blobs(inv: &Inventory) -> Vec<Component> {
    let mut by_ref: BTreeMap<String, Component> = BTreeMap::new();
    for e in inv.entries.iter().filter(|e| e.state == "real") {
        let (Some(hex), Some(size)) = (&e.sha256, e.size) else {
            continue; // never: a real getter has bytes
        };
        let name = e.symbol.clone().unwrap_or_else(|| use_of(e));
        let bom_ref = format!("blob:{}", name.replace(' ', "-"));
        let component = by_ref.entry(bom_ref.clone()).or_insert_with(|| {
            let mut properties = vec![property("size", size), property("generation", e.generation)];
            properties.extend(e.class.map(|c| property("class", c)));
            properties.extend(e.engine.map(|c| property("engine", c)));
            properties.extend(e.flavor.map(|f| property("flavor", f)));
            properties.push(property("variant", e.variant));
            properties.push(property("region", e.region));
            Component {
                kind: "firmware",
                bom_ref,
                name,
                hashes: vec![sha256(hex)],
                properties,
            }
        });
        component.properties.push(property("use", use_of(e)));
    }
    by_ref.into_values().collect()
}

/// The BOM of `inv`, with `timestamp` (RFC 3339) in its metadata if given.
pub(crate) fn bom(inv: &Inventory, timestamp: Option<String>) -> Bom {
    let components = blobs(inv);
    let depends_on = components.iter().map(|c| c.bom_ref.clone()).collect();
    Bom {
        bom_format: "CycloneDX",
        spec_version: SPEC_VERSION,
        version: 1,
        metadata: Metadata {
            timestamp,
            tools: Tools {
                components: vec![Tool {
                    kind: "application",
                    name: "nrtucode",
                    version: env!("CARGO_PKG_VERSION"),
                }],
            },
            component: top(inv),
        },
        components,
        dependencies: vec![Dependency {
            reference: TOP_REF.to_owned(),
            depends_on,
        }],
    }
}

/// `seconds` since the Unix epoch as RFC 3339 UTC (`2026-12-03T07:45:00Z`).
pub(crate) fn rfc3339(seconds: u64) -> String {
    let days = seconds / 86_400;
    let rem = seconds % 86_400;
    // Howard Hinnant's civil_from_days, for days since 1970-01-01 (never negative here).
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The time `--timestamp` records: `SOURCE_DATE_EPOCH` (seconds) if set, else now.
fn timestamp() -> Result<String, (Exit, String)> {
    let seconds = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(text) => text.trim().parse::<u64>().map_err(|_| {
            (
                Exit::Usage,
                format!("SOURCE_DATE_EPOCH={text:?}: not a number of seconds"),
            )
        })?,
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    Ok(rfc3339(seconds))
}

fn run_inner(
    input: &Path,
    trust: &Trust,
    out: Option<&Path>,
    with_timestamp: bool,
) -> Result<Option<String>, (Exit, String)> {
    if let Some(out) = out {
        // Early, before the input is read; `write_output` checks again.
        refuse_input(out, "-o", false)?;
    }
    let stamp = with_timestamp.then(timestamp).transpose()?;
    let inv = inventory::read(input, trust)?;
    let bom = bom(&inv, stamp);
    let text = json_document(&bom);
    let Some(out) = out else {
        out_fmt!("{text}");
        return Ok(None);
    };
    write_output(out, text.as_bytes(), Mode::Replace)?;
    Ok(Some(format!(
        "{}: CycloneDX {SPEC_VERSION}, {} {} ({} tables), {} firmware components",
        out.display(),
        inv.origin.kind.name(),
        inv.origin.name,
        inv.origin.class,
        bom.components.len()
    )))
}

/// Writes the BOM of the input at `input` to `out` (atomically), or to stdout.
pub(crate) fn run(
    input: &Path,
    trust: &Trust,
    out: Option<&Path>,
    with_timestamp: bool,
) -> ExitCode {
    match run_inner(input, trust, out, with_timestamp) {
        Ok(Some(summary)) => {
            out_line!("{summary}");
            ExitCode::SUCCESS
        }
        Ok(None) => ExitCode::SUCCESS,
        Err((exit, message)) => fail(exit, message),
    }
}

#[cfg(test)]
mod tests {
    use super::rfc3339;

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_796_283_900), "2026-12-03T07:45:00Z");
        assert_eq!(rfc3339(4_102_444_799), "2099-12-31T23:59:59Z");
    }
}
