//! Writes the seeds of the `flash_file` fuzz target into the directory given: 300 bytes that
//! begin as a partition header would, at 0x2100_0000, in every flashable form (`cargo xtask
//! fuzz` runs it).

fn main() {
    let dir = std::path::PathBuf::from(std::env::args_os().nth(1).expect("a directory"));
    let mut bytes = b"NRTUPART".to_vec();
    bytes.extend((0..292u32).map(|i| (i * 7 % 251) as u8));
    for (name, file) in nrtucode_cli::commands::fuzzing::flash_forms(0x2100_0000, &bytes) {
        std::fs::write(dir.join(format!("seed.{name}")), file).expect("write a seed");
    }
}
