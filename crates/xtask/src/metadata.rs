//! What `cargo metadata` says about the workspace: its root, its target directory (which honours
//! `CARGO_TARGET_DIR` and `build.target-dir`) and which crates are published, in the order
//! `cargo publish` needs them. Nothing here is a hand-kept list.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;

/// The parts of `cargo metadata --no-deps` the tasks use: the workspace root (where
/// `Cargo.lock` is), cargo's target directory, and every package as `cargo metadata` reports it.
pub struct Metadata {
    pub root: PathBuf,
    pub target_dir: PathBuf,
    packages: Vec<Value>,
}

impl Metadata {
    /// Runs `cargo metadata --format-version 1 --no-deps` and keeps what the tasks need.
    pub fn load() -> Result<Self, String> {
        let out = crate::build::stdout(&mut crate::build::cargo(
            "metadata --format-version 1 --no-deps",
        ))?;
        let json: Value = serde_json::from_str(&out)
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
        let mut left: Vec<(&str, BTreeSet<&str>)> = Vec::new();
        let names: BTreeSet<&str> = self
            .packages
            .iter()
            .filter(|p| p["publish"].as_array().is_none_or(|r| !r.is_empty()))
            .filter_map(|p| p["name"].as_str())
            .collect();
        for &name in &names {
            // Every kind of published workspace dependency: a dev-dependency with a version
            // must be on the registry before its user is packaged.
            let deps = self.package(name)["dependencies"].as_array().cloned();
            let deps = deps.unwrap_or_default();
            let deps = deps
                .iter()
                .filter(|d| d["kind"] != "dev" || d["req"] != "*")
                .filter_map(|d| d["name"].as_str())
                .filter_map(|n| names.get(n).copied())
                .filter(|n| *n != name)
                .collect();
            left.push((name, deps));
        }
        let mut order: Vec<String> = Vec::new();
        while !left.is_empty() {
            // The first in name order whose dependencies are all placed (a cycle, which cargo
            // refuses before we get here, would keep the rest by name).
            let ready = left
                .iter()
                .position(|(_, d)| d.iter().all(|x| order.iter().any(|o| o == x)))
                .unwrap_or(0);
            order.push(left.remove(ready).0.to_string());
        }
        order
    }

    /// The `cargo metadata` entry of the workspace crate `name` (`Null` when there is none):
    /// e.g. `["version"]`, `["rust_version"]`, `["metadata"]["docs"]["rs"]["features"]`.
    pub fn package(&self, name: &str) -> &Value {
        (self.packages.iter())
            .find(|p| p["name"] == name)
            .unwrap_or(&Value::Null)
    }

    /// The string `key` of the workspace crate `name` (`version`, `rust_version`), if any.
    pub fn field(&self, name: &str, key: &str) -> Option<String> {
        self.package(name)[key].as_str().map(str::to_string)
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
        }
        assert!(meta.target_dir.is_absolute());
        assert!(meta.package("no-such-crate").is_null());
    }
}
