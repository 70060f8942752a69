//! What the device tasks share (`qemu`, `bare-metal`, `reproducible`, `cost`): building the
//! separate workspaces (the bare-metal template `examples/bare-metal`, the RISC-V loader
//! `examples/riscv-virt`, `tests/no_std`) into a target directory under the workspace's (so
//! `CARGO_TARGET_DIR` moves them too), booting an ELF under QEMU with a timeout, decoding its
//! defmt log with the workspace's `nrtucode-defmt`, counting the instructions between two marker
//! functions.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::build;
use crate::files;
use crate::metadata::Metadata;

/// The template's and its examples' target.
pub const THUMB: &str = "thumbv7em-none-eabihf";
/// The RISC-V loader's target.
pub const RISCV: &str = "riscv32imac-unknown-none-elf";
/// Where QEMU's mps2-an386 maps the PSRAM standing in for external flash (the partition's place).
pub const PSRAM: u64 = 0x2100_0000;

/// Where `tool` is on `PATH`; else an error naming its apt package.
pub fn require(tool: &str, package: &str) -> Result<PathBuf, String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    (std::env::split_paths(&path).map(|dir| dir.join(tool)))
        .find(|p| p.is_file())
        .ok_or_else(|| format!("needs {tool} (apt-get install {package})"))
}

/// `rustup target add TARGET`, quietly; a failure (no rustup, offline) shows in the build after.
pub fn rustup_target(target: &str) {
    build::quietly(&mut build::cmd("rustup", &format!("target add {target}")));
}

/// The workspace's release build of one host tool, `cargo build --quiet --release --locked -p
/// PACKAGE`: the executable `bin`, as cargo reported it.
///
/// One package a build, the build `cargo run --release -p PACKAGE` makes (the template README's
/// blocks run the tools so): built with another package, cargo unifies the features of their
/// shared dependencies (the defmt decoder turns on serde_json's `arbitrary_precision`, the C
/// library the PEM reader of ed25519-compact), and the same tool is compiled again, under other
/// features, by the next build that names it alone.
pub fn host_tool(package: &str, bin: &str) -> Result<PathBuf, String> {
    let mut command = build::cargo("build --quiet --release --locked");
    command.args(["-p", package]);
    build::executable(&mut command, bin)
}

/// What the template's QEMU cases need: qemu-system-arm, the thumbv7em target, and the
/// workspace's release `nrtucode` and `nrtucode-defmt` ([`host_tool`]).
pub fn arm_tools() -> Result<(PathBuf, PathBuf), String> {
    require("qemu-system-arm", "qemu-system-arm")?;
    rustup_target(THUMB);
    let nrtucode = host_tool("nrtucode-cli", "nrtucode")?;
    let decoder = host_tool("nrtucode-defmt", "nrtucode-defmt")?;
    Ok((nrtucode, decoder))
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

/// Where the template with feature `update` takes downloads from: the link's area
/// (`memory/mps2-an386.x`) and two more (`LINK_2` and `LINK_3` of `examples/update_cost.rs`).
pub const DOWNLOADS: [u64; 3] = [0x2190_0000, 0x21c0_0000, 0x21f0_0000];

/// `-device loader`s putting `flash` into the board's memory: the first file at [`PSRAM`] (as a
/// probe writes a partition), each further one into the next of [`DOWNLOADS`] (its length as a
/// 4-byte word, then its bytes: as the template's link fills the area).
pub fn load(command: &mut Command, flash: &[&Path]) -> Result<(), String> {
    let Some((first, downloads)) = flash.split_first() else {
        return Ok(());
    };
    if downloads.len() > DOWNLOADS.len() {
        return Err(format!(
            "{} downloads, {} areas",
            downloads.len(),
            DOWNLOADS.len()
        ));
    }
    let loader = |command: &mut Command, file: &Path, addr: u64| -> Result<(), String> {
        let file = build::path_str(file)?;
        command.args(["-device", &format!("loader,file={file},addr={addr:#x}")]);
        Ok(())
    };
    loader(command, first, PSRAM)?;
    for (file, at) in downloads.iter().zip(DOWNLOADS) {
        let len = std::fs::metadata(file)
            .map_err(|e| format!("{}: {e}", file.display()))?
            .len();
        command.args([
            "-device",
            &format!("loader,addr={at:#x},data={len},data-len=4"),
        ]);
        loader(command, file, at + 4)?;
    }
    Ok(())
}

/// The instructions between each `cost_begin` and the `cost_end` after it, from QEMU's
/// `-d in_asm,exec,nochain` log ([`COUNTING`]): each `Trace` line (a block executed) weighs the
/// instructions `in_asm` listed when it translated the block at that address. A block ends at
/// every branch, so none crosses a call of a marker.
pub fn count_blocks(log: impl BufRead) -> std::io::Result<Vec<u64>> {
    let (mut size, mut block) = (HashMap::<u64, u64>::new(), None::<u64>);
    let (mut counts, mut on, mut n) = (Vec::new(), false, 0u64);
    for line in log.lines() {
        let line = line?;
        if line.starts_with("IN:") {
            block = Some(u64::MAX);
        } else if let (Some(b), Some(addr)) = (block, line.strip_prefix("0x")) {
            let Some(pc) = addr.get(..8).and_then(|h| u64::from_str_radix(h, 16).ok()) else {
                continue;
            };
            let at = if b == u64::MAX {
                size.insert(pc, 0);
                pc
            } else {
                b
            };
            block = Some(at);
            *size.entry(at).or_insert(0) += 1;
        } else if line.starts_with("Trace ") {
            block = None;
            let pc = line
                .split_once('[')
                .and_then(|(_, r)| r.split('/').nth(1))
                .and_then(|h| u64::from_str_radix(h, 16).ok());
            if line.ends_with(" cost_begin") {
                (on, n) = (true, 0);
            } else if line.ends_with(" cost_end") {
                if on {
                    counts.push(n);
                }
                on = false;
            } else if on {
                n += pc.and_then(|pc| size.get(&pc)).copied().unwrap_or(0);
            }
        }
    }
    Ok(counts)
}

/// QEMU's log options for [`count_blocks`] (on standard error, without `-D`).
pub const COUNTING: [&str; 2] = ["-d", "in_asm,exec,nochain"];

/// Runs `command` (a QEMU invocation) under `timeout SECONDS` (exit status 124: it ran out and
/// was killed); `counted`, with the [`COUNTING`] log on its standard error, read by
/// [`count_blocks`] as it comes. Its standard output (defmt frames, or the RISC-V loader's text)
/// goes to `log`, or with a `decoder` (nrtucode-defmt) to `LOG.defmt`, decoded against `elf`
/// into `log` (the decoder's standard output and error, as `2>&1`). Returns the exit status (the
/// program's, through semihosting), the log and the instructions of each marked stretch.
pub fn boot(
    command: &Command,
    seconds: u64,
    counted: bool,
    (log, decoder): (&Path, Option<(&Path, &Path)>),
) -> Result<(i32, String, Vec<u64>), String> {
    let mut timed = build::cmd("timeout", &format!("--kill-after 5 {seconds}"));
    timed.arg(command.get_program()).args(command.get_args());
    if counted {
        timed.args(COUNTING).stderr(Stdio::piped());
    }
    let shown = format!("{timed:?}");
    let out = decoder.map_or(log.to_path_buf(), |_| log.with_extension("defmt"));
    timed.stdin(Stdio::null()).stdout(files::output(&out)?.0);
    let mut child = timed
        .spawn()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    let counts =
        (child.stderr.take()).map(|err| count_blocks(BufReader::with_capacity(1 << 20, err)));
    let status = child
        .wait()
        .map_err(|e| format!("waiting for {shown}: {e}"))?;
    let counts = (counts.transpose()).map_err(|e| format!("reading the log of {shown}: {e}"))?;
    let status = status.code().unwrap_or(-1);
    let Some((decoder, elf)) = decoder else {
        let text = String::from_utf8_lossy(&files::read(log)?).into_owned();
        return Ok((status, text, counts.unwrap_or_default()));
    };
    let (file, err) = files::output(log)?;
    let mut decode = Command::new(decoder);
    decode.arg("-e").arg(elf).stdout(file).stderr(err);
    let frames =
        std::fs::File::open(&out).map_err(|e| format!("cannot read {}: {e}", out.display()))?;
    let decoded = decode.stdin(frames).status();
    let text = files::read_text(log)?;
    match decoded {
        Ok(s) if s.success() => Ok((status, text, counts.unwrap_or_default())),
        _ => Err(format!(
            "nrtucode-defmt could not decode the log of {} ({decoded:?}): {}",
            elf.display(),
            text.trim()
        )),
    }
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
    fn a_block_weighs_its_instructions_each_time_it_runs_between_the_markers() {
        let log = "----------------\nIN: cost_begin\n0x00000100:  b480  push {r7}\n0x00000102:  4770  bx lr\n\n\
                   Trace 0: 0x1 [00000000/00000100/0/0] cost_begin\n\
                   ----------------\nIN: main\n0x00000200:  2001  movs r0, #1\n0x00000202:  2102  movs r1, #2\n0x00000204:  d1fc  bne #0x200\n\n\
                   Trace 0: 0x2 [00000000/00000200/0/0] main\n\
                   Trace 0: 0x2 [00000000/00000200/0/0] main\n\
                   IN: cost_end\n0x00000300:  4770  bx lr\n\n\
                   Trace 0: 0x3 [00000000/00000300/0/0] cost_end\n\
                   Trace 0: 0x2 [00000000/00000200/0/0] main\n";
        assert_eq!(count_blocks(log.as_bytes()).unwrap(), [6]);
        // A begin without an end counts nothing.
        let open =
            "IN: x\n0x00000200:  2001  movs r0, #1\nTrace 0: 0x1 [0/00000200/0/0] cost_begin\n";
        assert!(count_blocks(open.as_bytes()).unwrap().is_empty());
    }

    #[test]
    fn the_partition_goes_to_psram_and_each_update_into_a_download_area() {
        let dir = std::env::temp_dir().join(format!("xtask-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b, c) = (dir.join("a"), dir.join("b"), dir.join("c"));
        for (file, len) in [(&a, 1), (&b, 300), (&c, 7)] {
            std::fs::write(file, vec![0; len]).unwrap();
        }
        let mut qemu = Command::new("qemu");
        load(&mut qemu, &[&a, &b, &c]).unwrap();
        let args: Vec<String> = (qemu.get_args())
            .map(|a| a.to_string_lossy().replace(dir.to_str().unwrap(), "D"))
            .filter(|a| a != "-device")
            .collect();
        assert_eq!(
            args,
            [
                "loader,file=D/a,addr=0x21000000",
                "loader,addr=0x21900000,data=300,data-len=4",
                "loader,file=D/b,addr=0x21900004",
                "loader,addr=0x21c00000,data=7,data-len=4",
                "loader,file=D/c,addr=0x21c00004",
            ]
        );
        // Three download areas: a fourth download is refused.
        assert!(load(&mut Command::new("qemu"), &[&a, &b, &c, &a]).is_ok());
        assert!(load(&mut qemu, &[&a, &b, &c, &a, &b]).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn thousands_are_separated_by_commas() {
        assert_eq!(commas(0), "0");
        assert_eq!(commas(999), "999");
        assert_eq!(commas(1000), "1,000");
        assert_eq!(commas(5_531_703), "5,531,703");
    }
}
