//! Rust values as C source text: byte arrays and strings as C string literals, optional symbols
//! as pointers, and the one-pass placeholder filling used for `c/resolvers.c`.

/// Appends `bytes` as a sequence of C string literals, one line per 64 bytes. Printable ASCII
/// stays literal; everything else is a three-digit octal escape, which a following digit cannot
/// extend.
pub(crate) fn push_c_string(out: &mut String, bytes: &[u8]) {
    for chunk in bytes.chunks(64) {
        out.push_str("    \"");
        for &b in chunk {
            match b {
                b'\\' => out.push_str("\\\\"),
                b'"' => out.push_str("\\\""),
                b'?' => out.push_str("\\?"),
                0x20..=0x7e => out.push(char::from(b)),
                _ => {
                    out.push('\\');
                    out.push(char::from(b'0' + (b >> 6)));
                    out.push(char::from(b'0' + ((b >> 3) & 7)));
                    out.push(char::from(b'0' + (b & 7)));
                }
            }
        }
        out.push_str("\"\n");
    }
}

/// `text` as the inside of a C string literal (newline, quote and backslash escaped).
pub(crate) fn c_string_literal(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out
}

/// A getter symbol as a C pointer initialiser: the symbol, or `NULL`.
pub(crate) fn c_pointer(sym: Option<&str>) -> &str {
    sym.unwrap_or("NULL")
}

/// Appends `template` with every occurrence of each placeholder name replaced by its value, in one
/// left-to-right pass, so a value that happens to contain a placeholder name is never replaced
/// again.
pub(crate) fn push_filled(out: &mut String, template: &str, placeholders: &[(&str, &str)]) {
    let mut rest = template;
    while !rest.is_empty() {
        match placeholders.iter().find(|(name, _)| rest.starts_with(name)) {
            Some((name, value)) => {
                out.push_str(value);
                rest = &rest[name.len()..];
            }
            None => {
                let next = rest.chars().next().map_or(1, char::len_utf8);
                out.push_str(&rest[..next]);
                rest = &rest[next..];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_strings_round_trip() {
        let bytes: Vec<u8> = (0..=255u8).chain(b"0?\"\\7".iter().copied()).collect();
        let mut out = String::new();
        push_c_string(&mut out, &bytes);
        // Decode our own encoding back.
        let mut decoded = Vec::new();
        for line in out.lines() {
            let inner = line
                .trim()
                .strip_prefix('"')
                .unwrap()
                .strip_suffix('"')
                .unwrap();
            let b = inner.as_bytes();
            let mut i = 0;
            while i < b.len() {
                if b[i] == b'\\' {
                    if b[i + 1].is_ascii_digit() {
                        let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
                        decoded.push(v);
                        i += 4;
                    } else {
                        decoded.push(b[i + 1]);
                        i += 2;
                    }
                } else {
                    decoded.push(b[i]);
                    i += 1;
                }
            }
        }
        assert_eq!(decoded, bytes);
    }

    #[test]
    fn string_literals_escape_newline_quote_and_backslash() {
        assert_eq!(c_string_literal("a\"b\\c\n"), "a\\\"b\\\\c\\n");
    }

    #[test]
    fn placeholders_are_filled_once_left_to_right() {
        let mut out = String::new();
        push_filled(
            &mut out,
            "int A(void); int B(void); é A",
            &[("A", "B_x"), ("B", "A_y")],
        );
        // The value of A contains B and vice versa; neither is replaced a second time.
        assert_eq!(out, "int B_x(void); int A_y(void); é B_x");
    }
}
