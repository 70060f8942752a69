//! `nrtucode carve` writes all or nothing: whatever fails (a full filesystem, a read-only
//! destination, a name collision, bad input), it exits non-zero and the destination and its
//! parent are exactly as they were. Files it did not write are never deleted or overwritten;
//! an earlier carve is replaced whole.
//!
//! The filesystem cases mount a small or read-only tmpfs, which needs root with
//! `CAP_SYS_ADMIN`; the permission cases run the carve as `nobody` through `setpriv`, which
//! needs root. Those four are `#[ignore]`d (so an ordinary `cargo test` lists them as ignored)
//! and fail where they cannot do what they need; CI runs them as root with
//! `cargo test -p nrtucode-cli --test atomic_write -- --ignored`.
//!
//! Unix only: the cases set modes, compare inodes and make symbolic links (the carve
//! library's own tests cover the rename paths Windows takes).
#![cfg(unix)]

// The look-alike builds the carve library's tests share (cached under cargo's target tmp).
#[path = "../../nrtucode-carve/tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nrtucode_lookalike::{LibraryBuild, OptLevel};
use nrtucode_test_elf::TinyElf;
use sha2::Digest as _;

/// Every file and directory under `root`, with file contents.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![root.to_owned()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().to_owned();
            if path.is_dir() {
                out.insert(rel, None);
                todo.push(path);
            } else {
                out.insert(rel, Some(std::fs::read(&path).unwrap()));
            }
        }
    }
    out
}

fn carve(lib: &Path, out: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nrtucode"))
        .arg("carve")
        .arg(lib)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A few-KB library with three blobs.
fn tiny_lib(dir: &Path) -> PathBuf {
    let path = dir.join("tiny.so");
    std::fs::write(&path, TinyElf::default().build()).unwrap();
    path
}

fn front_lib() -> PathBuf {
    common::lib(LibraryBuild::Front, OptLevel::O2, true)
        .path
        .clone()
}

/// Runs a carve that must fail and checks that nothing under `root` changed.
fn fails_leaving_as_it_was(lib: &Path, out: &Path, root: &Path, expect: &str) -> Option<i32> {
    let before = snapshot(root);
    let o = carve(lib, out);
    assert!(
        !o.status.success(),
        "carve into {} succeeded",
        out.display()
    );
    assert!(stderr(&o).contains(expect), "{expect:?} in {}", stderr(&o));
    assert_eq!(snapshot(root), before, "{}", stderr(&o));
    o.status.code()
}

/// `EX_CANTCREAT`: the output cannot be created.
const CANT_CREATE: Option<i32> = Some(73);

#[test]
fn an_earlier_carve_is_replaced_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("blobs");
    let tiny = tiny_lib(tmp.path());
    assert!(carve(&tiny, &out).status.success());
    let earlier = snapshot(&out);
    assert_eq!(earlier.len(), 4, "three blobs and the manifest");
    let o = carve(&front_lib(), &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let now = snapshot(&out);
    assert!(
        earlier
            .keys()
            .all(|k| k.ends_with("manifest.tsv") || !now.contains_key(k)),
        "a blob of the earlier carve survived"
    );
    assert!(nrtucode_carve::check_dir(&out).is_ok());
    // The header's sha256 (hashed on a second thread while the blobs are written) is the
    // library's, and the directory is what the two-step library API writes.
    let data = std::fs::read(front_lib()).unwrap();
    let text = std::fs::read_to_string(out.join("manifest.tsv")).unwrap();
    let manifest = nrtucode_facts::Manifest::parse(&text).unwrap();
    let digest = sha2::Sha256::digest(&data);
    assert_eq!(
        manifest.header.source_sha256,
        nrtucode_facts::hex::lower_hex(&digest)
    );
    let two_step = tmp.path().join("two-step");
    let name = front_lib()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let carved = nrtucode_carve::carve_bytes(&data, &name).unwrap();
    nrtucode_carve::write_blob_dir(&carved, &data, &two_step).unwrap();
    assert!(
        snapshot(&two_step) == now,
        "the two-step API wrote another directory"
    );
    std::fs::remove_dir_all(&two_step).unwrap();
    // Nothing but the carve itself is left beside it.
    let names: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn foreign_content_is_refused_and_never_touched() {
    let tmp = tempfile::tempdir().unwrap();
    let tiny = tiny_lib(tmp.path());
    // A 64-hex `.bin` file the carver did not write, next to the user's own files.
    let out = tmp.path().join("mine");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join(format!("{}.bin", "ab".repeat(32))), "not ours").unwrap();
    std::fs::write(out.join("notes.txt"), "keep me").unwrap();
    let code = fails_leaving_as_it_was(&tiny, &out, tmp.path(), "not an earlier carve");
    assert_eq!(code, CANT_CREATE);
    // An unrelated manifest.tsv.
    std::fs::write(out.join("manifest.tsv"), "name\tvalue\n").unwrap();
    fails_leaving_as_it_was(&tiny, &out, tmp.path(), "is not ours");
    // --out naming a file.
    let file = tmp.path().join("file.txt");
    std::fs::write(&file, "a file").unwrap();
    let code = fails_leaving_as_it_was(&tiny, &file, tmp.path(), "is not a directory");
    assert_eq!(code, CANT_CREATE);
}

#[test]
fn a_directory_squatting_on_a_blob_name_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("blobs");
    let tiny = tiny_lib(tmp.path());
    assert!(carve(&tiny, &out).status.success());
    let blob = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.ends_with(".bin"))
        .unwrap();
    std::fs::remove_file(out.join(&blob)).unwrap();
    std::fs::create_dir(out.join(&blob)).unwrap();
    fails_leaving_as_it_was(&tiny, &out, tmp.path(), "is not a regular file");
}

#[test]
fn bad_input_leaves_an_earlier_carve_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("blobs");
    let tiny = tiny_lib(tmp.path());
    assert!(carve(&tiny, &out).status.success());
    let junk = tmp.path().join("junk.so");
    std::fs::write(&junk, b"\x7fELF but not really").unwrap();
    let code = fails_leaving_as_it_was(&junk, &out, tmp.path(), "junk.so");
    assert_eq!(code, Some(65), "EX_DATAERR");
    // A library whose one getter is not a getter: fails after parsing, before writing.
    let mut data = TinyElf::default().build();
    let at = 0x800; // the first getter
    data[at] = 0x0f;
    data[at + 1] = 0xa2; // cpuid
    let broken = tmp.path().join("broken.so");
    std::fs::write(&broken, data).unwrap();
    fails_leaving_as_it_was(&broken, &out, tmp.path(), "cpuid");
}

#[test]
#[ignore = "needs root and setpriv to run the carve as nobody; CI runs it: --ignored"]
fn a_destination_the_user_may_not_write_is_left_as_it_was() {
    use std::os::unix::fs::PermissionsExt as _;
    // Root ignores permission bits, so the carve runs as `nobody` (where setpriv exists).
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let tiny = tiny_lib(tmp.path());
    let out = tmp.path().join("blobs");
    assert!(carve(&tiny, &out).status.success());
    let before = snapshot(tmp.path());
    let args = [
        "carve".as_ref(),
        tiny.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ];
    let o = as_nobody(&args, tmp.path());
    assert!(!o.status.success());
    assert!(stderr(&o).contains("Permission denied"), "{}", stderr(&o));
    assert_eq!(snapshot(tmp.path()), before);
}

/// A tmpfs mounted for one test, unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts a tmpfs with `options` at `at`; panics where that is impossible (the tests that
    /// mount are ignored unless run as root).
    fn mount(at: &Path, options: &str) -> Self {
        std::fs::create_dir_all(at).unwrap();
        let o = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(at)
            .output()
            .unwrap_or_else(|e| panic!("cannot run mount: {e}"));
        assert!(
            o.status.success(),
            "cannot mount a tmpfs ({options}) at {}: {}; this test needs root (CAP_SYS_ADMIN)",
            at.display(),
            stderr(&o).trim()
        );
        Self(at.to_owned())
    }

    fn remount(&self, options: &str) {
        let o = Command::new("mount")
            .args(["-o", &format!("remount,{options}")])
            .arg(&self.0)
            .output()
            .unwrap();
        assert!(o.status.success(), "remount {options}: {}", stderr(&o));
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
#[ignore = "needs root (CAP_SYS_ADMIN) to mount a tmpfs; CI runs it: --ignored"]
fn a_full_filesystem_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let fs = Tmpfs::mount(&tmp.path().join("small"), "size=1m");
    let lib = front_lib();
    assert!(std::fs::metadata(&lib).unwrap().len() > 2 << 20);
    // Nothing there yet: nothing there after.
    let out = fs.0.join("blobs");
    fails_leaving_as_it_was(&lib, &out, &fs.0, "No space left on device");
    // An earlier carve there stays exactly as it was.
    let tiny = tiny_lib(tmp.path());
    assert!(carve(&tiny, &out).status.success());
    fails_leaving_as_it_was(&lib, &out, &fs.0, "No space left on device");
    // Parent directories the carve would have created are removed again.
    fails_leaving_as_it_was(
        &lib,
        &fs.0.join("a/b/blobs"),
        &fs.0,
        "No space left on device",
    );
}

#[test]
#[ignore = "needs root (CAP_SYS_ADMIN) to mount a tmpfs; CI runs it: --ignored"]
fn a_read_only_destination_is_left_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let fs = Tmpfs::mount(&tmp.path().join("ro"), "size=64m");
    let out = fs.0.join("blobs");
    let tiny = tiny_lib(tmp.path());
    assert!(carve(&tiny, &out).status.success());
    fs.remount("ro");
    let code = fails_leaving_as_it_was(&front_lib(), &out, &fs.0, "Read-only file system");
    assert_eq!(code, CANT_CREATE);
    fs.remount("rw");
}

/// Runs `nrtucode args` as `nobody` in `cwd`; panics where that is impossible: not root, no
/// setpriv, or setpriv cannot switch users (the tests that call it are ignored unless run as
/// root).
fn as_nobody(args: &[&std::ffi::OsStr], cwd: &Path) -> Output {
    let as_root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout == b"0\n");
    assert!(as_root, "this test runs the carve as nobody: it needs root");
    let setpriv = Path::new("/usr/bin/setpriv");
    assert!(
        setpriv.exists(),
        "this test runs the carve as nobody through {} (util-linux), which is missing",
        setpriv.display()
    );
    let o = Command::new(setpriv)
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_nrtucode"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap();
    assert!(
        !stderr(&o).contains("setpriv:"),
        "setpriv cannot switch users here: {}",
        stderr(&o)
    );
    o
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
#[ignore = "needs root and setpriv to run the carve as nobody; CI runs it: --ignored"]
fn a_read_only_earlier_carve_is_refused_and_left_as_it_was() {
    use std::os::unix::fs::PermissionsExt as _;
    let tmp = tempfile::tempdir().unwrap();
    // The parent is writable by `nobody`; the earlier carve is not.
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let tiny = tiny_lib(tmp.path());
    let args = |out: &str| {
        vec![
            std::ffi::OsString::from("carve"),
            tiny.clone().into_os_string(),
            "--out".into(),
            out.into(),
        ]
    };
    let run = |out: &str| {
        let a = args(out);
        let a: Vec<&std::ffi::OsStr> = a.iter().map(|s| s.as_os_str()).collect();
        as_nobody(&a, tmp.path())
    };
    let first = run("blobs");
    assert!(first.status.success(), "{}", stderr(&first));
    let out = tmp.path().join("blobs");
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o555)).unwrap();
    let before = snapshot(tmp.path());
    let o = run("blobs");
    assert_eq!(o.status.code(), CANT_CREATE, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("blobs: cannot replace this earlier carve"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        snapshot(tmp.path()),
        before,
        "no .old- or .tmp- directory left"
    );
    assert_eq!(mode(&out), 0o555);
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn an_empty_destination_keeps_its_inode_and_mode() {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let tmp = tempfile::tempdir().unwrap();
    let tiny = tiny_lib(tmp.path());
    let cwd = tmp.path().join("here");
    std::fs::create_dir(&cwd).unwrap();
    std::fs::set_permissions(&cwd, std::fs::Permissions::from_mode(0o701)).unwrap();
    let inode = std::fs::metadata(&cwd).unwrap().ino();
    // `--out .` run from the empty directory itself.
    let o = Command::new(env!("CARGO_BIN_EXE_nrtucode"))
        .arg("carve")
        .arg(&tiny)
        .args(["--out", "."])
        .current_dir(&cwd)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::metadata(&cwd).unwrap().ino(),
        inode,
        "same directory"
    );
    assert_eq!(mode(&cwd), 0o701);
    let names: Vec<String> = std::fs::read_dir(&cwd)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names.len(),
        4,
        "three blobs and the manifest, no staging: {names:?}"
    );
    assert!(names.contains(&"manifest.tsv".to_owned()), "{names:?}");
    let first = snapshot(&cwd);
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        2,
        "nothing beside it"
    );
    // Carving again replaces it (an earlier carve now) and still names it `.`.
    let o = Command::new(env!("CARGO_BIN_EXE_nrtucode"))
        .arg("carve")
        .arg(&tiny)
        .args(["--out", "."])
        .current_dir(&cwd)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(snapshot(&cwd), first, "the same carve again");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 2);
}

#[test]
fn messages_name_the_destination_as_given() {
    let tmp = tempfile::tempdir().unwrap();
    let tiny = tiny_lib(tmp.path());
    let cwd = tmp.path().join("mine");
    std::fs::create_dir(&cwd).unwrap();
    std::fs::write(cwd.join("notes.txt"), "keep").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_nrtucode"))
        .arg("carve")
        .arg(&tiny)
        .args(["--out", "."])
        .current_dir(&cwd)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), CANT_CREATE);
    assert!(
        stderr(&o).starts_with("nrtucode: error: .: refusing"),
        "{}",
        stderr(&o)
    );
    assert!(
        !stderr(&o).contains(&*tmp.path().to_string_lossy()),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_symbolic_link_and_a_foreign_file_in_a_carve_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let tiny = tiny_lib(tmp.path());
    let out = tmp.path().join("blobs");
    assert!(carve(&tiny, &out).status.success());
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&out, &link).unwrap();
    let code = fails_leaving_as_it_was(&tiny, &link, tmp.path(), "is a symbolic link");
    assert_eq!(code, CANT_CREATE);
    std::fs::write(out.join("extra.txt"), "mine").unwrap();
    let code = fails_leaving_as_it_was(
        &tiny,
        &out,
        tmp.path(),
        "extra.txt was not written by this tool",
    );
    assert_eq!(code, CANT_CREATE);
}

/// Names under `root` (recursively) that look like a staging or set-aside directory.
/// `true` while a carve's staging directory is beside its destination in `root`.
fn is_staging(root: &Path) -> bool {
    std::fs::read_dir(root).unwrap().any(|e| {
        e.unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with(".nrtucode-")
    })
}

fn leftovers(root: &Path) -> Vec<PathBuf> {
    snapshot(root)
        .into_keys()
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            name.starts_with(".nrtucode-")
        })
        .collect()
}

#[test]
fn an_interrupted_carve_leaves_the_destination_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = front_lib();
    let reference = tmp.path().join("reference");
    assert!(carve(&lib, &reference).status.success());
    let expected = snapshot(&reference);
    let out = tmp.path().join("blobs");
    let tiny = tiny_lib(tmp.path());
    let mut interrupted = 0;
    for round in 0..40u64 {
        // Half the rounds over an earlier (tiny) carve, half into nothing.
        if round % 2 == 0 {
            let _ = std::fs::remove_dir_all(&out);
            assert!(carve(&tiny, &out).status.success());
        } else {
            let _ = std::fs::remove_dir_all(&out);
        }
        let before = out.exists().then(|| snapshot(&out));
        let mut child = Command::new(env!("CARGO_BIN_EXE_nrtucode"))
            .arg("carve")
            .arg(&lib)
            .arg("--out")
            .arg(&out)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // The carve installs its signal handler before it creates its staging directory: wait
        // for that directory (or the end of the carve), so the signal never lands before the
        // handler exists (the default action would end the process with no exit code).
        let staging = loop {
            if child.try_wait().unwrap().is_some() {
                break false;
            }
            if is_staging(tmp.path()) {
                break true;
            }
            std::thread::sleep(std::time::Duration::from_micros(100));
        };
        if staging {
            std::thread::sleep(std::time::Duration::from_millis(3 * round));
            let signal = if round % 4 < 2 { "-TERM" } else { "-INT" };
            let _ = Command::new("kill")
                .arg(signal)
                .arg(child.id().to_string())
                .status();
        }
        let status = child.wait().unwrap();
        assert_eq!(
            leftovers(tmp.path()),
            Vec::<PathBuf>::new(),
            "round {round}"
        );
        let after = out.exists().then(|| snapshot(&out));
        match status.code() {
            Some(0) => assert_eq!(after.as_ref(), Some(&expected), "round {round}"),
            Some(130 | 143) => {
                interrupted += 1;
                assert!(
                    after == before || after.as_ref() == Some(&expected),
                    "round {round}: neither as before nor the complete carve"
                );
            }
            other => panic!("round {round}: exit {other:?}"),
        }
    }
    assert!(interrupted > 0, "no round was interrupted");
}
