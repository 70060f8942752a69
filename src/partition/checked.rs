//! [`CheckedPartition`]: a partition file read, verified and every blob checked once, owned, for
//! a host that keeps it for its life and resolves from any thread (features `partition` and
//! `std`).

extern crate std;

use std::boxed::Box;
use std::path::Path;
use std::vec::Vec;

use core::fmt;
use core::ops::Range;

use super::aligned::{AlignedBytes, AllocError};
use super::blob::BlobId;
use super::error::{BlobUse, FormatError, LoadError, TrustError};
use super::file::{PartitionFile, ReadError};
use super::index::{Index, Packed};
use super::load::Loader;
use super::lookup::scan_getter;
use super::parse::Partition;
use super::tables::Tables;
use super::trust::{Policy, PublicKey, VerifiedPartition};
use super::{Codec, Source, TableClass};
use crate::digest::SoftSha256;
use crate::env::Env;
use crate::{ImageIndex, ProfKind, Region, ResolveErr};

/// A partition file read once, its signature and policy verified, and every blob checked
/// against its signed digest before anything resolves: a stored blob hashed in place, a
/// compressed one's stream hashed and then decoded once (feature `deflate`), while hashing, into
/// memory this value owns. It owns everything it answers from, so the resolvers answer plain
/// `&[u8]`, like the embedded ones, valid as long as it lives; it is `Send` and `Sync`, and a
/// host keeps it in a `static`:
///
/// ```no_run
/// use std::sync::OnceLock;
/// use nrtucode::partition::{CheckedPartition, PartitionFile, Policy, PublicKey, TableClass};
///
/// const KEY: PublicKey = PublicKey::from_bytes([7; 32]); // `nrtucode key public --format rust`
/// static FIRMWARE: OnceLock<CheckedPartition> = OnceLock::new();
///
/// fn firmware() -> &'static CheckedPartition {
///     FIRMWARE.get_or_init(|| {
///         let policy = Policy { min_security_counter: 3, expected_class: TableClass::Full };
///         PartitionFile::open("/lib/firmware/nrtucode.part", &KEY, &policy)
///             .unwrap_or_else(|e| panic!("nrtucode.part: {e}"))
///     })
/// }
///
/// // From any thread:
/// let iram: &'static [u8] = firmware().get_memory_image(7, 0, 1, &nrtucode::StdEnv).unwrap();
/// ```
///
/// Every non-empty blob it answers starts at a multiple of
/// [`BLOB_ALIGN`](crate::catalog::BLOB_ALIGN) (16) bytes, as the embedded ones do: the file's
/// bytes are kept at an aligned address (where the allocator put them, or copied there) and the
/// decoded blobs lie in one aligned buffer, each at an aligned offset. Both are allocated
/// fallibly: a size the allocator refuses is [`OpenError::Memory`], not an abort. Nothing it
/// answers moves or changes while it lives.
///
/// Its memory: the file's bytes, the decoded compressed blobs
/// ([`decoded_len`](Self::decoded_len)), the lookup index of packed getters (2,242 bytes) and a
/// range per blob.
pub struct CheckedPartition {
    /// The file's bytes, as read and verified, aligned.
    bytes: AlignedBytes,
    /// The decoded bytes of every compressed blob, each at an aligned offset.
    decoded: AlignedBytes,
    /// Where [`Partition::parse`] found the tables in them.
    layout: Layout,
    /// The lookup index verification built, its getters packed (the bytes are `blobs`').
    index: Index<()>,
    /// Every blob's checked bytes, by table-of-contents number.
    blobs: Box<[Checked]>,
}

/// The counts and offsets of a parsed [`Partition`], without its borrow of the bytes.
#[derive(Clone, Copy)]
struct Layout {
    desc_count: usize,
    toc_count: usize,
    prof_off: usize,
    toc_off: usize,
    sig_off: usize,
}

/// Where a blob's checked bytes lie.
#[derive(Clone)]
enum Checked {
    /// A stored blob: these bytes of the file, hashed in place.
    InPlace(Range<usize>),
    /// A compressed blob, decoded (and its output hashed) into these bytes of the decoded
    /// buffer.
    Decoded(Range<usize>),
}

/// Why [`PartitionFile::open`] (or [`PartitionFile::verify`]) refused a partition.
#[derive(Debug)]
#[non_exhaustive]
pub enum OpenError {
    /// The file could not be read ([`PartitionFile::read`]).
    Read(ReadError),
    /// Its structure ([`Partition::parse`]).
    Format(FormatError),
    /// Its signature or policy ([`Partition::verify`]).
    Trust(TrustError),
    /// A blob's check (the first refused, in table-of-contents order).
    Blob {
        /// Why.
        error: LoadError,
        /// The first getter that uses the blob, to name it to a person.
        first_use: Option<BlobUse>,
    },
    /// The memory to hold the partition's bytes or its decoded blobs could not be allocated.
    Memory {
        /// The bytes asked for.
        len: usize,
    },
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::Read(e) => write!(f, "{e}"),
            OpenError::Format(e) => write!(f, "{e}"),
            OpenError::Trust(e) => write!(f, "{e}"),
            // `blob 15 (hwdecode_table_list slot 7 PROF_CAM): SHA-256 mismatch …`
            OpenError::Blob { error, first_use } => {
                let text = std::format!("{error}");
                match (error.blob(), first_use) {
                    (Some(blob), Some(user)) => match text.strip_prefix(&std::format!("{blob}")) {
                        Some(rest) => write!(f, "{blob} ({user}){rest}"),
                        None => f.write_str(&text),
                    },
                    _ => f.write_str(&text),
                }
            }
            OpenError::Memory { len } => {
                write!(f, "cannot allocate {len} bytes for the partition")
            }
        }
    }
}

impl std::error::Error for OpenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            OpenError::Read(e) => Some(e),
            OpenError::Format(e) => Some(e),
            OpenError::Trust(e) => Some(e),
            OpenError::Blob { error, .. } => Some(error),
            OpenError::Memory { .. } => None,
        }
    }
}

impl From<ReadError> for OpenError {
    fn from(e: ReadError) -> Self {
        OpenError::Read(e)
    }
}

impl From<FormatError> for OpenError {
    fn from(e: FormatError) -> Self {
        OpenError::Format(e)
    }
}

impl From<AllocError> for OpenError {
    fn from(e: AllocError) -> Self {
        OpenError::Memory { len: e.len }
    }
}

impl From<TrustError> for OpenError {
    fn from(e: TrustError) -> Self {
        OpenError::Trust(e)
    }
}

impl PartitionFile {
    /// Reads the partition file at `path` ([`read`](Self::read)) and checks all of it
    /// ([`verify`](Self::verify)).
    pub fn open(
        path: impl AsRef<Path>,
        key: &PublicKey,
        policy: &Policy,
    ) -> Result<CheckedPartition, OpenError> {
        Self::read(path)?.verify(key, policy)
    }

    /// Parses the bytes, verifies the signature with `key` and the `policy`, then checks every
    /// blob (see [`CheckedPartition`]). The first refusal.
    pub fn verify(self, key: &PublicKey, policy: &Policy) -> Result<CheckedPartition, OpenError> {
        let bytes = AlignedBytes::from_vec(self.into_bytes().into_vec())?;
        CheckedPartition::new(bytes, |p| p.verify(key, policy))
    }

    /// **Insecure**: [`verify`](Self::verify) for an **unsigned** partition, trusted without
    /// any signature ([`Partition::insecure_trust_unsigned`]); for tests and bring-up only.
    #[cfg(feature = "insecure-unsigned")]
    pub fn insecure_trust_unsigned(self, policy: &Policy) -> Result<CheckedPartition, OpenError> {
        let bytes = AlignedBytes::from_vec(self.into_bytes().into_vec())?;
        CheckedPartition::new(bytes, |p| p.insecure_trust_unsigned(policy))
    }
}

impl CheckedPartition {
    /// [`PartitionFile::verify`] of a copy of `bytes` (made fallibly, into aligned memory this
    /// value owns): the caller's buffer is free to reuse as soon as this returns.
    pub fn verify_copy(bytes: &[u8], key: &PublicKey, policy: &Policy) -> Result<Self, OpenError> {
        Self::new(AlignedBytes::copy_of(bytes)?, |p| p.verify(key, policy))
    }

    /// `bytes` parsed, trusted by `trust`, and every blob checked.
    fn new(
        bytes: AlignedBytes,
        trust: impl FnOnce(Partition<'_>) -> Result<VerifiedPartition<'_>, TrustError>,
    ) -> Result<Self, OpenError> {
        let verified = trust(Partition::parse(bytes.as_slice())?)?;
        let p = verified.p;
        let layout = Layout {
            desc_count: p.desc_count,
            toc_count: p.toc_count,
            prof_off: p.prof_off,
            toc_off: p.toc_off,
            sig_off: p.sig_off,
        };
        let (blobs, decoded_len) = plan(&verified);
        let mut decoded = AlignedBytes::zeroed(decoded_len)?;
        check_into(&verified, &blobs, decoded.as_mut_slice(), Target::Own)
            .map_err(|error| blob_refusal(&verified, error))?;
        let index = Index::build(&verified.tables());
        Ok(Self {
            bytes,
            decoded,
            layout,
            index,
            blobs: blobs.into_boxed_slice(),
        })
    }

    /// The bytes of the decoded compressed blobs it holds, each rounded up to
    /// [`BLOB_ALIGN`](crate::catalog::BLOB_ALIGN) (0 when no blob is compressed).
    pub fn decoded_len(&self) -> usize {
        self.decoded.as_slice().len()
    }

    /// The partition's structure over the owned bytes (no check: they were checked).
    fn partition(&self) -> Partition<'_> {
        let l = self.layout;
        Partition {
            bytes: self.bytes.as_slice(),
            desc_count: l.desc_count,
            toc_count: l.toc_count,
            prof_off: l.prof_off,
            toc_off: l.toc_off,
            sig_off: l.sig_off,
        }
    }

    /// The verified partition these bytes are, for what a [`VerifiedPartition`] offers besides
    /// the resolvers (its header, its tables, the [`Blob`](super::Blob) handles). It builds its
    /// own lookup index (see [`VerifiedPartition`]'s size): keep it while you use it, not per
    /// lookup.
    pub fn verified(&self) -> VerifiedPartition<'_> {
        let p = self.partition();
        VerifiedPartition {
            p,
            toc: p.toc_records(),
            index: Index::build(&p.untrusted_tables()),
        }
    }

    /// Its tables, read only.
    pub fn tables(&self) -> Tables<'_> {
        Tables {
            p: self.partition(),
        }
    }

    /// The table class.
    pub fn class(&self) -> TableClass {
        self.partition().class()
    }

    /// Where its blobs come from.
    pub fn source(&self) -> Source<'_> {
        self.partition().source()
    }

    /// The checked bytes of table-of-contents entry `blob` (decoded, for a compressed one);
    /// `None` past the table of contents.
    pub fn blob_bytes(&self, blob: BlobId) -> Option<&[u8]> {
        match self.blobs.get(blob.index())? {
            Checked::InPlace(range) => self.bytes.as_slice().get(range.clone()),
            Checked::Decoded(range) => self.decoded.as_slice().get(range.clone()),
        }
    }

    /// What `getter` answers, from the checked bytes: the whole blob, or the empty slice at its
    /// start or one past its end (the vendor's cursor address); `Err(null)` if it names no
    /// entry (never: parse checked every getter).
    #[inline]
    fn answer(&self, getter: Packed, null: ResolveErr) -> Result<&[u8], ResolveErr> {
        let bytes = self.blob_bytes(getter.blob()).ok_or(null)?;
        Ok(match getter.ends() {
            (false, true) => bytes,
            (false, false) => bytes.split_at(0).0,
            (true, _) => bytes.split_at(bytes.len()).1,
        })
    }

    /// [`crate::get_memory_image`] over this partition: the same arguments, order of checks,
    /// environment reads and codes (1, 2, 3, 8), answering the checked bytes.
    pub fn get_memory_image<E: Env + ?Sized>(
        &self,
        idx: u32,
        region: i32,
        flavor: i32,
        env: &E,
    ) -> Result<&[u8], ResolveErr> {
        let getter = self
            .index
            .image_getter(idx, region, flavor, env, |idx, region, flavor| {
                scan_getter(&self.tables(), idx, region, flavor)
            })?
            .0;
        self.answer(getter, ResolveErr::NullGetter)
    }

    /// Typed [`get_memory_image`](Self::get_memory_image).
    pub fn resolve_image<E: Env + ?Sized>(
        &self,
        idx: ImageIndex,
        region: Region,
        flavor: crate::Flavor,
        env: &E,
    ) -> Result<&[u8], ResolveErr> {
        self.get_memory_image(idx.raw(), region.raw(), flavor.raw(), env)
    }

    /// [`crate::get_hwdecode_table`] over this partition (codes 1 and 2), answering the checked
    /// bytes.
    pub fn get_hwdecode_table(&self, idx: u32, kind: i32) -> Result<&[u8], ResolveErr> {
        let (getter, ()) = self.index.hwdecode_getter(idx, kind)?;
        self.answer(getter, ResolveErr::NoProfiler)
    }

    /// Typed [`get_hwdecode_table`](Self::get_hwdecode_table).
    pub fn resolve_hwdecode(&self, idx: ImageIndex, kind: ProfKind) -> Result<&[u8], ResolveErr> {
        self.get_hwdecode_table(idx.raw(), kind.raw())
    }
}

impl fmt::Debug for CheckedPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CheckedPartition")
            .field(&self.partition())
            .finish()
    }
}

/// [`OpenError::Blob`] for `error`, naming the blob's first user.
fn blob_refusal(verified: &VerifiedPartition<'_>, error: LoadError) -> OpenError {
    let first_use = error.blob().and_then(|b| verified.tables().first_use(b));
    OpenError::Blob { error, first_use }
}

/// Where every blob of `verified`'s table of contents is to lie once checked, in
/// table-of-contents order: a stored one in place, a compressed one in a decoded buffer, each at
/// a [`BLOB_ALIGN`](crate::catalog::BLOB_ALIGN) offset; and that buffer's length. Lengths and
/// offsets are the signed table's, which parse bounded (1 MiB a decoded blob, 64 MiB in all,
/// stored bytes inside the partition).
fn plan(verified: &VerifiedPartition<'_>) -> (Vec<Checked>, usize) {
    let tables = verified.tables();
    let mut decoded_len = 0usize;
    let mut out = Vec::new();
    for n in tables.blob_ids() {
        // Never `None`: blob_ids() lists the table of contents.
        let Some(entry) = tables.toc_entry(n) else {
            continue;
        };
        out.push(if entry.codec == Codec::Stored {
            let start = entry.offset as usize;
            Checked::InPlace(start..start.saturating_add(entry.stored_len as usize))
        } else {
            let start = decoded_len;
            let end = start.saturating_add(entry.decoded_len as usize);
            decoded_len = end.next_multiple_of(crate::catalog::BLOB_ALIGN);
            Checked::Decoded(start..end)
        });
    }
    (out, decoded_len)
}

/// Where [`check_into`] decodes a compressed blob.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    /// Into its own range of the buffer (to keep it).
    Own,
    /// Into the buffer's start, each over the one before (to check it only).
    Scratch,
}

/// Every blob of `verified` through its check, in table-of-contents order, laid out by `plan`:
/// a stored one hashed in place, a compressed one's stream checked and then decoded, while
/// hashing, into `decoded` (at its planned range, or at the start for [`Target::Scratch`]).
/// The first refusal.
fn check_into(
    verified: &VerifiedPartition<'_>,
    plan: &[Checked],
    decoded: &mut [u8],
    target: Target,
) -> Result<(), LoadError> {
    let mut loader: Option<Box<Loader>> = None;
    let mut hasher = SoftSha256::new();
    for (n, checked) in verified.tables().blob_ids().zip(plan) {
        // Never `None`: blob_ids() lists the table of contents.
        let Some(blob) = verified.blob(n) else {
            continue;
        };
        match checked {
            Checked::InPlace(_) => {
                blob.check(&mut hasher)?;
            }
            Checked::Decoded(range) => {
                let range = match target {
                    Target::Own => range.clone(),
                    Target::Scratch => 0..range.len(),
                };
                let loader = loader.get_or_insert_with(|| Box::new(Loader::new()));
                // Never empty for a non-empty blob: the buffer was sized by the plan. Were it,
                // `load_into` refuses a buffer of the wrong length.
                let out = decoded.get_mut(range).unwrap_or(&mut []);
                blob.load_into(out, loader)?;
            }
        }
    }
    Ok(())
}

impl VerifiedPartition<'_> {
    /// Every blob through the check [`PartitionFile::verify`] makes, keeping nothing: in
    /// table-of-contents order, a stored one hashed in place, a compressed one's stream checked
    /// and then decoded while hashing (each into one buffer as long as the longest decoded
    /// blob, which parse bounded to 1 MiB). The first refusal. [`check_blobs`](Self::check_blobs)
    /// checks the stored bytes only, with no allocation.
    pub fn check_every_blob(&self) -> Result<(), LoadError> {
        let (plan, _) = plan(self);
        let longest = plan
            .iter()
            .map(|c| match c {
                Checked::InPlace(_) => 0,
                Checked::Decoded(range) => range.len(),
            })
            .max()
            .unwrap_or(0);
        let mut scratch = std::vec![0u8; longest];
        check_into(self, &plan, &mut scratch, Target::Scratch)
    }
}
