//! Updates that cannot brick (feature `update`): two partition slots and a state record in a NOR
//! flash (`embedded_storage::nor_flash`), a new partition installed by streaming into the
//! inactive slot, checked whole before it becomes a candidate, booted on trial, confirmed by
//! the application or reverted after [`MAX_TRIAL_BOOTS`] boots. `no_std`, no allocation, no
//! `unsafe`; the byte layout, the state machine and what happens at every power cut are in
//! `docs/update.md`.
//!
//! The slots are read **memory-mapped** ([`MappedFlash::mapped`]: `Partition::parse` reads a
//! `&[u8]`, as on every MCU that maps its internal flash or its QSPI NOR for execute-in-place);
//! the state record is read through
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
//! // At every boot: the slot to use, fully verified (signature, policy, every blob digest).
//! let boot = slots.boot()?;
//! let (booted, on_trial) = (boot.slot, boot.state.is_trial());
//! // ... use boot.partition; when the application is satisfied with a trial:
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

use crate::digest::{Sha256Hasher, SoftSha256};
use crate::partition::{
    Partition, PartitionError, Policy, PublicKey, TableClass, VerifiedPartition,
};

/// Boots of a trial (an installed partition not yet confirmed): the boot after the last one
/// reverts to the previous slot.
pub const MAX_TRIAL_BOOTS: u8 = 3;

/// The largest `WRITE_SIZE` and `READ_SIZE` accepted (32 bytes: STM32H7's flash word).
pub const MAX_UNIT: usize = 32;

/// Bytes of a state record's payload before its padding (`docs/update.md` has each field).
pub const PAYLOAD_LEN: usize = 24;
/// Bytes of a state record's check: the first 8 bytes of the SHA-256 of the padded payload.
pub const CHECK_LEN: usize = 8;
/// The first four bytes of a state record: `NRUS`.
pub const RECORD_MAGIC: [u8; 4] = *b"NRUS";
/// The state record's version byte.
pub const RECORD_VERSION: u8 = 1;
/// Bytes of the install's staging buffer: the incoming chunks are written in writes of this
/// many bytes (the last one shorter, padded with `0xff` to `WRITE_SIZE`).
pub const STAGE_LEN: usize = 256;

const STATUS_CONFIRMED: u8 = 1;
const STATUS_TRIAL: u8 = 2;
const NO_SLOT: u8 = 0xff;

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
    pub const fn raw(self) -> u8 {
        match self {
            Slot::A => 0,
            Slot::B => 1,
        }
    }

    /// The slot of a state record's byte.
    pub const fn from_raw(raw: u8) -> Option<Self> {
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

    /// The payload bytes of this state's record (`docs/update.md`).
    pub fn to_payload(&self) -> [u8; PAYLOAD_LEN] {
        let mut p = [0u8; PAYLOAD_LEN];
        let (status, boots) = match self.status {
            Status::Confirmed => (STATUS_CONFIRMED, 0),
            Status::Trial { boots } => (STATUS_TRIAL, boots),
        };
        let seq = self.seq.to_le_bytes();
        let min = self.min_security_counter.to_le_bytes();
        let bytes = [
            RECORD_VERSION,
            self.active.raw(),
            status,
            boots,
            self.previous.map_or(NO_SLOT, Slot::raw),
            0,
            0,
            0,
        ];
        let fields = RECORD_MAGIC
            .iter()
            .chain(seq.iter())
            .chain(bytes.iter())
            .chain(min.iter());
        p.iter_mut().zip(fields).for_each(|(p, f)| *p = *f);
        p
    }

    /// The state of a record's payload, if its fields are valid (the check is not read here).
    pub fn from_payload(p: &[u8; PAYLOAD_LEN]) -> Option<Self> {
        let [
            m0,
            m1,
            m2,
            m3,
            s0,
            s1,
            s2,
            s3,
            version,
            active,
            status,
            boots,
            previous,
            r0,
            r1,
            r2,
            c0,
            c1,
            c2,
            c3,
            r3,
            r4,
            r5,
            r6,
        ] = *p;
        if [m0, m1, m2, m3] != RECORD_MAGIC
            || version != RECORD_VERSION
            || [r0, r1, r2, r3, r4, r5, r6] != [0; 7]
        {
            return None;
        }
        let active = Slot::from_raw(active)?;
        let status = match (status, boots) {
            (STATUS_CONFIRMED, 0) => Status::Confirmed,
            (STATUS_TRIAL, boots) if boots <= MAX_TRIAL_BOOTS => Status::Trial { boots },
            _ => return None,
        };
        let previous = match previous {
            NO_SLOT => None,
            raw => Some(Slot::from_raw(raw)?),
        };
        if previous == Some(active) {
            return None;
        }
        Some(State {
            seq: u32::from_le_bytes([s0, s1, s2, s3]),
            active,
            status,
            previous,
            min_security_counter: u32::from_le_bytes([c0, c1, c2, c3]),
        })
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
    Refused(PartitionError),
    /// Neither slot holds a partition that verifies: the error of each.
    NoBootableSlot {
        /// Slot A's refusal.
        a: PartitionError,
        /// Slot B's refusal.
        b: PartitionError,
    },
    /// The state's sequence number reached `u32::MAX`.
    SequenceExhausted,
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
            UpdateError::NoBootableSlot { a, b } => {
                write!(f, "no slot verifies: A: {a}; B: {b}")
            }
            UpdateError::SequenceExhausted => f.write_str("state sequence number exhausted"),
        }
    }
}

impl<E: fmt::Debug> core::error::Error for UpdateError<E> {}

/// A boot's answer: the slot to use and its partition, fully verified.
#[derive(Clone, Copy, Debug)]
pub struct Boot<'a> {
    /// The slot booted.
    pub slot: Slot,
    /// Its partition: signature, key, class and minimum security counter checked, and the
    /// stored bytes of every blob hashed against their signed digests.
    pub partition: VerifiedPartition<'a>,
    /// The state after this boot (its trial counted, or its revert recorded).
    pub state: State,
    /// `true` when the state's slot did not verify and the other one was booted instead.
    pub fell_back: bool,
}

/// Two partition slots and their state in one NOR flash.
#[derive(Debug)]
pub struct Slots<F> {
    flash: F,
    config: Config,
    /// Bytes of the payload part (payload padded to `unit`).
    head_len: usize,
    /// Bytes of a whole record (payload part + check part).
    record_len: usize,
    /// Records in one state sector.
    per_sector: usize,
}

fn align_up(n: usize, unit: usize) -> Option<usize> {
    n.checked_add(unit.checked_sub(1)?)?
        .checked_div(unit)?
        .checked_mul(unit)
}

fn geometry<E>(rule: &'static str) -> UpdateError<E> {
    UpdateError::Geometry(rule)
}

/// The check of a record: SHA-256 of its padded payload part, first [`CHECK_LEN`] bytes.
fn record_check(head: &[u8]) -> [u8; CHECK_LEN] {
    let mut h = SoftSha256::new();
    h.update(head);
    let d = h.finish();
    let mut c = [0u8; CHECK_LEN];
    c.iter_mut().zip(d.iter()).for_each(|(c, d)| *c = *d);
    c
}

/// What a record place of the state sectors holds ([`Slots::record`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Record {
    /// Every byte erased: free.
    Erased,
    /// Written, but not a complete valid record (torn by a power cut, or damaged, or never a
    /// record): ignored by every read of the state.
    Invalid,
    /// A complete record.
    Valid(State),
}

/// Where the next record goes.
#[derive(Clone, Copy, Debug)]
struct Scan {
    /// The newest valid record, if any.
    newest: Option<State>,
    /// The sector to append to and the record index there; `index == per_sector` when full.
    sector: usize,
    index: usize,
}

impl<F: MappedFlash> Slots<F> {
    /// The slots in `flash` as `config` lays them out, after checking the layout against the
    /// flash's geometry. Reads and writes nothing.
    pub fn new(flash: F, config: Config) -> Result<Self, UpdateError<F::Error>> {
        let (w, r, e) = (F::WRITE_SIZE, F::READ_SIZE, F::ERASE_SIZE);
        if w == 0 || r == 0 || e == 0 || w > MAX_UNIT || r > MAX_UNIT {
            return Err(geometry(
                "WRITE_SIZE and READ_SIZE must be 1 to 32, ERASE_SIZE > 0",
            ));
        }
        let unit = w.max(r);
        if unit % w != 0 || unit % r != 0 || STAGE_LEN % w != 0 {
            return Err(geometry(
                "WRITE_SIZE and READ_SIZE must divide each other and 256",
            ));
        }
        let head_len = align_up(PAYLOAD_LEN, unit).ok_or(geometry("unit"))?;
        let check_len = align_up(CHECK_LEN, unit).ok_or(geometry("unit"))?;
        let record_len = head_len.checked_add(check_len).ok_or(geometry("unit"))?;
        let per_sector = e / record_len;
        if per_sector < 2 {
            return Err(geometry(
                "an erase sector must hold at least two state records",
            ));
        }
        if e % w != 0 || e % r != 0 {
            return Err(geometry(
                "ERASE_SIZE must be a multiple of WRITE_SIZE and READ_SIZE",
            ));
        }
        let l = config.layout;
        let to = |n: u32| usize::try_from(n).map_err(|_| geometry("offset beyond usize"));
        let (a, b, len, state) = (to(l.slot_a)?, to(l.slot_b)?, to(l.slot_len)?, to(l.state)?);
        if [a, b, len, state].iter().any(|n| n % e != 0) {
            return Err(geometry(
                "slot and state offsets and slot_len must be multiples of ERASE_SIZE",
            ));
        }
        if len == 0 {
            return Err(geometry("slot_len must not be 0"));
        }
        let state_len = e.checked_mul(2).ok_or(geometry("ERASE_SIZE"))?;
        let regions = [(a, len), (b, len), (state, state_len)];
        let mut ends = [0usize; 3];
        for ((start, n), end) in regions.iter().zip(ends.iter_mut()) {
            *end = start
                .checked_add(*n)
                .filter(|end| *end <= flash.capacity() && *end <= flash.mapped().len())
                .ok_or(geometry(
                    "a slot or the state lies beyond the flash (or its mapping)",
                ))?;
        }
        let [(s0, _), (s1, _), (s2, _)] = regions;
        let [e0, e1, e2] = ends;
        let overlap = |(sa, ea): (usize, usize), (sb, eb): (usize, usize)| sa < eb && sb < ea;
        if overlap((s0, e0), (s1, e1)) || overlap((s0, e0), (s2, e2)) || overlap((s1, e1), (s2, e2))
        {
            return Err(geometry("the slots and the state must not overlap"));
        }
        if u32::try_from(ends.iter().copied().max().unwrap_or(0)).is_err() {
            return Err(geometry("the flash must be addressable with u32 offsets"));
        }
        Ok(Slots {
            flash,
            config,
            head_len,
            record_len,
            per_sector,
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

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Bytes of one state record in this flash (`docs/update.md`: the payload and the check,
    /// each padded to `max(WRITE_SIZE, READ_SIZE)`).
    pub fn record_len(&self) -> usize {
        self.record_len
    }

    /// State records one state sector holds.
    pub fn records_per_sector(&self) -> usize {
        self.per_sector
    }

    fn slot_offset(&self, slot: Slot) -> u32 {
        match slot {
            Slot::A => self.config.layout.slot_a,
            Slot::B => self.config.layout.slot_b,
        }
    }

    /// The mapped bytes of `slot` (all `slot_len` of them).
    pub fn slot_bytes(&self, slot: Slot) -> &[u8] {
        let start = self.slot_offset(slot) as usize;
        let len = self.config.layout.slot_len as usize;
        // `new` checked that the range lies within the mapping.
        self.flash
            .mapped()
            .get(start..start.saturating_add(len))
            .unwrap_or(&[])
    }

    /// `slot`'s partition, fully checked: structure, signature with the configured key, class,
    /// `min_security_counter`, then the stored bytes of every blob against their signed
    /// digests (`VerifiedPartition::check_blobs`).
    pub fn check_slot(
        &self,
        slot: Slot,
        min_security_counter: u32,
    ) -> Result<VerifiedPartition<'_>, PartitionError> {
        let verified = self.verify_slot(slot, min_security_counter)?;
        verified.check_blobs(&mut SoftSha256::new())?;
        Ok(verified)
    }

    /// Structure, signature and policy only (no blob hashed).
    fn verify_slot(
        &self,
        slot: Slot,
        min_security_counter: u32,
    ) -> Result<VerifiedPartition<'_>, PartitionError> {
        let policy = Policy {
            min_security_counter,
            expected_class: self.config.class,
        };
        Ok(Partition::parse(self.slot_bytes(slot))?.verify(&self.config.key, &policy)?)
    }

    fn state_offset(&self, sector: usize, index: usize) -> Option<u32> {
        let at = sector
            .checked_mul(F::ERASE_SIZE)?
            .checked_add(index.checked_mul(self.record_len)?)?;
        u32::try_from(at)
            .ok()?
            .checked_add(self.config.layout.state)
    }

    /// What the record place `index` (0 to [`records_per_sector`](Self::records_per_sector)
    /// − 1) of state sector `sector` (0 or 1) holds, as every read of the state classifies it:
    /// for a diagnosis (a host tool listing the state sectors of a flash image), as the state
    /// itself is [`state`](Self::state). `None` for a place that does not exist.
    pub fn record(
        &mut self,
        sector: usize,
        index: usize,
    ) -> Result<Option<Record>, UpdateError<F::Error>> {
        if sector > 1 || index >= self.per_sector {
            return Ok(None);
        }
        self.read_record(sector, index).map(Some)
    }

    /// Reads the record at `(sector, index)`.
    fn read_record(
        &mut self,
        sector: usize,
        index: usize,
    ) -> Result<Record, UpdateError<F::Error>> {
        let offset = self
            .state_offset(sector, index)
            .ok_or(geometry("state offset"))?;
        let mut buf = [0u8; 2 * MAX_UNIT];
        let record = buf
            .get_mut(..self.record_len)
            .ok_or(geometry("record length"))?;
        self.flash
            .read(offset, record)
            .map_err(UpdateError::Flash)?;
        if record.iter().all(|b| *b == 0xff) {
            return Ok(Record::Erased);
        }
        let (head, check) = record.split_at(self.head_len.min(record.len()));
        let Some(stored) = check.get(..CHECK_LEN) else {
            return Ok(Record::Invalid);
        };
        let padding_is_zero = head
            .get(PAYLOAD_LEN..)
            .is_some_and(|p| p.iter().all(|b| *b == 0))
            && check
                .get(CHECK_LEN..)
                .is_some_and(|p| p.iter().all(|b| *b == 0));
        if !padding_is_zero || stored != record_check(head) {
            return Ok(Record::Invalid);
        }
        let mut payload = [0u8; PAYLOAD_LEN];
        payload
            .iter_mut()
            .zip(head.iter())
            .for_each(|(p, h)| *p = *h);
        Ok(State::from_payload(&payload).map_or(Record::Invalid, Record::Valid))
    }

    /// Both state sectors: the newest valid record and where the next one goes.
    fn scan(&mut self) -> Result<Scan, UpdateError<F::Error>> {
        // Per sector: the last index not erased, and the newest valid record: records are
        // appended in sequence order within a sector, so it is the last valid one, and the
        // scan goes backwards and stops there (one check computed per sector, not one per
        // record).
        let mut newest: Option<(State, usize)> = None;
        let mut last_written = [None::<usize>; 2];
        for (sector, last) in last_written.iter_mut().enumerate() {
            for index in (0..self.per_sector).rev() {
                let record = self.read_record(sector, index)?;
                if matches!(record, Record::Erased) {
                    continue;
                }
                if last.is_none() {
                    *last = Some(index);
                }
                if let Record::Valid(state) = record {
                    if newest.is_none_or(|(n, _)| state.seq > n.seq) {
                        newest = Some((state, sector));
                    }
                    break;
                }
            }
        }
        let sector = newest.map_or(0, |(_, s)| s);
        let index = last_written
            .get(sector)
            .copied()
            .flatten()
            .map_or(0, |i| i.saturating_add(1));
        Ok(Scan {
            newest: newest.map(|(s, _)| s),
            sector,
            index,
        })
    }

    /// The current state: the newest valid record, or, with none, the factory default: slot A
    /// confirmed, the minimum security counter slot A's own if it verifies (signature and
    /// policy), else 0.
    pub fn state(&mut self) -> Result<State, UpdateError<F::Error>> {
        let scan = self.scan()?;
        Ok(scan.newest.unwrap_or_else(|| self.factory_state()))
    }

    fn factory_state(&self) -> State {
        State {
            seq: 0,
            active: Slot::A,
            status: Status::Confirmed,
            previous: None,
            min_security_counter: self
                .verify_slot(Slot::A, 0)
                .map_or(0, |p| p.partition().security_counter()),
        }
    }

    /// Appends the record of `next` (its `seq` replaced by the next one): the payload part in
    /// one write, then the check part in another, so an interrupted record is incomplete. When
    /// the sector is full, the other one is erased and the record written there first.
    fn append(&mut self, next: State) -> Result<State, UpdateError<F::Error>> {
        let scan = self.scan()?;
        let seq = scan
            .newest
            .map_or(0, |s| s.seq)
            .checked_add(1)
            .ok_or(UpdateError::SequenceExhausted)?;
        let next = State { seq, ..next };
        let (mut sector, mut index) = (scan.sector, scan.index);
        if index >= self.per_sector {
            sector = 1 - sector.min(1);
            index = 0;
            let from = self
                .state_offset(sector, 0)
                .ok_or(geometry("state offset"))?;
            let to = u32::try_from(F::ERASE_SIZE)
                .ok()
                .and_then(|e| from.checked_add(e))
                .ok_or(geometry("state offset"))?;
            self.flash.erase(from, to).map_err(UpdateError::Flash)?;
        }
        let offset = self
            .state_offset(sector, index)
            .ok_or(geometry("state offset"))?;
        let mut buf = [0u8; 2 * MAX_UNIT];
        let payload = next.to_payload();
        buf.iter_mut()
            .zip(payload.iter())
            .for_each(|(b, p)| *b = *p);
        let (head, rest) = buf.split_at_mut(self.head_len.min(2 * MAX_UNIT));
        let check = record_check(head);
        rest.iter_mut().zip(check.iter()).for_each(|(b, c)| *b = *c);
        let check_part = rest
            .get(..self.record_len.saturating_sub(self.head_len))
            .ok_or(geometry("record length"))?;
        self.flash.write(offset, head).map_err(UpdateError::Flash)?;
        let check_at = u32::try_from(self.head_len)
            .ok()
            .and_then(|h| offset.checked_add(h))
            .ok_or(geometry("state offset"))?;
        self.flash
            .write(check_at, check_part)
            .map_err(UpdateError::Flash)?;
        Ok(next)
    }

    /// The boot decision, from the state and the slots' own checks alone:
    ///
    /// - confirmed: the active slot;
    /// - on trial with fewer than [`MAX_TRIAL_BOOTS`] boots: counts this boot (a new record),
    ///   then the trial slot;
    /// - on trial with [`MAX_TRIAL_BOOTS`] boots: records the revert (the previous slot,
    ///   confirmed), then the previous slot.
    ///
    /// The slot chosen is used only if it fully verifies ([`check_slot`](Self::check_slot),
    /// with the state's minimum security counter); otherwise the other slot, if it does
    /// ([`Boot::fell_back`]); otherwise [`UpdateError::NoBootableSlot`].
    pub fn boot(&mut self) -> Result<Boot<'_>, UpdateError<F::Error>> {
        let state = self.state()?;
        let (slot, state) = match state.status {
            Status::Confirmed => (state.active, state),
            Status::Trial { boots } if boots >= MAX_TRIAL_BOOTS => {
                let back = state.previous.unwrap_or(state.active.other());
                let reverted = self.append(State {
                    active: back,
                    status: Status::Confirmed,
                    previous: None,
                    ..state
                })?;
                (back, reverted)
            }
            Status::Trial { boots } => {
                let counted = self.append(State {
                    status: Status::Trial {
                        boots: boots.saturating_add(1),
                    },
                    ..state
                })?;
                (state.active, counted)
            }
        };
        let this: &Self = self;
        let min = state.min_security_counter;
        let first = match this.check_slot(slot, min) {
            Ok(partition) => {
                return Ok(Boot {
                    slot,
                    partition,
                    state,
                    fell_back: false,
                });
            }
            Err(e) => e,
        };
        match this.check_slot(slot.other(), min) {
            Ok(partition) => Ok(Boot {
                slot: slot.other(),
                partition,
                state,
                fell_back: true,
            }),
            Err(second) => Err(match slot {
                Slot::A => UpdateError::NoBootableSlot {
                    a: first,
                    b: second,
                },
                Slot::B => UpdateError::NoBootableSlot {
                    a: second,
                    b: first,
                },
            }),
        }
    }

    /// Confirms the trial running from `booted` (the [`Boot::slot`] this boot used): a new
    /// record with the slot confirmed and the minimum security counter raised to its
    /// partition's (never lowered), so neither a revert nor a replayed older partition goes
    /// below it. A slot already confirmed is left as it is. Refused for a slot that is not
    /// the state's active one ([`UpdateError::NotActive`]).
    pub fn confirm(&mut self, booted: Slot) -> Result<State, UpdateError<F::Error>> {
        let state = self.state()?;
        if booted != state.active {
            return Err(UpdateError::NotActive {
                booted,
                active: state.active,
            });
        }
        if !state.is_trial() {
            return Ok(state);
        }
        let counter = self
            .verify_slot(booted, state.min_security_counter)
            .map_err(UpdateError::Refused)?
            .partition()
            .security_counter();
        self.append(State {
            status: Status::Confirmed,
            previous: None,
            min_security_counter: state.min_security_counter.max(counter),
            ..state
        })
    }

    /// Starts an install into the inactive slot: the slot that is not the state's active one
    /// (or, if the active slot no longer verifies and the other does, the active one, so the
    /// slot that boots is never the one written). Refused while a trial is pending
    /// ([`UpdateError::TrialPending`]). Writes nothing yet; the state is untouched until
    /// [`Install::finish`] accepted the whole partition.
    pub fn install(&mut self) -> Result<Install<'_, F>, UpdateError<F::Error>> {
        let state = self.state()?;
        if state.is_trial() {
            return Err(UpdateError::TrialPending);
        }
        let min = state.min_security_counter;
        let active = state.active;
        let target = if self.check_slot(active, min).is_err()
            && self.check_slot(active.other(), min).is_ok()
        {
            active
        } else {
            active.other()
        };
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
/// (erased sector by sector as the bytes reach it, written [`STAGE_LEN`] bytes at a time).
/// Dropping it (or an error, or a power cut) leaves the state as it was: a later install
/// starts over from the first byte.
#[derive(Debug)]
pub struct Install<'s, F: MappedFlash> {
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

impl<F: MappedFlash> Install<'_, F> {
    /// The slot being written.
    pub fn target(&self) -> Slot {
        self.target
    }

    /// Bytes received so far.
    pub fn received(&self) -> u32 {
        self.received
    }

    /// The next chunk, of any length and at any alignment. Refused, writing nothing of it,
    /// if it would not fit in the slot ([`UpdateError::TooLarge`]).
    pub fn write(&mut self, chunk: &[u8]) -> Result<(), UpdateError<F::Error>> {
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
                self.flush()?;
            }
        }
        self.received = total;
        Ok(())
    }

    /// Writes the staged bytes (padded with `0xff` to `WRITE_SIZE`) after erasing the sectors
    /// they reach.
    fn flush(&mut self) -> Result<(), UpdateError<F::Error>> {
        if self.staged == 0 {
            return Ok(());
        }
        let len = align_up(self.staged, F::WRITE_SIZE).ok_or(geometry("write size"))?;
        self.stage
            .iter_mut()
            .skip(self.staged)
            .for_each(|s| *s = 0xff);
        let base = self.slots.slot_offset(self.target);
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
                .map_err(UpdateError::Flash)?;
            self.erased = self.erased.saturating_add(erase);
        }
        let at = base.checked_add(flushed).ok_or(geometry("slot offset"))?;
        let bytes = self.stage.get(..len).ok_or(geometry("write size"))?;
        self.slots
            .flash
            .write(at, bytes)
            .map_err(UpdateError::Flash)?;
        self.staged = 0;
        self.flushed = end;
        Ok(())
    }

    /// Writes the last bytes, then checks the whole slot as it reads back from the flash:
    /// exactly the bytes the header describes (`total_len`), the structure, the signature with
    /// the configured key, the class, the state's minimum security counter, and the stored
    /// bytes of every blob against their signed digests (`VerifiedPartition::check_blobs`,
    /// compressed blobs' streams included; their decoded bytes are checked again whenever
    /// loaded). Only then records the slot as the candidate (on trial, 0 boots, the other slot
    /// its previous) and returns that state. On any refusal the state is unchanged.
    pub fn finish(mut self) -> Result<State, UpdateError<F::Error>> {
        self.flush()?;
        let (target, state, received) = (self.target, self.state, self.received);
        let slots = self.slots;
        let total_len = {
            let verified = slots
                .check_slot(target, state.min_security_counter)
                .map_err(UpdateError::Refused)?;
            verified.partition().bytes().len()
        };
        if usize::try_from(received).ok() != Some(total_len) {
            return Err(UpdateError::Length {
                received,
                partition: u32::try_from(total_len).unwrap_or(u32::MAX),
            });
        }
        slots.append(State {
            active: target,
            status: Status::Trial { boots: 0 },
            previous: Some(target.other()),
            ..state
        })
    }
}
