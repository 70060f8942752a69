//! The one scanner of HTML link attributes, for the Markdown pages' raw HTML and the rendered
//! rustdoc ([`crate::links`]).

/// Link targets of `line` written as HTML attributes `href="…"` / `src='…'`.
pub fn html_targets(line: &str, out: &mut Vec<String>) {
    for attr in ["href", "src"] {
        let mut rest = line;
        while let Some(at) = rest.find(attr) {
            let after = rest[at + attr.len()..].trim_start();
            rest = &rest[at + attr.len()..];
            let Some(after) = after.strip_prefix('=') else {
                continue;
            };
            let after = after.trim_start();
            let Some(quote) = after.chars().next().filter(|c| *c == '"' || *c == '\'') else {
                continue;
            };
            if let Some(end) = after[1..].find(quote)
                && end > 0
            {
                out.push(after[1..=end].to_string());
            }
        }
    }
}
