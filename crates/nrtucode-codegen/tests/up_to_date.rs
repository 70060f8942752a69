//! The committed generated files are what the fact tables give today.

use std::path::Path;

#[test]
fn the_committed_tables_are_regenerated_identically() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let stale = nrtucode_codegen::stale(&root).unwrap();
    assert!(
        stale.is_empty(),
        "stale: {stale:?}; run `{}`",
        nrtucode_codegen::COMMAND
    );
}
