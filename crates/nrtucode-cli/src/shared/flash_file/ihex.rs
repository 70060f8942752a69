//! Intel HEX: writing a partition at an address, and reading every record back strictly.
//!
//! Each record line is written and parsed by the `ihex` crate (its byte count, type, payload
//! and checksum); what is ours is the file around the records: the 16-byte records and the
//! extended linear address before each 64 KiB, line numbers in every refusal, `\n` or `\r\n`
//! line endings, nothing after the end-of-file record, the bound on the bytes decoded and on
//! the runs of data, and the addresses put together (`assemble`, in the parent module).

use ihex::{ReaderError, Record};

use super::{FlashFileError, MAX_PARTITION_BYTES};

/// The most runs of contiguous data records read (a partition is one).
const MAX_RUNS: usize = 1 << 16;

/// Data bytes per record written (as binutils' objcopy writes them).
const RECORD_DATA: usize = 16;

/// Each data record's (address, start in the data bytes, length).
type Spans = Vec<(u64, usize, usize)>;

/// One record line, `\n`-terminated. (A record of at most 16 data bytes always formats.)
fn record(out: &mut String, record: &Record) {
    if let Ok(line) = record.to_record_string() {
        out.push_str(&line);
        out.push('\n');
    }
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
            record(&mut out, &Record::ExtendedLinearAddress(hi));
            upper = Some(hi);
        }
        record(
            &mut out,
            &Record::Data {
                offset: address as u16,
                value: now.to_vec(),
            },
        );
        address += now.len() as u64;
        rest = later;
    }
    record(&mut out, &Record::EndOfFile);
    out.into_bytes()
}

/// Why the record `line` (hex digit pairs after its `:`) was refused, as the tool says it.
fn reason(line: &str, error: &ReaderError) -> String {
    // The byte count and the type, when the digits hold them (the crate checked they are hex).
    let byte = |at: usize| {
        line.get(at..at + 2)
            .and_then(|h| u8::from_str_radix(h, 16).ok())
    };
    let (count, kind) = (byte(1).unwrap_or(0), byte(7).unwrap_or(0));
    let payload = (line.len().saturating_sub(1) / 2).saturating_sub(5);
    match error {
        ReaderError::MissingStartCode => "does not start with ':'".to_owned(),
        ReaderError::ContainsInvalidCharacters => "not a hex digit".to_owned(),
        ReaderError::RecordTooShort
        | ReaderError::RecordTooLong
        | ReaderError::RecordNotEvenLength => "not a whole record of hex digit pairs".to_owned(),
        ReaderError::ChecksumMismatch(..) => "checksum mismatch".to_owned(),
        ReaderError::PayloadLengthMismatch => {
            format!("byte count {count} but {payload} data bytes")
        }
        ReaderError::UnsupportedRecordType(kind) => format!("unknown record type {kind:02X}"),
        ReaderError::InvalidLengthForType => {
            format!("record type {kind:02X} with {count} bytes")
        }
        // A kind of refusal added to the crate later.
        #[allow(unreachable_patterns)]
        _ => error.to_string(),
    }
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
        let bad = |reason: String| FlashFileError::Ihex {
            line: line_no,
            reason,
        };
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        last_line = line_no;
        if ended {
            return Err(bad("a record after the end-of-file record".to_owned()));
        }
        let Ok(line) = std::str::from_utf8(line) else {
            return Err(bad(if line.first() == Some(&b':') {
                "not a hex digit".to_owned()
            } else {
                "does not start with ':'".to_owned()
            }));
        };
        match Record::from_record_string(line).map_err(|e| bad(reason(line, &e)))? {
            Record::Data { offset, value } => {
                let address = upper + u64::from(offset);
                let count = value.len();
                let start = decoded.len();
                if (start + count) as u64 > MAX_PARTITION_BYTES {
                    return Err(FlashFileError::TooLarge {
                        len: (start + count) as u64,
                        max: MAX_PARTITION_BYTES,
                    });
                }
                decoded.extend_from_slice(&value);
                // A record that continues the previous one extends its span: a file as
                // written here is one span per contiguous run, whatever its record count.
                let runs = spans.len();
                match spans.last_mut() {
                    Some((a, _, len)) if *a + *len as u64 == address => *len += count,
                    _ if count == 0 => {}
                    _ if runs == MAX_RUNS => {
                        return Err(bad(format!("more than {MAX_RUNS} separate runs of data")));
                    }
                    _ => spans.push((address, start, count)),
                }
            }
            Record::EndOfFile => ended = true,
            Record::ExtendedSegmentAddress(segment) => upper = u64::from(segment) << 4,
            Record::ExtendedLinearAddress(linear) => upper = u64::from(linear) << 16,
            Record::StartSegmentAddress { .. } | Record::StartLinearAddress(_) => {}
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
