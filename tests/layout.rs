//! README's Layout table matches the tree: every path it names exists, and every crate under
//! `crates/` and every top-level directory is named in it.

use std::collections::BTreeSet;
use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The first-column paths of the table under README's `## Layout` heading, without a trailing
/// `/`.
fn layout_paths() -> Vec<String> {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).expect("README.md");
    let section = readme
        .split("\n## Layout\n")
        .nth(1)
        .expect("README has a `## Layout` section");
    let section = section.split("\n## ").next().unwrap_or(section);
    section
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split('`').next())
        .map(|path| path.trim_end_matches('/').to_owned())
        .collect()
}

#[test]
fn every_path_in_the_layout_table_exists() {
    let paths = layout_paths();
    assert!(paths.len() >= 10, "the Layout table lists {paths:?}");
    let missing: Vec<&String> = paths
        .iter()
        .filter(|p| !Path::new(ROOT).join(p).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "README's Layout table names paths that do not exist: {missing:?}"
    );
}

#[test]
fn every_crate_and_top_level_directory_is_in_the_layout_table() {
    let listed: BTreeSet<String> = layout_paths().into_iter().collect();
    let dirs = |dir: &Path, prefix: &str| -> Vec<String> {
        std::fs::read_dir(dir)
            .expect("read directory")
            .map(|entry| entry.expect("directory entry"))
            .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
            .map(|entry| format!("{prefix}{}", entry.file_name().to_string_lossy()))
            .filter(|name| !name.rsplit('/').next().is_some_and(|n| n.starts_with('.')))
            .collect()
    };
    let mut expected = dirs(&Path::new(ROOT).join("crates"), "crates/");
    expected.extend(
        dirs(Path::new(ROOT), "")
            .into_iter()
            .filter(|d| d != "target" && d != "crates"),
    );
    let unlisted: Vec<&String> = expected.iter().filter(|d| !listed.contains(*d)).collect();
    assert!(
        unlisted.is_empty(),
        "directories missing from README's Layout table: {unlisted:?}"
    );
}

/// The relative link targets (`](path)`, anchors dropped) of a Markdown file.
fn relative_links(markdown: &str) -> Vec<String> {
    markdown
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .map(|target| target.split('#').next().unwrap_or(target).to_owned())
        .filter(|target| !target.is_empty() && !target.contains("://"))
        .collect()
}

#[test]
fn every_relative_link_in_the_front_page_and_the_docs_resolves() {
    let root = Path::new(ROOT);
    let mut pages = vec![root.join("README.md"), root.join("blobs/README.md")];
    for dir in ["docs", "crates"] {
        for entry in std::fs::read_dir(root.join(dir)).expect("read directory") {
            let path = entry.expect("directory entry").path();
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
    let mut broken = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("read page");
        let dir = page.parent().expect("page directory");
        for target in relative_links(&text) {
            if !dir.join(&target).exists() {
                broken.push(format!("{}: {target}", page.display()));
            }
        }
    }
    assert!(pages.len() >= 5, "pages checked: {pages:?}");
    assert!(
        broken.is_empty(),
        "links to paths that do not exist: {broken:#?}"
    );
}
