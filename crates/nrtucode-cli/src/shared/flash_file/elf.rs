//! The ELF form: written with `object`'s ELF writer, read with its ELF reader.

use object::Endianness;
use object::elf;
use object::read::elf::{ElfFile32, FileHeader as _, ProgramHeader as _};
use object::write::elf::{FileHeader, ProgramHeader, SectionHeader, Writer};

use super::{FlashFileError, Machine, Pieces};

/// The section over the partition.
pub(crate) const SECTION: &[u8] = b".nrtucode_partition";
/// The segment's and the section's alignment (the blobs' alignment).
const ALIGN: u64 = super::BASE_ALIGN as u64;

fn writer_error(e: object::write::Error) -> FlashFileError {
    FlashFileError::Elf {
        reason: e.to_string(),
    }
}

/// `bytes` at `base` (16-aligned and below 4 GiB, checked by the caller) as an ELF32
/// little-endian `EXEC` file for `machine` with no entry point: one read-only `PT_LOAD` segment (virtual and
/// physical address `base`), the section `.nrtucode_partition` over it, and `.shstrtab`.
pub(super) fn encode(base: u32, bytes: &[u8], machine: Machine) -> Result<Vec<u8>, FlashFileError> {
    let mut out = Vec::new();
    let mut w = Writer::new(Endianness::Little, false, &mut out);
    w.reserve_file_header();
    w.reserve_program_headers(1);
    let len = bytes.len() as u64;
    let offset = w.reserve(len, ALIGN);
    let name = w.add_section_name(SECTION);
    w.reserve_section_index();
    w.reserve_shstrtab_section_index();
    w.reserve_shstrtab().map_err(writer_error)?;
    w.reserve_section_headers();

    w.write_file_header(&FileHeader {
        os_abi: elf::ELFOSABI_NONE,
        abi_version: 0,
        e_type: elf::ET_EXEC,
        e_machine: machine.e_machine(),
        e_entry: 0,
        e_flags: machine.e_flags(),
    })
    .map_err(writer_error)?;
    w.write_align_program_headers();
    let address = u64::from(base);
    w.write_program_header(&ProgramHeader {
        p_type: elf::PT_LOAD,
        p_flags: elf::PF_R,
        p_offset: offset,
        p_vaddr: address,
        p_paddr: address,
        p_filesz: len,
        p_memsz: len,
        p_align: ALIGN,
    });
    w.write_align(ALIGN);
    w.write(bytes);
    w.write_shstrtab();
    w.write_null_section_header();
    let sh_name = w.section_name_offset(Some(name));
    w.write_section_header(&SectionHeader {
        sh_name,
        sh_type: elf::SHT_PROGBITS,
        sh_flags: elf::SHF_ALLOC,
        sh_addr: address,
        sh_offset: offset,
        sh_size: len,
        sh_link: 0,
        sh_info: 0,
        sh_addralign: ALIGN,
        sh_entsize: 0,
    });
    w.write_shstrtab_section_header();
    Ok(out)
}

/// Every `PT_LOAD` segment of `file` with bytes, as (physical address, bytes): a 32-bit ELF
/// (the address space of every form), each segment's memory size its file size (no zero
/// fill: every byte flashed is in the file).
pub(super) fn segments(file: &[u8]) -> Result<Pieces<'_>, FlashFileError> {
    let bad = |reason: String| FlashFileError::Elf { reason };
    if file.get(4) != Some(&1) {
        return Err(bad(
            "not a 32-bit ELF (ELFCLASS32): a partition is flashed below 4 GiB".into(),
        ));
    }
    let parsed = ElfFile32::<Endianness>::parse(file).map_err(|e| bad(e.to_string()))?;
    let endian = parsed.endian();
    let headers = parsed
        .elf_header()
        .program_headers(endian, file)
        .map_err(|e| bad(e.to_string()))?;
    let mut pieces = Vec::new();
    for (n, ph) in headers.iter().enumerate() {
        if ph.p_type(endian) != elf::PT_LOAD || ph.p_filesz(endian) == 0 {
            continue;
        }
        if ph.p_memsz(endian) != ph.p_filesz(endian) {
            return Err(bad(format!(
                "program header {n}: memory size {} is not its file size {}",
                ph.p_memsz(endian),
                ph.p_filesz(endian)
            )));
        }
        let data = ph.data(endian, file).map_err(|()| {
            bad(format!(
                "program header {n}: its bytes are outside the file"
            ))
        })?;
        pieces.push((u64::from(ph.p_paddr(endian)), data));
    }
    Ok(pieces)
}

#[cfg(test)]
mod tests {
    use object::{Object as _, ObjectSection as _, SectionFlags, SegmentFlags};

    use super::*;

    #[test]
    fn the_elf_has_one_read_only_load_segment_and_a_named_section() {
        let bytes: Vec<u8> = (0..100u8).collect();
        let file = encode(0x9000_0000, &bytes, Machine::Arm).unwrap();
        let parsed = object::File::parse(&*file).unwrap();
        assert_eq!(parsed.entry(), 0);
        assert_eq!(parsed.architecture(), object::Architecture::Arm);
        let riscv = encode(0x9000_0000, &bytes, Machine::Riscv).unwrap();
        let riscv = object::File::parse(&*riscv).unwrap();
        assert_eq!(riscv.architecture(), object::Architecture::Riscv32);
        let loads: Vec<_> = parsed.segments().collect();
        assert_eq!(loads.len(), 1);
        let segment = object::ObjectSegment::data(&loads[0]).unwrap();
        assert_eq!(segment, &bytes[..]);
        assert_eq!(object::ObjectSegment::address(&loads[0]), 0x9000_0000);
        assert_eq!(
            object::ObjectSegment::flags(&loads[0]),
            SegmentFlags::Elf {
                p_type: elf::PT_LOAD,
                p_flags: elf::PF_R
            }
        );
        let section = parsed.section_by_name(".nrtucode_partition").unwrap();
        assert_eq!((section.address(), section.size()), (0x9000_0000, 100));
        assert_eq!(
            section.flags(),
            SectionFlags::Elf {
                sh_type: elf::SHT_PROGBITS,
                sh_flags: elf::SHF_ALLOC
            }
        );
        assert_eq!(segments(&file).unwrap(), vec![(0x9000_0000, &bytes[..])]);
    }

    #[test]
    fn a_zero_fill_or_a_truncated_segment_is_refused() {
        let file = encode(0x1000, &[7; 64], Machine::Arm).unwrap();
        let parsed = ElfFile32::<Endianness>::parse(&*file).unwrap();
        let phoff = parsed.elf_header().e_phoff(Endianness::Little) as usize;
        // p_memsz is at 20 in an Elf32_Phdr, p_filesz at 16.
        let mut zero_fill = file.clone();
        zero_fill[phoff + 20..phoff + 24].copy_from_slice(&128u32.to_le_bytes());
        assert!(matches!(
            segments(&zero_fill),
            Err(FlashFileError::Elf { reason }) if reason.contains("memory size 128")
        ));
        let mut past_end = file.clone();
        past_end[phoff + 16..phoff + 24].copy_from_slice(&[0, 0, 0, 0x10, 0, 0, 0, 0x10]);
        assert!(matches!(
            segments(&past_end),
            Err(FlashFileError::Elf { reason }) if reason.contains("outside the file")
        ));
        let mut class64 = file;
        class64[4] = 2;
        assert!(segments(&class64).is_err());
    }
}
