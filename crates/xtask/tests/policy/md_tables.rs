//! The repository's Markdown tables render whole: in every tracked `*.md` file, outside fenced
//! code blocks, each table (a header row, a delimiter row such as `|---|:--:|`, body rows) has
//! as many cells in its delimiter row and in every body row as in its header, and no `|` row
//! sits apart from a table (a blank line ends a table in GitHub Flavored Markdown, so rows after
//! one fall out of it and render as a paragraph).
//!
//! Cells are counted as GFM splits them: on every `|` not escaped with a backslash, inside code
//! spans too (`a \| b` is one cell; `` `a | b` `` is two), a leading and a trailing `|`
//! optional. Self-contained: [`check`] is one row of the policy test's checks.

use std::path::Path;
use std::process::Command;

/// Checks every tracked `*.md` file under `root` (from `git ls-files`), failing with one line
/// per broken table row, as `file:line: problem`.
pub fn check(root: &Path) -> Result<(), String> {
    let listed = Command::new("git")
        .args(["ls-files", "-z", "--", "*.md"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !listed.status.success() {
        return Err(format!(
            "git ls-files failed: {}",
            String::from_utf8_lossy(&listed.stderr).trim()
        ));
    }
    let files: Vec<String> = listed
        .stdout
        .split(|b| *b == 0)
        .filter(|name| !name.is_empty())
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .collect();
    if files.is_empty() {
        return Err(format!(
            "git ls-files lists no *.md file in {}",
            root.display()
        ));
    }
    let mut problems = Vec::new();
    for file in &files {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        problems.extend(
            check_text(&text)
                .into_iter()
                .map(|(line, problem)| format!("{file}:{line}: {problem}")),
        );
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "Markdown tables that do not render whole:\n  {}",
            problems.join("\n  ")
        ))
    }
}

/// The cells of a table row as GFM splits them (contents untrimmed), or `None` if `line` has
/// no unescaped `|` (it cannot be a header or delimiter row).
fn cells(line: &str) -> Option<Vec<&str>> {
    let line = line.trim();
    // Byte offsets of the unescaped pipes: a backslash escapes the character after it.
    let mut pipes = Vec::new();
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '|' => pipes.push(i),
            _ => {}
        }
    }
    if pipes.is_empty() {
        return None;
    }
    let mut bounds = vec![0];
    for &p in &pipes {
        bounds.push(p);
        bounds.push(p + 1);
    }
    bounds.push(line.len());
    let mut out: Vec<&str> = bounds.chunks(2).map(|b| &line[b[0]..b[1]]).collect();
    // A leading and a trailing pipe open and close the row; they make no cell of their own.
    if pipes[0] == 0 {
        out.remove(0);
    }
    if pipes.last() == Some(&(line.len() - 1)) && !out.is_empty() {
        out.pop();
    }
    Some(out)
}

/// Whether `line` is a delimiter row: cells of `-` with optional `:` at either end.
fn delimiter(line: &str) -> Option<usize> {
    let cells = cells(line)?;
    let ok = !cells.is_empty()
        && cells.iter().all(|cell| {
            let cell = cell.trim();
            let inner = cell.strip_prefix(':').unwrap_or(cell);
            let inner = inner.strip_suffix(':').unwrap_or(inner);
            !inner.is_empty() && inner.bytes().all(|b| b == b'-')
        });
    ok.then_some(cells.len())
}

/// The fence (its character and length) that `line` opens or closes, if it is one.
fn fence(line: &str) -> Option<(char, usize)> {
    let line = line.trim_start();
    let c = line.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = line.chars().take_while(|x| *x == c).count();
    (len >= 3).then_some((c, len))
}

/// Whether a non-blank line without `|` starts a block of its own (it ends a table rather than
/// becoming a one-cell row of it).
fn starts_block(line: &str) -> bool {
    let t = line.trim_start();
    let list = |marker: &str| t.strip_prefix(marker).is_some_and(|r| r.starts_with(' '));
    let ordered = t.split_once(['.', ')']).is_some_and(|(n, r)| {
        !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && r.starts_with(' ')
    });
    t.starts_with('#')
        || t.starts_with('>')
        || t.starts_with('<')
        || fence(t).is_some()
        || list("-")
        || list("*")
        || list("+")
        || ordered
        || delimiter_like_break(t)
}

/// A thematic break (`---`, `***`, `___`).
fn delimiter_like_break(t: &str) -> bool {
    let s: String = t.chars().filter(|c| !c.is_whitespace()).collect();
    s.len() >= 3
        && ["-", "*", "_"]
            .iter()
            .any(|m| s.chars().all(|c| c.to_string() == *m))
}

/// Whether `line` looks like a table row (starts and ends with a pipe, at least two of them).
fn row_like(line: &str) -> bool {
    let t = line.trim();
    t.len() >= 2 && t.starts_with('|') && t.ends_with('|')
}

/// The problems of one Markdown text, as (1-based line, problem).
pub fn check_text(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut problems = Vec::new();
    let mut open_fence: Option<(char, usize)> = None;
    // The header line of the last table and the line of the blank that ended it, while only
    // blank lines have followed it.
    let mut ended: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some((c, len)) = open_fence {
            if fence(line).is_some_and(|(c2, len2)| c2 == c && len2 >= len)
                && line.trim().chars().all(|x| x == c)
            {
                open_fence = None;
            }
            i += 1;
            continue;
        }
        if let Some(f) = fence(line) {
            open_fence = Some(f);
            ended = None;
            i += 1;
            continue;
        }
        if line.trim().is_empty() {
            i += 1;
            continue;
        }
        let header = cells(line).map(|c| c.len());
        let delim = lines.get(i + 1).and_then(|next| delimiter(next));
        if let (Some(header), Some(delim)) = (header, delim) {
            if delim != header {
                problems.push((
                    i + 2,
                    format!(
                        "the delimiter row has {delim} cells under a header of {header}: no table renders"
                    ),
                ));
            }
            let mut j = i + 2;
            while j < lines.len() {
                let row = lines[j];
                if row.trim().is_empty() || fence(row).is_some() {
                    break;
                }
                let n = match cells(row) {
                    Some(c) => c.len(),
                    None if starts_block(row) => break,
                    None => 1,
                };
                if n != header {
                    problems.push((
                        j + 1,
                        format!("{n} cells in a row under a header of {header}"),
                    ));
                }
                j += 1;
            }
            ended = lines
                .get(j)
                .filter(|l| l.trim().is_empty())
                .map(|_| (i + 1, j + 1));
            i = j;
            continue;
        }
        if row_like(line) {
            let problem = match ended {
                Some((header, blank)) => format!(
                    "a row fallen out of the table of line {header}: the blank line {blank} ends that table"
                ),
                None => "a `|` row outside any table (no delimiter row under a header?)".to_owned(),
            };
            problems.push((i + 1, problem));
            // Further rows of the same run are the same fault: name only the first.
            while lines.get(i + 1).is_some_and(|l| row_like(l)) {
                i += 1;
            }
        }
        ended = None;
        i += 1;
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(text: &str) -> Vec<usize> {
        check_text(text).into_iter().map(|(line, _)| line).collect()
    }

    #[test]
    fn a_good_table_passes() {
        let text = "# T\n\n| a | b | c |\n|---|:--:|---:|\n| 1 | 2 | 3 |\n| 4 | | 6 |\n\nText.\n";
        assert_eq!(check_text(text), []);
        // Outer pipes are optional.
        assert_eq!(check_text("a | b\n--- | ---\n1 | 2\n"), []);
    }

    #[test]
    fn five_cells_under_six_fail() {
        let text = "| a | b | c | d | e | f |\n|---|---|---|---|---|---|\n| 1 | 2 | 3 | 4 | 5 | 6 |\n| 1 | 2 | 3 | 4 | 5 |\n";
        let problems = check_text(text);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].0, 4);
        assert!(problems[0].1.contains("5 cells"), "{problems:?}");
    }

    #[test]
    fn a_delimiter_row_of_another_width_fails() {
        assert_eq!(lines_of("| a | b |\n|---|---|---|\n| 1 | 2 |\n"), [2]);
    }

    #[test]
    fn a_blank_line_splitting_a_table_fails() {
        let text = "| a | b |\n|---|---|\n| 1 | 2 |\n\n| 3 | 4 |\n| 5 | 6 |\n\nText.\n";
        let problems = check_text(text);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].0, 5);
        assert!(problems[0].1.contains("blank line 4"), "{problems:?}");
        // Two tables one after the other are fine.
        let two = "| a | b |\n|---|---|\n| 1 | 2 |\n\n| c |\n|---|\n| 3 |\n";
        assert_eq!(check_text(two), []);
    }

    #[test]
    fn an_escaped_pipe_is_one_cell() {
        let text = "| expr | value |\n|---|---|\n| `a \\| b` | 1 |\n| x \\| y | 2 |\n";
        assert_eq!(check_text(text), []);
        // Unescaped, a pipe inside a code span still splits the cell (as on GitHub).
        assert_eq!(
            lines_of("| expr | value |\n|---|---|\n| `a | b` | 1 |\n"),
            [3]
        );
        assert_eq!(cells("| a \\| b | c |").unwrap().len(), 2);
        assert_eq!(cells("| a \\\\| b |").unwrap().len(), 2);
    }

    #[test]
    fn code_fences_are_ignored() {
        let text = "```text\n| a | b |\n|---|---|\n| 1 |\n\n| 2 | 3 |\n```\n~~~~\n| x |\n```\n| y |\n~~~~\n";
        assert_eq!(check_text(text), []);
    }

    #[test]
    fn a_line_glued_under_a_table_is_a_row_unless_it_starts_a_block() {
        assert_eq!(
            lines_of("| a | b |\n|---|---|\n| 1 | 2 |\nglued text\n"),
            [4]
        );
        assert_eq!(
            check_text("| a | b |\n|---|---|\n| 1 | 2 |\n## Next\n- item\n"),
            []
        );
    }

    #[test]
    fn rows_without_a_delimiter_fail() {
        assert_eq!(lines_of("Text.\n\n| a | b |\n| 1 | 2 |\n"), [3]);
    }
}
