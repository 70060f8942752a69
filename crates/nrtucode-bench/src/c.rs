//! The look-alike's C resolvers, compiled `-O2` by `build.rs` into this crate.

use crate::Answer;

#[allow(unsafe_code)]
mod ffi {
    use core::ffi::{c_int, c_uint, c_void};

    unsafe extern "C" {
        /// `nrtucode_get_memory_image` of the full look-alike, renamed.
        pub(super) fn lookalike_full_get_memory_image(
            idx: c_uint,
            region: c_int,
            flavor: c_int,
            out_ptr: *mut c_void,
            out_len: *mut c_void,
        ) -> c_int;
        /// `nrtucode_get_hwdecode_table` of the full look-alike, renamed.
        pub(super) fn lookalike_full_get_hwdecode_table(
            idx: c_uint,
            kind: c_int,
            out_ptr: *mut c_void,
            out_len: *mut c_void,
        ) -> c_int;
    }

    #[inline(always)]
    pub(super) fn image(idx: u32, region: i32, flavor: i32) -> (i32, usize, usize) {
        let mut ptr: *const u8 = core::ptr::null();
        let mut len: usize = 0;
        // SAFETY: the C resolver writes a pointer and a `size_t` through two valid, aligned
        // out-pointers (or nothing); it reads the environment with `getenv`, and this crate
        // never calls `set_var`.
        let code = unsafe {
            lookalike_full_get_memory_image(
                idx,
                region,
                flavor,
                (&raw mut ptr).cast(),
                (&raw mut len).cast(),
            )
        };
        (code, ptr as usize, len)
    }

    #[inline(always)]
    pub(super) fn hwdecode(idx: u32, kind: i32) -> (i32, usize, usize) {
        let mut ptr: *const u8 = core::ptr::null();
        let mut len: usize = 0;
        // SAFETY: as for `image`; no environment access.
        let code = unsafe {
            lookalike_full_get_hwdecode_table(
                idx,
                kind,
                (&raw mut ptr).cast(),
                (&raw mut len).cast(),
            )
        };
        (code, ptr as usize, len)
    }
}

/// The C `get_memory_image` (`flavor` 0 reads `NEURON_UCODE_FLAVOR` with `getenv`).
#[inline(always)]
pub fn image(idx: u32, region: i32, flavor: i32) -> Answer {
    ffi::image(idx, region, flavor)
}

/// The C `get_hwdecode_table`.
#[inline(always)]
pub fn hwdecode(idx: u32, kind: i32) -> Answer {
    ffi::hwdecode(idx, kind)
}

/// The bytes of a successful C answer (the blob lives in this binary's `.rodata`).
pub fn bytes_of((code, ptr, len): Answer) -> Option<&'static [u8]> {
    (code == 0 && ptr != 0).then(|| {
        #[allow(unsafe_code)]
        // SAFETY: on code 0 the C getter returned a pointer to a `static const` array of at
        // least `len` bytes, alive for the whole program.
        unsafe {
            core::slice::from_raw_parts(ptr as *const u8, len)
        }
    })
}
