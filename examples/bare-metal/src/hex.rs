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

/// The length of a buffer for [`hex`]: two characters per byte.
pub const HEX_LEN: usize = 2 * MAX_BYTES;

/// A buffer for [`hex`].
pub type HexBuf = [u8; HEX_LEN];

/// `bytes` in lower-case hex, written into `buf`; bytes past [`MAX_BYTES`] are left out and the
/// text ends in `..` in their place, so a cut is visible and nothing is written out of bounds.
pub fn hex<'b>(bytes: &[u8], buf: &'b mut HexBuf) -> &'b str {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let cut = bytes.len() > MAX_BYTES;
    // Room for the `..` marker when the bytes do not fit.
    let shown = if cut { MAX_BYTES - 1 } else { bytes.len() };
    let mut len = 0;
    for (&byte, pair) in bytes.iter().take(shown).zip(buf.chunks_exact_mut(2)) {
        pair[0] = DIGITS[usize::from(byte >> 4)];
        pair[1] = DIGITS[usize::from(byte & 0x0f)];
        len += 2;
    }
    if let (true, Some(marker)) = (cut, buf.get_mut(len..len + 2)) {
        marker.copy_from_slice(b"..");
        len += 2;
    }
    // Only ASCII was written: the conversion cannot fail; an empty text would be the answer if
    // it did, never a panic.
    buf.get(..len)
        .and_then(|text| core::str::from_utf8(text).ok())
        .unwrap_or("")
}
