//! Fuzzes the flashable forms' reader `nrtucode inspect` reads a partition file with (Intel
//! HEX, ELF, UF2, detected from the first bytes) on any bytes: nothing may panic, and the
//! partition read back is never larger than the file (an ELF's segments may all name the same
//! bytes; a sum past the file is refused, not allocated). A file read back is written again in
//! its form at its address, and reads back to the same bytes. Seeds: `cargo xtask fuzz` (the
//! three forms of a small partition-like file).
#![no_main]

use libfuzzer_sys::fuzz_target;
use nrtucode_cli::commands::fuzzing::{flash_file, flash_forms};

fuzz_target!(|data: &[u8]| {
    let Ok((Some(base), bytes)) = flash_file(data) else {
        return;
    };
    for (form, file) in flash_forms(base, &bytes) {
        let (again_base, again) = flash_file(&file).expect("a file written here reads back");
        assert_eq!(again_base, Some(base), "{form}");
        assert_eq!(&again[..bytes.len()], &bytes[..], "{form}");
    }
});
