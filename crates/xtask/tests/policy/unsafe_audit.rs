//! The core's `unsafe` budget, checked on its sources (a check of `tests/policy/main.rs`; it was an
//! integration test of the core): no `unsafe` block, fn, impl or extern anywhere in `src/`, with
//! every feature; the one `unsafe` is the `#[unsafe(link_section = …)]` attribute inside the
//! hand-written `embed_blob!` in `src/catalog.rs`; `src/lib.rs` denies `unsafe_code`; the build
//! script spells neither `unsafe` nor a section (the module it writes is checked by the core's
//! own unit test, which can read its `OUT_DIR`).

use std::path::{Path, PathBuf};

/// `text` without `//` comments (doc comments included) and without string literals' contents,
/// so a link in a doc comment or a path in a message is not a use.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_string = false;
        let mut escaped = false;
        let mut prev = '\0';
        for c in line.chars() {
            if in_string {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == '"' {
                    in_string = false;
                    out.push('"');
                }
                continue;
            }
            if c == '/' && prev == '/' {
                out.pop();
                break;
            }
            if c == '"' {
                in_string = true;
            }
            out.push(c);
            prev = c;
        }
        out.push('\n');
    }
    out
}

/// Every file under `dir` with the extension `ext`, in name order.
pub fn collect(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, ext, out)?;
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
    Ok(())
}

/// Line number and text of every `unsafe` keyword of `source` outside comments and strings.
pub fn unsafe_keywords(source: &str) -> Vec<(usize, String)> {
    let code = code_only(source);
    let mut found = Vec::new();
    for (n, (line, original)) in code.lines().zip(source.lines()).enumerate() {
        let bytes = line.as_bytes();
        let mut from = 0;
        while let Some(at) = line[from..].find("unsafe") {
            let start = from + at;
            let end = start + "unsafe".len();
            let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
            if (start == 0 || !ident(bytes[start - 1]))
                && (end == bytes.len() || !ident(bytes[end]))
            {
                found.push((n + 1, original.trim().to_owned()));
            }
            from = end;
        }
    }
    found
}

/// The text of `macro_rules! embed_blob { … }` in `source`, up to its closing `}` line.
fn embed_blob_definition(source: &str) -> Option<&str> {
    let start = source.find("macro_rules! embed_blob {")?;
    let end = source[start..].find("\n}\n")?;
    Some(&source[start..start + end + 2])
}

/// Every rule of the core's unsafe budget that the sources under `root` break.
pub fn check(root: &Path, problems: &mut Vec<String>) -> Result<(), String> {
    let src = root.join("src");
    let mut files = Vec::new();
    collect(&src, "rs", &mut files)?;
    if files.len() < 8 {
        return Err(format!(
            "{}: read only {} files",
            src.display(),
            files.len()
        ));
    }
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    for path in &files {
        let source = read(path)?;
        let hits = unsafe_keywords(&source);
        if path == &src.join("catalog.rs") {
            // The one exemption: the link_section attribute inside the embedding macro.
            let inside = embed_blob_definition(&source).map(|d| unsafe_keywords(d).len());
            let attribute = hits
                .first()
                .is_some_and(|(_, line)| line.starts_with("unsafe(link_section = concat!("));
            if hits.len() != 1 || inside != Some(1) || !attribute {
                problems.push(format!(
                    "{}: the one unsafe must be embed_blob!'s link_section attribute: {hits:?}",
                    path.display()
                ));
            }
        } else if !hits.is_empty() {
            problems.push(format!(
                "{}: unsafe code in the core: {hits:?}",
                path.display()
            ));
        }
    }
    if !read(&src.join("lib.rs"))?.contains("#![deny(unsafe_code)]") {
        problems.push("src/lib.rs does not deny unsafe_code".into());
    }
    let build = read(&root.join("build.rs"))?;
    if build.contains("unsafe") || build.contains("link_section") {
        problems
            .push("build.rs spells unsafe or link_section: blobs go through embed_blob!".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scanner_finds_what_it_must() {
        assert_eq!(unsafe_keywords("let x = unsafe { y };").len(), 1);
        assert_eq!(unsafe_keywords("unsafe fn f() {}").len(), 1);
        assert_eq!(unsafe_keywords("unsafe impl Send for X {}").len(), 1);
        assert_eq!(
            unsafe_keywords("a\n  unsafe extern \"C\" {}")[0],
            (2, "unsafe extern \"C\" {}".into())
        );
        assert!(unsafe_keywords("#![deny(unsafe_code)] // unsafe here").is_empty());
        assert!(unsafe_keywords(r#"let s = "unsafe";"#).is_empty());
        assert!(unsafe_keywords("let not_unsafe = 1;").is_empty());
    }

    #[test]
    fn the_core_keeps_its_budget_and_a_second_unsafe_is_caught() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut problems = Vec::new();
        check(&root, &mut problems).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        // The catalog's exemption is exactly one keyword: a second in the macro is refused.
        let catalog = std::fs::read_to_string(root.join("src/catalog.rs")).unwrap();
        let definition = embed_blob_definition(&catalog).unwrap();
        assert_eq!(unsafe_keywords(definition).len(), 1);
        let doubled = format!("{definition}\nunsafe fn f() {{}}\n");
        assert_eq!(unsafe_keywords(&doubled).len(), 2);
    }
}
