//! The link checks (one parser, [`markdown_links`]): every relative link of the repository's
//! pages resolves, and every relative link of a published crate's Markdown names a path its
//! package holds ([`leaving_package`], for `packaged`: a registry user reads the README there,
//! where a link to `../../docs/…` leads nowhere). And, once `cargo doc --workspace --no-deps`
//! has run (CI runs it, then this test with `--ignored`), no link of the rendered rustdoc
//! leaves it ([`the_rendered_docs_link_only_inside_them`]).

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use crate::html::html_targets;

/// `line` without its code spans (a run of backticks up to the same run).
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let run = rest[start..].len() - rest[start..].trim_start_matches('`').len();
        let fence = &rest[start..start + run];
        let body = &rest[start + run..];
        match body.find(fence) {
            Some(end) => rest = &body[end + run..],
            None => {
                out.push_str(&rest[start..]);
                return out;
            }
        }
    }
    out.push_str(rest);
    out
}

/// (line number, target) of every link outside code in a Markdown text: inline
/// (`[text](target)`, `![alt](target)`), reference definitions (`[id]: target`) and HTML
/// `href`/`src` attributes.
pub fn markdown_links(text: &str) -> Vec<(usize, String)> {
    let mut fence: Option<String> = None;
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let stripped = line.trim_start();
        let run = |c: char| stripped.len() - stripped.trim_start_matches(c).len();
        let (ticks, tildes) = (run('`'), run('~'));
        if ticks >= 3 || tildes >= 3 {
            match &fence {
                None if ticks >= 3 => fence = Some("`".repeat(ticks)),
                None => fence = Some("~".repeat(tildes)),
                Some(f) if stripped.starts_with(f.as_str()) => fence = None,
                Some(_) => {}
            }
            continue;
        }
        if fence.is_some() {
            continue;
        }
        let line = without_code_spans(line);
        let mut targets = Vec::new();
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = rest[at + 2..].trim_start();
            let after = after.strip_prefix('<').unwrap_or(after);
            let end = after
                .find(|c: char| c.is_whitespace() || c == ')' || c == '>')
                .unwrap_or(after.len());
            if end > 0 && rest[..at].contains('[') {
                targets.push(after[..end].to_string());
            }
            rest = &rest[at + 2..];
        }
        html_targets(&line, &mut targets);
        let indent = line.len() - line.trim_start_matches(' ').len();
        if indent <= 3
            && let Some(label) = line[indent..].strip_prefix('[')
            && let Some(close) = label.find("]:")
            && close > 0
            && !label[..close].contains(']')
            && let Some(target) = label[close + 2..].split_whitespace().next()
        {
            let target = target.trim_start_matches('<').trim_end_matches('>');
            targets.push(target.to_string());
        }
        found.extend(targets.into_iter().map(|t| (i + 1, t)));
    }
    found
}

/// The file part of a relative link (none: absolute, `scheme:` or `//host`, or an anchor).
fn relative(target: &str) -> Option<&str> {
    let scheme = target.split_once(':').is_some_and(|(s, _)| {
        s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
    });
    let file = target.split(['#', '?']).next().unwrap_or("");
    (!scheme && !target.starts_with("//") && !file.is_empty()).then_some(file)
}

/// `path` with `.` and `..` resolved lexically; none if it climbs above its start.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir if !out.pop() => return None,
            Component::ParentDir | Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

/// Every relative link of README, blobs/README.md, docs/*.md and the crates' READMEs resolves.
pub fn repository(root: &Path, problems: &mut Vec<String>) -> Result<(), String> {
    let mut pages = vec![root.join("README.md"), root.join("blobs/README.md")];
    for dir in ["docs", "crates"] {
        let entries = std::fs::read_dir(root.join(dir)).map_err(|e| format!("{dir}: {e}"))?;
        for entry in entries {
            let path = entry.map_err(|e| format!("{dir}: {e}"))?.path();
            let page = if path.is_dir() {
                path.join("README.md")
            } else {
                path
            };
            if page.extension().is_some_and(|e| e == "md") && page.exists() {
                pages.push(page);
            }
        }
    }
    if pages.len() < 5 {
        problems.push(format!("only {} pages to check links in", pages.len()));
    }
    for page in &pages {
        let text = std::fs::read_to_string(page).map_err(|e| format!("{}: {e}", page.display()))?;
        let dir = page.parent().unwrap_or(root);
        for (number, target) in markdown_links(&text) {
            if relative(&target).is_some_and(|file| !dir.join(file).exists()) {
                problems.push(format!(
                    "{}:{number}: link to {target}, which does not exist",
                    page.display()
                ));
            }
        }
    }
    Ok(())
}

/// The relative links of `text` (the packaged file `page`) that name no path of `listed` (a
/// file or a directory holding one).
pub fn leaving_package(listed: &BTreeSet<PathBuf>, page: &Path, text: &str) -> Vec<String> {
    let folder = page.parent().unwrap_or(Path::new(""));
    let held = |p: &PathBuf| listed.iter().any(|l| l.starts_with(p));
    markdown_links(text)
        .into_iter()
        .filter(|(_, target)| {
            relative(target).is_some_and(|file| {
                file.starts_with('/') || !normalize(&folder.join(file)).is_some_and(|p| held(&p))
            })
        })
        .map(|(number, target)| format!("{}:{number}: {target}", page.display()))
        .collect()
}

/// The libraries of the workspace `cargo doc` documents, as rustdoc names their directory.
fn documented_libraries(root: &Path) -> Result<Vec<String>, String> {
    const LIB: [&str; 5] = ["lib", "rlib", "dylib", "cdylib", "staticlib"];
    let packages = crate::packages(root)?;
    let targets = packages.iter().filter_map(|p| p["targets"].as_array());
    let documented = targets.flatten().filter(|t| {
        t["doc"] != false
            && (t["kind"].as_array().into_iter().flatten())
                .any(|k| LIB.contains(&k.as_str().unwrap_or("")))
    });
    Ok(documented
        .filter_map(|t| t["name"].as_str().map(|n| n.replace('-', "_")))
        .collect())
}

/// The links (href or src) of the rendered `page` (in `doc`, canonical) that resolve outside
/// `doc` (the rendered docs link to crates `--no-deps` did not render: inside is enough).
fn leaving_docs(doc: &Path, page: &Path, html: &str) -> Vec<String> {
    let folder = page.parent().unwrap_or(doc);
    let mut targets = Vec::new();
    html.lines()
        .for_each(|line| html_targets(line, &mut targets));
    let leaves = |file: &str| {
        let resolved = normalize(&folder.join(file));
        let real = resolved
            .as_ref()
            .map(|p| p.canonicalize().unwrap_or(p.clone()));
        !real.is_some_and(|p| p.starts_with(doc))
    };
    (targets.iter())
        .filter(|t| relative(t).is_some_and(leaves))
        .map(|t| format!("  {} -> {t}", page.display()))
        .collect()
}

/// The rendered rustdoc (`cargo doc --workspace --no-deps`, in cargo's target directory) has the
/// pages of every library of the workspace, the core's front page is the core's, and no link
/// in them leaves the rendered tree.
#[test]
#[ignore = "needs cargo doc --workspace --no-deps first (CI runs it, then this test)"]
fn the_rendered_docs_link_only_inside_them() {
    let root = crate::root();
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or(root.join("target"), PathBuf::from);
    let doc = target
        .join("doc")
        .canonicalize()
        .expect("no target/doc: run cargo doc first");
    let crates = documented_libraries(&root).unwrap();
    assert!(crates.len() > 5, "cargo metadata listed {crates:?}");
    let mut problems = Vec::new();
    for krate in &crates {
        if !doc.join(krate).join("index.html").is_file() {
            problems.push(format!("{krate}/index.html is missing"));
            continue;
        }
        let mut pages = Vec::new();
        for dir in [doc.join(krate), doc.join("src").join(krate)] {
            if dir.is_dir() {
                crate::unsafe_audit::collect(&dir, "html", &mut pages).unwrap();
            }
        }
        for page in pages {
            match std::fs::read_to_string(&page) {
                Ok(html) => problems.extend(leaving_docs(&doc, &page, &html)),
                Err(e) => problems.push(format!("{}: {e}", page.display())),
            }
        }
    }
    let front = std::fs::read_to_string(doc.join("nrtucode/index.html")).unwrap_or_default();
    if !front.contains("Bare metal") {
        problems.push("nrtucode/index.html is not the core crate's front page".into());
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn links_outside_code_are_found_and_code_is_skipped() {
    let text = "see [a](../x.md#y) and `[b](c.md)`\n```\n[d](e.md)\n```\n  [id]: <f.md> \"t\"\n<img src=\"g.png\">\n[h](https://example.invalid) [i](#j)\n";
    let links: Vec<String> = markdown_links(text).into_iter().map(|l| l.1).collect();
    assert_eq!(
        links,
        [
            "../x.md#y",
            "f.md",
            "g.png",
            "https://example.invalid",
            "#j"
        ]
    );
    let relative: Vec<&str> = links.iter().filter_map(|l| relative(l)).collect();
    assert_eq!(relative, ["../x.md", "f.md", "g.png"]);
}

#[test]
fn a_packaged_link_must_name_a_path_the_package_holds() {
    let listed: BTreeSet<PathBuf> = ["README.md", "docs/a.md", "src/lib.rs"]
        .into_iter()
        .map(PathBuf::from)
        .collect();
    let text = "[a](docs/a.md#x) [s](src) [w](https://h.invalid) [m](docs/missing.md) [o](../../docs/update.md)\n";
    let bad = leaving_package(&listed, Path::new("README.md"), text);
    assert_eq!(
        bad,
        [
            "README.md:1: docs/missing.md",
            "README.md:1: ../../docs/update.md"
        ]
    );
    assert!(leaving_package(&listed, Path::new("docs/a.md"), "[r](../README.md)").is_empty());
}

#[test]
fn a_rendered_link_leaving_the_docs_is_reported_and_one_inside_is_not() {
    let doc = std::env::temp_dir().join(format!("policy-links-{}", std::process::id()));
    std::fs::create_dir_all(doc.join("krate")).unwrap();
    let doc = doc.canonicalize().unwrap();
    let page = doc.join("krate/index.html");
    let html = r#"<a href="../krate/a.html#x">a</a> <a href="https://example.invalid/a">b</a>
<a href="missing.html">inside</a> <a href='#top'>top</a> <img src="../../outside.html">
<a href="/etc/passwd">abs</a>"#;
    let leaving = leaving_docs(&doc, &page, html);
    std::fs::remove_dir_all(&doc).unwrap();
    assert_eq!(leaving.len(), 2, "{leaving:?}");
    assert!(leaving[0].ends_with("-> ../../outside.html") && leaving[1].ends_with("/etc/passwd"));
}
