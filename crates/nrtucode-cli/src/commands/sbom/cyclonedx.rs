//! The CycloneDX 1.6 JSON document `nrtucode sbom` writes (the default `--format cyclonedx`).
//!
//! The input is the top component (`metadata.component`): a partition (`firmware`) with the
//! SHA-256 of its file, its key ID, security counter, table class and the vendor library's
//! build ID it records; a library (`library`) with its SHA-256 and build ID; a blob directory
//! (`firmware`) with the SHA-256 and build ID of the library it was carved from. Every getter
//! with bytes is one `firmware` component ([`FirmwareBlob`]), named by its vendor symbol, with
//! the SHA-256 of its bytes and, as `nrtucode:` properties, its size, generation, class,
//! engine, flavor, variant and region, and one `nrtucode:use` per place the tables use it. The
//! top component depends on each. Components are sorted by `bom-ref`; there is no serial
//! number, and a timestamp only when one is given.

use serde::Serialize;

use crate::commands::sbom::blobs::FirmwareBlob;
use crate::shared::inventory::{InputKind, Inventory};

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

/// One `firmware` component per blob, in `blobs`' order (by name, so by `bom-ref`).
fn components(blobs: &[FirmwareBlob]) -> Vec<Component> {
    blobs
        .iter()
        .map(|b| {
            let mut properties = vec![property("size", b.size)];
            properties.extend(b.identity.iter().map(|(name, value)| property(name, value)));
            properties.extend(b.uses.iter().map(|u| property("use", u)));
            Component {
                kind: "firmware",
                bom_ref: format!("blob:{}", b.name.replace(' ', "-")),
                name: b.name.clone(),
                hashes: vec![sha256(&b.sha256)],
                properties,
            }
        })
        .collect()
}

/// The BOM of `inv` and its `blobs`, with `timestamp` (RFC 3339) in its metadata if given.
pub(crate) fn bom(inv: &Inventory, blobs: &[FirmwareBlob], timestamp: Option<String>) -> Bom {
    let components = components(blobs);
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
