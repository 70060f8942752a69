//! Bytes in the log as the `nrtucode` tool prints them: lower-case hex, no separators
//! (`5065d9189b5b8976`). defmt's own `{=[u8]:02x}` prints a list (`[50, 65, …]`), and the
//! derived `Format` of a byte array prints decimal.
//!
//! The text is written into a caller's buffer and logged as `{=str}`, a primitive: no
//! `defmt::Format` implementation, so no new instantiation of defmt's generic formatting
//! functions, whose order in flash would follow cargo's path-dependent crate hashes (the
//! template's README, "Reproducible images"). Nothing here is generic.

/// The longest byte string written in full: a SHA-256 digest, and the partition format's
/// longest build ID (`nrtucode::partition::format::BUILD_ID_MAX`, 32 bytes).
pub const MAX_BYTES: usize = 32;

/// The length of the text [`hex`] writes at most: two characters per byte.
pub const HEX_LEN: usize = 2 * MAX_BYTES;

/// A buffer for [`hex`]: a fixed-capacity string, so the text needs no UTF-8 validation
/// (`core::str::from_utf8` would cost about 800 B of flash in the build without LTO).
pub type HexBuf = heapless::String<HEX_LEN>;

/// `bytes` in lower-case hex, written into `buf`; bytes past [`MAX_BYTES`] are left out and the
/// text ends in `..` in their place, so a cut is visible and nothing is written out of bounds.
pub fn hex<'b>(bytes: &[u8], buf: &'b mut HexBuf) -> &'b str {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    buf.clear();
    let cut = bytes.len() > MAX_BYTES;
    // Room for the `..` marker when the bytes do not fit.
    let shown = if cut { MAX_BYTES - 1 } else { bytes.len() };
    for &byte in bytes.iter().take(shown) {
        for digit in [byte >> 4, byte & 0x0f] {
            // At most 2 * MAX_BYTES characters are pushed: the capacity, never exceeded.
            let _ = buf.push(char::from(DIGITS[usize::from(digit)]));
        }
    }
    if cut {
        let _ = buf.push_str("..");
    }
    buf.as_str()
}
