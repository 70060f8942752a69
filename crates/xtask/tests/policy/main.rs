//! The repository's own rules, checked on its files and its `cargo metadata` by README's test
//! command (`cargo test --workspace`; this was `cargo xtask policy`, and before that integration
//! tests of the core, which linked the blob set for them). One row of [`CHECKS`] each:
//!
//! * docs/layout.md's Layout table matches the tree: every path it names exists, and every crate under
//!   `crates/` and every top-level directory is named in it;
//! * every relative link of README, blobs/README.md, docs/*.md and the crates' READMEs resolves,
//!   ([`links`]);
//! * what each published crate packages ([`packaged`]): no build output, blob or binary, both
//!   licences, no relative link out of the package, no unpublished dependency;
//! * the core's `front` feature enables exactly the facts' front selection (`FRONT_FEATURES`),
//!   as Cargo resolves it, however the manifest spells it;
//! * the core's unsafe budget ([`unsafe_audit`]): one `unsafe`, the blobs' link-section
//!   attribute in one definition;
//! * every Markdown table renders whole ([`md_tables`]);
//! * what is kept in two places is the same in both: the template's copy of the test key's
//!   public half, the facts crate's `rust-version` (the core's build-dependency) and the core's;
//! * no tracked file but CHANGELOG.md names one of the project's issues by number ([`history`]).

mod history;
mod html;
mod links;
mod md_tables;
mod packaged;
mod unsafe_audit;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use nrtucode_facts::facts::FRONT_FEATURES;

/// One rule: what it checks, and the check (pushes a message per broken rule; `Err` when it
/// cannot read what it checks).
type Check = fn(&Path, &mut Vec<String>) -> Result<(), String>;

/// Every rule, in the order its messages are listed. A new rule is one more row.
const CHECKS: [(&str, Check); 8] = [
    ("docs/layout.md's layout table", layout),
    ("relative links", links::repository),
    ("what the crates package", packaged),
    ("the front feature", front_feature),
    ("the core's unsafe budget", unsafe_audit::check),
    ("Markdown tables", markdown_tables),
    ("copies kept equal", kept_equal),
    ("no history in code or docs", history::check),
];

/// Every Markdown table renders whole ([`md_tables::check`]).
fn markdown_tables(root: &Path, problems: &mut Vec<String>) -> Result<(), String> {
    problems.extend(md_tables::check(root).err());
    Ok(())
}

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_repository_keeps_its_rules() {
    let root = root();
    let mut problems = Vec::new();
    for (name, check) in CHECKS {
        if let Err(e) = check(&root, &mut problems) {
            problems.push(format!("{name}: {e}"));
        }
    }
    assert!(problems.is_empty(), "policy:\n  {}", problems.join("\n  "));
}

/// The template's test key is the repository's; the facts crate declares the core's
/// `rust-version`, which `cargo xtask msrv` builds with.
fn kept_equal(root: &Path, problems: &mut Vec<String>) -> Result<(), String> {
    let key = "keys/test-ed25519.pub.pem";
    let template_key = format!("examples/bare-metal/{key}");
    let read = |p: &str| std::fs::read(root.join(p)).map_err(|e| format!("cannot read {p}: {e}"));
    if read(key)? != read(&template_key)? {
        problems.push(format!("{template_key} is not {key}"));
    }
    let packages = packages(root)?;
    let rust_version = |name: &str| {
        let package = packages.iter().find(|p| p["name"] == name);
        package.and_then(|p| p["rust_version"].as_str())
    };
    let (core, facts) = (rust_version("nrtucode"), rust_version("nrtucode-facts"));
    if core.is_none() || core != facts {
        problems.push(format!(
            "the core's rust-version is {core:?}, its facts crate's {facts:?}: want one, the same"
        ));
    }
    Ok(())
}

/// The first-column paths of the table under `## Layout` in `page`, without a trailing `/`.
fn layout_paths(page: &str) -> Result<Vec<String>, String> {
    let section = page
        .split("\n## Layout\n")
        .nth(1)
        .ok_or("docs/layout.md has no `## Layout` section")?;
    let section = section.split("\n## ").next().unwrap_or(section);
    Ok(section
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split('`').next())
        .map(|path| path.trim_end_matches('/').to_owned())
        .collect())
}

/// The directories in `dir` (not hidden), as `prefix` + name.
fn dirs(dir: &Path, prefix: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().is_ok_and(|t| t.is_dir()) && !name.starts_with('.') {
            out.push(format!("{prefix}{name}"));
        }
    }
    Ok(out)
}

fn layout(root: &Path, problems: &mut Vec<String>) -> Result<(), String> {
    let page = std::fs::read_to_string(root.join("docs/layout.md"))
        .map_err(|e| format!("docs/layout.md: {e}"))?;
    let paths = layout_paths(&page)?;
    if paths.len() < 10 {
        problems.push(format!("the Layout table lists only {paths:?}"));
    }
    for p in paths.iter().filter(|p| !root.join(p).exists()) {
        problems.push(format!(
            "docs/layout.md's Layout table names {p}, which does not exist"
        ));
    }
    let listed: BTreeSet<&String> = paths.iter().collect();
    let mut expected = dirs(&root.join("crates"), "crates/")?;
    expected.extend(
        dirs(root, "")?
            .into_iter()
            .filter(|d| d != "target" && d != "crates"),
    );
    for d in expected.iter().filter(|d| !listed.contains(d)) {
        problems.push(format!("{d} is missing from docs/layout.md's Layout table"));
    }
    Ok(())
}

/// The workspace's packages as `cargo metadata --no-deps` lists them.
fn packages(root: &Path) -> Result<Vec<serde_json::Value>, String> {
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "cargo metadata printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )
    })?;
    Ok(json["packages"].as_array().cloned().unwrap_or_default())
}

/// What the published crates package ([`packaged::check`]), and what they depend on: an
/// unpublished crate only as a dev-dependency without a version, which `cargo package` leaves
/// out of the packaged manifest.
fn packaged(root: &Path, problems: &mut Vec<String>) -> Result<(), String> {
    let packages = packages(root)?;
    let is_published =
        |p: &&serde_json::Value| p["publish"].as_array().is_none_or(|r| !r.is_empty());
    let unpublished: BTreeSet<&str> = (packages.iter().filter(|p| !is_published(p)))
        .filter_map(|p| p["name"].as_str())
        .collect();
    let mut published: Vec<(String, PathBuf)> = Vec::new();
    for p in packages.iter().filter(is_published) {
        let name = p["name"].as_str().unwrap_or_default();
        for d in p["dependencies"].as_array().into_iter().flatten() {
            let dependency = d["name"].as_str().unwrap_or_default();
            if unpublished.contains(dependency) && (d["kind"] != "dev" || d["req"] != "*") {
                problems.push(format!(
                    "{name} depends on the unpublished {dependency} other than as a \
                     dev-dependency without a version (its package would name it)"
                ));
            }
        }
        let manifest = Path::new(p["manifest_path"].as_str().unwrap_or_default());
        published.push((
            name.to_owned(),
            manifest.parent().unwrap_or(root).to_owned(),
        ));
    }
    if published.len() < 3 {
        problems.push(format!("only {} published crates", published.len()));
    }
    packaged::check(&published, problems)
}

/// The core's features as `cargo metadata` resolves them (feature -> what it enables).
fn core_features(root: &Path) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    packages(root)?
        .iter()
        .find(|p| p["name"].as_str() == Some("nrtucode"))
        .and_then(|p| p["features"].as_object().cloned())
        .ok_or_else(|| "no package nrtucode in cargo metadata".into())
}

fn front_feature(root: &Path, problems: &mut Vec<String>) -> Result<(), String> {
    let features = core_features(root)?;
    let mut front: Vec<&str> = features
        .get("front")
        .and_then(|f| f.as_array())
        .ok_or("the core has no feature front")?
        .iter()
        .filter_map(|f| f.as_str())
        .collect();
    front.sort_unstable();
    let mut expected = FRONT_FEATURES.to_vec();
    expected.sort_unstable();
    if front != expected {
        problems.push(format!(
            "the core's front feature enables {front:?}, the facts' FRONT_FEATURES are {expected:?}"
        ));
    }
    // Each member is itself a feature of the core (not a typo that Cargo would reject later).
    for member in FRONT_FEATURES
        .iter()
        .filter(|m| !features.contains_key(**m))
    {
        problems.push(format!(
            "FRONT_FEATURES names {member}, not a feature of the core"
        ));
    }
    Ok(())
}

#[test]
fn the_layout_table_is_read_from_its_section_only() {
    let readme = "# x\n| `no/` | before |\n## Layout\n| path | what |\n|---|---|\n| `src/` | core |\n| `a.rs` | file |\n## Next\n| `later/` | no |\n";
    assert_eq!(layout_paths(readme).unwrap(), ["src", "a.rs"]);
    assert!(layout_paths("# no layout\n").is_err());
}
