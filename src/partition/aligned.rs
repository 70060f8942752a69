//! [`AlignedBytes`]: owned bytes whose first one lies at a multiple of
//! [`BLOB_ALIGN`](crate::catalog::BLOB_ALIGN), allocated fallibly (features `partition` and
//! `std`). No `unsafe`: a vector a little longer than the bytes, and where in it they start.

extern crate std;

use std::vec::Vec;

use crate::catalog::BLOB_ALIGN;

/// Bytes starting at a 16-byte aligned address, never moved or changed once made (the vector's
/// heap block stays where it is when the value moves).
pub(crate) struct AlignedBytes {
    storage: Vec<u8>,
    start: usize,
    len: usize,
}

/// An allocation of this many bytes failed (or its size overflows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AllocError {
    /// The bytes asked for.
    pub(crate) len: usize,
}

impl AlignedBytes {
    /// `len` zero bytes, aligned; an error, not an abort, when they cannot be allocated.
    pub(crate) fn zeroed(len: usize) -> Result<Self, AllocError> {
        let size = len.checked_add(BLOB_ALIGN - 1).ok_or(AllocError { len })?;
        let mut storage = Vec::new();
        storage
            .try_reserve_exact(size)
            .map_err(|_| AllocError { len })?;
        storage.resize(size, 0);
        // `align_offset` of a byte pointer is below `BLOB_ALIGN` (never `usize::MAX` for `u8`
        // at run time); `min` keeps the window inside the vector regardless.
        let start = storage
            .as_ptr()
            .align_offset(BLOB_ALIGN)
            .min(BLOB_ALIGN - 1);
        Ok(Self {
            storage,
            start,
            len,
        })
    }

    /// A copy of `bytes`, aligned.
    pub(crate) fn copy_of(bytes: &[u8]) -> Result<Self, AllocError> {
        let mut this = Self::zeroed(bytes.len())?;
        this.as_mut_slice().copy_from_slice(bytes);
        Ok(this)
    }

    /// `bytes`, kept where they are when they start aligned (as an allocator of 16-byte aligned
    /// blocks gives them), else copied.
    pub(crate) fn from_vec(bytes: Vec<u8>) -> Result<Self, AllocError> {
        if bytes.as_ptr().align_offset(BLOB_ALIGN) == 0 {
            let len = bytes.len();
            Ok(Self {
                storage: bytes,
                start: 0,
                len,
            })
        } else {
            Self::copy_of(&bytes)
        }
    }

    /// The bytes.
    pub(crate) fn as_slice(&self) -> &[u8] {
        self.storage
            .get(self.start..self.start.saturating_add(self.len))
            .unwrap_or(&[])
    }

    /// The bytes, to fill before the value is shared.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        let (start, len) = (self.start, self.len);
        self.storage
            .get_mut(start..start.saturating_add(len))
            .unwrap_or(&mut [])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A size no allocator gives is an error, not an abort.
    #[test]
    fn memory_that_cannot_be_allocated_is_an_error() {
        for len in [usize::MAX, usize::MAX - 3, isize::MAX as usize] {
            assert_eq!(AlignedBytes::zeroed(len).err(), Some(AllocError { len }));
        }
        let small = AlignedBytes::copy_of(&[1, 2, 3]).expect("3 bytes");
        assert_eq!(small.as_slice(), &[1, 2, 3]);
        assert_eq!(small.as_slice().as_ptr().align_offset(BLOB_ALIGN), 0);
        let moved = AlignedBytes::from_vec(std::vec![9; 100]).expect("100 bytes");
        assert_eq!(moved.as_slice(), &[9; 100][..]);
        assert_eq!(moved.as_slice().as_ptr().align_offset(BLOB_ALIGN), 0);
        let empty = AlignedBytes::from_vec(Vec::new()).expect("nothing");
        assert!(empty.as_slice().is_empty());
    }
}
