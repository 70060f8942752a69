//! A bare-metal loader, as a starting point: brings up one accelerator engine by copying its
//! firmware images from external flash into device memory, verifying each copy's SHA-256 in the
//! same pass, and logging through `defmt` (RTT).
//!
//! - `memory.x` places every blob (`.rodata.nrtucode.*`) in the XFLASH region; code and the
//!   resolver tables stay in internal FLASH.
//! - The "device memory" here is RAM buffers; on a real board write the engine's memory windows
//!   or DMA buffers instead.
//! - Default: resolve at run time (any engine, any flavor, chosen by integers that could come
//!   from a host) and copy-verify. Feature `const-resolve`: resolve at compile time with
//!   `nrtucode::image!` and look the digests up at compile time, so only the named blobs are
//!   linked; copy-verify the same way.
#![no_std]
#![no_main]

use core::panic::PanicInfo;

use cortex_m_rt::entry;
use defmt_rtt as _; // the global defmt logger
use nrtucode::{Flavor, ImageIndex, Region};

/// The engine this loader brings up, and its flavor.
const ENGINE: ImageIndex = ImageIndex::CAYMAN_NX_ACT;
const FLAVOR: Flavor = Flavor::Perf;

/// Bytes of device memory per region: IRAM holds the largest image of this engine.
const IRAM_WINDOW: usize = 96 * 1024;
const DATA_WINDOW: usize = 16 * 1024;

#[entry]
fn main() -> ! {
    defmt::info!(
        "nrtucode loader: engine {}, flavor {}",
        ENGINE.raw(),
        FLAVOR
    );
    // RAM standing in for the engine's four memories (statics, in .bss).
    let iram = cortex_m::singleton!(: [u8; IRAM_WINDOW] = [0; IRAM_WINDOW]);
    let dram = cortex_m::singleton!(: [u8; DATA_WINDOW] = [0; DATA_WINDOW]);
    let sram = cortex_m::singleton!(: [u8; DATA_WINDOW] = [0; DATA_WINDOW]);
    let extram = cortex_m::singleton!(: [u8; DATA_WINDOW] = [0; DATA_WINDOW]);
    let (Some(iram), Some(dram), Some(sram), Some(extram)) = (iram, dram, sram, extram) else {
        defmt::error!("device memory already taken");
        halt();
    };
    // On a board the engine and flavor come from the host (a mailbox register, a command);
    // black_box stands in for that, so the compiler cannot resolve the request early.
    let (engine, flavor) = core::hint::black_box((ENGINE, FLAVOR));
    let mut ok = true;
    for (region, window) in
        Region::ALL
            .into_iter()
            .zip([&mut iram[..], &mut dram[..], &mut sram[..], &mut extram[..]])
    {
        ok &= load(engine, region, flavor, window);
    }
    if ok {
        defmt::info!("engine ready");
    } else {
        defmt::error!("engine not loaded");
    }
    halt();
}

/// Run-time resolution: the image is found by the resolver, then copied into `window` and
/// hashed in the same pass against the SHA-256 recorded at build time.
#[cfg(not(feature = "const-resolve"))]
fn load(engine: ImageIndex, region: Region, flavor: Flavor, window: &mut [u8]) -> bool {
    use nrtucode::verify::copy_verified;
    use nrtucode::{NoEnv, resolve_image};

    let image = match resolve_image(engine, region, flavor, &NoEnv) {
        Ok(image) => image,
        Err(e) => {
            defmt::error!("{}: not resolved: {} (code {})", region, e, e.code());
            return false;
        }
    };
    match copy_verified(image, window) {
        Ok(0) => {
            defmt::info!("{}: no bytes", region);
            true
        }
        Ok(n) => {
            defmt::info!(
                "{}: {} bytes from {:#010x} to {:#010x}, SHA-256 ok",
                region,
                n,
                image.as_ptr() as usize,
                window.as_ptr() as usize
            );
            true
        }
        Err(e) => {
            defmt::error!("{}: {}", region, e);
            false
        }
    }
}

/// Compile-time resolution: a request that does not resolve fails the build, and only these
/// blobs are linked. Their digests are looked up at compile time too (verifying by slice at run
/// time would link the digest table, and with it every blob).
#[cfg(feature = "const-resolve")]
fn load(_: ImageIndex, region: Region, _: Flavor, window: &mut [u8]) -> bool {
    use nrtucode::image;
    use nrtucode::verify::{Sha256Digest, SoftSha256, copy_checked, expected_sha256_const};

    const IMAGES: [&[u8]; 4] = [
        image!(ENGINE, Region::Iram, FLAVOR),
        image!(ENGINE, Region::Dram, FLAVOR),
        image!(ENGINE, Region::Sram, FLAVOR),
        image!(ENGINE, Region::Extram, FLAVOR),
    ];
    // The windows are large enough: checked when this is compiled.
    const _: () = assert!(IMAGES[0].len() <= IRAM_WINDOW);
    const _: () = assert!(IMAGES[1].len() <= DATA_WINDOW);
    const _: () = assert!(IMAGES[2].len() <= DATA_WINDOW && IMAGES[3].len() <= DATA_WINDOW);

    const DIGESTS: [Sha256Digest; 4] = {
        let mut digests = [[0; 32]; 4];
        let mut i = 0;
        while i < 4 {
            digests[i] = match expected_sha256_const(IMAGES[i]) {
                Some(digest) => digest,
                None => panic!("an image! blob is always embedded"),
            };
            i += 1;
        }
        digests
    };

    let i = region as usize;
    let (Some(image), Some(digest)) = (IMAGES.get(i), DIGESTS.get(i)) else {
        return false;
    };
    match copy_checked(image, window, digest, &mut SoftSha256::new()) {
        Ok(n) => {
            defmt::info!("{}: {} bytes, SHA-256 ok", region, n);
            true
        }
        Err(e) => {
            defmt::error!("{}: {}", region, e);
            false
        }
    }
}

fn halt() -> ! {
    loop {
        cortex_m::asm::wfi();
    }
}

#[panic_handler]
fn panic(_: &PanicInfo<'_>) -> ! {
    // No formatting machinery: a fault the debugger shows at the panicking frame.
    cortex_m::asm::udf()
}
