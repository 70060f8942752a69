//! `nrtucode prof`: decode and validate the PROF_CAM / PROF_TABLE pair of one slot with the
//! core crate's zero-copy views (`nrtucode::prof`).
//!
//! JSON (`--json`), one object, keys in this order:
//!
//! ```text
//! { "format": "nrtucode-prof/1",
//!   "slot": 7, "generation": "CAYMAN", "class": "NX", "engine": "ACT",
//!   "cam":   { "size": 1024, "sha256": "<64 hex>" },
//!   "table": { "size": 8192, "sha256": "<64 hex>" },
//!   "valid": true,                 // validate_pair() accepted the pair
//!   "error": null | "<message>",   // why not
//!   "armed": 47,                   // armed CAM records = populated TABLE records
//!   "nine_bit_matches": 0,         // records with mask 0x1ff
//!   "control_records": 9,          // TABLE records carrying only the class word
//!   "records": [ { "index": 0, "opcode": 1, "mask": 255, "enable": 1, "wildcard": false,
//!                  "class": 3, "cfg0": 305419896, "cfg1": 0,
//!                  "descriptor": "<24 hex>", "control": false } ] }
//! ```
//!
//! `records` lists the armed CAM records with their parallel TABLE records; when validation
//! fails it lists every record with a non-zero CAM or TABLE word, so the bad one is visible,
//! and the exit code is 65.
//!
//! When there is nothing to decode (the resolver fails: the slot has no profiler table, or the
//! index, like any integer C can pass, is no slot), the exit code is the resolver's code, as
//! `resolve` gives it, and `--json` still prints one object, keys in this order:
//!
//! ```text
//! { "format": "nrtucode-prof/1",
//!   "slot": 0, "generation": "SUNDA" | null, "class": "NX" | null, "engine": "ACT" | null,
//!   "valid": false,
//!   "error": "SUNDA NX ACT (slot 0), profiler CAM: no profiler table in this slot (code 2)",
//!   "resolver_code": 2,            // what get_hwdecode_table answered
//!   "exit_code": 2 }
//! ```
//!
//! (`generation` is null for an index that is no slot, `class` and `engine` also for the empty
//! slot 36; `resolver_code` is null and `exit_code` 65 when a blob has the wrong size.)
//!
//! An argument that is neither a slot name nor an integer of C's range (`prof foo --json`) is
//! a usage error, exit 64; with `--json` it is one object too:
//!
//! ```text
//! { "format": "nrtucode-prof/1", "argument": "foo", "valid": false,
//!   "error": "invalid value 'foo' for '<IDX>': 'foo' is not a slot name ...", "exit_code": 64 }
//! ```

use std::process::ExitCode;

use nrtucode::prof::{CamView, TableView, validate_pair};
use nrtucode::{CoreClass, Engine, ImageIndex, ProfKind, Request};
use nrtucode_facts::hex::lower_hex;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::shared::exit::Exit;
use crate::shared::output::{err_fmt, out_fmt};
use crate::shared::tables::TableSource;
use crate::shared::text_table;
use crate::shared::values::parse_raw_index;

/// Size and hash of one blob.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct BlobInfo {
    /// Bytes.
    pub size: usize,
    /// sha256, lowercase hex.
    pub sha256: String,
}

/// One CAM record with its TABLE record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Record {
    /// Record number.
    pub index: usize,
    /// CAM opcode id.
    pub opcode: u32,
    /// CAM mask.
    pub mask: u32,
    /// CAM enable.
    pub enable: u32,
    /// `true` for the catch-all `{0, 0, 1, 0}`.
    pub wildcard: bool,
    /// TABLE class word.
    pub class: u32,
    /// TABLE cfg0.
    pub cfg0: u32,
    /// TABLE cfg1.
    pub cfg1: u32,
    /// TABLE descriptor bytes 0x08..0x14, hex.
    pub descriptor: String,
    /// `true` when the TABLE record carries only the class word.
    pub control: bool,
}

/// The JSON document of `prof --json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct ProfDoc {
    /// `nrtucode-prof/1`.
    pub format: &'static str,
    /// Slot.
    pub slot: u32,
    /// Generation.
    pub generation: &'static str,
    /// Core class.
    pub class: &'static str,
    /// Engine.
    pub engine: &'static str,
    /// The CAM blob.
    pub cam: BlobInfo,
    /// The TABLE blob.
    pub table: BlobInfo,
    /// `true` when the pair validates.
    pub valid: bool,
    /// Why it does not.
    pub error: Option<String>,
    /// Armed records.
    pub armed: usize,
    /// Records with a 9-bit mask.
    pub nine_bit_matches: usize,
    /// Control records.
    pub control_records: usize,
    /// The records.
    pub records: Vec<Record>,
}

/// The JSON document of `prof --json` when there is no pair to decode.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct ProfFailureDoc {
    /// `nrtucode-prof/1`.
    pub format: &'static str,
    /// Slot.
    pub slot: u32,
    /// Generation (`None` for an index that is no slot).
    pub generation: Option<&'static str>,
    /// Core class (`None` for the empty slot).
    pub class: Option<&'static str>,
    /// Engine (`None` for the empty slot).
    pub engine: Option<&'static str>,
    /// Always `false`.
    pub valid: bool,
    /// What failed.
    pub error: String,
    /// The resolver's code, when the resolver failed.
    pub resolver_code: Option<i32>,
    /// The exit code.
    pub exit_code: u8,
}

/// The JSON document of `prof --json` when the slot argument is not a slot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct ProfUsageDoc {
    /// `nrtucode-prof/1`.
    pub format: &'static str,
    /// The argument as given.
    pub argument: String,
    /// Always `false`.
    pub valid: bool,
    /// Why it is not a slot.
    pub error: String,
    /// The exit code (64).
    pub exit_code: u8,
}

/// `prof` output for the slot argument `text` as typed: [`render`] for a slot; for any other
/// integer C can pass, the resolver's answer (code 1 above 37, as `resolve` gives it); for a
/// word that is neither an integer nor a slot name, a usage error (exit 64). As JSON with
/// `json`.
pub fn render_arg(text: &str, json: bool) -> ProfOutput {
    render_arg_from(&nrtucode::Embedded, text, json)
}

/// [`render_arg`] over `tables` (the embedded ones or a partition's).
pub fn render_arg_from<T: TableSource>(tables: &'static T, text: &str, json: bool) -> ProfOutput {
    let message = match parse_raw_index(text) {
        Ok(raw) => match ImageIndex::from_raw(raw) {
            Some(idx) => return render_from(tables, idx, json),
            None => return render_out_of_range(raw, json),
        },
        Err(e) => format!("invalid value '{text}' for '<IDX>': {e}"),
    };
    let stdout = if json {
        let doc = ProfUsageDoc {
            format: "nrtucode-prof/1",
            argument: text.to_owned(),
            valid: false,
            error: message.clone(),
            exit_code: Exit::Usage.code(),
        };
        crate::shared::output::json_document(&doc)
    } else {
        String::new()
    };
    ProfOutput {
        stdout,
        stderr: format!("nrtucode: error: {message}\nnrtucode: hint: see 'nrtucode prof --help'\n"),
        code: Exit::Usage.code(),
    }
}

/// `prof` output for an index that is no slot: the resolver's failure for its CAM table.
fn render_out_of_range(raw: u32, json: bool) -> ProfOutput {
    let failure = match Request::prof(raw, ProfKind::Cam.raw()).resolve(&nrtucode::NoEnv) {
        Err(failure) => failure,
        // Unreachable (only 0..=37 are slots); reported rather than assumed.
        Ok(_) => {
            return ProfOutput {
                stdout: String::new(),
                stderr: format!("nrtucode: error: index {raw} resolved but is no slot\n"),
                code: Exit::DataErr.code(),
            };
        }
    };
    failure_output(raw, None, resolver_failure(&failure), json)
}

/// A resolver failure as a [`DecodeError`]: the exit code is the resolver's code, as `resolve`
/// exits.
fn resolver_failure(failure: &nrtucode::Failure) -> DecodeError {
    let code = u8::try_from(failure.code()).unwrap_or(u8::MAX);
    (code, Some(failure.code()), failure.to_string())
}

/// The output of a pair that could not be decoded, for slot argument `raw` (`idx`, when it is
/// a slot).
fn failure_output(
    raw: u32,
    idx: Option<ImageIndex>,
    (code, resolver_code, message): DecodeError,
    json: bool,
) -> ProfOutput {
    let stdout = if json {
        let doc = ProfFailureDoc {
            format: "nrtucode-prof/1",
            slot: raw,
            generation: idx.map(|i| i.generation().name()),
            class: idx.and_then(ImageIndex::class).map(CoreClass::name),
            engine: idx.and_then(ImageIndex::engine).map(Engine::name),
            valid: false,
            error: message.clone(),
            resolver_code,
            exit_code: code,
        };
        crate::shared::output::json_document(&doc)
    } else {
        String::new()
    };
    ProfOutput {
        stdout,
        stderr: format!("nrtucode: error: {message}\n"),
        code,
    }
}

/// The rendered output and exit code of `prof`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfOutput {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Exit code: 0, 65 when validation fails, the resolver's code when it fails (2: the slot has
    /// no profiler table), 64 for an argument that is no index.
    pub code: u8,
}

/// Why a pair could not be decoded: the exit code, the resolver's code if it failed, and the
/// message.
pub(crate) type DecodeError = (u8, Option<i32>, String);

/// Decodes the profiler pair of `idx`.
pub(crate) fn decode<T: TableSource>(
    tables: &'static T,
    idx: ImageIndex,
) -> Result<ProfDoc, DecodeError> {
    let fetch = |kind: ProfKind| {
        tables
            .resolve_hwdecode(idx, kind)
            .map_err(|e| resolver_failure(&e.with_request(Request::typed_prof(idx, kind))))
    };
    let cam_bytes = fetch(ProfKind::Cam)?;
    let table_bytes = fetch(ProfKind::Table)?;
    let slot = idx.slot();
    let bad = |what: &str, e: &dyn std::fmt::Display| {
        (
            Exit::DataErr.code(),
            None,
            format!("{what} of slot {}: {e}", idx.raw()),
        )
    };
    let cam = CamView::new(cam_bytes).map_err(|e| bad("PROF_CAM", &e))?;
    let table = TableView::new(table_bytes).map_err(|e| bad("PROF_TABLE", &e))?;
    let summary = validate_pair(&cam, &table);
    let listed = match &summary {
        Ok(s) => s.armed,
        Err(_) => nrtucode::prof::RECORDS,
    };
    let records = cam
        .records()
        .zip(table.records())
        .enumerate()
        .take(listed)
        .filter(|(_, (c, t))| {
            summary.is_ok()
                || (c.opcode_id | c.mask | c.enable | c.reserved) != 0
                || t.is_populated()
        })
        .map(|(index, (c, t))| Record {
            index,
            opcode: c.opcode_id,
            mask: c.mask,
            enable: c.enable,
            wildcard: c.is_wildcard(),
            class: t.class(),
            cfg0: t.cfg0(),
            cfg1: t.cfg1(),
            descriptor: lower_hex(&t.descriptor()),
            control: t.is_control(),
        })
        .collect();
    Ok(ProfDoc {
        format: "nrtucode-prof/1",
        slot: idx.raw(),
        generation: idx.generation().name(),
        class: slot.map_or("-", |s| s.class.name()),
        engine: slot.map_or("-", |s| s.engine.name()),
        cam: BlobInfo {
            size: cam_bytes.len(),
            sha256: lower_hex(&Sha256::digest(cam_bytes)),
        },
        table: BlobInfo {
            size: table_bytes.len(),
            sha256: lower_hex(&Sha256::digest(table_bytes)),
        },
        valid: summary.is_ok(),
        error: summary.as_ref().err().map(|e| e.to_string()),
        armed: summary.as_ref().map_or(0, |s| s.armed),
        nine_bit_matches: summary.as_ref().map_or(0, |s| s.nine_bit_matches),
        control_records: summary.as_ref().map_or(0, |s| s.control_records),
        records,
    })
}

/// `prof` output for slot `idx`.
pub fn render(idx: ImageIndex, json: bool) -> ProfOutput {
    render_from(&nrtucode::Embedded, idx, json)
}

/// [`render`] over `tables` (the embedded ones or a partition's).
pub fn render_from<T: TableSource>(tables: &'static T, idx: ImageIndex, json: bool) -> ProfOutput {
    let doc = match decode(tables, idx) {
        Ok(d) => d,
        Err(e) => return failure_output(idx.raw(), Some(idx), e, json),
    };
    let code = if doc.valid { 0 } else { Exit::DataErr.code() };
    let stderr = doc
        .error
        .as_ref()
        .map(|e| {
            format!(
                "nrtucode: error: slot {}: invalid profiler pair: {e}\n",
                idx.raw()
            )
        })
        .unwrap_or_default();
    if json {
        let stdout = crate::shared::output::json_document(&doc);
        return ProfOutput {
            stdout,
            stderr,
            code,
        };
    }
    let head = vec![
        vec![
            "slot".into(),
            format!(
                "{} {} {} {}",
                doc.slot, doc.generation, doc.class, doc.engine
            ),
        ],
        vec![
            "PROF_CAM".into(),
            format!("{} bytes, sha256 {}", doc.cam.size, doc.cam.sha256),
        ],
        vec![
            "PROF_TABLE".into(),
            format!("{} bytes, sha256 {}", doc.table.size, doc.table.sha256),
        ],
        vec![
            "valid".into(),
            if doc.valid {
                "yes".into()
            } else {
                format!("no: {}", doc.error.as_deref().unwrap_or(""))
            },
        ],
        vec!["armed".into(), doc.armed.to_string()],
        vec!["9-bit matches".into(), doc.nine_bit_matches.to_string()],
        vec!["control records".into(), doc.control_records.to_string()],
    ];
    let rows: Vec<Vec<String>> = doc
        .records
        .iter()
        .map(|r| {
            vec![
                r.index.to_string(),
                format!("{:#05x}", r.opcode),
                format!("{:#05x}", r.mask),
                r.enable.to_string(),
                r.class.to_string(),
                format!("{:08x}", r.cfg0),
                format!("{:08x}", r.cfg1),
                r.descriptor.clone(),
                if r.wildcard {
                    "wildcard".into()
                } else if r.control {
                    "control".into()
                } else {
                    String::new()
                },
            ]
        })
        .collect();
    let stdout = format!(
        "{}\n{}",
        text_table::render(&["prof", "value"], &head),
        text_table::render(
            &[
                "rec",
                "opcode",
                "mask",
                "en",
                "class",
                "cfg0",
                "cfg1",
                "descriptor",
                "note"
            ],
            &rows
        )
    );
    ProfOutput {
        stdout,
        stderr,
        code,
    }
}

/// Prints the decoded pair of the slot `idx` names (see [`render_arg`]) and exits with its
/// code.
pub(crate) fn run<T: TableSource>(tables: &'static T, idx: &str, json: bool) -> ExitCode {
    let out = render_arg_from(tables, idx, json);
    out_fmt!("{}", out.stdout);
    err_fmt!("{}", out.stderr);
    ExitCode::from(out.code)
}
