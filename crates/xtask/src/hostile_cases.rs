//! `cargo xtask hostile-cases [NRTUCODE]`: issue 20's hostile and unlucky cases, run against an
//! `nrtucode` binary (default: one this run builds); prints one line per case (exit codes, what
//! was left, what was said). The ELF variants are made here (with `object`): `.rodata`'s
//! sh_offset / sh_addr / sh_size moved; a getter symbol holding a tab, a newline, or a newline
//! that forges a header line. Builds the look-alike (needs gcc); the device-node cases (mknod)
//! run as root only, and say so otherwise; the sparse-file case needs GNU time (`/usr/bin/time`).
//! docs/carve.md's figures come from this task.

use std::fs::File;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

use object::read::elf::{ElfFile64, FileHeader};
use rustix::process::Signal;

use crate::build;
use crate::metadata::Metadata;

/// The getter whose symbol the variants rename (each new name as long as the old one).
const GETTER: &[u8] = b"CAYMAN_NX_ACT_PERF_IRAM_get";

/// The symbol variants: a tab, a newline, a newline forging a manifest header line.
const SYMBOLS: [(&str, &[u8]); 3] = [
    ("tab", b"CAYMAN_NX_ACT_PERF_IRAM\tget"),
    ("newline", b"CAYMAN_NX_ACT_PERF_IRAM\nget"),
    ("forge", b"X\n# build_id\tforged00000000"),
];

/// The `.rodata` header variants: field (offset in an ELF64 section header) and what is added.
const RODATA: [(&str, usize, u64); 3] = [
    ("offset", 0x18, 0x40),
    ("addr", 0x10, 0x40),
    ("size", 0x20, 0x4000),
];

/// Runs the task against `nrtucode`, or one this run builds.
pub fn run(meta: &Metadata, nrtucode: Option<&Path>) -> Result<(), String> {
    let bin = match nrtucode {
        None => build::executable(
            build::cargo().args(["build", "-q", "-p", "nrtucode-cli"]),
            "nrtucode",
        )?,
        Some(path) => {
            std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?
        }
    };
    if !Path::new("/usr/bin/time").exists() {
        return Err("hostile-cases needs GNU time as /usr/bin/time (apt-get install time)".into());
    }
    let work = std::env::temp_dir().join(format!("xtask-hostile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    let result = cases(meta, &bin, &work);
    let _ = std::fs::remove_dir_all(&work);
    result
}

/// An `nrtucode` run's exit code, 128 + N for signal N (as a shell reports it), and its
/// standard error.
struct Ran {
    code: i32,
    err: String,
}

fn code(status: ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(-1)
}

/// Runs `command` in `dir`, standard output discarded.
fn ran(command: &mut Command, dir: &Path) -> Result<Ran, String> {
    let shown = format!("{command:?}");
    let out = command
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    Ok(Ran {
        code: code(out.status),
        err: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// The first `n` bytes of `text` without trailing newlines (as the shell's `$(head -c N)`),
/// lossy at a cut character.
fn head(text: &str, n: usize) -> String {
    String::from_utf8_lossy(&text.as_bytes()[..n.min(text.len())])
        .trim_end_matches('\n')
        .to_string()
}

/// The first line of `text` holding "error" (as `grep -m1 error`), or nothing.
fn error_line(text: &str) -> &str {
    text.lines().find(|l| l.contains("error")).unwrap_or("")
}

/// The section header of `.rodata` in an ELF64 file: its offset in the file.
pub fn rodata_header(data: &[u8]) -> Result<usize, String> {
    let elf = ElfFile64::<object::Endianness>::parse(data).map_err(|e| e.to_string())?;
    let endian = elf.endian();
    let header = elf.elf_header();
    let sections = elf.elf_section_table();
    let index = sections
        .iter()
        .position(|s| sections.section_name(endian, s).ok() == Some(b".rodata".as_slice()))
        .ok_or("no .rodata section")?;
    let shoff = usize::try_from(header.e_shoff(endian)).map_err(|e| e.to_string())?;
    let entsize = usize::from(header.e_shentsize(endian));
    Ok(shoff + index * entsize)
}

/// `data` with the little-endian u64 at `at` increased by `delta`.
pub fn add_u64(data: &[u8], at: usize, delta: u64) -> Result<Vec<u8>, String> {
    let mut out = data.to_vec();
    let field = out
        .get_mut(at..at + 8)
        .ok_or_else(|| format!("offset {at:#x} is past the file"))?;
    let value = u64::from_le_bytes(field.try_into().map_err(|_| "8 bytes")?);
    field.copy_from_slice(&value.wrapping_add(delta).to_le_bytes());
    Ok(out)
}

/// `data` with every `old` followed by NUL replaced by `new` followed by NUL (the same length).
pub fn replace_symbol(data: &[u8], old: &[u8], new: &[u8]) -> Result<Vec<u8>, String> {
    if old.len() != new.len() {
        return Err("a symbol is replaced only by one as long".into());
    }
    let mut needle = old.to_vec();
    needle.push(0);
    let mut out = data.to_vec();
    let mut at = 0;
    let mut found = 0;
    while let Some(i) = out[at..].windows(needle.len()).position(|w| w == needle) {
        out[at + i..at + i + new.len()].copy_from_slice(new);
        at += i + needle.len();
        found += 1;
    }
    if found == 0 {
        return Err(format!("no symbol {}", String::from_utf8_lossy(old)));
    }
    Ok(out)
}

/// The rows (fields 1 and 8: getter and sha256) of `b`'s manifest that `a`'s lacks, counted
/// with multiplicity (`diff <(cut -f1,8 a|sort) <(cut -f1,8 b|sort) | grep -c '^>'`).
pub fn rows_with_other_bytes(a: &str, b: &str) -> usize {
    let key = |l: &str| {
        let f: Vec<&str> = l.split('\t').collect();
        format!("{}\t{}", f[0], f.get(7).unwrap_or(&""))
    };
    let mut left: Vec<String> = a.lines().map(key).collect();
    let mut extra = 0;
    for row in b.lines().map(key) {
        match left.iter().position(|l| *l == row) {
            Some(i) => {
                left.swap_remove(i);
            }
            None => extra += 1,
        }
    }
    extra
}

/// Case 2's manifest: a row for `CAYMAN_NX_ACT_PROF_TABLE_get` whose sha256 and file (fields 8
/// and 10) are another row's of the same size (field 7), inserted before the real one.
pub fn duplicate_row(manifest: &str) -> String {
    let name = "CAYMAN_NX_ACT_PROF_TABLE_get";
    let fields = |l: &str| l.split('\t').map(str::to_string).collect::<Vec<_>>();
    let Some(row) = manifest.lines().find(|l| l.starts_with(name)) else {
        return manifest.to_string();
    };
    let row = fields(row);
    let other = manifest
        .lines()
        .map(fields)
        .find(|f| f.len() > 9 && row.len() > 9 && f[6] == row[6] && f[0] != name);
    let Some(other) = other else {
        return manifest.to_string();
    };
    let mut fake = row.clone();
    fake[7] = other[7].clone();
    fake[9] = other[9].clone();
    let mut out = String::new();
    for line in manifest.lines() {
        if line.starts_with(name) {
            out.push_str(&fake.join("\t"));
            out.push('\n');
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// What `stat -c %F` calls the file at `path` (not following a link).
fn kind(path: &Path) -> String {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return format!("(no {})", path.display());
    };
    let t = meta.file_type();
    if t.is_symlink() {
        "symbolic link"
    } else if t.is_dir() {
        "directory"
    } else if t.is_char_device() {
        "character special file"
    } else if t.is_block_device() {
        "block special file"
    } else if t.is_fifo() {
        "fifo"
    } else if t.is_socket() {
        "socket"
    } else if meta.len() == 0 {
        "regular empty file"
    } else {
        "regular file"
    }
    .to_string()
}

fn size(path: &Path) -> String {
    std::fs::metadata(path)
        .map(|m| m.len().to_string())
        .unwrap_or_default()
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    for entry in std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        let dest = to.join(path.file_name().unwrap_or_default());
        if path.is_dir() {
            copy_dir(&path, &dest)?;
        } else {
            std::fs::copy(&path, &dest).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// The entries of `dir`, by name.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The `.bin` files of `dir`, by name.
fn blobs(dir: &Path) -> Vec<PathBuf> {
    names(dir)
        .into_iter()
        .filter(|n| n.ends_with(".bin"))
        .map(|n| dir.join(n))
        .collect()
}

fn mkfifo(path: &Path) -> Result<(), String> {
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        path,
        rustix::fs::Mode::from_raw_mode(0o644),
    )
    .map_err(|e| format!("mkfifo {}: {e}", path.display()))
}

fn mknod(path: &Path, major: u32, minor: u32) -> Result<(), String> {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o666),
        rustix::fs::makedev(major, minor),
    )
    .map_err(|e| format!("mknod {}: {e}", path.display()))
}

/// Polls until `dir` holds a carve's staging directory (`.nrtucode…` or `…tmp-…`), or the
/// child has exited; true for the first.
fn wait_for_staging(child: &mut Child, dir: &Path) -> bool {
    while let Ok(None) = child.try_wait() {
        if names(dir)
            .iter()
            .any(|n| n.starts_with(".nrtucode") || n.contains("tmp-"))
        {
            return true;
        }
    }
    false
}

/// The signals of case 7, as `kill -NAME` names them.
const SIGNALS: [(&str, Signal); 8] = [
    ("KILL", Signal::KILL),
    ("HUP", Signal::HUP),
    ("QUIT", Signal::QUIT),
    ("USR1", Signal::USR1),
    ("USR2", Signal::USR2),
    ("ALRM", Signal::ALARM),
    ("TERM", Signal::TERM),
    ("INT", Signal::INT),
];

fn spawn_carve(bin: &Path, lib: &Path, out: &str, dir: &Path, err: Stdio) -> Result<Child, String> {
    Command::new(bin)
        .arg("carve")
        .arg(lib)
        .args(["--out", out])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))
}

fn cases(meta: &Metadata, bin: &Path, w: &Path) -> Result<(), String> {
    let nrtucode = |args: &[&str]| {
        let mut command = Command::new(bin);
        command.args(args);
        command
    };
    build::stdout(
        build::cargo()
            .args([
                "run",
                "-q",
                "-p",
                "nrtucode-lookalike",
                "--",
                "--library",
                "full",
            ])
            .arg("--out")
            .arg(w.join("la"))
            .arg("--build"),
    )?;
    let lib = w.join("la/libnrtucode_internal.so");
    let lib_s = build::path_str(&lib)?.to_string();
    let data = std::fs::read(&lib).map_err(|e| format!("cannot read {}: {e}", lib.display()))?;
    let header = rodata_header(&data)?;
    for (mode, field, delta) in RODATA {
        let bytes = add_u64(&data, header + field, delta)?;
        crate::files::write(&w.join(format!("lib-{mode}.so")), &bytes)?;
    }
    for (mode, new) in SYMBOLS {
        crate::files::write(
            &w.join(format!("lib-{mode}.so")),
            &replace_symbol(&data, GETTER, new)?,
        )?;
    }
    ran(&mut nrtucode(&["carve", &lib_s, "--out", "good"]), w)?;
    let good_manifest = read(&w.join("good/manifest.tsv"));

    // 1: section header offset/addr/size off from its segment
    for (mode, _, _) in RODATA {
        let out = format!("s1-{mode}");
        let variant = format!("{}/lib-{mode}.so", w.display());
        let carve = ran(&mut nrtucode(&["carve", &variant, "--out", &out]), w)?;
        let manifest = w.join(&out).join("manifest.tsv");
        let wrong = if manifest.is_file() {
            rows_with_other_bytes(&good_manifest, &read(&manifest)).to_string()
        } else {
            "NA".into()
        };
        let verify = ran(&mut nrtucode(&["verify", &out]), w)?;
        println!(
            "1.{mode} carve exit {}, rows with other bytes {wrong}, verify exit {}: {}",
            carve.code,
            verify.code,
            head(&carve.err, 200)
        );
    }

    // 2: duplicate rows: verify vs build
    copy_dir(&w.join("good"), &w.join("s2"))?;
    crate::files::write(
        &w.join("s2/manifest.tsv"),
        duplicate_row(&read(&w.join("s2/manifest.tsv"))).as_bytes(),
    )?;
    let verify = ran(&mut nrtucode(&["verify", "s2"]), w)?;
    let check = ran(
        Command::new("timeout")
            .arg("300")
            .arg(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
            .args(["check", "-q", "-p", "nrtucode"])
            .env("NRTUCODE_BLOB_DIR", w.join("s2"))
            .env("CARGO_TARGET_DIR", meta.target_dir.join("hostile-cases")),
        &meta.root,
    )?;
    let build_error = check
        .err
        .lines()
        .find_map(|l| l.find("error").map(|i| &l[i..]))
        .unwrap_or("");
    println!(
        "2 verify exit {} ({}); build exit {} ({})",
        verify.code,
        error_line(&verify.err),
        check.code,
        head(build_error, 200)
    );

    // 3: forged one-row manifest naming a user's file
    let s3 = w.join("s3");
    std::fs::create_dir(&s3).map_err(|e| e.to_string())?;
    crate::files::write(&s3.join("thesis.doc"), b"thesis\n")?;
    let sha = build::stdout(Command::new("sha256sum").arg(s3.join("thesis.doc")))?;
    let mut forged: String = good_manifest
        .lines()
        .take(6)
        .map(|l| format!("{l}\n"))
        .collect();
    forged.push_str(&format!(
        "X_get\tCAYMAN\tNX\tACT\tPERF\tIRAM\t7\t{}\t0x1\tthesis.doc\n",
        head(&sha, 64)
    ));
    crate::files::write(&s3.join("manifest.tsv"), forged.as_bytes())?;
    let carve = ran(&mut nrtucode(&["carve", &lib_s, "--out", "s3"]), w)?;
    let kept = if s3.join("thesis.doc").is_file() {
        "kept"
    } else {
        "GONE"
    };
    println!(
        "3 carve exit {}, thesis.doc {kept}: {}",
        carve.code,
        head(&carve.err, 200)
    );

    // 4: resolve -o onto a char device, FIFO, symlink, /dev/full copy, closed stdout
    let root = rustix::process::geteuid().is_root();
    if root {
        mknod(&w.join("null4"), 1, 3)?;
        let r = ran(&mut nrtucode(&["resolve", "7", "iram", "-o", "null4"]), w)?;
        println!("4.chardev exit {} now {}", r.code, kind(&w.join("null4")));
    } else {
        println!("4.chardev not run: mknod needs root");
    }
    mkfifo(&w.join("fifo4"))?;
    let mut reader = Command::new("cat")
        .arg("fifo4")
        .current_dir(w)
        .stdout(File::create(w.join("fifo4.out")).map_err(|e| e.to_string())?)
        .spawn()
        .map_err(|e| format!("cannot run cat: {e}"))?;
    let timeout = |seconds: &str, args: &[&str]| {
        let mut command = Command::new("timeout");
        command.arg(seconds).arg(bin).args(args);
        command
    };
    let r = ran(
        &mut timeout("10", &["resolve", "7", "iram", "-o", "fifo4"]),
        w,
    )?;
    std::thread::sleep(Duration::from_millis(500));
    println!(
        "4.fifo exit {} now {}, reader got {} bytes",
        r.code,
        kind(&w.join("fifo4")),
        size(&w.join("fifo4.out"))
    );
    let _ = reader.kill();
    let _ = reader.wait();
    crate::files::write(&w.join("target4"), b"keep\n")?;
    std::os::unix::fs::symlink("target4", w.join("link4")).map_err(|e| e.to_string())?;
    let r = ran(&mut nrtucode(&["resolve", "7", "iram", "-o", "link4"]), w)?;
    println!(
        "4.symlink exit {} now {}, target {} bytes",
        r.code,
        kind(&w.join("link4")),
        size(&w.join("target4"))
    );
    if root {
        mknod(&w.join("full4"), 1, 7)?;
        let r = ran(&mut nrtucode(&["resolve", "7", "iram", "-o", "full4"]), w)?;
        println!(
            "4.full exit {} now {}: {}",
            r.code,
            kind(&w.join("full4")),
            head(&r.err, 150)
        );
    } else {
        println!("4.full not run: mknod needs root");
    }
    // A closed standard output: the shell's `>&-` (std can only give a child /dev/null).
    let closed = |args: &str| {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(format!("exec \"$0\" {args} >&-"))
            .arg(bin);
        command
    };
    let r = ran(&mut closed("list"), w)?;
    println!(
        "4.closed-stdout list exit {}: {}",
        r.code,
        head(&r.err, 150)
    );
    let r = ran(&mut closed("resolve 7 iram -o -"), w)?;
    println!(
        "4.closed-stdout resolve -o - exit {}: {}",
        r.code,
        head(&r.err, 150)
    );

    // 5: non-regular inputs
    mkfifo(&w.join("fifo5"))?;
    let r = ran(&mut timeout("5", &["carve", "fifo5", "--out", "s5"]), w)?;
    let staging = names(w).iter().filter(|n| n.contains("tmp")).count();
    println!(
        "5.carve-fifo exit {} (124 = hung), staging left: {staging}",
        r.code
    );
    copy_dir(&w.join("good"), &w.join("s5b"))?;
    let blob = blobs(&w.join("s5b"))
        .into_iter()
        .next()
        .ok_or("the carve wrote no blob")?;
    std::fs::remove_file(&blob).map_err(|e| e.to_string())?;
    mkfifo(&blob)?;
    let r = ran(&mut timeout("5", &["verify", "s5b"]), w)?;
    println!(
        "5.verify-fifo-blob exit {}: {}",
        r.code,
        head(error_line(&r.err), 150)
    );
    copy_dir(&w.join("good"), &w.join("s5c"))?;
    std::fs::remove_file(w.join("s5c/manifest.tsv")).map_err(|e| e.to_string())?;
    std::os::unix::fs::symlink("/dev/zero", w.join("s5c/manifest.tsv"))
        .map_err(|e| e.to_string())?;
    let r = ran(
        Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 2000000; exec timeout 20 \"$0\" verify s5c")
            .arg(bin),
        w,
    )?;
    println!(
        "5.manifest-dev-zero exit {} (under a 2 GB ulimit, 124 = still running): {}",
        r.code,
        head(&r.err, 150)
    );
    copy_dir(&w.join("good"), &w.join("s5d"))?;
    let largest = blobs(&w.join("s5d"))
        .into_iter()
        .max_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
        .ok_or("the carve wrote no blob")?;
    File::options()
        .write(true)
        .open(&largest)
        .and_then(|f| f.set_len(2 << 30))
        .map_err(|e| format!("cannot extend {}: {e}", largest.display()))?;
    let r = ran(
        Command::new("/usr/bin/time")
            .args(["-f", "%M KB %e s", "timeout", "60"])
            .arg(bin)
            .args(["verify", "s5d"]),
        w,
    )?;
    println!(
        "5.sparse-2G verify: {} {}",
        r.err.lines().last().unwrap_or(""),
        head(error_line(&r.err), 150)
    );

    // 6: symbols the manifest cannot hold
    for (mode, _) in SYMBOLS {
        let out = format!("s6-{mode}");
        let variant = format!("{}/lib-{mode}.so", w.display());
        let carve = ran(&mut nrtucode(&["carve", &variant, "--out", &out]), w)?;
        let verify = ran(&mut nrtucode(&["verify", &out]), w)?;
        let again = ran(&mut nrtucode(&["carve", &lib_s, "--out", &out]), w)?;
        println!(
            "6.{mode} carve exit {} ({}); verify exit {} ({}); re-carve exit {}",
            carve.code,
            head(error_line(&carve.err), 150),
            verify.code,
            head(error_line(&verify.err), 100),
            again.code
        );
    }

    // 7: signals and SIGKILL (sent as soon as a staging directory exists)
    let s7 = w.join("s7");
    for (name, signal) in SIGNALS {
        let (mut left, mut refused, mut said) = (0, 0, 0);
        let mut codes = String::new();
        for _ in 0..10 {
            let _ = std::fs::remove_dir_all(&s7);
            std::fs::create_dir(&s7).map_err(|e| e.to_string())?;
            let mut child = spawn_carve(bin, &lib, "s7", w, Stdio::null())?;
            if wait_for_staging(&mut child, &s7) {
                let _ =
                    rustix::process::kill_process(rustix::process::Pid::from_child(&child), signal);
            }
            let status = child.wait().map_err(|e| e.to_string())?;
            codes.push_str(&format!(" {}", code(status)));
            if names(&s7).iter().any(|n| n.starts_with('.')) {
                left += 1;
            }
            let next = ran(&mut nrtucode(&["carve", &lib_s, "--out", "s7"]), w)?;
            if next.code != 0 {
                refused += 1;
            }
            if next.err.contains("interrupted carve left") {
                said += 1;
            }
        }
        println!(
            "7.{name} into an empty dir: exits{codes}; staging left {left}/10, next carve refused {refused}/10, next carve said it removed one {said}/10"
        );
    }
    let (mut left, mut said) = (0, 0);
    for _ in 0..10 {
        let _ = std::fs::remove_dir_all(w.join("s7b"));
        let mut child = spawn_carve(bin, &lib, "s7b", w, Stdio::null())?;
        if wait_for_staging(&mut child, w) {
            let _ = child.kill();
        }
        let _ = child.wait();
        if names(w).iter().any(|n| n.starts_with('.')) {
            left += 1;
        }
        let next = ran(&mut nrtucode(&["carve", &lib_s, "--out", "s7b"]), w)?;
        if next.err.contains("interrupted carve left") {
            said += 1;
        }
        for n in names(w) {
            if n.starts_with(".s7b") || n.starts_with(".nrtucode") {
                let _ = std::fs::remove_dir_all(w.join(&n));
                let _ = std::fs::remove_file(w.join(&n));
            }
        }
    }
    println!(
        "7.KILL beside an absent destination: staging left {left}/10, next carve said it removed one {said}/10"
    );

    // 8: long names and concurrency
    let long = "d".repeat(255);
    let r = ran(&mut nrtucode(&["carve", &lib_s, "--out", &long]), w)?;
    println!("8.255-byte name exit {}: {}", r.code, head(&r.err, 120));
    let (mut both, mut one) = (0, 0);
    let mut loser = String::new();
    for _ in 0..5 {
        let _ = std::fs::remove_dir_all(w.join("s8"));
        std::fs::create_dir(w.join("s8")).map_err(|e| e.to_string())?;
        let a = spawn_carve(bin, &lib, "s8", w, Stdio::piped())?;
        let b = spawn_carve(bin, &lib, "s8", w, Stdio::piped())?;
        let (a, b) = (
            a.wait_with_output().map_err(|e| e.to_string())?,
            b.wait_with_output().map_err(|e| e.to_string())?,
        );
        let (ra, rb) = (a.status.success(), b.status.success());
        if !ra && !rb {
            both += 1;
        }
        if ra != rb {
            one += 1;
        }
        loser = format!(
            "{}{}",
            String::from_utf8_lossy(&a.stderr),
            String::from_utf8_lossy(&b.stderr)
        );
    }
    println!(
        "8.concurrent: both failed {both}/5, exactly one won {one}/5; loser said: {}",
        head(error_line(&loser), 200)
    );
    Ok(())
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_cuts_at_bytes_and_drops_trailing_newlines_like_the_shell() {
        assert_eq!(head("ab\n\n", 10), "ab");
        assert_eq!(head("abcdef\n", 3), "abc");
        assert_eq!(head("a\nb\n", 3), "a\nb");
    }

    #[test]
    fn symbols_are_replaced_in_place_and_only_whole() {
        let data = b"\0CAYMAN_NX_ACT_PERF_IRAM_get\0xCAYMAN_NX_ACT_PERF_IRAM_gets\0";
        let out = replace_symbol(data, GETTER, SYMBOLS[0].1).unwrap();
        assert_eq!(out.len(), data.len());
        assert!(out.starts_with(b"\0CAYMAN_NX_ACT_PERF_IRAM\tget\0"));
        assert!(out.ends_with(b"xCAYMAN_NX_ACT_PERF_IRAM_gets\0"));
        assert!(replace_symbol(b"none", GETTER, SYMBOLS[0].1).is_err());
        assert!(replace_symbol(data, GETTER, b"short").is_err());
        for (_, new) in SYMBOLS {
            assert_eq!(new.len(), GETTER.len());
        }
    }

    #[test]
    fn the_rodata_header_of_a_real_elf_is_found_and_its_fields_move() {
        let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let at = rodata_header(&exe).unwrap();
        // The header found is .rodata's: its sh_addr, sh_offset and sh_size are the section's.
        let file = object::File::parse(&*exe).unwrap();
        let rodata = object::Object::section_by_name(&file, ".rodata").unwrap();
        let field = |o: usize| u64::from_le_bytes(exe[at + o..at + o + 8].try_into().unwrap());
        assert_eq!(field(0x10), object::ObjectSection::address(&rodata));
        assert_eq!(
            field(0x18),
            object::ObjectSection::file_range(&rodata).unwrap().0
        );
        assert_eq!(field(0x20), object::ObjectSection::size(&rodata));
        let moved = add_u64(&exe, at + 0x18, 0x40).unwrap();
        let old = u64::from_le_bytes(exe[at + 0x18..at + 0x20].try_into().unwrap());
        let new = u64::from_le_bytes(moved[at + 0x18..at + 0x20].try_into().unwrap());
        assert_eq!(new, old + 0x40);
        assert_eq!(moved[..at + 0x18], exe[..at + 0x18]);
        assert_eq!(moved[at + 0x20..], exe[at + 0x20..]);
        assert!(add_u64(&exe, exe.len() - 4, 1).is_err());
    }

    #[test]
    fn rows_with_other_bytes_count_what_the_second_manifest_adds() {
        let good = "A\t1\t1\t1\t1\t1\t1\taa\nB\t1\t1\t1\t1\t1\t1\tbb\n";
        assert_eq!(rows_with_other_bytes(good, good), 0);
        let other = good.replace("\tbb", "\tcc");
        assert_eq!(rows_with_other_bytes(good, &other), 1);
        assert_eq!(rows_with_other_bytes(good, &format!("{good}{good}")), 2);
    }

    #[test]
    fn the_duplicate_row_takes_another_same_size_rows_bytes_and_comes_first() {
        let manifest = "# h\nA_get\tc\tn\te\tv\tr\t0x10\tsha_a\t0x0\ta.bin\n\
             CAYMAN_NX_ACT_PROF_TABLE_get\tc\tn\te\tv\tr\t0x10\tsha_p\t0x0\tp.bin\n";
        let out = duplicate_row(manifest);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(
            lines[2],
            "CAYMAN_NX_ACT_PROF_TABLE_get\tc\tn\te\tv\tr\t0x10\tsha_a\t0x0\ta.bin"
        );
        assert!(lines[3].ends_with("sha_p\t0x0\tp.bin"));
        let other_size = manifest.replacen("0x10", "0x20", 1);
        assert_eq!(duplicate_row(&other_size), other_size);
    }
}
