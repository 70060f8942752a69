//! The flashable forms of a partition: `nrtucode pack --format bin|ihex|elf|uf2` writes one,
//! `nrtucode inspect` reads any of them back to the partition's bytes and their address.
//!
//! * `bin`: the partition's bytes as they are (no address: the flashing tool is told it);
//! * `ihex`: Intel HEX, 16 data bytes a record, an extended linear address record (type 04)
//!   before each 64 KiB, the end-of-file record last; no start address (there is no code);
//! * `elf`: a 32-bit little-endian ELF of type `EXEC`, machine the target's ([`Machine`]:
//!   `EM_ARM` for a Cortex-M, the default, or `EM_RISCV`), so that binutils' `objcopy` and
//!   GDB's `load` (one BFD) recognise it, no entry point, one
//!   read-only `PT_LOAD` segment at the address (virtual = physical) and one allocated,
//!   non-executable `PROGBITS` section `.nrtucode_partition` over it (plus `.shstrtab`), written
//!   with the `object` crate's ELF writer;
//! * `uf2`: 512-byte UF2 blocks of 256 payload bytes each at 256-byte aligned addresses (what
//!   the RP2040/RP2350 boot ROMs and the UF2 bootloaders expect), the family ID flag set in
//!   every block (`pack` refuses UF2 without a family: a boot ROM that filters on it, as
//!   RP2040's does, ignores blocks without one); the last block's payload is filled up to 256 bytes with `0xFF`, erased
//!   flash, which a partition reader ignores (it reads `total_len` bytes).
//!
//! An address is a 32-bit one: the partition must lie below 4 GiB, and start on a multiple of
//! 16 (the blobs' alignment, `BLOB_ALIGN`) or, for UF2, of 256. Reading back is strict: every
//! Intel HEX checksum, every UF2 magic, flag, family and block number, the ELF through
//! `object`'s reader; data that leaves a gap, overlaps, or lies beyond 4 GiB is refused with a
//! [`FlashFileError`], and the reconstructed size is bounded ([`MAX_PARTITION_BYTES`]) before
//! anything is allocated.

mod elf;
mod ihex;
mod uf2;
pub(crate) mod uf2_families;

use std::fmt;

/// Data at addresses: (address, bytes), as a form's reader finds them.
type Pieces<'a> = Vec<(u64, &'a [u8])>;

/// The largest partition a flashable file may hold: 1 GiB, as the largest partition file read.
pub(crate) const MAX_PARTITION_BYTES: u64 = 1 << 30;

/// The address space of every form: 32 bits.
const ADDRESS_SPACE: u64 = 1 << 32;

/// A partition's start must be a multiple of this (the blobs' alignment).
pub(crate) const BASE_ALIGN: u32 = nrtucode::partition::format::BLOB_ALIGN as u32;

/// The form of a flashable file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
// Plain comments on the variants: doc comments would turn `pack --help` into the long form.
pub(crate) enum Format {
    // The raw bytes (the flashing tool is told the address).
    Bin,
    // Intel HEX.
    Ihex,
    // An ELF with one PT_LOAD segment at the address.
    Elf,
    // UF2 blocks (a boot ROM's or bootloader's USB drive).
    Uf2,
}

impl Format {
    /// The name as `--format` takes it.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Format::Bin => "bin",
            Format::Ihex => "ihex",
            Format::Elf => "elf",
            Format::Uf2 => "uf2",
        }
    }

    /// The alignment the form needs of the start address.
    const fn base_align(self) -> u32 {
        match self {
            Format::Uf2 => uf2::PAYLOAD as u32,
            _ => BASE_ALIGN,
        }
    }
}

/// The ELF form's machine: the target's architecture, which binutils and GDB read to choose
/// their back end (an `EM_NONE` file is "an unrecognised format" to them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Machine {
    // EM_ARM: a Cortex-M (thumbv6m/v7m/v7em/v8m), the bare-metal template's.
    #[default]
    Arm,
    // EM_RISCV: a riscv32 target (the riscv-virt example's).
    Riscv,
}

impl Machine {
    /// The ELF header's `e_machine`.
    pub(crate) const fn e_machine(self) -> object::elf::Machine {
        match self {
            Machine::Arm => object::elf::EM_ARM,
            Machine::Riscv => object::elf::EM_RISCV,
        }
    }

    /// The ELF header's `e_flags`: the ARM EABI version 5 (what `arm-none-eabi-gcc` writes),
    /// none for RISC-V (no code: no float ABI or compressed-instruction flag to state).
    pub(crate) const fn e_flags(self) -> object::elf::FileFlags {
        match self {
            Machine::Arm => object::elf::EF_ARM_EABI_VER5,
            Machine::Riscv => object::elf::FileFlags(0),
        }
    }
}

/// Where and how a partition is flashed: its start address, and for UF2 the family ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Placement {
    /// The address of the partition's first byte.
    pub base_address: u32,
    /// UF2 only: the family ID written in every block (`None`: the flag is not set).
    pub uf2_family: Option<u32>,
}

/// Why a partition cannot be written in a form, or a flashable file cannot be read back.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FlashFileError {
    /// The start address is not a multiple of the form's alignment.
    Misaligned {
        /// The start address.
        base: u64,
        /// The alignment needed.
        align: u32,
    },
    /// The bytes would reach past the 32-bit address space.
    BeyondAddressSpace {
        /// The start address.
        base: u64,
        /// The number of bytes.
        len: u64,
    },
    /// The file holds no data.
    Empty {
        /// The form read.
        format: Format,
    },
    /// The data would be larger than a partition may be, or than the file that holds it.
    TooLarge {
        /// The size the file's data spans (at least).
        len: u64,
        /// The bound: [`MAX_PARTITION_BYTES`], or the file's length when smaller.
        max: u64,
    },
    /// Two pieces of data cover the same address.
    Overlap {
        /// The first address covered twice.
        address: u64,
    },
    /// No data between two pieces: a partition is one contiguous run of bytes.
    Gap {
        /// The first address with no data.
        from: u64,
        /// The address where the data resumes.
        to: u64,
    },
    /// An Intel HEX line is malformed.
    Ihex {
        /// The line number (from 1).
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A UF2 block is malformed.
    Uf2 {
        /// The block's index in the file (from 0).
        block: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// The ELF is malformed, or not the kind of ELF a partition is flashed from.
    Elf {
        /// What is wrong with it.
        reason: String,
    },
}

impl fmt::Display for FlashFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlashFileError::Misaligned { base, align } => write!(
                f,
                "the start address {base:#x} is not a multiple of {align}"
            ),
            FlashFileError::BeyondAddressSpace { base, len } => write!(
                f,
                "{len} bytes at {base:#x} reach past the 32-bit address space"
            ),
            FlashFileError::Empty { format } => {
                write!(f, "the {} file holds no data", format.name())
            }
            FlashFileError::TooLarge { len, max } => write!(
                f,
                "the data spans {len} bytes, more than the file's {max} (a partition is at most {MAX_PARTITION_BYTES}, and every byte flashed is in the file)"
            ),
            FlashFileError::Overlap { address } => {
                write!(f, "two records cover address {address:#x}")
            }
            FlashFileError::Gap { from, to } => write!(
                f,
                "no data from {from:#x} to {to:#x}: a partition is one contiguous run of bytes"
            ),
            FlashFileError::Ihex { line, reason } => write!(f, "Intel HEX line {line}: {reason}"),
            FlashFileError::Uf2 { block, reason } => write!(f, "UF2 block {block}: {reason}"),
            FlashFileError::Elf { reason } => write!(f, "ELF: {reason}"),
        }
    }
}

impl std::error::Error for FlashFileError {}

/// Checks that `len` bytes fit at `base` in `format`: aligned, below 4 GiB.
pub(crate) fn check_placement(format: Format, base: u64, len: u64) -> Result<(), FlashFileError> {
    let align = format.base_align();
    if !base.is_multiple_of(u64::from(align)) {
        return Err(FlashFileError::Misaligned { base, align });
    }
    if base.checked_add(len).is_none_or(|end| end > ADDRESS_SPACE) {
        return Err(FlashFileError::BeyondAddressSpace { base, len });
    }
    Ok(())
}

/// The partition `bytes` in `format`, placed as `placement` says (`None`: only for `bin`), an
/// ELF for `machine`.
pub(crate) fn encode(
    format: Format,
    bytes: &[u8],
    placement: Option<Placement>,
    machine: Machine,
) -> Result<Vec<u8>, FlashFileError> {
    let Some(placement) = placement else {
        return Ok(bytes.to_vec());
    };
    check_placement(
        format,
        u64::from(placement.base_address),
        bytes.len() as u64,
    )?;
    Ok(match format {
        Format::Bin => bytes.to_vec(),
        Format::Ihex => ihex::encode(placement.base_address, bytes),
        Format::Elf => elf::encode(placement.base_address, bytes, machine)?,
        Format::Uf2 => uf2::encode(placement.base_address, placement.uf2_family, bytes),
    })
}

/// A flashable file read back: its form, the partition's bytes and where they go.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Decoded {
    /// The form read.
    pub format: Format,
    /// The address of the first byte (`None` for `bin`).
    pub placement: Option<Placement>,
    /// The bytes, from the lowest address, contiguous.
    pub bytes: Vec<u8>,
}

/// The form of a file from its first bytes: ELF, UF2, Intel HEX (a `:` first), else `bin`.
pub(crate) fn detect(head: &[u8]) -> Format {
    if head.starts_with(b"\x7fELF") {
        Format::Elf
    } else if head.starts_with(&uf2::MAGIC_START0.to_le_bytes()) {
        Format::Uf2
    } else if head.first() == Some(&b':') {
        Format::Ihex
    } else {
        Format::Bin
    }
}

/// Reads the flashable `file` back (its form detected from its first bytes). Every byte a
/// form flashes is in the file, so the partition is never larger than the file: the bound
/// [`assemble`] is given is the smaller of the file's length and [`MAX_PARTITION_BYTES`]
/// (an ELF's segments may all name the same bytes of the file: their sum is refused, not
/// allocated).
pub(crate) fn decode(file: &[u8]) -> Result<Decoded, FlashFileError> {
    let format = detect(file);
    let max = MAX_PARTITION_BYTES.min(file.len() as u64);
    let (placement, bytes) = match format {
        Format::Bin => (None, file.to_vec()),
        Format::Ihex => {
            let (data, spans) = ihex::records(file)?;
            let pieces = spans
                .iter()
                .map(|&(address, start, len)| (address, &data[start..start + len]))
                .collect();
            let (base, bytes) = assemble(format, pieces, max)?;
            (Some(plain(base)), bytes)
        }
        Format::Elf => {
            let (base, bytes) = assemble(format, elf::segments(file)?, max)?;
            (Some(plain(base)), bytes)
        }
        Format::Uf2 => {
            let (family, pieces) = uf2::blocks(file)?;
            let (base, bytes) = assemble(format, pieces, max)?;
            (
                Some(Placement {
                    base_address: base,
                    uf2_family: family,
                }),
                bytes,
            )
        }
    };
    Ok(Decoded {
        format,
        placement,
        bytes,
    })
}

const fn plain(base_address: u32) -> Placement {
    Placement {
        base_address,
        uf2_family: None,
    }
}

/// Puts `pieces` (address, bytes) together: sorted by address, no overlap, no gap, below
/// 4 GiB, at most `max` bytes (checked before anything is allocated); the start address and
/// the bytes.
fn assemble(
    format: Format,
    mut pieces: Pieces<'_>,
    max: u64,
) -> Result<(u32, Vec<u8>), FlashFileError> {
    pieces.retain(|(_, data)| !data.is_empty());
    pieces.sort_by_key(|&(address, _)| address);
    let Some(&(base, _)) = pieces.first() else {
        return Err(FlashFileError::Empty { format });
    };
    let mut next = base;
    for &(address, data) in &pieces {
        if address < next {
            return Err(FlashFileError::Overlap { address });
        }
        if address > next {
            return Err(FlashFileError::Gap {
                from: next,
                to: address,
            });
        }
        next = address + data.len() as u64;
        if next > ADDRESS_SPACE {
            return Err(FlashFileError::BeyondAddressSpace {
                base: address,
                len: data.len() as u64,
            });
        }
        if next - base > max {
            return Err(FlashFileError::TooLarge {
                len: next - base,
                max,
            });
        }
    }
    // Bounded above: contiguous, at most `max`.
    let mut bytes = Vec::with_capacity((next - base) as usize);
    for (_, data) in pieces {
        bytes.extend_from_slice(data);
    }
    let base = u32::try_from(base).map_err(|_| FlashFileError::BeyondAddressSpace {
        base,
        len: bytes.len() as u64,
    })?;
    Ok((base, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
    }

    #[test]
    fn every_form_reads_back_to_the_same_bytes_and_address() {
        for len in [1, 15, 16, 255, 256, 257, 476, 70_000, 140_001] {
            let bytes = sample(len);
            for format in [Format::Ihex, Format::Elf, Format::Uf2] {
                for base in [0u32, 0x1000_0000, 0x9000_ff00, 0x2100_0000] {
                    let placement = Placement {
                        base_address: base,
                        uf2_family: (format == Format::Uf2).then_some(0xe48b_ff56),
                    };
                    let file = encode(format, &bytes, Some(placement), Machine::Arm).unwrap();
                    let back = decode(&file).unwrap();
                    assert_eq!(back.format, format, "{format:?} {len}");
                    assert_eq!(back.placement, Some(placement), "{format:?} {len}");
                    let (data, pad) = back.bytes.split_at(len);
                    assert_eq!(data, &bytes[..], "{format:?} {len} {base:#x}");
                    if format == Format::Uf2 {
                        assert!(pad.len() < 256 && pad.iter().all(|&b| b == 0xff));
                        assert_eq!(back.bytes.len() % 256, 0);
                    } else {
                        assert!(pad.is_empty());
                    }
                }
            }
        }
    }

    #[test]
    fn bin_is_the_bytes_and_detected_last() {
        let bytes = b"NRTUPART and the rest".to_vec();
        assert_eq!(
            encode(Format::Bin, &bytes, None, Machine::Arm).unwrap(),
            bytes
        );
        let back = decode(&bytes).unwrap();
        assert_eq!((back.format, back.placement), (Format::Bin, None));
        assert_eq!(back.bytes, bytes);
    }

    #[test]
    fn placements_are_checked() {
        let bytes = sample(64);
        let at = |base_address| {
            Some(Placement {
                base_address,
                uf2_family: None,
            })
        };
        assert_eq!(
            encode(Format::Elf, &bytes, at(0x1008), Machine::Arm),
            Err(FlashFileError::Misaligned {
                base: 0x1008,
                align: 16
            })
        );
        assert_eq!(
            encode(Format::Uf2, &bytes, at(0x1010), Machine::Arm),
            Err(FlashFileError::Misaligned {
                base: 0x1010,
                align: 256
            })
        );
        assert_eq!(
            encode(Format::Ihex, &bytes, at(0xffff_fff0), Machine::Arm),
            Err(FlashFileError::BeyondAddressSpace {
                base: 0xffff_fff0,
                len: 64
            })
        );
        assert!(encode(Format::Ihex, &bytes, at(0xffff_ffc0), Machine::Arm).is_ok());
    }

    /// xorshift64: a fixed sequence, so that a failure repeats.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn damaged_files_are_read_or_refused_never_a_panic() {
        let bytes = sample(3000);
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for format in [Format::Ihex, Format::Elf, Format::Uf2] {
            let placement = Placement {
                base_address: 0x2100_0000,
                uf2_family: None,
            };
            let good = encode(format, &bytes, Some(placement), Machine::Arm).unwrap();
            let (mut read, mut refused) = (0, 0);
            for _ in 0..3000 {
                let mut file = good.clone();
                for _ in 0..1 + next(&mut state) % 4 {
                    let at = (next(&mut state) % file.len() as u64) as usize;
                    match next(&mut state) % 4 {
                        0 => file[at] ^= 1 << (next(&mut state) % 8),
                        1 => file[at] = next(&mut state) as u8,
                        2 => file.truncate(at.max(1)),
                        _ => {
                            let extra = (next(&mut state) % 64) as u8;
                            file.insert(at, extra);
                        }
                    }
                }
                match decode(&file) {
                    Ok(d) => {
                        assert!(d.bytes.len() as u64 <= MAX_PARTITION_BYTES);
                        read += 1;
                    }
                    Err(e) => {
                        assert!(!e.to_string().is_empty());
                        refused += 1;
                    }
                }
            }
            // Most damage is caught by the form itself (HEX checksums, UF2 magics and
            // numbers); some (an ELF's padding, a UF2 payload byte) reaches the partition's
            // own checks.
            assert!(
                refused > 0 && read + refused == 3000,
                "{format:?}: {read} read"
            );
        }
    }

    #[test]
    fn pieces_with_gaps_or_overlaps_are_refused() {
        let a = [1u8; 16];
        let b = [2u8; 16];
        assert_eq!(
            assemble(
                Format::Ihex,
                vec![(0x100, &a[..]), (0x120, &b[..])],
                MAX_PARTITION_BYTES
            ),
            Err(FlashFileError::Gap {
                from: 0x110,
                to: 0x120
            })
        );
        assert_eq!(
            assemble(
                Format::Ihex,
                vec![(0x100, &a[..]), (0x108, &b[..])],
                MAX_PARTITION_BYTES
            ),
            Err(FlashFileError::Overlap { address: 0x108 })
        );
        assert_eq!(
            assemble(Format::Ihex, vec![], MAX_PARTITION_BYTES),
            Err(FlashFileError::Empty {
                format: Format::Ihex
            })
        );
        // Out of order in the file is fine: sorted by address.
        let (base, bytes) = assemble(
            Format::Ihex,
            vec![(0x110, &b[..]), (0x100, &a[..])],
            MAX_PARTITION_BYTES,
        )
        .unwrap();
        assert_eq!(base, 0x100);
        assert_eq!(&bytes[..16], &a);
        assert_eq!(&bytes[16..], &b);
    }
}
