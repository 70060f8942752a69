//! What `sbom` and `diff` read: any of the three inputs the tool knows (a vendor library, a blob
//! directory, a partition), told apart by what the path is (a directory: a blob directory) and
//! by its first bytes (`\x7fELF`: a library; `NRTUPART`: a partition), turned into one
//! [`Inventory`]: where the blobs come from ([`Origin`]) and every getter of both vendor tables
//! with its blob's size and SHA-256 ([`list::entries`], the rows `nrtucode list` prints).
//!
//! A library is carved in memory and a blob directory read and checked as `nrtucode check`
//! does; their blobs are then laid out as an unsigned partition in memory (`nrtucode_pack`), so
//! that all three inputs are read by one reader: the partition's, the same tables and getters
//! `list --partition` answers from. A partition file is verified with `--public-key` first (or,
//! for an unsigned pack only, read under `--insecure-skip-signature`), then every blob is
//! checked against its digest, as `list --partition` does: nothing is reported from bytes that
//! were not checked.

use std::path::Path;

use nrtucode::partition::{LoadedPartition, PartitionFile, Policy, Source, Unverified};
use nrtucode_facts::hex::lower_hex;
use nrtucode_pack::{Blobs, PackOptions, pack};
use serde::Serialize;
use sha2::{Digest as _, Sha256};

use crate::commands::list::{self, ListEntry};
use crate::shared::carve_diagnosis::library_refusal;
use crate::shared::error::Error;
use crate::shared::exit::{self, Exit};
use crate::shared::reader::{What, read_partition, what_is};
use crate::shared::trust::TrustArgs;

/// Which of the three inputs a path is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum InputKind {
    /// An x86-64 ELF shared object (the vendor's library).
    Library,
    /// A blob directory `nrtucode carve` wrote.
    BlobDir,
    /// A partition `nrtucode pack` wrote.
    Partition,
}

impl InputKind {
    /// `library`, `blob directory`, `partition`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            InputKind::Library => "library",
            InputKind::BlobDir => "blob directory",
            InputKind::Partition => "partition",
        }
    }
}

/// Where an inventory's blobs come from: the facts about the input itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Origin {
    /// What the input is.
    pub kind: InputKind,
    /// Its file name (the last component of the path given; no directory, so that the same
    /// input named from elsewhere reports the same).
    pub name: String,
    /// The SHA-256 of the input file (a blob directory: of the library it was carved from, as
    /// its manifest records it; `None` when the manifest does not say).
    pub sha256: Option<String>,
    /// The vendor library's GNU build ID in hex (a library's own, a blob directory's or a
    /// partition's record of it); `None` when there is none (or the blobs are the fixtures).
    pub build_id: Option<String>,
    /// `full` or `front`: the table class.
    pub class: &'static str,
    /// A partition's key ID (16 hex digits), `None` when unsigned or not a partition.
    pub key_id: Option<String>,
    /// A partition's security counter.
    pub security_counter: Option<u32>,
    /// A partition's record of its blobs' source: `build-id`, `no-build-id` or `fixtures`.
    pub source: Option<&'static str>,
}

/// One input read: where from, and every getter of both tables, in table order.
#[derive(Clone, Debug)]
pub(crate) struct Inventory {
    /// The input.
    pub origin: Origin,
    /// Every (slot, descriptor, region) of `image_list`, then every (slot, kind) of
    /// `hwdecode_table_list`, with its blob's state, size and SHA-256.
    pub entries: Vec<ListEntry>,
}

/// The file name `path` ends in (the whole path if it has none, as `.` or `/`).
fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The getters of a partition the tool laid out itself, in memory, from `blobs` (unsigned:
/// nothing to vouch for beyond the blobs just read), through the partition reader.
fn tables_of(blobs: &Blobs, path: &Path) -> Result<&'static LoadedPartition<Unverified>, Error> {
    let shown = path.display();
    let bytes = pack(
        blobs,
        &PackOptions {
            security_counter: 0,
            key: None,
        },
    )
    .map_err(|e| Error::new(Exit::DataErr, format!("{shown}: {e}")))?;
    let file = PartitionFile::from_bytes(bytes);
    let policy = any_class(&file, path)?;
    let checked = file
        .insecure_trust_unsigned(&policy)
        .map_err(|e| Error::new(Exit::DataErr, format!("{shown}: its blobs laid out: {e}")))?;
    Ok(Box::leak(Box::new(checked)))
}

/// The policy the tool reads a partition it laid out itself with: any counter, its own class.
fn any_class(file: &PartitionFile, path: &Path) -> Result<Policy, Error> {
    let parsed = file.parse().map_err(|e| Error::refused(path, e))?;
    Ok(Policy {
        min_security_counter: 0,
        expected_class: parsed.class(),
    })
}

/// `Some(hex)` unless the manifest's or carve's `unknown` (or empty).
fn known(text: &str) -> Option<String> {
    (!text.is_empty() && text != "unknown").then(|| text.to_owned())
}

fn pack_refusal(path: &Path, e: nrtucode_pack::PackError) -> Error {
    let exit = match &e {
        nrtucode_pack::PackError::Io { source, .. } => exit::reading(source),
        _ => Exit::DataErr,
    };
    Error::new(exit, format_args!("{}: {e}", path.display())).caused_by(e)
}

/// Reads the input at `path`, whichever of the three it is. A partition is trusted as `trust`
/// says (a `--public-key` it must verify with, or `--insecure-skip-signature` for an unsigned
/// one); without either it is refused (exit 64), as `list --partition` refuses it.
pub(crate) fn read(path: &Path, trust: &TrustArgs) -> Result<Inventory, Error> {
    let name = file_name(path);
    let (origin, tables) = match what_is(path)? {
        What::Library => {
            let (carve, data) = nrtucode_carve::carve_file(path).map_err(|e| match &e {
                nrtucode_carve::FileError::Io { source, .. } => {
                    Error::new(exit::reading(source), e.to_string())
                }
                _ => Error::new(Exit::DataErr, library_refusal(&e)),
            })?;
            crate::shared::output_file::note_input_path(path);
            let blobs =
                Blobs::from_carve(path, &carve, &data).map_err(|e| pack_refusal(path, e))?;
            let origin = Origin {
                kind: InputKind::Library,
                name,
                sha256: known(&carve.header.source_sha256),
                build_id: known(&carve.header.build_id),
                class: blobs.class.name(),
                key_id: None,
                security_counter: None,
                source: None,
            };
            (origin, tables_of(&blobs, path)?)
        }
        What::BlobDir => {
            // One reading: the manifest's header and the blobs packed are those checked.
            let read = nrtucode_facts::blob_dir::read_checked_blob_dir(path).map_err(|e| {
                let problems: Vec<String> = e.problems.iter().map(ToString::to_string).collect();
                // As `check`: a directory with no readable manifest is no input.
                let exit = match e.problems.as_slice() {
                    [nrtucode_facts::blob_dir::BlobDirProblem::NoManifest(_)] => Exit::NoInput,
                    _ => Exit::DataErr,
                };
                Error::new(
                    exit,
                    format_args!("{}: {}", path.display(), problems.join("\n")),
                )
            })?;
            let blobs = Blobs::from_checked_dir(path, &read).map_err(|e| pack_refusal(path, e))?;
            for input in blobs.inputs() {
                crate::shared::output_file::note_input_path(input);
            }
            let manifest = &read.dir.manifest.header;
            let origin = Origin {
                kind: InputKind::BlobDir,
                name,
                sha256: known(&manifest.source_sha256),
                build_id: known(&manifest.build_id),
                class: blobs.class.name(),
                key_id: None,
                security_counter: None,
                source: None,
            };
            (origin, tables_of(&blobs, path)?)
        }
        What::Partition => {
            // Read once, in any form `inspect` reads: the digest reported is of the partition's
            // bytes verified (a partition file's own; a flashable form's put back together).
            let bytes = read_partition(path)?.bytes;
            let checked: &'static LoadedPartition<Unverified> =
                Box::leak(Box::new(trust.open(path, bytes.into_vec())?));
            let p = checked.partition();
            let (source, build_id) = match p.source() {
                Source::BuildId(id) => ("build-id", Some(lower_hex(id))),
                Source::NoBuildId => ("no-build-id", None),
                Source::Fixtures => ("fixtures", None),
            };
            let origin = Origin {
                kind: InputKind::Partition,
                name,
                sha256: Some(lower_hex(&Sha256::digest(p.bytes()))),
                build_id,
                class: p.class().name(),
                key_id: p.is_signed().then(|| lower_hex(&p.key_id())),
                security_counter: Some(p.security_counter()),
                source: Some(source),
            };
            (origin, checked)
        }
    };
    Ok(Inventory {
        origin,
        entries: list::entries(tables, None),
    })
}
