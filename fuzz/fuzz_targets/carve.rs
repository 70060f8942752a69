//! Fuzzes the ELF reader, relocation map, table locator and getter-stub decoder: the whole
//! carve over the input as a library, and the stub decoder over the input as code. Neither
//! may panic; every failure must be a typed `CarveError`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nrtucode_cli::carve::{MAX_STUB_BYTES, decode_stub};

fuzz_target!(|data: &[u8]| {
    let _ = nrtucode_cli::carve_bytes(data, "fuzz.so");
    let code = &data[..data.len().min(MAX_STUB_BYTES as usize)];
    let _ = decode_stub(code, 0x9b_3020);
});
