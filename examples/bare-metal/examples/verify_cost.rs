//! What verification costs on the Cortex-M: runs each way of loading an image on two images of
//! different sizes (CAYMAN NX ACT PERF's DRAM, 10,496 B, and IRAM, 81,344 B) between the markers
//! `cost_begin` and `cost_end`, for `cargo xtask device-cost`, which boots it under QEMU
//! (mps2-an386, feature `qemu`) with one instruction per translation block and counts the
//! instructions executed between the markers. The difference between the two images, divided
//! by the difference in bytes, is the cost per byte without the fixed cost of a call.
//!
//! The ways: a plain copy (`copy_from_slice`), `check_blob` (SHA-256 in place, no copy),
//! `copy_blob_checked` (RustCrypto sha2, whichever software backend the build selects), and
//! `copy_blob_checked_with` the `hmac-sha256` crate's SHA-256.
#![no_std]
#![no_main]

#[path = "../src/board.rs"]
mod board;

use core::hint::black_box;

use cortex_m_rt::entry;
use nrtucode::digest::{
    Sha256Digest, Sha256Hasher, check_blob, copy_blob_checked, copy_blob_checked_with,
};
use nrtucode::{Flavor, ImageIndex, NoEnv, Region, resolve_image};

use crate::board::Outcome;

/// The ways of loading measured, in the order run; the number is the marker's argument.
const WAYS: [&str; 4] = [
    "copy",
    "check_blob",
    "copy_blob_checked",
    "copy_blob_checked_with hmac-sha256",
];

/// Device memory the images are copied into: holds the largest.
const WINDOW: usize = 96 * 1024;

/// `hmac-sha256`'s SHA-256 behind nrtucode's hasher seam.
struct HmacSha256(hmac_sha256::Hash);

impl Sha256Hasher for HmacSha256 {
    fn reset(&mut self) {
        self.0 = hmac_sha256::Hash::new();
    }

    fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    fn finish(&mut self) -> Sha256Digest {
        core::mem::replace(&mut self.0, hmac_sha256::Hash::new()).finalize()
    }
}

/// Marks the start of measured work `way` on `bytes` bytes; the counter looks for this symbol.
// SAFETY (no_mangle): a name no other symbol of the program has.
#[unsafe(no_mangle)]
#[inline(never)]
extern "C" fn cost_begin(way: u32, bytes: u32) {
    black_box((way, bytes));
}

/// Marks the end of the work `cost_begin` started.
// SAFETY (no_mangle): a name no other symbol of the program has.
#[unsafe(no_mangle)]
#[inline(never)]
extern "C" fn cost_end(ok: bool) {
    black_box(ok);
}

/// Runs way `way` once on `image` into `window`; true when it copied or verified correctly.
fn run(way: usize, image: &[u8], window: &mut [u8]) -> bool {
    match way {
        0 => match window.get_mut(..image.len()) {
            Some(dst) => {
                dst.copy_from_slice(image);
                true
            }
            None => false,
        },
        1 => check_blob(image).is_ok(),
        2 => copy_blob_checked(image, window).is_ok(),
        _ => {
            copy_blob_checked_with(image, window, &mut HmacSha256(hmac_sha256::Hash::new())).is_ok()
        }
    }
}

#[entry]
fn main() -> ! {
    let Some(window) = cortex_m::singleton!(: [u8; WINDOW] = [0; WINDOW]) else {
        board::finish(Outcome::Failed);
    };
    let engine = black_box(ImageIndex::CAYMAN_NX_ACT);
    let mut all_ok = true;
    for region in [Region::Dram, Region::Iram] {
        let Ok(image) = resolve_image(engine, region, Flavor::Perf, &NoEnv) else {
            defmt::error!("{=str}: not resolved", region.name());
            board::finish(Outcome::Failed);
        };
        for (way, name) in WAYS.iter().enumerate() {
            cost_begin(way as u32, image.len() as u32);
            let ok = run(black_box(way), black_box(image), window);
            cost_end(ok);
            all_ok &= ok;
            defmt::info!(
                "{=str} {=str}, {} bytes: ok {}",
                region.name(),
                name,
                image.len(),
                ok
            );
        }
    }
    board::finish(if all_ok {
        Outcome::Loaded
    } else {
        Outcome::Failed
    })
}
