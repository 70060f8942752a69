//! Zero-copy views of the HW instruction-decode profiler tables and a validator for their
//! documented invariants.
//!
//! PROF_CAM is 64 little-endian records `{u32 opcode_id, u32 mask, u32 enable, u32 reserved}`;
//! the armed records (enable 1) are a contiguous prefix whose last record is the wildcard
//! `{0, 0, 1, 0}`, the rest are zero. PROF_TABLE is 64 records of 128 bytes parallel to the CAM:
//! record `i` describes the opcode armed by CAM record `i`, the populated records are exactly the
//! armed prefix, and only bytes `0x00..0x18` of a record are used (`cfg0`, `cfg1`, 12 descriptor
//! bytes, `class`).
//!
//! ```
//! use nrtucode::prof::{validate_pair, CamView, TableView};
//! use nrtucode::{resolve_hwdecode, ImageIndex, ProfKind};
//! let cam = CamView::new(resolve_hwdecode(ImageIndex::CAYMAN_NX_ACT, ProfKind::Cam)?)?;
//! let table = TableView::new(resolve_hwdecode(ImageIndex::CAYMAN_NX_ACT, ProfKind::Table)?)?;
//! assert_eq!(validate_pair(&cam, &table)?.armed, 47);
//! # Ok::<(), Box<dyn core::error::Error>>(())
//! ```

use core::fmt;

/// Bytes of a PROF_CAM blob.
pub const CAM_SIZE: usize = 0x400;
/// Bytes of a PROF_TABLE blob.
pub const TABLE_SIZE: usize = 0x2000;
/// Records in either blob.
pub const RECORDS: usize = 64;
/// Bytes of one CAM record.
pub const CAM_RECORD_SIZE: usize = 16;
/// Bytes of one TABLE record.
pub const TABLE_RECORD_SIZE: usize = 128;
/// Bytes of a TABLE record that may be non-zero.
pub const TABLE_USED_BYTES: usize = 0x18;

/// Opcode masks the CAM uses: wildcard, 8-bit and 9-bit match.
pub const VALID_MASKS: [u32; 3] = [0x000, 0x0ff, 0x1ff];

/// The little-endian word at `at`; 0 past the end (never reached: callers stay in bounds, and
/// this form keeps a panic path out of the binary at every optimisation level).
const fn le32(bytes: &[u8], at: usize) -> u32 {
    match bytes.split_at_checked(at) {
        Some((_, rest)) => match rest.first_chunk::<4>() {
            Some(word) => u32::from_le_bytes(*word),
            None => 0,
        },
        None => 0,
    }
}

/// A blob that breaks the documented format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ProfError {
    /// The blob is not the size of its kind.
    WrongSize {
        /// Required size.
        expected: usize,
        /// Actual size.
        found: usize,
    },
    /// A CAM `enable` word other than 0 or 1.
    BadEnable {
        /// Record number.
        record: usize,
        /// The word.
        value: u32,
    },
    /// A CAM mask outside {0, 0xff, 0x1ff}.
    BadMask {
        /// Record number.
        record: usize,
        /// The word.
        value: u32,
    },
    /// A CAM `reserved` word that is not zero.
    ReservedNotZero {
        /// Record number.
        record: usize,
        /// The word.
        value: u32,
    },
    /// No CAM record is armed.
    NothingArmed,
    /// An armed CAM record after a disarmed one: the armed records are not a prefix.
    ArmedAfterGap {
        /// Record number of the late armed record.
        record: usize,
    },
    /// The last armed CAM record is not the wildcard `{0, 0, 1, 0}`.
    WildcardNotLast {
        /// Record number of the last armed record.
        record: usize,
    },
    /// A disarmed CAM record with a non-zero word.
    DisarmedNotZero {
        /// Record number.
        record: usize,
    },
    /// A TABLE record with a non-zero byte past the used 0x18 bytes.
    TableUnusedByte {
        /// Record number.
        record: usize,
        /// Offset in the record.
        offset: usize,
    },
    /// A populated TABLE record after an empty one.
    PopulatedAfterGap {
        /// Record number.
        record: usize,
    },
    /// TABLE populated count differs from the CAM armed count.
    CountMismatch {
        /// Armed CAM records.
        cam_armed: usize,
        /// Populated TABLE records.
        table_populated: usize,
    },
}

impl fmt::Display for ProfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ProfError::WrongSize { expected, found } => {
                write!(f, "blob is {found} bytes, expected {expected}")
            }
            ProfError::BadEnable { record, value } => {
                write!(f, "CAM record {record}: enable {value:#x} is not 0 or 1")
            }
            ProfError::BadMask { record, value } => {
                write!(
                    f,
                    "CAM record {record}: mask {value:#x} is not 0, 0xff or 0x1ff"
                )
            }
            ProfError::ReservedNotZero { record, value } => {
                write!(f, "CAM record {record}: reserved word {value:#x} is not 0")
            }
            ProfError::NothingArmed => f.write_str("no CAM record is armed"),
            ProfError::ArmedAfterGap { record } => {
                write!(f, "CAM record {record} is armed after a disarmed record")
            }
            ProfError::WildcardNotLast { record } => {
                write!(
                    f,
                    "last armed CAM record {record} is not the wildcard {{0, 0, 1, 0}}"
                )
            }
            ProfError::DisarmedNotZero { record } => {
                write!(f, "disarmed CAM record {record} is not all zero")
            }
            ProfError::TableUnusedByte { record, offset } => write!(
                f,
                "TABLE record {record}: byte {offset:#x} is non-zero (only 0x00..0x18 are used)"
            ),
            ProfError::PopulatedAfterGap { record } => {
                write!(
                    f,
                    "TABLE record {record} is populated after an empty record"
                )
            }
            ProfError::CountMismatch {
                cam_armed,
                table_populated,
            } => write!(
                f,
                "TABLE has {table_populated} populated records, CAM arms {cam_armed}"
            ),
        }
    }
}

impl core::error::Error for ProfError {}

/// One PROF_CAM record, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CamRecord {
    /// Opcode the record matches.
    pub opcode_id: u32,
    /// Opcode bits compared: 0 wildcard, 0xff 8-bit, 0x1ff 9-bit.
    pub mask: u32,
    /// 1 armed, 0 disarmed.
    pub enable: u32,
    /// Always 0.
    pub reserved: u32,
}

impl CamRecord {
    /// The catch-all record that ends the armed prefix.
    pub const WILDCARD: CamRecord = CamRecord {
        opcode_id: 0,
        mask: 0,
        enable: 1,
        reserved: 0,
    };

    /// `true` when enable is 1.
    pub const fn is_armed(&self) -> bool {
        self.enable == 1
    }

    /// `true` for the wildcard `{0, 0, 1, 0}`.
    pub const fn is_wildcard(&self) -> bool {
        self.opcode_id == 0 && self.mask == 0 && self.enable == 1 && self.reserved == 0
    }

    const fn is_zero(&self) -> bool {
        self.opcode_id == 0 && self.mask == 0 && self.enable == 0 && self.reserved == 0
    }
}

/// A PROF_CAM blob, borrowed. `Debug` prints `<1024 bytes>`, not the bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CamView<'a> {
    bytes: &'a [u8; CAM_SIZE],
}

impl<'a> CamView<'a> {
    /// A view of `bytes`, which must be exactly [`CAM_SIZE`] long.
    pub const fn new(bytes: &'a [u8]) -> Result<Self, ProfError> {
        match bytes.first_chunk::<CAM_SIZE>() {
            Some(array) if bytes.len() == CAM_SIZE => Ok(Self { bytes: array }),
            _ => Err(ProfError::WrongSize {
                expected: CAM_SIZE,
                found: bytes.len(),
            }),
        }
    }

    /// The raw bytes.
    pub const fn bytes(&self) -> &'a [u8; CAM_SIZE] {
        self.bytes
    }

    /// Record `i`, `None` past [`RECORDS`].
    pub const fn record(&self, i: usize) -> Option<CamRecord> {
        if i >= RECORDS {
            return None;
        }
        let at = i * CAM_RECORD_SIZE;
        Some(CamRecord {
            opcode_id: le32(self.bytes, at),
            mask: le32(self.bytes, at + 4),
            enable: le32(self.bytes, at + 8),
            reserved: le32(self.bytes, at + 12),
        })
    }

    /// All 64 records.
    pub fn records(&self) -> impl Iterator<Item = CamRecord> + 'a {
        let view = *self;
        (0..RECORDS).filter_map(move |i| view.record(i))
    }

    /// Number of armed records.
    pub const fn armed_count(&self) -> usize {
        let mut armed = 0;
        let mut i = 0;
        while i < RECORDS {
            if matches!(self.record(i), Some(r) if r.is_armed()) {
                armed += 1;
            }
            i += 1;
        }
        armed
    }

    /// Checks every CAM invariant; returns the armed count.
    pub const fn validate(&self) -> Result<usize, ProfError> {
        let mut armed = 0;
        let mut gap = false;
        let mut i = 0;
        while i < RECORDS {
            let Some(r) = self.record(i) else { break };
            if r.enable > 1 {
                return Err(ProfError::BadEnable {
                    record: i,
                    value: r.enable,
                });
            }
            if r.reserved != 0 {
                return Err(ProfError::ReservedNotZero {
                    record: i,
                    value: r.reserved,
                });
            }
            if r.mask != VALID_MASKS[0] && r.mask != VALID_MASKS[1] && r.mask != VALID_MASKS[2] {
                return Err(ProfError::BadMask {
                    record: i,
                    value: r.mask,
                });
            }
            if r.is_armed() {
                if gap {
                    return Err(ProfError::ArmedAfterGap { record: i });
                }
                armed += 1;
            } else {
                gap = true;
                if !r.is_zero() {
                    return Err(ProfError::DisarmedNotZero { record: i });
                }
            }
            i += 1;
        }
        if armed == 0 {
            return Err(ProfError::NothingArmed);
        }
        match self.record(armed - 1) {
            Some(last) if last.is_wildcard() => Ok(armed),
            _ => Err(ProfError::WildcardNotLast { record: armed - 1 }),
        }
    }
}

/// One PROF_TABLE record, borrowed. `Debug` prints its decoded fields, not its 128 bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TableRecord<'a> {
    bytes: &'a [u8; TABLE_RECORD_SIZE],
}

impl<'a> TableRecord<'a> {
    /// The 128 raw bytes.
    pub const fn bytes(&self) -> &'a [u8; TABLE_RECORD_SIZE] {
        self.bytes
    }

    /// `cfg0` at 0x00.
    pub const fn cfg0(&self) -> u32 {
        le32(self.bytes, 0x00)
    }

    /// `cfg1` at 0x04.
    pub const fn cfg1(&self) -> u32 {
        le32(self.bytes, 0x04)
    }

    /// The 12 descriptor bytes at 0x08..0x14.
    pub const fn descriptor(&self) -> [u8; 12] {
        let b = self.bytes;
        [
            b[0x08], b[0x09], b[0x0a], b[0x0b], b[0x0c], b[0x0d], b[0x0e], b[0x0f], b[0x10],
            b[0x11], b[0x12], b[0x13],
        ]
    }

    /// `class` at 0x14.
    pub const fn class(&self) -> u32 {
        le32(self.bytes, 0x14)
    }

    /// `true` when any byte is non-zero.
    pub const fn is_populated(&self) -> bool {
        let mut i = 0;
        while i < TABLE_RECORD_SIZE {
            if self.bytes[i] != 0 {
                return true;
            }
            i += 1;
        }
        false
    }

    /// `true` for a control opcode's record: only the class word is set.
    pub const fn is_control(&self) -> bool {
        self.cfg0() == 0
            && self.cfg1() == 0
            && le32(self.bytes, 0x08) == 0
            && le32(self.bytes, 0x0c) == 0
            && le32(self.bytes, 0x10) == 0
            && self.class() != 0
    }
}

/// A PROF_TABLE blob, borrowed. `Debug` prints `<8192 bytes>`, not the bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TableView<'a> {
    bytes: &'a [u8; TABLE_SIZE],
}

impl<'a> TableView<'a> {
    /// A view of `bytes`, which must be exactly [`TABLE_SIZE`] long.
    pub const fn new(bytes: &'a [u8]) -> Result<Self, ProfError> {
        match bytes.first_chunk::<TABLE_SIZE>() {
            Some(array) if bytes.len() == TABLE_SIZE => Ok(Self { bytes: array }),
            _ => Err(ProfError::WrongSize {
                expected: TABLE_SIZE,
                found: bytes.len(),
            }),
        }
    }

    /// The raw bytes.
    pub const fn bytes(&self) -> &'a [u8; TABLE_SIZE] {
        self.bytes
    }

    /// Record `i`, `None` past [`RECORDS`].
    pub const fn record(&self, i: usize) -> Option<TableRecord<'a>> {
        if i >= RECORDS {
            return None;
        }
        let rest = self.bytes.split_at(i * TABLE_RECORD_SIZE).1;
        match rest.first_chunk::<TABLE_RECORD_SIZE>() {
            Some(bytes) => Some(TableRecord { bytes }),
            None => None,
        }
    }

    /// All 64 records.
    pub fn records(&self) -> impl Iterator<Item = TableRecord<'a>> + 'a {
        let view = *self;
        (0..RECORDS).filter_map(move |i| view.record(i))
    }

    /// Number of populated records.
    pub const fn populated_count(&self) -> usize {
        let mut n = 0;
        let mut i = 0;
        while i < RECORDS {
            if matches!(self.record(i), Some(r) if r.is_populated()) {
                n += 1;
            }
            i += 1;
        }
        n
    }

    /// Checks every TABLE invariant on its own; returns the populated count.
    pub const fn validate(&self) -> Result<usize, ProfError> {
        let mut populated = 0;
        let mut gap = false;
        let mut i = 0;
        while i < RECORDS {
            let Some(r) = self.record(i) else { break };
            let mut offset = TABLE_USED_BYTES;
            while offset < TABLE_RECORD_SIZE {
                if r.bytes[offset] != 0 {
                    return Err(ProfError::TableUnusedByte { record: i, offset });
                }
                offset += 1;
            }
            if r.is_populated() {
                if gap {
                    return Err(ProfError::PopulatedAfterGap { record: i });
                }
                populated += 1;
            } else {
                gap = true;
            }
            i += 1;
        }
        Ok(populated)
    }
}

impl fmt::Debug for CamView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CamView")
            .field("bytes", &ByteCount(self.bytes.len()))
            .finish()
    }
}

impl fmt::Debug for TableView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableView")
            .field("bytes", &ByteCount(self.bytes.len()))
            .finish()
    }
}

impl fmt::Debug for TableRecord<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableRecord")
            .field("cfg0", &self.cfg0())
            .field("cfg1", &self.cfg1())
            .field("class", &self.class())
            .field("bytes", &ByteCount(self.bytes.len()))
            .finish()
    }
}

/// Prints `<N bytes>` for a borrowed blob.
struct ByteCount(usize);

impl fmt::Debug for ByteCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<{} bytes>", self.0)
    }
}

/// What [`validate_pair`] found in a valid CAM/TABLE pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ProfSummary {
    /// Armed CAM records = populated TABLE records, the wildcard included.
    pub armed: usize,
    /// Records with a 9-bit (0x1ff) opcode mask.
    pub nine_bit_matches: usize,
    /// TABLE records carrying only the class word.
    pub control_records: usize,
}

/// Validates a CAM and its TABLE together.
pub const fn validate_pair(
    cam: &CamView<'_>,
    table: &TableView<'_>,
) -> Result<ProfSummary, ProfError> {
    let armed = match cam.validate() {
        Ok(n) => n,
        Err(e) => return Err(e),
    };
    let populated = match table.validate() {
        Ok(n) => n,
        Err(e) => return Err(e),
    };
    if armed != populated {
        return Err(ProfError::CountMismatch {
            cam_armed: armed,
            table_populated: populated,
        });
    }
    let mut nine_bit_matches = 0;
    let mut control_records = 0;
    let mut i = 0;
    while i < armed {
        if matches!(cam.record(i), Some(r) if r.mask == 0x1ff) {
            nine_bit_matches += 1;
        }
        if matches!(table.record(i), Some(r) if r.is_control()) {
            control_records += 1;
        }
        i += 1;
    }
    Ok(ProfSummary {
        armed,
        nine_bit_matches,
        control_records,
    })
}

#[cfg(target_pointer_width = "32")]
static_assertions::const_assert!(core::mem::size_of::<ProfError>() <= 16);
