//! [`StreamedPartition`]: a verified partition on a flash the CPU cannot read memory-mapped (a
//! SPI NOR on a bus), read only through the driver's `ReadNorFlash::read` (feature `update`).
//!
//! The signed prefix (header, tables, table of contents, signature block: `blobs_off` bytes,
//! 16,816 for the vendor's full set) is read once into a buffer the caller lends, parsed and
//! verified there, as [`Partition::parse`] and [`Partition::verify`] do in place; the blob
//! area is never held: its padding (at parse), each blob (on use) and every blob (the
//! whole-partition check) are read by offset, in pieces of [`READ_PIECE`] bytes, and hashed as
//! they stream. What the lookup keeps beside the prefix is the index of a verified partition
//! without its slices (`Index<()>`, 2,242 bytes): a lookup reads RAM only, never the flash.

use core::fmt;

use embedded_storage::nor_flash::ReadNorFlash;

use super::blob::Blob;
use super::bytes::le32;
use super::entry::{BlobId, Codec, Cursor, Packed};
use super::error::{LoadError, Refusal};
use super::format::{HEADER_LEN, T_OFFSET, T_STORED_LEN, TOC_LEN};
use super::index::Index;
use super::load::Loader;
use super::lookup::{Indexed, scan_getter};
use super::parse::{Head, Partition};
use super::source::{ByteSource, CheckFailure, FlashReadError, FlashSource, load_stored};
use super::tables::Tables;
use super::trust::{Policy, PublicKey};
use crate::ResolveErr;
use crate::digest::{Sha256Hasher, copy_hashing};

/// The bytes of each read a [`StreamedPartition`] makes through the driver (its buffer, on the
/// stack of the call that reads; a multiple of every `READ_SIZE` up to 256).
pub const READ_PIECE: usize = 256;

/// Why a partition on a flash read through its driver was not read or a blob not given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum StreamError<E> {
    /// The driver's own error, returned as it came.
    Read(E),
    /// A read outside the flash (the partition's region runs past its capacity, or its
    /// `READ_SIZE` does not divide [`READ_PIECE`]): nothing was read there.
    OutOfRange,
    /// The bytes were read and refused: the structure, the signature or policy, a blob's
    /// check, or a signed prefix longer than the buffer lent for it
    /// ([`Refusal::PrefixBuffer`]).
    Refused(Refusal),
}

impl<E> From<Refusal> for StreamError<E> {
    fn from(e: Refusal) -> Self {
        StreamError::Refused(e)
    }
}

impl<E> From<LoadError> for StreamError<E> {
    fn from(e: LoadError) -> Self {
        StreamError::Refused(Refusal::Load(e))
    }
}

impl<E> From<FlashReadError<E>> for StreamError<E> {
    fn from(e: FlashReadError<E>) -> Self {
        match e {
            FlashReadError::OutOfRange => StreamError::OutOfRange,
            FlashReadError::Driver(e) => StreamError::Read(e),
        }
    }
}

impl<E> From<CheckFailure<FlashReadError<E>>> for StreamError<E> {
    fn from(e: CheckFailure<FlashReadError<E>>) -> Self {
        match e {
            CheckFailure::Read { error, .. } => error.into(),
            CheckFailure::Refused(e) => e.into(),
        }
    }
}

impl<E: fmt::Debug> fmt::Display for StreamError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamError::Read(e) => write!(f, "flash read failed: {e:?}"),
            StreamError::OutOfRange => f.write_str(
                "a read outside the flash (or a READ_SIZE that does not divide the read piece)",
            ),
            StreamError::Refused(e) => write!(f, "refused: {e}"),
        }
    }
}

impl<E: fmt::Debug> core::error::Error for StreamError<E> {}

/// Whether a partition's blob area is written yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlobArea {
    /// Written: its padding is read and checked.
    Written,
    /// Being written (an install resumed): not read.
    Unwritten,
}

/// A [`FlashSource`] that keeps the first read error, which the parser's own error does not
/// carry (it refuses the padding it could not read).
struct Keeping<'s, F: ReadNorFlash> {
    source: FlashSource<'s, F, READ_PIECE>,
    failed: Option<FlashReadError<F::Error>>,
}

impl<F: ReadNorFlash> ByteSource for Keeping<'_, F> {
    type Error = ();

    fn read_pieces(
        &mut self,
        offset: usize,
        len: usize,
        each: impl FnMut(&[u8]),
    ) -> Result<(), ()> {
        self.source.read_pieces(offset, len, each).map_err(|e| {
            self.failed.get_or_insert(e);
        })
    }
}

/// A partition on a flash that is not memory-mapped, its signature and policy verified: the
/// signed prefix is in the caller's buffer, the blobs stay on the flash and are read through
/// the driver when used. Its resolvers answer like a
/// [`VerifiedPartition`](super::VerifiedPartition)'s, with a [`StreamedBlob`] handle whose
/// bytes come only through a check that reads them ([`StreamedBlob::check`],
/// [`StreamedBlob::load_into`], [`StreamedBlob::decode_into`]).
///
/// RAM: this value (the index and a few words: [`StreamedPartition::SIZE`]) and the prefix
/// buffer (`blobs_off` bytes); each read lends [`READ_PIECE`] bytes of stack.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct StreamedPartition<'a> {
    /// The signed prefix, parsed.
    p: Partition<'a>,
    /// Where the partition starts in the flash.
    base: u32,
    /// The lookup index, each getter packed (nothing beside it).
    index: Index<()>,
}

impl fmt::Debug for StreamedPartition<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamedPartition")
            .field("partition", &self.p)
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl<'a> StreamedPartition<'a> {
    /// Bytes of this value on the target built for (the index and a few words).
    pub const SIZE: usize = core::mem::size_of::<Self>();

    /// Reads the partition at offset `base` of `flash`, in a region of `region_len` bytes (a
    /// slot), through `read` alone: the header, then the signed prefix it sizes into `prefix`
    /// (refused, reading nothing more, if it does not fit), then every check of
    /// [`Partition::parse`] (the blob area's padding read by offset), then the signature with
    /// `key` and `policy`, as [`Partition::verify`] makes them. No blob is hashed: see
    /// [`check_blobs`](Self::check_blobs).
    pub fn read<F: ReadNorFlash>(
        flash: &mut F,
        base: u32,
        region_len: usize,
        prefix: &'a mut [u8],
        key: &PublicKey,
        policy: &Policy,
    ) -> Result<Self, StreamError<F::Error>> {
        let p = Self::parse(flash, base, region_len, prefix, BlobArea::Written)?;
        p.check_signature(key).map_err(Refusal::Trust)?;
        p.check_policy(policy).map_err(Refusal::Trust)?;
        Ok(Self::vouched(p, base))
    }

    /// The structural checks of [`read`](Self::read), nothing trusted: the parsed prefix. With
    /// [`BlobArea::Unwritten`] (an install resumed), the blob area's padding is not read.
    pub(crate) fn parse<F: ReadNorFlash>(
        flash: &mut F,
        base: u32,
        region_len: usize,
        prefix: &'a mut [u8],
        blobs: BlobArea,
    ) -> Result<Partition<'a>, StreamError<F::Error>> {
        let mut source = FlashSource::<F, READ_PIECE>::new(flash, base);
        let mut header = [0u8; HEADER_LEN];
        read_into(&mut source, 0, &mut header)?;
        let head = Head::parse(&header, region_len).map_err(Refusal::Format)?;
        let available = prefix.len();
        let prefix = prefix
            .get_mut(..head.blobs_off)
            .ok_or(Refusal::PrefixBuffer {
                needed: head.blobs_off,
                available,
            })?;
        read_into(&mut source, 0, prefix)?;
        if blobs == BlobArea::Unwritten {
            let parsed = Partition::parse_signed(prefix, &head, &mut super::source::Unwritten);
            return parsed.map_err(|e| Refusal::Format(e).into());
        }
        let mut keeping = Keeping {
            source,
            failed: None,
        };
        let parsed = Partition::parse_signed(prefix, &head, &mut keeping);
        match (parsed, keeping.failed) {
            (_, Some(failed)) => Err(failed.into()),
            (Err(e), None) => Err(Refusal::Format(e).into()),
            (Ok(p), None) => Ok(p),
        }
    }

    /// `p` (a parsed prefix at `base`), trusted by the caller that verified it, with its index.
    pub(crate) fn vouched(p: Partition<'a>, base: u32) -> Self {
        Self {
            p,
            base,
            index: Index::build(&p.untrusted_tables()),
        }
    }

    /// The partition's header fields and counts (its bytes are the prefix only).
    pub const fn partition(&self) -> &Partition<'a> {
        &self.p
    }

    /// Its tables, read only (trusted).
    pub const fn tables(&self) -> Tables<'a> {
        self.p.untrusted_tables()
    }

    /// Where it starts in the flash.
    pub const fn base(&self) -> u32 {
        self.base
    }

    /// The whole blob of table-of-contents entry `blob`; `None` past the table of contents.
    pub fn blob(&self, blob: BlobId) -> Option<StreamedBlob<'a>> {
        let getter = super::Getter::Blob(blob);
        Some(self.handle(self.tables().packed(getter)?))
    }

    /// The whole-partition check through the driver: every blob's stored bytes read by offset
    /// and hashed with `hasher` against their signed digests (a compressed blob's stream
    /// included); the first refusal. What [`VerifiedPartition::check_blobs`] does in place
    /// (a [`StreamedPartition`] stays one: its blobs are read again, and checked again, when
    /// used).
    ///
    /// [`VerifiedPartition::check_blobs`]: super::VerifiedPartition::check_blobs
    pub fn check_blobs<F: ReadNorFlash, H: Sha256Hasher + ?Sized>(
        &self,
        flash: &mut F,
        hasher: &mut H,
    ) -> Result<(), StreamError<F::Error>> {
        check_blobs_of(&self.p, self.base, flash, hasher)
    }

    fn handle(&self, getter: Packed) -> StreamedBlob<'a> {
        let blob = Blob {
            stored: &[],
            toc: self.p.toc_records(),
            getter,
            checked: false,
        };
        StreamedBlob {
            blob,
            base: self.base,
        }
    }
}

/// [`StreamedPartition::check_blobs`] of the parsed prefix `p` at `base`, with no index built
/// (the updater's whole check of a slot it has not lent yet).
pub(crate) fn check_blobs_of<F: ReadNorFlash, H: Sha256Hasher + ?Sized>(
    p: &Partition<'_>,
    base: u32,
    flash: &mut F,
    hasher: &mut H,
) -> Result<(), StreamError<F::Error>> {
    let mut source = FlashSource::<F, READ_PIECE>::new(flash, base);
    Ok((p.untrusted_tables()).check_stored_digests_in(&mut source, hasher)?)
}

/// Reads `out.len()` bytes at `offset` of `source` into `out`.
fn read_into<F: ReadNorFlash>(
    source: &mut FlashSource<'_, F, READ_PIECE>,
    offset: usize,
    out: &mut [u8],
) -> Result<(), FlashReadError<F::Error>> {
    let mut rest = &mut *out;
    source.read_pieces(offset, rest.len(), |piece| {
        let n = piece.len().min(rest.len());
        let (head, tail) = core::mem::take(&mut rest).split_at_mut(n);
        head.copy_from_slice(piece.get(..head.len()).unwrap_or_default());
        rest = tail;
    })
}

/// A resolver's answer over a [`StreamedPartition`]: one blob (or a cursor onto one) and its
/// signed table-of-contents record; its bytes are on the flash and come only through a check
/// that reads them through the driver.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct StreamedBlob<'a> {
    /// The handle as a verified partition's (its table of contents in the signed prefix in RAM,
    /// its getter), with no bytes in place: only its accessors are used, never its checks.
    blob: Blob<'a>,
    /// Where the partition starts in the flash.
    base: u32,
}

impl fmt::Debug for StreamedBlob<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamedBlob")
            .field("id", &self.id())
            .field("cursor", &self.cursor())
            .field("codec", &self.codec())
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

impl StreamedBlob<'_> {
    /// The table-of-contents entry it is (a cursor: the entry it points into).
    pub const fn id(&self) -> BlobId {
        self.blob.id()
    }

    /// `Some` for a cursor getter: zero bytes at a boundary of [`id`](Self::id)'s blob.
    pub const fn cursor(&self) -> Option<Cursor> {
        self.blob.cursor()
    }

    /// How its blob is stored.
    pub const fn codec(&self) -> Codec {
        self.blob.codec()
    }

    /// Bytes of the answer: the decoded length, 0 for a cursor.
    pub const fn len(&self) -> usize {
        self.blob.len()
    }

    /// `true` for a cursor.
    pub const fn is_empty(&self) -> bool {
        self.blob.is_empty()
    }

    /// The digest of the decoded bytes, as the signed table of contents records it.
    pub fn sha256(&self) -> [u8; 32] {
        self.blob.sha256()
    }

    /// The digest of the stored bytes, as the signed table of contents records it.
    pub fn stored_sha256(&self) -> [u8; 32] {
        self.blob.stored_sha256()
    }

    /// A `u32` of its record (parse checked every record lies in the table of contents).
    fn field(&self, at: usize) -> u32 {
        le32(self.blob.toc, self.id().index() * TOC_LEN + at).unwrap_or(0)
    }

    /// Its stored bytes' range in the partition.
    fn stored_range(&self) -> core::ops::Range<usize> {
        let start = self.field(T_OFFSET) as usize;
        let len = self.field(T_STORED_LEN) as usize;
        start..start.saturating_add(len)
    }

    /// Its stored bytes read through the driver and hashed with `hasher` against the signed
    /// digest of the stored bytes (a compressed blob: its stream); nothing is kept. A cursor
    /// has nothing to check.
    pub fn check<F: ReadNorFlash, H: Sha256Hasher + ?Sized>(
        &self,
        flash: &mut F,
        hasher: &mut H,
    ) -> Result<(), StreamError<F::Error>> {
        if self.cursor().is_some() {
            return Ok(());
        }
        let mut source = FlashSource::<F, READ_PIECE>::new(flash, self.base);
        let expected = self.stored_sha256();
        Ok(super::source::check_stored(
            &mut source,
            self.stored_range(),
            self.id(),
            self.codec(),
            &expected,
            hasher,
        )?)
    }

    /// A stored blob read through the driver into the start of `out` while hashing what was
    /// written, checked against its signed digest: `&out[..len]`. A buffer shorter than the
    /// blob is refused before anything is read ([`LoadError::BufferTooSmall`]); on any other
    /// error what was written is zeroed. A cursor writes nothing. A compressed blob is
    /// [`LoadError::NotStored`]: its stream must be in RAM, authenticated, before it is
    /// decoded ([`decode_into`](Self::decode_into)).
    pub fn load_into<'o, F: ReadNorFlash, H: Sha256Hasher>(
        &self,
        flash: &mut F,
        out: &'o mut [u8],
        loader: &mut Loader<H>,
    ) -> Result<&'o [u8], StreamError<F::Error>> {
        if self.cursor().is_some() {
            return Ok(out.split_at(0).0);
        }
        if self.codec() != Codec::Stored {
            return Err(LoadError::NotStored {
                blob: self.id(),
                codec: self.codec(),
            }
            .into());
        }
        let needed = self.len();
        let available = out.len();
        let Some(out) = out.get_mut(..needed) else {
            return Err(LoadError::BufferTooSmall { needed, available }.into());
        };
        let mut source = FlashSource::<F, READ_PIECE>::new(flash, self.base);
        let expected = self.sha256();
        let at = self.stored_range();
        load_stored(&mut source, at, self.id(), out, &expected, loader.hasher())?;
        Ok(out)
    }

    /// A blob of either codec into the start of `out`: a stored one as
    /// [`load_into`](Self::load_into); a compressed one's stream read once through the driver
    /// into `stream` (at least its stored length) while hashed, checked against its signed
    /// digest, and only then decoded into `out` (feature `deflate`), its output hashed against
    /// the decoded digest. On an error after anything was written, `out` and `stream` are
    /// zeroed there.
    pub fn decode_into<'o, F: ReadNorFlash, H: Sha256Hasher>(
        &self,
        flash: &mut F,
        stream: &mut [u8],
        out: &'o mut [u8],
        loader: &mut Loader<H>,
    ) -> Result<&'o [u8], StreamError<F::Error>> {
        if self.codec() == Codec::Stored || self.cursor().is_some() {
            return self.load_into(flash, out, loader);
        }
        let at = self.stored_range();
        let available = stream.len();
        let Some(stream) = stream.get_mut(..at.len()) else {
            return Err(LoadError::BufferTooSmall {
                needed: at.len(),
                available,
            }
            .into());
        };
        let mut source = FlashSource::<F, READ_PIECE>::new(flash, self.base);
        let expected = self.stored_sha256();
        let blob = self.id();
        // The stream's check: hashed as written into `stream`, refused unless whole and signed.
        let hasher = loader.hasher();
        hasher.reset();
        let mut rest = &mut *stream;
        let read = source.read_pieces(at.start, at.len(), |piece| {
            let copied = copy_hashing(piece, rest, hasher);
            rest = core::mem::take(&mut rest)
                .get_mut(copied..)
                .unwrap_or_default();
        });
        let whole = rest.is_empty();
        let outcome = match read {
            Err(e) => Err(StreamError::from(e)),
            Ok(()) if whole && hasher.finish() == expected => Ok(()),
            Ok(()) => Err(LoadError::StoredDigestMismatch { blob }.into()),
        };
        if let Err(e) = outcome {
            stream.fill(0);
            return Err(e);
        }
        decode_stream(stream, self.len(), &self.sha256(), blob, out, loader)
    }
}

/// An authenticated stream decoded into `out` (feature `deflate`).
#[cfg(feature = "deflate")]
fn decode_stream<'o, E, H: Sha256Hasher>(
    stream: &[u8],
    len: usize,
    sha256: &[u8; 32],
    blob: BlobId,
    out: &'o mut [u8],
    loader: &mut Loader<H>,
) -> Result<&'o [u8], StreamError<E>> {
    loader
        .decode(stream, len, sha256, blob, out)
        .map_err(StreamError::from)
}

/// Without feature `deflate`, nothing decodes.
#[cfg(not(feature = "deflate"))]
fn decode_stream<'o, E, H: Sha256Hasher>(
    _: &[u8],
    _: usize,
    _: &[u8; 32],
    blob: BlobId,
    _: &'o mut [u8],
    _: &mut Loader<H>,
) -> Result<&'o [u8], StreamError<E>> {
    Err(LoadError::NoDecoder {
        blob,
        codec: Codec::Deflate,
    }
    .into())
}

/// The index answers with the packed getter alone; the handle carries the table of contents
/// and the base.
impl<'a> Indexed for StreamedPartition<'a> {
    type Stored = ();
    type Answer<'s>
        = StreamedBlob<'a>
    where
        Self: 's;

    #[inline(always)]
    fn index(&self) -> &Index<()> {
        &self.index
    }

    #[inline(always)]
    fn make(&self, getter: Packed, (): (), _: ResolveErr) -> Result<StreamedBlob<'a>, ResolveErr> {
        Ok(self.handle(getter))
    }

    #[cold]
    #[inline(never)]
    fn by_scan(&self, idx: u32, region: i32, flavor: i32) -> Result<StreamedBlob<'a>, ResolveErr> {
        scan_getter::<()>(&self.tables(), idx, region, flavor).map(|(g, ())| self.handle(g))
    }
}

crate::resolve::resolver_api!(
    impl['a] StreamedPartition<'a>,
    's => StreamedBlob<'a>,
    |this| this,
    |blob| blob,
    "the blob's handle (its bytes come through [`StreamedBlob::check`], [`StreamedBlob::load_into`] or [`StreamedBlob::decode_into`], each reading the flash)."
);

// On a 32-bit target: the parsed prefix (a slice and five counts and offsets), the base, and
// the index of packed getters (2,242 bytes), whatever the partition holds. CI builds the core
// for thumbv7em, where this holds; docs/update.md states it.
#[cfg(target_pointer_width = "32")]
static_assertions::const_assert_eq!(core::mem::size_of::<StreamedPartition<'static>>(), 2276);
