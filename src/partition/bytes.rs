//! Bounds-checked little-endian reads of a partition's bytes: every read of the parser, the
//! tables and the handles goes through these (`None` out of bounds, never a panic).

/// The little-endian `u16` at `at`, if in bounds.
pub(super) const fn le16(bytes: &[u8], at: usize) -> Option<u16> {
    match bytes.split_at_checked(at) {
        Some((_, rest)) => match rest.first_chunk::<2>() {
            Some(b) => Some(u16::from_le_bytes(*b)),
            None => None,
        },
        None => None,
    }
}

/// The little-endian `u32` at `at`, if in bounds.
pub(super) const fn le32(bytes: &[u8], at: usize) -> Option<u32> {
    match bytes.split_at_checked(at) {
        Some((_, rest)) => match rest.first_chunk::<4>() {
            Some(b) => Some(u32::from_le_bytes(*b)),
            None => None,
        },
        None => None,
    }
}

/// The byte at `at`, if in bounds.
pub(super) const fn byte(bytes: &[u8], at: usize) -> Option<u8> {
    match bytes.split_at_checked(at) {
        Some((_, [b, ..])) => Some(*b),
        _ => None,
    }
}

/// `N` bytes at `at`, if in bounds.
pub(super) fn array<const N: usize>(bytes: &[u8], at: usize) -> Option<[u8; N]> {
    bytes
        .split_at_checked(at)
        .and_then(|(_, rest)| rest.first_chunk::<N>())
        .copied()
}

/// `len` bytes at `at`, if in bounds.
pub(super) fn range(bytes: &[u8], at: usize, len: usize) -> Option<&[u8]> {
    bytes.get(at..at.checked_add(len)?)
}
