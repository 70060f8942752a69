//! Where `list`, `resolve` and `prof` read the vendor's tables from: the tables embedded in this
//! build ([`Tables::Embedded`]), or a partition file `nrtucode pack` wrote
//! (`--partition FILE --public-key PUB.pem`), verified before anything is read from it and
//! answered through the same resolver body.
//!
//! A partition is opened the way a Rust host opens one, [`PartitionFile::verify`] (or, for an
//! unsigned pack, `insecure_trust_unsigned`), once per process, and kept for its lifetime
//! (leaked), so that its answers are `&'static [u8]` like the embedded ones and the commands
//! render both the same way. It is refused unless its signature verifies with the given public
//! key, or, for an unsigned pack only, unless `--insecure-skip-signature` says in so many words
//! to skip it; then every blob is checked once, at open: a stored blob hashed in place
//! ([`Blob::check`](nrtucode::partition::Blob::check)), a compressed (deflate) one's stream checked and decoded while hashing into
//! memory the [`CheckedPartition`] holds ([`Blob::load_into`](nrtucode::partition::Blob::load_into)). Every answer comes from those
//! checked bytes.

use std::path::{Path, PathBuf};

use clap::Args;
use nrtucode::catalog::{
    BLOB_SOURCE, BlobSource, ImageEntry, ProfEntry, image_entries, prof_entries,
};
use nrtucode::partition::{
    CheckedPartition, Getter, LoadError, OpenError, PartitionError, PartitionFile, Policy,
    ReadError, Source,
};
use nrtucode::{Env, Flavor, ImageIndex, ProfKind, Region, ResolveErr};

use crate::commands::exit::{self, Exit};

/// `--partition FILE --public-key PUB.pem [--insecure-skip-signature]`.
#[derive(Clone, Debug, Default, Args)]
pub struct PartitionArgs {
    /// Answer from this partition file (nrtucode pack wrote it) instead of the tables embedded
    /// in this build; needs --public-key.
    #[arg(long, value_name = "FILE")]
    pub partition: Option<PathBuf>,
    /// The SPKI PEM public key the partition's signature must verify with.
    #[arg(long, value_name = "PUB.pem", requires = "partition")]
    pub public_key: Option<PathBuf>,
    /// Read an unsigned partition (nrtucode pack --unsigned) without any signature check. For
    /// tests only: whoever can write the file chooses the answers.
    #[arg(long, requires = "partition", conflicts_with = "public_key")]
    pub insecure_skip_signature: bool,
}

/// The tables a command answers from.
#[derive(Clone, Copy, Debug)]
pub enum Tables {
    /// The tables embedded in this build.
    Embedded,
    /// A partition file read, verified and every blob checked, held for the life of the
    /// process.
    Partition(&'static CheckedPartition),
}

/// Reads the SPKI PEM public key at `path` (bounded, as `key` reads every key file).
pub(crate) fn read_public_key(
    path: &Path,
) -> Result<nrtucode::partition::PublicKey, (Exit, String)> {
    let text = crate::commands::key::read_key_file(path, "public")?;
    nrtucode_pack::public_key_from_pem(&text)
        .map_err(|e| (Exit::DataErr, format!("{}: {e}", path.display())))
}

/// Reads the partition file at `path` for the life of the process (the buffer read, leaked,
/// not copied). A file refused by its header gives that header, whose parse says why.
pub(crate) fn read_partition(path: &Path) -> Result<&'static [u8], (Exit, String)> {
    let shown = path.display();
    let bytes = match PartitionFile::read(path) {
        Ok(file) => file.into_bytes(),
        Err(ReadError::Header { header, .. }) => header,
        Err(ReadError::Io(e)) => return Err((exit::reading(&e), format!("{shown}: {e}"))),
        Err(e @ ReadError::NotRegular { .. }) => {
            return Err((Exit::NoInput, format!("{shown}: {e}")));
        }
        Err(e) => return Err((Exit::DataErr, format!("{shown}: {e}"))),
    };
    crate::commands::output_file::note_input_path(path);
    Ok(Box::leak(bytes))
}

/// A partition refusal: exit 65 with the file and the reason.
pub(crate) fn refused(path: &Path, e: impl Into<PartitionError>) -> (Exit, String) {
    (Exit::DataErr, format!("{}: {}", path.display(), e.into()))
}

/// A blob's refusal as the tool says it: the blob named with its first user, as in
/// `blob 15 (hwdecode_table_list slot 7 PROF_CAM): SHA-256 mismatch …`.
pub(crate) fn load_refusal(tables: &nrtucode::partition::Tables<'_>, e: LoadError) -> String {
    let text = e.to_string();
    match e.blob().and_then(|b| Some((b, tables.first_use(b)?))) {
        Some((blob, user)) => match text.strip_prefix(&blob.to_string()) {
            Some(rest) => format!("{blob} ({user}){rest}"),
            None => text,
        },
        None => text,
    }
}

impl PartitionArgs {
    /// The tables these arguments name: embedded without `--partition`; else the partition,
    /// verified and every blob checked, or why not.
    pub fn load(&self) -> Result<Tables, (Exit, String)> {
        let Some(path) = &self.partition else {
            return Ok(Tables::Embedded);
        };
        let shown = path.display();
        let file = match PartitionFile::read(path) {
            Ok(file) => file,
            Err(ReadError::Header { error, .. }) => return Err(refused(path, error)),
            Err(ReadError::Io(e)) => return Err((exit::reading(&e), format!("{shown}: {e}"))),
            Err(e @ ReadError::NotRegular { .. }) => {
                return Err((Exit::NoInput, format!("{shown}: {e}")));
            }
            Err(e) => return Err((Exit::DataErr, format!("{shown}: {e}"))),
        };
        crate::commands::output_file::note_input_path(path);
        // Any class: the tool serves what the partition holds.
        let class = file.parse().map_err(|e| refused(path, e))?.class();
        let policy = Policy {
            min_security_counter: 0,
            expected_class: class,
        };
        let checked = match (&self.public_key, self.insecure_skip_signature) {
            (Some(key), _) => file.verify(&read_public_key(key)?, &policy),
            (None, true) => file.insecure_trust_unsigned(&policy),
            (None, false) => {
                return Err((
                    Exit::Usage,
                    format!(
                        "{shown}: --partition needs --public-key PUB.pem (or, for an unsigned pack only, --insecure-skip-signature)"
                    ),
                ));
            }
        }
        .map_err(|e: OpenError| (Exit::DataErr, format!("{shown}: {e}")))?;
        Ok(Tables::Partition(Box::leak(Box::new(checked))))
    }
}

/// What a getter answers, from the checked bytes of its blob: the blob, or an empty slice at
/// its start or one past its end (the vendor's cursor address).
fn getter_bytes(checked: &'static CheckedPartition, getter: Getter) -> &'static [u8] {
    let bytes = checked.blob_bytes(getter.blob()).unwrap_or(&[]);
    match getter {
        Getter::Blob(_) => bytes,
        Getter::CursorStart(_) => bytes.split_at(0).0,
        Getter::CursorEnd(_) => bytes.split_at(bytes.len()).1,
    }
}

impl Tables {
    /// `get_memory_image` over these tables.
    pub fn get_memory_image<E: Env + ?Sized>(
        &self,
        idx: u32,
        region: i32,
        flavor: i32,
        env: &E,
    ) -> Result<&'static [u8], ResolveErr> {
        match self {
            Tables::Embedded => nrtucode::get_memory_image(idx, region, flavor, env),
            Tables::Partition(p) => p.get_memory_image(idx, region, flavor, env),
        }
    }

    /// `get_hwdecode_table` over these tables.
    pub fn get_hwdecode_table(&self, idx: u32, kind: i32) -> Result<&'static [u8], ResolveErr> {
        match self {
            Tables::Embedded => nrtucode::get_hwdecode_table(idx, kind),
            Tables::Partition(p) => p.get_hwdecode_table(idx, kind),
        }
    }

    /// `resolve_hwdecode` over these tables.
    pub fn resolve_hwdecode(
        &self,
        idx: ImageIndex,
        kind: ProfKind,
    ) -> Result<&'static [u8], ResolveErr> {
        self.get_hwdecode_table(idx.raw(), kind.raw())
    }

    /// Every (slot, descriptor, region) of the `image_list`, in table order.
    pub fn image_entries(&self) -> Vec<ImageEntry> {
        let Tables::Partition(p) = *self else {
            return image_entries().collect();
        };
        let mut out = Vec::new();
        for index in ImageIndex::ALL {
            let Some(slot) = index.slot() else { continue };
            for (position, (key, getters)) in p.tables().descriptors(index.raw()).enumerate() {
                let Some(flavor) = Flavor::from_raw(key) else {
                    continue;
                };
                for (region, getter) in Region::ALL.into_iter().zip(getters) {
                    out.push(ImageEntry {
                        index,
                        slot,
                        position,
                        flavor,
                        region,
                        blob: getter.map(|g| getter_bytes(p, g)),
                    });
                }
            }
        }
        out
    }

    /// Both getters of every `hwdecode_table_list` slot, in table order.
    pub fn prof_entries(&self) -> Vec<ProfEntry> {
        let Tables::Partition(..) = self else {
            return prof_entries().collect();
        };
        ImageIndex::ALL
            .into_iter()
            .flat_map(|index| {
                ProfKind::ALL.into_iter().map(move |kind| ProfEntry {
                    index,
                    slot: index.slot(),
                    kind,
                    blob: self.resolve_hwdecode(index, kind).ok(),
                })
            })
            .collect()
    }

    /// `fixtures` or `directory`: what the blobs are, as `list --json` names it (a partition of
    /// a library is what a carved directory is).
    pub fn blob_source(&self) -> &'static str {
        let fixtures = match self {
            Tables::Embedded => BLOB_SOURCE == BlobSource::Fixtures,
            Tables::Partition(p) => p.source() == Source::Fixtures,
        };
        if fixtures { "fixtures" } else { "directory" }
    }

    /// The note text output prints on stderr when the blobs are the fixtures (`list --json`
    /// says it in `blob_source`): their sizes are the vendor's, their bytes and digests not.
    pub fn fixtures_note(&self) -> Option<&'static str> {
        (self.blob_source() == "fixtures").then_some(
            "nrtucode: note: blob source: the built-in fixtures, not the vendor's blobs (same sizes, other bytes and SHA-256): carve your library and build with NRTUCODE_BLOB_DIR, or read a partition with --partition",
        )
    }
}
