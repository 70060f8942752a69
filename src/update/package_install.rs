//! [`PackageInstall`]: an update package ([`package`](super::package)) written into the slot
//! not running, its copied blobs taken from the running slot, then checked whole as every
//! install is ([`Install::finish`]).

use super::package::{Event, PackageError, PackageHeader, PackageReader, base_digest};
use super::{Install, MappedFlash, Slot, Slots, UpdateError, slot_bytes};
use crate::partition::{BlobId, Parsed, Partition};

/// Bytes copied from the running slot per write: the size of the install's own staging.
const COPY_PIECE: usize = 256;

/// Where an install of a package stands.
// `Writing` holds the install's 256-byte staging: a `no_std` core has no box to put it in, and
// there is one such value per install.
#[allow(clippy::large_enum_variant)]
enum Stage<'s, F: MappedFlash> {
    /// Before the header: nothing read or written.
    Waiting(&'s mut Slots<F>),
    /// The header's base is the running slot: writing the slot not running.
    Writing(Writing<'s, F>),
}

/// An install of a package under way.
struct Writing<'s, F: MappedFlash> {
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
pub struct PackageInstall<'s, F: MappedFlash> {
    reader: PackageReader,
    stage: Option<Stage<'s, F>>,
}

impl<F: MappedFlash> core::fmt::Debug for PackageInstall<'_, F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PackageInstall")
            .field("reader", &self.reader)
            .field("target", &self.target())
            .finish()
    }
}

impl<F: MappedFlash> Slots<F> {
    /// Starts the install of an update package ([`package`](super::package): whole, or a
    /// delta made for the partition running). Nothing is read or written until the package's
    /// header is complete; then its base is checked against the running slot (the one this
    /// `Slots`' last boot used, else the one a boot would use) before the first write, and
    /// the install goes on as [`install`](Self::install)'s, into the other slot. Refused while
    /// a trial is pending ([`UpdateError::TrialPending`]).
    pub fn install_package(&mut self) -> Result<PackageInstall<'_, F>, UpdateError<F::Error>> {
        if self.state()?.is_trial() {
            return Err(UpdateError::TrialPending);
        }
        Ok(PackageInstall {
            reader: PackageReader::new(),
            stage: Some(Stage::Waiting(self)),
        })
    }
}

impl<'s, F: MappedFlash> PackageInstall<'s, F> {
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

    /// The next chunk of the package, of any length.
    pub fn write(&mut self, chunk: &[u8]) -> Result<(), UpdateError<F::Error>> {
        let PackageInstall { reader, stage } = self;
        let outcome = reader.feed(chunk, |event| on_event(stage, event));
        if outcome.is_err() {
            *stage = None;
        }
        outcome
    }

    /// The end of the package: refused if it was not read to its last item
    /// ([`PackageError::Incomplete`]); then [`Install::finish`]: the slot checked whole and,
    /// only if it passes, recorded as the candidate.
    pub fn finish(self) -> Result<super::State, UpdateError<F::Error>> {
        self.reader.finish()?;
        match self.stage {
            Some(Stage::Writing(w)) => w.install.finish(),
            _ => Err(PackageError::Incomplete.into()),
        }
    }
}

/// One event of the package: the header starts the install, the rest is written.
fn on_event<'s, F: MappedFlash>(
    stage: &mut Option<Stage<'s, F>>,
    event: Event<'_>,
) -> Result<(), UpdateError<F::Error>> {
    match event {
        Event::Header(header) => {
            let Some(Stage::Waiting(slots)) = stage.take() else {
                return Err(PackageError::Incomplete.into());
            };
            *stage = Some(start(slots, &header)?);
            Ok(())
        }
        Event::Bytes(bytes) => writing(stage)?.install.write(bytes),
        Event::Zeros(n) => {
            let zeros = [0u8; 16];
            let pad = zeros.get(..usize::from(n)).ok_or(PackageError::Header)?;
            writing(stage)?.install.write(pad)
        }
        Event::Copy {
            index,
            base: blob,
            stored_len,
        } => {
            let w = writing(stage)?;
            copy_from_base(&mut w.install, w.base, w.parsed, index, blob, stored_len)
        }
    }
}

/// The install under way.
fn writing<'a, 's, F: MappedFlash>(
    stage: &'a mut Option<Stage<'s, F>>,
) -> Result<&'a mut Writing<'s, F>, UpdateError<F::Error>> {
    match stage {
        Some(Stage::Writing(w)) => Ok(w),
        _ => Err(PackageError::Incomplete.into()),
    }
}

/// The header read: its base must be the running slot's partition (nothing written before
/// this holds), its partition must fit a slot; then the install of the other slot starts.
fn start<'s, F: MappedFlash>(
    slots: &'s mut Slots<F>,
    header: &PackageHeader,
) -> Result<Stage<'s, F>, UpdateError<F::Error>> {
    let state = slots.state()?;
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
    let install = slots.install()?;
    if install.target() != base.other() {
        // `install` writes the slot other than the running one: the base.
        return Err(PackageError::BaseMismatch.into());
    }
    Ok(Stage::Writing(Writing {
        install,
        base,
        parsed,
    }))
}

/// Item `index`: the stored bytes of the base's entry `blob` (`stored_len` of them, as the
/// base's table of contents must say) written next, in pieces read from the running slot.
fn copy_from_base<F: MappedFlash>(
    install: &mut Install<'_, F>,
    base: Slot,
    parsed: Parsed,
    index: u16,
    blob: BlobId,
    stored_len: u32,
) -> Result<(), UpdateError<F::Error>> {
    let refused = || UpdateError::Package(PackageError::Copy { index });
    let layout = install.slots.config.layout;
    let start = {
        let bytes = slot_bytes(install.slots.flash.mapped(), &layout, base);
        let entry = (parsed.lend(bytes))
            .and_then(|p| p.untrusted_tables().toc_entry(blob))
            .filter(|e| e.stored_len == stored_len)
            .ok_or_else(refused)?;
        usize::try_from(entry.offset).map_err(|_| refused())?
    };
    let len = usize::try_from(stored_len).map_err(|_| refused())?;
    let mut done = 0;
    while done < len {
        let n = (len - done).min(COPY_PIECE);
        let mut piece = [0u8; COPY_PIECE];
        {
            let bytes = slot_bytes(install.slots.flash.mapped(), &layout, base);
            let from = start.checked_add(done).ok_or_else(refused)?;
            let src = bytes
                .get(from..from.saturating_add(n))
                .ok_or_else(refused)?;
            piece.get_mut(..n).ok_or_else(refused)?.copy_from_slice(src);
        }
        install.write(piece.get(..n).ok_or_else(refused)?)?;
        done += n;
    }
    Ok(())
}
