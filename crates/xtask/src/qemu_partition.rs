//! `cargo xtask qemu --case partition`: the bare-metal template with feature `partition` under QEMU's
//! mps2-an386. No blob in the program; `nrtucode pack` writes a signed partition of the built-in
//! fixtures, QEMU loads it on its own at 0x21000000 (`-device loader`, as `probe-rs download`
//! writes it on a board), and the firmware checks its signature once, then copy-verifies
//! (stored) or decode-verifies (deflate) its engine's two images and two hwdecode tables into
//! RAM. The defmt log is decoded with the workspace's nrtucode-defmt. Asserted on the decoded
//! log and the exit status (0: everything loaded; 1: something refused; 2 a panic, 3 a fault
//! and 124 a hang fail every case):
//!
//! | case | expected |
//! |---|---|
//! | intact | exit 0, "signature ok", 4 of 4 loaded |
//! | intact, compressed | exit 0, the two tables decoded from deflate |
//! | flipped blob byte | exit 1, IRAM: DigestMismatch, the other three load |
//! | flipped deflate byte | exit 1, the table fails (StoredDigestMismatch: refused before decoding), the others load |
//! | flipped table byte | exit 1, the partition refused: BadSignature |
//! | another key | exit 1, refused: UnknownKey |
//! | lower security counter | exit 1, refused: Rollback (the firmware's minimum is 1) |
//! | truncated in the tables / in the blobs | exit 1, refused (the rest of PSRAM reads 0) / the cut images fail |
//! | erased flash (0xFF) | exit 1, refused: Erased |
//! | wrong class (front) | exit 1, refused: WrongClass |
//! | without `deflate` | a compressed partition: the images load, the tables NoDecoder |
//!
//! The build must refuse a private key as `NRTUCODE_PARTITION_KEY`. Then runs the template
//! README's three commands ("A partition apart from the program") as written
//! ([`device::run_block`]), with the look-alike standing in for the vendor library.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::build;
use crate::device::{self, PSRAM, Separate};
use crate::elf;
use crate::metadata::Metadata;

const TIMEOUT: Duration = Duration::from_secs(120);

/// The partition's `refused` line.
const REFUSED: &str = "ERROR partition at 0x21000000 refused: ";

struct Run<'a> {
    work: &'a Path,
    decoder: &'a Path,
    nrtucode: &'a Path,
    fw: PathBuf,
}

impl Run<'_> {
    fn fail<T>(&self, what: impl std::fmt::Display) -> Result<T, String> {
        Err(format!("{what} (logs in {})", self.work.display()))
    }

    fn part(&self, name: &str) -> PathBuf {
        self.work.join(name)
    }

    /// Boots the firmware with `part` at 0x21000000; the decoded log and the exit status, which
    /// must be 0 or 1.
    fn boot(&self, name: &str, part: &Path) -> Result<(String, i32), String> {
        let mut qemu = device::arm(&self.fw);
        device::loader(&mut qemu, part, PSRAM)?;
        let run = device::boot(&mut qemu, TIMEOUT, false)?;
        let log = device::decode(
            self.decoder,
            &self.fw,
            &run.stdout,
            &self.work.join(format!("{name}.log")),
        )
        .map_err(|e| format!("{name}: {e}"))?;
        device::show(name, &log, run.status);
        if run.status != 0 && run.status != 1 {
            return self.fail(format!(
                "{name}: exit status {} (2: panic, 3: fault, 124: hang)",
                run.status
            ));
        }
        Ok((log, run.status))
    }

    /// Boots and requires exit status `want`.
    fn expect(&self, name: &str, part: &Path, want: i32) -> Result<String, String> {
        let (log, status) = self.boot(name, part)?;
        if status != want {
            return self.fail(format!("{name}: exit status {status}, want {want}"));
        }
        Ok(log)
    }

    /// Boots and requires the partition refused with `error`, nothing loaded.
    fn refused(&self, name: &str, part: &Path, error: &str) -> Result<(), String> {
        let log = self.expect(name, part, 1)?;
        if !log.contains(&format!("{REFUSED}{error}")) {
            return self.fail(format!("{name}: no 'refused: {error}' line"));
        }
        if device::count(&log, " verified: ") != 0 {
            return self.fail(format!("{name}: something loaded from a refused partition"));
        }
        Ok(())
    }

    /// `nrtucode pack -o OUT ARGS` (the fixtures, signed with the key the arguments name).
    fn pack(&self, out: &Path, args: &[&str]) -> Result<(), String> {
        crate::status(
            Command::new(self.nrtucode)
                .arg("pack")
                .arg("-o")
                .arg(out)
                .args(args)
                .stdout(Stdio::null()),
        )
    }

    /// The template's run-time build without blobs (`--no-default-features --features
    /// FEATURES`, the test key's public half), copied to `WORK/fw.elf`; no loadable segment in
    /// XFLASH, where the partition goes.
    fn build(&mut self, template: &Separate, features: &str) -> Result<(), String> {
        let elf = template.build(
            &["--no-default-features", "--features", features],
            &[("NRTUCODE_PARTITION_KEY", OsStr::new(""))],
            "nrtucode-bare-metal",
        )?;
        crate::files::copy(&elf, &self.fw)?;
        if elf::loads(&self.fw)?
            .iter()
            .any(|l| format!("{:#010x}", l.vaddr).starts_with("0x21"))
        {
            return self.fail("feature partition put a segment into XFLASH (blobs linked?)");
        }
        Ok(())
    }
}

/// `(partition offset, stored length)` of the first line naming `item` verified
/// (`… ITEM verified: … at partition offset 0x…, CODEC, N bytes stored`).
pub fn offset(log: &str, item: &str) -> Option<(usize, usize)> {
    let verified = format!("{item} verified: ");
    log.lines().find_map(|line| {
        let at = line.find(&verified)?;
        let rest = &line[at + verified.len()..];
        let (_, tail) = rest.rsplit_once(" at partition offset 0x")?;
        let mut fields = tail.split(", ");
        let hex = fields.next()?;
        let codec = fields.next()?;
        let stored = fields.next()?.strip_suffix(" bytes stored")?;
        if fields.next().is_some()
            || codec.is_empty()
            || !codec.chars().all(|c| c.is_ascii_lowercase())
            || !hex.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'))
        {
            return None;
        }
        Some((usize::from_str_radix(hex, 16).ok()?, stored.parse().ok()?))
    })
}

/// `data` with every bit of the byte at `at` inverted.
pub fn flipped(data: &[u8], at: usize) -> Result<Vec<u8>, String> {
    let mut out = data.to_vec();
    let byte = out
        .get_mut(at)
        .ok_or_else(|| format!("offset {at:#x} is past the end ({} bytes)", data.len()))?;
    *byte ^= 0xFF;
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
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .ok_or("the partition is shorter than its header")?;
    let entry = 248 + 20 * usize::from(count) + 304;
    Ok([entry + 16, entry + 48])
}

/// Every case, then the README's three commands.
pub fn run(meta: &Metadata) -> Result<(), String> {
    device::require("qemu-system-arm", "qemu-system-arm")?;
    device::require("gcc", "gcc")?;
    device::rustup_target(device::THUMB);
    let tools = device::host_tools(
        &["nrtucode-cli", "nrtucode-defmt"],
        &["nrtucode", "nrtucode-defmt"],
    )?;
    let (nrtucode, decoder) = (&tools[0], &tools[1]);
    let work = build::scratch(meta, "qemu-partition")?;
    let template = Separate::template(meta);
    let key_pub = meta.root.join("keys/test-ed25519.pub.pem");
    if crate::files::read(&key_pub)?
        != crate::files::read(&template.dir.join("keys/test-ed25519.pub.pem"))?
    {
        return Err(
            "examples/bare-metal/keys/test-ed25519.pub.pem is not keys/test-ed25519.pub.pem".into(),
        );
    }
    let mut run = Run {
        work: &work,
        decoder,
        nrtucode,
        fw: work.join("fw.elf"),
    };

    // The template's build takes the public key from NRTUCODE_PARTITION_KEY; a private key is
    // refused.
    let private = meta.root.join("keys/test-ed25519.pem");
    let out = build::cargo()
        .current_dir(&template.dir)
        .args(["build", "--quiet", "--release", "--locked", "--target-dir"])
        .arg(&template.target_dir)
        .args(["--no-default-features", "--features", "qemu,partition"])
        .env("NRTUCODE_PARTITION_KEY", &private)
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        return run.fail("the build took a private key as NRTUCODE_PARTITION_KEY");
    }
    if !err.contains("names a private key") {
        eprintln!("{err}");
        return run.fail("no clear message for a private key");
    }

    let key = "keys/test-ed25519.pem";
    let (intact, deflate) = (run.part("intact.part"), run.part("deflate.part"));
    let signed = [
        "--fixtures",
        "full",
        "--key",
        key,
        "--security-counter",
        "1",
    ];
    run.pack(&intact, &signed)?;
    run.pack(
        &deflate,
        &[&signed[..], &["--compress", "deflate"]].concat(),
    )?;

    println!("== examples/bare-metal --no-default-features --features qemu,partition,deflate");
    run.build(&template, "qemu,partition,deflate")?;

    let log = run.expect("intact", &intact, 0)?;
    if !device::has(
        &log,
        &[
            "INFO  partition at 0x21000000: ",
            " class full, security counter 1 (minimum 1), source Fixtures, signature ok",
        ],
    ) {
        return run.fail("intact: no 'signature ok' line");
    }
    if device::count(&log, " verified: ") != 4 {
        return run.fail("intact: want 4 verified");
    }
    if !log.contains("engine ready: 4 of 4 images loaded") {
        return run.fail("intact: no 'engine ready' line");
    }
    let intact_log = log;

    let log = run.expect("deflate", &deflate, 0)?;
    if device::count(&log, ", deflate, ") != 2 {
        return run.fail("deflate: want both tables decoded from deflate");
    }
    if !log.contains("engine ready: 4 of 4 images loaded") {
        return run.fail("deflate: no 'engine ready' line");
    }
    let deflate_log = log;

    let intact_bytes = crate::files::read(&intact)?;
    let iram = "image CAYMAN_NX_ACT Perf IRAM";
    let (at, len) = offset(&intact_log, iram)
        .ok_or_else(|| format!("intact: no partition offset of {iram}"))?;
    let blob = run.part("blob.part");
    elf::write_whole(&blob, &flipped(&intact_bytes, at + len / 2)?)?;
    let log = run.expect("blob", &blob, 1)?;
    if !log
        .contains("ERROR image CAYMAN_NX_ACT Perf IRAM: verification failed: Load(DigestMismatch")
    {
        return run.fail("blob: no DigestMismatch naming IRAM");
    }
    if device::count(&log, "verification failed") != 1 || device::count(&log, " verified: ") != 3 {
        return run.fail("blob: want IRAM failed and the other three loaded");
    }

    let table = "hwdecode table CAYMAN_NX_ACT Perf TABLE";
    let (at, len) = offset(&deflate_log, table)
        .ok_or_else(|| format!("deflate: no partition offset of {table}"))?;
    let zblob = run.part("zblob.part");
    elf::write_whole(
        &zblob,
        &flipped(&crate::files::read(&deflate)?, at + len / 2)?,
    )?;
    let log = run.expect("zblob", &zblob, 1)?;
    let failed = "ERROR hwdecode table CAYMAN_NX_ACT Perf TABLE: verification failed: Load(";
    // The stream's own signed digest refuses it before the inflater reads a byte.
    if !log.contains(&format!("{failed}StoredDigestMismatch")) {
        return run.fail("zblob: the flipped deflate table was not refused by its stored digest");
    }
    if device::count(&log, "verification failed") != 1 || device::count(&log, " verified: ") != 3 {
        return run.fail("zblob: want TABLE failed and the other three loaded");
    }

    let table_part = run.part("table.part");
    elf::write_whole(
        &table_part,
        &toc_digest_bytes(&intact_bytes)?
            .into_iter()
            .try_fold(intact_bytes.clone(), |bytes, at| flipped(&bytes, at))?,
    )?;
    run.refused("table", &table_part, "BadSignature")?;

    let other_key = run.part("other.pem");
    crate::status(
        Command::new(nrtucode)
            .args(["key", "generate", "-o"])
            .arg(&other_key)
            .stdout(Stdio::null()),
    )?;
    let other = run.part("other.part");
    run.pack(
        &other,
        &[
            "--fixtures",
            "full",
            "--key",
            build::path_str(&other_key)?,
            "--security-counter",
            "1",
        ],
    )?;
    run.refused("other-key", &other, "UnknownKey")?;

    let rollback = run.part("rollback.part");
    run.pack(
        &rollback,
        &[
            "--fixtures",
            "full",
            "--key",
            key,
            "--security-counter",
            "0",
        ],
    )?;
    run.refused("rollback", &rollback, "Rollback { found: 0, minimum: 1 }")?;

    let cut_tables = run.part("cut-tables.part");
    elf::write_whole(&cut_tables, &intact_bytes[..intact_bytes.len().min(4096)])?;
    let log = run.expect("cut-tables", &cut_tables, 1)?;
    if !log.contains(REFUSED) {
        return run.fail("cut-tables: not refused");
    }
    if device::count(&log, " verified: ") != 0 {
        return run.fail("cut-tables: something loaded");
    }

    let (at, len) = offset(&intact_log, iram)
        .ok_or_else(|| format!("intact: no partition offset of {iram}"))?;
    let cut_blobs = run.part("cut-blobs.part");
    elf::write_whole(
        &cut_blobs,
        &intact_bytes[..intact_bytes.len().min(at + len / 2)],
    )?;
    let log = run.expect("cut-blobs", &cut_blobs, 1)?;
    if !log.contains("signature ok") {
        return run.fail("cut-blobs: the tables (before the cut) should verify");
    }
    if device::count(&log, " verified: ") != 0
        || device::count(&log, "verification failed: Load(DigestMismatch") != 4
    {
        return run.fail("cut-blobs: want the four items after the cut failed");
    }

    let erased = run.part("erased.part");
    elf::write_whole(&erased, &[0xFF; 65536])?;
    run.refused("erased", &erased, "Erased")?;

    let front = run.part("front.part");
    run.pack(
        &front,
        &[
            "--fixtures",
            "front",
            "--key",
            key,
            "--security-counter",
            "1",
        ],
    )?;
    run.refused(
        "front",
        &front,
        "WrongClass { found: Front, expected: Full }",
    )?;

    println!(
        "== examples/bare-metal --no-default-features --features qemu,partition (copy-verify only)"
    );
    run.build(&template, "qemu,partition")?;
    let log = run.expect("stored-only", &intact, 0)?;
    if !log.contains("engine ready: 4 of 4 images loaded") {
        return run.fail("stored-only: no 'engine ready' line");
    }
    let log = run.expect("no-decoder", &deflate, 1)?;
    if device::count(&log, "verification failed: Load(NoDecoder") != 2
        || device::count(&log, " verified: ") != 2
    {
        return run.fail("no-decoder: want the images loaded and both compressed tables NoDecoder");
    }

    println!("== the template README's three commands, as written");
    readme_commands(meta, &run)?;
    let _ = std::fs::remove_dir_all(&work);
    println!(
        "qemu-partition: the partition loads (stored and deflate); a flipped blob, deflate or table byte, another key, a downgrade, truncation, erased flash and the wrong class are refused; no hang, no fault"
    );
    Ok(())
}

/// The README's partition block, as written, with the look-alike as `VENDOR_LIB`. The block
/// names `target/release/nrtucode` and `target/bare-metal/…` (a reader's shell in the
/// repository, no `CARGO_TARGET_DIR`): when the workspace's target directory is elsewhere, the
/// tools it needs ("the tools of the walkthrough above built") are built there first.
fn readme_commands(meta: &Metadata, run: &Run) -> Result<(), String> {
    let readme = meta.root.join("examples/bare-metal/README.md");
    let text = std::fs::read_to_string(&readme)
        .map_err(|e| format!("cannot read {}: {e}", readme.display()))?;
    let block = device::readme_block(&text, "<!-- partition-walkthrough:")
        .map_err(|e| format!("{}: {e}", readme.display()))?;
    let vendor = run.part("vendor");
    crate::status(
        build::cargo()
            .args([
                "run",
                "--quiet",
                "--release",
                "--locked",
                "-p",
                "nrtucode-lookalike",
            ])
            .args(["--", "--library", "full", "--out"])
            .arg(&vendor)
            .arg("--build")
            .stdout(Stdio::null()),
    )?;
    if meta.target_dir != meta.root.join("target") {
        crate::status(
            build::cargo()
                .args(["build", "--quiet", "--release", "--locked"])
                .args(["-p", "nrtucode-cli", "-p", "nrtucode-defmt"])
                .env_remove("CARGO_TARGET_DIR"),
        )?;
    }
    let vendor_lib = vendor.join("libnrtucode_internal.so");
    let part = run.part("nrtucode.part");
    let (out, err) = (run.part("walk.log"), run.part("walk.err"));
    device::run_block(
        &block,
        &[
            ("VENDOR_LIB", vendor_lib.as_os_str()),
            ("PART", part.as_os_str()),
        ],
        &out,
        &err,
        "the README's three commands",
    )?;
    let log =
        std::fs::read_to_string(&out).map_err(|e| format!("cannot read {}: {e}", out.display()))?;
    for line in log.lines() {
        println!("    [walkthrough] {line}");
    }
    if !device::has(
        &log,
        &[
            "INFO  partition at 0x21000000: ",
            " source BuildId(",
            "), signature ok",
        ],
    ) {
        return run.fail("walkthrough: the partition of the look-alike was not verified");
    }
    if !log.contains("INFO  engine ready: 4 of 4 images loaded") {
        return run.fail("walkthrough: the engine did not come up");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_flip_inverts_one_byte_and_the_toc_digest_follows_the_descriptor_count() {
        assert_eq!(flipped(&[0, 1, 2], 1).unwrap(), [0, 0xFE, 2]);
        assert!(flipped(&[0, 1, 2], 3).is_err());
        let mut header = vec![0; 0x4c];
        header[0x4a] = 102;
        assert_eq!(
            toc_digest_bytes(&header).unwrap(),
            [248 + 2040 + 304 + 16, 248 + 2040 + 304 + 48]
        );
        assert!(toc_digest_bytes(&header[..0x4b]).is_err());
    }
}
