//! `cargo xtask docs`: the published crates' docs as docs.rs builds them. (No link of the
//! rendered rustdoc leaves it: the policy test's ignored `the_rendered_docs_link_only_inside_them`,
//! `crates/xtask/tests/policy/links.rs`, which CI runs after `cargo doc --workspace --no-deps`.)

use crate::build::status;
use crate::metadata::Metadata;

/// Each published crate's documentation as docs.rs builds it: nightly rustdoc, `--cfg docsrs`,
/// the features its `[package.metadata.docs.rs]` names, warnings denied; then checks that a
/// feature-gated item shows the feature it needs.
pub fn run(meta: &Metadata) -> Result<(), String> {
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
