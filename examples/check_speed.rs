//! Host throughput of `nrtucode::digest` over every embedded blob: in place (`check_blob`) and
//! while copying into a buffer (`copy_blob_checked`), against a plain copy. docs/bare-metal.md ("Integrity on
//! the device") names it.
//!
//! ```text
//! cargo run --release --example check_speed --features digest
//! ```

use std::hint::black_box;
use std::time::Instant;

use nrtucode::digest::{check_blob, copy_blob_checked, embedded_blobs};

/// Passes over the whole payload per measurement; the best of `ROUNDS` is reported.
const PASSES: usize = 10;
const ROUNDS: usize = 5;

fn best_mb_per_s(bytes: usize, mut pass: impl FnMut()) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..PASSES {
            pass();
        }
        best = best.min(start.elapsed().as_secs_f64());
    }
    (bytes * PASSES) as f64 / best / 1e6
}

fn main() -> Result<(), nrtucode::digest::CheckError> {
    let blobs = embedded_blobs();
    let bytes: usize = blobs.iter().map(|b| b.bytes().len()).sum();
    let largest = blobs.iter().map(|b| b.bytes().len()).max().unwrap_or(0);
    let mut buffer = vec![0u8; largest];
    // One checked pass first: a mismatch is an error, not a number.
    for blob in blobs {
        check_blob(blob.bytes())?;
        copy_blob_checked(blob.bytes(), &mut buffer)?;
    }
    let verify = best_mb_per_s(bytes, || {
        for blob in blobs {
            black_box(check_blob(black_box(blob.bytes()))).ok();
        }
    });
    let copy_verify = best_mb_per_s(bytes, || {
        for blob in blobs {
            black_box(copy_blob_checked(black_box(blob.bytes()), &mut buffer)).ok();
        }
    });
    let copy = best_mb_per_s(bytes, || {
        for blob in blobs {
            let src = black_box(blob.bytes());
            buffer[..src.len()].copy_from_slice(src);
            black_box(&buffer);
        }
    });
    println!(
        "{} blobs, {bytes} bytes; best of {ROUNDS} x {PASSES} passes",
        blobs.len()
    );
    println!("check_blob (in place):   {verify:8.0} MB/s");
    println!("copy_blob_checked:            {copy_verify:8.0} MB/s");
    println!("plain copy (reference):   {copy:8.0} MB/s");
    println!(
        "sha2 backend: {}",
        if cfg!(target_arch = "x86_64") {
            "x86 SHA-NI when the CPU has it (grep sha_ni /proc/cpuinfo), else software"
        } else {
            "per target"
        }
    );
    Ok(())
}
