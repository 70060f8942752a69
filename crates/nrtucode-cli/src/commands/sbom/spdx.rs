//! The SPDX 2.3 JSON document `nrtucode sbom --format spdx` writes.
//!
//! One package for the input (`SPDXRef-input`: purpose `FIRMWARE`, or `LIBRARY` for a library),
//! with the SHA-256 of its file (a blob directory: none; its library's is in the comment) and a
//! comment with its table class, build ID, key ID and security counter; one package per blob
//! ([`FirmwareBlob`]: `SPDXRef-blob-SYMBOL`, purpose `FIRMWARE`), with its SHA-256 and a comment
//! with its size, identity and uses. The document `DESCRIBES` the input, which `CONTAINS` each
//! blob. SPDX requires a creation time and a namespace: the time is the one given, or the Unix
//! epoch; the namespace is `urn:nrtucode:spdx:` and the SHA-256 of the rest of the document,
//! so that the same input gives the same bytes and another input another namespace.

use serde::Serialize;
use sha2::{Digest as _, Sha256};

use crate::commands::sbom::blobs::FirmwareBlob;
use crate::shared::inventory::{InputKind, Inventory};
use nrtucode_facts::hex::lower_hex;

/// An SPDX 2.3 document (the fields written).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Document {
    spdx_version: &'static str,
    data_license: &'static str,
    #[serde(rename = "SPDXID")]
    spdx_id: &'static str,
    name: String,
    document_namespace: String,
    creation_info: CreationInfo,
    packages: Vec<Package>,
    relationships: Vec<Relationship>,
}

#[derive(Serialize)]
struct CreationInfo {
    created: String,
    creators: Vec<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Package {
    #[serde(rename = "SPDXID")]
    spdx_id: String,
    name: String,
    download_location: &'static str,
    files_analyzed: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    checksums: Vec<Checksum>,
    primary_package_purpose: &'static str,
    comment: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Checksum {
    algorithm: &'static str,
    checksum_value: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Relationship {
    spdx_element_id: String,
    relationship_type: &'static str,
    related_spdx_element: String,
}

/// The input package's `SPDXID`.
const INPUT_ID: &str = "SPDXRef-input";

/// An `SPDXID` for `name`: letters, digits, `.` and `-` only (`_` and the rest become `-`).
fn spdx_id(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("SPDXRef-blob-{safe}")
}

fn sha256(hex: &str) -> Checksum {
    Checksum {
        algorithm: "SHA256",
        checksum_value: hex.to_owned(),
    }
}

/// The input's package.
fn input_package(inv: &Inventory) -> Package {
    let o = &inv.origin;
    let mut facts = vec![
        format!("nrtucode {}", o.kind.name()),
        format!("{} tables", o.class),
    ];
    let mut checksums = Vec::new();
    match (o.kind, &o.sha256) {
        (InputKind::BlobDir, Some(h)) => {
            facts.push(format!("carved from a library of SHA-256 {h}"))
        }
        (_, Some(h)) => checksums.push(sha256(h)),
        (_, None) => {}
    }
    if let Some(id) = &o.build_id {
        facts.push(format!("vendor library build ID {id}"));
    }
    if let Some(source) = o.source {
        facts.push(format!("source {source}"));
    }
    if let Some(counter) = o.security_counter {
        facts.push(format!("security counter {counter}"));
    }
    if o.kind == InputKind::Partition {
        facts.push(match &o.key_id {
            Some(key) => format!("key ID {key}"),
            None => "unsigned".to_owned(),
        });
    }
    Package {
        spdx_id: INPUT_ID.to_owned(),
        name: o.name.clone(),
        download_location: "NOASSERTION",
        files_analyzed: false,
        checksums,
        primary_package_purpose: if o.kind == InputKind::Library {
            "LIBRARY"
        } else {
            "FIRMWARE"
        },
        comment: facts.join("; "),
    }
}

/// A blob's package.
fn blob_package(b: &FirmwareBlob) -> Package {
    let mut facts = vec![format!("size {}", b.size)];
    facts.extend(
        b.identity
            .iter()
            .map(|(name, value)| format!("{name} {value}")),
    );
    facts.push(format!("used at: {}", b.uses.join(", ")));
    Package {
        spdx_id: spdx_id(&b.name),
        name: b.name.clone(),
        download_location: "NOASSERTION",
        files_analyzed: false,
        checksums: vec![sha256(&b.sha256)],
        primary_package_purpose: "FIRMWARE",
        comment: facts.join("; "),
    }
}

/// The SPDX document of `inv` and its `blobs`, created at `timestamp` (RFC 3339; the Unix
/// epoch when `None`).
pub(crate) fn document(
    inv: &Inventory,
    blobs: &[FirmwareBlob],
    timestamp: Option<String>,
) -> Document {
    let mut packages = vec![input_package(inv)];
    packages.extend(blobs.iter().map(blob_package));
    let mut relationships = vec![Relationship {
        spdx_element_id: "SPDXRef-DOCUMENT".to_owned(),
        relationship_type: "DESCRIBES",
        related_spdx_element: INPUT_ID.to_owned(),
    }];
    relationships.extend(blobs.iter().map(|b| Relationship {
        spdx_element_id: INPUT_ID.to_owned(),
        relationship_type: "CONTAINS",
        related_spdx_element: spdx_id(&b.name),
    }));
    let mut doc = Document {
        spdx_version: "SPDX-2.3",
        data_license: "CC0-1.0",
        spdx_id: "SPDXRef-DOCUMENT",
        name: inv.origin.name.clone(),
        document_namespace: String::new(),
        creation_info: CreationInfo {
            created: timestamp.unwrap_or_else(|| "1970-01-01T00:00:00Z".to_owned()),
            creators: vec![format!("Tool: nrtucode-{}", env!("CARGO_PKG_VERSION"))],
        },
        packages,
        relationships,
    };
    // The document without its namespace names it (plain structs of strings: always
    // serializes; an empty digest input is the unreachable fallback).
    let body = serde_json::to_vec(&doc).unwrap_or_default();
    doc.document_namespace = format!("urn:nrtucode:spdx:{}", lower_hex(&Sha256::digest(&body)));
    doc
}

#[cfg(test)]
mod tests {
    use super::spdx_id;

    #[test]
    fn spdx_ids_keep_only_what_spdx_allows() {
        assert_eq!(
            spdx_id("CAYMAN_NX_ACT_PERF_IRAM_get"),
            "SPDXRef-blob-CAYMAN-NX-ACT-PERF-IRAM-get"
        );
        assert_eq!(
            spdx_id("image_list slot 3 flavor 1 IRAM"),
            "SPDXRef-blob-image-list-slot-3-flavor-1-IRAM"
        );
    }
}
