//! Intel HEX: writing a partition at an address, and reading every record back strictly.

use std::fmt::Write as _;

use super::{FlashFileError, MAX_PARTITION_BYTES};

/// The most runs of contiguous data records read (a partition is one).
const MAX_RUNS: usize = 1 << 16;

/// Data bytes per record written (as binutils' objcopy writes them).
const RECORD_DATA: usize = 16;

const DATA: u8 = 0x00;
const END_OF_FILE: u8 = 0x01;
const EXTENDED_SEGMENT_ADDRESS: u8 = 0x02;
const START_SEGMENT_ADDRESS: u8 = 0x03;
const EXTENDED_LINEAR_ADDRESS: u8 = 0x04;
const START_LINEAR_ADDRESS: u8 = 0x05;

/// Each data record's (address, start in the data bytes, length).
type Spans = Vec<(u64, usize, usize)>;

/// One record line: `:`, count, address, type, data, checksum (two's complement of the sum).
fn record(out: &mut String, kind: u8, address: u16, data: &[u8]) {
    let [hi, lo] = address.to_be_bytes();
    let count = data.len() as u8;
    let sum = data.iter().fold(
        count.wrapping_add(hi).wrapping_add(lo).wrapping_add(kind),
        |s, &b| s.wrapping_add(b),
    );
    let _ = write!(out, ":{count:02X}{address:04X}{kind:02X}");
    for b in data {
        let _ = write!(out, "{b:02X}");
    }
    let _ = writeln!(out, "{:02X}", sum.wrapping_neg());
}

/// `bytes` at `base` (checked by the caller to end at or below 4 GiB) as Intel HEX.
pub(super) fn encode(base: u32, bytes: &[u8]) -> Vec<u8> {
    let mut out = String::with_capacity(bytes.len() * 3 + 64);
    let mut upper: Option<u16> = None;
    let mut address = u64::from(base);
    let mut rest = bytes;
    while !rest.is_empty() {
        // A record never crosses a 64 KiB boundary: the next one starts a new upper half.
        let room = 0x1_0000 - (address & 0xffff) as usize;
        let (now, later) = rest.split_at(rest.len().min(RECORD_DATA).min(room));
        let hi = (address >> 16) as u16;
        if upper != Some(hi) {
            record(&mut out, EXTENDED_LINEAR_ADDRESS, 0, &hi.to_be_bytes());
            upper = Some(hi);
        }
        record(&mut out, DATA, address as u16, now);
        address += now.len() as u64;
        rest = later;
    }
    record(&mut out, END_OF_FILE, 0, &[]);
    out.into_bytes()
}

fn hex_byte(pair: &[u8]) -> Option<u8> {
    let text = std::str::from_utf8(pair).ok()?;
    if text.len() != 2 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u8::from_str_radix(text, 16).ok()
}

/// The data bytes of every record of `file`, one after the other, and each data record's
/// (address, start in those bytes, length), in file order: each line `:` and hex
/// digits with its byte count and checksum right; types 00 to 05 (02 and 04 set the upper
/// address, 03 and 05, start addresses, are ignored); nothing after the end-of-file record
/// but blank lines; a line ending is `\n` or `\r\n`.
pub(super) fn records(file: &[u8]) -> Result<(Vec<u8>, Spans), FlashFileError> {
    // Each data byte is two characters: the decoded bytes are fewer than the file's.
    let mut decoded: Vec<u8> = Vec::new();
    let mut spans: Vec<(u64, usize, usize)> = Vec::new();
    let mut upper: u64 = 0;
    let mut ended = false;
    let mut last_line = 0;
    for (n, line) in file.split(|&b| b == b'\n').enumerate() {
        let line_no = n + 1;
        let bad = |reason: &str| FlashFileError::Ihex {
            line: line_no,
            reason: reason.to_owned(),
        };
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        last_line = line_no;
        if ended {
            return Err(bad("a record after the end-of-file record"));
        }
        let Some(hex) = line.strip_prefix(b":") else {
            return Err(bad("does not start with ':'"));
        };
        if hex.len() % 2 != 0 || hex.len() < 10 {
            return Err(bad("not a whole record of hex digit pairs"));
        }
        let mut raw = Vec::with_capacity(hex.len() / 2);
        for pair in hex.chunks(2) {
            raw.push(hex_byte(pair).ok_or_else(|| bad("not a hex digit"))?);
        }
        let count = usize::from(raw[0]);
        if raw.len() != count + 5 {
            return Err(bad(&format!(
                "byte count {count} but {} data bytes",
                raw.len() - 5
            )));
        }
        if raw.iter().fold(0u8, |s, &b| s.wrapping_add(b)) != 0 {
            return Err(bad("checksum mismatch"));
        }
        let offset = u64::from(u16::from_be_bytes([raw[1], raw[2]]));
        let kind = raw[3];
        let data = &raw[4..4 + count];
        match kind {
            DATA => {
                let address = upper + offset;
                let start = decoded.len();
                if (start + count) as u64 > MAX_PARTITION_BYTES {
                    return Err(FlashFileError::TooLarge {
                        len: (start + count) as u64,
                    });
                }
                decoded.extend_from_slice(data);
                // A record that continues the previous one extends its span: a file as
                // written here is one span per contiguous run, whatever its record count.
                let runs = spans.len();
                match spans.last_mut() {
                    Some((a, _, len)) if *a + *len as u64 == address => *len += count,
                    _ if count == 0 => {}
                    _ if runs == MAX_RUNS => {
                        return Err(bad(&format!("more than {MAX_RUNS} separate runs of data")));
                    }
                    _ => spans.push((address, start, count)),
                }
            }
            END_OF_FILE if count == 0 => ended = true,
            EXTENDED_SEGMENT_ADDRESS if count == 2 => {
                upper = u64::from(u16::from_be_bytes([data[0], data[1]])) << 4;
            }
            EXTENDED_LINEAR_ADDRESS if count == 2 => {
                upper = u64::from(u16::from_be_bytes([data[0], data[1]])) << 16;
            }
            START_SEGMENT_ADDRESS | START_LINEAR_ADDRESS if count == 4 => {}
            END_OF_FILE
            | EXTENDED_SEGMENT_ADDRESS
            | EXTENDED_LINEAR_ADDRESS
            | START_SEGMENT_ADDRESS
            | START_LINEAR_ADDRESS => {
                return Err(bad(&format!("record type {kind:02X} with {count} bytes")));
            }
            _ => return Err(bad(&format!("unknown record type {kind:02X}"))),
        }
    }
    if !ended {
        return Err(FlashFileError::Ihex {
            line: last_line,
            reason: "no end-of-file record (the file is cut short)".to_owned(),
        });
    }
    Ok((decoded, spans))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(text: &str) -> String {
        match records(text.as_bytes()) {
            Err(FlashFileError::Ihex { line, reason }) => format!("{line}: {reason}"),
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn records_are_written_as_intel_specifies() {
        let text = String::from_utf8(encode(0x9000_fff8, &[0xab; 20])).unwrap();
        assert_eq!(
            text,
            ":0200000490006A\n\
             :08FFF800ABABABABABABABABA9\n\
             :02000004900169\n\
             :0C000000ABABABABABABABABABABABABF0\n\
             :00000001FF\n"
        );
        let (data, spans) = records(text.as_bytes()).unwrap();
        // One run: the record after the 64 KiB boundary continues the one before it.
        assert_eq!(spans, vec![(0x9000_fff8, 0, 20)]);
        assert_eq!(data, vec![0xab; 20]);
    }

    #[test]
    fn segment_addresses_start_addresses_and_crlf_are_read() {
        let text =
            ":020000021000EC\r\n:0400000501020304ED\r\n:0200100041426B\r\n:00000001FF\r\n\r\n";
        let (data, spans) = records(text.as_bytes()).unwrap();
        assert_eq!(spans, vec![(0x1_0010, 0, 2)]);
        assert_eq!(data, b"AB");
    }

    #[test]
    fn every_malformed_line_is_refused_with_its_number() {
        let eof = ":00000001FF\n";
        let cases = [
            (format!(":0200100041426C\n{eof}"), "1: checksum mismatch"),
            (
                format!(":0300100041426A\n{eof}"),
                "1: byte count 3 but 2 data bytes",
            ),
            (
                format!("0200100041426B\n{eof}"),
                "1: does not start with ':'",
            ),
            (format!(":02001000414G6B\n{eof}"), "1: not a hex digit"),
            (format!(":0200100041426\n{eof}"), "1: not a whole record"),
            (format!(":0000000AF6\n{eof}"), "1: unknown record type 0A"),
            (
                format!(":0100000400FB\n{eof}"),
                "1: record type 04 with 1 bytes",
            ),
            (
                format!("{eof}:0200100041426B\n"),
                "2: a record after the end-of-file record",
            ),
            (":0200100041426B\n".to_owned(), "1: no end-of-file record"),
        ];
        for (text, expected) in cases {
            assert!(
                refusal(&text).starts_with(expected),
                "{expected}: {}",
                refusal(&text)
            );
        }
    }
}
