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

use std::io::Read as _;
use std::path::{Path, PathBuf};

use nrtucode::partition::{CheckedPartition, OpenError, PartitionFile, Policy, PublicKey, Source};
use nrtucode_facts::hex::lower_hex;
use nrtucode_facts::input_file::{Links, kind_of, open_nonblocking};
use nrtucode_pack::{Blobs, PackOptions, pack};
use serde::Serialize;
use sha2::{Digest as _, Sha256};

use crate::commands::exit::{self, Exit};
use crate::commands::list::{self, ListEntry};
use crate::commands::tables::{Tables, read_partition, read_public_key, refused};

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

/// How to trust a partition input: the `--public-key`s it may verify with (the one whose key ID
/// its header names), or `--insecure-skip-signature` for an unsigned one.
#[derive(Clone, Debug, Default)]
pub(crate) struct Trust {
    /// The SPKI PEM public keys (`diff` of two partitions signed by different keys takes both).
    pub public_keys: Vec<PathBuf>,
    /// Read an unsigned partition without a signature check.
    pub insecure_skip_signature: bool,
}

/// The file name `path` ends in (the whole path if it has none, as `.` or `/`).
fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// What `path` is: a blob directory, or a library or partition by its first bytes. Links are
/// followed here (as `carve` and `check` follow a link to their input); the readers then open
/// the input as they always do.
fn kind(path: &Path) -> Result<InputKind, (Exit, String)> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| (exit::reading(&e), format!("{shown}: {e}")))?;
    if meta.is_dir() {
        return Ok(InputKind::BlobDir);
    }
    // Without blocking: a FIFO is refused, not waited on.
    let (file, meta) = open_nonblocking(path, Links::Follow)
        .map_err(|e| (exit::reading(&e), format!("{shown}: {e}")))?;
    if !meta.is_file() {
        return Err((
            Exit::NoInput,
            format!(
                "{shown}: is {}, not a library, a blob directory or a partition",
                kind_of(&meta)
            ),
        ));
    }
    let mut magic = Vec::with_capacity(8);
    file.take(8)
        .read_to_end(&mut magic)
        .map_err(|e| (exit::reading(&e), format!("{shown}: {e}")))?;
    if magic.starts_with(b"\x7fELF") {
        Ok(InputKind::Library)
    } else if magic == nrtucode::partition::format::MAGIC {
        Ok(InputKind::Partition)
    } else {
        Err((
            Exit::DataErr,
            format!(
                "{shown}: neither a library (no ELF header), a blob directory nor a partition (no NRTUPART header)"
            ),
        ))
    }
}

/// The getters of a partition the tool laid out itself, in memory, from `blobs` (unsigned:
/// nothing to vouch for beyond the blobs just read), through the partition reader.
fn tables_of(blobs: &Blobs, path: &Path) -> Result<Tables, (Exit, String)> {
    let shown = path.display();
    let bytes = pack(
        blobs,
        &PackOptions {
            security_counter: 0,
            key: None,
        },
    )
    .map_err(|e| (Exit::DataErr, format!("{shown}: {e}")))?;
    let file = PartitionFile::from_bytes(bytes);
    let (policy, _) = any_class(&file, path)?;
    let checked = file
        .insecure_trust_unsigned(&policy)
        .map_err(|e| (Exit::DataErr, format!("{shown}: its blobs laid out: {e}")))?;
    Ok(Tables::Partition(Box::leak(Box::new(checked))))
}

/// What the tool reads a partition with: the policy (any counter, the class the partition says
/// it has) and the key ID its header names (`None`: unsigned).
type ReadAs = (Policy, Option<[u8; 8]>);

/// [`ReadAs`] for `file`.
fn any_class(file: &PartitionFile, path: &Path) -> Result<ReadAs, (Exit, String)> {
    let parsed = file.parse().map_err(|e| refused(path, e))?;
    let policy = Policy {
        min_security_counter: 0,
        expected_class: parsed.class(),
    };
    Ok((policy, parsed.is_signed().then(|| parsed.key_id())))
}

/// Of the `--public-key` files `paths` (at least one), the key whose ID is `named`. None of them,
/// or an unsigned partition: with one key given, that key (verifying with it says why); with
/// several, a refusal naming every key ID.
fn key_named(
    path: &Path,
    paths: &[PathBuf],
    named: Option<[u8; 8]>,
) -> Result<PublicKey, (Exit, String)> {
    let keys = (paths.iter())
        .map(|p| read_public_key(p))
        .collect::<Result<Vec<_>, _>>()?;
    let found = keys.iter().find(|k| Some(k.key_id()) == named);
    match (found, &keys[..], named) {
        (Some(key), _, _) | (None, [key], _) | (None, [key, ..], None) => Ok(*key),
        (None, _, Some(named)) => {
            let ids: Vec<String> = keys.iter().map(|k| lower_hex(&k.key_id())).collect();
            Err((
                Exit::DataErr,
                format!(
                    "{}: signed by key ID {}, which none of the {} --public-key keys has ({})",
                    path.display(),
                    lower_hex(&named),
                    ids.len(),
                    ids.join(", ")
                ),
            ))
        }
        (None, [], None) => Err((Exit::Usage, "no --public-key given".into())),
    }
}

/// The partition `bytes` (read from `path`) checked whole, through the path a Rust host opens
/// a partition with ([`PartitionFile::verify`]), trusted as `trust` says: verified with the
/// public key, or, unsigned, read under `--insecure-skip-signature`; with neither, refused
/// (exit 64), as `list --partition` refuses it.
fn trusted(
    path: &Path,
    bytes: &[u8],
    trust: &Trust,
) -> Result<&'static CheckedPartition, (Exit, String)> {
    let file = PartitionFile::from_bytes(bytes.to_vec());
    let (policy, named) = any_class(&file, path)?;
    let checked = match (&trust.public_keys[..], trust.insecure_skip_signature) {
        ([], true) => file.insecure_trust_unsigned(&policy),
        ([], false) => {
            return Err((
                Exit::Usage,
                format!(
                    "{}: a partition needs --public-key PUB.pem (or, for an unsigned pack only, --insecure-skip-signature)",
                    path.display()
                ),
            ));
        }
        (keys, _) => file.verify(&key_named(path, keys, named)?, &policy),
    }
    .map_err(|e: OpenError| (Exit::DataErr, format!("{}: {e}", path.display())))?;
    Ok(Box::leak(Box::new(checked)))
}

/// `Some(hex)` unless the manifest's or carve's `unknown` (or empty).
fn known(text: &str) -> Option<String> {
    (!text.is_empty() && text != "unknown").then(|| text.to_owned())
}

fn pack_refusal(path: &Path, e: nrtucode_pack::PackError) -> (Exit, String) {
    let exit = match &e {
        nrtucode_pack::PackError::Io { source, .. } => exit::reading(source),
        _ => Exit::DataErr,
    };
    (exit, format!("{}: {e}", path.display()))
}

/// Reads the input at `path`, whichever of the three it is. A partition is trusted as `trust`
/// says (a `--public-key` it must verify with, or `--insecure-skip-signature` for an unsigned
/// one); without either it is refused (exit 64), as `list --partition` refuses it.
pub(crate) fn read(path: &Path, trust: &Trust) -> Result<Inventory, (Exit, String)> {
    let name = file_name(path);
    let (origin, tables) = match kind(path)? {
        InputKind::Library => {
            let (carve, data) = nrtucode_carve::carve_file(path).map_err(|e| match &e {
                nrtucode_carve::FileError::Io { source, .. } => {
                    (exit::reading(source), e.to_string())
                }
                _ => (Exit::DataErr, e.to_string()),
            })?;
            crate::commands::output_file::note_input_path(path);
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
        InputKind::BlobDir => {
            // One reading: the manifest's header and the blobs packed are those checked.
            let read = nrtucode_facts::blob_dir::read_checked_blob_dir(path).map_err(|e| {
                let problems: Vec<String> = e.problems.iter().map(ToString::to_string).collect();
                // As `check`: a directory with no readable manifest is no input.
                let exit = match e.problems.as_slice() {
                    [nrtucode_facts::blob_dir::BlobDirProblem::NoManifest(_)] => Exit::NoInput,
                    _ => Exit::DataErr,
                };
                (exit, format!("{}: {}", path.display(), problems.join("\n")))
            })?;
            let blobs = Blobs::from_checked_dir(path, &read).map_err(|e| pack_refusal(path, e))?;
            for input in blobs.inputs() {
                crate::commands::output_file::note_input_path(input);
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
        InputKind::Partition => {
            // Read once: the digest reported is of the bytes verified.
            let bytes = read_partition(path)?;
            let checked = trusted(path, bytes, trust)?;
            let verified = checked.verified();
            let p = verified.partition();
            let (source, build_id) = match p.source() {
                Source::BuildId(id) => ("build-id", Some(lower_hex(id))),
                Source::NoBuildId => ("no-build-id", None),
                Source::Fixtures => ("fixtures", None),
            };
            let origin = Origin {
                kind: InputKind::Partition,
                name,
                sha256: Some(lower_hex(&Sha256::digest(bytes))),
                build_id,
                class: p.class().name(),
                key_id: p.is_signed().then(|| lower_hex(&p.key_id())),
                security_counter: Some(p.security_counter()),
                source: Some(source),
            };
            (origin, Tables::Partition(checked))
        }
    };
    Ok(Inventory {
        origin,
        entries: list::entries(&tables, None),
    })
}
