//! `cargo xtask docs`: the rendered rustdoc and the docs as docs.rs builds them. A relative link
//! must stay inside the rendered docs (the Markdown's links, the repository's and the packaged,
//! are checked by the policy test, `crates/xtask/tests/policy/links.rs`).

use std::path::{Component, Path, PathBuf};

use crate::build::status;
use crate::files::walk;
use crate::metadata::Metadata;

/// The cases of `docs`.
pub const CASES: [crate::Case<Vec<String>>; 2] = [
    (
        "links",
        "No link in the rendered docs (`cargo doc --workspace --no-deps`) leaves them",
        |meta, crates| doc_links(meta, crates),
    ),
    (
        "docsrs",
        "The published crates' docs as docs.rs builds them",
        |meta, _| docsrs(meta),
    ),
];

/// Each published crate's documentation as docs.rs builds it: nightly rustdoc, `--cfg docsrs`,
/// the features its `[package.metadata.docs.rs]` names, warnings denied; then checks that a
/// feature-gated item shows the feature it needs.
pub fn docsrs(meta: &Metadata) -> Result<(), String> {
    let target_dir = meta.target_dir.join("docsrs");
    let published = meta.published();
    for name in &published {
        let features = meta.package(name)["metadata"]["docs"]["rs"]["features"]
            .as_array()
            .cloned();
        let features: Vec<&str> = features
            .iter()
            .flatten()
            .filter_map(|f| f.as_str())
            .collect();
        let mut command = crate::build::cmd(
            "cargo",
            &format!("+nightly doc --quiet --locked --no-deps -p {name}"),
        );
        command
            .env("CARGO_TARGET_DIR", &target_dir)
            .env("RUSTDOCFLAGS", "--cfg docsrs -D warnings");
        if !features.is_empty() {
            command.args(["--features", &features.join(",")]);
        }
        status(&mut command)?;
    }
    let page = target_dir.join("doc/nrtucode/struct.StdEnv.html");
    let html = crate::files::read_text(&page)?;
    if !html.contains("Available on <strong>crate feature <code>std</code></strong> only") {
        return Err(format!(
            "{} does not say StdEnv needs feature std",
            page.display()
        ));
    }
    println!(
        "docsrs: {} documented as docs.rs builds them",
        published.join(" ")
    );
    Ok(())
}

/// Whether `target` is absolute (`scheme:`, `//host`) or an anchor: nothing to resolve.
fn is_absolute(target: &str) -> bool {
    let scheme = target.split_once(':').is_some_and(|(s, _)| {
        s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
    });
    scheme || target.starts_with('#') || target.starts_with("//")
}

/// `path` with `.` and `..` resolved lexically (no symlinks followed).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The relative link `target` of a page in `folder`, unless it resolves to a path inside `root`
/// (the rendered docs link to crates `--no-deps` did not render: inside is enough).
fn leaves(root: &Path, folder: &Path, target: &str) -> Option<PathBuf> {
    if is_absolute(target) {
        return None;
    }
    let file = target.split(['#', '?']).next().unwrap_or("");
    if file.is_empty() {
        return None;
    }
    let joined = if let Some(abs) = file.strip_prefix('/') {
        PathBuf::from("/").join(abs)
    } else {
        folder.join(file)
    };
    let resolved = normalize(&joined);
    let real = resolved.canonicalize().unwrap_or(resolved.clone());
    (!real.starts_with(root)).then_some(resolved)
}

/// `cargo xtask docs --case links [CRATE…]`: the rendered rustdoc (`cargo doc --workspace --no-deps`,
/// in cargo's target directory) has the pages of every library of the workspace (or of the
/// crates named), and no link (href or src) in them leaves the rendered tree.
pub fn doc_links(meta: &Metadata, crates: &[String]) -> Result<(), String> {
    let doc = meta.target_dir.join("doc");
    let root = doc.canonicalize().map_err(|e| {
        format!(
            "no {} ({e}); run cargo doc --workspace --no-deps first",
            doc.display()
        )
    })?;
    let crates = if crates.is_empty() {
        meta.documented_libraries()
    } else {
        crates.to_vec()
    };
    if crates.is_empty() {
        return Err("cargo metadata listed no library".into());
    }
    let mut problems = Vec::new();
    for krate in &crates {
        if !root.join(krate).join("index.html").is_file() {
            problems.push(format!(
                "{}/{krate}/index.html is missing; run cargo doc --workspace --no-deps",
                doc.display()
            ));
            continue;
        }
        let mut pages = walk(&root.join(krate), ".html")?;
        if root.join("src").join(krate).is_dir() {
            pages.extend(walk(&root.join("src").join(krate), ".html")?);
        }
        let mut leaving = std::collections::BTreeSet::new();
        for page in pages {
            let html = crate::files::read_text(&page)?;
            let folder = page.parent().unwrap_or(&root);
            let mut targets = Vec::new();
            for line in html.lines() {
                crate::html_targets::html_targets(line, &mut targets);
            }
            for target in targets {
                if let Some(resolved) = leaves(&root, folder, &target) {
                    leaving.insert(format!("  {} -> {}", page.display(), resolved.display()));
                }
            }
        }
        if !leaving.is_empty() {
            problems.push(format!(
                "{krate} links outside the rendered docs (to repository paths):\n{}",
                leaving.into_iter().collect::<Vec<_>>().join("\n")
            ));
        }
    }
    if crates.iter().any(|c| c == "nrtucode") {
        let front = std::fs::read_to_string(root.join("nrtucode/index.html")).unwrap_or_default();
        if !front.contains("Bare metal") {
            problems.push(format!(
                "{}/nrtucode/index.html is not the core crate's front page",
                doc.display()
            ));
        }
    }
    if problems.is_empty() {
        println!(
            "docs: {} crates' rendered docs link only inside {}",
            crates.len(),
            doc.display()
        );
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_leaving_its_root_is_reported_and_one_inside_is_not() {
        let root = std::env::temp_dir().join(format!("xtask-links-{}", std::process::id()));
        std::fs::create_dir_all(root.join("docs")).unwrap();
        let root = root.canonicalize().unwrap();
        assert!(leaves(&root, &root, "docs/a.html#x").is_none());
        assert!(leaves(&root, &root, "https://example.invalid/a").is_none());
        assert!(leaves(&root, &root, "docs/missing.html").is_none());
        assert!(leaves(&root, &root.join("docs"), "../../outside.html").is_some());
        assert!(leaves(&root, &root, "/etc/passwd").is_some());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
