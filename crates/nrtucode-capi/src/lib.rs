//! The C ABI drop-in for the vendor's two resolvers.
//!
//! Built as a static library (`libnrtucode_capi.a`), a shared library (`libnrtucode_capi.so`) and
//! an rlib. The header is `include/nrtucode.h`. Both functions answer exactly like the vendor's
//! (`libnrtucode_internal.so` with the default feature `full`, the reduced `libnrtucode.so` with
//! `--no-default-features --features front`):
//!
//! * the return codes are the vendor's: 0 success, 1 index above 37, 2 flavor not found /
//!   region above 3 / empty slot / bad kind / no profiler table, 3 image not in this build
//!   (NULL getter), 8 the removed `NRTUCODE_MPLUS_ON_MARIANA=1` flag;
//! * the process environment is read on every call through [`nrtucode::StdEnv`], byte for byte
//!   like `getenv` + `strcmp`, under std's environment lock (so a Rust host that calls
//!   `std::env::set_var` on another thread cannot make it read freed memory), and a tripped
//!   removed flag prints one line to stderr;
//! * out-parameters are written only on success;
//! * where the vendor would store through a NULL out-pointer (and crash), we return
//!   [`NRTUCODE_E_NULL_OUT`] (22) and write nothing. Every call the vendor survives gets the
//!   vendor's code: the NULL check happens only when there is something to write.
//!
//! With feature `partition` (built `--no-default-features --features partition`, no blob in
//! the library) the two functions answer from the signed partition file named at run time by
//! `NRTUCODE_PARTITION` ([`from_env`]). Every build also has the C API over a partition handle
//! ([`handle`]: open from a file or from memory, close, the two resolvers, the last refusal),
//! and a record of what it is, what it answers from and what it trusts, in a section of its
//! own that a reader of the file finds without loading it ([`library_record`]).
//!
//! The `unsafe` here is the C boundary only: the `extern "C"` functions whose contract is on
//! their raw pointers (out-pointers, a path, a key, the caller's bytes, a message buffer), and
//! the blocks that read or write through them; each block carries a `// SAFETY:` argument (`clippy::undocumented_unsafe_blocks` is denied workspace-wide). This
//! crate allows `unsafe_code`, which the rest of the workspace denies; the core crate has no
//! `unsafe` at all.
#![allow(unsafe_code)]

use core::ffi::{c_int, c_uint, c_void};

pub mod from_env;
pub mod handle;
pub mod library_record;
pub mod opened;
pub mod refusal;

/// Success: both out-parameters were written.
pub const NRTUCODE_OK: c_int = 0;
/// `idx` is above 37.
pub const NRTUCODE_E_INDEX: c_int = 1;
/// Not found: empty slot, no descriptor for the flavor, region above 3, profiler kind not 0/1,
/// or no profiler table in the slot.
pub const NRTUCODE_E_NOT_FOUND: c_int = 2;
/// The image exists in the vendor's table but is not in this build (a NULL getter).
pub const NRTUCODE_E_NOT_BUILT: c_int = 3;
/// `NRTUCODE_MPLUS_ON_MARIANA` is set to `1`, a removed flag.
pub const NRTUCODE_E_REMOVED_FLAG: c_int = 8;
/// The call would succeed but `out_ptr` or `out_len` is NULL; nothing was written. Not a
/// vendor code (the vendor crashes); 22 as in `EINVAL`.
pub const NRTUCODE_E_NULL_OUT: c_int = 22;
/// A partition handle that is NULL, closed or was never opened (`nrtucode_partition_get_*`);
/// nothing was written. Not a vendor code; 9 as in `EBADF`.
pub const NRTUCODE_E_BAD_HANDLE: c_int = 9;

/// Writes a resolver result through the out-parameters and returns the C code.
///
/// # Safety
/// Each of `out_ptr` and `out_len` is NULL or valid for a (possibly unaligned) write of its
/// pointee type.
pub(crate) unsafe fn answer(
    result: Result<&[u8], c_int>,
    out_ptr: *mut *const c_void,
    out_len: *mut usize,
) -> c_int {
    match result {
        Err(code) => code,
        Ok(_) if out_ptr.is_null() || out_len.is_null() => NRTUCODE_E_NULL_OUT,
        Ok(bytes) => {
            // SAFETY: both pointers are non-NULL (checked above) and, by this function's
            // contract, valid for writes; `write_unaligned` needs no alignment. The stored
            // pointer refers to an embedded (`'static`) blob or to a partition's memory, valid
            // as long as the function that answers documents.
            unsafe {
                out_ptr.write_unaligned(bytes.as_ptr().cast());
                out_len.write_unaligned(bytes.len());
            }
            NRTUCODE_OK
        }
    }
}

/// Resolves a firmware image region: the vendor's `nrtucode_get_memory_image`.
///
/// `idx` is the flat (generation, engine) index 0..=37, `region` 0 IRAM, 1 DRAM, 2 SRAM,
/// 3 EXTRAM, `flavor` 0 auto (from `NEURON_UCODE_FLAVOR`), 1 PERF/RELEASE, 2 DEBUG, 3 TEST,
/// 17/18/19 dynamic-kernel-load PERF/DEBUG/TEST. On success (0) `*out_ptr` points at `*out_len`
/// bytes that live as long as the library; a boundary cursor succeeds with length 0. On any
/// other code nothing is written.
///
/// # Safety
/// Each of `out_ptr` and `out_len` must be NULL or valid for a write of a `const void *` /
/// `size_t` (alignment not required). The call reads the process environment through std's
/// lock, which every Rust `std::env::set_var` / `remove_var` takes too; like `getenv`, it must
/// not race with C code that calls `setenv` / `putenv` directly on another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrtucode_get_memory_image(
    idx: c_uint,
    region: c_int,
    flavor: c_int,
    out_ptr: *mut *const c_void,
    out_len: *mut usize,
) -> c_int {
    #[cfg(not(feature = "partition"))]
    let result =
        nrtucode::get_memory_image(idx, region, flavor, &nrtucode::StdEnv).map_err(|e| e.code());
    #[cfg(feature = "partition")]
    let result = from_env_partition::partition().answer(from_env::UNAVAILABLE_IMAGE_CODE, |p| {
        p.get_memory_image(idx, region, flavor, &nrtucode::StdEnv)
    });
    // SAFETY: the caller's contract on `out_ptr` / `out_len` is `answer`'s contract.
    unsafe { answer(result, out_ptr, out_len) }
}

/// Resolves a HW instruction-decode profiler table: the vendor's `nrtucode_get_hwdecode_table`.
///
/// `idx` is the same flat index as for images; `kind` 0 PROF_CAM (1 KiB), 1 PROF_TABLE (8 KiB).
/// Codes: 0, 1 (index above 37), 2 (bad kind or no profiler in the slot); never 3 or 8. On any
/// code but 0 nothing is written.
///
/// # Safety
/// Each of `out_ptr` and `out_len` must be NULL or valid for a write of a `const void *` /
/// `size_t` (alignment not required).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrtucode_get_hwdecode_table(
    idx: c_uint,
    kind: c_int,
    out_ptr: *mut *const c_void,
    out_len: *mut usize,
) -> c_int {
    #[cfg(not(feature = "partition"))]
    let result = nrtucode::get_hwdecode_table(idx, kind).map_err(|e| e.code());
    #[cfg(feature = "partition")]
    let result = from_env_partition::partition().answer(from_env::UNAVAILABLE_TABLE_CODE, |p| {
        p.get_hwdecode_table(idx, kind)
    });
    // SAFETY: the caller's contract on `out_ptr` / `out_len` is `answer`'s contract.
    unsafe { answer(result, out_ptr, out_len) }
}

/// What this library trusts and answers from, in one line: in the partition-backed build, the
/// key built into this library (its ID; the test key named as such), the partition
/// `NRTUCODE_PARTITION` names and the verdict of its open (opened now if it was not yet), with
/// the reason of a refusal; in a build with embedded blobs, where they came from. Returns
/// `NRTUCODE_PARTITION_OK` (0) when the library answers (the partition verified, or blobs
/// embedded), else the open's refusal code; when `message` is not NULL and `size` is not 0,
/// writes the line there, cut to `size - 1` bytes and NUL-terminated.
///
/// # Safety
/// `message` is NULL or valid for writes of `size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrtucode_library_report(
    message: *mut core::ffi::c_char,
    size: usize,
) -> c_int {
    #[cfg(feature = "partition")]
    let (code, text) = (
        from_env_partition::PARTITION
            .get()
            .map_or_else(|refusal| refusal.code, |_| refusal::NRTUCODE_PARTITION_OK),
        from_env_partition::report(),
    );
    #[cfg(not(feature = "partition"))]
    let (code, text) = (
        refusal::NRTUCODE_PARTITION_OK,
        format!(
            "libnrtucode: blobs embedded in this library ({}{})",
            nrtucode::catalog::BLOB_ORIGIN,
            if FRONT { ", front selection" } else { "" }
        ),
    );
    // A reference to the library record keeps its section in a library linked with
    // `--gc-sections`, whatever the optimizer sees.
    core::hint::black_box(&library_record::LIBRARY_RECORD);
    // SAFETY: this function's contract is `write_message`'s.
    unsafe { handle::write_message(message, size, &text) };
    code
}

/// `true` when this build mirrors the reduced front library (feature `front` without `full`).
pub const FRONT: bool = cfg!(feature = "front") && !cfg!(feature = "full");

/// The drop-in without firmware's partition: key and policy fixed at build time (`build.rs`).
#[cfg(feature = "partition")]
pub mod from_env_partition {
    include!(concat!(env!("OUT_DIR"), "/partition_policy.rs"));

    /// The partition the two vendor symbols answer from, opened at the first call.
    pub static PARTITION: crate::from_env::EnvPartition =
        crate::from_env::EnvPartition::new(PARTITION_KEY, PARTITION_POLICY);

    /// What a library built with the test key says on stderr at its first call.
    pub const TEST_KEY_NOTICE: &str = "libnrtucode: warning: the key built into this library is the repository's TEST key (built with NRTUCODE_PARTITION_KEY=test): anyone can sign a partition it accepts; for tests only\n";

    /// The variable that makes the first call say, in one line on stderr, what the library
    /// trusts and what it answers from (any value but empty or `0`).
    pub const REPORT_VAR: &str = "NRTUCODE_PARTITION_REPORT";

    /// [`PARTITION`], after saying once per process on stderr (a write that fails, stderr
    /// closed, is ignored): when the key built into this library is the test key, so; when
    /// [`REPORT_VAR`] is set, [`report`]'s line (the partition opened for it).
    pub fn partition() -> &'static crate::from_env::EnvPartition {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| {
            use std::io::Write as _;
            if TEST_KEY {
                let _ = std::io::stderr().write_all(TEST_KEY_NOTICE.as_bytes());
            }
            let asked = std::env::var_os(REPORT_VAR).is_some_and(|v| !v.is_empty() && v != "0");
            if asked {
                let _ = writeln!(std::io::stderr(), "{}", report());
            }
        });
        &PARTITION
    }

    /// One line: the key built into this library (its ID, and whether it is the test key), the
    /// partition `NRTUCODE_PARTITION` names, and the verdict of its open (opened now if it was
    /// not yet), with the reason of a refusal.
    pub fn report() -> String {
        let key = crate::refusal::hex(&PARTITION_KEY.key_id());
        let test = if TEST_KEY {
            " (the repository's TEST key)"
        } else {
            ""
        };
        let path = std::env::var_os("NRTUCODE_PARTITION");
        let path = path.as_deref().map_or_else(
            || "(not set)".to_owned(),
            |p| std::path::Path::new(p).display().to_string(),
        );
        let verdict = match PARTITION.get() {
            Ok(_) => "verified, answering from it".to_owned(),
            Err(refusal) => format!("refused: {}", refusal.message),
        };
        format!(
            "libnrtucode: the key built into this library: key ID {key}{test}; NRTUCODE_PARTITION={path}: {verdict}"
        )
    }
}

#[cfg(all(test, not(feature = "partition")))]
mod tests {
    //! The Rust side of the FFI functions; runs under miri (`cargo +nightly miri test -p
    //! nrtucode-capi --lib`).

    use super::*;
    use core::ptr;
    use std::sync::Mutex;

    /// Tests that read or write the process environment hold this lock.
    static ENV_LOCK: Mutex<()> = Mutex::new(());

    const SENTINEL: *const c_void = 0x5a5a as *const c_void;

    fn env_guard() -> std::sync::MutexGuard<'static, ()> {
        let guard = ENV_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: test only; every test touching the environment holds ENV_LOCK.
        unsafe {
            std::env::remove_var("NRTUCODE_MPLUS_ON_MARIANA");
            std::env::remove_var("NEURON_UCODE_FLAVOR");
        }
        guard
    }

    fn image(idx: u32, region: i32, flavor: i32) -> (c_int, *const c_void, usize) {
        let (mut p, mut n) = (SENTINEL, 7usize);
        // SAFETY: both out-pointers point at live locals.
        let rc = unsafe { nrtucode_get_memory_image(idx, region, flavor, &mut p, &mut n) };
        (rc, p, n)
    }

    fn hwdecode(idx: u32, kind: i32) -> (c_int, *const c_void, usize) {
        let (mut p, mut n) = (SENTINEL, 7usize);
        // SAFETY: both out-pointers point at live locals.
        let rc = unsafe { nrtucode_get_hwdecode_table(idx, kind, &mut p, &mut n) };
        (rc, p, n)
    }

    #[test]
    fn the_library_report_names_where_the_blobs_came_from() {
        let mut buf = [0x55u8; 200];
        // SAFETY: `buf` is valid for writes of its length.
        let code = unsafe { nrtucode_library_report(buf.as_mut_ptr().cast(), buf.len()) };
        assert_eq!(code, 0);
        let end = buf.iter().position(|&b| b == 0).expect("NUL-terminated");
        let text = core::str::from_utf8(&buf[..end]).unwrap();
        let want = format!(
            "libnrtucode: blobs embedded in this library ({}",
            nrtucode::catalog::BLOB_ORIGIN
        );
        assert!(text.starts_with(&want), "{text}");
        let mut short = [0x55u8; 12];
        // SAFETY: as above; a NULL message with any size writes nothing.
        unsafe {
            nrtucode_library_report(short.as_mut_ptr().cast(), short.len());
            assert_eq!(nrtucode_library_report(ptr::null_mut(), 99), 0);
        }
        assert_eq!(&short, b"libnrtucode\0");
    }

    #[test]
    fn success_writes_the_core_answer() {
        let _env = env_guard();
        let (rc, p, n) = image(7, 0, 1);
        assert_eq!(rc, NRTUCODE_OK);
        let expected = nrtucode::get_memory_image(7, 0, 1, &nrtucode::NoEnv).expect("embedded");
        assert_eq!((p, n), (expected.as_ptr().cast(), expected.len()));
        assert_eq!(n, 0x13dc0);
    }

    #[test]
    fn boundary_cursor_succeeds_with_length_zero() {
        let _env = env_guard();
        let (rc, p, n) = image(7, 2, 1); // CAYMAN NX ACT PERF SRAM: a cursor
        assert_eq!((rc, n), (NRTUCODE_OK, 0));
        // The vendor's address, one past the end of the same image's DRAM blob; never a
        // placeholder such as `NonNull::dangling()`.
        let (_, dram, dram_len) = image(7, 1, 1);
        assert_eq!(p, dram.cast::<u8>().wrapping_add(dram_len).cast());
        assert_ne!(p, ptr::NonNull::<u8>::dangling().as_ptr().cast());
        let core = nrtucode::get_memory_image(7, 2, 1, &nrtucode::NoEnv).expect("a cursor");
        assert_eq!(p, core.as_ptr().cast(), "the pointer is the core's");
    }

    #[test]
    fn errors_write_nothing() {
        let _env = env_guard();
        for (idx, region, flavor, code) in [
            (38, 0, 1, NRTUCODE_E_INDEX),
            (u32::MAX, 0, 1, NRTUCODE_E_INDEX),
            (36, 0, 1, NRTUCODE_E_NOT_FOUND),
            (7, 4, 1, NRTUCODE_E_NOT_FOUND),
            (7, -1, 1, NRTUCODE_E_NOT_FOUND),
            (7, 0, 17, NRTUCODE_E_NOT_FOUND),
            (7, 0, -1, NRTUCODE_E_NOT_FOUND),
        ] {
            assert_eq!(
                image(idx, region, flavor),
                (code, SENTINEL, 7),
                "{idx} {region} {flavor}"
            );
        }
        for (idx, kind, code) in [
            (38, 0, NRTUCODE_E_INDEX),
            (0, 0, NRTUCODE_E_NOT_FOUND),
            (7, 2, NRTUCODE_E_NOT_FOUND),
            (7, -1, NRTUCODE_E_NOT_FOUND),
        ] {
            assert_eq!(hwdecode(idx, kind), (code, SENTINEL, 7), "{idx} {kind}");
        }
    }

    #[test]
    fn feature_selection_decides_code_3() {
        let _env = env_guard();
        let debug = image(7, 0, 2);
        let maverick = image(31, 2, 1);
        let maverick_prof = hwdecode(31, 0);
        if FRONT {
            assert_eq!(debug, (NRTUCODE_E_NOT_BUILT, SENTINEL, 7));
            assert_eq!(maverick, (NRTUCODE_E_NOT_BUILT, SENTINEL, 7));
            assert_eq!(maverick_prof, (NRTUCODE_E_NOT_FOUND, SENTINEL, 7));
        } else {
            assert_eq!(debug.0, NRTUCODE_OK);
            assert_eq!(maverick.0, NRTUCODE_OK);
            assert_eq!(maverick_prof.0, NRTUCODE_OK);
        }
        assert_eq!(hwdecode(7, 1).2, 0x2000);
    }

    #[test]
    fn null_out_pointers_get_22_and_nothing_is_written() {
        let _env = env_guard();
        let (mut p, mut n) = (SENTINEL, 7usize);
        // SAFETY: the non-NULL out-pointer points at a live local.
        let rc = unsafe { nrtucode_get_memory_image(7, 0, 1, ptr::null_mut(), &mut n) };
        assert_eq!((rc, n), (NRTUCODE_E_NULL_OUT, 7));
        // SAFETY: as above.
        let rc = unsafe { nrtucode_get_memory_image(7, 0, 1, &mut p, ptr::null_mut()) };
        assert_eq!((rc, p), (NRTUCODE_E_NULL_OUT, SENTINEL));
        // SAFETY: both NULL: nothing is dereferenced.
        let rc = unsafe { nrtucode_get_hwdecode_table(7, 0, ptr::null_mut(), ptr::null_mut()) };
        assert_eq!(rc, NRTUCODE_E_NULL_OUT);
        // Calls the vendor survives keep the vendor's code even with NULL out-pointers.
        // SAFETY: both NULL: nothing is dereferenced.
        let rc = unsafe { nrtucode_get_memory_image(99, 0, 1, ptr::null_mut(), ptr::null_mut()) };
        assert_eq!(rc, NRTUCODE_E_INDEX);
        // SAFETY: both NULL: nothing is dereferenced.
        let rc = unsafe { nrtucode_get_hwdecode_table(0, 0, ptr::null_mut(), ptr::null_mut()) };
        assert_eq!(rc, NRTUCODE_E_NOT_FOUND);
    }

    #[test]
    fn unaligned_out_pointers_are_fine() {
        let _env = env_guard();
        let mut buf = [0u8; 1 + 8 + 8];
        let base = buf.as_mut_ptr();
        // SAFETY: offsets 1 and 9 stay inside `buf`, 8 bytes each; unaligned writes are allowed.
        let rc =
            unsafe { nrtucode_get_hwdecode_table(7, 0, base.add(1).cast(), base.add(9).cast()) };
        assert_eq!(rc, NRTUCODE_OK);
        let len = usize::from_ne_bytes(buf[9..17].try_into().expect("8 bytes"));
        assert_eq!(len, 0x400);
    }

    #[test]
    fn environment_is_read_live() {
        let _env = env_guard();
        let set = |name: &str, value: &str| {
            // SAFETY: test only; every test touching the environment holds ENV_LOCK.
            unsafe { std::env::set_var(name, value) }
        };
        set("NRTUCODE_MPLUS_ON_MARIANA", "1");
        assert_eq!(image(7, 0, 1), (NRTUCODE_E_REMOVED_FLAG, SENTINEL, 7));
        assert_eq!(
            image(99, 0, 1).0,
            NRTUCODE_E_INDEX,
            "index is checked first"
        );
        assert_eq!(
            hwdecode(7, 0).0,
            NRTUCODE_OK,
            "no removed flag in the profiler-table lane"
        );
        set("NRTUCODE_MPLUS_ON_MARIANA", "11");
        assert_eq!(image(7, 0, 1).0, NRTUCODE_OK);
        set("NEURON_UCODE_FLAVOR", "test");
        let auto = image(13, 0, 0);
        if FRONT {
            assert_eq!(auto.0, NRTUCODE_E_NOT_BUILT);
        } else {
            assert_eq!((auto.1, auto.2), (image(13, 0, 3).1, image(13, 0, 3).2));
        }
        set("NEURON_UCODE_FLAVOR", "Test");
        assert_eq!(image(13, 0, 0), image(13, 0, 1), "case-sensitive: PERF");
    }
}
