//! Where `list`, `resolve` and `prof` read the vendor's tables from: the tables embedded in this
//! build ([`Tables::Embedded`]), or a partition file `nrtucode pack` wrote
//! (`--partition FILE --public-key PUB.pem`), verified before anything is read from it and
//! answered through the same resolver body.
//!
//! A partition is loaded once per process and kept for its lifetime (leaked), so that its
//! answers are `&'static [u8]` like the embedded ones and the commands render both the same
//! way. It is refused unless its signature verifies with the given public key, or, for an
//! unsigned pack only, unless `--insecure-skip-signature` says in so many words to skip it;
//! every blob's SHA-256 is then checked: a stored blob's in place, a compressed (deflate) blob's
//! while it is decoded, once, into memory held for the process (`nrtucode::deflate`), from which
//! its answers come.

use std::path::{Path, PathBuf};

use clap::Args;
use nrtucode::catalog::{
    BLOB_SOURCE, BlobSource, ImageEntry, ProfEntry, image_entries, prof_entries,
};
use nrtucode::deflate::Inflater;
use nrtucode::partition::{
    Getter, InPlaceError, Partition, PartitionError, PartitionFile, Policy, ReadError, Source,
    VerifiedPartition, format::CODEC_STORED,
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
    /// A verified partition, held for the life of the process, and its compressed blobs
    /// decoded (by table-of-contents entry; `None` for a stored blob).
    Partition(VerifiedPartition<'static>, &'static [Option<&'static [u8]>]),
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
pub(crate) fn refused(path: &Path, e: PartitionError) -> (Exit, String) {
    (Exit::DataErr, format!("{}: {e}", path.display()))
}

impl PartitionArgs {
    /// The tables these arguments name: embedded without `--partition`; else the partition,
    /// verified, or why not.
    pub fn load(&self) -> Result<Tables, (Exit, String)> {
        let Some(path) = &self.partition else {
            return Ok(Tables::Embedded);
        };
        let bytes = read_partition(path)?;
        let parsed = Partition::parse(bytes).map_err(|e| refused(path, e))?;
        let policy = Policy {
            min_security_counter: 0,
            expected_class: parsed.class(),
        };
        let verified = match (&self.public_key, self.insecure_skip_signature) {
            (Some(key), _) => parsed.verify(&read_public_key(key)?, &policy),
            (None, true) => parsed.trust_unsigned_for_testing(&policy),
            (None, false) => {
                return Err((
                    Exit::Usage,
                    format!(
                        "{}: --partition needs --public-key PUB.pem (or, for an unsigned pack only, --insecure-skip-signature)",
                        path.display()
                    ),
                ));
            }
        }
        .map_err(|e| refused(path, e))?;
        verified.check_blobs().map_err(|e| refused(path, e))?;
        let mut inflater = Box::new(Inflater::new());
        let mut decoded = Vec::new();
        for n in 0..verified.partition().blob_count() as u16 {
            let Some(entry) = verified.toc_entry(n) else {
                decoded.push(None);
                continue;
            };
            if entry.codec == CODEC_STORED {
                decoded.push(None);
                continue;
            }
            // Decode-verify once (the digest of the decoded bytes, in the signed TOC).
            let mut out = vec![0u8; entry.decoded_len as usize].into_boxed_slice();
            let mut hasher = nrtucode::verify::SoftSha256::new();
            verified
                .getter_into_with(Getter::Blob(n), &mut out, &mut inflater, &mut hasher)
                .map_err(|e| refused(path, e))?;
            decoded.push(Some(&*Box::leak(out)));
        }
        Ok(Tables::Partition(
            verified,
            Box::leak(decoded.into_boxed_slice()),
        ))
    }
}

/// A partition answer as a vendor answer. A compressed blob does not reach here:
/// [`getter_bytes`] answers it from its decoded copy.
fn vendor(result: Result<&'static [u8], InPlaceError>) -> Result<&'static [u8], ResolveErr> {
    result.map_err(|e| e.resolve_err().unwrap_or(ResolveErr::NullGetter))
}

/// What `getter` returns: in place for a stored blob, from the decoded copy for a compressed
/// one (a cursor at the start or one past the end of that copy).
fn getter_bytes(
    p: &VerifiedPartition<'static>,
    decoded: &'static [Option<&'static [u8]>],
    getter: Getter,
) -> Result<&'static [u8], ResolveErr> {
    match decoded.get(usize::from(getter.blob())).copied().flatten() {
        None => vendor(p.getter_bytes(getter)),
        Some(bytes) => Ok(match getter {
            Getter::Blob(_) => bytes,
            Getter::CursorStart(_) => bytes.split_at(0).0,
            Getter::CursorEnd(_) => bytes.split_at(bytes.len()).1,
        }),
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
            Tables::Partition(p, decoded) => {
                getter_bytes(p, decoded, p.image_getter(idx, region, flavor, env)?)
            }
        }
    }

    /// `get_hwdecode_table` over these tables.
    pub fn get_hwdecode_table(&self, idx: u32, kind: i32) -> Result<&'static [u8], ResolveErr> {
        match self {
            Tables::Embedded => nrtucode::get_hwdecode_table(idx, kind),
            Tables::Partition(p, decoded) => getter_bytes(p, decoded, p.prof_getter(idx, kind)?),
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
        let Tables::Partition(p, decoded) = *self else {
            return image_entries().collect();
        };
        let mut out = Vec::new();
        for index in ImageIndex::ALL {
            let Some(slot) = index.slot() else { continue };
            for (position, (key, getters)) in p.descriptors(index.raw()).enumerate() {
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
                        blob: getter.map(|g| getter_bytes(&p, decoded, g).unwrap_or(&[])),
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
            Tables::Partition(p, _) => p.source() == Source::Fixtures,
        };
        if fixtures { "fixtures" } else { "directory" }
    }
}
