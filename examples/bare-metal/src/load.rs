//! Loading one region's image: resolve it, copy it into its window while hashing the copy,
//! compare the digest with the one recorded at build time, then read the copy back. Every
//! outcome is logged with the image's name (`CAYMAN_NX_ACT PERF IRAM`).

use nrtucode::digest::CheckError;
use nrtucode::{Flavor, ImageIndex, Region};

use crate::Loaded;
use crate::hex::{HexBuf, hex};

/// Run-time resolution: the image is found by the resolver, then copied into `window` and
/// hashed in the same pass against the SHA-256 recorded at build time.
#[cfg(not(feature = "const-resolve"))]
pub fn load(
    engine: ImageIndex,
    region: Region,
    flavor: Flavor,
    window: &mut [u8],
) -> Result<Loaded, ()> {
    use nrtucode::digest::copy_blob_checked;
    use nrtucode::{NoEnv, resolve_image};

    // The name of the engine built in; a loader taking requests from a host logs engine.raw().
    let name = if engine == crate::ENGINE {
        crate::ENGINE_NAME
    } else {
        "engine"
    };
    let image = match resolve_image(engine, region, flavor, &NoEnv) {
        Ok(image) => image,
        Err(e) => {
            defmt::error!(
                "image {=str} {} {=str}: not resolved: {} (code {})",
                name,
                flavor,
                region.name(),
                e,
                e.code()
            );
            return Err(());
        }
    };
    if image.is_empty() {
        defmt::info!(
            "image {=str} {} {=str}: none, nothing to load",
            name,
            flavor,
            region.name()
        );
        return Ok(Loaded::Nothing);
    }
    let result = copy_blob_checked(image, window);
    let expected = nrtucode::digest::expected_sha256(image).ok();
    report(name, flavor, region, image, window, result, expected)
}

/// Compile-time resolution: a request that does not resolve fails the build, and only these
/// blobs are linked. Their digests are looked up at compile time too (verifying by slice at run
/// time would link the digest table, and with it every blob).
#[cfg(feature = "const-resolve")]
pub fn load(_: ImageIndex, region: Region, _: Flavor, window: &mut [u8]) -> Result<Loaded, ()> {
    use nrtucode::digest::{Sha256Digest, SoftSha256, copy_checked, expected_sha256_const};
    use nrtucode::image;

    use crate::{DATA_WINDOW, ENGINE, FLAVOR, IRAM_WINDOW};

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

    let name = crate::ENGINE_NAME;
    let i = region as usize;
    let (Some(&image), Some(digest)) = (IMAGES.get(i), DIGESTS.get(i)) else {
        return Err(());
    };
    if image.is_empty() {
        defmt::info!(
            "image {=str} {} {=str}: none, nothing to load",
            name,
            FLAVOR,
            region.name()
        );
        return Ok(Loaded::Nothing);
    }
    let result = copy_checked(image, window, digest, &mut SoftSha256::new());
    report(name, FLAVOR, region, image, window, result, Some(digest))
}

/// Logs the outcome of a copy-check and reads a checked copy back: the bytes in device
/// memory must be the image's (a write that did not land, or a window that aliases another,
/// shows here). On a mismatch it shows both digests: `expected`, the recorded one it checked
/// against, and the image's own, hashed again in place (the window was zeroed).
fn report(
    name: &str,
    flavor: Flavor,
    region: Region,
    image: &[u8],
    window: &[u8],
    result: Result<usize, CheckError>,
    expected: Option<&nrtucode::digest::Sha256Digest>,
) -> Result<Loaded, ()> {
    let n = match result {
        Ok(n) => n,
        Err(CheckError::Mismatch) => {
            use nrtucode::digest::{Sha256Hasher, SoftSha256};
            let mut hasher = SoftSha256::new();
            hasher.update(image);
            let actual = hasher.finish();
            let expected = expected.copied().unwrap_or([0; 32]);
            let (mut expected_hex, mut actual_hex) = (HexBuf::new(), HexBuf::new());
            defmt::error!(
                "image {=str} {} {=str}: verification failed: SHA-256 mismatch, expected {=str}, found {=str}",
                name,
                flavor,
                region.name(),
                hex(&expected, &mut expected_hex),
                hex(&actual, &mut actual_hex)
            );
            return Err(());
        }
        Err(e) => {
            defmt::error!(
                "image {=str} {} {=str}: verification failed: {}",
                name,
                flavor,
                region.name(),
                e
            );
            return Err(());
        }
    };
    if window.get(..n) != Some(image) {
        defmt::error!(
            "image {=str} {} {=str}: the copy in device memory differs from the image",
            name,
            flavor,
            region.name()
        );
        return Err(());
    }
    defmt::info!(
        "image {=str} {} {=str} verified: {} bytes from {:#010x} to {:#010x}, SHA-256 ok, copy checked",
        name,
        flavor,
        region.name(),
        n,
        image.as_ptr() as usize,
        window.as_ptr() as usize
    );
    Ok(Loaded::Image)
}
