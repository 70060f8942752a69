//! The state record's codec (`docs/update.md`, "State record"): pure functions over a flash's
//! geometry given at run time. [`Slots`](super::Slots) reads and writes its state through
//! them; a host tool that builds or reads a flash image (`nrtucode provision`, `nrtucode
//! inspect --layout`) uses them directly, for any geometry, with no flash driver.
//!
//! ```
//! # use nrtucode::update::record::{Geometry, Record};
//! let records = Geometry { read_size: 1, write_size: 4, erase_size: 4096 }.records().unwrap();
//! assert_eq!((records.record_len(), records.per_sector()), (32, 128));
//! assert_eq!(records.offset(1, 2), Some(4096 + 2 * 32));
//! assert_eq!(records.decode(&[0xff; 32]), Record::Erased);
//! assert_eq!(records.decode(&[0; 32]), Record::Invalid);
//! ```
//!
//! The format's sizes and fields (`NRUS`, version 1, a 24-byte payload and an 8-byte check,
//! each padded to `max(WRITE_SIZE, READ_SIZE)`) are `docs/update.md`'s, not API.

use crate::digest::{Sha256Hasher, SoftSha256};

use super::{MAX_TRIAL_BOOTS, Slot, State, Status};

/// The largest `WRITE_SIZE` and `READ_SIZE` accepted (32 bytes: STM32H7's flash word).
pub(crate) const MAX_UNIT: usize = 32;
/// Bytes of a state record's payload before its padding (`docs/update.md` has each field).
pub(crate) const PAYLOAD_LEN: usize = 24;
/// Bytes of a state record's check: the first 8 bytes of the SHA-256 of the padded payload.
pub(crate) const CHECK_LEN: usize = 8;
/// The first four bytes of a state record: `NRUS`.
pub(crate) const RECORD_MAGIC: [u8; 4] = *b"NRUS";
/// The state record's version byte.
pub(crate) const RECORD_VERSION: u8 = 1;

const STATUS_CONFIRMED: u8 = 1;
const STATUS_TRIAL: u8 = 2;
const NO_SLOT: u8 = 0xff;

/// The payload bytes of `state`'s record (`docs/update.md`).
fn encode_payload(state: &State) -> [u8; PAYLOAD_LEN] {
    let mut p = [0u8; PAYLOAD_LEN];
    let (status, boots) = match state.status {
        Status::Confirmed => (STATUS_CONFIRMED, 0),
        Status::Trial { boots } => (STATUS_TRIAL, boots),
    };
    let seq = state.seq.to_le_bytes();
    let min = state.min_security_counter.to_le_bytes();
    let bytes = [
        RECORD_VERSION,
        state.active.raw(),
        status,
        boots,
        state.previous.map_or(NO_SLOT, Slot::raw),
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

/// The state of a record's payload, if its fields are valid (the check is not read here:
/// [`Records::decode`] reads both).
fn decode_payload(p: &[u8; PAYLOAD_LEN]) -> Option<State> {
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

/// A NOR flash's sizes, as `embedded_storage`'s `ReadNorFlash::READ_SIZE`,
/// `NorFlash::WRITE_SIZE` and `NorFlash::ERASE_SIZE` give them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Geometry {
    /// `READ_SIZE`.
    pub read_size: usize,
    /// `WRITE_SIZE`.
    pub write_size: usize,
    /// `ERASE_SIZE`.
    pub erase_size: usize,
}

/// Bytes of the install's staging buffer: the incoming chunks are written in writes of this
/// many bytes (the last one shorter, padded with `0xff` to `WRITE_SIZE`), so `WRITE_SIZE`
/// must divide it.
pub(crate) const STAGE_LEN: usize = 256;

impl Geometry {
    /// The geometry of the flash type `F`.
    pub const fn of<F: embedded_storage::nor_flash::NorFlash>() -> Self {
        Geometry {
            read_size: F::READ_SIZE,
            write_size: F::WRITE_SIZE,
            erase_size: F::ERASE_SIZE,
        }
    }

    /// How the state records lie in this geometry, or the rule it breaks: `WRITE_SIZE` and
    /// `READ_SIZE` 1 to 32, dividing each other and 256; `ERASE_SIZE` a multiple of
    /// both, holding at least two records.
    pub fn records(self) -> Result<Records, &'static str> {
        let Geometry {
            read_size: r,
            write_size: w,
            erase_size: e,
        } = self;
        if w == 0 || r == 0 || e == 0 || w > MAX_UNIT || r > MAX_UNIT {
            return Err("WRITE_SIZE and READ_SIZE must be 1 to 32, ERASE_SIZE > 0");
        }
        let unit = w.max(r);
        if unit % w != 0 || unit % r != 0 || STAGE_LEN % w != 0 || STAGE_LEN % r != 0 {
            return Err("WRITE_SIZE and READ_SIZE must divide each other and 256");
        }
        let head_len = align_up(PAYLOAD_LEN, unit).ok_or("unit")?;
        let check_len = align_up(CHECK_LEN, unit).ok_or("unit")?;
        let record_len = head_len.checked_add(check_len).ok_or("unit")?;
        let per_sector = e / record_len;
        if per_sector < 2 {
            return Err("an erase sector must hold at least two state records");
        }
        if e % w != 0 || e % r != 0 {
            return Err("ERASE_SIZE must be a multiple of WRITE_SIZE and READ_SIZE");
        }
        Ok(Records {
            head_len,
            record_len,
            per_sector,
            erase_size: e,
        })
    }
}

/// `n` rounded up to a multiple of `unit`.
pub(super) fn align_up(n: usize, unit: usize) -> Option<usize> {
    n.checked_add(unit.checked_sub(1)?)?
        .checked_div(unit)?
        .checked_mul(unit)
}

/// How state records lie in a geometry ([`Geometry::records`]): each is the payload padded
/// to `unit = max(WRITE_SIZE, READ_SIZE)`, then the check padded to `unit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Records {
    head_len: usize,
    record_len: usize,
    per_sector: usize,
    erase_size: usize,
}

/// What a record place of the state sectors holds.
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

/// One record's bytes, as `Slots` writes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordBytes {
    buf: [u8; 2 * MAX_UNIT],
    head_len: usize,
    record_len: usize,
}

impl RecordBytes {
    /// The whole record.
    pub fn record(&self) -> &[u8] {
        self.buf.get(..self.record_len).unwrap_or(&[])
    }

    /// The payload part: the first write.
    pub(crate) fn head(&self) -> &[u8] {
        self.buf.get(..self.head_len).unwrap_or(&[])
    }

    /// The check part: the second write, after the first completed.
    pub(crate) fn check_part(&self) -> &[u8] {
        self.buf.get(self.head_len..self.record_len).unwrap_or(&[])
    }
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

/// Where the state is and where the next record goes ([`Records::scan`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct Scan {
    /// The newest valid record, if any (none: the factory default).
    pub newest: Option<State>,
    /// The sector the next record goes to (0 or 1).
    pub sector: usize,
    /// Its place there; [`Records::per_sector`] when the sector is full (the next record then
    /// erases the other sector and goes to its place 0).
    pub index: usize,
}

/// Where the record after a scan goes, and what it records ([`Records::next`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct Next {
    /// The state recorded, its `seq` the one after the scan's newest.
    pub state: State,
    /// The sector it goes to (0 or 1).
    pub sector: usize,
    /// Its place there.
    pub index: usize,
    /// `true` when that sector is erased first (the scan's sector was full).
    pub erase_first: bool,
}

impl Records {
    /// The record of `state` appended after `scan`: numbered after the scan's newest record
    /// (`None` once the sequence number reached `u32::MAX`), at the scan's next place, or at
    /// the other sector's first place (erased first) when the scan's sector is full.
    pub(crate) fn next(&self, scan: &Scan, state: State) -> Option<Next> {
        let seq = scan.newest.map_or(0, |s| s.seq).checked_add(1)?;
        let state = State { seq, ..state };
        let full = scan.index >= self.per_sector;
        let (sector, index) = if full {
            (1 - scan.sector.min(1), 0)
        } else {
            (scan.sector, scan.index)
        };
        Some(Next {
            state,
            sector,
            index,
            erase_first: full,
        })
    }

    /// `ERASE_SIZE`: the bytes of one state sector.
    pub(crate) const fn erase_size(&self) -> usize {
        self.erase_size
    }

    /// Bytes of one record.
    pub const fn record_len(&self) -> usize {
        self.record_len
    }

    /// Records one erase sector holds.
    pub const fn per_sector(&self) -> usize {
        self.per_sector
    }

    /// Bytes of the state: two erase sectors.
    pub(crate) const fn state_len(&self) -> usize {
        self.erase_size.saturating_mul(2)
    }

    /// The offset of record place `index` of `sector` from the state's start; `None` for a
    /// place that does not exist.
    pub fn offset(&self, sector: usize, index: usize) -> Option<usize> {
        if sector > 1 || index >= self.per_sector {
            return None;
        }
        sector
            .checked_mul(self.erase_size)?
            .checked_add(index.checked_mul(self.record_len)?)
    }

    /// The bytes of `state`'s record.
    pub(crate) fn encode(&self, state: &State) -> RecordBytes {
        let mut buf = [0u8; 2 * MAX_UNIT];
        buf.iter_mut()
            .zip(encode_payload(state).iter())
            .for_each(|(b, p)| *b = *p);
        let (head, rest) = buf.split_at_mut(self.head_len.min(2 * MAX_UNIT));
        let check = record_check(head);
        rest.iter_mut().zip(check.iter()).for_each(|(b, c)| *b = *c);
        RecordBytes {
            buf,
            head_len: self.head_len,
            record_len: self.record_len,
        }
    }

    /// What a record place's bytes (its [`record_len`](Self::record_len) bytes) hold: erased
    /// (every byte `0xff`), valid (zero padding, the check matching, every field in range), or
    /// invalid.
    pub fn decode(&self, record: &[u8]) -> Record {
        let Some(record) = record.get(..self.record_len) else {
            return Record::Invalid;
        };
        if record.iter().all(|b| *b == 0xff) {
            return Record::Erased;
        }
        let (head, check) = record.split_at(self.head_len.min(record.len()));
        let Some(stored) = check.get(..CHECK_LEN) else {
            return Record::Invalid;
        };
        let padding_is_zero = head
            .get(PAYLOAD_LEN..)
            .is_some_and(|p| p.iter().all(|b| *b == 0))
            && check
                .get(CHECK_LEN..)
                .is_some_and(|p| p.iter().all(|b| *b == 0));
        if !padding_is_zero || stored != record_check(head) {
            return Record::Invalid;
        }
        let mut payload = [0u8; PAYLOAD_LEN];
        payload
            .iter_mut()
            .zip(head.iter())
            .for_each(|(p, h)| *p = *h);
        decode_payload(&payload).map_or(Record::Invalid, Record::Valid)
    }

    /// Both state sectors, each place read with `read(sector, index)`: the newest valid
    /// record and where the next one goes. Records are appended in sequence order within a
    /// sector, so each sector is read backwards and its scan stops at its last valid record.
    pub(crate) async fn scan<E>(
        &self,
        mut read: impl AsyncFnMut(usize, usize) -> Result<Record, E>,
    ) -> Result<Scan, E> {
        let mut newest: Option<(State, usize)> = None;
        let mut last_written = [None::<usize>; 2];
        for (sector, last) in last_written.iter_mut().enumerate() {
            for index in (0..self.per_sector).rev() {
                let record = read(sector, index).await?;
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

    /// [`scan`](Self::scan) over the state's bytes in memory (its two sectors, as a host tool
    /// reads them from an image).
    pub(crate) fn scan_bytes(&self, state: &[u8]) -> Scan {
        let read = async |sector, index| -> Result<Record, core::convert::Infallible> {
            Ok(self
                .offset(sector, index)
                .and_then(|at| state.get(at..at.saturating_add(self.record_len)))
                .map_or(Record::Invalid, |bytes| self.decode(bytes)))
        };
        match super::storage::block_on(self.scan(read)) {
            Ok(scan) => scan,
            Err(never) => match never {},
        }
    }
}
