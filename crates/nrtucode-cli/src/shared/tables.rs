//! Where `list`, `resolve` and `prof` read the vendor's tables from ([`TableSource`]): the
//! tables embedded in this build ([`Embedded`]), or a partition file `nrtucode pack` wrote
//! (`--partition FILE --public-key PUB.pem`) read into a [`LoadedPartition`], verified before
//! anything is read from it; both answer through the core's one resolver body ([`Resolver`]).
//!
//! A partition is opened the way a Rust host opens one, [`PartitionFile::verify`](nrtucode::partition::PartitionFile::verify) (or, for an
//! unsigned pack, `insecure_trust_unsigned`), once per process, and kept for its lifetime
//! (leaked), so that its answers are `&'static [u8]` like the embedded ones and the commands
//! render both the same way. It is refused unless its signature verifies with the given public
//! key, or, for an unsigned pack only, unless `--insecure-skip-signature` says in so many words
//! to skip it; then every blob is checked once, at open: a stored blob hashed in place
//! ([`Blob::check`](nrtucode::partition::Blob::check)), a compressed (deflate) one's stream checked and decoded while hashing into
//! memory the [`LoadedPartition`] holds ([`Blob::load_into`](nrtucode::partition::Blob::load_into)). Every answer comes from those
//! checked bytes. The tool holds a verified partition and an unsigned one alike, as
//! `LoadedPartition<Unverified>`: nothing it does needs to know a signature held, and the type
//! never claims one did.

use std::path::PathBuf;

use clap::Args;
use nrtucode::catalog::{
    BLOB_SOURCE, BlobSource, ImageEntry, ProfEntry, image_entries, prof_entries,
};
use nrtucode::partition::{LoadError, LoadedPartition, Source, Unverified};
use nrtucode::{Embedded, Flavor, ImageIndex, ProfKind, Region, Resolver};

use crate::shared::error::Error;
use crate::shared::exit::Exit;
use crate::shared::reader;
use crate::shared::trust::TrustArgs;

/// `--partition FILE` and the trust options every command takes (`TrustArgs`).
#[derive(Clone, Debug, Default, Args)]
pub struct PartitionArgs {
    /// Answer from this partition file (nrtucode pack wrote it; any form inspect reads)
    /// instead of the tables embedded in this build; needs --public-key.
    #[arg(long, value_name = "FILE")]
    pub partition: Option<PathBuf>,
    /// How the partition is trusted.
    #[command(flatten)]
    pub(crate) trust: TrustArgs,
}

/// What `list`, `resolve` and `prof` need of the tables they answer from beyond the core's
/// resolvers ([`Resolver`], through which every answer comes): the descriptors in table order
/// and where the blobs come from. Implemented for the core's two storages, the tables embedded
/// in this build ([`Embedded`]) and a partition read, trusted and checked whole
/// ([`LoadedPartition`]); a command is generic over it.
pub trait TableSource: for<'s> Resolver<Answer<'s> = &'s [u8]> + 'static {
    /// Every (slot, descriptor, region) of the `image_list`, in table order.
    fn image_entries(&'static self) -> Vec<ImageEntry>;

    /// `true` when the blobs are the built-in fixtures.
    fn is_fixtures(&self) -> bool;

    /// Both getters of every `hwdecode_table_list` slot, in table order.
    fn prof_entries(&'static self) -> Vec<ProfEntry> {
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

    /// `fixtures` or `directory`: what the blobs are, as `list --json` names it (a partition
    /// of a library is what a carved directory is).
    fn blob_source(&self) -> &'static str {
        if self.is_fixtures() {
            "fixtures"
        } else {
            "directory"
        }
    }

    /// The note text output prints on stderr when the blobs are the fixtures (`list --json`
    /// says it in `blob_source`): their sizes are the vendor's, their bytes and digests not.
    fn fixtures_note(&self) -> Option<&'static str> {
        self.is_fixtures().then_some(
            "nrtucode: note: blob source: the built-in fixtures, not the vendor's blobs (same sizes, other bytes and SHA-256): carve your library and build with NRTUCODE_BLOB_DIR, or read a partition with --partition",
        )
    }
}

impl TableSource for Embedded {
    fn image_entries(&'static self) -> Vec<ImageEntry> {
        image_entries().collect()
    }

    fn is_fixtures(&self) -> bool {
        BLOB_SOURCE == BlobSource::Fixtures
    }

    fn prof_entries(&'static self) -> Vec<ProfEntry> {
        prof_entries().collect()
    }
}

impl TableSource for LoadedPartition<Unverified> {
    fn image_entries(&'static self) -> Vec<ImageEntry> {
        let mut out = Vec::new();
        for index in ImageIndex::ALL {
            let Some(slot) = index.slot() else { continue };
            for (position, (key, getters)) in self.tables().descriptors(index.raw()).enumerate() {
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
                        blob: getter.map(|g| self.getter_bytes(g).unwrap_or(&[])),
                    });
                }
            }
        }
        out
    }

    fn is_fixtures(&self) -> bool {
        self.source() == Source::Fixtures
    }
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
    /// The partition these arguments name, verified and every blob checked, held for the life
    /// of the process; `None` without `--partition` (the embedded tables answer); or why not.
    pub(crate) fn load(&self) -> Result<Option<&'static LoadedPartition<Unverified>>, Error> {
        let Some(path) = &self.partition else {
            if self.trust.given() {
                return Err(Error::new(
                    Exit::Usage,
                    "--public-key, --min-security-counter, --class and --insecure-skip-signature are for a partition: give --partition FILE".to_owned(),
                ));
            }
            return Ok(None);
        };
        // Any form `inspect` reads: a partition file, Intel HEX, ELF or UF2. Any class unless
        // --class: the tool serves what the partition holds.
        let checked = self
            .trust
            .open(path, reader::read_partition(path)?.bytes.into_vec())?;
        Ok(Some(Box::leak(Box::new(checked))))
    }
}
