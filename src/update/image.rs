//! The update region as a host tool sees it: a flash image in memory, read and provisioned as
//! [`Slots`](super::Slots) would, by the same code, with no flash driver and for a geometry
//! given at run time ([`Geometry`]). `nrtucode inspect --layout` reads the state, checks each
//! slot and tells what the next boot does; `nrtucode provision` places a candidate's record.
//!
//! ```
//! # use nrtucode::update::image::{BootRecord, FlashImage};
//! # use nrtucode::update::record::Geometry;
//! # use nrtucode::update::{Config, Layout, Slot, UpdateError};
//! # use nrtucode::partition::{PublicKey, TableClass};
//! let layout = Layout { slot_a: 0, slot_b: 0x4000, slot_len: 0x4000, state: 0x8000 };
//! let config = Config { layout, key: PublicKey::from_bytes([0; 32]), class: TableClass::Full };
//! let geometry = Geometry { read_size: 1, write_size: 4, erase_size: 4096 };
//! let erased = [0xff; 0xa000];
//! let image = FlashImage::new(&erased, config, geometry).unwrap();
//! // No record: the factory default, slot A confirmed; neither slot holds a partition.
//! assert_eq!((image.state().seq, image.state().active), (0, Slot::A));
//! assert!(matches!(image.next_boot(), Err(UpdateError::NoBootableSlot)));
//! ```

use core::convert::Infallible;

use crate::partition::FormatError;
use core::ops::Range;

use super::record::{Geometry, RecordBytes, Records, Scan};
use super::storage::{Check, Vetted, vet_mapped};
use super::{
    Boot, CheckedPartition, Config, Refusal, Slot, State, UpdateError, VerifiedPartition,
    candidate, factory, plan, select,
};

/// A flash image of the update region: the bytes from flash offset 0 (the [`Config`]'s layout
/// offsets index them), of a flash of the given geometry.
#[derive(Clone, Copy, Debug)]
pub struct FlashImage<'a> {
    bytes: &'a [u8],
    config: Config,
    records: Records,
}

/// The record a boot appends before it checks its slot ([`NextBoot::writes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum BootRecord {
    /// None: a confirmed slot, or the factory default.
    Nothing,
    /// A trial's boot counted.
    TrialCount,
    /// A trial's revert to its previous slot, after [`MAX_TRIAL_BOOTS`](super::MAX_TRIAL_BOOTS)
    /// boots.
    Revert,
}

/// What the next boot over an image does ([`FlashImage::next_boot`],
/// [`FlashImage::next_boot_checked`]).
#[derive(Debug)]
pub struct NextBoot<P> {
    /// The boot's answer, as [`Slots::boot`](super::Slots::boot) (a [`VerifiedPartition`]) or
    /// [`Slots::boot_checked`](super::Slots::boot_checked) (a [`CheckedPartition`]) gives it.
    pub boot: Boot<P>,
    /// The record it appends first.
    pub writes: BootRecord,
}

/// A record to place in an image ([`FlashImage::candidate_record`]): erase `erase` (if any),
/// then write `bytes` at `offset`, as [`Slots`](super::Slots) would.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Append {
    /// The state recorded.
    pub state: State,
    /// The state sector erased first, as offsets from the image's start.
    pub erase: Option<Range<usize>>,
    /// The record's offset from the image's start.
    pub offset: usize,
    /// The record's bytes.
    pub bytes: RecordBytes,
}

impl<'a> FlashImage<'a> {
    /// The image `bytes` of a flash of `geometry`, laid out by `config`: refused with the rule
    /// broken as [`Slots::new`](super::Slots::new) refuses it ([`Layout::check`](super::Layout::check),
    /// the image's length as the flash's capacity).
    pub fn new(bytes: &'a [u8], config: Config, geometry: Geometry) -> Result<Self, &'static str> {
        let records = config.layout.check(geometry, bytes.len())?;
        Ok(FlashImage {
            bytes,
            config,
            records,
        })
    }

    /// How the state records lie in this image's geometry.
    pub const fn records(&self) -> Records {
        self.records
    }

    /// The state's two sectors.
    pub fn state_bytes(&self) -> &'a [u8] {
        let at = self.config.layout.state as usize;
        self.bytes
            .get(at..at.saturating_add(self.records.state_len()))
            .unwrap_or(&[])
    }

    /// The state sectors as a boot scans them: the newest valid record and where the next one
    /// goes.
    pub(crate) fn scan(&self) -> Scan {
        self.records.scan_bytes(self.state_bytes())
    }

    /// The state, as [`Slots::state`](super::Slots::state) reads it: the newest valid record,
    /// or the factory default.
    pub fn state(&self) -> State {
        self.scan().newest.unwrap_or_else(|| {
            let a = self.vet(Slot::A, 0, Check::Signature);
            factory(a.map_or(0, |vetted| vetted.security_counter))
        })
    }

    /// `slot` checked as `check` says, with the minimum security counter `min`.
    fn vet(&self, slot: Slot, min_security_counter: u32, check: Check) -> Result<Vetted, Refusal> {
        let region = self.config.region(slot);
        let policy = self.config.policy(min_security_counter);
        vet_mapped(self.bytes, region, &self.config.key, &policy, check)
    }

    /// The bytes of `slot` as `vetted` lends them (its whole partition, parsed).
    fn lend(&self, slot: Slot, vetted: &Vetted) -> Option<crate::partition::Partition<'a>> {
        vetted.parsed.lend(self.config.region(slot).of(self.bytes))
    }

    /// `slot`'s partition checked whole, as [`Install::finish`](super::Install::finish) checks
    /// it: structure, signature, class, `min_security_counter`, every blob's stored bytes.
    pub fn check_slot(
        &self,
        slot: Slot,
        min_security_counter: u32,
    ) -> Result<CheckedPartition<'a>, Refusal> {
        let vetted = self.vet(slot, min_security_counter, Check::Whole)?;
        let lent = self.lend(slot, &vetted);
        Ok(lent
            .ok_or(Refusal::Format(FormatError::Erased))?
            .vouched_checked())
    }

    /// What [`Slots::boot`](super::Slots::boot) does over this image (nothing is written: the
    /// record it would append is [`NextBoot::writes`], and its state is the boot's).
    pub fn next_boot(&self) -> Result<NextBoot<VerifiedPartition<'a>>, UpdateError<Infallible>> {
        self.next_boot_to(Check::Signature, |p| p.vouched())
    }

    /// What [`Slots::boot_checked`](super::Slots::boot_checked) does over this image.
    pub fn next_boot_checked(
        &self,
    ) -> Result<NextBoot<CheckedPartition<'a>>, UpdateError<Infallible>> {
        self.next_boot_to(Check::Whole, |p| p.vouched_checked())
    }

    fn next_boot_to<P>(
        &self,
        check: Check,
        trusted: impl FnOnce(crate::partition::Partition<'a>) -> P,
    ) -> Result<NextBoot<P>, UpdateError<Infallible>> {
        let scan = self.scan();
        let plan = plan(scan.newest);
        let state = match plan.append {
            Some(next) => {
                (self.records.next(&scan, next))
                    .ok_or(UpdateError::SequenceExhausted)?
                    .state
            }
            None => plan.state,
        };
        let factory = scan.newest.is_none();
        let mut vet = |slot: Slot, min: u32, check: Check| {
            Ok::<_, UpdateError<Infallible>>(self.vet(slot, min, check))
        };
        let (state, chosen) = select(&mut vet, plan.slot, state, factory, check)?;
        let (slot, vetted, fell_back) = chosen.map_err(|_| UpdateError::NoBootableSlot)?;
        let lent = self
            .lend(slot, &vetted)
            .ok_or(UpdateError::NoBootableSlot)?;
        let partition = trusted(lent);
        Ok(NextBoot {
            boot: Boot {
                slot,
                partition,
                state,
                fell_back,
            },
            writes: plan.writes,
        })
    }

    /// The record [`Install::finish`](super::Install::finish) appends once `target` holds a
    /// partition (as this image holds it) that passes its whole check with the state's minimum
    /// security counter: `target` on trial, 0 boots, the other slot its previous. Refused as
    /// an install is: while a trial is pending, or when the slot's check fails.
    pub fn candidate_record(&self, target: Slot) -> Result<Append, UpdateError<Infallible>> {
        let scan = self.scan();
        let state = self.state();
        if state.is_trial() {
            return Err(UpdateError::TrialPending);
        }
        self.check_slot(target, state.min_security_counter)
            .map_err(UpdateError::Refused)?;
        let next = (self.records.next(&scan, candidate(state, target)))
            .ok_or(UpdateError::SequenceExhausted)?;
        let geometry_error = || UpdateError::Geometry("state offset");
        let base = self.config.layout.state as usize;
        let in_image = |sector: usize, index: usize| {
            (self.records.offset(sector, index))
                .and_then(|at| at.checked_add(base))
                .ok_or_else(geometry_error)
        };
        let erase = if next.erase_first {
            let from = in_image(next.sector, 0)?;
            let to = (from.checked_add(self.records.erase_size())).ok_or_else(geometry_error)?;
            Some(from..to)
        } else {
            None
        };
        Ok(Append {
            state: next.state,
            erase,
            offset: in_image(next.sector, next.index)?,
            bytes: self.records.encode(&next.state),
        })
    }
}
