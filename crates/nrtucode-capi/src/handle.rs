//! The C API over a signed partition: `nrtucode_partition_open_file` /
//! `nrtucode_partition_open_memory`, `nrtucode_partition_close`, the two resolvers over a
//! handle, and `nrtucode_partition_last_error` (`include/nrtucode.h` documents each).
//!
//! A handle is a number, never an address: the opened partitions live in one registry keyed by
//! numbers that are never reused, so a NULL, closed (twice or more) or made-up handle finds
//! nothing and gets a defined answer (`NRTUCODE_E_BAD_HANDLE`, `NRTUCODE_PARTITION_E_HANDLE`)
//! instead of reading freed memory. The registry is read-locked while a resolver runs and
//! write-locked to close, so a handle is safe to use from many threads at once, and a close
//! waits for the calls in flight.

use core::ffi::{c_char, c_int, c_uint, c_void};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{PoisonError, RwLock};

use nrtucode::partition::{LoadedPartition, Policy, TableClass};

use crate::opened::{open_copy, public_key_of};
use crate::refusal::{
    NRTUCODE_PARTITION_E_ARGUMENT, NRTUCODE_PARTITION_E_HANDLE, NRTUCODE_PARTITION_OK, Refusal,
    clear_last, last, set_last,
};
use crate::{NRTUCODE_E_BAD_HANDLE, answer};

/// The partition of the full library's tables (`libnrtucode_internal.so`).
pub const NRTUCODE_TABLES_FULL: c_int = 1;
/// The partition of the reduced front library's tables (`libnrtucode.so`).
pub const NRTUCODE_TABLES_FRONT: c_int = 2;

/// The opaque C type `nrtucode_partition`: a handle's value is a registry number, never
/// dereferenced.
#[repr(C)]
pub struct NrtucodePartition {
    _private: [u8; 0],
}

/// The open partitions, by handle number.
static OPEN: RwLock<BTreeMap<usize, LoadedPartition>> = RwLock::new(BTreeMap::new());
/// The next handle number: starts at 1 (0 would be NULL), never reused.
static NEXT: AtomicUsize = AtomicUsize::new(1);

fn handle_number(handle: *const NrtucodePartition) -> usize {
    handle.addr()
}

/// Records the outcome of an open, writes the handle, returns the code.
///
/// # Safety
/// `out` is NULL or valid for a (possibly unaligned) write of a pointer.
unsafe fn finish_open(
    opened: Result<LoadedPartition, Refusal>,
    out: *mut *mut NrtucodePartition,
) -> c_int {
    let opened = opened.and_then(|p| {
        let number = NEXT
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_add(1))
            .map_err(|_| Refusal::new(NRTUCODE_PARTITION_E_ARGUMENT, "no handle number left"))?;
        OPEN.write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(number, p);
        Ok(number)
    });
    let (code, value) = match opened {
        Ok(number) => {
            clear_last();
            (NRTUCODE_PARTITION_OK, number)
        }
        Err(refusal) => {
            set_last(&refusal);
            (refusal.code, 0)
        }
    };
    if !out.is_null() {
        // SAFETY: `out` is non-NULL and, by this function's contract, valid for a write;
        // `write_unaligned` needs no alignment.
        unsafe { out.write_unaligned(core::ptr::without_provenance_mut(value)) };
    }
    code
}

/// The policy of a C call's arguments.
fn policy_of(min_security_counter: c_uint, table_class: c_int) -> Result<Policy, Refusal> {
    let expected_class = match table_class {
        NRTUCODE_TABLES_FULL => TableClass::Full,
        NRTUCODE_TABLES_FRONT => TableClass::Front,
        other => {
            return Err(Refusal::new(
                NRTUCODE_PARTITION_E_ARGUMENT,
                format!(
                    "table class {other}: NRTUCODE_TABLES_FULL ({NRTUCODE_TABLES_FULL}) or NRTUCODE_TABLES_FRONT ({NRTUCODE_TABLES_FRONT}) expected"
                ),
            ));
        }
    };
    Ok(Policy {
        min_security_counter,
        expected_class,
    })
}

/// The key's bytes of a C call, or why not.
///
/// # Safety
/// `key` is NULL or valid for reads of `key_len` bytes that nobody writes during the call.
unsafe fn key_bytes<'k>(key: *const c_void, key_len: usize) -> Result<&'k [u8], Refusal> {
    if key.is_null() || key_len > isize::MAX as usize {
        return Err(Refusal::new(
            NRTUCODE_PARTITION_E_ARGUMENT,
            "the key is NULL (give 32 raw bytes or SPKI PEM text)",
        ));
    }
    // SAFETY: non-NULL, at most isize::MAX bytes, and by this function's contract valid for
    // reads of `key_len` bytes that nobody writes during the call.
    Ok(unsafe { core::slice::from_raw_parts(key.cast::<u8>(), key_len) })
}

/// The path of a C string, for reading.
#[cfg(unix)]
fn path_of(path: &core::ffi::CStr) -> Option<&std::path::Path> {
    use std::os::unix::ffi::OsStrExt as _;
    Some(std::path::Path::new(std::ffi::OsStr::from_bytes(
        path.to_bytes(),
    )))
}

/// The path of a C string, for reading (UTF-8 only off Unix).
#[cfg(not(unix))]
fn path_of(path: &core::ffi::CStr) -> Option<&std::path::Path> {
    path.to_str().ok().map(std::path::Path::new)
}

/// Opens the partition file at `path` (read whole into memory the handle owns), verified with
/// `key` (32 raw bytes, or an ed25519 SPKI PEM public key of `key_len` bytes), its security
/// counter at least `min_security_counter`, its tables of class `table_class`
/// (`NRTUCODE_TABLES_FULL` / `NRTUCODE_TABLES_FRONT`). Every blob's digest is checked and every
/// compressed blob decoded here. Returns `NRTUCODE_PARTITION_OK` and writes the handle to
/// `*out`, or a `NRTUCODE_PARTITION_E_*` code (the reason: `nrtucode_partition_last_error`) and
/// writes NULL.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `key` is NULL or valid for reads of `key_len`
/// bytes; `out` is NULL or valid for a write of a pointer. None of them is written by another
/// thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrtucode_partition_open_file(
    path: *const c_char,
    key: *const c_void,
    key_len: usize,
    min_security_counter: c_uint,
    table_class: c_int,
    out: *mut *mut NrtucodePartition,
) -> c_int {
    let opened = (|| {
        if out.is_null() || path.is_null() {
            return Err(Refusal::new(
                NRTUCODE_PARTITION_E_ARGUMENT,
                "the path or the handle's out-pointer is NULL",
            ));
        }
        // SAFETY: `path` is non-NULL and, by this function's contract, NUL-terminated.
        let path = unsafe { core::ffi::CStr::from_ptr(path) };
        let name = path.to_string_lossy().into_owned();
        let path = path_of(path).ok_or_else(|| {
            Refusal::new(NRTUCODE_PARTITION_E_ARGUMENT, format!("{name}: not a path"))
        })?;
        // SAFETY: the caller's contract on `key` is `key_bytes`'s.
        let key = public_key_of(unsafe { key_bytes(key, key_len) }?)?;
        let policy = policy_of(min_security_counter, table_class)?;
        crate::opened::open_path(path, &name, &key, crate::refusal::KeyOrigin::Given, &policy)
    })();
    // SAFETY: the caller's contract on `out` is `finish_open`'s.
    unsafe { finish_open(opened, out) }
}

/// Opens the partition in the `len` bytes at `bytes`, which are copied first: the handle owns
/// what it verified, and the caller may free or reuse its buffer as soon as this returns. The
/// other arguments and the answer are `nrtucode_partition_open_file`'s.
///
/// # Safety
/// `bytes` is NULL or valid for reads of `len` bytes, `key` NULL or valid for reads of
/// `key_len` bytes, `out` NULL or valid for a write of a pointer; none of them is written by
/// another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrtucode_partition_open_memory(
    bytes: *const c_void,
    len: usize,
    key: *const c_void,
    key_len: usize,
    min_security_counter: c_uint,
    table_class: c_int,
    out: *mut *mut NrtucodePartition,
) -> c_int {
    let opened = (|| {
        if out.is_null() || bytes.is_null() || len > isize::MAX as usize {
            return Err(Refusal::new(
                NRTUCODE_PARTITION_E_ARGUMENT,
                "the partition's bytes or the handle's out-pointer is NULL",
            ));
        }
        // SAFETY: the caller's contract on `key` is `key_bytes`'s.
        let key = public_key_of(unsafe { key_bytes(key, key_len) }?)?;
        let policy = policy_of(min_security_counter, table_class)?;
        // SAFETY: non-NULL, at most isize::MAX bytes, valid for reads of `len` bytes that
        // nobody writes during the call (this function's contract); copied at once.
        let given = unsafe { core::slice::from_raw_parts(bytes.cast::<u8>(), len) };
        open_copy(given, "the partition in memory", &key, &policy)
    })();
    // SAFETY: the caller's contract on `out` is `finish_open`'s.
    unsafe { finish_open(opened, out) }
}

/// Closes `handle`: frees its partition, its decoded blobs and the handle; every pointer its
/// resolvers gave becomes invalid. Waits for calls on it in flight on other threads.
/// `NRTUCODE_PARTITION_OK`, or `NRTUCODE_PARTITION_E_HANDLE` for a NULL, closed or unknown
/// handle (nothing is done).
#[unsafe(no_mangle)]
pub extern "C" fn nrtucode_partition_close(handle: *mut NrtucodePartition) -> c_int {
    let removed = OPEN
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&handle_number(handle));
    match removed {
        // Dropped here, outside the lock.
        Some(_) => NRTUCODE_PARTITION_OK,
        None => {
            set_last(&bad_handle(handle));
            NRTUCODE_PARTITION_E_HANDLE
        }
    }
}

fn bad_handle(handle: *const NrtucodePartition) -> Refusal {
    let what = if handle.is_null() {
        "a NULL handle".to_owned()
    } else {
        format!("handle {:#x} is closed or was never opened", handle.addr())
    };
    Refusal::new(NRTUCODE_PARTITION_E_HANDLE, what)
}

/// Runs `resolve` over the partition of `handle`, the registry read-locked, and writes its
/// answer.
///
/// # Safety
/// `out_ptr` and `out_len` are each NULL or valid for a (possibly unaligned) write.
unsafe fn over_handle(
    handle: *const NrtucodePartition,
    out_ptr: *mut *const c_void,
    out_len: *mut usize,
    resolve: impl FnOnce(&LoadedPartition) -> Result<&[u8], c_int>,
) -> c_int {
    let open = OPEN.read().unwrap_or_else(PoisonError::into_inner);
    let Some(partition) = open.get(&handle_number(handle)) else {
        drop(open);
        set_last(&bad_handle(handle));
        return NRTUCODE_E_BAD_HANDLE;
    };
    // SAFETY: the caller's contract on `out_ptr` / `out_len` is `answer`'s; the bytes live in
    // the registry until the handle is closed, which the pointer's contract allows for.
    unsafe { answer(resolve(partition), out_ptr, out_len) }
}

/// `nrtucode_get_memory_image` over `handle`'s partition: the same arguments, codes (0, 1, 2,
/// 3, 8, 22) and environment reads, plus `NRTUCODE_E_BAD_HANDLE` (9) for a NULL, closed or
/// unknown handle. On success `*out_ptr` points into memory the handle owns, valid until it is
/// closed.
///
/// # Safety
/// `out_ptr` and `out_len` are each NULL or valid for a write of a `const void *` / `size_t`
/// (alignment not required). Like `getenv`, it must not race with C code calling `setenv`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrtucode_partition_get_memory_image(
    handle: *const NrtucodePartition,
    idx: c_uint,
    region: c_int,
    flavor: c_int,
    out_ptr: *mut *const c_void,
    out_len: *mut usize,
) -> c_int {
    // SAFETY: the caller's contract is `over_handle`'s.
    unsafe {
        over_handle(handle, out_ptr, out_len, |p| {
            p.get_memory_image(idx, region, flavor, &nrtucode::StdEnv)
                .map_err(|e| e.code())
        })
    }
}

/// `nrtucode_get_hwdecode_table` over `handle`'s partition (codes 0, 1, 2, 22, and 9 for a
/// bad handle).
///
/// # Safety
/// As `nrtucode_partition_get_memory_image`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrtucode_partition_get_hwdecode_table(
    handle: *const NrtucodePartition,
    idx: c_uint,
    kind: c_int,
    out_ptr: *mut *const c_void,
    out_len: *mut usize,
) -> c_int {
    // SAFETY: the caller's contract is `over_handle`'s.
    unsafe {
        over_handle(handle, out_ptr, out_len, |p| {
            p.get_hwdecode_table(idx, kind).map_err(|e| e.code())
        })
    }
}

/// The calling thread's last refusal: returns its code (`NRTUCODE_PARTITION_OK` when the last
/// open on this thread succeeded, or before any refusal), and, when `message` is not NULL and
/// `size` is not 0, writes its message there, cut to `size - 1` bytes and NUL-terminated (one
/// line; it names the file, so a path as long as `PATH_MAX` makes it that long).
///
/// # Safety
/// `message` is NULL or valid for writes of `size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrtucode_partition_last_error(message: *mut c_char, size: usize) -> c_int {
    let refusal = last();
    // SAFETY: this function's contract is `write_message`'s.
    unsafe { write_message(message, size, &refusal.message) };
    refusal.code
}

/// Writes `text` to `message` when it is not NULL and `size` is not 0: cut to `size - 1`
/// bytes and NUL-terminated.
///
/// # Safety
/// `message` is NULL or valid for writes of `size` bytes.
pub(crate) unsafe fn write_message(message: *mut c_char, size: usize, text: &str) {
    if !message.is_null() && size > 0 && size <= isize::MAX as usize {
        // SAFETY: non-NULL, at most isize::MAX bytes, valid for writes of `size` bytes (this
        // function's contract).
        let out = unsafe { core::slice::from_raw_parts_mut(message.cast::<u8>(), size) };
        let text = text.as_bytes();
        let n = text.len().min(size - 1);
        out[..n].copy_from_slice(&text[..n]);
        out[n] = 0;
    }
}

#[cfg(test)]
mod tests {
    //! The C boundary's pointer handling with inputs small enough for miri (`cargo +nightly
    //! miri test -p nrtucode-capi --lib`): NULL and made-up handles, NULL arguments, a
    //! buffer that is not a partition, the message cut to small buffers. A real partition is
    //! opened from C (tests/partition_c.rs).

    use super::*;
    use crate::refusal::{NRTUCODE_PARTITION_E_FORMAT, NRTUCODE_PARTITION_E_KEY};
    use core::ptr;

    const KEY: [u8; 32] = [7; 32];

    fn open_memory(bytes: &[u8], key: &[u8], class: c_int) -> (c_int, *mut NrtucodePartition) {
        let mut out = ptr::without_provenance_mut(0x5a5a);
        // SAFETY: every pointer points at live data of the given length, `out` at a local.
        let rc = unsafe {
            nrtucode_partition_open_memory(
                bytes.as_ptr().cast(),
                bytes.len(),
                key.as_ptr().cast(),
                key.len(),
                0,
                class,
                &mut out,
            )
        };
        (rc, out)
    }

    fn last_message(size: usize) -> (c_int, Vec<u8>) {
        let mut buf = vec![0xaa_u8; size + 1];
        // SAFETY: `buf` holds `size + 1` bytes; the call may write `size`.
        let code = unsafe { nrtucode_partition_last_error(buf.as_mut_ptr().cast(), size) };
        (code, buf)
    }

    #[test]
    fn refusals_write_a_null_handle_and_a_message() {
        let (rc, out) = open_memory(b"not a partition, just text long enough", &KEY, 1);
        assert_eq!((rc, out), (NRTUCODE_PARTITION_E_FORMAT, ptr::null_mut()));
        let (code, buf) = last_message(512);
        assert_eq!(code, NRTUCODE_PARTITION_E_FORMAT);
        let text = core::ffi::CStr::from_bytes_until_nul(&buf).expect("NUL-terminated");
        assert!(
            text.to_str().expect("UTF-8").contains("bad magic"),
            "{text:?}"
        );
        // Cut to the buffer: 4 bytes and the NUL; the byte after it untouched.
        let (_, buf) = last_message(5);
        assert_eq!(buf[..6], [b't', b'h', b'e', b' ', 0, 0xaa]);
        let (rc, _) = open_memory(&[], &KEY, 1);
        assert_eq!(rc, NRTUCODE_PARTITION_E_FORMAT);
        let (rc, _) = open_memory(b"x", &KEY[..31], 1);
        assert_eq!(rc, NRTUCODE_PARTITION_E_KEY);
        let (rc, _) = open_memory(b"x", &KEY, 3);
        assert_eq!(rc, NRTUCODE_PARTITION_E_ARGUMENT);
        // NULL pointers.
        let mut out = ptr::null_mut();
        // SAFETY: NULL bytes and key are refused before anything is read.
        let rc = unsafe {
            nrtucode_partition_open_memory(ptr::null(), 4, ptr::null(), 32, 0, 1, &mut out)
        };
        assert_eq!(rc, NRTUCODE_PARTITION_E_ARGUMENT);
        // SAFETY: a NULL path and a NULL out-pointer are refused before anything is read.
        let rc = unsafe {
            nrtucode_partition_open_file(
                ptr::null(),
                KEY.as_ptr().cast(),
                32,
                0,
                1,
                ptr::null_mut(),
            )
        };
        assert_eq!(rc, NRTUCODE_PARTITION_E_ARGUMENT);
        // A NULL message buffer, or size 0: the code alone.
        // SAFETY: a NULL buffer is never written.
        let code = unsafe { nrtucode_partition_last_error(ptr::null_mut(), 9) };
        assert_eq!(code, rc);
        let mut one = [0x55_u8; 1];
        // SAFETY: size 0 writes nothing.
        unsafe { nrtucode_partition_last_error(one.as_mut_ptr().cast(), 0) };
        assert_eq!(one, [0x55]);
    }

    #[test]
    fn null_closed_and_made_up_handles_get_a_code() {
        let (mut p, mut n) = (ptr::without_provenance(0x5a5a), 7usize);
        for handle in [ptr::null(), ptr::without_provenance(usize::MAX)] {
            // SAFETY: the out-pointers point at live locals; the handle is never dereferenced.
            let rc =
                unsafe { nrtucode_partition_get_memory_image(handle, 7, 0, 1, &mut p, &mut n) };
            assert_eq!(rc, NRTUCODE_E_BAD_HANDLE);
            // SAFETY: as above.
            let rc = unsafe { nrtucode_partition_get_hwdecode_table(handle, 7, 0, &mut p, &mut n) };
            assert_eq!(rc, NRTUCODE_E_BAD_HANDLE);
            assert_eq!((p.addr(), n), (0x5a5a, 7));
            assert_eq!(
                nrtucode_partition_close(handle.cast_mut()),
                NRTUCODE_PARTITION_E_HANDLE
            );
        }
        let (code, buf) = last_message(100);
        assert_eq!(code, NRTUCODE_PARTITION_E_HANDLE);
        let text = core::ffi::CStr::from_bytes_until_nul(&buf).expect("NUL-terminated");
        assert!(
            text.to_str().expect("UTF-8").contains("never opened"),
            "{text:?}"
        );
    }
}
