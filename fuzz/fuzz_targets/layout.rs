//! Fuzzes the layout-file parser and checks `nrtucode provision --layout` and `inspect
//! --layout` read (`KEY = VALUE` lines) on any UTF-8 text of at most 16 KiB (what the one
//! reader hands over): nothing may panic, and a layout accepted spans at most 1 GiB. Seeds:
//! `cargo xtask fuzz` (a QSPI layout).
#![no_main]

use libfuzzer_sys::fuzz_target;
use nrtucode_cli::commands::fuzzing::layout;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok((_, len)) = layout(text) {
        assert!(len <= 1 << 30, "an image of {len} bytes");
    }
});
