//! `nrtucode inspect FILE [--public-key PUB.pem] [--min-security-counter N] [--memory-map
//! MAP.x] [--json]`: the header, tables and table of contents of a partition, read from the
//! file as it is or put back together from any flashable form `pack --format` writes (Intel
//! HEX, ELF, UF2; `flash_file`), and its checks, in this order: structure, signature (when a key is given), security counter (when a minimum is given),
//! the placement (with `--memory-map`: a flashable file's address is the map's
//! `__nrtucode_partition_start`, and the partition ends by its `__nrtucode_partition_end`),
//! then the digests: with a key, only once the signature holds (every blob's stored bytes
//! hashed, then each compressed blob decoded and its decoded bytes hashed); after a failed
//! signature, none, and nothing is decoded; with no key, the stored bytes are hashed in place
//! and nothing is decoded, and the verdict says that the signature was not checked.
//! Exit 0 only when every check made holds, 65 with the reason otherwise (66: unreadable); a
//! file inspected with no key exits 0 when its structure and stored digests hold, with a
//! warning on stderr that nothing was vouched for.
//!
//! JSON (`--json`), one object, keys in this order:
//!
//! ```text
//! { "format": "nrtucode-inspect/3", "file": "...",
//!   "verdict": "verified" | "refused" | "signature not checked",
//!   "error": null | "<the first check that failed>",
//!   "checks": { "structure": "ok" | "<why>",
//!               "signature": "ok" | "NOT CHECKED (no --public-key): …" | "<why>",
//!               "security_counter": "ok" | "not checked" | "<why>",
//!               "digests": "ok" | "not checked: …" | "stored bytes match …, nothing decoded" | "<why>",
//!               "memory_map": "ok" | "not checked" | "<why>" },
//!   "header": { "version": 2, "total_len": 123, "class": "full" | "front",
//!               "source": "build-id" | "no-build-id" | "fixtures", "build_id": "<hex>" | null,
//!               "security_counter": 0, "signed": true, "key_id": "<16 hex>" },
//!   "image_list": [ { "slot": 0, "descriptors": [ { "flavor": 1,
//!                     "getters": [GETTER, GETTER, GETTER, GETTER] } ] } ],   // IRAM DRAM SRAM EXTRAM
//!   "hwdecode_table_list": [ { "slot": 7, "cam": GETTER, "table": GETTER } ],
//!   "toc": [ { "blob": 0, "offset": 9232, "stored_len": 36640, "decoded_len": 36640,
//!              "codec": 0, "sha256": "<64 hex: decoded>", "stored_sha256": "<64 hex: stored>",
//!              "first_use": "image_list slot 0 flavor 1 IRAM" } ],
//!   "flash": null | { "format": "ihex" | "elf" | "uf2", "base_address": 2415919104,
//!                     "end_address": 2416007168, "uf2_family": null | 3834380118 } }
//! ```
//!
//! `flash` is null for a partition file as it is (no address in it; with `--memory-map`,
//! only its length is checked against the region: a failure is the `error`).
//!
//! A GETTER is `null` (the getter returns NULL) or `{ "kind": "blob" | "cursor-start" |
//! "cursor-end", "blob": 15 }`: the whole blob of that table-of-contents entry, or a zero-byte
//! cursor at its first byte or one past its last. (`nrtucode-inspect/2` had the strings `"blob 15"`, `"cursor-end 1"`,
//! `"null"`.)
//!
//! `header`, `image_list`, `hwdecode_table_list` and `toc` are null when the structure check
//! failed. Only `"verdict": "verified"` means the file was checked with a key.

use std::path::Path;
use std::process::ExitCode;

use nrtucode::digest::SoftSha256;
use nrtucode::partition::{Getter, Partition, Source, Tables, TrustError};
use nrtucode_facts::hex::lower_hex;
use serde::Serialize;

use crate::commands::{inspect_library, inspect_package};
use crate::shared::error::Error;
use crate::shared::exit::Exit;
use crate::shared::flash_file::{Format, Placement};
use crate::shared::memory_map::{self, PartitionRegion};
use crate::shared::output::Mode;
use crate::shared::output::{err_line, out_fmt};
use crate::shared::reader::{
    Loaded, PartitionOrLibrary, library_refusal, read_partition_or_library,
};
use crate::shared::tables::load_refusal;
use crate::shared::text_table;
use crate::shared::trust::TrustArgs;

#[derive(Serialize)]
struct Checks {
    structure: String,
    signature: String,
    security_counter: String,
    digests: String,
    memory_map: String,
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

/// A getter's answer in the JSON (`None`: NULL, serialized `null`): `kind` is `blob` (the
/// whole blob), `cursor-start` or `cursor-end` (a zero-byte cursor at the first byte of the
/// blob, or one past its last), `blob` the table-of-contents entry.
#[derive(Clone, Copy, Serialize)]
struct GetterDoc {
    kind: &'static str,
    blob: u16,
}

#[derive(Serialize)]
struct Descriptor {
    flavor: i32,
    getters: Vec<Option<GetterDoc>>,
}

#[derive(Serialize)]
struct Slot {
    slot: u32,
    descriptors: Vec<Descriptor>,
}

#[derive(Serialize)]
struct ProfSlot {
    slot: u32,
    cam: Option<GetterDoc>,
    table: Option<GetterDoc>,
}

#[derive(Serialize)]
struct Toc {
    blob: u16,
    offset: u32,
    stored_len: u32,
    decoded_len: u32,
    codec: u8,
    sha256: String,
    stored_sha256: String,
    first_use: Option<String>,
}

#[derive(Serialize)]
pub(crate) struct Doc {
    format: &'static str,
    file: String,
    pub(crate) verdict: &'static str,
    pub(crate) error: Option<String>,
    checks: Checks,
    header: Option<Header>,
    image_list: Option<Vec<Slot>>,
    hwdecode_table_list: Option<Vec<ProfSlot>>,
    toc: Option<Vec<Toc>>,
    flash: Option<Flash>,
}

/// Where a flashable file puts the partition (`flash` in the JSON).
#[derive(Serialize)]
struct Flash {
    format: &'static str,
    base_address: u32,
    end_address: u64,
    uf2_family: Option<u32>,
}

impl Doc {
    /// One line of the header: length, class, security counter, key ID (`None` when the
    /// structure did not parse).
    pub(crate) fn header_line(&self) -> Option<String> {
        let h = self.header.as_ref()?;
        Some(format!(
            "partition: {} bytes, {} tables, security counter {}, {}",
            h.total_len,
            h.class,
            h.security_counter,
            if h.signed {
                format!("key ID {}", h.key_id)
            } else {
                "unsigned".into()
            }
        ))
    }
}

fn getter(g: Option<Getter>) -> Option<GetterDoc> {
    let (kind, id) = match g? {
        Getter::Blob(n) => ("blob", n),
        Getter::CursorStart(n) => ("cursor-start", n),
        Getter::CursorEnd(n) => ("cursor-end", n),
    };
    Some(GetterDoc {
        kind,
        blob: id.raw(),
    })
}

/// A getter as the text tables show it: `blob 15`, `cursor-end 1`, `null`.
fn getter_text(g: Option<GetterDoc>) -> String {
    g.map_or_else(|| "null".into(), |g| format!("{} {}", g.kind, g.blob))
}

const NOT_CHECKED: &str = "not checked";
/// The signature check's line without `--public-key`.
const SIGNATURE_NOT_CHECKED: &str =
    "NOT CHECKED (no --public-key): nothing in this file is vouched for";
/// The digests line under `--insecure-skip-signature` when every blob holds.
const INSECURE_DIGESTS: &str = "stored bytes and every decoded blob match the table of contents, which nothing vouches for (--insecure-skip-signature)";
/// The verdict without `--public-key`.
const UNVERIFIED: &str = "signature not checked";
/// The digests line without `--public-key`: the stored bytes were hashed, nothing decoded.
const UNVOUCHED_DIGESTS: &str = "stored bytes match the table of contents, which nothing vouches for (signature not checked); nothing decoded";

fn describe(p: &Partition<'_>, doc: &mut Doc) {
    // Read only, for the report: nothing read here is vouched for until the signature holds.
    let t: Tables<'_> = p.untrusted_tables();
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
                descriptors: t
                    .descriptors(slot)
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
                let [cam, table] = t.prof_getters(slot).unwrap_or([None, None]);
                ProfSlot {
                    slot,
                    cam: getter(cam),
                    table: getter(table),
                }
            })
            .collect(),
    );
    doc.toc = Some(
        t.blob_ids()
            .filter_map(|n| {
                let e = t.toc_entry(n)?;
                Some(Toc {
                    blob: n.raw(),
                    offset: e.offset,
                    stored_len: e.stored_len,
                    decoded_len: e.decoded_len,
                    codec: e.codec.raw(),
                    sha256: lower_hex(&e.sha256),
                    stored_sha256: lower_hex(&e.stored_sha256),
                    first_use: t.first_use(n).map(|u| u.to_string()),
                })
            })
            .collect(),
    );
}

/// How `inspect` reads a partition without a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unsigned {
    /// The stored bytes hashed, nothing decoded, nothing vouched for.
    StoredOnly,
    /// `--insecure-skip-signature`: an unsigned partition read as `list` reads it, every blob
    /// checked and every compressed blob decoded (a signed one is refused: verify it).
    Insecure,
}

/// The inspection of the partition bytes `bytes` (named `file`).
pub(crate) fn inspect(
    file: &str,
    bytes: &'static [u8],
    key: Option<&nrtucode::partition::PublicKey>,
    min_counter: Option<u32>,
    unsigned: Unsigned,
) -> Doc {
    let mut doc = Doc {
        format: "nrtucode-inspect/3",
        file: file.to_owned(),
        verdict: "refused",
        error: None,
        checks: Checks {
            structure: NOT_CHECKED.into(),
            signature: SIGNATURE_NOT_CHECKED.into(),
            security_counter: NOT_CHECKED.into(),
            digests: NOT_CHECKED.into(),
            memory_map: NOT_CHECKED.into(),
        },
        header: None,
        image_list: None,
        hwdecode_table_list: None,
        toc: None,
        flash: None,
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
    let verified = key.map(|key| {
        let policy = nrtucode::partition::Policy {
            min_security_counter: 0,
            expected_class: p.class(),
        };
        p.verify(key, &policy)
    });
    doc.checks.signature = match &verified {
        Some(Ok(_)) => "ok".into(),
        Some(Err(e)) => {
            errors.push(e.to_string());
            e.to_string()
        }
        None => SIGNATURE_NOT_CHECKED.into(),
    };
    if let Some(minimum) = min_counter {
        let found = p.security_counter();
        doc.checks.security_counter = if found >= minimum {
            "ok".into()
        } else {
            let e = TrustError::Rollback { found, minimum }.to_string();
            errors.push(e.clone());
            e
        };
    }
    // Authenticate, then decode: the digests only after the signature held (or, with no key,
    // the stored bytes hashed in place and nothing decoded), never after it failed.
    doc.checks.digests = match &verified {
        Some(Ok(v)) => match v
            .check_blobs(&mut SoftSha256::new())
            .and_then(|checked| checked.check_decoding())
        {
            Ok(_) => "ok".into(),
            Err(e) => {
                let said = load_refusal(&v.tables(), e);
                errors.push(said.clone());
                said
            }
        },
        Some(Err(_)) => "not checked: the signature did not verify".into(),
        None if unsigned == Unsigned::Insecure => {
            let policy = nrtucode::partition::Policy {
                min_security_counter: 0,
                expected_class: p.class(),
            };
            let decoded = match p.insecure_trust_unsigned(&policy) {
                Ok(u) => u
                    .check_decoding()
                    .map_err(|e| load_refusal(&p.untrusted_tables(), e)),
                Err(e) => Err(e.to_string()),
            };
            match decoded {
                Ok(_) => INSECURE_DIGESTS.into(),
                Err(said) => {
                    errors.push(said.clone());
                    said
                }
            }
        }
        None => match p
            .untrusted_tables()
            .check_stored_digests(&mut SoftSha256::new())
        {
            Ok(()) => UNVOUCHED_DIGESTS.into(),
            Err(e) => {
                let said = load_refusal(&p.untrusted_tables(), e);
                errors.push(said.clone());
                said
            }
        },
    };
    doc.verdict = if !errors.is_empty() {
        "refused"
    } else if matches!(verified, Some(Ok(_))) {
        "verified"
    } else {
        UNVERIFIED
    };
    doc.error = errors.into_iter().next();
    doc
}

/// The placement check (`--memory-map`): a flashable file's address is the region's start,
/// and the partition (its header's `total_len`) ends by the region's end. A failure refuses
/// the file (the first error, if no other check failed before).
fn check_placement(
    doc: &mut Doc,
    flashed: Option<(Format, Placement)>,
    region: Option<PartitionRegion>,
) {
    let total_len = doc.header.as_ref().map_or(0, |h| h.total_len as u64);
    if let Some((format, p)) = flashed {
        doc.flash = Some(Flash {
            format: format.name(),
            base_address: p.base_address,
            end_address: u64::from(p.base_address) + total_len,
            uf2_family: p.uf2_family,
        });
    }
    let Some(r) = region else { return };
    let refusal = match flashed {
        Some((_, p)) if u64::from(p.base_address) != r.start => Some(format!(
            "the file is for {:#010x}; the memory map's {} is {:#010x}",
            p.base_address,
            memory_map::START_SYMBOL,
            r.start
        )),
        _ if total_len > r.len() => Some(format!(
            "the partition is {total_len} bytes; the memory map's region {:#010x}..{:#010x} holds {}",
            r.start,
            r.end,
            r.len()
        )),
        _ => None,
    };
    doc.checks.memory_map = match refusal {
        None => "ok".to_owned(),
        Some(why) => {
            doc.verdict = "refused";
            doc.error.get_or_insert_with(|| why.clone());
            why
        }
    };
}

fn text(doc: &Doc) -> String {
    let verdict = match (doc.verdict, &doc.error) {
        ("verified", _) => {
            "VERIFIED: the signature, the tables and every blob's digests hold".into()
        }
        (UNVERIFIED, _) => {
            "SIGNATURE NOT CHECKED (no --public-key): nothing in this file is vouched for".into()
        }
        (_, Some(e)) => format!("REFUSED: {e}"),
        (_, None) => "REFUSED".into(),
    };
    let mut rows = vec![
        vec!["verdict".to_owned(), verdict],
        vec!["file".to_owned(), doc.file.clone()],
    ];
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
    if let Some(f) = &doc.flash {
        rows.push(vec![
            "flashed as".into(),
            format!(
                "{} for {:#010x}..{:#010x}{}",
                f.format,
                f.base_address,
                f.end_address,
                f.uf2_family
                    .map(|id| format!(", UF2 family {id:#010x}"))
                    .unwrap_or_default()
            ),
        ]);
    }
    rows.push(vec!["structure".into(), doc.checks.structure.clone()]);
    rows.push(vec!["signature".into(), doc.checks.signature.clone()]);
    rows.push(vec![
        "security counter check".into(),
        doc.checks.security_counter.clone(),
    ]);
    rows.push(vec!["digests".into(), doc.checks.digests.clone()]);
    rows.push(vec![
        "memory map check".into(),
        doc.checks.memory_map.clone(),
    ]);
    let mut out = text_table::render(&["partition", "value"], &rows);
    if let Some(slots) = &doc.image_list {
        let rows: Vec<Vec<String>> = slots
            .iter()
            .flat_map(|s| {
                s.descriptors.iter().map(move |d| {
                    let mut row = vec![s.slot.to_string(), d.flavor.to_string()];
                    row.extend(d.getters.iter().copied().map(getter_text));
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
            .filter(|p| p.cam.is_some() || p.table.is_some())
            .map(|p| vec![p.slot.to_string(), getter_text(p.cam), getter_text(p.table)])
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

/// Inspects `path`: a partition in any form, trusted as `trust` says (one key, or the key its
/// header names of several; without one, nothing is vouched for); a C library built from
/// `nrtucode-capi`, its library record (`inspect_library`); an update package, what it holds
/// and, with `base`, the partition it gives over that base, as a partition file is inspected
/// (`inspect_package`).
pub(crate) fn run(
    path: &Path,
    trust: &TrustArgs,
    memory_map: Option<&Path>,
    base: Option<&Path>,
    json: bool,
) -> ExitCode {
    let loaded = match read_partition_or_library(path) {
        Ok(PartitionOrLibrary::Library(content)) => {
            let shown = path.display().to_string();
            return match content
                .as_deref()
                .and_then(|c| inspect_library::read(&shown, c))
            {
                Some(Ok(doc)) => inspect_library::show(path, &doc, trust, memory_map, json),
                Some(Err(e)) => {
                    Mode::json(json).fail(Error::new(Exit::DataErr, format!("{shown}: {e}")))
                }
                None => Mode::json(json).fail(library_refusal(path, content.as_deref())),
            };
        }
        Ok(PartitionOrLibrary::Package(bytes)) => {
            return inspect_package::run(path, &bytes, base, trust, memory_map, json);
        }
        Ok(PartitionOrLibrary::Partition(loaded)) => Ok(loaded),
        Err(e) => Err(e),
    };
    if let Some(base) = base {
        return Mode::json(json).fail(Error::new(
            Exit::Usage,
            format!(
                "{}: --base {} is for an update package; this is a partition",
                path.display(),
                base.display()
            ),
        ));
    }
    match partition_doc(path, loaded, trust, memory_map) {
        Ok(doc) => show(path, &doc, json),
        Err(e) => Mode::json(json).fail(e),
    }
}

/// The inspection of the partition `loaded` read from `path` (a file, or the partition an
/// update package gives), with the trust options and the memory map: the document, or the
/// error that stopped it before any check.
pub(crate) fn partition_doc(
    path: &Path,
    loaded: Result<Loaded, Error>,
    trust: &TrustArgs,
    memory_map: Option<&Path>,
) -> Result<Doc, Error> {
    let (Loaded { bytes, flashed }, key, region) = loaded.and_then(|loaded| {
        let named = Partition::parse(&loaded.bytes)
            .ok()
            .filter(Partition::is_signed)
            .map(|p| p.key_id());
        let key = trust.key_named(path, named)?;
        let region = memory_map.map(memory_map::read).transpose()?;
        Ok((loaded, key, region))
    })?;
    let unsigned = if trust.insecure_skip_signature {
        Unsigned::Insecure
    } else {
        Unsigned::StoredOnly
    };
    let mut doc = inspect(
        &path.display().to_string(),
        Box::leak(bytes),
        key.as_ref(),
        trust.min_security_counter,
        unsigned,
    );
    check_placement(&mut doc, flashed, region);
    Ok(doc)
}

/// Prints `doc` (JSON or text) and its verdict: the exit code.
fn show(path: &Path, doc: &Doc, json: bool) -> ExitCode {
    if json {
        let s = crate::shared::output::json_document(doc);
        out_fmt!("{s}");
    } else {
        out_fmt!("{}", text(doc));
    }
    verdict(path, doc)
}

/// The exit code of `doc`'s verdict, with its warning or error on stderr.
pub(crate) fn verdict(path: &Path, doc: &Doc) -> ExitCode {
    match &doc.error {
        None if doc.verdict == UNVERIFIED => {
            err_line!(
                "nrtucode: warning: {}: signature not checked (no --public-key): nothing in this file is vouched for",
                path.display()
            );
            ExitCode::SUCCESS
        }
        None => ExitCode::SUCCESS,
        Some(e) => {
            err_line!("nrtucode: error: {}: {e}", path.display());
            Exit::DataErr.into()
        }
    }
}

/// The text form of `doc`.
pub(crate) fn doc_text(doc: &Doc) -> String {
    text(doc)
}
