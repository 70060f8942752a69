//! The core's `front` feature enables exactly the facts' front selection (`FRONT_FEATURES`), as
//! Cargo resolves it (`cargo metadata`), however the manifest spells it.

use std::process::Command;

use nrtucode_facts::facts::FRONT_FEATURES;

/// The features Cargo lists for the core package, feature name -> what it enables.
fn core_features() -> serde_json::Map<String, serde_json::Value> {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .arg("--manifest-path")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let core = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == env!("CARGO_PKG_NAME"))
        .expect("the core package in cargo metadata");
    core["features"].as_object().unwrap().clone()
}

#[test]
fn the_front_feature_enables_the_facts_front_selection() {
    let features = core_features();
    let mut front: Vec<&str> = features["front"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    front.sort_unstable();
    let mut expected = FRONT_FEATURES.to_vec();
    expected.sort_unstable();
    assert_eq!(front, expected);
    // Each member is itself a feature of the core (not a typo that Cargo would reject later).
    for member in FRONT_FEATURES {
        assert!(features.contains_key(member), "{member}");
    }
}
