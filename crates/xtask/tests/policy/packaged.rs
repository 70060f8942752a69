//! What each published crate packages (`cargo package --list`, read from the crate's own
//! directory; `cargo xtask package` checks the `.crate`s themselves and uses them): no build
//! output, blob or binary file (no NUL byte), both licences, and no relative link of its Markdown
//! naming a path outside the package ([`links::leaving_package`]; link to docs.rs, or keep the
//! text in the package).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::links;

/// Whether a packaged path is something a package must not hold: anything under a `target/`
/// or `blobs/` directory, or a build output, library, object or blob by its extension.
fn forbidden_file(path: &str) -> bool {
    const EXTENSIONS: [&str; 11] = [
        "a", "o", "bin", "rlib", "rmeta", "dylib", "dll", "lib", "exe", "elf", "crate",
    ];
    if path
        .split('/')
        .rev()
        .skip(1)
        .any(|d| d == "target" || d == "blobs")
    {
        return true;
    }
    let file = path.rsplit('/').next().unwrap_or(path);
    let mut parts: Vec<&str> = file.split('.').skip(1).collect();
    if parts.is_empty() {
        return false;
    }
    if EXTENSIONS.contains(&parts[parts.len() - 1]) {
        return true;
    }
    // `.so` and `.so.N[.N…]`.
    while parts.len() > 1 && parts[parts.len() - 1].bytes().all(|b| b.is_ascii_digit()) {
        if parts[parts.len() - 1].is_empty() {
            break;
        }
        parts.pop();
    }
    parts[parts.len() - 1] == "so"
}

/// The checks, for each published crate (`(name, directory)`).
pub fn check(crates: &[(String, PathBuf)], problems: &mut Vec<String>) -> Result<(), String> {
    for (name, dir) in crates {
        let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
            .args(["package", "--list", "--allow-dirty", "-p", name])
            .current_dir(dir)
            .output()
            .map_err(|e| format!("cannot run cargo package --list: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "cargo package --list -p {name}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let listed: BTreeSet<PathBuf> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(PathBuf::from)
            .collect();
        for license in ["LICENSE-MIT", "LICENSE-APACHE"] {
            if !listed.contains(Path::new(license)) {
                problems.push(format!("{name} does not package {license}"));
            }
        }
        for path in &listed {
            if forbidden_file(&path.to_string_lossy()) {
                problems.push(format!(
                    "{name} packages {}, a build output or blob",
                    path.display()
                ));
            }
            // Files cargo package writes (the lock file, the VCS info) are not in the directory.
            let Ok(bytes) = std::fs::read(dir.join(path)) else {
                continue;
            };
            if bytes.contains(&0) {
                problems.push(format!(
                    "{name} packages the binary file {}",
                    path.display()
                ));
            }
            if path.extension().is_some_and(|e| e == "md") {
                let text = String::from_utf8_lossy(&bytes);
                for link in links::leaving_package(&listed, path, &text) {
                    problems.push(format!(
                        "{name}/{link} names a path the package does not hold; link to docs.rs, \
                         or keep the text in the package"
                    ));
                }
            }
        }
    }
    Ok(())
}

#[test]
fn build_outputs_blobs_and_libraries_are_forbidden_sources_are_not() {
    for bad in [
        "target/debug/x",
        "src/blobs/a.txt",
        "libx.so",
        "libx.so.0",
        "libx.so.0.1.0",
        "x.a",
        "fw.bin",
        "x.rlib",
        "n.crate",
        "a/b.elf",
    ] {
        assert!(forbidden_file(bad), "{bad}");
    }
    for good in [
        "src/lib.rs",
        "Cargo.toml",
        "README.md",
        "LICENSE-MIT",
        "src/so.rs",
        "docs/a.so.md",
        "targets.md",
        "src/blobs.rs",
        "x.so.",
    ] {
        assert!(!forbidden_file(good), "{good}");
    }
}
