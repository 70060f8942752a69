//! [`LoadedPartition`]: a partition file read, verified, every blob checked once and every
//! compressed blob decoded, owned, for a host that keeps it for its life and resolves from any
//! thread (features `partition` and `std`). Its type says how it came to be trusted
//! ([`Verified`], or `Unverified` behind feature `insecure-unsigned`).

extern crate std;

use std::boxed::Box;
use std::path::Path;
use std::vec::Vec;

use core::fmt;
use core::marker::PhantomData;
use core::ops::Range;

use super::aligned::AlignedBytes;
use super::entry::BlobId;
use super::entry::Codec;
use super::entry::Getter;
use super::entry::Packed;
use super::error::{LoadError, TrustError};
use super::file::{OpenError, PartitionFile};
use super::header::{Source, TableClass};
use super::index::Index;
use super::load::Loader;
use super::lookup::{Indexed, scan_getter};
use super::parse::{Layout, Partition};
use super::tables::Tables;
use super::trust::{CheckedPartition, Policy, PublicKey};
use crate::ResolveErr;
use crate::digest::SoftSha256;

/// A partition file read once, its signature and policy verified, and every blob checked
/// against its signed digest before anything resolves: a stored blob hashed in place, a
/// compressed one's stream hashed and then decoded once (feature `deflate`), while hashing, into
/// memory this value owns. It owns everything it answers from, so the resolvers answer plain
/// `&[u8]`, like the embedded ones, valid as long as it lives; it is `Send` and `Sync`, and a
/// host keeps it in a `static`:
///
/// ```no_run
/// use std::sync::OnceLock;
/// use nrtucode::partition::{LoadedPartition, PartitionFile, Policy, PublicKey, TableClass};
///
/// const KEY: PublicKey = PublicKey::from_bytes([7; 32]); // `nrtucode key public --format rust`
/// static FIRMWARE: OnceLock<LoadedPartition> = OnceLock::new();
///
/// fn firmware() -> &'static LoadedPartition {
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
///
/// The type parameter says how it came to be trusted: [`Verified`] (the default, the only kind
/// [`PartitionFile::verify`] and [`verify_copy`](Self::verify_copy) give) or, with feature
/// `insecure-unsigned`, `Unverified` (`PartitionFile::insecure_trust_unsigned`). A function
/// that must only see signed firmware takes `LoadedPartition` and an unverified one does not
/// fit; a tool that serves both takes `LoadedPartition<Unverified>`, into which a verified one
/// converts (forgetting the signature never makes anything trusted).
pub struct LoadedPartition<T: Trust = Verified> {
    /// The file's bytes, as read and verified, aligned.
    bytes: AlignedBytes,
    /// The decoded bytes of every compressed blob, each at an aligned offset.
    decoded: AlignedBytes,
    /// Where [`Partition::parse`] found the tables in them.
    layout: Layout,
    /// The lookup index, built once, its getters packed (the bytes are `blobs`').
    index: Index<()>,
    /// Every blob's checked bytes, by table-of-contents number.
    blobs: Box<[Checked]>,
    /// How it came to be trusted.
    trust: PhantomData<T>,
}

/// How a [`LoadedPartition`] came to be trusted: [`Verified`] or, with feature
/// `insecure-unsigned`, `Unverified` (sealed).
pub trait Trust: sealed::Sealed + 'static {
    /// The type's name, as `Debug` prints it.
    const NAME: &'static str;
}

/// Its signature verified with the caller's key, and its policy held.
#[derive(Debug)]
pub enum Verified {}

/// **Insecure**: trusted without a signature check (the policy held), by the caller's explicit
/// choice, or a verified one whose verification was forgotten (feature `insecure-unsigned`).
///
/// What takes a verified partition does not take one of these:
///
/// ```compile_fail,E0308
/// use nrtucode::partition::{LoadedPartition, PartitionFile, Policy, Unverified};
///
/// fn boot(_: &LoadedPartition) {}
///
/// fn bring_up(file: PartitionFile, policy: &Policy) {
///     let p: LoadedPartition<Unverified> = file.insecure_trust_unsigned(policy).unwrap();
///     boot(&p); // an unverified partition is not a verified one
/// }
/// ```
#[cfg(feature = "insecure-unsigned")]
#[derive(Debug)]
pub enum Unverified {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Verified {}
    #[cfg(feature = "insecure-unsigned")]
    impl Sealed for super::Unverified {}
}

impl Trust for Verified {
    const NAME: &'static str = "LoadedPartition";
}

#[cfg(feature = "insecure-unsigned")]
impl Trust for Unverified {
    const NAME: &'static str = "LoadedPartition<Unverified>";
}

#[cfg(feature = "insecure-unsigned")]
impl From<LoadedPartition<Verified>> for LoadedPartition<Unverified> {
    /// The same partition, its verification forgotten: for a tool that serves verified and
    /// unsigned partitions alike.
    fn from(p: LoadedPartition<Verified>) -> Self {
        let LoadedPartition {
            bytes,
            decoded,
            layout,
            index,
            blobs,
            trust: _,
        } = p;
        Self {
            bytes,
            decoded,
            layout,
            index,
            blobs,
            trust: PhantomData,
        }
    }
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

impl PartitionFile {
    /// Reads the partition file at `path` ([`read`](Self::read)) and checks all of it
    /// ([`verify`](Self::verify)).
    pub fn open(
        path: impl AsRef<Path>,
        key: &PublicKey,
        policy: &Policy,
    ) -> Result<LoadedPartition, OpenError> {
        Self::read(path)?.verify(key, policy)
    }

    /// Parses the bytes, verifies the signature with `key` and the `policy`, then checks every
    /// blob (see [`LoadedPartition`]). The first refusal.
    pub fn verify(self, key: &PublicKey, policy: &Policy) -> Result<LoadedPartition, OpenError> {
        let bytes = AlignedBytes::from_vec(self.into_bytes().into_vec())?;
        LoadedPartition::new(bytes, |p| {
            p.check_signature(key)?;
            p.check_policy(policy)
        })
    }

    /// **Insecure**: [`verify`](Self::verify) for an **unsigned** partition, trusted without
    /// any signature ([`Partition::insecure_trust_unsigned`]); for tests and bring-up only.
    #[cfg(feature = "insecure-unsigned")]
    pub fn insecure_trust_unsigned(
        self,
        policy: &Policy,
    ) -> Result<LoadedPartition<Unverified>, OpenError> {
        let bytes = AlignedBytes::from_vec(self.into_bytes().into_vec())?;
        LoadedPartition::new(bytes, |p| match p.is_signed() {
            true => Err(TrustError::Signed),
            false => p.check_policy(policy),
        })
    }
}

impl LoadedPartition<Verified> {
    /// [`PartitionFile::verify`] of a copy of `bytes` (made fallibly, into aligned memory this
    /// value owns): the caller's buffer is free to reuse as soon as this returns.
    pub fn verify_copy(bytes: &[u8], key: &PublicKey, policy: &Policy) -> Result<Self, OpenError> {
        Self::new(AlignedBytes::copy_of(bytes)?, |p| {
            p.check_signature(key)?;
            p.check_policy(policy)
        })
    }
}

impl<T: Trust> LoadedPartition<T> {
    /// `bytes` parsed, trusted by `trust`, every blob's stored bytes checked (the one
    /// whole-partition check), every compressed blob decoded, and the index built: each once.
    fn new(
        bytes: AlignedBytes,
        trust: impl FnOnce(&Partition<'_>) -> Result<(), TrustError>,
    ) -> Result<Self, OpenError> {
        let p = Partition::parse(bytes.as_slice())?;
        trust(&p)?;
        // Trusted now: the signature (or the explicit insecure door) and the policy held.
        let tables = p.untrusted_tables();
        tables
            .check_stored_digests(&mut SoftSha256::new())
            .map_err(|error| blob_refusal(&tables, error))?;
        let (blobs, decoded_len) = plan(&tables);
        let mut decoded = AlignedBytes::zeroed(decoded_len)?;
        decode_into(&tables, &blobs, decoded.as_mut_slice(), Target::Own)
            .map_err(|error| blob_refusal(&tables, error))?;
        let index = Index::build(&tables);
        let layout = p.layout;
        Ok(Self {
            bytes,
            decoded,
            layout,
            index,
            blobs: blobs.into_boxed_slice(),
            trust: PhantomData,
        })
    }

    /// The bytes of the decoded compressed blobs it holds, each rounded up to
    /// [`BLOB_ALIGN`](crate::catalog::BLOB_ALIGN) (0 when no blob is compressed).
    pub fn decoded_len(&self) -> usize {
        self.decoded.as_slice().len()
    }

    /// The partition's header fields and counts, over the owned bytes (checked: no check).
    pub fn partition(&self) -> Partition<'_> {
        Partition {
            bytes: self.bytes.as_slice(),
            layout: self.layout,
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

    /// What `getter` answers from the checked bytes: the blob, or the empty slice at its start
    /// or one past its end (the cursor rule, [`Getter::answer_in`]); `None` if it names no
    /// entry.
    pub fn getter_bytes(&self, getter: Getter) -> Option<&[u8]> {
        Some(getter.answer_in(self.blob_bytes(getter.blob())?))
    }
}

crate::resolve::resolver_api!(
    impl[T: Trust] LoadedPartition<T>,
    's => &'s [u8],
    |this| this,
    |bytes| bytes,
    "the checked bytes."
);

/// The loaded partition's index, its getters alone: the answer is the getter's checked bytes
/// ([`Getter::answer_in`], the cursor rule).
impl<T: Trust> Indexed for LoadedPartition<T> {
    type Stored = ();
    type Answer<'s> = &'s [u8];

    #[inline(always)]
    fn index(&self) -> &Index<()> {
        &self.index
    }

    #[inline(always)]
    fn make(&self, getter: Packed, (): (), null: ResolveErr) -> Result<&[u8], ResolveErr> {
        self.getter_bytes(getter.getter()).ok_or(null)
    }

    #[cold]
    #[inline(never)]
    fn by_scan(&self, idx: u32, region: i32, flavor: i32) -> Result<&[u8], ResolveErr> {
        let (getter, ()) = scan_getter(&self.tables(), idx, region, flavor)?;
        self.make(getter, (), ResolveErr::NullGetter)
    }
}

impl<T: Trust> fmt::Debug for LoadedPartition<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple(T::NAME).field(&self.partition()).finish()
    }
}

/// [`OpenError::Blob`] for `error`, naming the blob's first user.
fn blob_refusal(tables: &Tables<'_>, error: LoadError) -> OpenError {
    let first_use = error.blob().and_then(|b| tables.first_use(b));
    OpenError::Blob { error, first_use }
}

/// Where every blob of `tables`' table of contents is to lie once checked, in
/// table-of-contents order: a stored one in place, a compressed one in a decoded buffer, each at
/// a [`BLOB_ALIGN`](crate::catalog::BLOB_ALIGN) offset; and that buffer's length. Lengths and
/// offsets are the signed table's, which parse bounded (1 MiB a decoded blob, 64 MiB in all,
/// stored bytes inside the partition).
fn plan(tables: &Tables<'_>) -> (Vec<Checked>, usize) {
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

/// Where [`decode_into`] decodes a compressed blob.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    /// Into its own range of the buffer (to keep it).
    Own,
    /// Into the buffer's start, each over the one before (to check it only).
    Scratch,
}

/// Every compressed blob of `tables`, whose stored bytes the whole-partition check hashed,
/// decoded while hashing its output into `decoded` (at its planned range, or at the start for
/// [`Target::Scratch`]), in table-of-contents order. The first refusal.
fn decode_into(
    tables: &Tables<'_>,
    plan: &[Checked],
    decoded: &mut [u8],
    target: Target,
) -> Result<(), LoadError> {
    let mut loader: Option<Box<Loader>> = None;
    for (n, checked) in tables.blob_ids().zip(plan) {
        let Checked::Decoded(range) = checked else {
            continue;
        };
        // Never `None`: blob_ids() lists the table of contents.
        let Some(mut blob) = tables.blob(Getter::Blob(n)) else {
            continue;
        };
        blob.checked = true; // its stream was hashed by the whole-partition check
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
    Ok(())
}

impl CheckedPartition<'_> {
    /// Every compressed blob decoded, its output hashed against its signed digest, keeping
    /// nothing (each into one scratch buffer as long as the longest decoded blob, which parse
    /// bounded to 1 MiB; feature `std`): what a host tool adds to the whole-partition check
    /// before it vouches for a partition it will not load itself. The first refusal.
    pub fn check_decoding(&self) -> Result<(), LoadError> {
        let tables = self.tables();
        let (plan, _) = plan(&tables);
        let longest = plan
            .iter()
            .map(|c| match c {
                Checked::InPlace(_) => 0,
                Checked::Decoded(range) => range.len(),
            })
            .max()
            .unwrap_or(0);
        let mut scratch = std::vec![0u8; longest];
        decode_into(&tables, &plan, &mut scratch, Target::Scratch)
    }
}
