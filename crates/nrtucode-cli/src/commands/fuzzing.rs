//! The readers of the files the tool is handed, for the fuzz targets in `fuzz/` (not an API:
//! hidden from the documentation, free to change): the flashable forms read back
//! (`inspect FILE`), the layout file (`--layout`) and the memory map (`--memory-map`), each on
//! any bytes, as the one reader (`input`) hands them over.

use crate::shared::flash_file::{self, Format, Machine, Placement};
use crate::shared::{flash_image, memory_map};

/// Reads a flashable file back (Intel HEX, ELF, UF2, or the bytes as they are): the
/// partition's start address and its bytes, or why not. The bytes are never more than the
/// file's length or 1 GiB.
pub fn flash_file(file: &[u8]) -> Result<(Option<u32>, Vec<u8>), String> {
    let decoded = flash_file::decode(file).map_err(|e| e.to_string())?;
    assert!(
        decoded.bytes.len() <= file.len(),
        "more bytes than the file"
    );
    Ok((decoded.placement.map(|p| p.base_address), decoded.bytes))
}

/// Writes `bytes` at `base` in every flashable form (ELF for ARM, UF2 for the RP2040): seeds
/// for the `flash_file` target, and the round trip it checks.
pub fn flash_forms(base: u32, bytes: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let placement = |uf2_family| Placement {
        base_address: base,
        uf2_family,
    };
    [
        (Format::Ihex, "hex", None),
        (Format::Elf, "elf", None),
        (Format::Uf2, "uf2", Some(0xe48b_ff56)),
    ]
    .into_iter()
    .filter_map(|(format, name, family)| {
        let file = flash_file::encode(format, bytes, Some(placement(family)), Machine::Arm);
        Some((name, file.ok()?))
    })
    .collect()
}

/// Parses and checks a layout file's text (without the core's check over an image): the
/// image's offset and length, or why not.
pub fn layout(text: &str) -> Result<(u64, u64), String> {
    let map = flash_image::parse_layout(text).and_then(flash_image::FlashMap::shape)?;
    Ok((map.image_offset(), map.image_len()))
}

/// Parses a memory map's text: the partition region's start and end, or why not.
pub fn memory_map(text: &str) -> Result<(u64, u64), String> {
    let region = memory_map::parse(text).map_err(|e| e.to_string())?;
    Ok((region.start, region.end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_read_back_and_the_parsers_answer() {
        let bytes: Vec<u8> = (0..300u32).map(|i| (i * 7 % 251) as u8).collect();
        let forms = flash_forms(0x2100_0000, &bytes);
        assert_eq!(forms.len(), 3);
        for (form, file) in forms {
            let (base, back) = flash_file(&file).unwrap();
            assert_eq!(base, Some(0x2100_0000), "{form}");
            assert_eq!(&back[..300], &bytes[..], "{form}");
        }
        let map = include_str!("../../../../examples/bare-metal/memory/board.x");
        let (start, end) = memory_map(map).unwrap();
        assert!(end > start);
        assert_eq!(
            layout(
                "slot_a = 0\nslot_b = 64K\nslot_len = 64K\nstate = 128K\nerase_size = 4K\nwrite_size = 4\n"
            ),
            Ok((0, 0x2_2000))
        );
        assert!(layout("slot_a = 0\n").is_err());
    }
}
