//! `nrtucode inspect FILE [--public-key PUB.pem] [--min-security-counter N] [--json]`: the
//! header, tables and table of contents of a partition, and its checks: structure, signature
//! (when a key is given), security counter (when a minimum is given) and every blob's digest.
//! Exit 0 only when every check made holds, 65 with the reason otherwise (66: unreadable).
//!
//! JSON (`--json`), one object, keys in this order:
//!
//! ```text
//! { "format": "nrtucode-inspect/1", "file": "...", "valid": true | false,
//!   "error": null | "<the first check that failed>",
//!   "checks": { "structure": "ok" | "<why>", "signature": "ok" | "not checked" | "<why>",
//!               "security_counter": "ok" | "not checked" | "<why>",
//!               "digests": "ok" | "not checked" | "<why>" },
//!   "header": { "version": 1, "total_len": 123, "class": "full" | "front",
//!               "source": "build-id" | "no-build-id" | "fixtures", "build_id": "<hex>" | null,
//!               "security_counter": 0, "signed": true, "key_id": "<16 hex>" },
//!   "image_list": [ { "slot": 0, "descriptors": [ { "flavor": 1,
//!                     "getters": ["blob 0", "blob 1", "cursor-end 1", "null"] } ] } ],
//!   "hwdecode_table_list": [ { "slot": 7, "cam": "blob 5" | "null", "table": "blob 6" | "null" } ],
//!   "toc": [ { "blob": 0, "offset": 9232, "stored_len": 36640, "decoded_len": 36640,
//!              "codec": 0, "sha256": "<64 hex>", "first_use": "image_list slot 0 flavor 1 IRAM" } ] }
//! ```
//!
//! `header`, `image_list`, `hwdecode_table_list` and `toc` are null when the structure check
//! failed.

use std::path::Path;
use std::process::ExitCode;

use nrtucode::partition::{Getter, Partition, PartitionError, Source};
use nrtucode_facts::hex::lower_hex;
use serde::Serialize;

use crate::commands::exit::Exit;
use crate::commands::output::{err_line, out_fmt};
use crate::commands::tables::{read_partition, read_public_key};
use crate::commands::text_table;

#[derive(Serialize)]
struct Checks {
    structure: String,
    signature: String,
    security_counter: String,
    digests: String,
}

#[derive(Serialize)]
struct Header {
    version: u16,
    total_len: usize,
    class: &'static str,
    source: &'static str,
    build_id: Option<String>,
    security_counter: u32,
    signed: bool,
    key_id: String,
}

#[derive(Serialize)]
struct Descriptor {
    flavor: i32,
    getters: Vec<String>,
}

#[derive(Serialize)]
struct Slot {
    slot: u32,
    descriptors: Vec<Descriptor>,
}

#[derive(Serialize)]
struct ProfSlot {
    slot: u32,
    cam: String,
    table: String,
}

#[derive(Serialize)]
struct Toc {
    blob: u16,
    offset: u32,
    stored_len: u32,
    decoded_len: u32,
    codec: u8,
    sha256: String,
    first_use: Option<String>,
}

#[derive(Serialize)]
struct Doc {
    format: &'static str,
    file: String,
    valid: bool,
    error: Option<String>,
    checks: Checks,
    header: Option<Header>,
    image_list: Option<Vec<Slot>>,
    hwdecode_table_list: Option<Vec<ProfSlot>>,
    toc: Option<Vec<Toc>>,
}

fn getter(g: Option<Getter>) -> String {
    match g {
        None => "null".into(),
        Some(Getter::Blob(n)) => format!("blob {n}"),
        Some(Getter::CursorStart(n)) => format!("cursor-start {n}"),
        Some(Getter::CursorEnd(n)) => format!("cursor-end {n}"),
    }
}

const NOT_CHECKED: &str = "not checked";

fn describe(p: &Partition<'_>, doc: &mut Doc) {
    let (source, build_id) = match p.source() {
        Source::BuildId(id) => ("build-id", Some(lower_hex(id))),
        Source::NoBuildId => ("no-build-id", None),
        Source::Fixtures => ("fixtures", None),
    };
    doc.header = Some(Header {
        version: nrtucode::partition::format::VERSION,
        total_len: p.bytes().len(),
        class: p.class().name(),
        source,
        build_id,
        security_counter: p.security_counter(),
        signed: p.is_signed(),
        key_id: lower_hex(&p.key_id()),
    });
    doc.image_list = Some(
        (0..38)
            .map(|slot| Slot {
                slot,
                descriptors: p
                    .untrusted_descriptors(slot)
                    .map(|(flavor, getters)| Descriptor {
                        flavor,
                        getters: getters.into_iter().map(getter).collect(),
                    })
                    .collect(),
            })
            .collect(),
    );
    doc.hwdecode_table_list = Some(
        (0..38)
            .map(|slot| {
                let [cam, table] = p.untrusted_prof_getters(slot).unwrap_or([None, None]);
                ProfSlot {
                    slot,
                    cam: getter(cam),
                    table: getter(table),
                }
            })
            .collect(),
    );
    doc.toc = Some(
        (0..p.blob_count() as u16)
            .filter_map(|n| {
                let e = p.untrusted_toc_entry(n)?;
                Some(Toc {
                    blob: n,
                    offset: e.offset,
                    stored_len: e.stored_len,
                    decoded_len: e.decoded_len,
                    codec: e.codec,
                    sha256: lower_hex(&e.sha256),
                    first_use: p.untrusted_first_use(n).map(|u| u.to_string()),
                })
            })
            .collect(),
    );
}

/// The inspection of the partition bytes `bytes` (named `file`).
fn inspect(
    file: &str,
    bytes: &'static [u8],
    key: Option<&nrtucode::partition::PublicKey>,
    min_counter: Option<u32>,
) -> Doc {
    let mut doc = Doc {
        format: "nrtucode-inspect/1",
        file: file.to_owned(),
        valid: false,
        error: None,
        checks: Checks {
            structure: NOT_CHECKED.into(),
            signature: NOT_CHECKED.into(),
            security_counter: NOT_CHECKED.into(),
            digests: NOT_CHECKED.into(),
        },
        header: None,
        image_list: None,
        hwdecode_table_list: None,
        toc: None,
    };
    let mut errors: Vec<String> = Vec::new();
    let p = match Partition::parse(bytes) {
        Ok(p) => p,
        Err(e) => {
            doc.checks.structure = e.to_string();
            doc.error = Some(e.to_string());
            return doc;
        }
    };
    doc.checks.structure = "ok".into();
    describe(&p, &mut doc);
    if let Some(key) = key {
        let policy = nrtucode::partition::Policy {
            min_security_counter: 0,
            expected_class: p.class(),
        };
        doc.checks.signature = match p.verify(key, &policy) {
            Ok(_) => "ok".into(),
            Err(e) => {
                errors.push(e.to_string());
                e.to_string()
            }
        };
    }
    if let Some(minimum) = min_counter {
        let found = p.security_counter();
        doc.checks.security_counter = if found >= minimum {
            "ok".into()
        } else {
            let e = PartitionError::Rollback { found, minimum }.to_string();
            errors.push(e.clone());
            e
        };
    }
    // Stored blobs in place; compressed ones decoded, and their decoded bytes hashed.
    let compressed = p.untrusted_check_blobs().and_then(|()| {
        let mut inflater = Box::new(nrtucode::deflate::Inflater::new());
        (0..p.blob_count() as u16)
            .filter_map(|n| p.untrusted_toc_entry(n).map(|e| (n, e)))
            .filter(|(_, e)| e.codec != nrtucode::partition::format::CODEC_STORED)
            .try_for_each(|(n, e)| {
                let mut out = vec![0u8; e.decoded_len as usize];
                p.untrusted_check_blob_into(n, &mut out, &mut inflater)
            })
    });
    doc.checks.digests = match compressed {
        Ok(()) => "ok".into(),
        Err(e) => {
            errors.push(e.to_string());
            e.to_string()
        }
    };
    doc.valid = errors.is_empty();
    doc.error = errors.into_iter().next();
    doc
}

fn text(doc: &Doc) -> String {
    let mut rows = vec![vec!["file".to_owned(), doc.file.clone()]];
    if let Some(h) = &doc.header {
        rows.push(vec!["format version".into(), h.version.to_string()]);
        rows.push(vec![
            "total length".into(),
            format!("{} bytes", h.total_len),
        ]);
        rows.push(vec!["table class".into(), h.class.into()]);
        rows.push(vec![
            "source".into(),
            match &h.build_id {
                Some(id) => format!("{} {id}", h.source),
                None => h.source.into(),
            },
        ]);
        rows.push(vec![
            "security counter".into(),
            h.security_counter.to_string(),
        ]);
        rows.push(vec![
            "signed".into(),
            if h.signed {
                format!("yes, key ID {}", h.key_id)
            } else {
                "no".into()
            },
        ]);
    }
    rows.push(vec!["structure".into(), doc.checks.structure.clone()]);
    rows.push(vec!["signature".into(), doc.checks.signature.clone()]);
    rows.push(vec![
        "security counter check".into(),
        doc.checks.security_counter.clone(),
    ]);
    rows.push(vec!["digests".into(), doc.checks.digests.clone()]);
    let mut out = text_table::render(&["partition", "value"], &rows);
    if let Some(slots) = &doc.image_list {
        let rows: Vec<Vec<String>> = slots
            .iter()
            .flat_map(|s| {
                s.descriptors.iter().map(move |d| {
                    let mut row = vec![s.slot.to_string(), d.flavor.to_string()];
                    row.extend(d.getters.iter().cloned());
                    row
                })
            })
            .collect();
        out.push('\n');
        out.push_str(&text_table::render(
            &["slot", "flavor", "IRAM", "DRAM", "SRAM", "EXTRAM"],
            &rows,
        ));
    }
    if let Some(prof) = &doc.hwdecode_table_list {
        let rows: Vec<Vec<String>> = prof
            .iter()
            .filter(|p| p.cam != "null" || p.table != "null")
            .map(|p| vec![p.slot.to_string(), p.cam.clone(), p.table.clone()])
            .collect();
        out.push('\n');
        out.push_str(&text_table::render(
            &["slot", "PROF_CAM", "PROF_TABLE"],
            &rows,
        ));
    }
    if let Some(toc) = &doc.toc {
        let rows: Vec<Vec<String>> = toc
            .iter()
            .map(|t| {
                vec![
                    t.blob.to_string(),
                    t.offset.to_string(),
                    t.stored_len.to_string(),
                    t.decoded_len.to_string(),
                    t.codec.to_string(),
                    t.sha256[..16].to_owned(),
                    t.first_use.clone().unwrap_or_else(|| "-".into()),
                ]
            })
            .collect();
        out.push('\n');
        out.push_str(&text_table::render(
            &[
                "blob",
                "offset",
                "stored",
                "decoded",
                "codec",
                "sha256",
                "first use",
            ],
            &rows,
        ));
    }
    out
}

/// Inspects the partition at `path`.
pub(crate) fn run(
    path: &Path,
    public_key: Option<&Path>,
    min_counter: Option<u32>,
    json: bool,
) -> ExitCode {
    let loaded = read_partition(path).and_then(|bytes| {
        let key = public_key.map(read_public_key).transpose()?;
        Ok((bytes, key))
    });
    let (bytes, key) = match loaded {
        Ok(x) => x,
        Err((exit, message)) => return crate::commands::output::fail(exit, message),
    };
    let doc = inspect(
        &path.display().to_string(),
        bytes,
        key.as_ref(),
        min_counter,
    );
    if json {
        let s = crate::commands::output::json_document(&doc);
        out_fmt!("{s}");
    } else {
        out_fmt!("{}", text(&doc));
    }
    match &doc.error {
        None => ExitCode::SUCCESS,
        Some(e) => {
            err_line!("nrtucode: error: {}: {e}", path.display());
            Exit::DataErr.into()
        }
    }
}
