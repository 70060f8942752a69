//! A minimal RISC-V loader for QEMU's `virt` machine: resolves CAYMAN NX ACT's PERF images at
//! run time, copy-checks each non-empty one into a RAM window, reads the copy back, prints a
//! line per region through semihosting and exits with status 0 only when every image loaded
//! (1 otherwise, 2 on a panic).
#![no_std]
#![no_main]

use core::hint::black_box;

use nrtucode::digest::copy_blob_checked;
use nrtucode::{Flavor, ImageIndex, NoEnv, Region, resolve_image};
use riscv_rt::entry;
use semihosting::{println, process::exit};

/// Bytes of RAM standing in for one region of device memory: holds the largest image.
const WINDOW: usize = 96 * 1024;

#[entry]
fn main() -> ! {
    // On a device the request comes from a host; black_box keeps it a run-time request.
    let (engine, flavor) = black_box((ImageIndex::CAYMAN_NX_ACT, Flavor::Perf));
    let mut window = [0u8; WINDOW];
    let (mut loaded, mut failed) = (0u32, 0u32);
    for region in Region::ALL {
        let image = match resolve_image(engine, region, flavor, &NoEnv) {
            Ok(image) => image,
            Err(e) => {
                println!("{} {}: not resolved: {e}", engine, region.name());
                failed += 1;
                continue;
            }
        };
        if image.is_empty() {
            println!("{} {}: none, nothing to load", engine, region.name());
            continue;
        }
        match copy_blob_checked(image, &mut window) {
            Ok(n) if window.get(..n) == Some(image) => {
                let from = image.as_ptr() as usize;
                println!(
                    "{} {} verified: {n} bytes from {from:#x}, copy checked",
                    engine,
                    region.name()
                );
                loaded += 1;
            }
            Ok(_) => {
                println!(
                    "{} {}: the copy differs from the image",
                    engine,
                    region.name()
                );
                failed += 1;
            }
            Err(e) => {
                println!("{} {}: verification failed: {e}", engine, region.name());
                failed += 1;
            }
        }
    }
    println!("{loaded} of {} images loaded", loaded + failed);
    exit(if failed == 0 && loaded > 0 { 0 } else { 1 })
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    exit(2)
}
