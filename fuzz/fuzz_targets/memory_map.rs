//! Fuzzes the GNU ld memory-map reader `nrtucode pack --memory-map` and `inspect --memory-map`
//! read the partition's region with, on any UTF-8 text of at most 256 KiB (what the one
//! reader hands over): nothing may panic, and a region read ends above its start. Seeds:
//! `cargo xtask fuzz` (the bare-metal template's memory maps).
#![no_main]

use libfuzzer_sys::fuzz_target;
use nrtucode_cli::commands::fuzzing::memory_map;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok((start, end)) = memory_map(text) {
        assert!(end > start, "{start:#x}..{end:#x}");
    }
});
