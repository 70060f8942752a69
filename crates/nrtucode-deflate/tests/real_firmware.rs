//! The codec on real firmware a registry package ships (the `cyw43-firmware` crate, a
//! dev-dependency: downloaded by cargo, never committed) and on the built-in fixtures.

use std::io::Write;
use std::process::{Command, Stdio};

use nrtucode_deflate::{Codec, Summary, encode_blob};
use sha2::{Digest, Sha256};

/// The CYW43439 Wi-Fi firmware, its country matrix and its Bluetooth firmware.
fn cyw43() -> [(&'static str, &'static [u8]); 3] {
    [
        ("43439A0.bin", cyw43_firmware::CYW43_43439A0),
        ("43439A0_clm.bin", cyw43_firmware::CYW43_43439A0_CLM),
        ("43439A0_btfw.bin", cyw43_firmware::CYW43_43439A0_BTFW),
    ]
}

/// Every blob is kept as deflate, decodes back (`encode_blob` checks it with the device's
/// decoder) and the Wi-Fi image shrinks to under 70 % (about 63 % is what deflate is known to
/// give on it).
#[test]
fn cyw43_firmware_compresses_and_decodes_back() {
    let mut summary = Summary::default();
    for (name, blob) in cyw43() {
        let encoded = encode_blob(blob).unwrap();
        assert_eq!(encoded.codec(), Codec::Deflate, "{name}");
        assert_eq!(encoded.sha256(), &<[u8; 32]>::from(Sha256::digest(blob)));
        println!(
            "{name}: {} B -> {} B ({:.1} %, level {})",
            blob.len(),
            encoded.stored_len(),
            encoded.ratio() * 100.0,
            encoded.level().unwrap()
        );
        summary.add(&encoded);
    }
    assert_eq!(cyw43_firmware::CYW43_43439A0.len(), 231_077);
    let wifi = encode_blob(cyw43_firmware::CYW43_43439A0).unwrap();
    assert!(wifi.ratio() < 0.70, "{}", wifi.ratio());
    println!("{summary}");
}

/// Raw-deflate bytes of `gzip -9 -n` (the gzip member less its 10-byte header and 8-byte
/// trailer, with no name stored).
fn gzip9_deflate_len(blob: &[u8]) -> usize {
    let mut child = Command::new("gzip")
        .args(["-9", "-n", "-c"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("gzip");
    child.stdin.take().unwrap().write_all(blob).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    out.stdout.len() - 18
}

/// Against `gzip -9`: the packer's best level is no more than 1 % larger than gzip's deflate
/// stream on every cyw43 blob (the figures are in docs/performance.md).
#[test]
#[ignore = "needs gzip on PATH"]
fn cyw43_firmware_against_gzip_9() {
    for (name, blob) in cyw43() {
        let ours = encode_blob(blob).unwrap().stored_len();
        let gzip = gzip9_deflate_len(blob);
        println!(
            "{name}: {} B, packer {ours} B ({:.1} %), gzip -9 {gzip} B ({:.1} %)",
            blob.len(),
            ours as f64 * 100.0 / blob.len() as f64,
            gzip as f64 * 100.0 / blob.len() as f64
        );
        assert!(ours * 100 <= gzip * 101, "{name}: {ours} vs gzip -9 {gzip}");
    }
}

/// The fixture memory images are near-random filler: deflate saves no 16-byte unit on any of
/// them, so the packer keeps every one stored. (The PROF tables are mostly empty records and
/// do compress.)
#[test]
fn fixture_images_stay_stored() {
    let mut seen = std::collections::HashSet::new();
    let (mut images, mut prof) = (Summary::default(), Summary::default());
    for getter in nrtucode_facts::facts::getters() {
        let bytes = nrtucode_facts::fixture::fixture_bytes(&getter);
        if bytes.is_empty() || !seen.insert(Sha256::digest(&bytes)) {
            continue;
        }
        let encoded = encode_blob(&bytes).unwrap();
        if getter.is_prof() {
            prof.add(&encoded);
        } else {
            assert_eq!(encoded.codec(), Codec::Stored, "{}", getter.symbol);
            images.add(&encoded);
        }
    }
    assert!(images.blobs > 100, "{images}");
    println!("fixture images: {images}\nfixture PROF blobs: {prof}");
}
