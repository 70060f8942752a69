//! `cargo xtask qemu --case update`: the bare-metal template with feature `update` under QEMU's
//! mps2-an386. Slot A holds a signed partition (`-device loader` at 0x21000000, as a probe
//! writes it); an update waits in the download area (its length word at 0x21900000, its bytes
//! after it: `-device loader` stands in for the link). The firmware boots A, streams the update
//! into slot B through `NorFlash` in odd chunks, resets (`SYSRESETREQ`: QEMU keeps the RAM the
//! flash is emulated over), boots B on trial, confirms it, resets and boots B again. Asserted on
//! the exit status and the decoded log, in order (2 a panic, 3 a fault, 124 a hang fail every
//! case):
//!
//! | case | exit | the log |
//! |---|---:|---|
//! | no update offered | 0 | slot A, `no update offered` |
//! | the update (counter 2 over 1) | 0 | A, installed into B, B on trial, confirmed (minimum 2), B confirmed |
//! | one byte of a blob changed | 4 | refused `DigestMismatch`, after the reset slot A |
//! | cut off halfway (half the bytes delivered) | 4 | refused, after the reset slot A |
//! | a downgrade (counter 1 over 2) | 4 | refused `Rollback { found: 1, minimum: 2 }`, slot A |
//!
//! Then the template README's update block, as written ([`device::run_block`]).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::build;
use crate::device::{self, PSRAM, Separate};
use crate::metadata::Metadata;
use crate::qemu::{flipped, offset};

/// The download area: the link's length word here, its bytes from the next word.
pub const LINK: u64 = 0x2190_0000;

const TIMEOUT: Duration = Duration::from_secs(120);

/// `-device loader`s for `slot_a` at slot A and `update` (if any) in the download area.
pub fn load(qemu: &mut Command, slot_a: &Path, update: Option<&Path>) -> Result<(), String> {
    device::loader(qemu, slot_a, PSRAM)?;
    if let Some(update) = update {
        let len = std::fs::metadata(update)
            .map_err(|e| format!("{}: {e}", update.display()))?
            .len();
        qemu.args([
            "-device",
            &format!("loader,addr={LINK:#x},data={len},data-len=4"),
        ]);
        device::loader(qemu, update, LINK + 4)?;
    }
    Ok(())
}

/// Whether `log` holds each of `parts`, in this order (each after the end of the one before).
pub fn in_order(log: &str, parts: &[&str]) -> bool {
    let mut rest = log;
    parts.iter().all(|p| match rest.find(p) {
        Some(at) => {
            rest = &rest[at + p.len()..];
            true
        }
        None => false,
    })
}

struct Run<'a> {
    work: &'a Path,
    decoder: &'a Path,
    fw: PathBuf,
}

impl Run<'_> {
    /// Boots with `slot_a` and `update`; requires exit status `want` and `lines` in order.
    fn case(
        &self,
        name: &str,
        slot_a: &Path,
        update: Option<&Path>,
        want: i32,
        lines: &[&str],
    ) -> Result<String, String> {
        let mut qemu = device::arm(&self.fw);
        load(&mut qemu, slot_a, update)?;
        let run = device::boot(&mut qemu, TIMEOUT, false)?;
        let log_file = self.work.join(format!("{name}.log"));
        let log = device::decode(self.decoder, &self.fw, &run.stdout, &log_file)?;
        device::show(name, &log, run.status);
        let fail = |what: String| Err(format!("{name}: {what} (logs in {})", self.work.display()));
        if run.status != want {
            return fail(format!(
                "exit status {}, want {want} (2: panic, 3: fault, 124: hang)",
                run.status
            ));
        }
        if !in_order(&log, lines) {
            return fail(format!("want these lines in this order: {lines:?}"));
        }
        if device::count(&log, "engine not loaded") != 0
            || device::count(&log, "ERROR no slot") != 0
        {
            return fail("a boot did not load the engine".into());
        }
        Ok(log)
    }
}

/// The front fixtures, signed with the test key, security counter `counter`, into `out`
/// (`extra`: more `nrtucode pack` arguments).
pub fn pack(nrtucode: &Path, out: &Path, counter: &str, extra: &[&str]) -> Result<(), String> {
    build::status(
        Command::new(nrtucode)
            .args([
                "pack",
                "--fixtures",
                "front",
                "--key",
                "keys/test-ed25519.pem",
            ])
            .args(["--security-counter", counter, "-o"])
            .arg(out)
            .args(extra)
            .stdout(Stdio::null()),
    )
}

/// Every case, then the README's block.
pub fn run(meta: &Metadata, _: &()) -> Result<(), String> {
    device::require("qemu-system-arm", "qemu-system-arm")?;
    device::rustup_target(device::THUMB);
    let tools = device::host_tools(
        &["nrtucode-cli", "nrtucode-defmt"],
        &["nrtucode", "nrtucode-defmt"],
    )?;
    let (nrtucode, decoder) = (&tools[0], &tools[1]);
    let work = build::scratch(meta, "qemu-update")?;
    let (p1, p2) = (work.join("p1.part"), work.join("p2.part"));
    pack(nrtucode, &p1, "1", &[])?;
    pack(nrtucode, &p2, "2", &[])?;

    println!("== examples/bare-metal --no-default-features --features update");
    let elf = Separate::template(meta).build(
        &["--no-default-features", "--features", "update"],
        &[("NRTUCODE_PARTITION_KEY", OsStr::new(""))],
        "nrtucode-bare-metal",
    )?;
    let run = Run {
        work: &work,
        decoder,
        fw: work.join("fw.elf"),
    };
    crate::files::copy(&elf, &run.fw)?;

    let slot_a = "INFO  booted slot A: 2860384 bytes, class front, security counter";
    run.case(
        "none",
        &p1,
        None,
        0,
        &[
            "boot 0: power-on",
            slot_a,
            "no update offered: running slot A",
        ],
    )?;
    let log = run.case(
        "update",
        &p1,
        Some(&p2),
        0,
        &[
            "INFO  boot 0: power-on",
            &format!("{slot_a} 1, fell back false; state State {{ seq: 0, active: A, status: Confirmed"),
            "INFO  update offered: 2860384 bytes",
            "INFO  installing into slot B",
            "INFO  update installed into slot B: ",
            "status: Trial { boots: 0 }, previous: Some(A), min_security_counter: 1 }; reset",
            "INFO  boot 1: after a reset",
            "booted slot B: 2860384 bytes, class front, security counter 2, fell back false; state State { seq: 2, active: B, status: Trial { boots: 1 }",
            "INFO  engine ready: 4 of 4 images loaded",
            "INFO  confirmed slot B: minimum security counter 2; reset",
            "INFO  boot 2: after a reset",
            "booted slot B: 2860384 bytes, class front, security counter 2, fell back false; state State { seq: 3, active: B, status: Confirmed, previous: None, min_security_counter: 2 }",
            "INFO  engine ready: 4 of 4 images loaded",
            "INFO  running the update from slot B, confirmed",
        ],
    )?;
    if device::count(&log, "INFO  boot ") != 3 {
        return Err("update: want exactly three boots".into());
    }

    // A refused update: after the reset, slot A as before, never B.
    let kept = |name: &str, slot_a_part: &Path, update: &Path, refusal: &str| {
        let log = run.case(
            name,
            slot_a_part,
            Some(update),
            4,
            &[
                "INFO  boot 0: power-on",
                "INFO  installing into slot B",
                &format!("ERROR update refused: Refused({refusal}"),
                "INFO  boot 1: after a reset",
                "INFO  booted slot A: ",
                "state State { seq: 0, active: A, status: Confirmed",
                "WARN  the update was not installed: running slot A",
            ],
        )?;
        if log.contains("booted slot B") || device::count(&log, "INFO  boot ") != 2 {
            return Err(format!("{name}: want two boots, both of slot A"));
        }
        Ok(())
    };
    let bytes = crate::files::read(&p2)?;
    let iram = "image CAYMAN_NX_ACT Perf IRAM";
    let (at, len) = offset(&log, iram).ok_or(format!("update: no partition offset of {iram}"))?;
    let changed = work.join("changed.part");
    crate::elf::write_whole(&changed, &flipped(&bytes, &[at + len / 2])?)?;
    kept(
        "changed",
        &p1,
        &changed,
        "Load(DigestMismatch { blob: BlobId(13) })",
    )?;
    let half = work.join("half.part");
    crate::elf::write_whole(&half, &bytes[..bytes.len() / 2])?;
    kept("half", &p1, &half, "")?;
    kept(
        "downgrade",
        &p2,
        &p1,
        "Trust(Rollback { found: 1, minimum: 2 })",
    )?;

    println!("== the template README's update commands, as written");
    readme_commands(meta, &work)?;
    let _ = std::fs::remove_dir_all(&work);
    println!(
        "qemu-update: the update installs, boots on trial, is confirmed and boots again across resets; a changed byte, a download cut off halfway and a downgrade are refused and slot A keeps booting"
    );
    Ok(())
}

/// The README's update block, as written. It names `target/release/…` (a reader's shell in the
/// repository): when the workspace's target directory is elsewhere, the tools are built there.
fn readme_commands(meta: &Metadata, work: &Path) -> Result<(), String> {
    let readme = meta.root.join("examples/bare-metal/README.md");
    let text = std::fs::read_to_string(&readme)
        .map_err(|e| format!("cannot read {}: {e}", readme.display()))?;
    let block = device::readme_block(&text, "<!-- update-walkthrough:")
        .map_err(|e| format!("{}: {e}", readme.display()))?;
    if meta.target_dir != meta.root.join("target") {
        build::status(
            build::cargo("build --quiet --release --locked -p nrtucode-cli -p nrtucode-defmt")
                .env_remove("CARGO_TARGET_DIR"),
        )?;
    }
    let (out, err) = (work.join("walk.log"), work.join("walk.err"));
    let (old, new) = (work.join("old.part"), work.join("new.part"));
    let env = [("OLD", old.as_os_str()), ("NEW", new.as_os_str())];
    device::run_block(&block, &env, &out, &err, "the README's update commands")?;
    let log =
        std::fs::read_to_string(&out).map_err(|e| format!("cannot read {}: {e}", out.display()))?;
    device::show("walkthrough", &log, 0);
    if !in_order(
        &log,
        &[
            "confirmed slot B",
            "INFO  running the update from slot B, confirmed",
        ],
    ) {
        return Err("walkthrough: the update was not confirmed and run".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_must_come_in_order() {
        let log = "a 1\nb 2\nc 3\n";
        assert!(in_order(log, &["a", "c"]));
        assert!(!in_order(log, &["c", "a"]));
        assert!(!in_order(log, &["a", "d"]));
        assert!(in_order(log, &[]));
        assert!(in_order(log, &["a", "1", "b"]));
        assert!(!in_order(log, &["b 2", "b"]));
    }
}
