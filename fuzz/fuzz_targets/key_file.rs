//! Fuzzes the key file parsers `nrtucode` reads `--key` and `--public-key` with:
//! `nrtucode_pack::SigningKey::from_pem` (PKCS#8) and `public_key_from_pem` (SPKI), on any
//! bytes as the CLI hands them over (UTF-8 text of at most `MAX_PEM_BYTES`; other bytes are
//! refused before parsing, and so here). Nothing may panic; a key parsed must round-trip
//! through its PEM. Seeds: `cargo xtask fuzz` (the committed test keys).
#![no_main]

use libfuzzer_sys::fuzz_target;
use nrtucode_pack::{MAX_PEM_BYTES, SigningKey, public_key_from_pem, public_key_pem};

fuzz_target!(|data: &[u8]| {
    if data.len() > MAX_PEM_BYTES {
        return;
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(key) = SigningKey::from_pem(text) {
        let again = SigningKey::from_pem(&key.to_pem()).expect("a key's own PEM parses");
        assert_eq!(again.public_key(), key.public_key());
    }
    if let Ok(public) = public_key_from_pem(text) {
        let again = public_key_from_pem(&public_key_pem(&public)).expect("a key's own PEM parses");
        assert_eq!(again, public);
    }
});
