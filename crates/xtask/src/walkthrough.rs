//! `cargo xtask qemu --case walkthrough`: the walkthrough of examples/bare-metal/README.md ("From the vendor
//! library to a running device") as written: the sh block after its `<!-- walkthrough: … -->`
//! marker, run through bash from the repository's root ([`device::run_block`]), with `LOADER`
//! pointing into a fresh scratch directory (the block's default is `$HOME/my-loader`). The
//! look-alike stands in for the vendor library, as the block says; the block builds every tool
//! it uses. Then checks the decoded boot log: the blobs line names the GNU BuildID the carve
//! recorded, every image verified and the engine is ready. Needs qemu-system-arm and gcc.

use std::time::Instant;

use crate::build;
use crate::device;
use crate::metadata::Metadata;

/// The GNU BuildID a carve's `manifest.tsv` records (`# build_id\tHEX`), if it is 40 hex digits.
pub fn build_id(manifest: &str) -> Option<&str> {
    manifest
        .lines()
        .find_map(|l| l.strip_prefix("# build_id\t"))
        .filter(|id| id.len() == 40 && id.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')))
}

/// Runs the block and checks its log.
pub fn run(meta: &Metadata) -> Result<(), String> {
    device::require("qemu-system-arm", "qemu-system-arm")?;
    device::require("gcc", "gcc")?;
    let readme = meta.root.join("examples/bare-metal/README.md");
    let text = std::fs::read_to_string(&readme)
        .map_err(|e| format!("cannot read {}: {e}", readme.display()))?;
    let block = device::readme_block(&text, "<!-- walkthrough:")
        .map_err(|e| format!("no walkthrough block in {}: {e}", readme.display()))?;
    let work = build::scratch(meta, "walkthrough")?;
    println!(
        "walkthrough: running the README's {} lines in {}",
        block.lines().count(),
        work.display()
    );
    let started = Instant::now();
    let loader = work.join("my-loader");
    let (out, err) = (work.join("out"), work.join("err"));
    device::run_block(
        &block,
        &[("LOADER", loader.as_os_str())],
        &out,
        &err,
        "the walkthrough",
    )?;
    let log =
        std::fs::read_to_string(&out).map_err(|e| format!("cannot read {}: {e}", out.display()))?;
    for line in log.lines() {
        println!("    {line}");
    }
    let manifest = work.join("my-loader.blobs/manifest.tsv");
    let manifest = std::fs::read_to_string(&manifest)
        .map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    let id = build_id(&manifest)
        .ok_or("the carve recorded no 40-digit build_id, want the look-alike's GNU BuildID")?;
    if !device::has_line(
        &log,
        &format!("INFO  blobs: carved from the vendor library with GNU BuildID {id}"),
    ) {
        return Err(format!(
            "the boot log does not name the carved library's BuildID {id}"
        ));
    }
    if !device::has_line(&log, "INFO  engine ready: 2 of 2 images loaded") {
        return Err("the engine did not come up".into());
    }
    if log.contains("verification failed") {
        return Err("an image failed verification".into());
    }
    let seconds = started.elapsed().as_secs();
    let _ = std::fs::remove_dir_all(&work);
    println!(
        "walkthrough: vendor library (look-alike) to a booted device in {seconds} s, the log naming BuildID {id}"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_id_is_the_manifests_40_hex_digits() {
        let id = "a3b652bece25e083dac7d0c5bdb4144318882f5e";
        let manifest = format!("# nrtucode blobs\n# build_id\t{id}\nname\tsize\n");
        assert_eq!(build_id(&manifest), Some(id));
        assert_eq!(build_id("# build_id\tabc\n"), None);
        assert_eq!(build_id(&manifest.replace('a', "A")), None);
        assert_eq!(build_id("no id\n"), None);
    }
}
