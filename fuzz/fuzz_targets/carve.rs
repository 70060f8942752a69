//! Fuzzes the carver end to end: the ELF reader through section headers and, for the same
//! input with its section header table removed, through program headers alone (`PT_LOAD`,
//! `PT_DYNAMIC`); the relocation map, the table locator with its resolver sweep, and the getter
//! interpreter; then the interpreter alone over the input as getter code. Nothing may panic;
//! every failure must be a typed `CarveError`. Seeds: `cargo xtask fuzz` (hand-built ELF files
//! of a few KB from `nrtucode-test-elf`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use nrtucode_carve::{MAX_STUB_BYTES, carve_bytes, decode_stub};
use nrtucode_test_elf::remove_section_headers;

fuzz_target!(|data: &[u8]| {
    let _ = carve_bytes(data, "fuzz.so");
    let has_section_headers = data.get(0x28..0x30).is_some_and(|shoff| shoff != [0; 8]);
    if has_section_headers {
        let mut bare = data.to_vec();
        remove_section_headers(&mut bare);
        let _ = carve_bytes(&bare, "fuzz.so");
    }
    let code = &data[..data.len().min(MAX_STUB_BYTES as usize)];
    let _ = decode_stub(code, 0x9b_3020);
});
