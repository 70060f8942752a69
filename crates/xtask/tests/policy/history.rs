//! History stays in CHANGELOG.md and the commits: no source file, page or script of the
//! repository refers to one of the project's issues by number ("issue 9", "issue #9"), which
//! means nothing to a reader of the code. A reference to another project's tracker
//! (`mcu-tools/mcuboot#2781`) is a citation and stays.

use std::path::Path;

/// The tracked files this rule reads, by extension.
const KINDS: [&str; 5] = ["rs", "md", "toml", "sh", "c"];

/// Where `text` names an issue by number: each line number with the words found.
pub fn references(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let lower = line.to_ascii_lowercase();
        let mut rest = lower.as_str();
        while let Some(at) = rest.find("issue") {
            let after = rest[at + "issue".len()..].trim_start_matches([' ', '#']);
            let digits = after.chars().take_while(char::is_ascii_digit).count();
            // "issue" followed (after spaces or '#') by a number; not "issues 3" ("issue" of a
            // longer word) and not "issue" at the end of a line.
            let whole_word = !rest[at + "issue".len()..].starts_with('s');
            if digits > 0 && whole_word {
                found.push((n + 1, format!("issue {}", &after[..digits])));
            }
            rest = &rest[at + "issue".len()..];
        }
    }
    found
}

/// Every tracked file but CHANGELOG.md, by `git ls-files`.
pub fn check(root: &Path, problems: &mut Vec<String>) -> Result<(), String> {
    let out = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run git ls-files: {e}"))?;
    if !out.status.success() {
        return Err("git ls-files failed".into());
    }
    for name in out.stdout.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let name = String::from_utf8_lossy(name);
        let kind = name.rsplit('.').next().unwrap_or("");
        // This file spells the pattern in its own examples.
        if name.ends_with("CHANGELOG.md")
            || name.ends_with("tests/policy/history.rs")
            || !KINDS.contains(&kind)
        {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(root.join(name.as_ref())) else {
            continue; // deleted in the work tree, or not text
        };
        for (line, words) in references(&text) {
            problems.push(format!(
                "{name}:{line}: names {words} (history goes in CHANGELOG.md)"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::references;

    #[test]
    fn an_issue_number_is_found_and_a_citation_is_not() {
        assert_eq!(
            references("a race, 3 s: issue 9), and\nsee Issue #12.\n"),
            [(1, "issue 9".to_string()), (2, "issue 12".to_string())]
        );
        assert!(references("mcu-tools/mcuboot#2781; the issues 3 and an issue.").is_empty());
    }
}
