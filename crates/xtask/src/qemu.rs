//! `cargo xtask qemu [--case …]`: bare metal under QEMU, one case each ([`CASES`]). Every boot is
//! judged the same way ([`Want`]): its exit status (the program's, through semihosting: 0 only
//! when everything loaded, 1 when something was refused; 2 a panic, 3 a fault, 124 a hang) and
//! the lines of its log (the template's defmt log is decoded with the workspace's
//! nrtucode-defmt). A new case is one more row of [`CASES`] and its function.
//!
//! - `arm`: the template (feature `qemu`) on mps2-an386 (Cortex-M4), run-time and compile-time
//!   (`const-resolve`) resolution: intact flash loads every image; one byte flipped in the
//!   middle of the first image the intact run loaded ([`elf::flip_verified`]) fails that image
//!   only; erased flash (`.nrtucode_blobs` all 0xFF) fails every one.
//! - `riscv`: the minimal loader (examples/riscv-virt) on `virt`: intact, then one byte flipped.
//! - `partition`: the template with feature `partition`, no blob in the program: `nrtucode pack`
//!   writes a signed partition of the fixtures, QEMU loads it at 0x21000000 (`-device loader`,
//!   as a probe writes it on a board), the firmware checks its signature once, then
//!   copy-checks (stored) or decode-checks (deflate) two images and two hwdecode tables.
//!   Every tamper case is refused (a row of [`partition_cases`]); the build refuses a private key
//!   as `NRTUCODE_PARTITION_KEY`, and no key named (the test key is built in only as `test`); then the template README's three commands ("A partition apart
//!   from the program") run as written, the look-alike standing in for the vendor library.
//! - `walkthrough`: examples/bare-metal/README.md's walkthrough ("From the vendor library to a
//!   running device") as written, with `LOADER` in a fresh scratch directory: the boot log names
//!   the GNU BuildID the carve recorded, every image verified, the engine ready.
//! - `update`: the template with feature `update`: an update installed into slot B, on trial,
//!   confirmed and booted again across resets; a changed, a cut-off and a downgraded update
//!   refused, slot A booting on ([`update`]); a factory image `nrtucode provision` writes for
//!   the template's layout (update.layout) boots slot A; then the README's two update blocks as
//!   written.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::build::{self, path_str, status};
use crate::device::{self, Separate};
use crate::elf;
use crate::files;
use crate::metadata::Metadata;

/// The cases of `qemu`, in the order `--case all` runs them.
pub const CASES: [crate::Case<()>; 5] = [
    (
        "arm",
        "The template on mps2-an386: intact, tampered and erased flash, decoded defmt log",
        arm,
    ),
    ("riscv", "The RISC-V loader on virt", riscv),
    (
        "partition",
        "The template with feature `partition`: the signed partition at 0x21000000, every \
         tamper case refused, the README's three commands as written",
        partition,
    ),
    (
        "walkthrough",
        "The template README's walkthrough, as written: carve the look-alike, build a copy of \
         the template from the carve, boot it",
        walkthrough,
    ),
    (
        "update",
        "The template with feature `update`: install, trial, confirm across resets; a changed, \
         a cut-off and a downgraded update refused; a factory image from `nrtucode provision`; \
         the slots read through `read` alone (feature `unmapped`); the async updater (example \
         `update_async`)",
        update,
    ),
];

/// A boot's seconds.
const TIMEOUT: u64 = 120;

/// A verified item's log line, and a refused partition's.
const VERIFIED: &str = " verified: ";
const FAILED: &str = "verification failed";
const REFUSED: &str = "ERROR partition at 0x21000000 refused: ";

/// What one boot must show: its exit status (`None`: any but 0), the lines some line must match
/// (`grep 'A.*B'`), how many lines hold each pattern, and what the log holds in `order`.
#[derive(Default)]
pub struct Want {
    status: Option<i32>,
    lines: Vec<Vec<String>>,
    counts: Vec<(&'static str, usize)>,
    order: Vec<String>,
}

impl Want {
    /// Exit `status`, nothing else yet.
    pub fn exit(status: i32) -> Self {
        Want {
            status: Some(status),
            ..Self::default()
        }
    }
    /// Any exit status but 0.
    pub fn failing() -> Self {
        Self::default()
    }
    /// Some line holds `parts`, in this order.
    pub fn line(mut self, parts: &[&str]) -> Self {
        self.lines
            .push(parts.iter().map(|p| p.to_string()).collect());
        self
    }
    /// `n` lines hold `pattern`.
    pub fn count(mut self, pattern: &'static str, n: usize) -> Self {
        self.counts.push((pattern, n));
        self
    }
    /// The log holds `parts` in this order, across lines.
    pub fn in_order(mut self, parts: &[&str]) -> Self {
        self.order.extend(parts.iter().map(|p| p.to_string()));
        self
    }
    /// Exit 1, the partition refused with `error`, nothing loaded.
    pub fn refused(error: &str) -> Self {
        Self::exit(1)
            .line(&[&format!("{REFUSED}{error}")])
            .count(VERIFIED, 0)
    }

    /// What of this `log` (and exit `status`) is not as wanted.
    pub fn problems(&self, log: &str, status: i32) -> Vec<String> {
        let mut out = Vec::new();
        if self.status.map_or(status == 0, |want| want != status) {
            let want = self.status.map_or("not 0".into(), |s| s.to_string());
            out.push(format!(
                "exit status {status}, want {want} (2: panic, 3: fault, 124: hang)"
            ));
        }
        for parts in &self.lines {
            if !log.lines().any(|line| in_order(line, parts)) {
                out.push(format!("no line holding {:?}", parts.join("…")));
            }
        }
        if !in_order(log, &self.order) {
            out.push(format!("want these lines in this order: {:?}", self.order));
        }
        for (pattern, n) in &self.counts {
            let found = count(log, pattern);
            if found != *n {
                out.push(format!("{found} lines hold {pattern:?}, want {n}"));
            }
        }
        out
    }
}

/// The lines of `log` containing `pattern` (`grep -c`).
fn count(log: &str, pattern: &str) -> usize {
    log.lines().filter(|l| l.contains(pattern)).count()
}

/// Whether `text` holds each of `parts`, in this order (each after the end of the one before).
fn in_order<S: AsRef<str>>(text: &str, parts: &[S]) -> bool {
    let mut rest = text;
    let mut after = |p: &str| rest.find(p).map(|at| rest = &rest[at + p.len()..]);
    parts.iter().all(|p| after(p.as_ref()).is_some())
}

/// One case's boots: where their logs go, the defmt decoder (none: the log is text), the QEMU
/// machine ([`device::arm`], [`device::riscv`]) and the firmware booted.
struct Boots {
    work: PathBuf,
    decoder: Option<PathBuf>,
    qemu: fn(&Path) -> Command,
    fw: PathBuf,
}

impl Boots {
    /// Boots the firmware with `flash` (none, a partition at 0x21000000, or that and an update
    /// in the download area: [`device::load`]) and checks the log (also in `WORK/NAME.log`)
    /// against `want`; returns the log.
    pub fn boot(&self, name: &str, flash: &[&Path], want: &Want) -> Result<String, String> {
        let mut qemu = (self.qemu)(&self.fw);
        device::load(&mut qemu, flash)?;
        let log = self.work.join(format!("{name}.log"));
        let decoder = (self.decoder.as_deref()).map(|d| (d, self.fw.as_path()));
        let (status, log, _) = device::boot(&qemu, TIMEOUT, false, (&log, decoder))
            .map_err(|e| format!("{name}: {e}"))?;
        for line in log.lines() {
            println!("    [{name}] {line}");
        }
        println!("    [{name}] exit status {status}");
        let problems = want.problems(&log, status);
        if !problems.is_empty() {
            return Err(format!(
                "{name}: {} (logs in {})",
                problems.join("; "),
                self.work.display()
            ));
        }
        Ok(log)
    }
}

/// Boots the firmware intact (`intact`, exit 0: some images verified, none failed, a line
/// holding "N of N images loaded"), then, as `tampered` (a file in the work directory), with
/// the middle byte of the first image verified flipped ([`elf::flip_verified`]): that image
/// named failed, every other verified. Returns the images and the intact firmware's path.
fn intact_then_tampered(
    boots: &mut Boots,
    intact: Want,
) -> Result<(usize, PathBuf, String), String> {
    let log = boots.boot("intact", &[], &intact.count(FAILED, 0))?;
    let images = count(&log, VERIFIED);
    if images < 1 || !log.contains(&format!("{images} of {images} images loaded")) {
        return Err(format!(
            "intact: {images} images verified, want some and all of them loaded"
        ));
    }
    let (intact, tampered) = (boots.fw.clone(), boots.work.join("tampered.elf"));
    let image = elf::flip_verified(&intact, &tampered, &log)?;
    boots.fw = tampered;
    let named = format!("{image}: verification failed: SHA-256 mismatch");
    let want = Want::failing().line(&[&named]).count(FAILED, 1);
    let tampered_log = boots.boot("tampered", &[], &want.count(VERIFIED, images - 1))?;
    Ok((images, intact, tampered_log))
}

/// The template's intact, tampered and erased flash, for both resolutions.
pub fn arm(meta: &Metadata, _: &()) -> Result<(), String> {
    device::require("qemu-system-arm", "qemu-system-arm")?;
    device::rustup_target(device::THUMB);
    let decoder = Some(device::host_tool("nrtucode-defmt", "nrtucode-defmt")?);
    let work = meta.scratch("qemu")?;
    let template = Separate::template(meta);
    for features in ["qemu", "qemu,const-resolve"] {
        println!("== examples/bare-metal --features {features}");
        let elf = template.build(&["--features", features], &[], "nrtucode-bare-metal")?;
        let intact = work.join("intact.elf");
        files::copy(&elf, &intact)?;
        let mut boots = Boots {
            work: work.clone(),
            decoder: decoder.clone(),
            qemu: device::arm,
            fw: intact,
        };
        let fixtures = "INFO  blobs: the built-in fixtures, not the vendor's";
        let want = Want::exit(0)
            .line(&[fixtures])
            .line(&["INFO  engine ready: "]);
        let (images, intact, log) = intact_then_tampered(&mut boots, want)?;
        // The two digests as the tool prints them: 64 lower-case hex digits each, different.
        let expected = hex_field(&log, "SHA-256 mismatch, expected ", 64);
        let found = hex_field(
            &log,
            &format!("expected {}, found ", expected.unwrap_or("")),
            64,
        );
        if expected.is_none() || found.is_none() || expected == found {
            return Err(format!(
                "tampered: want `expected <64 hex>, found <64 other hex>` in the mismatch line, got {expected:?} and {found:?}"
            ));
        }
        boots.fw = work.join("erased.elf");
        elf::erase(&intact, &boots.fw)?;
        let none = format!("engine not loaded: 0 of {images} images loaded, {images} failed");
        boots.boot(
            "erased",
            &[],
            &Want::failing()
                .line(&[&none])
                .count(FAILED, images)
                .count(VERIFIED, 0),
        )?;
    }
    let _ = std::fs::remove_dir_all(&work);
    println!(
        "qemu: intact flash loads, a flipped byte and erased flash are refused, both resolutions"
    );
    Ok(())
}

/// The RISC-V loader on `virt`, intact and with one byte flipped.
pub fn riscv(meta: &Metadata, _: &()) -> Result<(), String> {
    device::require("qemu-system-riscv32", "qemu-system-misc")?;
    device::rustup_target(device::RISCV);
    let fw = Separate::new(meta, "examples/riscv-virt", "riscv-virt").build(
        &[],
        &[],
        "nrtucode-riscv-virt",
    )?;
    let work = meta.scratch("qemu-riscv")?;
    let mut boots = Boots {
        work: work.clone(),
        decoder: None,
        qemu: device::riscv,
        fw,
    };
    intact_then_tampered(&mut boots, Want::exit(0))?;
    let _ = std::fs::remove_dir_all(&work);
    println!("qemu: riscv32imac on QEMU virt loads intact images and refuses a flipped byte");
    Ok(())
}

/// `(partition offset, stored length)` of the first line naming `item` verified
/// (`… ITEM verified: … at partition offset 0x…, CODEC, N bytes stored`).
pub fn offset(log: &str, item: &str) -> Option<(usize, usize)> {
    let verified = format!("{item}{VERIFIED}");
    log.lines().find_map(|line| {
        let rest = &line[line.find(&verified)? + verified.len()..];
        let (_, tail) = rest.rsplit_once(" at partition offset 0x")?;
        let [hex, codec, stored] = tail.split(", ").collect::<Vec<_>>()[..] else {
            return None;
        };
        let stored = stored.strip_suffix(" bytes stored")?;
        if codec.is_empty()
            || !codec.chars().all(|c| c.is_ascii_lowercase())
            || !hex.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'))
        {
            return None;
        }
        Some((usize::from_str_radix(hex, 16).ok()?, stored.parse().ok()?))
    })
}

/// `data` with every bit of the bytes at `at` inverted.
pub fn flipped(data: &[u8], at: &[usize]) -> Result<Vec<u8>, String> {
    let mut out = data.to_vec();
    for &at in at {
        let len = data.len();
        *out.get_mut(at)
            .ok_or_else(|| format!("offset {at:#x} is past the end ({len} bytes)"))? ^= 0xFF;
    }
    Ok(out)
}

/// The offsets of a signed byte that parse checks only for equality: the first byte of both
/// digests of table-of-contents entry 0 (after the 248 header and list bytes, the 20-byte
/// descriptors, 304 bytes of hwdecode table list; the decoded digest at +16, the stored one at
/// +48). Entry 0 is stored as is, so its two digests are equal and flipping both keeps them so:
/// only the signature can tell.
pub fn toc_digest_bytes(part: &[u8]) -> Result<[usize; 2], String> {
    let count = part
        .get(0x4a..0x4c)
        .ok_or("the partition is shorter than its header")?;
    let entry = 248 + 20 * usize::from(u16::from_le_bytes([count[0], count[1]])) + 304;
    Ok([entry + 16, entry + 48])
}

/// How a partition case's bytes are made (`ITEM`: as the earlier case's log names it).
enum Bytes {
    /// `nrtucode pack --fixtures ARGS` with the test key, or (`true`) another one.
    Pack(&'static str, bool),
    /// An earlier case's partition with the middle byte of ITEM's stored blob flipped.
    Flip(&'static str, &'static str),
    /// An earlier case's partition cut in the middle of ITEM's stored blob.
    Cut(&'static str, &'static str),
    /// An earlier case's partition, its first N bytes (or all).
    Head(&'static str, usize),
    /// An earlier case's partition with a signed byte only the signature checks flipped
    /// ([`toc_digest_bytes`]).
    Toc(&'static str),
    /// 64 KiB of erased flash (0xFF).
    Erased,
}

const IRAM: &str = "image CAYMAN_NX_ACT Perf IRAM";
const TABLE: &str = "hwdecode table CAYMAN_NX_ACT Perf TABLE";
const READY: &str = "engine ready: 4 of 4 images loaded";

/// The partition cases, in order: a name, the template's features, the bytes at 0x21000000 and
/// the boot wanted. `other_key_id`: the other key's ID in hex, as `nrtucode key generate`
/// printed it.
fn partition_cases(other_key_id: &str) -> Vec<(&'static str, &'static str, Bytes, Want)> {
    let (full, both) = ("qemu,partition,deflate", "qemu,partition");
    let failed = |error: &str, verified| {
        Want::exit(1)
            .line(&[&format!("ERROR {error}")])
            .count(FAILED, 1)
            .count(VERIFIED, verified)
    };
    let intact = Want::exit(0)
        .line(&[
            "INFO  partition at 0x21000000: ",
            " class full, security counter 1 (minimum 1), source Fixtures, signature ok",
        ])
        .line(&[READY])
        .count(VERIFIED, 4);
    vec![
        (
            "intact",
            full,
            Bytes::Pack("full --security-counter 1", false),
            intact,
        ),
        (
            "deflate",
            full,
            Bytes::Pack("full --security-counter 1 --compress deflate", false),
            Want::exit(0).line(&[READY]).count(", deflate, ", 2),
        ),
        (
            "blob",
            full,
            Bytes::Flip("intact", IRAM),
            failed(
                &format!("{IRAM}: verification failed: Load(DigestMismatch"),
                3,
            ),
        ),
        // The stream's own signed digest refuses it before the inflater reads a byte.
        (
            "zblob",
            full,
            Bytes::Flip("deflate", TABLE),
            failed(
                &format!("{TABLE}: verification failed: Load(StoredDigestMismatch"),
                3,
            ),
        ),
        (
            "table",
            full,
            Bytes::Toc("intact"),
            Want::refused("BadSignature"),
        ),
        (
            "other-key",
            full,
            Bytes::Pack("full --security-counter 1", true),
            Want::refused(&format!("UnknownKey {{ found: {other_key_id} }}")),
        ),
        (
            "rollback",
            full,
            Bytes::Pack("full --security-counter 0", false),
            Want::refused("Rollback { found: 0, minimum: 1 }"),
        ),
        (
            "cut-tables",
            full,
            Bytes::Head("intact", 4096),
            Want::refused(""),
        ),
        // The tables (before the cut) verify; the four items after it fail.
        (
            "cut-blobs",
            full,
            Bytes::Cut("intact", IRAM),
            Want::exit(1)
                .line(&["signature ok"])
                .count(VERIFIED, 0)
                .count("verification failed: Load(DigestMismatch", 4),
        ),
        ("erased", full, Bytes::Erased, Want::refused("Erased")),
        (
            "front",
            full,
            Bytes::Pack("front --security-counter 1", false),
            Want::refused("WrongClass { found: Front, expected: Full }"),
        ),
        // Copy-verify only: a compressed partition's tables cannot be decoded.
        (
            "stored-only",
            both,
            Bytes::Head("intact", usize::MAX),
            Want::exit(0).line(&[READY]),
        ),
        (
            "no-decoder",
            both,
            Bytes::Head("deflate", usize::MAX),
            Want::exit(1)
                .count("verification failed: Load(NoDecoder", 2)
                .count(VERIFIED, 2),
        ),
    ]
}

/// `nrtucode pack --key KEY ARGS -o OUT`.
pub fn pack(nrtucode: &Path, key: &Path, args: &str, out: &Path) -> Result<(), String> {
    let mut command = Command::new(nrtucode);
    command
        .arg("pack")
        .arg("--key")
        .arg(key)
        .args(args.split_whitespace());
    status(command.arg("-o").arg(out).stdout(Stdio::null()))
}

/// The partition cases ([`partition_cases`]), after the build's refusals of a private key as
/// `NRTUCODE_PARTITION_KEY` and of no key named; then the README's partition block.
pub fn partition(meta: &Metadata, _: &()) -> Result<(), String> {
    device::require("gcc", "gcc")?;
    let (nrtucode, decoder) = &device::arm_tools()?;
    let work = meta.scratch("qemu-partition")?;
    let template = Separate::template(meta);
    let key = meta.root.join("keys/test-ed25519.pem");
    let mut private = template.command(&["--no-default-features", "--features", "qemu,partition"]);
    let (_, out) = build::output(private.env("NRTUCODE_PARTITION_KEY", &key))?;
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.success() || !err.contains("a private key (PKCS#8 PEM") {
        eprintln!("{err}");
        return Err(
            "the build took a private key as NRTUCODE_PARTITION_KEY, or said nothing clear".into(),
        );
    }
    // Fail closed: with no key named, no key is trusted (the test key only as `test`).
    let mut unnamed = template.command(&["--no-default-features", "--features", "qemu,partition"]);
    let (_, out) = build::output(unnamed.env_remove("NRTUCODE_PARTITION_KEY"))?;
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.success()
        || !err.contains("trusts only the key you name: set NRTUCODE_PARTITION_KEY")
    {
        eprintln!("{err}");
        return Err(
            "the build with no NRTUCODE_PARTITION_KEY named did not fail saying how to name one"
                .into(),
        );
    }

    let other_key = work.join("other.pem");
    let generated =
        build::stdout(build::cmd(path_str(nrtucode)?, "key generate -o").arg(&other_key))?;
    let other_key_id = hex_field(&generated, ", key ID ", 16)
        .ok_or_else(|| format!("nrtucode key generate printed no 16-digit key ID: {generated:?}"))?
        .to_string();
    let boots = Boots {
        work: work.clone(),
        decoder: Some(decoder.clone()),
        qemu: device::arm,
        fw: work.join("fw.elf"),
    };
    // Each case's bytes and log, for the cases after it.
    let mut done: Vec<(&str, Vec<u8>, String)> = Vec::new();
    let mut built = "";
    for (name, features, how, want) in partition_cases(&other_key_id) {
        if features != built {
            println!("== examples/bare-metal --no-default-features --features {features}");
            build_partition_fw(&template, features, &boots.fw)?;
            built = features;
        }
        let earlier = |of: &str| {
            done.iter()
                .find(|d| d.0 == of)
                .ok_or_else(|| format!("{name}: no case {of} before it"))
        };
        let middle = |of: &str, item: &str| -> Result<(&[u8], usize), String> {
            let (_, bytes, log) = earlier(of)?;
            let (at, len) =
                offset(log, item).ok_or_else(|| format!("{of}: no partition offset of {item}"))?;
            Ok((bytes, at + len / 2))
        };
        let path = work.join(format!("{name}.part"));
        match how {
            Bytes::Pack(args, other) => pack(
                nrtucode,
                if other { &other_key } else { &key },
                &format!("--fixtures {args}"),
                &path,
            )?,
            Bytes::Flip(of, item) => {
                let (bytes, at) = middle(of, item)?;
                files::write(&path, &flipped(bytes, &[at])?)?
            }
            Bytes::Cut(of, item) => {
                let (bytes, at) = middle(of, item)?;
                files::write(&path, &bytes[..bytes.len().min(at)])?
            }
            Bytes::Head(of, n) => {
                let bytes = &earlier(of)?.1;
                files::write(&path, &bytes[..bytes.len().min(n)])?
            }
            Bytes::Toc(of) => {
                let bytes = &earlier(of)?.1;
                files::write(&path, &flipped(bytes, &toc_digest_bytes(bytes)?)?)?
            }
            Bytes::Erased => files::write(&path, [0xFF; 65536])?,
        }
        let log = boots.boot(name, &[&path], &want)?;
        done.push((name, files::read(&path)?, log));
    }

    println!("== the template README's three commands, as written");
    partition_readme(meta, &work)?;
    let _ = std::fs::remove_dir_all(&work);
    println!(
        "qemu-partition: the partition loads (stored and deflate); a flipped blob, deflate or table byte, another key, a downgrade, truncation, erased flash and the wrong class are refused; no hang, no fault"
    );
    Ok(())
}

/// The template's run-time build without blobs (`--no-default-features --features FEATURES`,
/// the test key's public half, named: `NRTUCODE_PARTITION_KEY=test`), copied to `fw`; no loadable segment in XFLASH, where the
/// partition goes.
fn build_partition_fw(template: &Separate, features: &str, fw: &Path) -> Result<(), String> {
    let env = [("NRTUCODE_PARTITION_KEY", OsStr::new("test"))];
    let elf = template.build(
        &["--no-default-features", "--features", features],
        &env,
        "nrtucode-bare-metal",
    )?;
    files::copy(&elf, fw)?;
    if elf::read(fw)?.loads.iter().any(|l| l.vaddr >> 24 == 0x21) {
        return Err("feature partition put a segment into XFLASH (blobs linked?)".into());
    }
    Ok(())
}

/// Runs the sh block after `marker` in examples/bare-metal/README.md as written
/// (`bash -euo pipefail -c BLOCK`, [`readme_block`]) with `env`, as a user elsewhere runs it:
/// from a fresh directory outside the repository, with `REPO` naming the repository, `WORK`
/// the directory the block writes into (`work`) and `CARGO_TARGET_DIR` set (the workspace's
/// target directory); prints its output (on failure, the last 30 lines of its stderr), checks
/// it against `want` and returns it.
///
/// The blocks run the tools with `cargo run` and take the firmware's path from cargo's build
/// messages, wherever the target directory is; with `tools`, the tools are built first, so
/// that the block's own `cargo run` does not build them inside its boot pipeline.
fn readme(
    meta: &Metadata,
    (marker, tools): (&str, bool),
    env: &[(&str, &OsStr)],
    work: &Path,
    want: &Want,
) -> Result<String, String> {
    if tools {
        // The builds the block's `cargo run --release -p …` makes ([`device::arm_tools`]), in
        // the workspace's target directory, the block's CARGO_TARGET_DIR (`meta.target_dir`).
        device::arm_tools()?;
    }
    // Outside the repository: nothing the block does may depend on where it is run from.
    let outside = std::env::temp_dir().join(format!("nrtucode-readme-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&outside);
    files::create_dir(&outside)?;
    let readme = meta.root.join("examples/bare-metal/README.md");
    let block = readme_block(&files::read_text(&readme)?, marker)
        .map_err(|e| format!("{}: {e}", readme.display()))?;
    println!(
        "qemu: running the README's {} lines in {}",
        block.lines().count(),
        work.display()
    );
    let err = work.join("block.err");
    let mut bash = Command::new("bash");
    bash.args(["-euo", "pipefail", "-c", &block])
        .current_dir(&outside)
        .env("REPO", &meta.root)
        .env("WORK", work)
        .env("CARGO_TARGET_DIR", &meta.target_dir)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stderr(files::output(&err)?.0);
    let out = bash.output().map_err(|e| format!("cannot run bash: {e}"));
    let _ = std::fs::remove_dir_all(&outside);
    let out = out?;
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    for line in log.lines() {
        println!("    [walkthrough] {line}");
    }
    if !out.status.success() {
        let text = files::read_text(&err)?;
        let lines: Vec<&str> = text.lines().collect();
        for line in &lines[lines.len().saturating_sub(30)..] {
            eprintln!("{line}");
        }
        let status = out.status;
        return Err(format!(
            "the README's block after {marker} failed ({status}; above: the end of its stderr)"
        ));
    }
    match want.problems(&log, 0)[..] {
        [] => Ok(log),
        ref problems => Err(format!(
            "the README's block after {marker}: {}",
            problems.join("; ")
        )),
    }
}

/// The shell block of a README that follows the line starting with `marker` (which must be
/// followed by a "```sh" line), up to the closing "```", its lines joined by newlines.
pub fn readme_block(text: &str, marker: &str) -> Result<String, String> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with(marker))
        .ok_or_else(|| format!("no line starting with {marker:?}"))?;
    if lines.get(start + 1) != Some(&"```sh") {
        return Err(format!(
            "the {marker:?} marker is not followed by an sh block"
        ));
    }
    let end = (start + 2..lines.len())
        .find(|&i| lines[i] == "```")
        .ok_or_else(|| format!("the sh block after {marker:?} does not end"))?;
    let block = lines[start + 2..end].join("\n");
    if block.trim().is_empty() {
        return Err(format!("the sh block after {marker:?} is empty"));
    }
    Ok(block)
}

/// The README's partition block, as written, with the look-alike as `VENDOR_LIB`: the
/// look-alike's partition loads.
fn partition_readme(meta: &Metadata, work: &Path) -> Result<(), String> {
    let lib = build::lookalike(&work.join("vendor"))?;
    let id = (elf::read(&lib)?.build_id).ok_or("the look-alike has no GNU build ID")?;
    let part = work.join("nrtucode-part.elf");
    let env = [("VENDOR_LIB", lib.as_os_str()), ("PART", part.as_os_str())];
    let want = Want::exit(0)
        .line(&[
            "INFO  partition at 0x21000000: ",
            &format!(" source BuildId({id}), signature ok"),
        ])
        .line(&["INFO  engine ready: 4 of 4 images loaded"]);
    readme(
        meta,
        ("<!-- partition-walkthrough:", true),
        &env,
        work,
        &want,
    )
    .map(drop)
}

/// The `digits` lower-case hex digits right after the first `before` in `text`, if they are
/// there and followed by no further hex digit.
pub fn hex_field<'t>(text: &'t str, before: &str, digits: usize) -> Option<&'t str> {
    let (_, after) = text.split_once(before)?;
    let field = after.get(..digits)?;
    let is_hex = |c: char| matches!(c, '0'..='9' | 'a'..='f');
    (field.chars().all(is_hex) && !after[digits..].starts_with(is_hex)).then_some(field)
}

/// The README's walkthrough block (it builds every tool it uses), then its boot log.
pub fn walkthrough(meta: &Metadata, _: &()) -> Result<(), String> {
    device::require("qemu-system-arm", "qemu-system-arm")?;
    device::require("gcc", "gcc")?;
    let work = meta.scratch("walkthrough")?;
    let started = Instant::now();
    let loader = work.join("my-loader");
    let env = [("LOADER", loader.as_os_str())];
    let log = readme(
        meta,
        ("<!-- walkthrough:", false),
        &env,
        &work,
        &Want::exit(0),
    )?;
    let manifest = files::read_text(&work.join("my-loader.blobs/manifest.tsv"))?;
    let id = hex_field(&manifest, "# build_id\t", 40)
        .ok_or("the carve recorded no 40-digit build_id, want the look-alike's GNU BuildID")?;
    let named = format!("INFO  blobs: carved from the vendor library with GNU BuildID {id}");
    let has_line = |want: &str| log.lines().any(|l| l == want);
    if !has_line(&named)
        || !has_line("INFO  engine ready: 2 of 2 images loaded")
        || log.contains(FAILED)
    {
        return Err(format!(
            "the boot log does not name BuildID {id}, or the engine did not come up"
        ));
    }
    let seconds = started.elapsed().as_secs();
    let _ = std::fs::remove_dir_all(&work);
    println!(
        "walkthrough: vendor library (look-alike) to a booted device in {seconds} s, the log naming BuildID {id}"
    );
    Ok(())
}

/// `nrtucode pack` of the front fixtures with the test key, security counter `counter`, into
/// `WORK/NAME` (`extra`: more arguments).
pub fn pack_front(
    meta: &Metadata,
    nrtucode: &Path,
    work: &Path,
    (name, counter, extra): (&str, u32, &str),
) -> Result<PathBuf, String> {
    let args = format!("--fixtures front --security-counter {counter} {extra}");
    let out = work.join(name);
    pack(
        nrtucode,
        &meta.root.join("keys/test-ed25519.pem"),
        &args,
        &out,
    )?;
    Ok(out)
}

/// The update package case: slot A holds `p1`; the link offers the delta (`nrtucode package`)
/// to `p2`, its blobs stored with a higher security counter: its signed prefix, an item per
/// blob, and the stored bytes of the blobs slot A does not hold (with `p1` packed `--compress
/// deflate`, the blobs deflate changed; with the same blobs, none), the others copied from slot
/// A on the device. The link drops halfway through what follows the prefix (the firmware's
/// emulated loss), the device resets, resumes past the first byte after the header (from the
/// last blob slot B holds, checked), installs, boots B on trial, confirms it and boots it
/// again. `name` names the boot's log and the package.
fn package(
    (boots, name): (&Boots, &str),
    nrtucode: &Path,
    (meta, work, p1, p2): (&Metadata, &Path, &Path, &Path),
) -> Result<(), String> {
    let pkg = work.join(format!("{name}.pkg"));
    let mut command = Command::new(nrtucode);
    command
        .args(["package", "--base"])
        .arg(p1)
        .arg("--new")
        .arg(p2)
        .arg("--public-key")
        .arg(meta.root.join("keys/test-ed25519.pub.pem"))
        .arg("-o")
        .arg(&pkg);
    status(command.stdout(Stdio::null()))?;
    let len = files::read(&pkg)?.len();
    let want = Want::exit(0)
        .count("engine not loaded", 0)
        .count("ERROR", 0)
        .count("INFO  boot ", 4)
        .in_order(&[
            "INFO  boot 0: power-on",
            "INFO  booted slot A: ",
            &format!("INFO  update offered: {len} bytes"),
            "INFO  package: delta, base prefix digest ",
            &format!("resuming at package byte 96 of {len}, slot Some(B)"),
            "WARN  the link dropped at package byte ",
            "INFO  boot 1: after a reset",
            "INFO  booted slot A: ",
            "INFO  package: delta",
            "INFO  update installed into slot B: ",
            "INFO  boot 2: after a reset",
            "INFO  confirmed slot B: minimum security counter 2; reset",
            "INFO  boot 3: after a reset",
            "INFO  running the update from slot B, confirmed",
        ]);
    let log = boots.boot(name, &[p1, &pkg], &want)?;
    // The second transfer resumed past what the first one wrote, checked: not from byte 96.
    let resumed: Vec<usize> = log
        .lines()
        .filter_map(|l| l.split("resuming at package byte ").nth(1))
        .filter_map(|rest| rest.split(' ').next()?.parse().ok())
        .collect();
    // How many blobs the package carries, as the device logs its header.
    let carried: Option<u64> = log
        .lines()
        .find_map(|l| l.split("..., ").nth(1))
        .and_then(|rest| rest.split(' ').next()?.parse().ok());
    match resumed[..] {
        [96, second] if second > 96 => {
            println!(
                "qemu-update ({name}): a package carrying {} blobs resumed at byte {second} of {len} after the link dropped",
                carried.map_or("?".to_string(), |n| n.to_string())
            );
            Ok(())
        }
        _ => Err(format!(
            "package: the resumed transfer's offsets are {resumed:?}, not 96 then past it"
        )),
    }
}

/// The update cases: slot A holds a signed partition (`-device loader` at 0x21000000, as a
/// probe writes it); an update waits in the download area ([`device::DOWNLOADS`]: `-device loader`
/// stands in for the link). The firmware boots A, streams the update into slot B through `NorFlash` in odd
/// chunks, resets (`SYSRESETREQ`: QEMU keeps the RAM the flash is emulated over), boots B on
/// trial, confirms it, resets and boots B again. A changed byte of a blob, a download cut off
/// halfway and a downgrade (counter 1 over 2) are refused (exit 4), and slot A boots after the
/// reset. A factory image from `nrtucode provision` boots slot A ([`factory`]). Then the
/// template README's update block and its factory image block, as written.
pub fn update(meta: &Metadata, _: &()) -> Result<(), String> {
    let (nrtucode, decoder) = &device::arm_tools()?;
    let work = meta.scratch("qemu-update")?;
    let p1 = pack_front(meta, nrtucode, &work, ("p1.part", 1, ""))?;
    let p2 = pack_front(meta, nrtucode, &work, ("p2.part", 2, ""))?;

    println!("== examples/bare-metal --no-default-features --features update");
    let elf = Separate::template(meta).build(
        // With the inflater: slot A may hold compressed blobs (the package case's base).
        &["--no-default-features", "--features", "update,deflate"],
        &[("NRTUCODE_PARTITION_KEY", OsStr::new("test"))],
        "nrtucode-bare-metal",
    )?;
    let boots = Boots {
        work: work.clone(),
        decoder: Some(decoder.clone()),
        qemu: device::arm,
        fw: work.join("fw.elf"),
    };
    files::copy(&elf, &boots.fw)?;
    // Every boot loads the engine.
    let want = |status| {
        Want::exit(status)
            .count("engine not loaded", 0)
            .count("ERROR no slot", 0)
    };

    let slot_a = "INFO  booted slot A: 2860384 bytes, class front, security counter";
    let none = want(0).in_order(&[
        "boot 0: power-on",
        slot_a,
        "no update offered: running slot A",
    ]);
    boots.boot("none", &[&p1], &none)?;
    let slot_b = "booted slot B: 2860384 bytes, class front, security counter 2, fell back false; state State { seq: ";
    let installed = || {
        want(0).count("INFO  boot ", 3).in_order(&[
        "INFO  boot 0: power-on",
        &format!(
            "{slot_a} 1, fell back false; state State {{ seq: 0, active: A, status: Confirmed"
        ),
        "INFO  update offered: 2860384 bytes",
        "INFO  installing into slot B",
        "INFO  update installed into slot B: ",
        "status: Trial { boots: 0 }, previous: Some(A), min_security_counter: 1 }; reset",
        "INFO  boot 1: after a reset",
        &format!("{slot_b}2, active: B, status: Trial {{ boots: 1 }}"),
        "INFO  engine ready: 4 of 4 images loaded",
        "INFO  confirmed slot B: minimum security counter 2; reset",
        "INFO  boot 2: after a reset",
        &format!(
            "{slot_b}3, active: B, status: Confirmed, previous: None, min_security_counter: 2 }}"
        ),
        "INFO  engine ready: 4 of 4 images loaded",
        "INFO  running the update from slot B, confirmed",
    ])
    };
    let log = boots.boot("update", &[&p1, &p2], &installed())?;

    // A refused update: after the reset, slot A as before, never B.
    let kept = |refusal: &str| {
        want(4)
            .count("INFO  boot ", 2)
            .count("booted slot B", 0)
            .in_order(&[
                "INFO  boot 0: power-on",
                "INFO  installing into slot B",
                &format!("ERROR update refused: Refused({refusal}"),
                "INFO  boot 1: after a reset",
                "INFO  booted slot A: ",
                "state State { seq: 0, active: A, status: Confirmed",
                "WARN  the update was not installed: running slot A",
            ])
    };
    let bytes = files::read(&p2)?;
    let (at, len) = offset(&log, IRAM).ok_or(format!("update: no partition offset of {IRAM}"))?;
    let (changed, half) = (work.join("changed.part"), work.join("half.part"));
    files::write(&changed, &flipped(&bytes, &[at + len / 2])?)?;
    files::write(&half, &bytes[..bytes.len() / 2])?;
    let refused = kept("Load(DigestMismatch { blob: BlobId(13) })");
    boots.boot("changed", &[&p1, &changed], &refused)?;
    boots.boot("half", &[&p1, &half], &kept(""))?;
    let rollback = kept("Trust(Rollback { found: 1, minimum: 2 })");
    boots.boot("downgrade", &[&p2, &p1], &rollback)?;

    // The package's base has compressed blobs, the new partition stored ones: the blobs deflate
    // changed cross the link, the others are copied from slot A.
    let p1_deflate = pack_front(
        meta,
        nrtucode,
        &work,
        ("p1-deflate.part", 1, "--compress deflate"),
    )?;
    package(
        (&boots, "package"),
        nrtucode,
        (meta, &work, &p1_deflate, &p2),
    )?;
    factory(&boots, nrtucode, (meta, &p1))?;

    // The same program reading its slots through `read` alone (`nrtucode::update::Unmapped`,
    // as on a SPI NOR without a memory map): the install, trial and confirmation, a changed
    // byte refused by the whole check through `read`, a package resumed after the link drop.
    println!("== examples/bare-metal --no-default-features --features update,unmapped");
    let elf = Separate::template(meta).build(
        &["--no-default-features", "--features", "update,unmapped"],
        &[("NRTUCODE_PARTITION_KEY", OsStr::new("test"))],
        "nrtucode-bare-metal",
    )?;
    let unmapped = Boots {
        fw: work.join("fw-unmapped.elf"),
        ..boots
    };
    files::copy(&elf, &unmapped.fw)?;
    let read_alone = "INFO  slots read through `read` alone (no mapping): signed prefix buffer";
    unmapped.boot(
        "unmapped-update",
        &[&p1, &p2],
        &installed().count(read_alone, 3),
    )?;
    unmapped.boot("unmapped-changed", &[&p1, &changed], &refused)?;
    package(
        (&unmapped, "unmapped-package"),
        nrtucode,
        (meta, &work, &p1, &p2),
    )?;

    // The async updater on the device: `examples/update_async.rs`, the install and the trial
    // over an async adapter of the same flash that suspends before every operation.
    println!(
        "== examples/bare-metal --no-default-features --features async --example update_async"
    );
    let elf = Separate::template(meta).build(
        &[
            "--no-default-features",
            "--features",
            "async",
            "--example",
            "update_async",
        ],
        &[("NRTUCODE_PARTITION_KEY", OsStr::new("test"))],
        "update_async",
    )?;
    let asynchronous = Boots {
        fw: work.join("update-async.elf"),
        ..unmapped
    };
    files::copy(&elf, &asynchronous.fw)?;
    let done = Want::exit(0).count("ERROR", 0).in_order(&[
        "INFO  async: booted slot A, on trial false",
        "INFO  async: update installed; state State { seq: 1, active: B, status: Trial { boots: 0 }",
        "INFO  async: booted slot B hashed whole, on trial true",
        "INFO  async: confirmed slot B; state State { seq: 3, active: B, status: Confirmed",
        "INFO  async: done, ",
    ]);
    let log = asynchronous.boot("update-async", &[&p1, &p2], &done)?;
    let suspended = log
        .lines()
        .find_map(|l| l.split("async: done, ").nth(1))
        .and_then(|rest| rest.split(' ').next()?.parse::<u64>().ok())
        .unwrap_or(0);
    if suspended < 11_000 {
        return Err(format!(
            "update-async: {suspended} suspensions, fewer than the install's writes"
        ));
    }
    println!("qemu-update (async): {suspended} flash operations suspended the task");

    println!("== the template README's update commands, as written");
    let (old, new) = (work.join("old.part"), work.join("new.part"));
    let env = [("OLD", old.as_os_str()), ("NEW", new.as_os_str())];
    let confirmed = Want::exit(0).in_order(&[
        "confirmed slot B",
        "INFO  running the update from slot B, confirmed",
    ]);
    readme(
        meta,
        ("<!-- update-walkthrough:", true),
        &env,
        &work,
        &confirmed,
    )?;
    println!("== the template README's update package commands, as written");
    let package_work = work.join("package");
    files::create_dir(&package_work)?;
    let env = [("WORK", package_work.as_os_str())];
    let resumed = Want::exit(0).in_order(&[
        "resuming at package byte 96 of ",
        "WARN  the link dropped at package byte ",
        "INFO  boot 1: after a reset",
        "INFO  update installed into slot B: ",
        "confirmed slot B",
        "INFO  running the update from slot B, confirmed",
    ]);
    readme(
        meta,
        ("<!-- package-walkthrough:", true),
        &env,
        &work,
        &resumed,
    )?;
    println!("== the same commands, FEATURES=update,unmapped");
    let package_work = work.join("package-unmapped");
    files::create_dir(&package_work)?;
    let env = [
        ("WORK", package_work.as_os_str()),
        ("FEATURES", OsStr::new("update,unmapped")),
    ];
    let read_alone = "INFO  slots read through `read` alone (no mapping): signed prefix buffer";
    readme(
        meta,
        ("<!-- package-walkthrough:", true),
        &env,
        &work,
        &resumed.count(read_alone, 4),
    )?;
    println!("== the template README's factory image commands, as written");
    let factory_work = work.join("factory");
    files::create_dir(&factory_work)?;
    let env = [("WORK", factory_work.as_os_str())];
    readme(
        meta,
        ("<!-- provision-boot:", true),
        &env,
        &work,
        &factory_confirmed(),
    )?;
    let _ = std::fs::remove_dir_all(&work);
    println!(
        "qemu-update: a factory image from `nrtucode provision` boots slot A, confirmed; the update installs, boots on trial, is confirmed and boots again across resets; an update package's link drops halfway and its install resumes past what slot B holds; a changed byte, a download cut off halfway and a downgrade are refused and slot A keeps booting; through a mapping and through `read` alone; and the async updater's install, trial and confirmation"
    );
    Ok(())
}

/// What a boot of a factory image with slot A alone logs: the whole region kept as
/// programmed, slot A booted, confirmed (no record: the factory default), the engine loaded.
fn factory_confirmed() -> Want {
    Want::exit(0)
        .count("INFO  boot ", 1)
        .count("booted slot B", 0)
        .count("engine not loaded", 0)
        .in_order(&[
            "INFO  boot 0: power-on",
            "INFO  flash as programmed: the whole region",
            "INFO  booted slot A: 2860384 bytes, class front, security counter 1, fell back false; state State { seq: 0, active: A, status: Confirmed, previous: None, min_security_counter: 1 }",
            "INFO  engine ready: 4 of 4 images loaded",
            "INFO  no update offered: running slot A",
        ])
}

/// A factory image `nrtucode provision` writes for the template's own layout
/// (examples/bare-metal/update.layout), slot A alone, loaded whole at the flash's start as a
/// programmer writes it: slot A boots, confirmed. (Not `--first-boot b-trial`: QEMU's
/// `-device loader` writes its file again at every reset, so the state the firmware records
/// before its reset, the trial counted, then confirmed, would be put back to the image's.)
fn factory(boots: &Boots, nrtucode: &Path, (meta, p1): (&Metadata, &Path)) -> Result<(), String> {
    let public = boots.work.join("pub.pem");
    let mut key = Command::new(nrtucode);
    key.arg("key")
        .arg("public")
        .arg(meta.root.join("keys/test-ed25519.pem"))
        .arg("-o")
        .arg(&public);
    status(key.stdout(Stdio::null()))?;
    let image = boots.work.join("factory.bin");
    let mut provision = Command::new(nrtucode);
    provision
        .arg("provision")
        .arg("--layout")
        .arg(meta.root.join("examples/bare-metal/update.layout"))
        .arg("--public-key")
        .arg(&public)
        .arg("--slot-a")
        .arg(p1)
        .arg("-o")
        .arg(&image);
    status(provision.stdout(Stdio::null()))?;
    boots.boot("factory", &[&image], &factory_confirmed())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hex_field_has_exactly_its_digits() {
        let line = "refused: UnknownKey { found: 5065d9189b5b8976 }";
        assert_eq!(hex_field(line, "found: ", 16), Some("5065d9189b5b8976"));
        // Too short, too long, upper case or decimal: not the field.
        assert_eq!(hex_field(line, "found: ", 17), None);
        assert_eq!(hex_field(line, "found: ", 15), None);
        assert_eq!(hex_field("found: 5065D9189B5B8976", "found: ", 16), None);
        assert_eq!(hex_field("found: [80, 101, 217]", "found: ", 4), None);
        assert_eq!(hex_field(line, "missing: ", 16), None);
        // The GNU BuildID a carve's manifest records.
        let id = "a3b652bece25e083dac7d0c5bdb4144318882f5e";
        let manifest = format!("# nrtucode blobs\n# build_id\t{id}\nname\tsize\n");
        assert_eq!(hex_field(&manifest, "# build_id\t", 40), Some(id));
    }

    #[test]
    fn the_partition_offset_is_read_from_the_verified_line() {
        let log = "INFO  image CAYMAN_NX_ACT Perf IRAM verified: 81344 bytes to 0x20000000, SHA-256 ok; blob 15 at partition offset 0x75920, stored, 81344 bytes stored\n\
                   INFO  hwdecode table CAYMAN_NX_ACT Perf TABLE verified: 8192 bytes to 0x20026000, SHA-256 ok; blob 18 at partition offset 0x8c070, deflate, 979 bytes stored\n";
        assert_eq!(
            offset(log, "image CAYMAN_NX_ACT Perf IRAM"),
            Some((0x75920, 81344))
        );
        assert_eq!(
            offset(log, "hwdecode table CAYMAN_NX_ACT Perf TABLE"),
            Some((0x8c070, 979))
        );
        assert_eq!(offset(log, "image CAYMAN_NX_ACT Perf DRAM"), None);
        let failed =
            "ERROR image CAYMAN_NX_ACT Perf IRAM: verification failed: Load(DigestMismatch";
        assert_eq!(offset(failed, "image CAYMAN_NX_ACT Perf IRAM"), None);
    }

    #[test]
    fn a_flip_inverts_bytes_and_the_toc_digest_follows_the_descriptor_count() {
        assert_eq!(flipped(&[0, 1, 2], &[1]).unwrap(), [0, 0xFE, 2]);
        assert!(flipped(&[0, 1, 2], &[3]).is_err());
        let mut header = vec![0; 0x4c];
        header[0x4a] = 102;
        assert_eq!(
            toc_digest_bytes(&header).unwrap(),
            [248 + 2040 + 304 + 16, 248 + 2040 + 304 + 48]
        );
        assert!(toc_digest_bytes(&header[..0x4b]).is_err());
    }

    #[test]
    fn a_boot_is_judged_by_its_status_lines_and_counts() {
        let log = "INFO  a verified: 1\nERROR partition at 0x21000000 refused: Erased\n";
        assert!(Want::refused("Erased").problems(log, 1).len() == 1); // one item verified
        assert!(
            Want::refused("Erased")
                .problems("ERROR partition at 0x21000000 refused: Erased", 1)
                .is_empty()
        );
        assert_eq!(
            Want::exit(0)
                .count(VERIFIED, 1)
                .line(&["INFO", "a"])
                .problems(log, 2)
                .len(),
            1
        );
        let log = "a 1\nb 2\nc 3\n";
        let order = |parts: &[&str]| Want::exit(0).in_order(parts).problems(log, 0).is_empty();
        assert!(order(&["a", "c"]) && order(&[]) && order(&["a", "1", "b"]));
        assert!(!order(&["c", "a"]) && !order(&["a", "d"]) && !order(&["b 2", "b"]));
        // A line's parts are on one line, in order.
        let line = |parts: &[&str]| Want::exit(0).line(parts).problems(log, 0).is_empty();
        assert!(line(&["b", "2"]) && !line(&["a", "2"]) && !line(&["2", "b"]));
    }

    #[test]
    fn the_readme_block_is_the_sh_block_after_its_marker() {
        let text = "intro\n```sh\nnot this\n```\n<!-- walkthrough: x -->\n```sh\na=1\necho \"$a\"\n```\nafter\n";
        assert_eq!(
            readme_block(text, "<!-- walkthrough:").unwrap(),
            "a=1\necho \"$a\""
        );
        assert!(readme_block(text, "<!-- partition-walkthrough:").is_err());
        assert!(
            readme_block(
                "<!-- walkthrough: x -->\n```text\na\n```\n",
                "<!-- walkthrough:"
            )
            .is_err()
        );
        assert!(readme_block("<!-- walkthrough: x -->\n```sh\na\n", "<!-- walkthrough:").is_err());
    }
}
