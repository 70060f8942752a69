//! Hostile inputs, third round: every file the tool is handed goes through the CLI's one
//! bounded reader (opened once, its type checked on the descriptor, read up to a bound stated
//! per kind, every buffer sized from the input's actual size), so that:
//!
//! * a layout spanning 1 GiB over a 4 KiB image is refused from the image's size, under a
//!   256 MiB address-space limit, before the layout's image is allocated;
//! * an ELF whose 16,000 `PT_LOAD` segments all name the same 64 KiB of the file is refused:
//!   the partition it spells is larger than the file;
//! * a memory map or a flashable file swapped (by rename) for `/dev/zero` or a FIFO while the
//!   tool reads it is refused or read whole, never read twice (no hang, no unbounded read);
//! * a memory map that is not UTF-8 is bad data (65) with its line and column, as a layout is;
//! * a key read from a pipe, a FIFO or `/dev/stdin` works, bounded;
//! * `scripts/install-c.sh --prefix P --uninstall` with no blob-source flag says what it does.
//!
//! `NRTUCODE_TEST_BIN` runs the tests against another `nrtucode` (an older build, to see them
//! fail).
#![cfg(unix)]

mod partition_common;
use partition_common::{key, public, root};

use std::ffi::{OsStr, OsString};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn bin() -> OsString {
    std::env::var_os("NRTUCODE_TEST_BIN")
        .unwrap_or_else(|| OsString::from(env!("CARGO_BIN_EXE_nrtucode")))
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
        std::thread::sleep(Duration::from_millis(2));
    }
    child.wait_with_output().unwrap()
}

/// Runs `nrtucode args` in `cwd` with at most `kib` KiB of address space (`ulimit -v`): an
/// allocation sized from an unbounded field fails instead of growing without end.
fn run_limited(cwd: &Path, kib: u64, args: &[&OsStr], stdin: Stdio) -> Output {
    let child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(bin())
        .args(args)
        .current_dir(cwd)
        .env("MALLOC_ARENA_MAX", "2")
        .env_remove("NEURON_UCODE_FLAVOR")
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    finish(child, &format!("{args:?}"))
}

macro_rules! run {
    ($cwd:expr, $($arg:expr),* $(,)?) => {
        run_limited($cwd, 1 << 20, &[$(OsStr::new(&$arg)),*], Stdio::null())
    };
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// `pack --fixtures front --key KEY -o dir/name [extra]`, asserted to succeed.
fn pack(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let mut args: Vec<OsString> = ["pack", "--fixtures", "front", "--key"]
        .iter()
        .map(OsString::from)
        .collect();
    args.push(key().into());
    args.push("-o".into());
    args.push(out.clone().into());
    args.extend(extra.iter().map(OsString::from));
    let refs: Vec<&OsStr> = args.iter().map(OsString::as_os_str).collect();
    let o = run_limited(dir, 1 << 20, &refs, Stdio::null());
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

fn qemu_map() -> PathBuf {
    root().join("examples/bare-metal/memory/mps2-an386.x")
}

#[test]
fn a_layout_larger_than_its_image_is_refused_before_it_is_allocated() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    // Two slots of 510 MiB and the state after them: an image of 1,071,652,864 bytes.
    let layout = t.join("huge.layout");
    std::fs::write(
        &layout,
        "slot_a = 0\nslot_b = 0x1fe00000\nslot_len = 0x1fe00000\nstate = 0x3fc00000\nerase_size = 4K\nwrite_size = 4\n",
    )
    .unwrap();
    let image = t.join("small.bin");
    std::fs::write(&image, vec![0xff; 4096]).unwrap();
    let public = public();
    let args = [
        OsStr::new("inspect"),
        image.as_os_str(),
        OsStr::new("--layout"),
        layout.as_os_str(),
        OsStr::new("--public-key"),
        public.as_os_str(),
    ];
    let o = run_limited(t, 256 * 1024, &args, Stdio::null());
    assert_eq!(o.status.code(), Some(65), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("4096 bytes, but the layout's image"),
        "{}",
        stderr(&o)
    );
}

/// An ELF32 (ARM, `EXEC`) whose `count` `PT_LOAD` segments all hold the same `len` bytes of
/// the file, at consecutive physical addresses from 0x1000_0000.
fn elf_with_shared_segments(count: u32, len: u32) -> Vec<u8> {
    const EHDR: u32 = 52;
    const PHDR: u32 = 32;
    let data_at = EHDR + count * PHDR;
    let mut f = Vec::new();
    f.extend_from_slice(b"\x7fELF\x01\x01\x01\0\0\0\0\0\0\0\0\0");
    for half in [2u16, 40, 1] {
        // e_type EXEC, e_machine EM_ARM, e_version (low half; the high half next)
        f.extend_from_slice(&half.to_le_bytes());
    }
    f.extend_from_slice(&0u16.to_le_bytes());
    for word in [0u32, EHDR, 0, 0] {
        // e_entry, e_phoff, e_shoff, e_flags
        f.extend_from_slice(&word.to_le_bytes());
    }
    #[allow(clippy::cast_possible_truncation)] // 16,000 segments fit a u16
    for half in [EHDR as u16, PHDR as u16, count as u16, 40, 0, 0] {
        // e_ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx
        f.extend_from_slice(&half.to_le_bytes());
    }
    for n in 0..count {
        let address = 0x1000_0000 + n * len;
        // p_type PT_LOAD, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_flags R, p_align
        for word in [1u32, data_at, address, address, len, len, 4, 16] {
            f.extend_from_slice(&word.to_le_bytes());
        }
    }
    f.resize((data_at + len) as usize, 0x5a);
    f
}

#[test]
fn an_elf_whose_segments_share_the_files_bytes_is_refused_unallocated() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let elf = t.join("shared.elf");
    let bytes = elf_with_shared_segments(16_000, 64 * 1024);
    assert_eq!(bytes.len(), 52 + 16_000 * 32 + 65_536);
    std::fs::write(&elf, &bytes).unwrap();
    // Under 512 MiB of address space: the 1 GB the segments spell cannot be allocated.
    let o = run_limited(
        t,
        512 * 1024,
        &[OsStr::new("inspect"), elf.as_os_str()],
        Stdio::null(),
    );
    assert_eq!(o.status.code(), Some(65), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("bytes, more than the file's 577588"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_memory_map_that_is_not_utf8_is_bad_data_with_its_position() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let part = pack(
        t,
        "p.hex",
        &["--format", "ihex", "--base-address", "0x21000000"],
    );
    let map = t.join("bad.x");
    let mut text = std::fs::read(qemu_map()).unwrap();
    let second_line = text.iter().position(|&b| b == b'\n').unwrap() + 1;
    text.insert(second_line + 3, 0xff);
    std::fs::write(&map, &text).unwrap();
    let o = run!(t, "inspect", part, "--memory-map", map);
    assert_eq!(o.status.code(), Some(65), "{}", stderr(&o));
    assert!(stderr(&o).contains("line 2, column 4"), "{}", stderr(&o));
    // The same fault in a layout: the same code, the same words.
    let layout = t.join("bad.layout");
    std::fs::write(&layout, b"slot_a = 0\nslot\xff_b = 0\n").unwrap();
    let o = run!(
        t,
        "inspect",
        part,
        "--layout",
        layout,
        "--public-key",
        public()
    );
    assert_eq!(o.status.code(), Some(65), "{}", stderr(&o));
    assert!(stderr(&o).contains("line 2, column 5"), "{}", stderr(&o));
}

/// Renames `a` and `b` over `path` in turn, as fast as it can, until `stop`.
fn swapper(dir: &Path, path: &Path, a: &Path, b: &Path, stop: Arc<AtomicBool>) {
    let (dir, path, a, b) = (dir.to_owned(), path.to_owned(), a.to_owned(), b.to_owned());
    std::thread::spawn(move || {
        let staged = dir.join("staged");
        let mut n = 0u64;
        while !stop.load(Ordering::Relaxed) {
            let from = if n.is_multiple_of(2) { &a } else { &b };
            // A hard link of each, renamed over the path: the path is always one of the two.
            let _ = std::fs::remove_file(&staged);
            if std::fs::hard_link(from, &staged).is_ok() {
                let _ = std::fs::rename(&staged, &path);
            }
            n += 1;
        }
    });
}

/// How many runs race the swapper.
const ROUNDS: usize = 300;

/// A small Intel HEX file: 32 bytes at 0x2100_0000 (not a partition: `inspect` reads it,
/// then refuses it, 65, after reading the memory map).
fn small_hex(dir: &Path) -> PathBuf {
    fn record(address: u16, kind: u8, data: &[u8]) -> String {
        let mut raw = vec![u8::try_from(data.len()).unwrap()];
        raw.extend_from_slice(&address.to_be_bytes());
        raw.push(kind);
        raw.extend_from_slice(data);
        let sum = raw
            .iter()
            .fold(0u8, |s, &b| s.wrapping_add(b))
            .wrapping_neg();
        raw.push(sum);
        let hex: String = raw.iter().map(|b| format!("{b:02X}")).collect();
        format!(":{hex}\n")
    }
    let text = [
        record(0, 4, &[0x21, 0x00]),
        record(0, 0, &[0x11; 16]),
        record(16, 0, &[0x22; 16]),
        record(0, 1, &[]),
    ]
    .concat();
    let path = dir.join("small.hex");
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs `args` (with `path` among them) [`ROUNDS`] times while [`swapper`] swaps a regular file
/// and a FIFO over `path`: each run ends (the watchdog fails a hang) with one of `codes`.
fn swapped_runs(t: &Path, path: &Path, regular: &Path, args: &[&OsStr], codes: &[i32]) {
    let fifo = t.join("fifo");
    mkfifo(&fifo);
    std::fs::hard_link(regular, path).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    swapper(t, path, regular, &fifo, stop.clone());
    let mut seen = Vec::new();
    for _ in 0..ROUNDS {
        let o = run_limited(t, 1 << 20, args, Stdio::null());
        let code = o.status.code();
        if !code.is_some_and(|c| codes.contains(&c)) {
            stop.store(true, Ordering::Relaxed);
            panic!("{code:?}: {}", stderr(&o));
        }
        seen.push(code);
    }
    stop.store(true, Ordering::Relaxed);
    // Both were read: the swap raced the tool.
    assert!(seen.contains(&Some(codes[0])), "{seen:?}");
}

#[test]
fn a_memory_map_swapped_for_a_fifo_is_never_waited_for() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let part = small_hex(t);
    let map = t.join("map.x");
    let args = [
        OsStr::new("inspect"),
        part.as_os_str(),
        OsStr::new("--memory-map"),
        map.as_os_str(),
    ];
    // 65: the map read, then the file refused (not a partition); 66: the FIFO, refused from
    // its descriptor.
    swapped_runs(t, &map, &qemu_map(), &args, &[65, 66]);
}

#[test]
fn a_flashable_file_swapped_for_a_fifo_is_read_once() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let hex = small_hex(t);
    let path = t.join("swapped.hex");
    let public = public();
    let args = [
        OsStr::new("inspect"),
        path.as_os_str(),
        OsStr::new("--public-key"),
        public.as_os_str(),
    ];
    // 65: read whole, refused (not a partition); 66: the FIFO, refused from its descriptor.
    swapped_runs(t, &path, &hex, &args, &[65, 66]);
}

#[test]
fn a_key_is_read_from_a_pipe_a_fifo_and_dev_stdin_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let pem = std::fs::read(key()).unwrap();
    let want = std::fs::read_to_string(public()).unwrap();
    // `key public /dev/stdin`, the key piped in.
    let mut child = Command::new(bin())
        .args(["key", "public", "/dev/stdin"])
        .current_dir(t)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&pem).unwrap();
    drop(stdin);
    let o = finish(child, "key public /dev/stdin");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), want);
    // `pack --key FIFO`, a writer on the other end (as `--key <(secret-tool lookup …)` is).
    let fifo = t.join("key.fifo");
    mkfifo(&fifo);
    let writer = {
        let (fifo, pem) = (fifo.clone(), pem.clone());
        std::thread::spawn(move || std::fs::write(fifo, pem))
    };
    let out = t.join("p.part");
    let o = run!(t, "pack", "--fixtures", "front", "--key", fifo, "-o", out);
    if !o.status.success() {
        // The tool did not read the FIFO: read it here, so that the writer's open returns
        // and the test fails with the tool's message instead of waiting for ever.
        let _ = std::fs::read(&fifo);
    }
    writer.join().unwrap().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run!(t, "inspect", out, "--public-key", public());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Bounded: a device that never ends is refused after 16 KiB and a byte.
    let o = run!(t, "key", "public", "/dev/zero");
    assert_eq!(o.status.code(), Some(65), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("16385 bytes or more, larger than the 16384 bytes"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn uninstall_without_a_blob_source_says_what_it_does() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = tmp.path().join("opt");
    let o = Command::new("bash")
        .arg(root().join("scripts/install-c.sh"))
        .args([
            OsStr::new("--prefix"),
            prefix.as_os_str(),
            OsStr::new("--uninstall"),
        ])
        .env_remove("NRTUCODE_BLOB_DIR")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no install manifest at") && stderr(&o).contains("nothing installed"),
        "{}",
        stderr(&o)
    );
}
