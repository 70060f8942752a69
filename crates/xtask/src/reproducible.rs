//! `cargo xtask reproducible`: copies this checkout (its tracked and untracked, not ignored
//! files) to two scratch directories of different paths and lengths, builds the bare-metal
//! template in each from scratch with its own committed configuration and a plain `cargo build
//! --release` (no `CARGO_TARGET_DIR`, `RUSTFLAGS` or `NRTUCODE_BLOB_DIR` from the caller: each
//! copy builds into its own `target/bare-metal`, as its `.cargo/config.toml` says), and requires
//! that both put the same bytes into flash: every loadable segment, same load address, size and
//! contents ([`crate::elf::segments`]). Also says whether the whole ELFs are identical (they are
//! not: debug info holds the absolute source paths, the symbol table cargo's path-dependent crate
//! hashes; see examples/bare-metal/README.md "Reproducible images").

use std::path::Path;
use std::process::Command;

use crate::build;
use crate::device;
use crate::metadata::Metadata;

/// The paths `git ls-files -z` printed.
pub fn nul_separated(out: &[u8]) -> Vec<String> {
    out.split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect()
}

/// Copies `files` (relative to `from`) into `to`, making their directories.
fn copy_tree(from: &Path, files: &[String], to: &Path) -> Result<(), String> {
    for file in files {
        let dst = to.join(file);
        if let Some(dir) = dst.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        crate::files::copy(&from.join(file), &dst)?;
    }
    Ok(())
}

/// Builds the two copies and compares what they put into flash.
pub fn run(meta: &Metadata) -> Result<(), String> {
    device::rustup_target(device::THUMB);
    let listed = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(&meta.root)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !listed.status.success() {
        return Err(format!(
            "git ls-files failed: {}",
            String::from_utf8_lossy(&listed.stderr).trim()
        ));
    }
    let files = nul_separated(&listed.stdout);
    let work = build::scratch(meta, "reproducible")?;
    let mut elves = Vec::new();
    for dir in [work.join("a"), work.join("another/checkout")] {
        copy_tree(&meta.root, &files, &dir)?;
        let mut command = build::cargo();
        command
            .current_dir(dir.join("examples/bare-metal"))
            .args(["build", "--quiet", "--release", "--locked"])
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("RUSTFLAGS")
            .env_remove("NRTUCODE_BLOB_DIR");
        elves.push(build::executable(&mut command, "nrtucode-bare-metal")?);
    }
    println!(
        "template built in {} and {}:",
        work.join("a").display(),
        work.join("another/checkout").display()
    );
    crate::elf::segments(&elves[0], &elves[1])?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_paths_are_split_at_nul() {
        assert_eq!(nul_separated(b"a b\0c/d\0"), ["a b", "c/d"]);
        assert!(nul_separated(b"").is_empty());
    }
}
