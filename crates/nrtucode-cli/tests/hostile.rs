//! Hostile and unlucky use of the tool: a forged manifest, a stale or busy staging
//! directory, a long destination name, concurrent carves, uncaught signals, non-regular
//! inputs and outputs. Each case ends with the right answer and nothing of the user's lost.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use nrtucode_test_elf::TinyElf;
use sha2::Digest as _;

fn nrtucode() -> Command {
    Command::new(env!("CARGO_BIN_EXE_nrtucode"))
}

/// Waits for `child`, killing it (and failing) if it has not ended after a minute: a hang is
/// a failure, not a stuck test run. (A watchdog, not a timing assertion.)
fn finish(mut child: Child, what: &str) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after a minute (blocked?)");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.wait_with_output().unwrap()
}

fn run(args: &[&std::ffi::OsStr], what: &str) -> Output {
    let child = nrtucode()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    finish(child, what)
}

fn carve(lib: &Path, out: &Path) -> Output {
    run(
        &[
            "carve".as_ref(),
            lib.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ],
        "carve",
    )
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn tiny_lib(dir: &Path) -> PathBuf {
    let path = dir.join("tiny.so");
    std::fs::write(&path, TinyElf::default().build()).unwrap();
    path
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The staging directory name of destination name `name` (the carve's naming rule).
fn staging_name(name: &str) -> String {
    let digest = sha2::Sha256::digest(name.as_bytes());
    format!(
        ".nrtucode-{}.tmp",
        nrtucode_facts::hex::lower_hex(&digest[..8])
    )
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

#[test]
fn a_forged_manifest_never_makes_a_carve_delete_a_users_file() {
    let tmp = tempfile::tempdir().unwrap();
    let tiny = tiny_lib(tmp.path());
    let out = tmp.path().join("o");
    assert!(carve(&tiny, &out).status.success());
    let manifest = std::fs::read_to_string(out.join("manifest.tsv")).unwrap();
    let header: String = manifest.lines().take(6).map(|l| format!("{l}\n")).collect();
    // A one-row manifest naming the user's file, with its true size and hash.
    let thesis = b"thesis\n";
    let sha = nrtucode_facts::hex::lower_hex(&sha2::Sha256::digest(thesis));
    for file in ["thesis.doc".to_owned(), format!("{sha}.bin")] {
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join(&file), thesis).unwrap();
        std::fs::write(
            out.join("manifest.tsv"),
            format!("{header}X_get\tCAYMAN\tNX\tACT\tPERF\tIRAM\t7\t{sha}\t0x1\t{file}\n"),
        )
        .unwrap();
        let ok = file.ends_with(".bin");
        let o = carve(&tiny, &out);
        if ok {
            // Exactly what a carve writes: a carve may replace it.
            assert!(o.status.success(), "{}", stderr(&o));
        } else {
            assert_eq!(o.status.code(), Some(73), "{}", stderr(&o));
            assert!(
                stderr(&o).contains("not a blob file name"),
                "{}",
                stderr(&o)
            );
            assert_eq!(std::fs::read(out.join(&file)).unwrap(), thesis);
        }
    }
    // A `<sha256>.bin` whose bytes are not its name's: someone else's, refused.
    let _ = std::fs::remove_dir_all(&out);
    assert!(carve(&tiny, &out).status.success());
    let blob = names(&out)
        .into_iter()
        .find(|n| n.ends_with(".bin"))
        .unwrap();
    let len = std::fs::metadata(out.join(&blob)).unwrap().len() as usize;
    std::fs::write(out.join(&blob), vec![b'x'; len]).unwrap();
    let o = carve(&tiny, &out);
    assert_eq!(o.status.code(), Some(73), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not as a carve wrote it"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(out.join(&blob)).unwrap(), vec![b'x'; len]);
}

#[test]
fn a_stale_staging_directory_is_removed_and_said() {
    let tmp = tempfile::tempdir().unwrap();
    let tiny = tiny_lib(tmp.path());
    let blob = format!("{}.bin", "ab".repeat(32));
    // Inside an empty destination, and beside an absent one.
    let inside = tmp.path().join("empty");
    let stale_inside = inside.join(staging_name("empty"));
    let stale_beside = tmp.path().join(staging_name("absent"));
    for stale in [&stale_inside, &stale_beside] {
        std::fs::create_dir_all(stale).unwrap();
        std::fs::write(stale.join(&blob), "half").unwrap();
    }
    for (out, stale) in [
        (&inside, &stale_inside),
        (&tmp.path().join("absent"), &stale_beside),
    ] {
        let o = carve(&tiny, out);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("the staging directory an interrupted carve left"),
            "{}",
            stderr(&o)
        );
        assert!(!stale.exists(), "{}", stale.display());
        assert_eq!(names(out).len(), 4, "{:?}", names(out));
    }
    // A staging-named directory holding what a carve never writes is not removed.
    let out = tmp.path().join("odd");
    let odd = out.join(staging_name("odd"));
    std::fs::create_dir_all(&odd).unwrap();
    std::fs::write(odd.join("thesis.doc"), "mine").unwrap();
    let o = carve(&tiny, &out);
    assert_eq!(o.status.code(), Some(73), "{}", stderr(&o));
    assert_eq!(std::fs::read(odd.join("thesis.doc")).unwrap(), b"mine");
}

#[test]
fn a_carve_killed_by_sigkill_is_cleaned_up_by_the_next() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = tmp.path().join("tiny.so");
    std::fs::write(&lib, TinyElf::default().build()).unwrap();
    let out = tmp.path().join("blobs");
    let mut stranded = 0;
    for round in 0..40 {
        let _ = std::fs::remove_dir_all(&out);
        if round % 2 == 0 {
            std::fs::create_dir(&out).unwrap();
        }
        let mut child = nrtucode()
            .arg("carve")
            .arg(&lib)
            .arg("--out")
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Kill it once its staging directory exists (inside or beside): at once, then up to
        // 2 ms later in steps, so that some kills land while the files are renamed into an
        // empty destination (kill points in the carve library's tests reach every step).
        while child.try_wait().unwrap().is_none() {
            let beside = names(tmp.path())
                .iter()
                .any(|n| n.starts_with(".nrtucode-"));
            let inside = out.is_dir() && names(&out).iter().any(|n| n.starts_with(".nrtucode-"));
            if beside || inside {
                std::thread::sleep(std::time::Duration::from_micros(100 * (round % 20)));
                let _ = child.kill();
                break;
            }
        }
        let _ = child.wait();
        let left = names(tmp.path())
            .iter()
            .any(|n| n.starts_with(".nrtucode-"))
            || (out.is_dir() && names(&out).iter().any(|n| n.starts_with(".nrtucode-")));
        stranded += usize::from(left);
        let o = carve(&lib, &out);
        assert!(o.status.success(), "round {round}: {}", stderr(&o));
        if left {
            assert!(
                stderr(&o).contains("an interrupted carve left"),
                "{}",
                stderr(&o)
            );
        }
        assert!(
            !names(tmp.path())
                .iter()
                .any(|n| n.starts_with(".nrtucode-"))
        );
        assert!(!names(&out).iter().any(|n| n.starts_with(".nrtucode-")));
    }
    assert!(stranded > 0, "no round left a staging directory behind");
}

#[test]
fn a_second_carve_into_a_busy_destination_fails_naming_it() {
    use rustix::fs::{FlockOperation, flock};
    let tmp = tempfile::tempdir().unwrap();
    let tiny = tiny_lib(tmp.path());
    let out = tmp.path().join("busy");
    let staging = out.join(staging_name("busy"));
    std::fs::create_dir_all(&staging).unwrap();
    // Another carve at work: its staging directory, locked.
    let held = std::fs::File::open(&staging).unwrap();
    flock(&held, FlockOperation::NonBlockingLockExclusive).unwrap();
    let o = carve(&tiny, &out);
    assert_eq!(o.status.code(), Some(73), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "{}: another carve is writing this destination",
            out.display()
        )),
        "{}",
        stderr(&o)
    );
    assert!(staging.is_dir());
    drop(held);
    // Two real carves at once into one empty directory: never both fail.
    for round in 0..5 {
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir(&out).unwrap();
        let spawn = || {
            nrtucode()
                .arg("carve")
                .arg(&tiny)
                .arg("--out")
                .arg(&out)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (spawn(), spawn());
        let (a, b) = (finish(a, "first"), finish(b, "second"));
        assert!(
            a.status.success() || b.status.success(),
            "round {round}: {} / {}",
            stderr(&a),
            stderr(&b)
        );
        // The loser either finds the winner's staging directory held (`Busy`), or, when the
        // winner published between the loser's check of the empty destination and its own
        // publication, finds the winner's files there (`Changed`): both leave the winner's
        // carve untouched, and nothing else is an acceptable failure.
        for o in [&a, &b].into_iter().filter(|o| !o.status.success()) {
            assert_eq!(o.status.code(), Some(73), "{}", stderr(o));
            assert!(
                stderr(o).contains("another carve is writing")
                    || stderr(o).contains(
                        "changed while the carve was written (files appeared in it); nothing was written"
                    ),
                "{}",
                stderr(o)
            );
        }
        assert!(nrtucode_carve::check_dir(&out).rows > 0);
    }
}

#[test]
fn a_destination_name_of_255_bytes_is_accepted() {
    let tmp = tempfile::tempdir().unwrap();
    let tiny = tiny_lib(tmp.path());
    let out = tmp.path().join("d".repeat(255));
    let o = carve(&tiny, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    // Again over it: the staging and set-aside names fit too.
    let o = carve(&tiny, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(names(tmp.path()).len(), 2);
}

#[test]
fn every_terminating_signal_cleans_up() {
    let tmp = tempfile::tempdir().unwrap();
    let tiny = tiny_lib(tmp.path());
    let out = tmp.path().join("blobs");
    let mut caught = 0;
    for (round, (signal, code)) in [
        ("HUP", 129),
        ("QUIT", 131),
        ("USR1", 138),
        ("USR2", 140),
        ("ALRM", 142),
    ]
    .into_iter()
    .cycle()
    .take(40)
    .enumerate()
    {
        let _ = std::fs::remove_dir_all(&out);
        let child = nrtucode()
            .arg("carve")
            .arg(&tiny)
            .arg("--out")
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut child = child;
        // The handler is installed before the staging directory is made.
        let staged = loop {
            if child.try_wait().unwrap().is_some() {
                break false;
            }
            if names(tmp.path())
                .iter()
                .any(|n| n.starts_with(".nrtucode-"))
            {
                break true;
            }
        };
        if staged {
            let _ = Command::new("kill")
                .arg(format!("-{signal}"))
                .arg(child.id().to_string())
                .status();
        }
        let status = child.wait().unwrap();
        assert!(
            !names(tmp.path())
                .iter()
                .any(|n| n.starts_with(".nrtucode-")),
            "round {round} ({signal}): {:?}",
            names(tmp.path())
        );
        match status.code() {
            Some(0) => assert!(nrtucode_carve::check_dir(&out).rows > 0),
            Some(c) if c == code => caught += 1,
            other => panic!("round {round} ({signal}): exit {other:?}"),
        }
    }
    assert!(caught > 0, "no round was interrupted");
}

#[test]
fn a_fifo_is_refused_not_waited_for() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("lib.so");
    mkfifo(&fifo);
    let o = carve(&fifo, &tmp.path().join("out"));
    assert_eq!(o.status.code(), Some(66), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    assert_eq!(
        names(tmp.path()),
        ["lib.so"],
        "no staging directory was made"
    );
    // A blob and a manifest that are FIFOs, a manifest linked to /dev/zero.
    let tiny = tiny_lib(tmp.path());
    let dir = tmp.path().join("blobs");
    assert!(carve(&tiny, &dir).status.success());
    let blob = names(&dir)
        .into_iter()
        .find(|n| n.ends_with(".bin"))
        .unwrap();
    std::fs::remove_file(dir.join(&blob)).unwrap();
    mkfifo(&dir.join(&blob));
    let verify = |what| run(&["verify".as_ref(), dir.as_os_str()], what);
    let o = verify("verify with a FIFO blob");
    assert_eq!(o.status.code(), Some(65), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is a FIFO, not a regular file"),
        "{}",
        stderr(&o)
    );
    let manifest = dir.join("manifest.tsv");
    std::fs::remove_file(&manifest).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &manifest).unwrap();
    let o = verify("verify with manifest.tsv -> /dev/zero");
    assert_eq!(o.status.code(), Some(65), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is a symbolic link, not a regular file"),
        "{}",
        stderr(&o)
    );
    // And a re-carve over it is refused, not blocked.
    let o = carve(&tiny, &dir);
    assert_eq!(o.status.code(), Some(73), "{}", stderr(&o));
}

fn resolve_to(out: &Path) -> Output {
    run(
        &[
            "resolve".as_ref(),
            "7".as_ref(),
            "iram".as_ref(),
            "-o".as_ref(),
            out.as_os_str(),
        ],
        "resolve -o",
    )
}

#[test]
fn resolve_writes_through_links_and_into_fifos_never_replacing_them() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("target.bin");
    std::fs::write(&target, "old").unwrap();
    let link = tmp.path().join("link.bin");
    std::os::unix::fs::symlink("target.bin", &link).unwrap();
    let o = resolve_to(&link);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::metadata(&target).unwrap().len(), 81344);
    // A link to nothing: refused, the link left alone.
    let dangling = tmp.path().join("dangling.bin");
    std::os::unix::fs::symlink("nowhere/x.bin", &dangling).unwrap();
    let o = resolve_to(&dangling);
    assert_eq!(o.status.code(), Some(73), "{}", stderr(&o));
    assert!(
        std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // A FIFO: written to, as cp does; it stays a FIFO.
    let fifo = tmp.path().join("fifo");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap().len())
    };
    let o = resolve_to(&fifo);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(reader.join().unwrap(), 81344);
    use std::os::unix::fs::FileTypeExt as _;
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    // A name of 255 bytes (the temporary name beside it is short).
    let long = tmp.path().join("o".repeat(255));
    let o = resolve_to(&long);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::metadata(&long).unwrap().len(), 81344);
    std::fs::remove_file(&long).unwrap();
    assert_eq!(
        names(tmp.path()),
        ["dangling.bin", "fifo", "link.bin", "target.bin"],
        "no temporary file left"
    );
}

#[test]
#[ignore = "needs root to make device nodes (mknod); CI runs it: --ignored"]
fn resolve_writes_to_devices_and_a_full_one_is_exit_74() {
    let tmp = tempfile::tempdir().unwrap();
    let node = |name: &str, minor: &str| {
        let path = tmp.path().join(name);
        let made = Command::new("mknod")
            .arg(&path)
            .args(["c", "1", minor])
            .status()
            .unwrap();
        assert!(made.success(), "mknod (root?)");
        path
    };
    use std::os::unix::fs::FileTypeExt as _;
    let null = node("null", "3");
    let o = resolve_to(&null);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::symlink_metadata(&null)
            .unwrap()
            .file_type()
            .is_char_device()
    );
    let full = node("full", "7");
    let o = resolve_to(&full);
    assert_eq!(o.status.code(), Some(74), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("No space left on device"),
        "{}",
        stderr(&o)
    );
    assert!(
        std::fs::symlink_metadata(&full)
            .unwrap()
            .file_type()
            .is_char_device()
    );
    assert_eq!(names(tmp.path()), ["full", "null"]);
}

/// `nrtucode verify DIR` under at most 1 GiB of address space (`ulimit -v`): a blob read whole
/// fails its allocation instead of passing.
fn verify_bounded(dir: &Path, what: &str) -> Output {
    let child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576 && exec \"$0\" verify \"$1\"")
        .arg(env!("CARGO_BIN_EXE_nrtucode"))
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    finish(child, what)
}

#[test]
fn a_repeated_row_and_an_oversized_blob_are_refused_by_verify() {
    let tmp = tempfile::tempdir().unwrap();
    let tiny = tiny_lib(tmp.path());
    let dir = tmp.path().join("blobs");
    assert!(carve(&tiny, &dir).status.success());
    let manifest = std::fs::read_to_string(dir.join("manifest.tsv")).unwrap();
    // A second row for a getter, taking another row's bytes (a row of the same size where
    // there is one): the set is ambiguous, whichever row is read first.
    let rows: Vec<&str> = manifest.lines().filter(|l| l.contains("_get\t")).collect();
    let field = |row: &str, i: usize| row.split('\t').nth(i).unwrap_or("").to_owned();
    let first = rows[0];
    let other = rows[1..]
        .iter()
        .find(|r| field(r, 6) == field(first, 6))
        .unwrap_or(&first);
    let mut fake: Vec<String> = first.split('\t').map(str::to_owned).collect();
    fake[7] = field(other, 7);
    fake[9] = field(other, 9);
    let forged = manifest.replacen(first, &format!("{}\n{first}", fake.join("\t")), 1);
    std::fs::write(dir.join("manifest.tsv"), forged).unwrap();
    let o = verify_bounded(&dir, "verify with a repeated row");
    assert_eq!(o.status.code(), Some(65), "{}", stderr(&o));
    let getter = field(first, 0);
    assert!(
        stderr(&o).contains(&format!("{getter} has more than one row")),
        "{}",
        stderr(&o)
    );
    // A blob grown (sparse) to 2 GiB: refused by its size, in bounded memory and at once.
    std::fs::write(dir.join("manifest.tsv"), &manifest).unwrap();
    let blob = names(&dir)
        .into_iter()
        .find(|n| n.ends_with(".bin"))
        .unwrap();
    std::fs::File::options()
        .write(true)
        .open(dir.join(&blob))
        .unwrap()
        .set_len(2 << 30)
        .expect("this test needs a filesystem with sparse files");
    let o = verify_bounded(&dir, "verify with a 2 GiB blob");
    assert_eq!(o.status.code(), Some(65), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("2147483648 bytes, expected"),
        "{}",
        stderr(&o)
    );
}
