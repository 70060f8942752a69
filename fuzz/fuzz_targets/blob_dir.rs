//! Fuzzes the blob-directory reader every consumer shares (`nrtucode_facts::blob_dir`): the
//! manifest parser on arbitrary text, with what it accepts rendered and parsed again (the
//! writer's escapes must give back what was parsed), and `check_blob_dir` over a directory
//! holding the input as `manifest.tsv` plus one blob file named after the input's first row.
//! Nothing may panic; every refusal is a typed `BlobDirProblem`. Seeds: `cargo xtask fuzz`.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use nrtucode_facts::Manifest;
use nrtucode_facts::blob_dir::check_blob_dir;

fn scratch() -> &'static std::path::Path {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir =
            std::env::temp_dir().join(format!("nrtucode-fuzz-blob-dir-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(manifest) = Manifest::parse(text)
    {
        let again = Manifest::parse(&manifest.render()).expect("a rendered manifest parses");
        let mut sorted = manifest.clone();
        sorted.rows.sort_by(|a, b| a.symbol.cmp(&b.symbol));
        let mut again_sorted = again;
        again_sorted.rows.sort_by(|a, b| a.symbol.cmp(&b.symbol));
        assert_eq!(
            again_sorted, sorted,
            "render then parse changed the manifest"
        );
    }
    let dir = scratch();
    for entry in std::fs::read_dir(dir).unwrap() {
        let _ = std::fs::remove_file(entry.unwrap().path());
    }
    std::fs::write(dir.join("manifest.tsv"), data).unwrap();
    // The first row's file, holding the rest of the input: sizes and hashes rarely match, and
    // the reader must say so, not fail otherwise.
    if let Ok(Ok(manifest)) = std::str::from_utf8(data).map(Manifest::parse)
        && let Some(file) = manifest.rows.first().and_then(|r| r.file.clone())
    {
        let _ = std::fs::write(dir.join(file), data);
    }
    let _ = check_blob_dir(dir);
});
