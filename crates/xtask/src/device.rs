//! What the device tasks share (`qemu`, `bare-metal`, `reproducible`, `cost`): building the
//! separate workspaces (the bare-metal template `examples/bare-metal`, the RISC-V loader
//! `examples/riscv-virt`, `tests/no_std`) into a target directory under the workspace's (so
//! `CARGO_TARGET_DIR` moves them too), booting an ELF under QEMU with a timeout, decoding its
//! defmt log with the workspace's `nrtucode-defmt`, counting the instructions between two marker
//! functions.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStderr, Command, Stdio};
use std::time::{Duration, Instant};

use crate::build;
use crate::metadata::Metadata;

/// The template's and its examples' target.
pub const THUMB: &str = "thumbv7em-none-eabihf";
/// The RISC-V loader's target.
pub const RISCV: &str = "riscv32imac-unknown-none-elf";
/// Where QEMU's mps2-an386 maps the PSRAM standing in for external flash (the partition's place).
pub const PSRAM: u64 = 0x2100_0000;

/// Fails naming the apt package unless `tool` is on `PATH`.
pub fn require(tool: &str, package: &str) -> Result<(), String> {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()));
    if found {
        Ok(())
    } else {
        Err(format!(
            "needs {tool} (apt-get install {package}; .ci/run installs it)"
        ))
    }
}

/// `rustup target add TARGET`, quietly; a failure (no rustup, offline) shows in the build after.
pub fn rustup_target(target: &str) {
    let _ = Command::new("rustup")
        .args(["target", "add", target])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// The workspace's release build of host tools (`cargo build --quiet --release --locked -p …`):
/// the executables named `bins`, in that order, as cargo reported them.
pub fn host_tools(packages: &[&str], bins: &[&str]) -> Result<Vec<PathBuf>, String> {
    let mut command = build::cargo("build --quiet --release --locked");
    for p in packages {
        command.args(["-p", p]);
    }
    build::executables(&mut command, bins, &[])
}

/// What the template's QEMU cases need: qemu-system-arm, the thumbv7em target, and the
/// workspace's release `nrtucode` and `nrtucode-defmt` ([`host_tools`]).
pub fn arm_tools() -> Result<(PathBuf, PathBuf), String> {
    require("qemu-system-arm", "qemu-system-arm")?;
    rustup_target(THUMB);
    let packages = ["nrtucode-cli", "nrtucode-defmt"];
    match &host_tools(&packages, &["nrtucode", "nrtucode-defmt"])?[..] {
        [nrtucode, decoder] => Ok((nrtucode.clone(), decoder.clone())),
        _ => Err("cargo built no nrtucode and nrtucode-defmt".into()),
    }
}

/// A separate workspace of the repository in `dir` (`examples/bare-metal`, `examples/riscv-virt`,
/// `tests/no_std`), built into `target_dir` (`--target-dir`, under the workspace's target
/// directory: where the template's `.cargo/config.toml` points when `CARGO_TARGET_DIR` is unset).
pub struct Separate {
    pub dir: PathBuf,
    pub target_dir: PathBuf,
}

impl Separate {
    /// `examples/bare-metal`, into `TARGET/bare-metal` (what its `.cargo/config.toml` names).
    pub fn template(meta: &Metadata) -> Self {
        Self::new(meta, "examples/bare-metal", "bare-metal")
    }

    /// `examples/riscv-virt`, into `TARGET/riscv-virt`.
    pub fn riscv(meta: &Metadata) -> Self {
        Self::new(meta, "examples/riscv-virt", "riscv-virt")
    }

    /// The workspace at `dir` (relative to the root) into `TARGET/target`.
    pub fn new(meta: &Metadata, dir: &str, target: &str) -> Self {
        Separate {
            dir: meta.root.join(dir),
            target_dir: meta.target_dir.join(target),
        }
    }

    /// `cargo build --quiet --release --locked --target-dir … ARGS` in the workspace, with
    /// `NRTUCODE_BLOB_DIR` empty (the built-in fixtures).
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = build::cargo("build --quiet --release --locked --target-dir");
        command
            .current_dir(&self.dir)
            .arg(&self.target_dir)
            .args(args);
        command.env("NRTUCODE_BLOB_DIR", "");
        command
    }

    /// [`Separate::command`] with `env`: the executable `name` it built.
    pub fn build(
        &self,
        args: &[&str],
        env: &[(&str, &OsStr)],
        name: &str,
    ) -> Result<PathBuf, String> {
        build::executable(self.command(args).envs(env.iter().copied()), name)
    }
}

/// The template's link arguments without `--cfg sha2_backend_soft="compact"` (`RUSTFLAGS`
/// replaces `target.<triple>.rustflags` of its `.cargo/config.toml`).
pub const UNROLLED_FLAGS: &str = "-C link-arg=-Tlink.x -C link-arg=-Tdefmt.x -C link-arg=--nmagic";

/// A sha2 backend's name, the template's build with it and the environment of that build.
pub type Backend<'a> = (&'static str, Separate, Vec<(&'static str, &'a OsStr)>);

/// The two builds of the template the cost cases compare, by sha2 backend: `compact` (its
/// `.cargo/config.toml`) and `unrolled` (sha2's default, into a target directory of its own).
pub fn sha2_backends<'a>(meta: &Metadata) -> [Backend<'a>; 2] {
    [
        ("compact", Separate::template(meta), Vec::new()),
        (
            "unrolled",
            Separate::new(meta, "examples/bare-metal", "bare-metal-sha2-unrolled"),
            vec![("RUSTFLAGS", OsStr::new(UNROLLED_FLAGS))],
        ),
    ]
}

/// What every instruction-counting case needs first (qemu-system-arm, the thumbv7em target),
/// and the counting options of the installed qemu-system-arm: one instruction per translation
/// block ([`one_insn_per_tb`]) and a log line (on standard error) per block executed.
pub fn counting_arm() -> Result<Vec<&'static str>, String> {
    require("qemu-system-arm", "qemu-system-arm")?;
    rustup_target(THUMB);
    let out = build::stdout(&mut build::cmd("qemu-system-arm", "--version"))?;
    let mut args = one_insn_per_tb(out.lines().next().unwrap_or(""))?;
    args.extend(["-d", "exec,nochain"]);
    Ok(args)
}

/// How a QEMU run ended and what it wrote: the exit status (the program's, through semihosting;
/// 124 when it timed out and was killed), its standard output (defmt frames, or the RISC-V
/// loader's text) and, with a [`Counter`], the instructions of each marked stretch.
pub struct Boot {
    pub status: i32,
    pub stdout: Vec<u8>,
    pub counts: Vec<u64>,
}

/// QEMU's mps2-an386 (Cortex-M4) with semihosting, booting `elf`.
pub fn arm(elf: &Path) -> Command {
    qemu("qemu-system-arm -machine mps2-an386 -cpu cortex-m4", elf)
}

/// QEMU's riscv32 `virt` with semihosting, booting `elf`.
pub fn riscv(elf: &Path) -> Command {
    qemu("qemu-system-riscv32 -machine virt -bios none", elf)
}

fn qemu(machine: &str, elf: &Path) -> Command {
    let (program, machine) = machine.split_once(' ').unwrap_or((machine, ""));
    let mut command = build::cmd(program, machine);
    let common = "-display none -monitor none -serial none -semihosting-config enable=on,target=native -kernel";
    command.args(common.split(' ')).arg(elf);
    command
}

/// `-device loader` putting `file` at `addr` (as a probe writes a partition on a board).
pub fn loader(command: &mut Command, file: &Path, addr: u64) -> Result<(), String> {
    command.args([
        "-device",
        &format!("loader,file={},addr={addr:#x}", build::path_str(file)?),
    ]);
    Ok(())
}

/// `-device loader`s putting the length of `file` (a 4-byte word) at `addr` and `file` after it:
/// a download area, as the template's link would fill it.
pub fn download(command: &mut Command, file: &Path, addr: u64) -> Result<(), String> {
    let len = std::fs::metadata(file)
        .map_err(|e| format!("{}: {e}", file.display()))?
        .len();
    command.args([
        "-device",
        &format!("loader,addr={addr:#x},data={len},data-len=4"),
    ]);
    loader(command, file, addr + 4)
}

/// QEMU's option for one guest instruction per translation block: `-singlestep` before 8.1,
/// `-accel tcg,one-insn-per-tb=on` from 8.1 (its version line from `qemu-system-arm --version`).
pub fn one_insn_per_tb(version_line: &str) -> Result<Vec<&'static str>, String> {
    let version = version_line
        .split_whitespace()
        .skip_while(|w| *w != "version")
        .nth(1)
        .ok_or_else(|| format!("no version in {version_line:?}"))?;
    let mut parts = version.split('.').map(|p| p.parse::<u32>());
    let (Some(Ok(major)), Some(Ok(minor))) = (parts.next(), parts.next()) else {
        return Err(format!("no major.minor version in {version_line:?}"));
    };
    Ok(if (major, minor) >= (8, 1) {
        vec!["-accel", "tcg,one-insn-per-tb=on"]
    } else {
        vec!["-singlestep"]
    })
}

/// The instructions between markers in QEMU's `-d exec` log: for each line ending in
/// ` cost_begin`, the lines (one per instruction with one instruction per block) before the next
/// line ending in ` cost_end`.
pub fn count_between_markers(log: impl BufRead) -> std::io::Result<Vec<u64>> {
    let mut log = log;
    let (mut counts, mut on, mut n) = (Vec::new(), false, 0u64);
    let mut line = Vec::new();
    loop {
        line.clear();
        if log.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        if text.ends_with(b" cost_begin") {
            (on, n) = (true, 0);
        } else if text.ends_with(b" cost_end") {
            if on {
                counts.push(n);
            }
            on = false;
        } else if on {
            n += 1;
        }
    }
    Ok(counts)
}

/// A reader of QEMU's `-d` log (on its standard error, without `-D`): the instructions between
/// each `cost_begin` and the `cost_end` after it ([`count_between_markers`],
/// `crate::cost::count_blocks`).
pub type Counter = fn(BufReader<ChildStderr>) -> std::io::Result<Vec<u64>>;

/// Runs `command` (a QEMU invocation) for at most `timeout`, its standard output captured; with
/// a `counter`, its standard error is read by it as it comes.
pub fn boot(
    command: &mut Command,
    timeout: Duration,
    counter: Option<Counter>,
) -> Result<Boot, String> {
    let shown = format!("{command:?}");
    command.stdin(Stdio::null()).stdout(Stdio::piped());
    if counter.is_some() {
        command.stderr(Stdio::piped());
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    let mut out = child.stdout.take().ok_or("no stdout pipe")?;
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        out.read_to_end(&mut bytes).map(|_| bytes)
    });
    let counter = child.stderr.take().zip(counter).map(|(err, counter)| {
        std::thread::spawn(move || counter(BufReader::with_capacity(1 << 20, err)))
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status.code().unwrap_or(-1),
            Ok(None) if started.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break 124;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("waiting for {shown}: {e}")),
        }
    };
    let stdout = reader
        .join()
        .map_err(|_| "the reader thread panicked")?
        .map_err(|e| format!("reading the output of {shown}: {e}"))?;
    let counts = match counter {
        Some(counter) => counter
            .join()
            .map_err(|_| "the counter thread panicked")?
            .map_err(|e| format!("reading the log of {shown}: {e}"))?,
        None => Vec::new(),
    };
    Ok(Boot {
        status,
        stdout,
        counts,
    })
}

/// Decodes the defmt `frames` of `elf` with `decoder` (nrtucode-defmt) into `log` (its standard
/// output and error, as `2>&1`) and returns the text.
pub fn decode(decoder: &Path, elf: &Path, frames: &[u8], log: &Path) -> Result<String, String> {
    let (file, err) = crate::files::output(log)?;
    let mut child = Command::new(decoder)
        .arg("-e")
        .arg(elf)
        .stdin(Stdio::piped())
        .stdout(file)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", decoder.display()))?;
    let mut stdin = child.stdin.take().ok_or("no stdin pipe")?;
    let frames = frames.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&frames));
    let status = child
        .wait()
        .map_err(|e| format!("waiting for {}: {e}", decoder.display()))?;
    // A decoder that stops reading early shows in its exit status, not as a broken pipe here.
    let _ = writer.join();
    let text = crate::files::read_text(log)?;
    if status.success() {
        Ok(text)
    } else {
        Err(format!(
            "nrtucode-defmt could not decode the log of {} ({status}): {}",
            elf.display(),
            text.trim()
        ))
    }
}

/// Prints `log` with each line prefixed `    [NAME] `, then its exit status.
pub fn show(name: &str, log: &str, status: i32) {
    for line in log.lines() {
        println!("    [{name}] {line}");
    }
    println!("    [{name}] exit status {status}");
}

/// The lines of `log` containing `pattern` (`grep -c`).
pub fn count(log: &str, pattern: &str) -> usize {
    log.lines().filter(|l| l.contains(pattern)).count()
}

/// Whether `text` holds each of `parts`, in this order (each after the end of the one before).
pub fn in_order<S: AsRef<str>>(text: &str, parts: &[S]) -> bool {
    let mut rest = text;
    parts.iter().all(|p| match rest.find(p.as_ref()) {
        Some(at) => {
            rest = &rest[at + p.as_ref().len()..];
            true
        }
        None => false,
    })
}

/// Whether a line of `log` holds `parts` in this order (`grep -q 'A.*B.*C'`).
pub fn has<S: AsRef<str>>(log: &str, parts: &[S]) -> bool {
    log.lines().any(|line| in_order(line, parts))
}

/// Whether a line of `log` is `line` (`grep -qx`).
pub fn has_line(log: &str, line: &str) -> bool {
    log.lines().any(|l| l == line)
}

/// `n` with thousands separators (`1,234,567`), as the tables print counts and sizes.
pub fn commas(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_are_the_lines_between_each_begin_and_the_next_end() {
        let log = "Trace 0: 0x1 [00000000/00000100/0x0] Reset\n\
                   Trace 0: 0x2 [00000000/00000200/0x0] cost_begin\n\
                   Trace 0: 0x3 [00000000/00000204/0x0] run\n\
                   Trace 0: 0x4 [00000000/00000208/0x0] run\n\
                   Trace 0: 0x5 [00000000/0000020c/0x0] cost_end\n\
                   Trace 0: 0x6 [00000000/00000210/0x0] between\n\
                   Trace 0: 0x7 [00000000/00000214/0x0] cost_end\n\
                   Trace 0: 0x8 [00000000/00000200/0x0] cost_begin\n\
                   Trace 0: 0x9 [00000000/00000204/0x0] not_cost_begin_here\n\
                   Trace 0: 0xa [00000000/0000020c/0x0] cost_end";
        assert_eq!(count_between_markers(log.as_bytes()).unwrap(), [2, 1]);
        // A begin without an end counts nothing.
        assert!(
            count_between_markers(&b"x cost_begin\ny\n"[..])
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn one_instruction_per_block_follows_the_qemu_version() {
        let old = "QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)";
        assert_eq!(one_insn_per_tb(old).unwrap(), ["-singlestep"]);
        let new = "QEMU emulator version 8.1.0";
        assert_eq!(
            one_insn_per_tb(new).unwrap(),
            ["-accel", "tcg,one-insn-per-tb=on"]
        );
        assert_eq!(
            one_insn_per_tb("QEMU emulator version 10.0.2")
                .unwrap()
                .len(),
            2
        );
        assert_eq!(
            one_insn_per_tb("QEMU emulator version 8.0.5").unwrap(),
            ["-singlestep"]
        );
        assert!(one_insn_per_tb("no version here").is_err());
    }

    #[test]
    fn log_queries_match_as_grep_does() {
        let log = "INFO  partition at 0x21000000: 9 bytes, class full, signature ok\nERROR x\n";
        assert!(has(
            log,
            &[
                "INFO  partition at 0x21000000: ",
                " class full",
                "signature ok"
            ]
        ));
        assert!(!has(log, &["signature ok", "class full"]));
        assert!(has_line(log, "ERROR x"));
        assert!(!has_line(log, "ERROR"));
        assert_eq!(count(log, "x"), 2);
        assert_eq!(commas(0), "0");
        assert_eq!(commas(999), "999");
        assert_eq!(commas(1000), "1,000");
        assert_eq!(commas(5_531_703), "5,531,703");
    }
}
