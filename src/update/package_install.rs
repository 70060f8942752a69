//! [`PackageInstall`]: an update package ([`package`](super::package)) written into the slot
//! not running, its copied blobs taken from the running slot, then checked whole as every
//! install is ([`Install::finish`]).

use super::package::{
    Event, HEADER_LEN, ITEM_LEN, PackageError, PackageHeader, PackageKind, PackageReader, Phase,
    base_digest,
};
#[cfg(feature = "async")]
use super::{Async, AsyncMappedFlash};
use super::{Install, MappedFlash, Slot, Slots, UpdateError, UpdateFlash, block_on, slot_bytes};
use crate::digest::{Sha256Hasher, SoftSha256};
use crate::partition::format::align_up;
use crate::partition::{BlobId, Parsed, Partition, Policy, Tables, TocEntry};

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
    /// The running slot: the base.
    base: Slot,
    /// Its partition's layout, lent again over its bytes for each copy (nothing writes the
    /// running slot).
    parsed: Parsed,
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
        let at = resume_point(&writing, &header)?;
        writing.install.resume_at(at.slot)?;
        if let Some((index, blob, stored_len, from)) = at.copy {
            let (w, base, parsed) = (&mut writing.install, writing.base, writing.parsed);
            copy_from_base(w, base, parsed, index, blob, stored_len, from).await?;
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
impl<F: MappedFlash> Slots<F> {
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
        let (base, parsed, layout) = (w.base, w.parsed, w.install.slots.config.layout);
        w.install
            .finish_with(|mapped, checked| {
                // A delta carries exactly the blobs its base does not hold: the rule a resumed
                // install finds its place by.
                if header.kind == PackageKind::Delta {
                    let base = parsed.lend(slot_bytes(mapped, &layout, base));
                    let base = base.ok_or(PackageError::NotCanonical)?.untrusted_tables();
                    let tables = checked.partition().untrusted_tables();
                    let carried = (tables.blob_ids())
                        .filter_map(|id| tables.toc_entry(id))
                        .filter(|e| held(&base, e).is_none())
                        .count();
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
impl<F: MappedFlash> PackageInstall<'_, F> {
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
            copy_from_base(&mut w.install, w.base, w.parsed, index, blob, stored_len, 0).await
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
    let (base, _) = slots
        .running_slot(&state)
        .ok_or(PackageError::BaseMismatch)?;
    let parsed = {
        let bytes = slot_bytes(slots.flash.mapped(), &slots.config.layout, base);
        let partition = Partition::parse(bytes).map_err(|_| PackageError::BaseMismatch)?;
        if base_digest(partition.bytes()) != Some(header.base) {
            return Err(PackageError::BaseMismatch.into());
        }
        partition.parsed()
    };
    let slot_len = slots.config.layout.slot_len;
    if header.total_len > slot_len {
        return Err(UpdateError::TooLarge { slot_len });
    }
    let install = slots.install_core().await?;
    if install.target() != base.other() {
        // `install` writes the slot other than the running one: the base.
        return Err(PackageError::BaseMismatch.into());
    }
    Ok(Writing {
        install,
        base,
        parsed,
    })
}

/// Item `index`: the stored bytes of the base's entry `blob` (`stored_len` of them, as the
/// base's table of contents must say) from byte `from` on, written next, in pieces read from
/// the running slot.
async fn copy_from_base<F: UpdateFlash>(
    install: &mut Install<'_, F>,
    base: Slot,
    parsed: Parsed,
    index: u16,
    blob: BlobId,
    stored_len: u32,
    from: u32,
) -> Result<(), UpdateError<F::Error>> {
    let refused = || UpdateError::Package(PackageError::Copy { index });
    let layout = install.slots.config.layout;
    let start = {
        let bytes = slot_bytes(install.slots.flash.mapped(), &layout, base);
        let entry = (parsed.lend(bytes))
            .and_then(|p| p.untrusted_tables().toc_entry(blob))
            .filter(|e| e.stored_len == stored_len && from <= stored_len)
            .ok_or_else(refused)?;
        usize::try_from(entry.offset.saturating_add(from)).map_err(|_| refused())?
    };
    let len = usize::try_from(stored_len - from).map_err(|_| refused())?;
    let mut done = 0;
    while done < len {
        let n = (len - done).min(COPY_PIECE);
        let mut piece = [0u8; COPY_PIECE];
        {
            let bytes = slot_bytes(install.slots.flash.mapped(), &layout, base);
            let at = start.checked_add(done).ok_or_else(refused)?;
            let src = bytes.get(at..at.saturating_add(n)).ok_or_else(refused)?;
            piece.get_mut(..n).ok_or_else(refused)?.copy_from_slice(src);
        }
        install
            .write_core(piece.get(..n).ok_or_else(refused)?)
            .await?;
        done += n;
    }
    Ok(())
}

/// The base's entry whose stored bytes are `entry`'s (the same stored digest and length): the
/// first, as `nrtucode_pack::update_package` copies it. `None`: a delta carries `entry`.
fn held(base: &Tables<'_>, entry: &TocEntry) -> Option<BlobId> {
    base.blob_ids().find(|&id| {
        base.toc_entry(id).is_some_and(|b| {
            b.stored_sha256 == entry.stored_sha256 && b.stored_len == entry.stored_len
        })
    })
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

/// Where the install `w` of the package `h` goes on: after the blobs its target slot holds
/// already, checked against the signed digests of its verified prefix, from the start of the
/// erase sector the first blob that does not hold
/// begins in ([`Slots::resume_package`]); [`fresh`] when the slot does not start with the new
/// partition's signed prefix.
fn resume_point<F: UpdateFlash>(
    w: &Writing<'_, F>,
    h: &PackageHeader,
) -> Result<At, UpdateError<F::Error>> {
    let slots = &*w.install.slots;
    let mapped = slots.flash.mapped();
    let layout = slots.config.layout;
    let slot = slot_bytes(mapped, &layout, w.install.target);
    let prefix_len = h.prefix_len as usize;
    let mut hasher = SoftSha256::new();
    let same_prefix = slot.get(..prefix_len).is_some_and(|prefix| {
        hasher.update(prefix);
        hasher.finish() == h.target
    });
    let new = match Partition::parse_prefix(slot) {
        Ok(new) if same_prefix && new.bytes().len() == prefix_len => new,
        _ => return Ok(fresh(h)),
    };
    // The digests the blobs are checked against are the signed ones: the prefix verified with
    // the configured key and policy (one signature), or the install starts over.
    let policy = Policy {
        min_security_counter: w.install.state.min_security_counter,
        expected_class: slots.config.class,
    };
    let Ok(new) = new.verify(&slots.config.key, &policy) else {
        return Ok(fresh(h));
    };
    let new = new.partition();
    let tables = new.untrusted_tables();
    if h.kind == PackageKind::Delta && new.blob_count() != usize::from(h.items) {
        return Ok(fresh(h));
    }
    // The end of what the slot holds, checked: the prefix, then whole blobs and their padding.
    let mut verified = prefix_len;
    for id in tables.blob_ids() {
        let Some(e) = tables.toc_entry(id) else { break };
        let (start, end) = (
            e.offset as usize,
            (e.offset as usize).saturating_add(e.stored_len as usize),
        );
        let next = align_up(end).unwrap_or(usize::MAX);
        let holds = slot.get(start..end).is_some_and(|bytes| {
            hasher.reset();
            hasher.update(bytes);
            hasher.finish() == e.stored_sha256
        }) && slot
            .get(end..next)
            .is_some_and(|pad| pad.iter().all(|&b| b == 0));
        if start != verified || !holds {
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
            let base = w.parsed.lend(slot_bytes(mapped, &layout, w.base));
            let base = base.ok_or(PackageError::BaseMismatch)?.untrusted_tables();
            Ok(item_at(&tables, &base, from, prefix_len, slot_at))
        }
    }
}

/// The delta item the slot offset `from` (past the prefix) falls in, by the rule packages
/// follow (a blob the base holds is copied, any other carried): the package offset of that
/// point and the reader's state there, with the rest of a copied blob and of a padding to
/// write first.
fn item_at(
    new: &Tables<'_>,
    base: &Tables<'_>,
    from: usize,
    prefix_len: usize,
    slot_at: u32,
) -> At {
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
    for (n, id) in new.blob_ids().enumerate() {
        let Some(e) = new.toc_entry(id) else { break };
        let item = n as u16;
        let copied = held(base, &e);
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
            return at;
        }
        package = after;
        carried += u16::from(copied.is_none());
    }
    // Past the last blob: the whole partition is there; the package's end.
    at.package = package;
    at.carried = carried;
    at.item = new.blob_ids().count() as u16;
    at
}
