//! Updates that cannot brick (feature `update`): two partition slots and a state record in a NOR
//! flash (`embedded_storage::nor_flash`), a new partition installed by streaming into the
//! inactive slot, checked whole once, before it becomes a candidate, booted on trial (a boot
//! checks its signature; each blob is checked when used, and [`Slots::reject`] goes back from
//! one that fails), confirmed by the application or reverted after [`MAX_TRIAL_BOOTS`] boots.
//! The state record's codec is [`record`]. `no_std`, no allocation, no
//! `unsafe`; the byte layout, the state machine and what happens at every power cut are in
//! `docs/update.md`.
//!
//! The slots are read **memory-mapped** ([`MappedFlash::mapped`]: `Partition::parse` reads a
//! `&[u8]`, as on every MCU that maps its internal flash or its QSPI NOR for execute-in-place),
//! or, on a flash the CPU cannot map (a SPI NOR on a bus), **through `read` alone**
//! ([`Unmapped`]: each slot's signed prefix into a buffer lent to it, the blobs by offset,
//! hashed as they stream; a boot gives a [`StreamedSlot`]); the state record is read through
//! [`ReadNorFlash::read`](embedded_storage::nor_flash::ReadNorFlash::read); everything is
//! written through [`NorFlash::write`] and [`NorFlash::erase`], honouring `READ_SIZE`, `WRITE_SIZE` and
//! `ERASE_SIZE`, and never writing a word twice between two erases.
//!
//! ```
//! # use nrtucode::update::{MappedFlash, Slots, Config, Layout, UpdateError};
//! # use nrtucode::partition::{PublicKey, TableClass};
//! # fn run<F: MappedFlash>(flash: F, key: PublicKey, chunks: &[&[u8]]) -> Result<(), UpdateError<F::Error>> {
//! let layout = Layout { slot_a: 0, slot_b: 0x10_0000, slot_len: 0x10_0000, state: 0x20_0000 };
//! let mut slots = Slots::new(flash, Config { layout, key, class: TableClass::Full })?;
//! // At every boot: the slot to use, its signature and policy checked (its blobs were hashed
//! // whole when installed; each is checked again when loaded).
//! let boot = slots.boot()?;
//! let (booted, on_trial) = (boot.slot, boot.state.is_trial());
//! // ... use boot.partition; if a blob fails its check on use: `slots.reject()?`, which
//! // records and boots the other slot, checked whole. When a trial satisfied the application:
//! if on_trial {
//!     slots.confirm(booted)?;
//! }
//! // An update, streamed in chunks of any size; checked whole by `finish`.
//! let mut install = slots.install()?;
//! for chunk in chunks {
//!     install.write(chunk)?;
//! }
//! let candidate = install.finish()?; // the next boot tries it
//! # let _ = candidate; Ok(()) }
//! ```

use core::fmt;

use embedded_storage::nor_flash::NorFlash;

pub use crate::partition::error::Refusal;
use crate::partition::{CheckedPartition, Policy, PublicKey, TableClass, VerifiedPartition};

/// Boots of a trial (an installed partition not yet confirmed): the boot after the last one
/// reverts to the previous slot.
pub const MAX_TRIAL_BOOTS: u8 = 3;

pub mod image;
pub mod package;
mod package_install;
mod storage;
pub use package_install::PackageInstall;
#[cfg(feature = "async")]
pub use storage::{Async, AsyncMappedFlash};
pub use storage::{BlockingFlash, StreamedSlot, Unmapped, UpdateFlash};
use storage::{Check, SlotRegion, Vetted, block_on};
#[cfg(feature = "mem-flash")]
pub mod mem_flash;
pub mod record;

use record::{Geometry, Records, STAGE_LEN, Scan, align_up};

/// A NOR flash whose bytes the CPU also reads memory-mapped (internal flash, or a QSPI/OSPI NOR
/// in memory-mapped mode), as the partition reader needs a `&[u8]`.
///
/// The slice is borrowed from the flash, so no write or erase can happen while it is held; a
/// driver that maps the flash through a raw pointer is responsible for that mapping (and for
/// the cache: a write must be visible in the mapping before `write` returns, e.g. by
/// invalidating the data cache over the range).
pub trait MappedFlash: NorFlash {
    /// The flash's bytes from offset 0, at least
    /// [`capacity`](embedded_storage::nor_flash::ReadNorFlash::capacity) of them (what
    /// `read` would return).
    fn mapped(&self) -> &[u8];
}

impl<T: MappedFlash> MappedFlash for &mut T {
    fn mapped(&self) -> &[u8] {
        T::mapped(self)
    }
}

/// One of the two partition slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Slot {
    /// Slot A (state byte 0): the factory slot.
    A,
    /// Slot B (state byte 1).
    B,
}

impl Slot {
    /// The other slot.
    pub const fn other(self) -> Self {
        match self {
            Slot::A => Slot::B,
            Slot::B => Slot::A,
        }
    }

    /// The state record's byte: 0 for A, 1 for B.
    pub(crate) const fn raw(self) -> u8 {
        match self {
            Slot::A => 0,
            Slot::B => 1,
        }
    }

    /// The slot of a state record's byte.
    pub(crate) const fn from_raw(raw: u8) -> Option<Self> {
        match raw {
            0 => Some(Slot::A),
            1 => Some(Slot::B),
            _ => None,
        }
    }
}

/// Whether the active slot was confirmed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Status {
    /// Confirmed by the application (or the factory slot): booted until an update replaces it.
    Confirmed,
    /// Installed, not yet confirmed: `boots` boots have tried it (each boot counts itself
    /// before it runs); the boot after [`MAX_TRIAL_BOOTS`] reverts.
    Trial {
        /// Boots that tried it so far.
        boots: u8,
    },
}

/// The state: the newest valid state record, or the factory default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct State {
    /// The record's sequence number; 0 for the factory default (no valid record).
    pub seq: u32,
    /// The slot to boot.
    pub active: Slot,
    /// Confirmed or on trial.
    pub status: Status,
    /// The slot a trial reverts to (`None` once confirmed).
    pub previous: Option<Slot>,
    /// The lowest security counter any slot is booted or installed with: raised by each
    /// confirmation to the confirmed partition's counter, never lowered.
    pub min_security_counter: u32,
}

impl State {
    /// `true` while a trial awaits [`Slots::confirm`].
    pub const fn is_trial(&self) -> bool {
        matches!(self.status, Status::Trial { .. })
    }
}

/// Where the slots and the state live in the flash, as offsets from its start.
///
/// Each offset is a multiple of `ERASE_SIZE`, `slot_len` too; the state takes two erase
/// sectors (`2 * ERASE_SIZE` bytes) from `state`; nothing overlaps and all of it lies within
/// the flash's capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Layout {
    /// Offset of slot A.
    pub slot_a: u32,
    /// Offset of slot B.
    pub slot_b: u32,
    /// Bytes of each slot: the largest partition it holds.
    pub slot_len: u32,
    /// Offset of the state's two sectors.
    pub state: u32,
}

impl Layout {
    /// The offset of `slot`.
    const fn offset(&self, slot: Slot) -> u32 {
        match slot {
            Slot::A => self.slot_a,
            Slot::B => self.slot_b,
        }
    }

    /// The checks [`Slots::new`] makes, for a flash of `geometry` with `capacity` bytes (a
    /// host tool checks a layout with no flash at all): the geometry's own rules
    /// ([`Geometry::records`]), every offset and `slot_len` a multiple of `ERASE_SIZE`,
    /// `slot_len` not 0, the slots and the state's two sectors within `capacity` and not
    /// overlapping, every end addressable with a `u32`. The state records' layout, or the rule
    /// broken.
    pub fn check(&self, geometry: Geometry, capacity: usize) -> Result<Records, &'static str> {
        let records = geometry.records()?;
        let e = geometry.erase_size;
        let to = |n: u32| usize::try_from(n).map_err(|_| "offset beyond usize");
        let (a, b, len, state) = (
            to(self.slot_a)?,
            to(self.slot_b)?,
            to(self.slot_len)?,
            to(self.state)?,
        );
        if [a, b, len, state].iter().any(|n| n % e != 0) {
            return Err("slot and state offsets and slot_len must be multiples of ERASE_SIZE");
        }
        if len == 0 {
            return Err("slot_len must not be 0");
        }
        let regions = [(a, len), (b, len), (state, records.state_len())];
        let mut ends = [0usize; 3];
        for ((start, n), end) in regions.iter().zip(ends.iter_mut()) {
            *end = start
                .checked_add(*n)
                .filter(|end| *end <= capacity)
                .ok_or("a slot or the state lies beyond the flash (or its mapping)")?;
        }
        let [(s0, _), (s1, _), (s2, _)] = regions;
        let [e0, e1, e2] = ends;
        let overlap = |(sa, ea): (usize, usize), (sb, eb): (usize, usize)| sa < eb && sb < ea;
        if overlap((s0, e0), (s1, e1)) || overlap((s0, e0), (s2, e2)) || overlap((s1, e1), (s2, e2))
        {
            return Err("the slots and the state must not overlap");
        }
        if u32::try_from(ends.iter().copied().max().unwrap_or(0)).is_err() {
            return Err("the flash must be addressable with u32 offsets");
        }
        Ok(records)
    }
}

/// What the slots need besides the flash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Where the slots and the state are.
    pub layout: Layout,
    /// The key every partition must be signed with.
    pub key: PublicKey,
    /// The table class the program was built for.
    pub class: TableClass,
}

/// Why an update operation did not complete. On every error the state is as it was (a record
/// whose write was interrupted or failed is incomplete, and ignored), and the active slot is
/// untouched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum UpdateError<E> {
    /// The flash driver's own error, returned as it came.
    Flash(E),
    /// The layout or the flash geometry cannot hold the slots and the state: the rule broken.
    Geometry(&'static str),
    /// An install while a trial awaits its confirmation: confirm it (or let it revert) first,
    /// as its previous slot is the one an install would overwrite.
    TrialPending,
    /// A confirmation of a slot that is not the state's active one (a boot that fell back to
    /// the other slot must not confirm the one it did not run).
    NotActive {
        /// The slot given.
        booted: Slot,
        /// The state's active slot.
        active: Slot,
    },
    /// A confirmation or a recovery that needs what this `Slots`' own boot found (the slot
    /// it runs and its counter): call [`Slots::boot`] first, and confirm the slot it booted.
    NotBooted,
    /// [`Slots::reject`] found no slot to go back to: the other slot's check failed (nothing
    /// was written); [`Slots::refusal`] gives why.
    NoFallback {
        /// The slot that would have been booted.
        slot: Slot,
    },
    /// More bytes than a slot holds.
    TooLarge {
        /// The slot's length.
        slot_len: u32,
    },
    /// The bytes received are not exactly the partition their header describes.
    Length {
        /// Bytes received.
        received: u32,
        /// The partition's `total_len`.
        partition: u32,
    },
    /// The installed partition was refused (structure, signature, key, class, security
    /// counter, or a blob digest): the state is unchanged, the slot is not a candidate.
    Refused(Refusal),
    /// Neither slot holds a partition that verifies: [`Slots::refusal`] gives each one's
    /// reason (a host reading an image: `image::FlashImage::check_slot`). The reasons are not
    /// carried here, so that the error stays four words on a 32-bit target.
    NoBootableSlot,
    /// The state's sequence number reached `u32::MAX`.
    SequenceExhausted,
    /// An update package was refused ([`package::PackageError`]): its header, an item, or
    /// a base other than the slot running (refused before anything is written).
    Package(package::PackageError),
}

impl<E> From<package::PackageError> for UpdateError<E> {
    fn from(e: package::PackageError) -> Self {
        UpdateError::Package(e)
    }
}

impl<E: fmt::Debug> fmt::Display for UpdateError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UpdateError::Flash(e) => write!(f, "flash error: {e:?}"),
            UpdateError::Geometry(rule) => write!(f, "flash layout refused: {rule}"),
            UpdateError::TrialPending => f.write_str(
                "a trial awaits confirmation: no install until it is confirmed or reverted",
            ),
            UpdateError::NotActive { booted, active } => write!(
                f,
                "slot {booted:?} is not the active slot {active:?}: nothing to confirm"
            ),
            UpdateError::NotBooted => f.write_str(
                "this Slots did not boot that slot: call boot() first and confirm the slot it booted",
            ),
            UpdateError::NoFallback { slot } => {
                write!(f, "no slot to go back to: slot {slot:?} is refused")
            }
            UpdateError::TooLarge { slot_len } => {
                write!(f, "the update is larger than a slot ({slot_len} bytes)")
            }
            UpdateError::Length {
                received,
                partition,
            } => write!(
                f,
                "{received} bytes received, the partition's header says {partition}"
            ),
            UpdateError::Refused(e) => write!(f, "update refused: {e}"),
            UpdateError::NoBootableSlot => f.write_str("no slot verifies"),
            UpdateError::SequenceExhausted => f.write_str("state sequence number exhausted"),
            UpdateError::Package(e) => write!(f, "update package refused: {e}"),
        }
    }
}

impl<E: fmt::Debug> core::error::Error for UpdateError<E> {}

/// A boot's answer: the slot to use and its partition, as the type of the check the boot made:
/// over a mapped flash, a [`VerifiedPartition`] from [`Slots::boot`] and [`Slots::reject`], a
/// [`CheckedPartition`] from [`Slots::boot_checked`]; over [`Unmapped`], a [`StreamedSlot`]
/// (the partition and the driver its blobs are read through). Not `Copy`: it borrows the
/// slots' flash, and is dropped before the next operation on them.
#[derive(Debug)]
pub struct Boot<P> {
    /// The slot booted.
    pub slot: Slot,
    /// Its partition: signature, key, class and minimum security counter checked. A
    /// [`VerifiedPartition`]'s blobs were hashed whole when it was installed
    /// ([`Install::finish`]) and are checked again as they are used
    /// ([`Blob::load_into`](crate::partition::Blob::load_into)); a blob that fails that check
    /// is the cue for [`Slots::reject`] (for a slot booted as a fallback, every blob was also
    /// hashed by this boot). A [`CheckedPartition`]'s every blob was hashed by this boot: it
    /// answers a stored blob as a plain slice ([`Blob::bytes`](crate::partition::Blob::bytes)).
    pub partition: P,
    /// The state after this boot (its trial counted, or its revert recorded).
    pub state: State,
    /// `true` when the state's slot did not verify and the other one was booted instead.
    pub fell_back: bool,
}

/// What this `Slots` booted (kept so that `install`, `confirm` and `reject` need no check of
/// their own).
#[derive(Clone, Copy, Debug)]
struct Running {
    slot: Slot,
    fell_back: bool,
    security_counter: u32,
}

/// The state as last read or written, and where the next record goes.
#[derive(Clone, Copy, Debug)]
struct Known {
    scan: Scan,
    state: State,
}

/// Two partition slots and their state in one NOR flash.
#[derive(Debug)]
pub struct Slots<F> {
    flash: F,
    config: Config,
    /// How the state records lie in this flash's geometry.
    records: Records,
    /// The state sectors as last scanned, and the records appended since: the flash is this
    /// value's alone (`&mut`), so a scan stays true until an operation fails.
    known: Option<Known>,
    /// The slot the last boot (or recovery) runs.
    running: Option<Running>,
    /// Why the last check of each slot (A, B) that failed a boot or a recovery refused it.
    refused: [Option<Refusal>; 2],
}

impl Config {
    /// Where `slot` lies.
    pub(crate) const fn region(&self, slot: Slot) -> SlotRegion {
        SlotRegion {
            base: self.layout.offset(slot),
            len: self.layout.slot_len,
        }
    }

    /// The policy of a check with the minimum security counter `min_security_counter`.
    pub(crate) const fn policy(&self, min_security_counter: u32) -> Policy {
        Policy {
            min_security_counter,
            expected_class: self.class,
        }
    }
}

/// A boot's choice: the slot, its partition (checked, to be lent) and whether it fell back; or
/// why neither slot passed (A's refusal, B's).
type Choice = Result<(Slot, Vetted, bool), (Refusal, Refusal)>;

/// A slot checked as a [`Check`] says with a minimum security counter: the slot's vetting, or
/// why it was refused (the outer error: the driver's).
trait VetSlot<E>: FnMut(Slot, u32, Check) -> Result<Result<Vetted, Refusal>, E> {}
impl<E, T: FnMut(Slot, u32, Check) -> Result<Result<Vetted, Refusal>, E>> VetSlot<E> for T {}

/// The slot a boot uses: `slot` checked as `check` says, else the other one checked whole (its
/// history is unknown: it may hold an interrupted install); the refusals of both if neither.
fn choose<E>(
    vet: &mut impl VetSlot<E>,
    slot: Slot,
    min_security_counter: u32,
    check: Check,
) -> Result<Choice, E> {
    let first = match vet(slot, min_security_counter, check)? {
        Ok(vetted) => return Ok(Ok((slot, vetted, false))),
        Err(e) => e,
    };
    Ok(
        match vet(slot.other(), min_security_counter, Check::Whole)? {
            Ok(vetted) => Ok((slot.other(), vetted, true)),
            Err(second) => Err(match slot {
                Slot::A => (first, second),
                Slot::B => (second, first),
            }),
        },
    )
}

/// The slot a boot uses once the state (`state`, after the boot's own record) names `slot`:
/// [`choose`], and for the factory default (`factory`) the minimum security counter read from
/// slot A's signature first. The state as the boot leaves it, and the choice. The one boot
/// decision of [`Slots`] and of a host reading an image ([`image::FlashImage`]).
fn select<E>(
    vet: &mut impl VetSlot<E>,
    slot: Slot,
    mut state: State,
    factory: bool,
    check: Check,
) -> Result<(State, Choice), E> {
    if !factory {
        let chosen = choose(vet, slot, state.min_security_counter, check)?;
        return Ok((state, chosen));
    }
    // Slot A's own counter is the minimum when its signature holds, as `state()` reads it;
    // else 0.
    let chosen = match vet(Slot::A, 0, Check::Signature)? {
        Ok(vetted) => {
            let min = vetted.security_counter;
            state.min_security_counter = min;
            match check {
                Check::Whole => choose(vet, Slot::A, min, Check::Whole)?,
                _ => Ok((Slot::A, vetted, false)),
            }
        }
        Err(_) => choose(vet, Slot::A, 0, check)?,
    };
    Ok((state, chosen))
}

/// What a boot found, before its partition is lent.
#[derive(Clone, Copy, Debug)]
struct Booted {
    slot: Slot,
    vetted: Vetted,
    state: State,
    fell_back: bool,
}

/// The factory default (no valid record) with the minimum security counter `min`.
const fn factory(min_security_counter: u32) -> State {
    State {
        seq: 0,
        active: Slot::A,
        status: Status::Confirmed,
        previous: None,
        min_security_counter,
    }
}

/// The state [`Install::finish`] records for `target` once it holds a partition checked
/// whole: `target` on trial, 0 boots, the other slot its previous.
const fn candidate(state: State, target: Slot) -> State {
    State {
        active: target,
        status: Status::Trial { boots: 0 },
        previous: Some(target.other()),
        ..state
    }
}

/// What a boot does to the state before it checks a slot ([`plan`]).
#[derive(Clone, Copy, Debug)]
struct Plan {
    /// The slot the state names for this boot.
    slot: Slot,
    /// The state the boot runs with (before its record, if any, is numbered).
    state: State,
    /// The record the boot appends first: a counted trial or a revert.
    append: Option<State>,
    /// Which.
    writes: image::BootRecord,
}

/// The boot decision from the newest valid record alone (`None`: the factory default, whose
/// minimum security counter [`select`] reads from slot A):
///
/// - confirmed: the active slot, nothing written;
/// - on trial with fewer than [`MAX_TRIAL_BOOTS`] boots: this boot counted, the trial slot;
/// - on trial with [`MAX_TRIAL_BOOTS`] boots: the revert (the previous slot, confirmed).
fn plan(newest: Option<State>) -> Plan {
    let Some(state) = newest else {
        return Plan {
            slot: Slot::A,
            state: factory(0),
            append: None,
            writes: image::BootRecord::Nothing,
        };
    };
    match state.status {
        Status::Confirmed => Plan {
            slot: state.active,
            state,
            append: None,
            writes: image::BootRecord::Nothing,
        },
        Status::Trial { boots } if boots >= MAX_TRIAL_BOOTS => {
            let back = state.previous.unwrap_or(state.active.other());
            let reverted = State {
                active: back,
                status: Status::Confirmed,
                previous: None,
                ..state
            };
            Plan {
                slot: back,
                state: reverted,
                append: Some(reverted),
                writes: image::BootRecord::Revert,
            }
        }
        Status::Trial { boots } => {
            let counted = State {
                status: Status::Trial {
                    boots: boots.saturating_add(1),
                },
                ..state
            };
            Plan {
                slot: state.active,
                state: counted,
                append: Some(counted),
                writes: image::BootRecord::TrialCount,
            }
        }
    }
}

fn geometry<E>(rule: &'static str) -> UpdateError<E> {
    UpdateError::Geometry(rule)
}

impl<F: UpdateFlash> Slots<F> {
    /// The slots in `flash` as `config` lays them out, after checking the layout against the
    /// flash's geometry. Reads and writes nothing.
    pub fn new(flash: F, config: Config) -> Result<Self, UpdateError<F::Error>> {
        let capacity = flash.capacity();
        let records = (config.layout)
            .check(storage::geometry::<F>(), capacity)
            .map_err(geometry)?;
        Ok(Slots {
            flash,
            config,
            records,
            known: None,
            running: None,
            refused: [None; 2],
        })
    }

    /// The flash.
    pub fn flash(&self) -> &F {
        &self.flash
    }

    /// The flash, given back.
    pub fn into_flash(self) -> F {
        self.flash
    }

    fn state_offset(&self, sector: usize, index: usize) -> Option<u32> {
        u32::try_from(self.records.offset(sector, index)?)
            .ok()?
            .checked_add(self.config.layout.state)
    }

    /// Both state sectors read through the driver: the newest valid record and where the
    /// next one goes ([`Records::scan`]).
    async fn read_scan(&mut self) -> Result<Scan, UpdateError<F::Error>> {
        let records = self.records;
        let mut buf = [0u8; 2 * record::MAX_UNIT];
        let state = self.config.layout.state;
        let flash = &mut self.flash;
        records
            .scan(async |sector, index| {
                let offset = records
                    .offset(sector, index)
                    .and_then(|at| u32::try_from(at).ok())
                    .and_then(|at| at.checked_add(state))
                    .ok_or(geometry("state offset"))?;
                let bytes = buf
                    .get_mut(..records.record_len())
                    .ok_or(geometry("record length"))?;
                flash
                    .read(offset, bytes)
                    .await
                    .map_err(UpdateError::Flash)?;
                Ok(records.decode(bytes))
            })
            .await
    }

    /// The state sectors as [`read_scan`](Self::read_scan) finds them, once: later calls
    /// reuse what the last scan or append found.
    async fn scan(&mut self) -> Result<Scan, UpdateError<F::Error>> {
        match self.known {
            Some(known) => Ok(known.scan),
            None => self.read_scan().await,
        }
    }

    /// The state and where its next record goes, reading the flash only the first time.
    async fn known(&mut self) -> Result<Known, UpdateError<F::Error>> {
        if let Some(known) = self.known {
            return Ok(known);
        }
        let scan = self.read_scan().await?;
        let state = match scan.newest {
            Some(state) => state,
            None => self.factory_state()?,
        };
        let known = Known { scan, state };
        self.known = Some(known);
        Ok(known)
    }

    /// The state ([`Slots::state`]).
    async fn state_core(&mut self) -> Result<State, UpdateError<F::Error>> {
        self.known().await.map(|k| k.state)
    }

    /// The factory default: slot A confirmed, the minimum security counter slot A's own if
    /// its signature and policy hold, else 0.
    fn factory_state(&mut self) -> Result<State, UpdateError<F::Error>> {
        let a = self.vet(Slot::A, 0, Check::Signature)?;
        Ok(factory(a.map_or(0, |vetted| vetted.security_counter)))
    }

    /// Appends the record of `next` (its `seq` replaced by the next one) where `scan` says
    /// it goes: the payload part in one write, then the check part in another, so an
    /// interrupted record is incomplete. When the sector is full, the other one is erased and
    /// the record written there first. On an error the scan is forgotten (the next operation
    /// reads the sectors again).
    async fn append(&mut self, next: State) -> Result<State, UpdateError<F::Error>> {
        let scan = self.scan().await?;
        self.known = None;
        let (written, scan) = self.write_record(scan, next).await?;
        self.known = Some(Known {
            scan,
            state: written,
        });
        Ok(written)
    }

    async fn write_record(
        &mut self,
        scan: Scan,
        next: State,
    ) -> Result<(State, Scan), UpdateError<F::Error>> {
        let record::Next {
            state: next,
            sector,
            index,
            erase_first,
        } = self
            .records
            .next(&scan, next)
            .ok_or(UpdateError::SequenceExhausted)?;
        if erase_first {
            let from = self
                .state_offset(sector, 0)
                .ok_or(geometry("state offset"))?;
            let to = u32::try_from(F::ERASE_SIZE)
                .ok()
                .and_then(|e| from.checked_add(e))
                .ok_or(geometry("state offset"))?;
            self.flash
                .erase(from, to)
                .await
                .map_err(UpdateError::Flash)?;
        }
        let offset = self
            .state_offset(sector, index)
            .ok_or(geometry("state offset"))?;
        let bytes = self.records.encode(&next);
        let (head, check_part) = (bytes.head(), bytes.check_part());
        self.flash
            .write(offset, head)
            .await
            .map_err(UpdateError::Flash)?;
        let check_at = u32::try_from(head.len())
            .ok()
            .and_then(|h| offset.checked_add(h))
            .ok_or(geometry("state offset"))?;
        self.flash
            .write(check_at, check_part)
            .await
            .map_err(UpdateError::Flash)?;
        let after = Scan {
            newest: Some(next),
            sector,
            index: index.saturating_add(1),
        };
        Ok((next, after))
    }

    /// `slot` checked as `check` says, with the minimum security counter `min`: what lends
    /// it, or why it was refused (the outer error: the driver's).
    fn vet(
        &mut self,
        slot: Slot,
        min_security_counter: u32,
        check: Check,
    ) -> Result<Result<Vetted, Refusal>, UpdateError<F::Error>> {
        let policy = self.config.policy(min_security_counter);
        let region = self.config.region(slot);
        self.flash.vet(region, &self.config.key, &policy, check)
    }

    /// The boot ([`Slots::boot`]; every blob hashed too with [`Check::Whole`]): what it
    /// chose, before the partition is lent.
    async fn boot_core(&mut self, check: Check) -> Result<Booted, UpdateError<F::Error>> {
        let scan = self.scan().await?;
        let plan = plan(scan.newest);
        let state = match plan.append {
            Some(next) => self.append(next).await?,
            None => plan.state,
        };
        let factory = scan.newest.is_none();
        let (config, flash) = (self.config, &mut self.flash);
        let mut vet = |slot: Slot, min: u32, check: Check| {
            flash.vet(config.region(slot), &config.key, &config.policy(min), check)
        };
        let (state, chosen) = select(&mut vet, plan.slot, state, factory, check)?;
        if factory {
            self.known = Some(Known { scan, state });
        }
        match chosen {
            Ok((slot, vetted, fell_back)) => {
                self.running = Some(Running {
                    slot,
                    fell_back,
                    security_counter: vetted.security_counter,
                });
                Ok(Booted {
                    slot,
                    vetted,
                    state,
                    fell_back,
                })
            }
            Err((a, b)) => {
                self.running = None;
                self.refused = [Some(a), Some(b)];
                Err(UpdateError::NoBootableSlot)
            }
        }
    }

    /// The boot `booted` with its partition lent (no check made again).
    fn lend_boot(
        &mut self,
        booted: Booted,
    ) -> Result<Boot<F::Partition<'_>>, UpdateError<F::Error>> {
        let region = self.config.region(booted.slot);
        let partition = (self.flash.lend(region, &booted.vetted)).ok_or(geometry("slot lent"))?;
        Ok(Boot {
            slot: booted.slot,
            partition,
            state: booted.state,
            fell_back: booted.fell_back,
        })
    }

    /// The boot `booted`, checked whole, with its partition lent as checked.
    fn lend_checked_boot(
        &mut self,
        booted: Booted,
    ) -> Result<Boot<F::Checked<'_>>, UpdateError<F::Error>> {
        let region = self.config.region(booted.slot);
        let partition =
            (self.flash.lend_checked(region, &booted.vetted)).ok_or(geometry("slot lent"))?;
        Ok(Boot {
            slot: booted.slot,
            partition,
            state: booted.state,
            fell_back: booted.fell_back,
        })
    }

    /// The confirmation ([`Slots::confirm`]).
    async fn confirm_core(&mut self, booted: Slot) -> Result<State, UpdateError<F::Error>> {
        let running = self
            .running
            .filter(|r| r.slot == booted)
            .ok_or(UpdateError::NotBooted)?;
        let state = self.state_core().await?;
        if booted != state.active {
            return Err(UpdateError::NotActive {
                booted,
                active: state.active,
            });
        }
        if !state.is_trial() {
            return Ok(state);
        }
        self.append(State {
            status: Status::Confirmed,
            previous: None,
            min_security_counter: state.min_security_counter.max(running.security_counter),
            ..state
        })
        .await
    }

    /// The way back ([`Slots::reject`]): the other slot checked whole, then recorded.
    async fn reject_core(&mut self) -> Result<Booted, UpdateError<F::Error>> {
        let running = self.running.ok_or(UpdateError::NotBooted)?;
        let state = self.state_core().await?;
        let other = running.slot.other();
        let vetted = match self.vet(other, state.min_security_counter, Check::Whole)? {
            Ok(vetted) => vetted,
            Err(error) => return Err(self.no_fallback(other, error)),
        };
        let state = self
            .append(State {
                active: other,
                status: Status::Confirmed,
                previous: None,
                ..state
            })
            .await?;
        self.running = Some(Running {
            slot: other,
            fell_back: false,
            security_counter: vetted.security_counter,
        });
        // The check above passed over bytes nothing wrote since (the record is in the state
        // sectors): the partition is lent from it, not checked again.
        Ok(Booted {
            slot: other,
            vetted,
            state,
            fell_back: false,
        })
    }

    /// Why this `Slots`' last boot or recovery refused `slot`, after
    /// [`UpdateError::NoBootableSlot`] (both slots) or [`UpdateError::NoFallback`] (the other
    /// slot); `None` for a slot no such failure refused.
    pub fn refusal(&self, slot: Slot) -> Option<Refusal> {
        self.refused.get(usize::from(slot.raw())).copied().flatten()
    }

    fn no_fallback(&mut self, slot: Slot, error: Refusal) -> UpdateError<F::Error> {
        if let Some(r) = self.refused.get_mut(usize::from(slot.raw())) {
            *r = Some(error);
        }
        UpdateError::NoFallback { slot }
    }

    /// The slot running and whether its boot fell back: this `Slots`' last boot's, else the
    /// slot a boot would use, found as `boot` finds it, writing nothing (one signature check);
    /// `None` when neither slot verifies.
    fn running_slot(
        &mut self,
        state: &State,
    ) -> Result<Option<(Slot, bool)>, UpdateError<F::Error>> {
        Ok(match self.running {
            Some(running) => Some((running.slot, running.fell_back)),
            None => {
                let (config, flash) = (self.config, &mut self.flash);
                let mut vet = |slot: Slot, min: u32, check: Check| {
                    flash.vet(config.region(slot), &config.key, &config.policy(min), check)
                };
                choose(
                    &mut vet,
                    state.active,
                    state.min_security_counter,
                    Check::Signature,
                )?
                .ok()
                .map(|(slot, _, fell_back)| (slot, fell_back))
            }
        })
    }

    /// An install's start ([`Slots::install`]).
    async fn install_core(&mut self) -> Result<Install<'_, F>, UpdateError<F::Error>> {
        let state = self.state_core().await?;
        if state.is_trial() {
            return Err(UpdateError::TrialPending);
        }
        let running = self.running_slot(&state)?;
        let target = match running {
            Some((slot, true)) if slot != state.active => {
                self.append(State {
                    active: slot,
                    status: Status::Confirmed,
                    previous: None,
                    ..state
                })
                .await?;
                if let Some(r) = self.running.as_mut() {
                    r.fell_back = false;
                }
                slot.other()
            }
            Some((slot, _)) => slot.other(),
            None => state.active.other(),
        };
        let state = self.state_core().await?;
        Ok(Install {
            slots: self,
            target,
            state,
            received: 0,
            erased: 0,
            flushed: 0,
            stage: [0xff; STAGE_LEN],
            staged: 0,
        })
    }
}

/// An install in progress: the chunks of a new partition streamed into the target slot
/// (erased sector by sector as the bytes reach it, written 256 bytes at a time).
/// Dropping it (or an error, or a power cut) leaves the state as it was: a later install
/// starts over from the first byte.
#[derive(Debug)]
pub struct Install<'s, F: UpdateFlash> {
    slots: &'s mut Slots<F>,
    target: Slot,
    state: State,
    /// Bytes received so far.
    received: u32,
    /// Bytes of the slot erased so far (a multiple of `ERASE_SIZE`).
    erased: u32,
    /// Bytes of the slot written so far.
    flushed: u32,
    stage: [u8; STAGE_LEN],
    staged: usize,
}

impl<F: UpdateFlash> Install<'_, F> {
    /// The slot being written.
    pub fn target(&self) -> Slot {
        self.target
    }

    /// The next chunk ([`Install::write`]).
    async fn write_core(&mut self, chunk: &[u8]) -> Result<(), UpdateError<F::Error>> {
        let slot_len = self.slots.config.layout.slot_len;
        let total = u32::try_from(chunk.len())
            .ok()
            .and_then(|n| self.received.checked_add(n))
            .filter(|n| *n <= slot_len)
            .ok_or(UpdateError::TooLarge { slot_len })?;
        let mut rest = chunk;
        while !rest.is_empty() {
            let room = STAGE_LEN.saturating_sub(self.staged);
            let (now, later) = rest.split_at(room.min(rest.len()));
            self.stage
                .iter_mut()
                .skip(self.staged)
                .zip(now.iter())
                .for_each(|(s, b)| *s = *b);
            self.staged = self.staged.saturating_add(now.len());
            rest = later;
            if self.staged == STAGE_LEN {
                self.flush().await?;
            }
        }
        self.received = total;
        Ok(())
    }

    /// Writes the staged bytes (padded with `0xff` to `WRITE_SIZE`) after erasing the sectors
    /// they reach.
    async fn flush(&mut self) -> Result<(), UpdateError<F::Error>> {
        if self.staged == 0 {
            return Ok(());
        }
        let len = align_up(self.staged, F::WRITE_SIZE).ok_or(geometry("write size"))?;
        self.stage
            .iter_mut()
            .skip(self.staged)
            .for_each(|s| *s = 0xff);
        let base = self.slots.config.layout.offset(self.target);
        let flushed = self.flushed;
        let end = u32::try_from(len)
            .ok()
            .and_then(|n| flushed.checked_add(n))
            .ok_or(geometry("slot offset"))?;
        let erase = u32::try_from(F::ERASE_SIZE).map_err(|_| geometry("ERASE_SIZE"))?;
        while self.erased < end {
            let from = base
                .checked_add(self.erased)
                .ok_or(geometry("slot offset"))?;
            let to = from.checked_add(erase).ok_or(geometry("slot offset"))?;
            self.slots
                .flash
                .erase(from, to)
                .await
                .map_err(UpdateError::Flash)?;
            self.erased = self.erased.saturating_add(erase);
        }
        let at = base.checked_add(flushed).ok_or(geometry("slot offset"))?;
        let bytes = self.stage.get(..len).ok_or(geometry("write size"))?;
        self.slots
            .flash
            .write(at, bytes)
            .await
            .map_err(UpdateError::Flash)?;
        self.staged = 0;
        self.flushed = end;
        Ok(())
    }

    /// [`finish`](Self::finish), with `also` asked, once the slot passed its whole check and
    /// before the candidate is recorded, whether it may be (given the slots and the checked
    /// partition's vetting): a refusal leaves the state unchanged.
    pub(crate) async fn finish_with(
        mut self,
        also: impl AsyncFnOnce(&mut Slots<F>, &Vetted) -> Result<(), UpdateError<F::Error>>,
    ) -> Result<State, UpdateError<F::Error>> {
        self.flush().await?;
        let (target, state, received) = (self.target, self.state, self.received);
        let slots = self.slots;
        let vetted = slots
            .vet(target, state.min_security_counter, Check::Whole)?
            .map_err(UpdateError::Refused)?;
        also(slots, &vetted).await?;
        if received != vetted.total_len {
            return Err(UpdateError::Length {
                received,
                partition: vetted.total_len,
            });
        }
        slots.append(candidate(state, target)).await
    }

    /// Moves an install just started to slot offset `at` of its target, whose bytes before it
    /// a resumed install found written and checked: the next byte written goes there. `at` is
    /// a multiple of `ERASE_SIZE` (its sector is erased before it is written), or the end of a
    /// partition found written whole (nothing more is written).
    pub(crate) fn resume_at(&mut self, at: u32) -> Result<(), UpdateError<F::Error>> {
        let erase = F::ERASE_SIZE;
        let erased = usize::try_from(at)
            .ok()
            .and_then(|at| align_up(at, erase))
            .and_then(|e| u32::try_from(e).ok())
            .ok_or(geometry("slot offset"))?;
        self.received = at;
        self.flushed = at;
        self.erased = erased;
        self.staged = 0;
        Ok(())
    }
}

/// The blocking API: a [`MappedFlash`] driver's operations complete as they are called.
impl<F: BlockingFlash> Slots<F> {
    /// The current state: the newest valid record, or, with none, the factory default: slot A
    /// confirmed, the minimum security counter slot A's own if it verifies (signature and
    /// policy), else 0. The state sectors are read once per `Slots` (and the factory default's
    /// signature checked once, or not at all after a [`boot`](Self::boot)); every operation
    /// after that reuses what the last one found or wrote.
    pub fn state(&mut self) -> Result<State, UpdateError<F::Error>> {
        block_on(self.state_core())
    }

    /// The boot decision, from the state and the slots' own checks alone:
    ///
    /// - confirmed: the active slot;
    /// - on trial with fewer than [`MAX_TRIAL_BOOTS`] boots: counts this boot (a new record),
    ///   then the trial slot;
    /// - on trial with [`MAX_TRIAL_BOOTS`] boots: records the revert (the previous slot,
    ///   confirmed), then the previous slot.
    ///
    /// The slot chosen is used if its structure, signature and policy (key, class, the
    /// state's minimum security counter) hold: **its blobs are not hashed here**, so the cost
    /// is the state scan and one signature, independent of the slot's size. Every slot the
    /// state names was checked whole before it became a candidate ([`Install::finish`]), a
    /// trial as a confirmed one, and nothing writes a slot the state names; each blob is
    /// checked again when it is used ([`Blob::load_into`](crate::partition::Blob::load_into)),
    /// and a blob that fails there (bit rot since the install) is reported with
    /// [`reject`](Self::reject). Otherwise the other slot, checked whole, if it passes
    /// ([`Boot::fell_back`]); otherwise [`UpdateError::NoBootableSlot`].
    /// [`boot_checked`](Self::boot_checked) hashes every blob of the chosen slot as well.
    pub fn boot(&mut self) -> Result<Boot<F::Partition<'_>>, UpdateError<F::Error>> {
        let booted = block_on(self.boot_core(Check::Signature))?;
        self.lend_boot(booted)
    }

    /// [`boot`](Self::boot), with every blob of the chosen slot hashed against its signed
    /// digest before it is used (`VerifiedPartition::check_blobs`), for a device that wants
    /// bit rot found at power-on rather than on use: it costs what [`Install::finish`]'s check
    /// costs, per stored byte (`docs/update.md` has the figures). A slot that fails it is not
    /// used: the other one, checked whole, is booted ([`Boot::fell_back`]). The partition it
    /// gives is the checked type: a stored blob's bytes are a plain slice
    /// ([`Blob::bytes`](crate::partition::Blob::bytes)), hashed by this boot and not again.
    pub fn boot_checked(&mut self) -> Result<Boot<F::Checked<'_>>, UpdateError<F::Error>> {
        let booted = block_on(self.boot_core(Check::Whole))?;
        self.lend_checked_boot(booted)
    }

    /// Confirms the trial running from `booted`, the [`Boot::slot`] of this `Slots`' last
    /// [`boot`](Self::boot): a new record with the slot confirmed and the minimum security
    /// counter raised to its partition's (never lowered), so neither a revert nor a replayed
    /// older partition goes below it. The counter is the one that boot's signature check
    /// read: nothing is verified again. A slot already confirmed is left as it is. Refused for
    /// a slot this `Slots` did not boot ([`UpdateError::NotBooted`]) and for a slot that is not
    /// the state's active one ([`UpdateError::NotActive`]).
    pub fn confirm(&mut self, booted: Slot) -> Result<State, UpdateError<F::Error>> {
        block_on(self.confirm_core(booted))
    }

    /// The way back from a blob that failed its check on use (bit rot in the running slot
    /// since it was installed, found by [`Blob::load_into`](crate::partition::Blob::load_into)
    /// or a digest check): records the slot this `Slots` booted as no longer to be used and
    /// boots the other one. The other slot is checked whole first (structure, signature, key,
    /// class, the state's minimum security counter, every blob: what [`Install::finish`]
    /// costs); only if it passes is a record written, naming it active and confirmed (for a
    /// trial, this is its revert), and it is returned as the new boot. Otherwise nothing is
    /// written and the error says why ([`UpdateError::NoFallback`]: typically an older
    /// partition below the minimum security counter, or a slot never installed); the device
    /// then needs an [`install`](Self::install), which writes the other slot, never the
    /// running one. A power cut before the record is complete leaves the state as it was: the
    /// next boot uses the damaged slot again, its blob fails again, and `reject` is called
    /// again. Refused without a boot first ([`UpdateError::NotBooted`]).
    pub fn reject(&mut self) -> Result<Boot<F::Partition<'_>>, UpdateError<F::Error>> {
        let booted = block_on(self.reject_core())?;
        self.lend_boot(booted)
    }

    /// Starts an install into the slot not running: the other one than this `Slots`' last
    /// boot used (without a boot, the slot a boot would use is found as `boot` finds it,
    /// writing nothing: one signature check). The running slot is never written, nor is the
    /// slot the state names: when the boot fell back from the state's slot, a record naming
    /// the running slot active and confirmed is written first, so that an interrupted install
    /// is never the state's slot (whose boot checks the signature only). Refused while a
    /// trial is pending ([`UpdateError::TrialPending`]). The state is otherwise untouched
    /// until [`Install::finish`] accepted the whole partition.
    pub fn install(&mut self) -> Result<Install<'_, F>, UpdateError<F::Error>> {
        block_on(self.install_core())
    }
}

/// The async API (feature `async`): the same operations over an `embedded-storage-async`
/// driver ([`Async`]), each awaiting the flash; the logic, the checks and the writes are the
/// blocking API's own code. Each method does what its blocking namesake's documentation says.
#[cfg(feature = "async")]
impl<G: AsyncMappedFlash> Slots<Async<G>> {
    /// The current state (as the blocking `state`).
    pub async fn state(&mut self) -> Result<State, UpdateError<G::Error>> {
        self.state_core().await
    }

    /// The boot decision and the slot's signature check (as the blocking `boot`).
    pub async fn boot(&mut self) -> Result<Boot<VerifiedPartition<'_>>, UpdateError<G::Error>> {
        let booted = self.boot_core(Check::Signature).await?;
        self.lend_boot(booted)
    }

    /// The boot, every blob of the slot hashed (as the blocking `boot_checked`).
    pub async fn boot_checked(
        &mut self,
    ) -> Result<Boot<CheckedPartition<'_>>, UpdateError<G::Error>> {
        let booted = self.boot_core(Check::Whole).await?;
        self.lend_checked_boot(booted)
    }

    /// Confirms the trial running from `booted` (as the blocking `confirm`).
    pub async fn confirm(&mut self, booted: Slot) -> Result<State, UpdateError<G::Error>> {
        self.confirm_core(booted).await
    }

    /// The way back from a blob that failed its check on use (as the blocking `reject`).
    pub async fn reject(&mut self) -> Result<Boot<VerifiedPartition<'_>>, UpdateError<G::Error>> {
        let booted = self.reject_core().await?;
        self.lend_boot(booted)
    }

    /// Starts an install into the slot not running (as the blocking `install`).
    pub async fn install(&mut self) -> Result<Install<'_, Async<G>>, UpdateError<G::Error>> {
        self.install_core().await
    }
}

/// The blocking install.
impl<F: BlockingFlash> Install<'_, F> {
    /// The next chunk, of any length and at any alignment. Refused, writing nothing of it,
    /// if it would not fit in the slot ([`UpdateError::TooLarge`]).
    pub fn write(&mut self, chunk: &[u8]) -> Result<(), UpdateError<F::Error>> {
        block_on(self.write_core(chunk))
    }

    /// Writes the last bytes, then checks the whole slot as it reads back from the flash:
    /// exactly the bytes the header describes (`total_len`), the structure, the signature with
    /// the configured key, the class, the state's minimum security counter, and the stored
    /// bytes of every blob against their signed digests (`VerifiedPartition::check_blobs`,
    /// compressed blobs' streams included; their decoded bytes are checked again whenever
    /// loaded). Only then records the slot as the candidate (on trial, 0 boots, the other slot
    /// its previous) and returns that state. On any refusal the state is unchanged.
    pub fn finish(self) -> Result<State, UpdateError<F::Error>> {
        block_on(self.finish_with(async |_, _| Ok(())))
    }
}

/// The async install (feature `async`).
#[cfg(feature = "async")]
impl<G: AsyncMappedFlash> Install<'_, Async<G>> {
    /// The next chunk (as the blocking `write`).
    pub async fn write(&mut self, chunk: &[u8]) -> Result<(), UpdateError<G::Error>> {
        self.write_core(chunk).await
    }

    /// The last bytes, the whole check, the candidate's record (as the blocking `finish`).
    pub async fn finish(self) -> Result<State, UpdateError<G::Error>> {
        self.finish_with(async |_, _| Ok(())).await
    }
}

// Every error of `update` is at most four words on a 32-bit target, as the partition's are
// (CI builds the core for thumbv7em, where this holds), for a driver error of up to a word.
#[cfg(target_pointer_width = "32")]
static_assertions::const_assert!(core::mem::size_of::<UpdateError<u32>>() <= 16);
