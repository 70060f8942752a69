//! Bytes in the log as the `nrtucode` tool prints them: lower-case hex, no separators.

/// Bytes in lower-case hex without separators (`5065d9189b5b8976`), as the `nrtucode` tool
/// prints key IDs and build IDs: defmt's own `{=[u8]:02x}` prints a list (`[50, 65, …]`), and
/// the derived `Format` of a byte array prints decimal.
pub struct Hex<'a>(pub &'a [u8]);

impl defmt::Format for Hex<'_> {
    fn format(&self, f: defmt::Formatter<'_>) {
        for b in self.0 {
            defmt::write!(f, "{=u8:02x}", *b);
        }
    }
}
