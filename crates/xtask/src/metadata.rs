//! What `cargo metadata` says about the workspace: its root, its target directory (which honours
//! `CARGO_TARGET_DIR` and `build.target-dir`) and which crates are published. Nothing here is a
//! hand-kept list.

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
    /// A scratch directory `xtask/NAME` under the target directory, emptied first.
    pub fn scratch(&self, name: &str) -> Result<PathBuf, String> {
        let dir = self.target_dir.join("xtask").join(name);
        let _ = std::fs::remove_dir_all(&dir);
        crate::files::create_dir(&dir)?;
        Ok(dir)
    }

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

    /// The crates that may be published (no `publish = false`), in name order (`cargo package`
    /// of several crates orders them by their dependencies itself).
    pub fn published(&self) -> Vec<String> {
        let names = (self.packages.iter())
            .filter(|p| p["publish"].as_array().is_none_or(|r| !r.is_empty()))
            .filter_map(|p| p["name"].as_str().map(str::to_string));
        names
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
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
    fn the_published_crates_exclude_publish_false() {
        let meta = Metadata::load().unwrap();
        let published = meta.published();
        for crate_ in [
            "nrtucode-facts",
            "nrtucode",
            "nrtucode-carve",
            "nrtucode-cli",
        ] {
            assert!(published.iter().any(|p| p == crate_), "{published:?}");
        }
        for never in ["xtask", "nrtucode-test-elf", "nrtucode-lookalike"] {
            assert!(
                !published.iter().any(|p| p == never),
                "{never} is publish = false"
            );
        }
        assert!(meta.target_dir.is_absolute());
        assert!(meta.package("no-such-crate").is_null());
    }
}
