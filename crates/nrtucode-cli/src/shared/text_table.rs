//! Aligned plain-text tables for human output.

/// Renders `rows` under `headers`, columns padded to their widest cell and separated by two
/// spaces, trailing spaces trimmed, one line per row.
pub(crate) fn render(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(cell.chars().count());
            } else {
                widths.push(cell.chars().count());
            }
        }
    }
    let mut out = String::new();
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut l = String::new();
        for (i, cell) in cells.enumerate() {
            if i > 0 {
                l.push_str("  ");
            }
            l.push_str(cell);
            let pad = widths
                .get(i)
                .copied()
                .unwrap_or(0)
                .saturating_sub(cell.chars().count());
            l.extend(std::iter::repeat_n(' ', pad));
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(&mut headers.iter().copied());
    for row in rows {
        line(&mut row.iter().map(String::as_str));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_line_up() {
        let t = super::render(&["a", "bb"], &[vec!["xxx".into(), "y".into()]]);
        assert_eq!(t, "a    bb\nxxx  y\n");
    }
}
