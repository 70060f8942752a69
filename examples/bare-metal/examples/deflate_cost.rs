//! What decoding a compressed blob costs on the Cortex-M: for `cargo xtask deflate-cost`, which
//! writes the inputs (the CYW43439 Wi-Fi firmware from the `cyw43-firmware` crate and its first
//! 64 KiB, raw deflate at the packer's best level and stored; never committed) and names them in
//! `NRTUCODE_DEFLATE_COST_INPUTS`, boots this under QEMU (mps2-an386, features
//! `qemu,deflate-cost`) with one instruction per translation block and counts the instructions
//! between the markers `cost_begin` and `cost_end`. The difference between the two inputs,
//! divided by the difference in decoded bytes, is the cost per output byte without the fixed
//! cost of a call.
//!
//! The ways: a plain copy of the stored bytes, `copy_checked` (copy-check of a stored blob),
//! `decode_checked` (inflate and SHA-256 of the output), `decode_checked_with` a hasher
//! that hashes nothing (the inflater alone), and, for comparison, zune-inflate's
//! `decode_deflate` (another safe-Rust inflater, which needs an allocator: it returns a `Vec`,
//! here on an embedded-alloc heap, then copied into the window). Exit status 0 when every way
//! produced the firmware's bytes.
#![no_std]
#![no_main]

#[path = "../src/board.rs"]
mod board;

use core::hint::black_box;

use cortex_m_rt::entry;
use nrtucode::deflate::{Inflater, decode_checked, decode_checked_with};
use nrtucode::digest::{Sha256Digest, Sha256Hasher, SoftSha256, copy_checked};

use crate::board::Outcome;

/// One input: (deflate stream, stored bytes, decoded length, SHA-256 of the decoded bytes).
type Input = (&'static [u8], &'static [u8], usize, [u8; 32]);

// `INPUTS: [Input; 2]`, written by `cargo xtask deflate-cost`.
include!(env!("NRTUCODE_DEFLATE_COST_INPUTS"));

/// The ways measured, in the order run; the number is the marker's argument.
const WAYS: [&str; 5] = [
    "copy",
    "copy_checked",
    "decode_checked",
    "inflate only",
    "zune-inflate",
];

/// zune-inflate's heap: its output `Vec` and its working memory (it asks for more than the
/// largest input: 320 KiB was not enough for the 231,077 B image).
#[global_allocator]
static HEAP: embedded_alloc::LlffHeap = embedded_alloc::LlffHeap::empty();

/// Bytes of that heap.
const HEAP_BYTES: usize = 1024 * 1024;

/// Device memory the firmware is decoded into: holds the largest input.
const WINDOW: usize = 232 * 1024;

/// The window, 16-byte aligned like a DMA buffer.
#[repr(C, align(16))]
struct Window([u8; WINDOW]);

/// A hasher that hashes nothing and "finds" the digest it is given: the inflater's cost alone.
struct NoHash(Sha256Digest);

impl Sha256Hasher for NoHash {
    fn reset(&mut self) {}
    fn update(&mut self, bytes: &[u8]) {
        black_box(bytes);
    }
    fn finish(&mut self) -> Sha256Digest {
        self.0
    }
}

/// Marks the start of measured work `way` on `bytes` decoded bytes; the counter looks for it.
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

/// miniz_oxide's inflater through `decode_checked_with` and a hasher that hashes nothing. Not
/// inlined, so that `cargo xtask deflate-cost` counts its code (with what it inlines) apart.
#[inline(never)]
fn inflate_miniz(
    deflated: &[u8],
    len: usize,
    sha256: &Sha256Digest,
    window: &mut [u8],
    inflater: &mut Inflater,
) -> bool {
    decode_checked_with(
        deflated,
        len,
        sha256,
        window,
        inflater,
        &mut NoHash(*sha256),
    )
    .is_ok()
}

/// zune-inflate's `decode_deflate` into a heap `Vec`, copied into the window. Not inlined
/// (as above).
#[inline(never)]
fn inflate_zune(deflated: &[u8], len: usize, window: &mut [u8]) -> bool {
    let options = zune_inflate::DeflateOptions::default()
        .set_limit(len)
        .set_size_hint(len);
    match zune_inflate::DeflateDecoder::new_with_options(deflated, options).decode_deflate() {
        Ok(bytes) => match window.get_mut(..bytes.len()) {
            Some(dst) if bytes.len() == len => {
                dst.copy_from_slice(&bytes);
                true
            }
            _ => false,
        },
        Err(_) => false,
    }
}

/// Runs way `way` once; true when it reported success.
fn run(
    way: usize,
    (deflated, stored, len, sha256): Input,
    window: &mut [u8],
    inflater: &mut Inflater,
) -> bool {
    match way {
        0 => match window.get_mut(..stored.len()) {
            Some(dst) => {
                dst.copy_from_slice(stored);
                true
            }
            None => false,
        },
        1 => copy_checked(stored, window, &sha256, &mut SoftSha256::new()).is_ok(),
        2 => decode_checked(deflated, len, &sha256, window, inflater).is_ok(),
        3 => inflate_miniz(deflated, len, &sha256, window, inflater),
        _ => inflate_zune(deflated, len, window),
    }
}

#[entry]
fn main() -> ! {
    // SAFETY: called once, first thing, before anything allocates; the macro's buffer is a
    // static of its own that nothing else names.
    unsafe {
        embedded_alloc::init!(HEAP, HEAP_BYTES);
    }
    let Some(Window(window)) = cortex_m::singleton!(: Window = Window([0; WINDOW])) else {
        board::finish(Outcome::Failed);
    };
    // The inflater's ~11 KB live in a static, not on the stack.
    let Some(inflater) = cortex_m::singleton!(: Inflater = Inflater::new()) else {
        board::finish(Outcome::Failed);
    };
    let mut all_ok = true;
    for input in INPUTS {
        for (way, name) in WAYS.iter().enumerate() {
            window.fill(0);
            cost_begin(way as u32, input.2 as u32);
            let done = run(black_box(way), black_box(input), window, inflater);
            cost_end(done);
            // Checked outside the markers: the window holds the firmware's bytes.
            let ok = done && window.get(..input.2) == Some(input.1);
            all_ok &= ok;
            defmt::info!("{=str}, {} bytes: ok {}", name, input.2, ok);
        }
    }
    board::finish(if all_ok {
        Outcome::Loaded
    } else {
        Outcome::Failed
    })
}
