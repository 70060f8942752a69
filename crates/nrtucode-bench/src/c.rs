//! The look-alike's C resolvers, compiled `-O2` by `build.rs` into this crate.
#![allow(unsafe_code)] // the C calls, and the callers' promises as `unsafe fn`s

use crate::Answer;

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
        // out-pointers (or nothing); it reads the environment with `getenv`, which the caller
        // of `super::image` promises no other thread changes meanwhile (its `# Safety`).
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

/// The C `get_memory_image` (it reads `NRTUCODE_MPLUS_ON_MARIANA`, and with flavor 0
/// `NEURON_UCODE_FLAVOR`, through `getenv`).
///
/// # Safety
///
/// No other thread may modify the process environment during the call (`std::env::set_var`,
/// `remove_var`, or C's `setenv`/`putenv`): C's `getenv` reads it outside std's lock, so a
/// concurrent change can free what it reads.
#[inline(always)]
pub unsafe fn image(idx: u32, region: i32, flavor: i32) -> Answer {
    ffi::image(idx, region, flavor)
}

/// The C `get_hwdecode_table`.
#[inline(always)]
pub fn hwdecode(idx: u32, kind: i32) -> Answer {
    ffi::hwdecode(idx, kind)
}

/// The bytes of a successful answer (the blob lives in this binary's `.rodata`).
///
/// # Safety
///
/// `answer` is, unchanged, what [`image`] or [`hwdecode`] returned, or
/// [`answer`](crate::answer) of one of our resolvers' results: on code 0 its pointer and length
/// then describe a `static` blob alive for the whole program.
pub unsafe fn bytes_of((code, ptr, len): Answer) -> Option<&'static [u8]> {
    (code == 0 && ptr != 0).then(|| {
        // SAFETY: by the caller's promise, on code 0 `ptr` points to a `static` array of at
        // least `len` bytes, alive for the whole program.
        unsafe { core::slice::from_raw_parts(ptr as *const u8, len) }
    })
}
