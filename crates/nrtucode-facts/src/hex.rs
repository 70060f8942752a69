//! Lowercase hexadecimal text for byte strings (sha256 digests in manifests, listings and
//! reports), and the bytes such text spells. One pair of helpers for the whole workspace, so
//! every tool spells a hash the same way and reads one back the same way.

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

/// The bytes `text` spells in hex (two digits a byte, most significant first, either case);
/// `None` for an odd number of digits or a character that is not a hex digit (no sign, no
/// `0x`, no space).
pub fn bytes_of_hex(text: &str) -> Option<Vec<u8>> {
    let digits = text.as_bytes();
    if digits.len() % 2 != 0 {
        return None;
    }
    let digit = |c: u8| char::from(c).to_digit(16);
    digits
        .chunks_exact(2)
        .map(|pair| Some((digit(pair[0])? << 4 | digit(pair[1])?) as u8))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{bytes_of_hex, lower_hex};

    #[test]
    fn hex_text_reads_back_to_its_bytes_and_nothing_else_does() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(bytes_of_hex(&lower_hex(&all)), Some(all));
        assert_eq!(bytes_of_hex("A5f0"), Some(vec![0xa5, 0xf0]));
        assert_eq!(bytes_of_hex(""), Some(vec![]));
        for bad in ["a", "+f", "0x", "g0", " 0", "0é"] {
            assert_eq!(bytes_of_hex(bad), None, "{bad:?}");
        }
    }

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
