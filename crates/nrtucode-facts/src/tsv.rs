//! A minimal reader for the tab-separated fact tables (header line, then one record a line).

/// The records of `text` after its header line, each split on tabs.
///
/// Blank lines and lines starting with `#` are skipped. Panics are not an issue here: the tables
/// are compiled into this crate and checked by its tests.
pub(crate) fn records(text: &str) -> impl Iterator<Item = Vec<&str>> {
    text.lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .skip(1)
        .map(|line| line.split('\t').collect())
}

/// Parses `0x`-prefixed hexadecimal or plain decimal.
pub(crate) fn parse_int(text: &str) -> Option<u64> {
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}
