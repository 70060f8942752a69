//! Bounded reads of every file the tool is handed (partitions, keys,
//! blob directories) and one output writer for every command (`pack -o`, `key ... -o`,
//! `resolve -o`): a FIFO never blocks, a large file is refused from its first bytes, a device,
//! FIFO or link named by `-o` is written through and never replaced, an output that is an
//! input is refused, and a signal never leaves a temporary file.
//!
//! The reads that used to be unbounded (`/dev/zero` as a key, a 1 GiB partition) run under
//! `ulimit -v`, so that a regression fails (an allocation fails) instead of exhausting the
//! machine's memory. `NRTUCODE_TEST_BIN` runs the tests against another `nrtucode` (an older
//! build, to see them fail).
#![cfg(unix)]

// The look-alike builds the carve library's tests share (cached under cargo's target tmp).
#[path = "../../nrtucode-carve/tests/common/mod.rs"]
mod common;

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::FileTypeExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use nrtucode_lookalike::{LibraryBuild, OptLevel};

fn bin() -> OsString {
    std::env::var_os("NRTUCODE_TEST_BIN")
        .unwrap_or_else(|| OsString::from(env!("CARGO_BIN_EXE_nrtucode")))
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn key() -> PathBuf {
    root().join("keys/test-ed25519.pem")
}

fn public() -> PathBuf {
    root().join("keys/test-ed25519.pub.pem")
}

/// Waits for `child`, killing it (and failing) if it has not ended after 30 s: a hang is a
/// failure, not a stuck test run. (A watchdog, not a timing assertion.)
fn finish(mut child: Child, what: &str) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after 30 s (blocked?)");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.wait_with_output().unwrap()
}

/// Runs `nrtucode args` in `cwd` with at most 1 GiB of address space (`ulimit -v`): an
/// unbounded read fails its allocation instead of growing without end.
///
/// With glibc's malloc limited to 2 arenas (`MALLOC_ARENA_MAX`): each thread's own arena
/// reserves 64 MiB of address space it does not use, so a carve's 16 `fsync` workers alone
/// reserve about the whole 1 GiB (a carve's peak, measured: 1.06 GiB; 150 MiB with 2 arenas),
/// and the bound measured the number of threads, not the reads: a few MB more code tipped it.
/// (Other allocators ignore the variable.)
fn run_in(cwd: &Path, args: &[&OsStr], what: &str) -> Output {
    let child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576 && exec \"$0\" \"$@\"")
        .arg(bin())
        .args(args)
        .current_dir(cwd)
        .env("MALLOC_ARENA_MAX", "2")
        .env_remove("NEURON_UCODE_FLAVOR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    finish(child, what)
}

macro_rules! run {
    ($cwd:expr, $($arg:expr),* $(,)?) => {
        run_in($cwd, &[$(OsStr::new(&$arg)),*], &format!("{:?}", [$(OsStr::new(&$arg)),*]))
    };
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn temporaries(dir: &Path) -> Vec<String> {
    names(dir)
        .into_iter()
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

/// The bytes `pack --fixtures front --key KEY` writes (2.8 MB).
fn front_pack(dir: &Path) -> Vec<u8> {
    let out = dir.join("reference.part");
    let o = run!(
        dir,
        "pack",
        "--fixtures",
        "front",
        "-o",
        out,
        "--key",
        key()
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&out).unwrap();
    std::fs::remove_file(&out).unwrap();
    bytes
}

#[test]
fn a_fifo_partition_is_refused_not_waited_for() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("p.part");
    mkfifo(&fifo);
    let t = tmp.path();
    let os = |args: &[&OsStr]| -> Vec<OsString> { args.iter().map(|a| a.to_os_string()).collect() };
    let public = public();
    let tail = [
        "--partition".as_ref(),
        fifo.as_os_str(),
        "--public-key".as_ref(),
        public.as_os_str(),
    ];
    let cases: Vec<Vec<OsString>> = vec![
        os(&["inspect".as_ref(), fifo.as_os_str()]),
        [os(&["list".as_ref()]), os(&tail)].concat(),
        [
            os(&["resolve".as_ref(), "7".as_ref(), "iram".as_ref()]),
            os(&tail),
        ]
        .concat(),
        [os(&["prof".as_ref(), "7".as_ref()]), os(&tail)].concat(),
    ];
    for args in cases {
        let refs: Vec<&OsStr> = args.iter().map(OsString::as_os_str).collect();
        let o = run_in(t, &refs, &format!("{args:?}"));
        assert_eq!(o.status.code(), Some(66), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("is a FIFO, not a regular file"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn a_large_junk_partition_is_refused_from_its_first_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    // Sparse: 1 GiB (the largest a partition may be, read whole before) and 4 GiB (refused by
    // its size before, exit 74): both are refused by their magic, in bounded memory.
    for size in [1u64 << 30, 4 << 30] {
        let junk = t.join("junk.part");
        std::fs::File::create(&junk)
            .unwrap()
            .set_len(size)
            .expect("this test needs a filesystem with sparse files");
        let o = run!(t, "inspect", junk);
        assert_eq!(o.status.code(), Some(65), "{size}: {}", stderr(&o));
        assert!(stderr(&o).contains("bad magic"), "{size}: {}", stderr(&o));
        let o = run!(
            t,
            "resolve",
            "7",
            "iram",
            "--partition",
            junk,
            "--public-key",
            public()
        );
        assert_eq!(o.status.code(), Some(65), "{size}: {}", stderr(&o));
        assert!(stderr(&o).contains("bad magic"), "{size}: {}", stderr(&o));
    }
}

/// `run()` with, when `file` is a FIFO, a writer that opens it and closes it without writing
/// (the tool waits for a FIFO's writer). If the tool never opened it, the FIFO is opened here
/// for reading, so that the writer's open returns and the test does not wait for ever.
fn with_writer(file: &Path, run: impl FnOnce() -> Output) -> Output {
    use std::os::unix::fs::FileTypeExt as _;
    let fifo = std::fs::metadata(file).is_ok_and(|m| m.file_type().is_fifo());
    if !fifo {
        return run();
    }
    let path = file.to_owned();
    // The writer's descriptor closes as soon as its open returns (not when the thread is
    // joined): the tool then sees the FIFO's end.
    let writer =
        std::thread::spawn(move || std::fs::OpenOptions::new().write(true).open(path).map(drop));
    let out = run();
    if !writer.is_finished() {
        let _ = std::fs::read(file);
    }
    let _ = writer.join();
    out
}

#[test]
fn a_key_is_read_bounded_and_every_bad_one_exits_65() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let big = t.join("big.pem");
    let mut text = std::fs::read(key()).unwrap();
    text.resize(1 << 20, b'\n');
    std::fs::write(&big, text).unwrap();
    let binary = t.join("binary.pem");
    std::fs::write(&binary, b"\xff\xfe-----BEGIN PRIVATE KEY-----\n").unwrap();
    let fifo = t.join("fifo.pem");
    mkfifo(&fifo);
    let part = t.join("p.part");
    std::fs::write(&part, front_pack(t)).unwrap();
    // A device or a FIFO is read as a key is (a pipe is how a key is kept off the disk),
    // bounded: /dev/zero past 16 KiB, a FIFO whose writer closes it without writing as the
    // empty file it reads as (each command's run below has such a writer: `with_writer`).
    for (file, says) in [
        (
            Path::new("/dev/zero"),
            "16385 bytes or more, larger than the 16384 bytes",
        ),
        (fifo.as_path(), "not a"),
        (big.as_path(), "larger than the 16384 bytes"),
        (binary.as_path(), "not UTF-8"),
    ] {
        let out = t.join("out.part");
        let o = with_writer(file, || {
            run!(t, "pack", "--fixtures", "front", "-o", out, "--key", file)
        });
        assert_eq!(o.status.code(), Some(65), "{file:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{file:?}: {}", stderr(&o));
        assert!(!out.exists());
        let o = with_writer(file, || run!(t, "key", "public", file));
        assert_eq!(o.status.code(), Some(65), "{file:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{file:?}: {}", stderr(&o));
        let o = with_writer(file, || run!(t, "inspect", part, "--public-key", file));
        assert_eq!(o.status.code(), Some(65), "{file:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{file:?}: {}", stderr(&o));
        let o = with_writer(file, || {
            run!(t, "list", "--partition", part, "--public-key", file)
        });
        assert_eq!(o.status.code(), Some(65), "{file:?}: {}", stderr(&o));
    }
    assert_eq!(temporaries(t), Vec::<String>::new());
}

#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let k = t.join("k.pem");
    std::fs::copy(key(), &k).unwrap();
    let link = t.join("link.pem");
    std::os::unix::fs::symlink("k.pem", &link).unwrap();
    let hard = t.join("hard.pem");
    std::fs::hard_link(&k, &hard).unwrap();
    let original = std::fs::read(&k).unwrap();
    for out in [&k, &link, &hard] {
        let o = run!(t, "pack", "--fixtures", "front", "-o", out, "--key", k);
        assert_eq!(o.status.code(), Some(73), "{out:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("(the same file)"), "{}", stderr(&o));
        let o = run!(t, "key", "public", k, "-o", out);
        assert_eq!(o.status.code(), Some(73), "{out:?}: {}", stderr(&o));
        assert_eq!(std::fs::read(&k).unwrap(), original);
    }
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // The partition and the public key of a resolve.
    let part = t.join("p.part");
    let packed = front_pack(t);
    std::fs::write(&part, &packed).unwrap();
    let pubkey = t.join("pub.pem");
    std::fs::copy(public(), &pubkey).unwrap();
    for out in [&part, &pubkey] {
        let o = run!(
            t,
            "resolve",
            "7",
            "iram",
            "--partition",
            part,
            "--public-key",
            pubkey,
            "-o",
            out
        );
        assert_eq!(o.status.code(), Some(73), "{out:?}: {}", stderr(&o));
    }
    assert_eq!(std::fs::read(&part).unwrap(), packed);
    assert_eq!(
        std::fs::read(&pubkey).unwrap(),
        std::fs::read(public()).unwrap()
    );
    assert_eq!(temporaries(t), Vec::<String>::new());
}

#[test]
fn pack_and_key_public_write_through_links_and_fifos_never_replacing_them() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let packed = front_pack(t);
    // A link: its target replaced, the link kept.
    let target = t.join("target.part");
    std::fs::write(&target, "old").unwrap();
    let link = t.join("link.part");
    std::os::unix::fs::symlink("target.part", &link).unwrap();
    let o = run!(t, "pack", "--fixtures", "front", "-o", link, "--key", key());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(&target).unwrap(), packed);
    // A link to nothing: refused, left alone.
    let dangling = t.join("dangling.pem");
    std::os::unix::fs::symlink("nowhere/x.pem", &dangling).unwrap();
    let o = run!(t, "key", "public", key(), "-o", dangling);
    assert_eq!(o.status.code(), Some(73), "{}", stderr(&o));
    assert!(
        std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // A FIFO: written into, as cp does; it stays a FIFO.
    let fifo = t.join("fifo");
    mkfifo(&fifo);
    for (args, len) in [
        (
            vec!["pack", "--fixtures", "front", "-o", "fifo", "--key"],
            packed.len(),
        ),
        (
            vec!["key", "public", "-o", "fifo"],
            std::fs::read(public()).unwrap().len(),
        ),
    ] {
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap().len())
        };
        let mut args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        args.push(key().into());
        let refs: Vec<&OsStr> = args.iter().map(OsString::as_os_str).collect();
        let o = run_in(t, &refs, "-o fifo");
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(reader.join().unwrap(), len);
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
    }
    assert_eq!(
        names(t),
        ["dangling.pem", "fifo", "link.part", "target.part"],
        "no temporary file left"
    );
}

#[test]
#[ignore = "needs root to make device nodes (mknod); CI runs it: --ignored"]
fn pack_and_key_public_write_into_devices_never_replacing_them() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let node = |name: &str, minor: &str| {
        let path = t.join(name);
        let made = Command::new("mknod")
            .arg(&path)
            .args(["c", "1", minor])
            .status()
            .unwrap();
        assert!(made.success(), "mknod (root?)");
        path
    };
    let null = node("null", "3");
    let full = node("full", "7");
    let o = run!(t, "pack", "--fixtures", "front", "-o", null, "--key", key());
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run!(t, "key", "public", key(), "-o", null);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run!(t, "pack", "--fixtures", "front", "-o", full, "--key", key());
    assert_eq!(o.status.code(), Some(74), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("No space left on device"),
        "{}",
        stderr(&o)
    );
    for dev in [&null, &full] {
        assert!(
            std::fs::symlink_metadata(dev)
                .unwrap()
                .file_type()
                .is_char_device(),
            "{dev:?} replaced"
        );
    }
    assert_eq!(names(t), ["full", "null"]);
}

#[test]
fn an_interrupted_pack_leaves_no_temporary_file() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let out = t.join("out.part");
    let reference = {
        let o = run!(t, "pack", "--fixtures", "full", "-o", out, "--key", key());
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read(&out).unwrap()
    };
    let mut interrupted = 0;
    for (round, (signal, code)) in [
        ("TERM", 143),
        ("INT", 130),
        ("HUP", 129),
        ("QUIT", 131),
        ("USR1", 138),
        ("USR2", 140),
        ("ALRM", 142),
    ]
    .into_iter()
    .cycle()
    .take(42)
    .enumerate()
    {
        // Half the rounds over an earlier output, half into nothing.
        if round % 2 == 0 {
            std::fs::write(&out, "old").unwrap();
        } else {
            let _ = std::fs::remove_file(&out);
        }
        let mut child = Command::new(bin())
            .args(["pack", "--fixtures", "full", "-o"])
            .arg(&out)
            .arg("--key")
            .arg(key())
            .current_dir(t)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // The handler is installed before the temporary file is made: wait for that file (or
        // the end of the pack), so the signal never lands before the handler exists.
        let start = Instant::now();
        let temp = loop {
            if child.try_wait().unwrap().is_some() {
                break false;
            }
            if !temporaries(t).is_empty() {
                break true;
            }
            if start.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                panic!("round {round}: pack still running after a minute");
            }
        };
        if temp {
            let _ = Command::new("kill")
                .arg(format!("-{signal}"))
                .arg(child.id().to_string())
                .status();
        }
        let status = child.wait().unwrap();
        assert_eq!(temporaries(t), Vec::<String>::new(), "round {round}");
        let after = std::fs::read(&out).ok();
        match status.code() {
            Some(0) => assert_eq!(after.as_ref(), Some(&reference), "round {round}"),
            Some(c) if c == code => {
                interrupted += 1;
                let before = (round % 2 == 0).then(|| b"old".to_vec());
                assert!(
                    after == before || after.as_ref() == Some(&reference),
                    "round {round}: neither as before nor the complete pack"
                );
            }
            other => panic!("round {round} ({signal}): {other:?} ({status})"),
        }
    }
    assert!(interrupted > 0, "no round was interrupted");
}

/// A blob directory carved from the front look-alike, in `dir/blobs`.
fn front_blob_dir(dir: &Path) -> PathBuf {
    let lib = common::lib(LibraryBuild::Front, OptLevel::O2, true)
        .path
        .clone();
    let blobs = dir.join("blobs");
    let o = run!(dir, "carve", lib, "--out", blobs);
    assert!(o.status.success(), "{}", stderr(&o));
    blobs
}

#[test]
fn a_blob_swapped_for_a_link_is_never_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let blobs = front_blob_dir(t);
    let reference = {
        let o = run!(
            t,
            "pack",
            "--blob-dir",
            blobs,
            "-o",
            "ref.part",
            "--key",
            key()
        );
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read(t.join("ref.part")).unwrap()
    };
    // The largest blob, swapped over and over for a link to a FIFO nobody writes, while packs
    // run: each packs what it verified or refuses the directory; none follows the link.
    let blob = std::fs::read_dir(&blobs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension() == Some(OsStr::new("bin")))
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap();
    let fifo = t.join("fifo");
    mkfifo(&fifo);
    let kept = t.join("kept.bin");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (blob, fifo, kept, stop) = (blob.clone(), fifo.clone(), kept.clone(), stop.clone());
        std::thread::spawn(move || {
            let link = blob.with_extension("link");
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                std::os::unix::fs::symlink(&fifo, &link).unwrap();
                std::fs::rename(&blob, &kept).unwrap();
                std::fs::rename(&link, &blob).unwrap();
                std::thread::sleep(Duration::from_micros(500));
                std::fs::rename(&kept, &blob).unwrap();
                std::thread::sleep(Duration::from_micros(500));
            }
        })
    };
    let (mut packed, mut refused) = (0, 0);
    for round in 0..30 {
        let out = t.join("out.part");
        let _ = std::fs::remove_file(&out);
        let o = run!(t, "pack", "--blob-dir", blobs, "-o", out, "--key", key());
        match o.status.code() {
            Some(0) => {
                packed += 1;
                assert_eq!(std::fs::read(&out).unwrap(), reference, "round {round}");
            }
            Some(65) => refused += 1,
            other => panic!("round {round}: {other:?}: {}", stderr(&o)),
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
    assert!(refused > 0, "the swap was never noticed ({packed} packed)");
    // -o onto a file of the blob directory: refused, the directory as it was.
    let manifest = blobs.join("manifest.tsv");
    let before = std::fs::read(&manifest).unwrap();
    let o = run!(
        t,
        "pack",
        "--blob-dir",
        blobs,
        "-o",
        manifest,
        "--key",
        key()
    );
    assert_eq!(o.status.code(), Some(73), "{}", stderr(&o));
    assert_eq!(std::fs::read(&manifest).unwrap(), before);
}
