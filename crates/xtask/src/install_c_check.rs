//! `cargo xtask install-c-check`: checks `scripts/install-c.sh` the way a C user uses the
//! library: installs into a temporary prefix (cargo's output in `install-c-check` under the
//! target directory) and runs every `cc` line of the C-ABI page's install block
//! (docs/c-abi.md) as written, in a directory holding app.c; the READMEs' `cc` lines must be
//! among them. The shared program runs without LD_LIBRARY_PATH (its rpath names the prefix's
//! libdir), the `-static` one needs no shared library, the `-Bstatic` one no shared nrtucode
//! (read with `object`). Then: a DESTDIR install lands under DESTDIR with a .pc that names the
//! prefix; a foreign libnrtucode.so (another SONAME) and a changed link are refused, naming the
//! file, and nothing changes; --force replaces them; a reinstall succeeds; --uninstall removes
//! what the manifest lists and nothing else. Linux only (needs gcc and pkg-config).

use std::collections::BTreeMap;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::build;
use crate::metadata::Metadata;

/// The C program built against the installed library.
const PROGRAM: &str = "crates/nrtucode-capi/tests/c/installed.c";

/// The page whose install block is run as written.
const PAGE: &str = "docs/c-abi.md";

/// The READMEs whose `cc` lines must be the page's.
const READMES: [&str; 2] = ["README.md", "crates/nrtucode-capi/README.md"];

/// Runs the task.
pub fn run(meta: &Metadata) -> Result<(), String> {
    if !cfg!(target_os = "linux") {
        return Err("install-c-check: Linux only (ELF shared libraries with a SONAME)".into());
    }
    for (tool, package) in [("cc", "gcc"), ("pkg-config", "pkg-config")] {
        if Command::new(tool)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_err()
        {
            return Err(format!(
                "install-c-check needs {tool} (apt-get install {package})"
            ));
        }
    }
    let work = build::scratch(meta, "install-c-check")?;
    let result = check(meta, &work);
    let _ = std::fs::remove_dir_all(&work);
    result
}

fn check(meta: &Metadata, work: &Path) -> Result<(), String> {
    let target_dir = meta.target_dir.join("install-c-check");
    let install = |prefix: &Path, extra: &[&str]| {
        let mut command = Command::new("bash");
        command
            .arg("scripts/install-c.sh")
            .arg("--prefix")
            .arg(prefix)
            .args(extra)
            .env("CARGO_TARGET_DIR", &target_dir)
            .env_remove("DESTDIR");
        command
    };
    let want = crate::package::getter_size("CAYMAN_NX_ACT_PERF_IRAM_get")?;

    // The documented lines: every `cc ` line of the sh blocks of docs/c-abi.md; the READMEs may
    // only show some of them.
    let lines = documented_cc_lines(&crate::files::read_text(Path::new(PAGE))?);
    if lines.len() < 3 {
        return Err(format!(
            "{PAGE} shows {} cc lines, expected the shared, static and archive ones",
            lines.len()
        ));
    }
    for doc in READMES {
        for command in readme_cc_commands(&crate::files::read_text(Path::new(doc))?) {
            if !lines.contains(&command) {
                return Err(format!(
                    "{doc} shows '{command}', which is not a line {PAGE} shows (and this check runs)"
                ));
            }
        }
    }

    // A staged install: everything under DESTDIR, the .pc naming the prefix.
    let stage = work.join("stage");
    quiet(install(Path::new("/opt/nrtucode"), &[]).env("DESTDIR", &stage))?;
    let staged = stage.join("opt/nrtucode");
    for file in [
        "include/nrtucode/nrtucode.h",
        "lib/libnrtucode.a",
        "lib/libnrtucode.so.0",
        "lib/libnrtucode.so",
        "lib/pkgconfig/nrtucode.pc",
        "share/nrtucode/install-manifest.tsv",
    ] {
        if !staged.join(file).exists() {
            return Err(format!("DESTDIR install lacks {file}"));
        }
    }
    if !crate::files::read_text(&staged.join("lib/pkgconfig/nrtucode.pc"))?
        .lines()
        .any(|l| l == "prefix=/opt/nrtucode")
    {
        return Err("the staged nrtucode.pc does not name the prefix /opt/nrtucode".into());
    }

    // A real prefix: the shared library, its SONAME and development link.
    let prefix = work.join("prefix");
    crate::status(&mut install(&prefix, &[]))?;
    let lib = prefix.join("lib");
    // Both links name the versioned file, as cargo-c's `cargo cinstall` makes them.
    for link in ["libnrtucode.so", "libnrtucode.so.0"] {
        if !link_target(&lib.join(link)).starts_with("libnrtucode.so.0.") {
            return Err(format!("{link} is not a link to the versioned file"));
        }
    }
    let soname = crate::elf::dynamic(&lib.join("libnrtucode.so.0"))?.soname;
    if soname.as_deref() != Some("libnrtucode.so.0") {
        return Err(format!("SONAME is not libnrtucode.so.0 but {soname:?}"));
    }
    let pkg_config_path = lib.join("pkgconfig");
    crate::status(
        Command::new("pkg-config")
            .args(["--exists", "nrtucode"])
            .env("PKG_CONFIG_PATH", &pkg_config_path),
    )
    .map_err(|_| "pkg-config does not find nrtucode".to_string())?;

    // Each documented line, as written, in a directory holding app.c; then the program runs.
    let build_dir = work.join("build");
    crate::files::create_dir(&build_dir)?;
    std::fs::copy(PROGRAM, build_dir.join("app.c"))
        .map_err(|e| format!("cannot copy {PROGRAM}: {e}"))?;
    let app = build_dir.join("app");
    for line in &lines {
        let _ = std::fs::remove_file(&app);
        crate::status(
            Command::new("bash")
                .args(["-euo", "pipefail", "-c", line])
                .current_dir(&build_dir)
                .env("PKG_CONFIG_PATH", &pkg_config_path),
        )
        .map_err(|_| format!("the documented line failed: {line}"))?;
        let facts = crate::elf::dynamic(&app)?;
        linkage(line, &facts, &lib)?;
        let out = Command::new(&app)
            .current_dir(&build_dir)
            .env_remove("LD_LIBRARY_PATH")
            .output()
            .map_err(|e| format!("the program does not run: {line}: {e}"))?;
        if !out.status.success() {
            return Err(format!("the program does not run ({}): {line}", out.status));
        }
        let got = String::from_utf8_lossy(&out.stdout).trim_end().to_string();
        if got != want.to_string() {
            return Err(format!(
                "the program printed '{got}', the facts say {want}: {line}"
            ));
        }
    }

    // A reinstall over our own install succeeds.
    quiet(&mut install(&prefix, &[]))
        .map_err(|_| "a reinstall over our own install was refused".to_string())?;

    // A prefix holding the vendor's front library (here: another ELF library, under its file
    // name): refused, named, nothing changed; --force replaces it.
    let vendor = work.join("vendor");
    crate::files::create_dir(&vendor.join("lib"))?;
    let libm = build::stdout(Command::new("cc").arg("-print-file-name=libm.so.6"))?;
    let foreign = vendor.join("lib/libnrtucode.so");
    std::fs::copy(libm.trim(), &foreign)
        .map_err(|e| format!("cannot copy {}: {e}", libm.trim()))?;
    let before = snapshot(&vendor)?;
    refused(
        &mut install(&vendor, &[]),
        &format!(
            "refusing to replace {}: it is an ELF file with SONAME 'libm.so.6'",
            foreign.display()
        ),
        "installed over a foreign libnrtucode.so",
    )?;
    if snapshot(&vendor)? != before {
        return Err("a refused install changed the prefix".into());
    }
    let forced = install(&vendor, &["--force"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run install-c.sh: {e}"))?;
    if !forced.success() {
        return Err("--force did not install".into());
    }
    if !link_target(&foreign).starts_with("libnrtucode.so.0.") {
        return Err("--force did not replace libnrtucode.so".into());
    }

    // A link changed since the install is not ours any more.
    let dev_link = lib.join("libnrtucode.so");
    relink(&dev_link, "libnrtucode.so.0")?;
    let before = snapshot(&prefix)?;
    refused(
        &mut install(&prefix, &[]),
        &format!(
            "refusing to replace {}: it is a link to 'libnrtucode.so.0', changed since",
            dev_link.display()
        ),
        "replaced a changed link",
    )?;
    if snapshot(&prefix)? != before {
        return Err("a refused install changed the prefix".into());
    }
    relink(&dev_link, &link_target(&lib.join("libnrtucode.so.0")))?;

    // --uninstall removes what the manifest lists, and nothing else.
    std::fs::write(lib.join("someone-elses.so"), "")
        .map_err(|e| format!("cannot write in {}: {e}", lib.display()))?;
    quiet(&mut install(&prefix, &["--uninstall"]))?;
    let left: Vec<String> = snapshot(&prefix)?.into_keys().collect();
    if left != ["./lib/someone-elses.so"] {
        return Err(format!(
            "--uninstall left or removed the wrong files: {}",
            left.join(" ")
        ));
    }
    println!(
        "install-c-check: {} documented cc lines built programs that resolve {want} bytes; foreign files refused; uninstall clean",
        lines.len()
    );
    Ok(())
}

/// Every line starting `cc ` in the ```` ```sh ```` blocks of a Markdown page, as written.
pub fn documented_cc_lines(page: &str) -> Vec<String> {
    let mut in_sh = false;
    let mut lines = Vec::new();
    for line in page.lines() {
        if line.starts_with("```") {
            in_sh = line.trim() == "```sh";
            continue;
        }
        if in_sh && line.starts_with("cc ") {
            lines.push(line.to_string());
        }
    }
    lines
}

/// The `cc ` lines of a README, each without a trailing comment (`  # …`).
pub fn readme_cc_commands(readme: &str) -> Vec<String> {
    readme
        .lines()
        .filter(|l| l.starts_with("cc "))
        .map(|l| {
            l.split_once("  #")
                .map_or(l, |(command, _)| command)
                .to_string()
        })
        .collect()
}

/// Checks what a documented line linked: `-static`, no interpreter and no shared library;
/// `-Bstatic`, no shared nrtucode; otherwise libnrtucode.so.0 found through an rpath naming
/// `libdir`.
pub fn linkage(line: &str, facts: &crate::elf::Dynamic, libdir: &Path) -> Result<(), String> {
    if line.contains(" -static ") {
        if facts.interpreter {
            return Err(format!("not static (it has a program interpreter): {line}"));
        }
        if !facts.needed.is_empty() {
            return Err(format!("not static (it needs a shared library): {line}"));
        }
    } else if line.contains("-Bstatic") {
        if facts.needed.iter().any(|n| n.contains("nrtucode")) {
            return Err(format!("still needs a shared nrtucode: {line}"));
        }
    } else {
        if !facts.needed.iter().any(|n| n == "libnrtucode.so.0") {
            return Err(format!("does not need libnrtucode.so.0: {line}"));
        }
        if !facts.runpath.iter().any(|r| Path::new(r) == libdir) {
            return Err(format!(
                "its rpath {:?} does not name {}: {line}",
                facts.runpath,
                libdir.display()
            ));
        }
    }
    Ok(())
}

/// Runs an install that must be refused, its standard error naming `said`.
fn refused(command: &mut Command, said: &str, otherwise: &str) -> Result<(), String> {
    let out = command
        .stdout(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run install-c.sh: {e}"))?;
    if out.status.success() {
        return Err(otherwise.into());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    if !err.contains(said) {
        return Err(format!(
            "the refusal does not say \"{said}\": {}",
            err.trim()
        ));
    }
    Ok(())
}

/// A file or link as a snapshot keeps it: link target (empty for a file), size, permissions,
/// contents.
type Entry = (String, u64, u32, Vec<u8>);

/// Every file and link under `dir`, by `./`-relative path.
fn snapshot(dir: &Path) -> Result<BTreeMap<String, Entry>, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Entry>) -> Result<(), String> {
        let entries =
            std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        for entry in entries {
            let path = entry
                .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
                .path();
            let meta = std::fs::symlink_metadata(&path)
                .map_err(|e| format!("cannot stat {}: {e}", path.display()))?;
            let name = format!("./{}", path.strip_prefix(root).unwrap_or(&path).display());
            if meta.is_dir() {
                walk(root, &path, out)?;
            } else if meta.file_type().is_symlink() {
                out.insert(name, (link_target(&path), meta.len(), 0, Vec::new()));
            } else if meta.is_file() {
                let bytes = std::fs::read(&path)
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                out.insert(
                    name,
                    (String::new(), meta.len(), meta.permissions().mode(), bytes),
                );
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out)?;
    Ok(out)
}

/// A link's target (empty for anything else).
fn link_target(path: &Path) -> String {
    std::fs::read_link(path)
        .map(|t| t.display().to_string())
        .unwrap_or_default()
}

/// Replaces whatever `link` is by a link to `target`.
fn relink(link: &Path, target: &str) -> Result<(), String> {
    let _ = std::fs::remove_file(link);
    symlink(PathBuf::from(target), link)
        .map_err(|e| format!("cannot link {} to {target}: {e}", link.display()))
}

/// Runs `command` with its standard output discarded, failing unless it exits 0.
fn quiet(command: &mut Command) -> Result<(), String> {
    crate::status(command.stdout(Stdio::null()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elf::Dynamic;

    #[test]
    fn only_the_cc_lines_of_sh_blocks_are_documented_lines() {
        let page = "cc outside.c\n```sh\n# a comment\ncc a.c -o app\n  cc indented\n```\n\
             ```text\ncc not-sh\n```\n```sh\ncc b.c -static\n```\ncc after\n";
        assert_eq!(
            documented_cc_lines(page),
            ["cc a.c -o app", "cc b.c -static"]
        );
    }

    #[test]
    fn a_readme_line_loses_its_comment_only() {
        let readme = "cc a.c -o app  # shared\ncc b.c $(x)\nnot cc\n";
        assert_eq!(readme_cc_commands(readme), ["cc a.c -o app", "cc b.c $(x)"]);
    }

    #[test]
    fn each_kind_of_line_must_link_the_way_it_says() {
        let lib = Path::new("/p/lib");
        let shared = Dynamic {
            needed: vec!["libnrtucode.so.0".into(), "libc.so.6".into()],
            runpath: vec!["/p/lib".into()],
            interpreter: true,
            ..Dynamic::default()
        };
        let shared_line = "cc app.c -o app $(pkg-config --cflags --libs nrtucode)";
        assert!(linkage(shared_line, &shared, lib).is_ok());
        let no_rpath = Dynamic {
            runpath: vec![],
            ..Dynamic { ..shared }
        };
        assert!(linkage(shared_line, &no_rpath, lib).is_err());
        let libc_only = Dynamic {
            needed: vec!["libc.so.6".into()],
            interpreter: true,
            ..Dynamic::default()
        };
        assert!(linkage(shared_line, &libc_only, lib).is_err());
        let archive_line = "cc app.c -o app -Wl,-Bstatic $(pkg-config --libs nrtucode)";
        assert!(linkage(archive_line, &libc_only, lib).is_ok());
        assert!(linkage(archive_line, &no_rpath, lib).is_err());
        let static_line = "cc -static app.c -o app";
        assert!(linkage(static_line, &Dynamic::default(), lib).is_ok());
        assert!(linkage(static_line, &libc_only, lib).is_err());
        let static_pie = Dynamic {
            interpreter: true,
            ..Dynamic::default()
        };
        assert!(linkage(static_line, &static_pie, lib).is_err());
    }
}
