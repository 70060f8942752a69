//! Writes the inputs of the bare-metal template's `deflate_cost` example (`cargo xtask
//! cost --what deflate`) into the directory given: the CYW43439 Wi-Fi firmware (the `cyw43-firmware`
//! crate, a dev-dependency) and its first 64 KiB, each as the packer keeps it (raw deflate, best
//! level) and stored, and `inputs.rs`, which the example `include!`s: per input the two files, the
//! decoded length and the SHA-256 of the decoded bytes. Prints one line per input.

use std::fmt::Write as _;
use std::path::PathBuf;

use nrtucode_deflate::{Codec, encode_blob};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(std::env::args_os().nth(1).ok_or("usage: cost_inputs DIR")?);
    std::fs::create_dir_all(&dir)?;
    let dir = dir.canonicalize()?;
    let wifi: &[u8] = cyw43_firmware::CYW43_43439A0;
    // 16-byte aligned, as blobs are in the template's flash and in a partition.
    let mut rust = String::from("#[repr(C, align(16))]\nstruct Align16<T: ?Sized>(T);\n");
    let mut table = String::from(
        "/// (deflate stream, stored bytes, decoded length, SHA-256 of the decoded bytes)\n",
    );
    table.push_str("pub const INPUTS: [Input; 2] = [\n");
    for (name, blob) in [("wifi-64k", &wifi[..64 * 1024]), ("wifi", wifi)] {
        let encoded = encode_blob(blob)?;
        if encoded.codec() != Codec::Deflate {
            return Err(format!("{name}: the packer keeps it stored").into());
        }
        let deflated = dir.join(format!("{name}.deflate"));
        let stored = dir.join(format!("{name}.bin"));
        std::fs::write(&deflated, encoded.stored(blob))?;
        std::fs::write(&stored, blob)?;
        let digest = encoded.sha256().iter().fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:#04x}, ");
            s
        });
        let id = name.replace('-', "_").to_uppercase();
        for (kind, path, len) in [
            ("DEFLATE", &deflated, encoded.stored_len()),
            ("STORED", &stored, blob.len()),
        ] {
            writeln!(
                rust,
                "static {id}_{kind}: &Align16<[u8; {len}]> = &Align16(*include_bytes!({:?}));",
                path.display().to_string()
            )?;
        }
        writeln!(
            table,
            "    (&{id}_DEFLATE.0, &{id}_STORED.0, {}, [{digest}]),",
            blob.len()
        )?;
        println!(
            "{name}: {} B -> {} B ({:.1} %, level {})",
            blob.len(),
            encoded.stored_len(),
            encoded.ratio() * 100.0,
            encoded.level().unwrap_or(0)
        );
    }
    table.push_str("];\n");
    rust.push_str(&table);
    std::fs::write(dir.join("inputs.rs"), rust)?;
    Ok(())
}
