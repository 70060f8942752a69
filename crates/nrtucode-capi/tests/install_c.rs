//! `scripts/install-c.sh` checked the way a C user uses the library (this was
//! `cargo xtask install-c-check`): each test installs into temporary prefixes of its own (under
//! cargo's `CARGO_TARGET_TMPDIR`, the library built in release into `install-c` there) and
//! checks what landed. Ignored by default, since each builds the C library in release: CI runs
//! them with `cargo test -p nrtucode-capi --test install_c -- --ignored`.
//!
//! Every `cc` line of the C-ABI page's install block (docs/c-abi.md) runs as written, in a
//! directory holding app.c (the READMEs' `cc` lines must be among them): the shared program runs
//! without LD_LIBRARY_PATH (its rpath names the prefix's libdir), the `-static` one needs no
//! shared library, the `-Bstatic` one no shared nrtucode (read with `object`). A DESTDIR install
//! lands under DESTDIR with a .pc that names the prefix; a foreign libnrtucode.so (another
//! SONAME) and a changed link are refused, naming the file, and nothing changes; --force
//! replaces them; a reinstall succeeds; --uninstall removes what the manifest lists and nothing
//! else. Then a hostile tester's cases, one test each: forged manifest lines outside the prefix
//! (directly, through `..`, through a symlink) kept, `--force` or not; a relative DESTDIR from
//! another directory; a directory in the way with `--force` refused up front; a prefix with a
//! space; a crafted ELF header refused promptly. Linux only (needs gcc and pkg-config).
#![cfg(target_os = "linux")]

use std::collections::BTreeMap;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use object::read::elf::{ElfFile64, ProgramHeader};

/// The C program built against the installed library.
const PROGRAM: &str = "crates/nrtucode-capi/tests/c/installed.c";

/// The page whose install block is run as written.
const PAGE: &str = "docs/c-abi.md";

/// The READMEs whose `cc` lines must be the page's.
const READMES: [&str; 2] = ["README.md", "crates/nrtucode-capi/README.md"];

/// The longest a refusal may take before the installer is killed: a watchdog against a hang,
/// not a measurement (the time is printed).
const WATCHDOG: Duration = Duration::from_secs(60);

/// A test's result: the error names what went wrong.
type Checked<T = ()> = Result<T, String>;

/// Fails the test with `result`'s error.
fn check(result: Checked) {
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

/// A scratch directory `install-c/NAME` under cargo's temporary directory, emptied first.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("install-c")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    create_dir(&dir).unwrap();
    dir
}

/// `bash scripts/install-c.sh --prefix PREFIX --fixtures EXTRA…` from `cwd`, the script named
/// by its absolute path, cargo's output in `install-c` under the temporary directory. With
/// `--partition` in EXTRA, without `--fixtures`, cargo's output in a target directory of its
/// own (another feature set: two builds into one directory would race for the library file).
fn install(cwd: &Path, prefix: &Path, extra: &[&str]) -> Command {
    let partition = extra.contains(&"--partition");
    let mut command = Command::new("bash");
    command
        .arg(root().join("scripts/install-c.sh"))
        .arg("--prefix")
        .arg(prefix)
        .args(if partition { None } else { Some("--fixtures") })
        .args(extra)
        .current_dir(cwd)
        .env(
            "CARGO_TARGET_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(if partition {
                "install-c/target-partition"
            } else {
                "install-c/target"
            }),
        )
        .env_remove("DESTDIR")
        .env_remove("NRTUCODE_BLOB_DIR")
        .env_remove("NRTUCODE_PARTITION_KEY")
        .env_remove("NRTUCODE_PARTITION_MIN_COUNTER")
        .env_remove("NRTUCODE_PARTITION_CLASS");
    command
}

/// What the installed program must print: the length of CAYMAN NX ACT's PERF IRAM image.
fn want() -> u64 {
    let image = nrtucode::get_memory_image(7, 0, 1, &nrtucode::StdEnv).expect("slot 7 PERF IRAM");
    image.len() as u64
}

#[test]
fn the_readmes_cc_lines_are_the_pages() {
    let root = root();
    let lines = documented_cc_lines(&read_text(&root.join(PAGE)).unwrap());
    assert!(
        lines.len() >= 3,
        "{PAGE} shows {} cc lines, expected the shared, static and archive ones",
        lines.len()
    );
    for doc in READMES {
        for command in readme_cc_commands(&read_text(&root.join(doc)).unwrap()) {
            assert!(
                lines.contains(&command),
                "{doc} shows '{command}', which is not a line {PAGE} shows (and install_c runs)"
            );
        }
    }
}

#[test]
#[ignore = "builds the C library in release and installs it into temporary prefixes: CI runs it with --ignored"]
fn a_destdir_install_lands_under_destdir_naming_the_prefix() {
    let work = scratch("destdir");
    let stage = work.join("stage");
    check(quiet(
        install(&root(), Path::new("/opt/nrtucode"), &[]).env("DESTDIR", &stage),
    ));
    let staged = stage.join("opt/nrtucode");
    for file in [
        "include/nrtucode/nrtucode.h",
        "lib/libnrtucode.a",
        "lib/libnrtucode.so.0",
        "lib/libnrtucode.so",
        "lib/pkgconfig/nrtucode.pc",
        "share/nrtucode/install-manifest.tsv",
    ] {
        assert!(staged.join(file).exists(), "DESTDIR install lacks {file}");
    }
    assert!(
        read_text(&staged.join("lib/pkgconfig/nrtucode.pc"))
            .unwrap()
            .lines()
            .any(|l| l == "prefix=/opt/nrtucode"),
        "the staged nrtucode.pc does not name the prefix /opt/nrtucode"
    );
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
#[ignore = "builds the C library in release and installs it into temporary prefixes: CI runs it with --ignored"]
fn every_documented_cc_line_builds_a_program_that_runs_and_uninstall_is_clean() {
    let work = scratch("documented");
    check(documented(&work));
    let _ = std::fs::remove_dir_all(&work);
}

/// A real prefix (the shared library, its SONAME and development link); each documented line, as
/// written, in a directory holding app.c, then the program runs; a reinstall; a link changed
/// since the install refused; `--uninstall` removes what the manifest lists and nothing else.
fn documented(work: &Path) -> Checked {
    let root = root();
    let want = want();
    let lines = documented_cc_lines(&read_text(&root.join(PAGE))?);
    let prefix = work.join("prefix");
    let said = stdout(&mut install(&root, &prefix, &[]))?;
    if !said.contains("install-c.sh: firmware in the library: fixtures: the built-in test bytes") {
        return Err(format!(
            "the install does not say it holds fixtures: {said}"
        ));
    }
    let lib = prefix.join("lib");
    // Both links name the versioned file, as cargo-c's `cargo cinstall` makes them.
    for link in ["libnrtucode.so", "libnrtucode.so.0"] {
        if !link_target(&lib.join(link)).starts_with("libnrtucode.so.0.") {
            return Err(format!("{link} is not a link to the versioned file"));
        }
    }
    let soname = dynamic(&lib.join("libnrtucode.so.0"))?.soname;
    if soname.as_deref() != Some("libnrtucode.so.0") {
        return Err(format!("SONAME is not libnrtucode.so.0 but {soname:?}"));
    }
    let pkg_config_path = lib.join("pkgconfig");
    status(
        Command::new("pkg-config")
            .args(["--exists", "nrtucode"])
            .env("PKG_CONFIG_PATH", &pkg_config_path),
    )
    .map_err(|_| "pkg-config does not find nrtucode".to_string())?;

    let build_dir = work.join("build");
    create_dir(&build_dir)?;
    copy(&root.join(PROGRAM), &build_dir.join("app.c"))?;
    let app = build_dir.join("app");
    for line in &lines {
        let _ = std::fs::remove_file(&app);
        status(
            Command::new("bash")
                .args(["-euo", "pipefail", "-c", line])
                .current_dir(&build_dir)
                .env("PKG_CONFIG_PATH", &pkg_config_path),
        )
        .map_err(|_| format!("the documented line failed: {line}"))?;
        linkage(line, &dynamic(&app)?, &lib)?;
        runs(&app, want).map_err(|e| format!("{e}: {line}"))?;
    }
    println!(
        "install_c: {} documented cc lines built programs that resolve {want} bytes",
        lines.len()
    );

    // A reinstall over our own install succeeds.
    quiet(&mut install(&root, &prefix, &[]))
        .map_err(|_| "a reinstall over our own install was refused".to_string())?;

    // A link changed since the install is not ours any more.
    let dev_link = lib.join("libnrtucode.so");
    relink(&dev_link, "libnrtucode.so.0")?;
    let before = snapshot(&prefix)?;
    refused(
        &mut install(&root, &prefix, &[]),
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
    write(&lib.join("someone-elses.so"), "")?;
    quiet(&mut install(&root, &prefix, &["--uninstall"]))?;
    let left: Vec<String> = snapshot(&prefix)?.into_keys().collect();
    if left != ["./lib/someone-elses.so"] {
        return Err(format!(
            "--uninstall left or removed the wrong files: {}",
            left.join(" ")
        ));
    }
    Ok(())
}

/// Runs the built program without LD_LIBRARY_PATH: it must exit 0 and print `want`.
fn runs(app: &Path, want: u64) -> Checked {
    let out = Command::new(app)
        .current_dir(app.parent().unwrap_or(app))
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

/// A prefix holding the vendor's front library (here: another ELF library, under its file
/// name): refused, named, nothing changed; --force replaces it.
#[test]
#[ignore = "builds the C library in release and installs it into temporary prefixes: CI runs it with --ignored"]
fn a_foreign_library_is_refused_and_force_replaces_it() {
    let work = scratch("foreign");
    let root = root();
    let vendor = work.join("vendor");
    create_dir(&vendor.join("lib")).unwrap();
    let libm = stdout(Command::new("cc").arg("-print-file-name=libm.so.6")).unwrap();
    let foreign = vendor.join("lib/libnrtucode.so");
    copy(Path::new(libm.trim()), &foreign).unwrap();
    let before = snapshot(&vendor).unwrap();
    check(refused(
        &mut install(&root, &vendor, &[]),
        &format!(
            "refusing to replace {}: it is an ELF file with SONAME 'libm.so.6'",
            foreign.display()
        ),
        "installed over a foreign libnrtucode.so",
    ));
    assert!(
        snapshot(&vendor).unwrap() == before,
        "a refused install changed the prefix"
    );
    check(quiet(
        install(&root, &vendor, &["--force"]).stderr(Stdio::null()),
    ));
    assert!(
        link_target(&foreign).starts_with("libnrtucode.so.0."),
        "--force did not replace libnrtucode.so"
    );
    let _ = std::fs::remove_dir_all(&work);
}

/// Forged lines appended to an install's manifest, naming files outside the prefix (one with its
/// right SHA-256, one with a wrong one): `--uninstall`, then `--uninstall --force` after a
/// reinstall, keep and name both, never suggest `--force`, and still remove what was installed.
#[test]
#[ignore = "builds the C library in release and installs it into temporary prefixes: CI runs it with --ignored"]
fn hostile_forged_manifest_lines_outside_the_prefix_are_kept() {
    let dir = scratch("h-forged");
    check(forged_line(&dir));
    let _ = std::fs::remove_dir_all(&dir);
}

fn forged_line(dir: &Path) -> Checked {
    let prefix = dir.join("prefix");
    let victim = dir.join("victim.txt");
    let changed = dir.join("changed.txt");
    for how in [&["--uninstall"][..], &["--uninstall", "--force"]] {
        let shown = how.join(" ");
        quiet(&mut install(dir, &prefix, &[]))?;
        write(&victim, "not install-c.sh's\n")?;
        write(&changed, "not install-c.sh's either\n")?;
        let forged = format!(
            "{}\t{}\nsha256:{}\t{}\n",
            fingerprint(&victim)?,
            victim.display(),
            "0".repeat(64),
            changed.display()
        );
        append(&manifest(&prefix), &forged)?;
        let (ok, err) = outcome(&mut install(dir, &prefix, how))?;
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
#[test]
#[ignore = "builds the C library in release and installs it into temporary prefixes: CI runs it with --ignored"]
fn hostile_manifest_paths_leaving_the_prefix_are_kept() {
    let dir = scratch("h-escape");
    check(escaping_paths(&dir));
    let _ = std::fs::remove_dir_all(&dir);
}

fn escaping_paths(dir: &Path) -> Checked {
    let prefix = dir.join("prefix");
    quiet(&mut install(dir, &prefix, &[]))?;
    let outside = dir.join("outside");
    create_dir(&outside)?;
    let victim = dir.join("victim.txt");
    let linked = outside.join("victim.txt");
    write(&victim, "not install-c.sh's\n")?;
    write(&linked, "not install-c.sh's either\n")?;
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
    let (ok, err) = outcome(&mut install(dir, &prefix, &["--uninstall"]))?;
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
#[test]
#[ignore = "builds the C library in release and installs it into temporary prefixes: CI runs it with --ignored"]
fn hostile_a_relative_destdir_from_another_directory() {
    let dir = scratch("h-destdir");
    check(relative_destdir(&dir));
    let _ = std::fs::remove_dir_all(&dir);
}

fn relative_destdir(dir: &Path) -> Checked {
    const NAME: &str = "install-c-check-relative-destdir";
    let stray = root().join(NAME);
    if stray.exists() {
        return Err(format!(
            "{} exists already; remove it first",
            stray.display()
        ));
    }
    let opt = Path::new("/opt/nrtucode");
    let (ok, err) = outcome(install(dir, opt, &[]).env("DESTDIR", NAME))?;
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
    let (ok, err) = outcome(install(dir, opt, &["--uninstall"]).env("DESTDIR", NAME))?;
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
#[test]
#[ignore = "builds the C library in release and installs it into temporary prefixes: CI runs it with --ignored"]
fn hostile_a_directory_in_the_way_with_force_installs_nothing() {
    let dir = scratch("h-directory");
    let prefix = dir.join("prefix");
    let in_the_way = prefix.join("lib/libnrtucode.so");
    create_dir(&in_the_way).unwrap();
    write(&in_the_way.join("someone-elses.txt"), "kept\n").unwrap();
    let before = snapshot(&dir).unwrap();
    check(refused(
        &mut install(&dir, &prefix, &["--force"]),
        &format!(
            "refusing to replace {}: it is a directory",
            in_the_way.display()
        ),
        "--force installed over a directory at lib/libnrtucode.so",
    ));
    let after = snapshot(&dir).unwrap();
    let added: Vec<&str> = after
        .keys()
        .filter(|k| !before.contains_key(*k))
        .map(String::as_str)
        .collect();
    assert!(
        after == before,
        "the refused install changed the prefix (now also: {})",
        added.join(" ")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A prefix holding a space: installed, and the program built and linked from the .pc's
/// pkg-config output as a shell re-reading it sees it (`eval`, as in a Makefile) runs without
/// LD_LIBRARY_PATH.
#[test]
#[ignore = "builds the C library in release and installs it into temporary prefixes: CI runs it with --ignored"]
fn hostile_a_prefix_with_a_space() {
    let dir = scratch("h space");
    check(spaced_prefix(&dir));
    let _ = std::fs::remove_dir_all(&dir);
}

fn spaced_prefix(dir: &Path) -> Checked {
    let prefix = dir.join("pre fix");
    let (ok, err) = outcome(&mut install(dir, &prefix, &[]))?;
    if !ok {
        return Err(format!("the install failed: {}", err.trim()));
    }
    let build_dir = dir.join("build");
    create_dir(&build_dir)?;
    copy(&root().join(PROGRAM), &build_dir.join("app.c"))?;
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
    linkage(line, &dynamic(&app)?, &lib)?;
    runs(&app, want())
}

/// A 128-byte ELF header at `lib/libnrtucode.so` claiming 65535 program headers: refused as an
/// ELF file, nothing changed, before the watchdog; prints how long the refusal took.
#[test]
#[ignore = "builds the C library in release and installs it into temporary prefixes: CI runs it with --ignored"]
fn hostile_a_crafted_elf_header_is_refused_promptly() {
    let dir = scratch("h-elf");
    check(crafted_elf(&dir));
    let _ = std::fs::remove_dir_all(&dir);
}

fn crafted_elf(dir: &Path) -> Checked {
    let prefix = dir.join("prefix");
    create_dir(&prefix.join("lib"))?;
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
    write(&crafted, elf)?;
    let before = snapshot(dir)?;
    let started = Instant::now();
    let (ok, err) = bounded(&mut install(dir, &prefix, &[]), &dir.join("stderr.txt"))?;
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
    println!(
        "install_c: the crafted ELF refused in {:.1} s, build check included",
        took.as_secs_f64()
    );
    Ok(())
}

#[test]
fn a_dynamic_executable_names_its_interpreter_and_libc_and_has_no_soname() {
    let facts = dynamic(&std::env::current_exe().unwrap()).unwrap();
    assert!(facts.interpreter, "{facts:?}");
    assert!(facts.soname.is_none(), "{facts:?}");
    assert!(
        facts.needed.iter().any(|n| n.starts_with("libc.so")),
        "{facts:?}"
    );
    assert!(dynamic(&root().join("Cargo.toml")).is_err());
}

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
        ..shared
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

/// Every line starting `cc ` in the ```` ```sh ```` blocks of a Markdown page, as written.
fn documented_cc_lines(page: &str) -> Vec<String> {
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
fn readme_cc_commands(readme: &str) -> Vec<String> {
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

/// What an ELF file says about its dynamic linking (its dynamic table and program headers).
#[derive(Debug, Default, PartialEq)]
struct Dynamic {
    /// `DT_SONAME`.
    soname: Option<String>,
    /// Every `DT_NEEDED`, in order.
    needed: Vec<String>,
    /// The directories of `DT_RUNPATH` and `DT_RPATH`.
    runpath: Vec<String>,
    /// Whether it names a program interpreter (`PT_INTERP`): a dynamically linked executable.
    interpreter: bool,
}

/// The dynamic linking facts of the 64-bit ELF file at `path` (read with `object`).
fn dynamic(path: &Path) -> Checked<Dynamic> {
    use object::elf::{DT_NEEDED, DT_RPATH, DT_RUNPATH, DT_SONAME, PT_INTERP};
    let data = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let shown = |e: object::Error| format!("{}: {e}", path.display());
    let file = ElfFile64::<object::Endianness>::parse(&*data).map_err(shown)?;
    let endian = file.endian();
    let table = file
        .elf_section_table()
        .dynamic_table(endian, &*data)
        .map_err(shown)?;
    let mut facts = Dynamic {
        interpreter: file
            .elf_program_headers()
            .iter()
            .any(|p| p.p_type(endian) == PT_INTERP),
        ..Dynamic::default()
    };
    for entry in &table {
        if ![DT_SONAME, DT_NEEDED, DT_RUNPATH, DT_RPATH].contains(&entry.tag) {
            continue;
        }
        let value = String::from_utf8_lossy(table.string(entry).map_err(shown)?).into_owned();
        match entry.tag {
            DT_SONAME => facts.soname = Some(value),
            DT_NEEDED => facts.needed.push(value),
            _ => facts.runpath.extend(value.split(':').map(str::to_string)),
        }
    }
    Ok(facts)
}

/// Checks what a documented line linked: `-static`, no interpreter and no shared library;
/// `-Bstatic`, no shared nrtucode; otherwise libnrtucode.so.0 found through an rpath naming
/// `libdir`.
fn linkage(line: &str, facts: &Dynamic, libdir: &Path) -> Checked {
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

/// Runs `command`, failing with its command line unless it exits 0.
fn status(command: &mut Command) -> Checked {
    let shown = format!("{command:?}");
    match command.status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("{shown} failed ({s})")),
        Err(e) => Err(format!("cannot run {shown}: {e}")),
    }
}

/// Runs `command` with its standard output discarded, failing unless it exits 0.
fn quiet(command: &mut Command) -> Checked {
    status(command.stdout(Stdio::null()))
}

/// Runs `command` and returns its standard output; fails unless it exits 0.
fn stdout(command: &mut Command) -> Checked<String> {
    let out = command
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{command:?} failed ({})", out.status));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs `command` (standard output discarded): whether it exited 0, and its standard error.
fn outcome(command: &mut Command) -> Checked<(bool, String)> {
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
fn bounded(command: &mut Command, err: &Path) -> Checked<(bool, String)> {
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
    Ok((status.success(), read_text(err)?))
}

/// Runs an install that must be refused, its standard error naming `said`.
fn refused(command: &mut Command, said: &str, otherwise: &str) -> Checked {
    let (ok, err) = outcome(command)?;
    if ok {
        return Err(otherwise.into());
    }
    if !err.contains(said) {
        return Err(format!(
            "the refusal does not say \"{said}\": {}",
            err.trim()
        ));
    }
    Ok(())
}

/// The manifest of an install under `prefix` (DESTDIR included).
fn manifest(prefix: &Path) -> PathBuf {
    prefix.join("share/nrtucode/install-manifest.tsv")
}

/// A file's fingerprint as the manifest writes it: `sha256:` and its SHA-256 (`sha256sum`).
fn fingerprint(path: &Path) -> Checked<String> {
    let out = stdout(Command::new("sha256sum").arg(path))?;
    match out.split_whitespace().next() {
        Some(hash) if hash.len() == 64 => Ok(format!("sha256:{hash}")),
        _ => Err(format!("sha256sum printed '{}'", out.trim())),
    }
}

/// Appends `text` to the file `path`.
fn append(path: &Path, text: &str) -> Checked {
    let mut bytes =
        std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    bytes.extend_from_slice(text.as_bytes());
    write(path, bytes)
}

/// A file or link as a snapshot keeps it: link target (empty for a file), size, permissions,
/// contents.
type Entry = (String, u64, u32, Vec<u8>);

/// Every file and link under `dir`, by `./`-relative path.
fn snapshot(dir: &Path) -> Checked<BTreeMap<String, Entry>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Entry>) -> Checked {
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
fn relink(link: &Path, target: &str) -> Checked {
    let _ = std::fs::remove_file(link);
    symlink(PathBuf::from(target), link)
        .map_err(|e| format!("cannot link {} to {target}: {e}", link.display()))
}

/// Reads `path` as UTF-8 text, failing with its name.
fn read_text(path: &Path) -> Checked<String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Writes `path` from `bytes`, failing with its name.
fn write(path: &Path, bytes: impl AsRef<[u8]>) -> Checked {
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Copies `from` to `to`, failing with both names.
fn copy(from: &Path, to: &Path) -> Checked {
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
}

/// Creates `path` and its parents, failing with its name.
fn create_dir(path: &Path) -> Checked {
    std::fs::create_dir_all(path).map_err(|e| format!("cannot create {}: {e}", path.display()))
}

/// Without a blob source the script builds and installs nothing, and names the three ways.
#[test]
fn without_a_blob_source_nothing_is_installed() {
    let work = scratch("no-source");
    let prefix = work.join("prefix");
    let out = Command::new("bash")
        .arg(root().join("scripts/install-c.sh"))
        .arg("--prefix")
        .arg(&prefix)
        .env_remove("NRTUCODE_BLOB_DIR")
        .output()
        .expect("run install-c.sh");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(64), "{err}");
    for way in ["NRTUCODE_BLOB_DIR=DIR", "--partition", "--fixtures"] {
        assert!(err.contains(way), "the refusal does not name {way}: {err}");
    }
    assert!(!prefix.exists(), "a refused install created the prefix");
    // Two sources at once are refused too.
    let out = Command::new("bash")
        .arg(root().join("scripts/install-c.sh"))
        .args([
            "--prefix",
            "/nonexistent/prefix",
            "--fixtures",
            "--partition",
        ])
        .output()
        .expect("run install-c.sh");
    assert_eq!(out.status.code(), Some(64));
    let _ = std::fs::remove_dir_all(&work);
}

/// What a library built with `NRTUCODE_PARTITION_KEY=test` writes to stderr at its first call.
const TEST_KEY_NOTICE: &str = "libnrtucode: warning: the key built into this library is the repository's TEST key (built with NRTUCODE_PARTITION_KEY=test): anyone can sign a partition it accepts; for tests only\n";

/// A partition-backed install without a key named fails before building, saying how to name
/// one; nothing is installed.
#[test]
fn a_partition_backed_install_without_a_key_named_is_refused() {
    let work = scratch("no-key");
    let prefix = work.join("prefix");
    for key in [None, Some("")] {
        let mut command = Command::new("bash");
        command
            .arg(root().join("scripts/install-c.sh"))
            .arg("--prefix")
            .arg(&prefix)
            .arg("--partition")
            .env_remove("NRTUCODE_BLOB_DIR")
            .env_remove("NRTUCODE_PARTITION_KEY");
        if let Some(key) = key {
            command.env("NRTUCODE_PARTITION_KEY", key);
        }
        let out = command.output().expect("run install-c.sh");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(64), "{err}");
        assert!(
            err.contains("set NRTUCODE_PARTITION_KEY to the absolute path of your public key")
                && err.contains("'test'"),
            "{err}"
        );
        assert!(!prefix.exists(), "a refused install created the prefix");
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// The program the partition-backed library is checked with.
const ENV_PROGRAM: &str = "crates/nrtucode-capi/tests/c/env_partition.c";

/// The largest the partition-backed shared library may be: at most 1 MB (docs/c-abi.md gives
/// today's size and the command that measures it).
const MAX_PARTITION_LIBRARY_BYTES: u64 = 1_000_000;

/// FNV-1a 64, as `env_partition.c` hashes an answer.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// What `env_partition.c` prints for its grid: the embedded (fixture) answers when the
/// partition holds the fixtures, or `unavailable` (every image code 3, every table code 2).
fn grid(unavailable: bool) -> String {
    use std::fmt::Write as _;
    let line = |out: &mut String, result: Result<&[u8], nrtucode::ResolveErr>, none: i32| {
        let _ = match (unavailable, result) {
            (true, _) => writeln!(out, " {none} - -"),
            (false, Ok(b)) => writeln!(out, " 0 {} {:016x}", b.len(), fnv1a(b)),
            (false, Err(e)) => writeln!(out, " {} - -", e.code()),
        };
    };
    let mut out = String::new();
    for idx in 0..=39u32 {
        for region in -1..=4 {
            for flavor in [0, 1, 2, 3, 17, 18, 19, 5] {
                let _ = write!(out, "image {idx} {region} {flavor}");
                let r = nrtucode::get_memory_image(idx, region, flavor, &nrtucode::NoEnv);
                line(&mut out, r, 3);
            }
        }
        for kind in -1..=2 {
            let _ = write!(out, "table {idx} {kind}");
            line(&mut out, nrtucode::get_hwdecode_table(idx, kind), 2);
        }
    }
    out
}

/// A host built against the vendor's library (its look-alike: no SONAME, so the host's NEEDED
/// is the file name `libnrtucode_internal.so`) runs, unrebuilt, on the partition-backed
/// library put under that file name with `NRTUCODE_PARTITION` set, and prints what it printed
/// on the vendor's (`want`, the fixtures' answers, without the last-error line).
fn switch_without_rebuild(
    work: &Path,
    build_dir: &Path,
    ours: &Path,
    partition: &Path,
    want: &str,
) -> Checked {
    use nrtucode_lookalike::{LibraryBuild, OptLevel, Options, build_shared_object, generate_c};
    let vendor = work.join("vendor");
    let dropin = work.join("dropin");
    create_dir(&vendor)?;
    create_dir(&dropin)?;
    let library = LibraryBuild::Full.library_name();
    write(
        &vendor.join("lookalike.c"),
        generate_c(&Options::new(LibraryBuild::Full)),
    )?;
    build_shared_object(
        &vendor.join("lookalike.c"),
        &vendor.join(library),
        OptLevel::O0,
        false,
    )
    .map_err(|e| format!("the vendor look-alike: {e}"))?;
    let host = build_dir.join("vendor_host");
    status(
        Command::new("cc")
            .args(["-DNRTUCODE_VENDOR_ONLY", "-I"])
            .arg(root().join("crates/nrtucode-capi/include"))
            .arg(build_dir.join("host.c"))
            .arg("-o")
            .arg(&host)
            .arg(format!("-L{}", vendor.display()))
            .args(["-lnrtucode_internal", "-lpthread"]),
    )?;
    let needed = dynamic(&host)?.needed;
    if !needed.iter().any(|n| n == library) {
        return Err(format!(
            "the vendor host does not need {library}: {needed:?}"
        ));
    }
    copy(ours, &dropin.join(library))?;
    let want = want.strip_suffix("last_error 0\n").unwrap_or(want);
    for (dir, partition) in [(&vendor, None), (&dropin, Some(partition))] {
        let mut command = Command::new(&host);
        command
            .env("LD_LIBRARY_PATH", dir)
            .env_remove("NEURON_UCODE_FLAVOR")
            .env_remove("NRTUCODE_MPLUS_ON_MARIANA")
            .env_remove("NRTUCODE_PARTITION");
        if let Some(p) = partition {
            command.env("NRTUCODE_PARTITION", p);
        }
        let out = stdout(&mut command)?;
        if out != want {
            let first = want.lines().zip(out.lines()).find(|(w, o)| w != o);
            return Err(format!(
                "the unrebuilt vendor host on {}: {first:?}",
                dir.display()
            ));
        }
    }
    println!(
        "install_c: a host built against {library} answered alike, unrebuilt, on the partition-backed library"
    );
    Ok(())
}

/// The drop-in without firmware, installed with `--partition`, under 1 MB, with no fixture
/// byte; a host program built against it answers exactly the fixtures' answers from a partition
/// of the fixtures named by `NRTUCODE_PARTITION`, and, for a partition it must refuse (unset,
/// relative, missing, unsigned, another key, below the minimum counter, a damaged blob), 3 for
/// every image and 2 for every table, the reason once on stderr and from
/// `nrtucode_partition_last_error`.
#[test]
#[ignore = "builds the partition-backed C library in release and installs it: CI runs it with --ignored"]
fn the_partition_backed_library_answers_from_the_partition_named_at_run_time() {
    let work = scratch("partition");
    check(partition_backed(&work));
    let _ = std::fs::remove_dir_all(&work);
}

fn partition_backed(work: &Path) -> Checked {
    use nrtucode::partition::TableClass;
    use nrtucode_pack::{Blobs, Compression, PackOptions, SigningKey, pack_with};

    let root = root();
    let prefix = work.join("prefix");
    let said = stdout(
        install(&root, &prefix, &["--partition"])
            .env("NRTUCODE_PARTITION_MIN_COUNTER", "2")
            .env("NRTUCODE_PARTITION_KEY", "test"),
    )?;
    if !said.contains("firmware in the library: none: partition-backed") {
        return Err(format!(
            "the install does not say it holds no firmware: {said}"
        ));
    }
    let so = prefix.join("lib/libnrtucode.so.0");
    let size = std::fs::metadata(&so).map_err(|e| e.to_string())?.len();
    println!("install_c: the partition-backed libnrtucode.so.0 is {size} bytes");
    if size > MAX_PARTITION_LIBRARY_BYTES {
        return Err(format!(
            "the partition-backed library is {size} bytes, over 1 MB"
        ));
    }
    let bytes = std::fs::read(&so).map_err(|e| e.to_string())?;
    if bytes.windows(16).any(|w| w == b"NRTUCODE FIXTURE") {
        return Err("the partition-backed library holds fixture bytes".into());
    }

    // The host program, built as a C user builds it.
    let build_dir = work.join("build");
    create_dir(&build_dir)?;
    copy(&root.join(ENV_PROGRAM), &build_dir.join("host.c"))?;
    let pkg_config_path = prefix.join("lib/pkgconfig");
    status(
        Command::new("bash")
            .args([
                "-euo",
                "pipefail",
                "-c",
                "cc host.c -o host -lpthread $(pkg-config --cflags --libs nrtucode) -Wl,-rpath,\"$(pkg-config --variable=libdir nrtucode)\"",
            ])
            .current_dir(&build_dir)
            .env("PKG_CONFIG_PATH", &pkg_config_path),
    )?;

    // Partitions of the fixtures: the one to answer from, and one per refusal.
    let key = SigningKey::from_pem(include_str!("../../../keys/test-ed25519.pem"))
        .map_err(|e| e.to_string())?;
    let other = SigningKey::generate();
    let pack = |counter: u32, key: Option<&SigningKey>, compression: Compression| {
        let options = PackOptions {
            security_counter: counter,
            key,
        };
        pack_with(&Blobs::fixtures(TableClass::Full), &options, compression)
            .map(|(bytes, _)| bytes)
            .map_err(|e| e.to_string())
    };
    let parts = work.join("partitions");
    create_dir(&parts)?;
    let good = pack(3, Some(&key), Compression::Deflate)?;
    let mut damaged = pack(3, Some(&key), Compression::Stored)?;
    let last = damaged.len() - 1;
    damaged[last] ^= 1; // the last blob's last byte
    for (name, bytes) in [
        ("good.part", good),
        ("unsigned.part", pack(3, None, Compression::Stored)?),
        (
            "other-key.part",
            pack(3, Some(&other), Compression::Stored)?,
        ),
        ("rollback.part", pack(1, Some(&key), Compression::Stored)?),
        ("damaged.part", damaged),
    ] {
        write(&parts.join(name), bytes)?;
    }

    let run_reporting = |partition: Option<&std::ffi::OsStr>,
                         report: bool|
     -> Checked<(String, String)> {
        let mut command = Command::new(build_dir.join("host"));
        if report {
            command.env("NRTUCODE_PARTITION_REPORT", "1");
        } else {
            command.env_remove("NRTUCODE_PARTITION_REPORT");
        }
        command
            .env_remove("LD_LIBRARY_PATH")
            .env_remove("NEURON_UCODE_FLAVOR")
            .env_remove("NRTUCODE_MPLUS_ON_MARIANA")
            .env_remove("NRTUCODE_PARTITION");
        if let Some(p) = partition {
            command.env("NRTUCODE_PARTITION", p);
        }
        let out = command.output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!("the host program failed ({})", out.status));
        }
        // Built with the test key named: every process's first call says so, first.
        let err = String::from_utf8_lossy(&out.stderr);
        let Some(err) = err.strip_prefix(TEST_KEY_NOTICE) else {
            return Err(format!(
                "a library built with NRTUCODE_PARTITION_KEY=test did not say so at its first call: {err:?}"
            ));
        };
        Ok((
            String::from_utf8_lossy(&out.stdout).into_owned(),
            err.to_owned(),
        ))
    };
    let run = |partition: Option<&std::ffi::OsStr>| run_reporting(partition, false);

    let (out, err) = run(Some(parts.join("good.part").as_os_str()))?;
    let want = format!("{}threads 0 1\nlast_error 0\n", grid(false));
    if out != want {
        let first = want.lines().zip(out.lines()).find(|(w, o)| w != o);
        return Err(format!(
            "the partition's answers differ from the fixtures': {first:?}"
        ));
    }
    if !err.is_empty() {
        return Err(format!("a good partition printed to stderr: {err}"));
    }
    // NRTUCODE_PARTITION_REPORT: one line at the first call, what is trusted and opened.
    let good = parts.join("good.part");
    let (_, err) = run_reporting(Some(good.as_os_str()), true)?;
    let key_id: String = key
        .public_key()
        .key_id()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let said = format!(
        "libnrtucode: the key built into this library: key ID {key_id} (the repository's TEST key); NRTUCODE_PARTITION={}: verified, answering from it\n",
        good.display()
    );
    if err != said {
        return Err(format!(
            "NRTUCODE_PARTITION_REPORT=1 said {err:?}, not {said:?}"
        ));
    }
    switch_without_rebuild(work, &build_dir, &so, &parts.join("good.part"), &want)?;

    let path = |name: &str| Some(parts.join(name).into_os_string());
    // The C user gave no key: the message names the key built into this library.
    let other_key = format!(
        "not the key it was checked with; the key built into this library has key ID {key_id}"
    );
    let cases: [(Option<std::ffi::OsString>, i32, &str); 7] = [
        (None, 13, "NRTUCODE_PARTITION is not set"),
        (Some("good.part".into()), 13, "is not an absolute path"),
        (path("missing.part"), 3, "missing.part: No such file"),
        (path("unsigned.part"), 5, "unsigned"),
        (path("other-key.part"), 6, &other_key),
        (
            path("rollback.part"),
            8,
            "security counter 1 is below the minimum 2",
        ),
        (path("damaged.part"), 10, "SHA-256 mismatch"),
    ];
    let refused = format!("{}threads 3 1\n", grid(true));
    for (partition, code, reason) in cases {
        let (out, err) = run(partition.as_deref())?;
        if out != format!("{refused}last_error {code}\n") {
            let tail: Vec<&str> = out.lines().rev().take(2).collect();
            return Err(format!(
                "NRTUCODE_PARTITION={partition:?}: not every call answered 3 / 2 with reason {code}: {tail:?}"
            ));
        }
        let lines: Vec<&str> = err.lines().collect();
        if lines.len() != 1 || !lines[0].contains(reason) || !lines[0].starts_with("nrtucode: ") {
            return Err(format!(
                "NRTUCODE_PARTITION={partition:?}: stderr is not one line saying '{reason}': {err:?}"
            ));
        }
        println!("install_c: refused: {}", lines[0]);
    }
    Ok(())
}
