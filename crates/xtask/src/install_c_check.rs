//! `cargo xtask install-c-check`: checks `scripts/install-c.sh` the way a C user uses the
//! library: installs into a temporary prefix (cargo's output in `install-c-check` under the
//! target directory) and runs every `cc` line of the C-ABI page's install block
//! (docs/c-abi.md) as written, in a directory holding app.c; the READMEs' `cc` lines must be
//! among them. The shared program runs without LD_LIBRARY_PATH (its rpath names the prefix's
//! libdir), the `-static` one needs no shared library, the `-Bstatic` one no shared nrtucode
//! (read with `object`). Then: a DESTDIR install lands under DESTDIR with a .pc that names the
//! prefix; a foreign libnrtucode.so (another SONAME) and a changed link are refused, naming the
//! file, and nothing changes; --force replaces them; a reinstall succeeds; --uninstall removes
//! what the manifest lists and nothing else. Then a hostile tester's cases, each reported (see
//! [`hostile`]): forged manifest lines outside the prefix (directly, through `..`, through a
//! symlink) kept, `--force` or not; a relative DESTDIR from another directory; a directory in
//! the way with `--force` refused up front; a prefix with a space; a crafted ELF header refused
//! promptly. Linux only (needs gcc and pkg-config).

use std::collections::BTreeMap;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
    let hostile = hostile(meta, work, &target_dir, want)?;
    println!(
        "install-c-check: {} documented cc lines built programs that resolve {want} bytes; foreign files refused; uninstall clean; {hostile}",
        lines.len()
    );
    Ok(())
}

/// How the hostile cases run the installer: `--prefix` and the extra arguments, from `work`.
type Installer<'a> = &'a dyn Fn(&Path, &[&str]) -> Command;

/// The longest a refusal may take before the installer is killed: a watchdog against a hang,
/// not a measurement (the time is reported).
const WATCHDOG: Duration = Duration::from_secs(60);

/// A hostile tester's cases, each on a prefix of its own under `work`, run with the script's
/// absolute path from `work` (not the repository): a forged manifest line outside the prefix
/// (kept and named, `--force` or not, which the message never suggests), manifest paths that
/// leave the prefix through `..` or a symlink, a relative DESTDIR, a directory in the way with
/// `--force` (nothing installed), a prefix with a space (its .pc's pkg-config output builds and
/// links a program) and a crafted ELF header (e_phnum 65535) refused promptly. Every case runs;
/// all failures are reported. Returns what the summary line says of them.
fn hostile(meta: &Metadata, work: &Path, target_dir: &Path, want: u64) -> Result<String, String> {
    let script = meta.root.join("scripts/install-c.sh");
    let install = |prefix: &Path, extra: &[&str]| {
        let mut command = Command::new("bash");
        command
            .arg(&script)
            .arg("--prefix")
            .arg(prefix)
            .args(extra)
            .current_dir(work)
            .env("CARGO_TARGET_DIR", target_dir)
            .env_remove("DESTDIR");
        command
    };
    let mut elf_time = None;
    let results = [
        (
            "a forged manifest line outside the prefix",
            forged_line(&install, &work.join("h-forged")),
        ),
        (
            "manifest paths leaving the prefix (.., a symlink)",
            escaping_paths(&install, &work.join("h-escape")),
        ),
        (
            "a relative DESTDIR from another directory",
            relative_destdir(&install, &meta.root, &work.join("h-destdir")),
        ),
        (
            "a directory in the way, with --force",
            directory_in_the_way(&install, &work.join("h-directory")),
        ),
        (
            "a prefix with a space",
            spaced_prefix(&install, &meta.root, &work.join("h space"), want),
        ),
        (
            "a crafted ELF with e_phnum 65535",
            crafted_elf(&install, &work.join("h-elf")).map(|t| elf_time = Some(t)),
        ),
    ];
    let failed: Vec<String> = results
        .iter()
        .filter_map(|(case, result)| result.as_ref().err().map(|e| format!("{case}: {e}")))
        .collect();
    if !failed.is_empty() {
        return Err(format!(
            "{} of {} hostile cases failed:\n  {}",
            failed.len(),
            results.len(),
            failed.join("\n  ")
        ));
    }
    Ok(format!(
        "{} hostile cases hold (the crafted ELF refused in {:.1} s, build check included)",
        results.len(),
        elf_time.unwrap_or_default().as_secs_f64()
    ))
}

/// Forged lines appended to an install's manifest, naming files outside the prefix (one with its
/// right SHA-256, one with a wrong one): `--uninstall`, then `--uninstall --force` after a
/// reinstall, keep and name both, never suggest `--force`, and still remove what was installed.
fn forged_line(install: Installer, dir: &Path) -> Result<(), String> {
    let prefix = dir.join("prefix");
    let victim = dir.join("victim.txt");
    let changed = dir.join("changed.txt");
    for how in [&["--uninstall"][..], &["--uninstall", "--force"]] {
        let shown = how.join(" ");
        quiet(&mut install(&prefix, &[]))?;
        crate::files::write(&victim, "not install-c.sh's\n")?;
        crate::files::write(&changed, "not install-c.sh's either\n")?;
        let forged = format!(
            "{}\t{}\nsha256:{}\t{}\n",
            fingerprint(&victim)?,
            victim.display(),
            "0".repeat(64),
            changed.display()
        );
        append(&manifest(&prefix), &forged)?;
        let (ok, err) = outcome(&mut install(&prefix, how))?;
        for file in [&victim, &changed] {
            if !file.exists() {
                return Err(format!(
                    "{shown} deleted {}, outside the prefix (a forged manifest line)",
                    file.display()
                ));
            }
            if !err.contains(&file.display().to_string()) {
                return Err(format!(
                    "{shown} kept {} without naming it: {}",
                    file.display(),
                    err.trim()
                ));
            }
        }
        if ok {
            return Err(format!(
                "{shown} exited 0 though it kept files its manifest lists"
            ));
        }
        if err.contains("--force") {
            return Err(format!("{shown} suggests --force: {}", err.trim()));
        }
        if prefix.join("lib/libnrtucode.so.0").exists() || manifest(&prefix).exists() {
            return Err(format!(
                "{shown} left what it installed (or its manifest) because of lines outside the prefix"
            ));
        }
    }
    Ok(())
}

/// Manifest paths that leave the prefix, `$prefix/lib/../../victim.txt` and one through a symlink
/// in the prefix to a directory outside it, each with the file's right SHA-256: kept and named.
fn escaping_paths(install: Installer, dir: &Path) -> Result<(), String> {
    let prefix = dir.join("prefix");
    quiet(&mut install(&prefix, &[]))?;
    let outside = dir.join("outside");
    crate::files::create_dir(&outside)?;
    let victim = dir.join("victim.txt");
    let linked = outside.join("victim.txt");
    crate::files::write(&victim, "not install-c.sh's\n")?;
    crate::files::write(&linked, "not install-c.sh's either\n")?;
    symlink(&outside, prefix.join("share/escape"))
        .map_err(|e| format!("cannot link {}: {e}", prefix.join("share/escape").display()))?;
    let dotted = format!("{}/lib/../../victim.txt", prefix.display());
    let through = format!("{}/share/escape/victim.txt", prefix.display());
    let forged = format!(
        "{}\t{dotted}\n{}\t{through}\n",
        fingerprint(&victim)?,
        fingerprint(&linked)?
    );
    append(&manifest(&prefix), &forged)?;
    let (ok, err) = outcome(&mut install(&prefix, &["--uninstall"]))?;
    for (file, listed) in [(&victim, &dotted), (&linked, &through)] {
        if !file.exists() {
            return Err(format!(
                "--uninstall deleted {} (listed as {listed}), outside the prefix",
                file.display()
            ));
        }
        if !err.contains(listed.as_str()) {
            return Err(format!(
                "--uninstall kept {listed} without naming it: {}",
                err.trim()
            ));
        }
    }
    if ok {
        return Err("--uninstall exited 0 though it kept files its manifest lists".into());
    }
    Ok(())
}

/// `DESTDIR=<relative>` from a directory other than the repository: the install lands under that
/// directory, and the same `--uninstall` finds its manifest and removes it.
fn relative_destdir(install: Installer, root: &Path, dir: &Path) -> Result<(), String> {
    const NAME: &str = "install-c-check-relative-destdir";
    crate::files::create_dir(dir)?;
    let stray = root.join(NAME);
    if stray.exists() {
        return Err(format!(
            "{} exists already; remove it first",
            stray.display()
        ));
    }
    let opt = Path::new("/opt/nrtucode");
    let (ok, err) = outcome(install(opt, &[]).env("DESTDIR", NAME).current_dir(dir))?;
    if stray.exists() {
        let _ = std::fs::remove_dir_all(&stray);
        return Err(format!(
            "DESTDIR={NAME} landed in the repository ({}), not under the caller's directory",
            stray.display()
        ));
    }
    if !ok {
        return Err(format!("the install failed: {}", err.trim()));
    }
    let staged = dir.join(NAME).join("opt/nrtucode");
    if !staged.join("lib/libnrtucode.so.0").exists() {
        return Err(format!("nothing installed under {}", staged.display()));
    }
    let (ok, err) = outcome(
        install(opt, &["--uninstall"])
            .env("DESTDIR", NAME)
            .current_dir(dir),
    )?;
    if !ok {
        return Err(format!("the same --uninstall failed: {}", err.trim()));
    }
    if staged.join("lib/libnrtucode.so.0").exists() || manifest(&staged).exists() {
        return Err("the same --uninstall left the install in place".into());
    }
    Ok(())
}

/// A directory at `lib/libnrtucode.so`, install with `--force`: refused, naming it, and nothing
/// installed (no file, no manifest).
fn directory_in_the_way(install: Installer, dir: &Path) -> Result<(), String> {
    let prefix = dir.join("prefix");
    let in_the_way = prefix.join("lib/libnrtucode.so");
    crate::files::create_dir(&in_the_way)?;
    crate::files::write(&in_the_way.join("someone-elses.txt"), "kept\n")?;
    let before = snapshot(dir)?;
    refused(
        &mut install(&prefix, &["--force"]),
        &format!(
            "refusing to replace {}: it is a directory",
            in_the_way.display()
        ),
        "--force installed over a directory at lib/libnrtucode.so",
    )?;
    let after = snapshot(dir)?;
    if after != before {
        let added: Vec<&str> = after
            .keys()
            .filter(|k| !before.contains_key(*k))
            .map(String::as_str)
            .collect();
        return Err(format!(
            "the refused install changed the prefix (now also: {})",
            added.join(" ")
        ));
    }
    Ok(())
}

/// A prefix holding a space: installed, and the program built and linked from the .pc's
/// pkg-config output as a shell re-reading it sees it (`eval`, as in a Makefile) runs without
/// LD_LIBRARY_PATH.
fn spaced_prefix(install: Installer, root: &Path, dir: &Path, want: u64) -> Result<(), String> {
    let prefix = dir.join("pre fix");
    let (ok, err) = outcome(&mut install(&prefix, &[]))?;
    if !ok {
        return Err(format!("the install failed: {}", err.trim()));
    }
    let build_dir = dir.join("build");
    crate::files::create_dir(&build_dir)?;
    crate::files::copy(&root.join(PROGRAM), &build_dir.join("app.c"))?;
    let line = "cc app.c -o app $(pkg-config --cflags --libs nrtucode) -Wl,-rpath,$(pkg-config --variable=libdir nrtucode)";
    let lib = prefix.join("lib");
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &format!("eval \"{line}\"")])
        .current_dir(&build_dir)
        .env("PKG_CONFIG_PATH", lib.join("pkgconfig"))
        .output()
        .map_err(|e| format!("cannot run bash: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "eval \"{line}\" failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let app = build_dir.join("app");
    linkage(line, &crate::elf::dynamic(&app)?, &lib)?;
    let out = Command::new(&app)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .map_err(|e| format!("the program does not run: {e}"))?;
    let got = String::from_utf8_lossy(&out.stdout).trim_end().to_string();
    if !out.status.success() || got != want.to_string() {
        return Err(format!(
            "the program ({}) printed '{got}', the facts say {want}",
            out.status
        ));
    }
    Ok(())
}

/// A 128-byte ELF header at `lib/libnrtucode.so` claiming 65535 program headers: refused as an
/// ELF file, nothing changed, before the watchdog. Returns how long the refusal took.
fn crafted_elf(install: Installer, dir: &Path) -> Result<Duration, String> {
    let prefix = dir.join("prefix");
    crate::files::create_dir(&prefix.join("lib"))?;
    let crafted = prefix.join("lib/libnrtucode.so");
    let mut elf = [0u8; 128];
    elf[..7].copy_from_slice(b"\x7fELF\x02\x01\x01"); // ELF64, little-endian, version 1
    elf[16] = 3; // ET_DYN
    elf[18] = 62; // EM_X86_64
    elf[20] = 1; // e_version
    elf[32] = 64; // e_phoff: right after the header
    elf[52] = 64; // e_ehsize
    elf[54] = 56; // e_phentsize
    elf[56..58].copy_from_slice(&[0xff, 0xff]); // e_phnum 65535, far beyond the file
    crate::files::write(&crafted, elf)?;
    let before = snapshot(dir)?;
    let started = Instant::now();
    let (ok, err) = bounded(&mut install(&prefix, &[]), &dir.join("stderr.txt"))?;
    let took = started.elapsed();
    if ok {
        return Err("installed over the crafted ELF file".into());
    }
    let said = format!(
        "refusing to replace {}: it is an ELF file",
        crafted.display()
    );
    if !err.contains(&said) {
        return Err(format!(
            "the refusal does not say \"{said}\": {}",
            err.trim()
        ));
    }
    // The watchdog's standard error file is not part of the prefix.
    let mut after = snapshot(dir)?;
    after.remove("./stderr.txt");
    if after != before {
        return Err("a refused install changed the prefix".into());
    }
    Ok(took)
}

/// Runs `command` (standard output discarded): whether it exited 0, and its standard error.
fn outcome(command: &mut Command) -> Result<(bool, String), String> {
    let out = command
        .stdout(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run install-c.sh: {e}"))?;
    Ok((
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

/// [`outcome`], killing the command when it outlives [`WATCHDOG`]; standard error goes through
/// the file `err` (no pipe for a killed command's children to hold open).
fn bounded(command: &mut Command, err: &Path) -> Result<(bool, String), String> {
    let file =
        std::fs::File::create(err).map_err(|e| format!("cannot create {}: {e}", err.display()))?;
    let mut child = command
        .stdout(Stdio::null())
        .stderr(file)
        .spawn()
        .map_err(|e| format!("cannot run install-c.sh: {e}"))?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < WATCHDOG => {
                std::thread::sleep(Duration::from_millis(50))
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "still running after {} s (killed)",
                    WATCHDOG.as_secs()
                ));
            }
            Err(e) => return Err(format!("cannot wait for install-c.sh: {e}")),
        }
    };
    Ok((status.success(), crate::files::read_text(err)?))
}

/// The manifest of an install under `prefix` (DESTDIR included).
fn manifest(prefix: &Path) -> PathBuf {
    prefix.join("share/nrtucode/install-manifest.tsv")
}

/// A file's fingerprint as the manifest writes it: `sha256:` and its SHA-256 (`sha256sum`).
fn fingerprint(path: &Path) -> Result<String, String> {
    let out = build::stdout(Command::new("sha256sum").arg(path))?;
    match out.split_whitespace().next() {
        Some(hash) if hash.len() == 64 => Ok(format!("sha256:{hash}")),
        _ => Err(format!("sha256sum printed '{}'", out.trim())),
    }
}

/// Appends `text` to the file `path`.
fn append(path: &Path, text: &str) -> Result<(), String> {
    let mut bytes = crate::files::read(path)?;
    bytes.extend_from_slice(text.as_bytes());
    crate::files::write(path, bytes)
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
