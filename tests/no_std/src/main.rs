//! A `no_std`, `no_main` consumer of the resolvers for `thumbv7em-none-eabihf` whose panic
//! handler calls a symbol that exists nowhere: if any panic path (an index, slice or arithmetic
//! check, an `unwrap`, a formatting panic) survives optimisation anywhere reachable from the
//! entry points below, the final link fails with
//! `undefined symbol: nrtucode_panic_is_reachable`. A clean link proves the resolvers, as built
//! with this profile, cannot panic.
//!
//! Every input comes through [`black_box`] (or the C ABI), so nothing is constant-folded away.
//! `_start` is the ELF entry and the only GC root; it calls every entry point.
#![no_std]
#![no_main]
#![deny(clippy::undocumented_unsafe_blocks)]

use core::hint::black_box;
use core::panic::PanicInfo;

use nrtucode::{NoEnv, get_hwdecode_table, get_memory_image};

#[cfg(not(feature = "panic-loop"))]
unsafe extern "C" {
    /// Defined nowhere, on purpose.
    fn nrtucode_panic_is_reachable() -> !;
}

#[cfg(not(feature = "panic-loop"))]
#[panic_handler]
fn panic(_: &PanicInfo<'_>) -> ! {
    // SAFETY: never runs: a reference to this undefined symbol fails the link.
    unsafe { nrtucode_panic_is_reachable() }
}

/// `cargo xtask size` only: links whatever the resolvers contain.
#[cfg(feature = "panic-loop")]
#[panic_handler]
fn panic(_: &PanicInfo<'_>) -> ! {
    loop {
        core::hint::spin_loop();
    }
}

/// A resolved blob in C shape.
#[repr(C)]
pub struct Blob {
    /// First byte, null on error.
    pub ptr: *const u8,
    /// Length in bytes, 0 on error.
    pub len: usize,
}

fn out(result: Result<&'static [u8], nrtucode::ResolveErr>, blob: &mut Blob) -> i32 {
    match result {
        Ok(bytes) => {
            *blob = Blob {
                ptr: bytes.as_ptr(),
                len: bytes.len(),
            };
            0
        }
        Err(e) => e.code(),
    }
}

/// `get_memory_image` with nothing in the environment. Never inlined, so that
/// `cargo xtask size` counts the resolver's code apart from `_start`.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn check_image_noenv(idx: u32, region: i32, flavor: i32, blob: &mut Blob) -> i32 {
    out(get_memory_image(idx, region, flavor, &NoEnv), blob)
}

/// `get_hwdecode_table` (never inlined, as above).
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn check_hwdecode(idx: u32, kind: i32, blob: &mut Blob) -> i32 {
    out(get_hwdecode_table(idx, kind), blob)
}

#[cfg(feature = "envs")]
mod envs {
    use super::*;
    use nrtucode::MapEnv;
    use nrtucode::{FLAVOR_VAR, REMOVED_FLAG_VAR};

    /// `get_memory_image` over a slice environment whose values the optimiser cannot see.
    #[unsafe(no_mangle)]
    pub extern "C" fn check_image_slice_env(
        idx: u32,
        region: i32,
        flavor: i32,
        blob: &mut Blob,
    ) -> i32 {
        const ENV: [(&str, &[u8]); 2] = [(FLAVOR_VAR, b"debug"), (REMOVED_FLAG_VAR, b"0")];
        let env: &[(&str, &[u8])] = black_box(&ENV);
        out(get_memory_image(idx, region, flavor, env), blob)
    }

    /// `get_memory_image` over a `MapEnv` filled at run time.
    #[unsafe(no_mangle)]
    pub extern "C" fn check_image_map_env(
        idx: u32,
        region: i32,
        flavor: i32,
        blob: &mut Blob,
    ) -> i32 {
        let mut env: MapEnv<'_, 2> = MapEnv::new();
        if env.set(FLAVOR_VAR, black_box(b"test")).is_err()
            || env
                .set(black_box(REMOVED_FLAG_VAR), black_box(b"1"))
                .is_err()
        {
            return -1;
        }
        let _ = env.remove(black_box(REMOVED_FLAG_VAR));
        out(get_memory_image(idx, region, flavor, &env), blob)
    }

    /// `get_memory_image` over an `EnvSnapshot` built at run time from opaque bytes (any
    /// length: longer than its capacity is kept truncated).
    #[unsafe(no_mangle)]
    pub extern "C" fn check_image_snapshot(
        idx: u32,
        region: i32,
        flavor: i32,
        blob: &mut Blob,
    ) -> i32 {
        let value: &[u8] = black_box(b"a value longer than the capacity\0test");
        let env = nrtucode::EnvSnapshot::from_values(black_box(Some(b"1 ")), Some(value));
        out(get_memory_image(idx, region, flavor, &env), blob)
    }
}

#[cfg(feature = "prof")]
mod prof {
    use super::*;
    use nrtucode::prof::{CamView, TableView, validate_pair};

    /// The profiler views and validators over a resolved pair, or over arbitrary bytes.
    #[unsafe(no_mangle)]
    pub extern "C" fn check_prof(idx: u32, tail: usize) -> i32 {
        let (Ok(cam), Ok(table)) = (get_hwdecode_table(idx, 0), get_hwdecode_table(idx, 1)) else {
            return -1;
        };
        // Arbitrary-length inputs: the views must reject them without panicking.
        let cam = black_box(&cam[..cam.len().min(tail)]);
        let (Ok(cam), Ok(table)) = (CamView::new(cam), TableView::new(table)) else {
            return -2;
        };
        let armed = cam.records().filter(|r| r.is_armed()).count();
        let populated = table.records().filter(|r| r.is_populated()).count();
        match validate_pair(&cam, &table) {
            Ok(summary) => (summary.armed + summary.nine_bit_matches + armed + populated) as i32,
            Err(_) => -3,
        }
    }
}

#[cfg(feature = "digest")]
mod digest {
    use super::*;
    use nrtucode::digest::{
        Sha256Digest, Sha256Hasher, SoftSha256, check_blob, check_blob_with, check_sha256,
        copy_blob_checked, copy_checked, expected_sha256, expected_sha256_const,
    };

    /// A hasher the optimiser cannot see through (stands in for a hardware SHA block).
    struct Opaque(SoftSha256);

    impl Sha256Hasher for Opaque {
        fn reset(&mut self) {
            black_box(&mut self.0).reset();
        }
        fn update(&mut self, bytes: &[u8]) {
            black_box(&mut self.0).update(black_box(bytes));
        }
        fn finish(&mut self) -> Sha256Digest {
            black_box(black_box(&mut self.0).finish())
        }
    }

    /// Verifies a resolved image in place and while copying it into a buffer of opaque length,
    /// with the software hasher and a custom one, and checks arbitrary bytes by digest.
    #[unsafe(no_mangle)]
    pub extern "C" fn check_digest(idx: u32, region: i32, flavor: i32, room: usize) -> i32 {
        let Ok(blob) = get_memory_image(idx, region, flavor, &NoEnv) else {
            return -1;
        };
        let mut device = [0u8; 512];
        let Some(window) = device.get_mut(..black_box(room).min(512)) else {
            return -4;
        };
        let mut acc = 0;
        acc += i32::from(check_blob(blob).is_ok());
        acc += i32::from(check_blob_with(blob, &mut Opaque(SoftSha256::new())).is_ok());
        acc += match copy_blob_checked(blob, window) {
            Ok(n) => n as i32,
            Err(_) => -2,
        };
        let tail = blob.get(..black_box(room)).unwrap_or(blob);
        if let Ok(expected) = expected_sha256(blob) {
            acc += i32::from(check_sha256(tail, expected, &mut SoftSha256::new()).is_ok());
            acc += match copy_checked(tail, &mut device, expected, &mut Opaque(SoftSha256::new())) {
                Ok(n) => n as i32,
                Err(_) => -3,
            };
        }
        // The by-content lookup meant for const contexts, here at run time on opaque bytes.
        acc += i32::from(expected_sha256_const(tail).is_some());
        acc ^ i32::from(black_box(device[0]))
    }
}

#[cfg(feature = "deflate")]
mod deflate {
    use super::*;
    use nrtucode::deflate::{Inflater, decode_checked, decode_checked_with};
    use nrtucode::digest::{Sha256Digest, Sha256Hasher, SoftSha256};

    /// A hasher the optimiser cannot see through (stands in for a hardware SHA block).
    struct Opaque(SoftSha256);

    impl Sha256Hasher for Opaque {
        fn reset(&mut self) {
            black_box(&mut self.0).reset();
        }
        fn update(&mut self, bytes: &[u8]) {
            black_box(&mut self.0).update(black_box(bytes));
        }
        fn finish(&mut self) -> Sha256Digest {
            black_box(black_box(&mut self.0).finish())
        }
    }

    /// Decodes opaque bytes (a resolved image, cut to an opaque length) as a raw-deflate
    /// stream of an opaque decoded length into a buffer of opaque length, with the software
    /// hasher and a custom one.
    #[unsafe(no_mangle)]
    pub extern "C" fn check_deflate(idx: u32, region: i32, cut: usize, decoded_len: usize) -> i32 {
        let Ok(blob) = get_memory_image(idx, region, 1, &NoEnv) else {
            return -1;
        };
        let stored = black_box(blob.get(..black_box(cut)).unwrap_or(blob));
        let digest: Sha256Digest = black_box([0x5a; 32]);
        let mut inflater = Inflater::new();
        let mut device = [0u8; 512];
        let Some(window) = device.get_mut(..black_box(decoded_len).min(512)) else {
            return -4;
        };
        let mut acc = 0;
        acc += match decode_checked(
            stored,
            black_box(decoded_len),
            &digest,
            window,
            &mut inflater,
        ) {
            Ok(image) => image.len() as i32,
            Err(_) => -2,
        };
        acc += match decode_checked_with(
            stored,
            black_box(decoded_len),
            &digest,
            window,
            &mut inflater,
            &mut Opaque(SoftSha256::new()),
        ) {
            Ok(image) => image.len() as i32,
            Err(_) => -3,
        };
        acc ^ i32::from(black_box(device[0]))
    }

    /// Resolves into a buffer over a partition of opaque bytes (the unsigned test door, so
    /// that ed25519's own checks stay out of this build): copy-check for a stored blob,
    /// decode-check for a deflate one.
    #[cfg(feature = "partition")]
    #[unsafe(no_mangle)]
    pub extern "C" fn check_partition_into(idx: u32, region: i32, flavor: i32, kind: i32) -> i32 {
        use nrtucode::partition::{Partition, Policy, TableClass};
        static FLASH: [u8; 4096] = [0; 4096];
        let policy = Policy {
            min_security_counter: black_box(1),
            expected_class: TableClass::Full,
        };
        let Ok(parsed) = Partition::parse(black_box(&FLASH[..])) else {
            return -1;
        };
        let Ok(verified) = parsed.insecure_trust_unsigned(&policy) else {
            return -1;
        };
        let mut loader = nrtucode::partition::Loader::new();
        let mut device = [0u8; 512];
        let mut acc = match verified.get_memory_image(idx, region, flavor, &NoEnv) {
            Ok(image) => match image.load_into(&mut device, &mut loader) {
                Ok(image) => image.len() as i32,
                Err(_) => -2,
            },
            Err(e) => e.code(),
        };
        acc += match verified.get_hwdecode_table(idx, kind) {
            Ok(table) => match table.load_into(&mut device, &mut loader) {
                Ok(table) => table.len() as i32,
                Err(_) => -3,
            },
            Err(e) => e.code(),
        };
        acc ^ i32::from(black_box(device[0]))
    }
}

#[cfg(feature = "partition")]
mod partition {
    use super::*;
    use nrtucode::partition::{Partition, Policy, PublicKey, TableClass};

    /// Bytes the optimiser cannot see: a flash partition of unknown content.
    static FLASH: [u8; 4096] = [0; 4096];

    /// Parses, verifies (with `partition-verify`: ed25519 and policy; else the policy through
    /// the unsigned test door) and resolves over opaque bytes, then checks the digests and
    /// copies a blob while verifying it.
    #[unsafe(no_mangle)]
    pub extern "C" fn check_partition(idx: u32, region: i32, flavor: i32, blob: &mut Blob) -> i32 {
        let bytes: &'static [u8] = black_box(&FLASH[..]);
        let key = PublicKey::from_bytes(black_box([7u8; 32]));
        let policy = Policy {
            min_security_counter: black_box(1),
            expected_class: TableClass::Full,
        };
        let Ok(parsed) = Partition::parse(bytes) else {
            return -1;
        };
        #[cfg(feature = "partition-verify")]
        let verified = parsed.verify(&key, &policy);
        #[cfg(not(feature = "partition-verify"))]
        let verified = {
            let _ = key;
            parsed.insecure_trust_unsigned(&policy)
        };
        let Ok(verified) = verified else {
            return -2;
        };
        let mut hasher = nrtucode::digest::SoftSha256::new();
        let mut loader = nrtucode::partition::Loader::new();
        let mut acc = match verified.get_memory_image(idx, region, flavor, &NoEnv) {
            Ok(image) => {
                if let Ok(bytes) = image.check(&mut hasher) {
                    *blob = Blob {
                        ptr: bytes.as_ptr(),
                        len: bytes.len(),
                    };
                }
                let mut device = [0u8; 512];
                match image.load_into(&mut device, &mut loader) {
                    Ok(copied) => copied.len() as i32,
                    Err(_) => -3,
                }
            }
            Err(e) => e.code(),
        };
        acc += match verified.get_hwdecode_table(idx, region) {
            Ok(table) => table.len() as i32,
            Err(e) => e.code(),
        };
        acc += i32::from(verified.check_blobs(&mut hasher).is_ok());
        acc
    }
}

/// The entry: calls every entry point with opaque inputs, forever.
#[unsafe(no_mangle)]
pub extern "C" fn _start() -> ! {
    let mut blob = Blob {
        ptr: core::ptr::null(),
        len: 0,
    };
    let mut acc = 0i32;
    loop {
        let (idx, region, flavor) = black_box((7u32, 0i32, 1i32));
        acc ^= check_image_noenv(idx, region, flavor, &mut blob);
        acc ^= check_hwdecode(idx, region, &mut blob);
        #[cfg(feature = "envs")]
        {
            acc ^= envs::check_image_slice_env(idx, region, flavor, &mut blob);
            acc ^= envs::check_image_map_env(idx, region, flavor, &mut blob);
            acc ^= envs::check_image_snapshot(idx, region, flavor, &mut blob);
        }
        #[cfg(feature = "prof")]
        {
            acc ^= prof::check_prof(idx, black_box(usize::MAX));
        }
        #[cfg(feature = "digest")]
        {
            acc ^= digest::check_digest(idx, region, flavor, black_box(usize::MAX));
        }
        #[cfg(feature = "deflate")]
        {
            acc ^= deflate::check_deflate(idx, region, black_box(usize::MAX), black_box(300));
        }
        #[cfg(all(feature = "deflate", feature = "partition"))]
        {
            acc ^= deflate::check_partition_into(idx, region, flavor, black_box(1));
        }
        #[cfg(feature = "partition")]
        {
            acc ^= partition::check_partition(idx, region, flavor, &mut blob);
        }
        black_box((acc, &blob));
    }
}
