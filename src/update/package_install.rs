//! [`PackageInstall`]: an update package ([`package`](super::package)) written into the slot
//! not running, its copied blobs taken from the running slot, then checked whole as every
//! install is ([`Install::finish`]).

use super::package::{
    Event, HEADER_LEN, ITEM_LEN, PackageError, PackageHeader, PackageKind, PackageReader, Phase,
};
use super::storage::{Check, SlotRegion, Vetted, read_pieces};
#[cfg(feature = "async")]
use super::{Async, AsyncMappedFlash};
use super::{BlockingFlash, Install, Slot, Slots, UpdateError, UpdateFlash, block_on};
use crate::digest::{Sha256Hasher, SoftSha256};
use crate::partition::format::{HEADER_LEN as PARTITION_HEADER_LEN, TOC_LEN, align_up};
use crate::partition::{BlobId, TocEntry, toc_of};

/// Bytes copied from the running slot per write: the size of the install's own staging.
const COPY_PIECE: usize = 256;

/// Where an install of a package stands.
// `Writing` holds the install's 256-byte staging: a `no_std` core has no box to put it in, and
// there is one such value per install.
#[allow(clippy::large_enum_variant)]
enum Stage<'s, F: UpdateFlash> {
    /// Before the header: nothing read or written.
    Waiting(&'s mut Slots<F>),
    /// The header's base is the running slot: writing the slot not running.
    Writing(Writing<'s, F>),
}

/// An install of a package under way.
struct Writing<'s, F: UpdateFlash> {
    install: Install<'s, F>,
    /// The running slot's partition: the base.
    base: Base,
}

/// The running slot's partition, as a delta's base: where its table of contents lies, whose
/// entries are read through the driver when needed (nothing writes the running slot while an
/// install runs, and nothing read from it is trusted: every byte copied is checked against the
/// new partition's signed digests by the whole check at the end).
#[derive(Clone, Copy, Debug)]
struct Base {
    /// Where it lies.
    region: SlotRegion,
    /// Its table of contents' offset in the slot.
    toc_off: u32,
    /// Its entries.
    toc_count: u16,
}

/// An update package being installed, as it arrives in chunks of any size
/// ([`Slots::install_package`]). The package's header is checked before anything is written:
/// a package made for another partition than the one running is refused
/// ([`PackageError::BaseMismatch`]). Then the new partition is written into the slot not
/// running: the bytes the package carries, and the blobs it names copied from the running
/// slot; [`finish`](Self::finish) checks the slot whole (signature, policy, every blob's
/// digest) exactly as [`Install::finish`] does, and only then records it as the candidate.
/// After an error the install refuses everything: drop it (the state is as it was) and start
/// again.
pub struct PackageInstall<'s, F: UpdateFlash> {
    reader: PackageReader,
    stage: Option<Stage<'s, F>>,
    /// The package offset of the next byte [`write`](Self::write) takes.
    offset: u64,
}

impl<F: UpdateFlash> core::fmt::Debug for PackageInstall<'_, F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PackageInstall")
            .field("reader", &self.reader)
            .field("target", &self.target())
            .field("offset", &self.offset)
            .finish()
    }
}

impl<F: UpdateFlash> Slots<F> {
    /// An install of a package started ([`Slots::install_package`]).
    async fn install_package_core(
        &mut self,
    ) -> Result<PackageInstall<'_, F>, UpdateError<F::Error>> {
        if self.state_core().await?.is_trial() {
            return Err(UpdateError::TrialPending);
        }
        Ok(PackageInstall {
            reader: PackageReader::new(),
            stage: Some(Stage::Waiting(self)),
            offset: 0,
        })
    }

    /// An install of a package resumed ([`Slots::resume_package`]).
    async fn resume_package_core(
        &mut self,
        header: &[u8],
    ) -> Result<PackageInstall<'_, F>, UpdateError<F::Error>> {
        let header = PackageHeader::parse(header)?;
        let mut writing = start(self, &header).await?;
        let at = resume_point(&mut writing, &header).await?;
        writing.install.resume_at(at.slot)?;
        if let Some((index, blob, stored_len, from)) = at.copy {
            let (w, base) = (&mut writing.install, writing.base);
            copy_from_base(w, base, index, blob, stored_len, from).await?;
        }
        if at.zeros > 0 {
            let zeros = [0u8; 16];
            let pad = zeros
                .get(..usize::from(at.zeros))
                .ok_or(PackageError::Header)?;
            writing.install.write_core(pad).await?;
        }
        let yielded = writing.install.received;
        let reader = PackageReader::resumed(header, at.item, at.carried, yielded, at.phase)?;
        Ok(PackageInstall {
            reader,
            stage: Some(Stage::Writing(writing)),
            offset: at.package,
        })
    }
}

/// The blocking API of packages.
impl<F: BlockingFlash> Slots<F> {
    /// Starts the install of an update package ([`package`](super::package): whole, or a
    /// delta made for the partition running). Nothing is read or written until the package's
    /// header is complete; then its base is checked against the running slot (the one this
    /// `Slots`' last boot used, else the one a boot would use) before the first write, and
    /// the install goes on as [`install`](Self::install)'s, into the other slot. Refused while
    /// a trial is pending ([`UpdateError::TrialPending`]).
    pub fn install_package(&mut self) -> Result<PackageInstall<'_, F>, UpdateError<F::Error>> {
        block_on(self.install_package_core())
    }

    /// Resumes the install of the package whose header is `header` (its first
    /// [`HEADER_LEN`] bytes, fetched again), after a dropped link or a power cut: checked as
    /// [`install_package`](Self::install_package) checks it (its base the running slot's
    /// partition, nothing written before). Then the slot not running is read: if it starts
    /// with the new partition's signed prefix (the header's `target` digest, and its signature
    /// and policy hold with the configured key), each blob after it is checked against its
    /// signed stored digest and padding, in order, up to the first
    /// that does not hold; the install goes on from the erase sector holding that point (the
    /// blobs before it are not written again; the sector is erased and written from its
    /// start). [`PackageInstall::offset`] is the package offset to continue the transfer
    /// from; [`finish`](PackageInstall::finish) checks the slot whole, as for any install.
    /// A slot that holds nothing of this package resumes at the package's first byte after
    /// its header. The granularity is a blob: at most the bytes of the blob under way and one
    /// erase sector are taken from the link again.
    pub fn resume_package(
        &mut self,
        header: &[u8],
    ) -> Result<PackageInstall<'_, F>, UpdateError<F::Error>> {
        block_on(self.resume_package_core(header))
    }
}

/// The async API of packages (feature `async`).
#[cfg(feature = "async")]
impl<G: AsyncMappedFlash> Slots<Async<G>> {
    /// Starts the install of an update package (as the blocking `install_package`).
    pub async fn install_package(
        &mut self,
    ) -> Result<PackageInstall<'_, Async<G>>, UpdateError<G::Error>> {
        self.install_package_core().await
    }

    /// Resumes the install of a package (as the blocking `resume_package`).
    pub async fn resume_package(
        &mut self,
        header: &[u8],
    ) -> Result<PackageInstall<'_, Async<G>>, UpdateError<G::Error>> {
        self.resume_package_core(header).await
    }
}

impl<'s, F: UpdateFlash> PackageInstall<'s, F> {
    /// The package's header, once read.
    pub fn header(&self) -> Option<PackageHeader> {
        self.reader.header()
    }

    /// The slot being written, once the header's base was accepted.
    pub fn target(&self) -> Option<Slot> {
        match &self.stage {
            Some(Stage::Writing(w)) => Some(w.install.target()),
            _ => None,
        }
    }

    /// The package offset of the next byte [`write`](Self::write) takes: the bytes written so
    /// far, or, after [`Slots::resume_package`], where the transfer continues.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next chunk ([`PackageInstall::write`]): each event of it written, in turn.
    async fn write_core(&mut self, chunk: &[u8]) -> Result<(), UpdateError<F::Error>> {
        let mut rest = chunk;
        loop {
            let event = match self.reader.next(&mut rest) {
                Ok(Some(event)) => event,
                Ok(None) => break,
                Err(e) => {
                    self.stage = None;
                    return Err(e.into());
                }
            };
            if let Err(e) = on_event(&mut self.stage, event).await {
                self.stage = None;
                self.reader.fail();
                return Err(e);
            }
        }
        self.offset = self.offset.saturating_add(chunk.len() as u64);
        Ok(())
    }

    /// The end ([`PackageInstall::finish`]).
    async fn finish_core(self) -> Result<super::State, UpdateError<F::Error>> {
        self.reader.finish()?;
        let header = self.reader.header().ok_or(PackageError::Incomplete)?;
        let Some(Stage::Writing(w)) = self.stage else {
            return Err(PackageError::Incomplete.into());
        };
        let (base, target) = (w.base, w.install.target());
        w.install
            .finish_with(async |slots, vetted| {
                // A delta carries exactly the blobs its base does not hold: the rule a resumed
                // install finds its place by.
                if header.kind == PackageKind::Delta {
                    let region = slots.config.region(target);
                    let mut carried = 0usize;
                    for n in 0..vetted.parsed.toc_count() {
                        let entry = new_entry(&slots.flash, region, vetted, n)
                            .ok_or(PackageError::NotCanonical)?;
                        if held(&mut slots.flash, &base, &entry).await?.is_none() {
                            carried += 1;
                        }
                    }
                    if carried != usize::from(header.carried) {
                        return Err(PackageError::NotCanonical.into());
                    }
                }
                Ok(())
            })
            .await
    }
}

/// The blocking install of a package.
impl<F: BlockingFlash> PackageInstall<'_, F> {
    /// The next chunk of the package (from [`offset`](Self::offset)), of any length.
    pub fn write(&mut self, chunk: &[u8]) -> Result<(), UpdateError<F::Error>> {
        block_on(self.write_core(chunk))
    }

    /// The end of the package: refused if it was not read to its last item
    /// ([`PackageError::Incomplete`]); then [`Install::finish`]: the slot checked whole and,
    /// only if it passes, recorded as the candidate.
    pub fn finish(self) -> Result<super::State, UpdateError<F::Error>> {
        block_on(self.finish_core())
    }
}

/// The async install of a package (feature `async`).
#[cfg(feature = "async")]
impl<G: AsyncMappedFlash> PackageInstall<'_, Async<G>> {
    /// The next chunk of the package (as the blocking `write`).
    pub async fn write(&mut self, chunk: &[u8]) -> Result<(), UpdateError<G::Error>> {
        self.write_core(chunk).await
    }

    /// The end of the package (as the blocking `finish`).
    pub async fn finish(self) -> Result<super::State, UpdateError<G::Error>> {
        self.finish_core().await
    }
}

/// One event of the package: the header starts the install, the rest is written.
async fn on_event<'s, F: UpdateFlash>(
    stage: &mut Option<Stage<'s, F>>,
    event: Event<'_>,
) -> Result<(), UpdateError<F::Error>> {
    match event {
        Event::Header(header) => {
            let Some(Stage::Waiting(slots)) = stage.take() else {
                return Err(PackageError::Incomplete.into());
            };
            *stage = Some(Stage::Writing(start(slots, &header).await?));
            Ok(())
        }
        Event::Bytes(bytes) => writing(stage)?.install.write_core(bytes).await,
        Event::Zeros(n) => {
            let zeros = [0u8; 16];
            let pad = zeros.get(..usize::from(n)).ok_or(PackageError::Header)?;
            writing(stage)?.install.write_core(pad).await
        }
        Event::Copy {
            index,
            base: blob,
            stored_len,
        } => {
            let w = writing(stage)?;
            copy_from_base(&mut w.install, w.base, index, blob, stored_len, 0).await
        }
    }
}

/// The install under way.
fn writing<'a, 's, F: UpdateFlash>(
    stage: &'a mut Option<Stage<'s, F>>,
) -> Result<&'a mut Writing<'s, F>, UpdateError<F::Error>> {
    match stage {
        Some(Stage::Writing(w)) => Ok(w),
        _ => Err(PackageError::Incomplete.into()),
    }
}

/// The header read: its base must be the running slot's partition (nothing written before
/// this holds), its partition must fit a slot; then the install of the other slot starts.
async fn start<'s, F: UpdateFlash>(
    slots: &'s mut Slots<F>,
    header: &PackageHeader,
) -> Result<Writing<'s, F>, UpdateError<F::Error>> {
    let state = slots.state_core().await?;
    if state.is_trial() {
        return Err(UpdateError::TrialPending);
    }
    let (slot, _) = slots
        .running_slot(&state)?
        .ok_or(PackageError::BaseMismatch)?;
    let region = slots.config.region(slot);
    let mut head = [0u8; PARTITION_HEADER_LEN];
    read_exact(&mut slots.flash, region.base, &mut head).await?;
    let [toc_off, toc_count, blobs_off] =
        toc_of(&head, region.len as usize).map_err(|_| PackageError::BaseMismatch)?;
    // The base's signed prefix, hashed as it is read: the package's base, or nothing is written.
    let mut hasher = SoftSha256::new();
    read_pieces(&mut slots.flash, region.base, blobs_off, |piece| {
        hasher.update(piece)
    })
    .await?;
    if hasher.finish() != header.base {
        return Err(PackageError::BaseMismatch.into());
    }
    let base = Base {
        region,
        toc_off: u32::try_from(toc_off).map_err(|_| PackageError::BaseMismatch)?,
        toc_count: u16::try_from(toc_count).map_err(|_| PackageError::BaseMismatch)?,
    };
    let slot_len = slots.config.layout.slot_len;
    if header.total_len > slot_len {
        return Err(UpdateError::TooLarge { slot_len });
    }
    let install = slots.install_core().await?;
    if install.target() != slot.other() {
        // `install` writes the slot other than the running one: the base.
        return Err(PackageError::BaseMismatch.into());
    }
    Ok(Writing { install, base })
}

/// `out.len()` bytes at `offset` of `flash`, read through its driver.
async fn read_exact<F: UpdateFlash>(
    flash: &mut F,
    offset: u32,
    out: &mut [u8],
) -> Result<(), UpdateError<F::Error>> {
    let mut rest = &mut *out;
    read_pieces(flash, offset, rest.len(), |piece| {
        let n = piece.len().min(rest.len());
        let (head, tail) = core::mem::take(&mut rest).split_at_mut(n);
        head.copy_from_slice(piece.get(..n).unwrap_or_default());
        rest = tail;
    })
    .await
}

/// Entry `blob` of the base's table of contents, read through the driver; `None` past the
/// table of contents or for a record whose stored bytes do not lie in the slot.
async fn base_entry<F: UpdateFlash>(
    flash: &mut F,
    base: &Base,
    blob: BlobId,
) -> Result<Option<TocEntry>, UpdateError<F::Error>> {
    if blob.index() >= usize::from(base.toc_count) {
        return Ok(None);
    }
    let at = (blob.index() * TOC_LEN) as u32;
    let Some(offset) = (base.region.base.checked_add(base.toc_off)).and_then(|o| o.checked_add(at))
    else {
        return Ok(None);
    };
    let mut record = [0u8; TOC_LEN];
    read_exact(flash, offset, &mut record).await?;
    Ok(TocEntry::of_record(&record).filter(|e| {
        e.offset
            .checked_add(e.stored_len)
            .is_some_and(|end| end <= base.region.len)
    }))
}

/// Entry `n` of the new partition `vetted` in `region` (its signed table of contents, lent
/// from the check that passed it).
fn new_entry<F: UpdateFlash>(
    flash: &F,
    region: SlotRegion,
    vetted: &Vetted,
    n: usize,
) -> Option<TocEntry> {
    let parsed = flash.lend_parsed(region, vetted)?;
    parsed
        .untrusted_tables()
        .toc_entry(BlobId::new(u16::try_from(n).ok()?))
}

/// Item `index`: the stored bytes of the base's entry `blob` (`stored_len` of them, as the
/// base's table of contents must say) from byte `from` on, written next, in pieces read from
/// the running slot through the driver.
async fn copy_from_base<F: UpdateFlash>(
    install: &mut Install<'_, F>,
    base: Base,
    index: u16,
    blob: BlobId,
    stored_len: u32,
    from: u32,
) -> Result<(), UpdateError<F::Error>> {
    let refused = || UpdateError::Package(PackageError::Copy { index });
    let entry = base_entry(&mut install.slots.flash, &base, blob)
        .await?
        .filter(|e| e.stored_len == stored_len && from <= stored_len)
        .ok_or_else(refused)?;
    let start = (base.region.base)
        .checked_add(entry.offset)
        .and_then(|at| at.checked_add(from))
        .ok_or_else(refused)?;
    let len = stored_len - from;
    let mut done = 0u32;
    while done < len {
        let n = (len - done).min(COPY_PIECE as u32);
        let mut piece = [0u8; COPY_PIECE];
        let piece = piece.get_mut(..n as usize).ok_or_else(refused)?;
        read_exact(&mut install.slots.flash, start + done, piece).await?;
        install.write_core(piece).await?;
        done += n;
    }
    Ok(())
}

/// The base's entry whose stored bytes are `entry`'s (the same stored digest and length): the
/// first, as `nrtucode_pack::update_package` copies it. `None`: a delta carries `entry`.
async fn held<F: UpdateFlash>(
    flash: &mut F,
    base: &Base,
    entry: &TocEntry,
) -> Result<Option<BlobId>, UpdateError<F::Error>> {
    for n in 0..base.toc_count {
        let id = BlobId::new(n);
        if let Some(b) = base_entry(flash, base, id).await?
            && b.stored_sha256 == entry.stored_sha256
            && b.stored_len == entry.stored_len
        {
            return Ok(Some(id));
        }
    }
    Ok(None)
}

/// Where a resumed install goes on ([`resume_point`]).
struct At {
    /// The slot offset it writes from (a multiple of `ERASE_SIZE`, or the partition's end).
    slot: u32,
    /// The package offset the transfer continues from.
    package: u64,
    /// The reader's item, carried count and phase there (after `copy` and `zeros`).
    item: u16,
    carried: u16,
    phase: Phase,
    /// The rest of a copied blob to write first: (item, base entry, its stored length, from).
    copy: Option<(u16, BlobId, u32, u32)>,
    /// Zeros to write first (the rest of a blob's padding).
    zeros: u8,
}

/// The first package byte after the header `h` and slot offset 0: an install that starts over.
fn fresh(h: &PackageHeader) -> At {
    let left = match h.kind {
        PackageKind::Whole => h.total_len,
        PackageKind::Delta => h.prefix_len,
    };
    At {
        slot: 0,
        package: HEADER_LEN as u64,
        item: 0,
        carried: 0,
        phase: Phase::Body { left },
        copy: None,
        zeros: 0,
    }
}

/// `true` when the `len` bytes at `offset` of `flash` hash to `expected` (`Some`), or are all
/// zero (`None`).
async fn holds<F: UpdateFlash>(
    flash: &mut F,
    offset: u32,
    len: usize,
    expected: Option<&[u8; 32]>,
    hasher: &mut SoftSha256,
) -> Result<bool, UpdateError<F::Error>> {
    hasher.reset();
    let mut zero = true;
    read_pieces(flash, offset, len, |piece| {
        hasher.update(piece);
        zero &= piece.iter().all(|&b| b == 0);
    })
    .await?;
    Ok(match expected {
        Some(digest) => hasher.finish() == *digest,
        None => zero,
    })
}

/// Where the install `w` of the package `h` goes on: after the blobs its target slot holds
/// already, checked against the signed digests of its verified prefix, from the start of the
/// erase sector the first blob that does not hold
/// begins in ([`Slots::resume_package`]); [`fresh`] when the slot does not start with the new
/// partition's signed prefix.
async fn resume_point<F: UpdateFlash>(
    w: &mut Writing<'_, F>,
    h: &PackageHeader,
) -> Result<At, UpdateError<F::Error>> {
    let (target, base) = (w.install.target, w.base);
    let min = w.install.state.min_security_counter;
    let slots = &mut *w.install.slots;
    let region = slots.config.region(target);
    let prefix_len = h.prefix_len as usize;
    // The digests the blobs are checked against are the signed ones: the prefix verified with
    // the configured key and policy (one signature), and the one this package names, or the
    // install starts over.
    let Ok(vetted) = slots.vet(target, min, Check::Prefix)? else {
        return Ok(fresh(h));
    };
    let mut hasher = SoftSha256::new();
    let (same, count) = match slots.flash.lend_parsed(region, &vetted) {
        Some(new) => {
            hasher.update(new.bytes());
            let same = new.bytes().len() == prefix_len && hasher.finish() == h.target;
            (same, new.blob_count())
        }
        None => (false, 0),
    };
    if !same || (h.kind == PackageKind::Delta && count != usize::from(h.items)) {
        return Ok(fresh(h));
    }
    // The end of what the slot holds, checked: the prefix, then whole blobs and their padding.
    let mut verified = prefix_len;
    for n in 0..count {
        let Some(e) = new_entry(&slots.flash, region, &vetted, n) else {
            break;
        };
        let (start, end) = (
            e.offset as usize,
            (e.offset as usize).saturating_add(e.stored_len as usize),
        );
        let next = align_up(end).unwrap_or(usize::MAX);
        if start != verified || next > region.len as usize {
            break;
        }
        let at = region.base + e.offset;
        let blob = holds(
            &mut slots.flash,
            at,
            end - start,
            Some(&e.stored_sha256),
            &mut hasher,
        );
        if !blob.await? {
            break;
        }
        let pad = holds(
            &mut slots.flash,
            region.base + end as u32,
            next - end,
            None,
            &mut hasher,
        );
        if !pad.await? {
            break;
        }
        verified = next;
    }
    let total = h.total_len as usize;
    let from = if verified >= total {
        total
    } else {
        verified - verified % F::ERASE_SIZE.max(1)
    };
    let slot_at = u32::try_from(from).map_err(|_| PackageError::Header)?;
    match h.kind {
        PackageKind::Whole => Ok(At {
            slot: slot_at,
            package: (HEADER_LEN + from) as u64,
            item: 0,
            carried: 0,
            phase: if from == total {
                Phase::Done
            } else {
                Phase::Body {
                    left: h.total_len - slot_at,
                }
            },
            copy: None,
            zeros: 0,
        }),
        PackageKind::Delta if from < prefix_len => Ok(At {
            slot: slot_at,
            package: (HEADER_LEN + from) as u64,
            item: 0,
            carried: 0,
            phase: Phase::Body {
                left: h.prefix_len - slot_at,
            },
            copy: None,
            zeros: 0,
        }),
        PackageKind::Delta => {
            let new = New {
                region,
                vetted,
                count,
            };
            item_at(&mut slots.flash, &new, &base, from, prefix_len, slot_at).await
        }
    }
}

/// The new partition of a resumed install: its signed prefix, lent from its check.
struct New {
    region: SlotRegion,
    vetted: Vetted,
    count: usize,
}

/// The delta item the slot offset `from` (past the prefix) falls in, by the rule packages
/// follow (a blob the base holds is copied, any other carried): the package offset of that
/// point and the reader's state there, with the rest of a copied blob and of a padding to
/// write first.
async fn item_at<F: UpdateFlash>(
    flash: &mut F,
    new: &New,
    base: &Base,
    from: usize,
    prefix_len: usize,
    slot_at: u32,
) -> Result<At, UpdateError<F::Error>> {
    let mut package = (HEADER_LEN + prefix_len) as u64;
    let mut carried = 0u16;
    let mut at = At {
        slot: slot_at,
        package,
        item: 0,
        carried: 0,
        phase: Phase::ItemHead,
        copy: None,
        zeros: 0,
    };
    for n in 0..new.count {
        let Some(e) = new_entry(flash, new.region, &new.vetted, n) else {
            break;
        };
        let item = n as u16;
        let copied = held(flash, base, &e).await?;
        let (start, end) = (e.offset as usize, e.offset as usize + e.stored_len as usize);
        let next = align_up(end).unwrap_or(usize::MAX);
        let data = package + ITEM_LEN as u64;
        let after = data
            + if copied.is_some() {
                0
            } else {
                u64::from(e.stored_len)
            };
        if from < next {
            let inside = (from.saturating_sub(start)) as u32;
            at.item = item;
            match copied {
                // Inside a carried blob: the transfer resumes inside its bytes.
                None if from < end => {
                    at.package = data + u64::from(inside);
                    at.carried = carried + 1;
                    at.phase = Phase::Carried {
                        left: e.stored_len - inside,
                    };
                }
                // Inside a copied blob: its rest is copied now; the transfer resumes at the
                // next item.
                Some(blob) if from < end => {
                    at.copy = Some((item, blob, e.stored_len, inside));
                    at.zeros = (next - end) as u8;
                    at.package = after;
                    at.carried = carried;
                    at.item = item + 1;
                }
                // In the padding after a blob: its rest now, then the next item.
                _ => {
                    at.zeros = (next - from) as u8;
                    at.package = after;
                    at.carried = carried + u16::from(copied.is_none());
                    at.item = item + 1;
                }
            }
            return Ok(at);
        }
        package = after;
        carried += u16::from(copied.is_none());
    }
    // Past the last blob: the whole partition is there; the package's end.
    at.package = package;
    at.carried = carried;
    at.item = new.count as u16;
    Ok(at)
}
