//! The blob directory format: what `nrtucode carve` writes and `NRTUCODE_BLOB_DIR` embeds.
//!
//! A blob directory holds `manifest.tsv` and one file per distinct blob content, named
//! `<sha256>.bin`. The manifest starts with `#` header lines, then a column line, then one row
//! per getter:
//!
//! ```text
//! # nrtucode blob directory v1
//! # source→libnrtucode_internal.so
//! # source_size→10276288
//! # source_sha256→b7c67e89…
//! # build_id→9cbf78c6…
//! symbol→gen→class→engine→variant→region→size→sha256→blob_va→file
//! CAYMAN_NX_ACT_PERF_IRAM_get→CAYMAN→NX→ACT→PERF→IRAM→81344→…→0x58f40→….bin
//! ```
//!
//! (`→` stands for a tab.)
//!
//! `size` is decimal, `blob_va` hexadecimal; a boundary cursor has size 0 and file `-`. Rows
//! are sorted by symbol and the header carries no timestamp, so the same input gives the same
//! bytes.
//!
//! What is written is read back as written: header values (the source's file name may hold
//! any character) are escaped, `\\` for a backslash, `\t`, `\n`, `\r` and `\xNN` for the other
//! ASCII control characters, and [`Manifest::parse`] undoes it. A symbol cannot be escaped (it
//! is matched against the facts as is): one that is empty or holds a control character
//! ([`symbol_problem`]) is never written (`nrtucode carve` refuses the library with a typed
//! error) and never read. Header lines (`# `) come only before the column line; after it every
//! line is a row, so no symbol can forge a header.

use std::fmt;

use crate::facts::GetterId;
use crate::tsv::parse_int;

/// File name of the manifest inside a blob directory.
pub const MANIFEST_FILE: &str = "manifest.tsv";
/// First line of every manifest.
pub const MAGIC: &str = "# nrtucode blob directory v1";
/// The column line.
pub const COLUMNS: &str =
    "symbol\tgen\tclass\tengine\tvariant\tregion\tsize\tsha256\tblob_va\tfile";

/// Where the blobs of a directory came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ManifestHeader {
    /// File name of the source library.
    pub source: String,
    /// Its size in bytes.
    pub source_size: u64,
    /// Its sha256, lowercase hex.
    pub source_sha256: String,
    /// Its GNU build ID in hex, or `unknown`.
    pub build_id: String,
}

/// One getter of a blob directory. The identity's fields read through (`row.symbol`, …).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestRow {
    /// Getter symbol (with `_get`; a positional name for a stripped library), generation,
    /// class, engine, variant and region.
    pub id: GetterId<String>,
    /// Blob size in bytes.
    pub size: u64,
    /// sha256 of the blob bytes, lowercase hex.
    pub sha256: String,
    /// The address the getter returns in the source library.
    pub blob_va: u64,
    /// File name inside the directory; `None` for an empty blob.
    pub file: Option<String>,
}

/// A parsed `manifest.tsv`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    /// Provenance.
    pub header: ManifestHeader,
    /// Rows, sorted by symbol when rendered.
    pub rows: Vec<ManifestRow>,
}

/// A manifest that does not follow the format.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ManifestError {
    /// 1-based line number.
    pub line: usize,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{MANIFEST_FILE} line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ManifestError {}

impl std::ops::Deref for ManifestRow {
    type Target = GetterId<String>;

    fn deref(&self) -> &GetterId<String> {
        &self.id
    }
}

/// Why `symbol` cannot be a manifest row's symbol, if it cannot: it is empty or holds a
/// control character (a tab or a newline would split or end the row).
pub fn symbol_problem(symbol: &str) -> Option<String> {
    if symbol.is_empty() {
        return Some("the symbol is empty".into());
    }
    symbol.chars().find(|c| c.is_control()).map(|c| {
        format!(
            "symbol {:?} holds the control character {c:?}, which {MANIFEST_FILE} cannot hold",
            symbol
        )
    })
}

/// Escapes a header value (see the module documentation).
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c.is_ascii_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Undoes [`escape`]; `None` for a malformed escape.
fn unescape(value: &str) -> Option<String> {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            '\\' => out.push('\\'),
            't' => out.push('\t'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            'x' => {
                let hex: String = chars.by_ref().take(2).collect();
                let b = u8::from_str_radix(&hex, 16)
                    .ok()
                    .filter(|b| b.is_ascii_control())?;
                out.push(char::from(b));
            }
            _ => return None,
        }
    }
    Some(out)
}

impl Manifest {
    /// Parses manifest text.
    pub fn parse(text: &str) -> Result<Self, ManifestError> {
        let err = |line: usize, message: String| ManifestError { line, message };
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        match lines.next() {
            Some((_, MAGIC)) => {}
            _ => return Err(err(1, format!("expected {MAGIC:?}"))),
        }
        let mut manifest = Manifest::default();
        let mut saw_columns = false;
        for (n, line) in lines {
            if line.trim().is_empty() {
                continue;
            }
            if let Some(rest) = line.strip_prefix("# ").filter(|_| !saw_columns) {
                let (key, value) = rest.split_once('\t').unwrap_or((rest, ""));
                let value = &unescape(value)
                    .ok_or_else(|| err(n, format!("{key}: malformed escape in {value:?}")))?;
                let h = &mut manifest.header;
                match key {
                    "source" => h.source = value.to_owned(),
                    "source_size" => {
                        h.source_size = value
                            .parse()
                            .map_err(|_| err(n, format!("source_size {value:?}")))?
                    }
                    "source_sha256" => h.source_sha256 = value.to_owned(),
                    "build_id" => h.build_id = value.to_owned(),
                    _ => {} // unknown header lines are comments
                }
                continue;
            }
            if !saw_columns {
                if line != COLUMNS {
                    return Err(err(n, format!("expected the column line {COLUMNS:?}")));
                }
                saw_columns = true;
                continue;
            }
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() != 10 {
                return Err(err(n, format!("expected 10 columns, found {}", f.len())));
            }
            if let Some(problem) = symbol_problem(f[0]) {
                return Err(err(n, problem));
            }
            if let Some(bad) = f[1..6].iter().find(|t| t.chars().any(char::is_control)) {
                return Err(err(n, format!("{bad:?} holds a control character")));
            }
            let int = |i: usize, what: &str| {
                parse_int(f[i]).ok_or_else(|| err(n, format!("{what} {:?} is not a number", f[i])))
            };
            let sha256 = f[7];
            if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(err(n, format!("sha256 {sha256:?} is not 64 hex digits")));
            }
            let file = match f[9] {
                "-" => None,
                name if is_plain_file_name(name) => Some(name.to_owned()),
                name => return Err(err(n, format!("file {name:?} is not a plain file name"))),
            };
            manifest.rows.push(ManifestRow {
                id: GetterId {
                    symbol: f[0].to_owned(),
                    gen_name: f[1].to_owned(),
                    class: f[2].to_owned(),
                    engine: f[3].to_owned(),
                    variant: f[4].to_owned(),
                    region: f[5].to_owned(),
                },
                size: int(6, "size")?,
                sha256: sha256.to_ascii_lowercase(),
                blob_va: int(8, "blob_va")?,
                file,
            });
        }
        if !saw_columns {
            return Err(err(text.lines().count(), "no column line".into()));
        }
        Ok(manifest)
    }

    /// Renders the manifest, rows sorted by symbol.
    pub fn render(&self) -> String {
        let h = &self.header;
        let mut out = format!(
            "{MAGIC}\n# source\t{}\n# source_size\t{}\n# source_sha256\t{}\n# build_id\t{}\n{COLUMNS}\n",
            escape(&h.source),
            h.source_size,
            escape(&h.source_sha256),
            escape(&h.build_id)
        );
        let mut rows: Vec<&ManifestRow> = self.rows.iter().collect();
        rows.sort_by(|a, b| a.symbol.cmp(&b.symbol));
        for r in rows {
            out.push_str(&format!(
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:#x}\t{}\n",
                r.symbol,
                r.gen_name,
                r.class,
                r.engine,
                r.variant,
                r.region,
                r.size,
                r.sha256,
                r.blob_va,
                r.file.as_deref().unwrap_or("-")
            ));
        }
        out
    }

    /// The row of `symbol` (with `_get`).
    pub fn row(&self, symbol: &str) -> Option<&ManifestRow> {
        self.rows.iter().find(|r| r.symbol == symbol)
    }
}

/// `true` when `name` names a file directly inside the directory (no separators, no `..`) and
/// can be written back as it was read: the file column is not escaped, so a control character
/// (a `\r` before the end of the text, say) would not survive [`Manifest::render`].
fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\'])
        && !name.chars().any(char::is_control)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Manifest {
        Manifest {
            header: ManifestHeader {
                source: "lib.so".into(),
                source_size: 42,
                source_sha256: "ab".repeat(32),
                build_id: "unknown".into(),
            },
            rows: vec![ManifestRow {
                id: GetterId {
                    symbol: "X_get".into(),
                    gen_name: "CAYMAN".into(),
                    class: "NX".into(),
                    engine: "ACT".into(),
                    variant: "PERF".into(),
                    region: "IRAM".into(),
                },
                size: 7,
                sha256: "cd".repeat(32),
                blob_va: 0x1234,
                file: Some(format!("{}.bin", "cd".repeat(32))),
            }],
        }
    }

    #[test]
    fn render_then_parse_round_trips() {
        let m = sample();
        assert_eq!(Manifest::parse(&m.render()).unwrap(), m);
    }

    #[test]
    fn bad_manifests_are_rejected_with_a_line() {
        assert_eq!(Manifest::parse("hello").unwrap_err().line, 1);
        let text = sample().render().replace("\t7\t", "\tseven\t");
        let e = Manifest::parse(&text).unwrap_err();
        assert_eq!(e.line, 7);
        assert!(e.to_string().contains("size"), "{e}");
        let text = sample().render().replace(".bin", "/../../etc/passwd");
        assert!(Manifest::parse(&text).is_err());
    }

    #[test]
    fn header_values_round_trip_and_no_row_forges_a_header() {
        let mut m = sample();
        m.header.source = "lib\t\n# build_id\tforged\\x\u{1}é.so".into();
        let text = m.render();
        assert_eq!(text.lines().count(), 7, "{text}");
        assert_eq!(Manifest::parse(&text).unwrap(), m);
        // A line starting with `# ` after the column line is a row, not a header.
        let forged = format!("{text}# build_id\tforged\n");
        let e = Manifest::parse(&forged).unwrap_err();
        assert_eq!(e.line, 8, "{e}");
        // A symbol with a control character is neither written (the carve refuses it) nor read.
        assert!(symbol_problem("A\tB").is_some() && symbol_problem("").is_some());
        assert!(symbol_problem("CAYMAN_NX_ACT_PERF_IRAM_get").is_none());
        let text = sample().render().replace("X_get", "X\u{7}get");
        assert!(Manifest::parse(&text).is_err());
    }

    #[test]
    fn a_file_name_that_would_not_survive_rendering_is_refused() {
        // Found by the `blob_dir` fuzz target: the last line, with no newline after it, ends in
        // `\r`s that `str::lines` keeps; rendered with a `\n`, one of them became a line ending.
        let text = sample().render();
        let unterminated = format!("{}\r\r", text.trim_end_matches('\n'));
        let e = Manifest::parse(&unterminated).unwrap_err();
        assert_eq!(e.line, 7, "{e}");
        assert!(e.to_string().contains("plain file name"), "{e}");
        for bad in ["a\u{7}.bin", "a\u{85}.bin", "a\\b.bin", ".."] {
            let text = sample()
                .render()
                .replace(&format!("{}.bin", "cd".repeat(32)), bad);
            assert!(Manifest::parse(&text).is_err(), "{bad:?} accepted");
        }
        // A CRLF manifest is read as its LF twin, which renders back the same.
        let crlf = sample().render().replace('\n', "\r\n");
        assert_eq!(Manifest::parse(&crlf).unwrap(), sample());
    }
}
