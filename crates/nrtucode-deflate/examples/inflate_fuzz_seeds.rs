//! Writes seeds for the `inflate` fuzz target (`cargo xtask fuzz inflate`) into the directory
//! given: raw-deflate streams of small structured inputs at several levels (stored, fixed and
//! dynamic Huffman blocks, long matches), each behind the target's 4-byte header (decoded
//! length, little-endian u16; spare room; digest selector 1 = the stream's real digest).

use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let dir = PathBuf::from(
        std::env::args_os()
            .nth(1)
            .expect("usage: inflate_fuzz_seeds DIR"),
    );
    std::fs::create_dir_all(&dir)?;
    let inputs: Vec<Vec<u8>> = vec![
        Vec::new(),
        b"firmware".to_vec(),
        b"mov r0, r1; ldr r2, [r0]; ".repeat(40),
        vec![0; 3000],
        (0..2000u32)
            .flat_map(|i| i.wrapping_mul(2_654_435_761).to_le_bytes())
            .collect(),
        (0..600u32).flat_map(|i| (i / 5).to_le_bytes()).collect(),
    ];
    for (i, input) in inputs.iter().enumerate() {
        for level in [0u8, 1, 6, 10] {
            let stream = miniz_oxide::deflate::compress_to_vec(input, level);
            let mut seed = (input.len() as u16).to_le_bytes().to_vec();
            seed.extend_from_slice(&[8, 1]);
            seed.extend_from_slice(&stream);
            std::fs::write(dir.join(format!("seed-{i}-level{level}")), seed)?;
        }
    }
    Ok(())
}
