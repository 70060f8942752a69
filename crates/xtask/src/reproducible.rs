//! `cargo xtask reproducible`: builds the bare-metal template in this checkout and in a copy of
//! it (its tracked and untracked, not ignored files) at a scratch directory of another path and
//! length, each with its own committed configuration and a plain `cargo build --release` (no
//! `CARGO_TARGET_DIR`, `RUSTFLAGS` or `NRTUCODE_BLOB_DIR` from the caller: each builds into its
//! own `target/bare-metal`, as its `.cargo/config.toml` says; this checkout's is where CI's
//! template step built already, so only the copy is built from scratch), and requires
//! that both put the same bytes into flash: every loadable segment, same load address, size and
//! contents ([`crate::elf::segments`]), and that no two of its functions or statics share a path
//! ([`crate::elf::Elf::ordered_by_hash`]): rustc orders those by crate hash, which is what makes
//! the agreement hold for any two paths rather than these two. Also says whether the whole ELFs are identical (they are
//! not: debug info holds the absolute source paths, the symbol table cargo's path-dependent crate
//! hashes; see examples/bare-metal/README.md "Reproducible images").

use std::path::Path;

use crate::build;
use crate::device;
use crate::metadata::Metadata;

/// Copies `files` (relative to `from`) into `to`, making their directories.
fn copy_tree(from: &Path, files: &[String], to: &Path) -> Result<(), String> {
    for file in files {
        let dst = to.join(file);
        if let Some(dir) = dst.parent() {
            crate::files::create_dir(dir)?;
        }
        crate::files::copy(&from.join(file), &dst)?;
    }
    Ok(())
}

/// Builds the two copies and compares what they put into flash.
pub fn run(meta: &Metadata) -> Result<(), String> {
    device::rustup_target(device::THUMB);
    let git = "ls-files -z --cached --others --exclude-standard";
    let listed = build::stdout(build::cmd("git", git).current_dir(&meta.root))?;
    let files: Vec<String> = (listed.split('\0').filter(|p| !p.is_empty()))
        .map(str::to_string)
        .collect();
    let work = meta.scratch("reproducible")?;
    let copy = work.join("another/checkout");
    copy_tree(&meta.root, &files, &copy)?;
    let mut elves = Vec::new();
    for dir in [&meta.root, &copy] {
        let mut command = build::cargo("build --quiet --release --locked");
        command
            .current_dir(dir.join("examples/bare-metal"))
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("RUSTFLAGS")
            .env_remove("NRTUCODE_BLOB_DIR");
        elves.push(build::executable(&mut command, "nrtucode-bare-metal")?);
    }
    println!(
        "template built in {} and {}:",
        meta.root.display(),
        copy.display()
    );
    crate::elf::segments(&elves[0], &elves[1])?;
    // The two paths agreeing could be luck: items rustc orders by crate hash alone may happen to
    // keep their order. None such is the rule that makes the layout path-independent.
    let by_hash = crate::elf::read(&elves[0])?.ordered_by_hash();
    if !by_hash.is_empty() {
        return Err(format!(
            "items laid out in the order of their path-dependent crate hashes (one path, several symbols): {}; \
             log through primitives ({{=u32}}, {{=str}}, crate::hex) instead of a new defmt::Format type \
             (examples/bare-metal/README.md, \"Reproducible images\")",
            by_hash.join(", ")
        ));
    }
    println!("no item ordered by crate hash: every function and static has a path of its own");
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
