//! Lowercase hexadecimal text for byte strings (sha256 digests in manifests, listings and
//! reports). One helper for the whole workspace, so every tool spells a hash the same way.

/// `bytes` as lowercase hex, two digits per byte, most significant nibble first.
pub fn lower_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::lower_hex;

    #[test]
    fn every_byte_gives_two_lowercase_digits_high_nibble_first() {
        assert_eq!(lower_hex(&[]), "");
        assert_eq!(lower_hex(&[0x00, 0x0f, 0xa5, 0xf0, 0xff]), "000fa5f0ff");
        let all: Vec<u8> = (0..=255).collect();
        let text = lower_hex(&all);
        assert_eq!(text.len(), 512);
        for (i, pair) in text.as_bytes().chunks(2).enumerate() {
            let pair = std::str::from_utf8(pair).unwrap();
            assert_eq!(u8::from_str_radix(pair, 16).unwrap(), i as u8);
            assert_eq!(pair, pair.to_ascii_lowercase());
        }
    }
}
