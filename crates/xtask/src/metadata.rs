//! What `cargo metadata` says about the workspace: its root, its target directory (which honours
//! `CARGO_TARGET_DIR` and `build.target-dir`) and which crates are published, in the order
//! `cargo publish` needs them. Nothing here is a hand-kept list.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

/// The parts of `cargo metadata --no-deps` the tasks use.
pub struct Metadata {
    /// The workspace root (where `Cargo.lock` is).
    pub root: PathBuf,
    /// Cargo's target directory for this workspace.
    pub target_dir: PathBuf,
    /// Every package of the workspace, as `cargo metadata` reports it.
    packages: Vec<Value>,
}

impl Metadata {
    /// Runs `cargo metadata --format-version 1 --no-deps` and keeps what the tasks need.
    pub fn load() -> Result<Self, String> {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let out = Command::new(cargo)
            .args(["metadata", "--format-version", "1", "--no-deps"])
            .output()
            .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "cargo metadata failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let json: Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| format!("cargo metadata printed no JSON: {e}"))?;
        let path = |key: &str| {
            json[key]
                .as_str()
                .map(PathBuf::from)
                .ok_or_else(|| format!("cargo metadata has no {key}"))
        };
        Ok(Self {
            root: path("workspace_root")?,
            target_dir: path("target_directory")?,
            packages: json["packages"].as_array().cloned().unwrap_or_default(),
        })
    }

    /// The crates that may be published (no `publish = false`), dependencies first; ties in
    /// name order, so the list is stable.
    pub fn published(&self) -> Vec<String> {
        let names: BTreeSet<&str> = self
            .packages
            .iter()
            .filter(|p| p["publish"].as_array().is_none_or(|r| !r.is_empty()))
            .filter_map(|p| p["name"].as_str())
            .collect();
        // Each published crate's published workspace dependencies (every kind: a dev-dependency
        // with a version must be on the registry before its user is packaged).
        let mut deps: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for p in &self.packages {
            let Some(name) = p["name"].as_str().filter(|n| names.contains(n)) else {
                continue;
            };
            let entry = deps.entry(name).or_default();
            for d in p["dependencies"].as_array().into_iter().flatten() {
                if let Some(dep) = d["name"]
                    .as_str()
                    .filter(|n| names.contains(n) && *n != name)
                    && (d["kind"].as_str() != Some("dev") || d["req"].as_str() != Some("*"))
                {
                    entry.insert(dep);
                }
            }
        }
        let mut order = Vec::new();
        let mut done = BTreeSet::new();
        while done.len() < deps.len() {
            let ready: Vec<&str> = deps
                .iter()
                .filter(|(n, d)| !done.contains(*n) && d.iter().all(|x| done.contains(x)))
                .map(|(n, _)| *n)
                .collect();
            if ready.is_empty() {
                // A cycle (cargo refuses those before we get here): keep the rest by name.
                order.extend(
                    deps.keys()
                        .filter(|n| !done.contains(*n))
                        .map(|n| n.to_string()),
                );
                break;
            }
            for n in ready {
                done.insert(n);
                order.push(n.to_string());
            }
        }
        order
    }

    /// The workspace's crates that are never published (`publish = false`), by name.
    pub fn unpublished(&self) -> Vec<String> {
        let published = self.published();
        let mut names: Vec<String> = self
            .packages
            .iter()
            .filter_map(|p| p["name"].as_str())
            .filter(|n| !published.iter().any(|p| p == n))
            .map(str::to_string)
            .collect();
        names.sort();
        names
    }

    /// The libraries of the workspace `cargo doc` documents, as rustdoc names their directory.
    pub fn documented_libraries(&self) -> Vec<String> {
        const LIB: [&str; 5] = ["lib", "rlib", "dylib", "cdylib", "staticlib"];
        self.packages
            .iter()
            .flat_map(|p| p["targets"].as_array().cloned().unwrap_or_default())
            .filter(|t| {
                t["kind"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|k| k.as_str().is_some_and(|k| LIB.contains(&k)))
                    && t["doc"].as_bool() != Some(false)
            })
            .filter_map(|t| t["name"].as_str().map(|n| n.replace('-', "_")))
            .collect()
    }

    /// The version of the workspace crate `crate_name`.
    pub fn version(&self, crate_name: &str) -> Option<String> {
        self.packages
            .iter()
            .find(|p| p["name"].as_str() == Some(crate_name))
            .and_then(|p| p["version"].as_str().map(str::to_string))
    }

    /// The `rust-version` the workspace crate `crate_name` declares, if any.
    pub fn rust_version(&self, crate_name: &str) -> Option<String> {
        self.packages
            .iter()
            .find(|p| p["name"].as_str() == Some(crate_name))
            .and_then(|p| p["rust_version"].as_str().map(str::to_string))
    }

    /// The features `[package.metadata.docs.rs]` of `crate_name` names (docs.rs builds with them).
    pub fn docsrs_features(&self, crate_name: &str) -> Vec<String> {
        self.packages
            .iter()
            .find(|p| p["name"].as_str() == Some(crate_name))
            .and_then(|p| p["metadata"]["docs"]["rs"]["features"].as_array())
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_str().map(str::to_string))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_published_crates_come_dependencies_first_and_exclude_publish_false() {
        let meta = Metadata::load().unwrap();
        let published = meta.published();
        let at = |n: &str| published.iter().position(|p| p == n);
        // nrtucode's build-dependency, then nrtucode, then its users.
        assert!(at("nrtucode-facts").is_some(), "{published:?}");
        assert!(at("nrtucode-facts") < at("nrtucode"), "{published:?}");
        assert!(at("nrtucode").is_some() && at("nrtucode") < at("nrtucode-cli"));
        assert!(at("nrtucode-carve") < at("nrtucode-cli"));
        for never in ["xtask", "nrtucode-test-elf", "nrtucode-lookalike"] {
            assert!(at(never).is_none(), "{never} is publish = false");
            assert!(meta.unpublished().iter().any(|n| n == never));
        }
        assert!(meta.target_dir.is_absolute());
    }
}
