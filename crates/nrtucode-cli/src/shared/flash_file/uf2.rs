//! UF2 (Microsoft's USB Flashing Format): 512-byte blocks, each a 32-byte header, up to 476
//! payload bytes and a final magic.

use super::{FlashFileError, Pieces};

/// A block's size.
const BLOCK: usize = 512;
/// The payload bytes written per block, at addresses aligned to it.
pub(super) const PAYLOAD: usize = 256;
/// The largest payload a block may declare.
const MAX_PAYLOAD: usize = 476;
/// The first magic word ("UF2\n").
pub(super) const MAGIC_START0: u32 = 0x0A32_4655;
/// The second magic word.
const MAGIC_START1: u32 = 0x9E5D_5157;
/// The last word of a block.
const MAGIC_END: u32 = 0x0AB1_6F30;
/// Flag: not for the main flash (a comment, a file for a file system): refused here.
const FLAG_NOT_MAIN_FLASH: u32 = 0x0000_0001;
/// Flag: the block is a file's (a file container): refused here.
const FLAG_FILE_CONTAINER: u32 = 0x0000_1000;
/// Flag: the word at 28 is a family ID.
const FLAG_FAMILY_ID: u32 = 0x0000_2000;
/// Flag: an MD5 checksum follows the payload (accepted, not checked).
const FLAG_MD5: u32 = 0x0000_4000;
/// Flag: extension tags follow the payload (accepted, not read).
const FLAG_EXTENSION_TAGS: u32 = 0x0000_8000;
/// The flags this reader knows.
const KNOWN_FLAGS: u32 =
    FLAG_NOT_MAIN_FLASH | FLAG_FILE_CONTAINER | FLAG_FAMILY_ID | FLAG_MD5 | FLAG_EXTENSION_TAGS;

fn word(block: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&block[at..at + 4]);
    u32::from_le_bytes(w)
}

/// `bytes` at `base` (256-aligned, checked by the caller) as UF2 blocks of 256 payload bytes,
/// the last one filled with `0xFF`, with `family` in every block when given.
pub(super) fn encode(base: u32, family: Option<u32>, bytes: &[u8]) -> Vec<u8> {
    let count = bytes.len().div_ceil(PAYLOAD);
    let mut out = Vec::with_capacity(count * BLOCK);
    for (n, chunk) in bytes.chunks(PAYLOAD).enumerate() {
        let mut payload = [0xffu8; PAYLOAD];
        payload[..chunk.len()].copy_from_slice(chunk);
        let fields = [
            MAGIC_START0,
            MAGIC_START1,
            if family.is_some() { FLAG_FAMILY_ID } else { 0 },
            base + (n * PAYLOAD) as u32,
            PAYLOAD as u32,
            n as u32,
            count as u32,
            family.unwrap_or(0),
        ];
        for f in fields {
            out.extend_from_slice(&f.to_le_bytes());
        }
        out.extend_from_slice(&payload);
        out.resize(out.len() + (BLOCK - 32 - PAYLOAD - 4), 0);
        out.extend_from_slice(&MAGIC_END.to_le_bytes());
    }
    out
}

/// Every block of `file` as (address, payload), and the family ID all of them carry (`None`:
/// none carries one). The file is whole blocks, each with both start magics and the end
/// magic, known flags only and no "not main flash" or "file container" one, a payload of
/// at most 476 bytes, block numbers 0, 1, 2... in file order, the same block count in every
/// block, and the same family (or none) in every block.
pub(super) fn blocks(file: &[u8]) -> Result<(Option<u32>, Pieces<'_>), FlashFileError> {
    if !file.len().is_multiple_of(BLOCK) {
        return Err(FlashFileError::Uf2 {
            block: file.len() / BLOCK,
            reason: format!(
                "the file is {} bytes, not a whole number of 512-byte blocks",
                file.len()
            ),
        });
    }
    let total = file.len() / BLOCK;
    let mut pieces = Vec::with_capacity(total);
    let mut family: Option<Option<u32>> = None;
    for (n, block) in file.chunks_exact(BLOCK).enumerate() {
        let bad = |reason: String| FlashFileError::Uf2 { block: n, reason };
        if word(block, 0) != MAGIC_START0 || word(block, 4) != MAGIC_START1 {
            return Err(bad("bad start magic".into()));
        }
        if word(block, BLOCK - 4) != MAGIC_END {
            return Err(bad("bad end magic".into()));
        }
        let flags = word(block, 8);
        if flags & !KNOWN_FLAGS != 0 {
            return Err(bad(format!("unknown flags {flags:#010x}")));
        }
        if flags & (FLAG_NOT_MAIN_FLASH | FLAG_FILE_CONTAINER) != 0 {
            return Err(bad(format!(
                "flags {flags:#010x}: not a block for the main flash"
            )));
        }
        let address = word(block, 12);
        let len = word(block, 16) as usize;
        if len > MAX_PAYLOAD {
            return Err(bad(format!("payload of {len} bytes (at most 476)")));
        }
        let number = word(block, 20);
        if number as usize != n {
            return Err(bad(format!("numbered {number}, expected {n}")));
        }
        let count = word(block, 24);
        if count as usize != total {
            return Err(bad(format!(
                "says the file has {count} blocks; it has {total}"
            )));
        }
        let this = (flags & FLAG_FAMILY_ID != 0).then(|| word(block, 28));
        match family {
            None => family = Some(this),
            Some(first) if first != this => {
                return Err(bad(format!(
                    "family {} where block 0 has {}",
                    show(this),
                    show(first)
                )));
            }
            Some(_) => {}
        }
        pieces.push((u64::from(address), &block[32..32 + len]));
    }
    Ok((family.flatten(), pieces))
}

fn show(family: Option<u32>) -> String {
    family.map_or_else(|| "none".to_owned(), |f| format!("{f:#010x}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(len: usize) -> Vec<u8> {
        encode(0x1000_0000, Some(0xe48b_ff56), &vec![0x5a; len])
    }

    fn set(file: &mut [u8], block: usize, at: usize, value: u32) {
        file[block * BLOCK + at..][..4].copy_from_slice(&value.to_le_bytes());
    }

    fn reason(file: &[u8]) -> String {
        match blocks(file) {
            Err(FlashFileError::Uf2 { block, reason }) => format!("{block}: {reason}"),
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn blocks_are_laid_out_as_the_uf2_specification_says() {
        let f = file(300);
        assert_eq!(f.len(), 2 * BLOCK);
        assert_eq!(&f[..4], b"UF2\n");
        assert_eq!(word(&f, 8), FLAG_FAMILY_ID);
        assert_eq!(word(&f, BLOCK + 12), 0x1000_0100);
        assert_eq!(word(&f, BLOCK + 16), 256);
        assert_eq!((word(&f, BLOCK + 20), word(&f, BLOCK + 24)), (1, 2));
        assert_eq!(word(&f, BLOCK + 28), 0xe48b_ff56);
        assert_eq!(f[BLOCK + 32 + 43], 0x5a);
        assert_eq!(f[BLOCK + 32 + 44], 0xff);
        let plain = encode(0, None, &[1; 10]);
        assert_eq!((word(&plain, 8), word(&plain, 28)), (0, 0));
        assert_eq!(blocks(&plain).unwrap().0, None);
    }

    #[test]
    fn every_malformed_block_is_refused_with_its_number() {
        let good = file(1000);
        let mut f = good.clone();
        f.pop();
        assert!(reason(&f).contains("not a whole number"));
        let cases: [(usize, usize, u32, &str); 8] = [
            (1, 0, 0, "1: bad start magic"),
            (2, BLOCK - 4, 0, "2: bad end magic"),
            (
                0,
                8,
                FLAG_FAMILY_ID | 1,
                "0: flags 0x00002001: not a block for the main flash",
            ),
            (0, 8, FLAG_FAMILY_ID | 0x10, "0: unknown flags"),
            (3, 16, 477, "3: payload of 477 bytes"),
            (2, 20, 3, "2: numbered 3, expected 2"),
            (1, 24, 5, "1: says the file has 5 blocks; it has 4"),
            (
                3,
                28,
                0xada5_2840,
                "3: family 0xada52840 where block 0 has 0xe48bff56",
            ),
        ];
        for (block, at, value, expected) in cases {
            let mut f = good.clone();
            set(&mut f, block, at, value);
            assert!(
                reason(&f).starts_with(expected),
                "{expected}: {}",
                reason(&f)
            );
        }
    }
}
