//! `cargo xtask qemu --case arm` and `--case riscv`: bare metal under QEMU.
//!
//! Arm: the bare-metal template (examples/bare-metal, feature `qemu`) booted on mps2-an386
//! (Cortex-M4), with run-time and with compile-time (`const-resolve`) resolution. Its defmt log
//! comes out through semihosting and is decoded with the workspace's nrtucode-defmt; its exit
//! status is the program's (0 only when every image loaded). For each build:
//! - intact flash: exit 0, the blobs line naming the fixtures, one "verified" line per image,
//!   "engine ready";
//! - one byte flipped in the middle of the first image the intact run loaded (found through the
//!   ELF's section table, [`crate::elf::edit_flash`]): exit non-zero, "verification failed"
//!   naming that image, the others verified;
//! - erased flash (`.nrtucode_blobs` all 0xFF): exit non-zero, every image failed, none loaded.
//!
//! RISC-V: the minimal loader (examples/riscv-virt) on `virt`: intact, exit 0 with one
//! "verified" line per image and the summary; one byte flipped, exit non-zero naming the image.

use std::path::Path;
use std::time::Duration;

use crate::device::{self, Separate};
use crate::elf::{FlashEdit, edit_flash};
use crate::metadata::Metadata;

const TIMEOUT: Duration = Duration::from_secs(120);

/// The Arm half: the template on mps2-an386, intact, tampered and erased, both resolutions.
pub fn arm(meta: &Metadata) -> Result<(), String> {
    device::require("qemu-system-arm", "qemu-system-arm")?;
    device::rustup_target(device::THUMB);
    let decoder = device::host_tool("nrtucode-defmt", "nrtucode-defmt")?;
    let work = crate::build::scratch(meta, "qemu")?;
    let template = Separate::template(meta);
    for features in ["qemu", "qemu,const-resolve"] {
        println!("== examples/bare-metal --features {features}");
        let elf = template.build(&["--features", features], &[], "nrtucode-bare-metal")?;
        let intact = work.join("intact.elf");
        crate::files::copy(&elf, &intact)?;
        arm_states(&decoder, &work, &intact)?;
    }
    let _ = std::fs::remove_dir_all(&work);
    println!(
        "qemu: intact flash loads, a flipped byte and erased flash are refused, both resolutions"
    );
    Ok(())
}

/// Boots `elf` on mps2-an386; the decoded log (also in `WORK/NAME.log`) and the exit status.
fn boot_arm(decoder: &Path, work: &Path, elf: &Path, name: &str) -> Result<(String, i32), String> {
    let run = device::boot(&mut device::arm(elf), TIMEOUT, false)?;
    let log = device::decode(decoder, elf, &run.stdout, &work.join(format!("{name}.log")))
        .map_err(|e| format!("{name}: {e}"))?;
    device::show(name, &log, run.status);
    Ok((log, run.status))
}

fn arm_states(decoder: &Path, work: &Path, intact: &Path) -> Result<(), String> {
    let fail = |what: String| Err(format!("{what} (logs in {})", work.display()));
    let (log, status) = boot_arm(decoder, work, intact, "intact")?;
    let images = device::count(&log, " verified: ");
    if status != 0 {
        return fail(format!("intact flash: exit status {status}, want 0"));
    }
    if !device::has_line(&log, "INFO  blobs: the built-in fixtures, not the vendor's") {
        return fail("intact flash: no line naming the fixtures as the blob source".into());
    }
    if images < 1 {
        return fail("intact flash: no image verified".into());
    }
    if device::count(&log, "verification failed") != 0 {
        return fail("intact flash: a verification failed".into());
    }
    if !log.contains(&format!("engine ready: {images} of {images} images loaded")) {
        return fail("intact flash: no 'engine ready' line".into());
    }

    let tampered = work.join("tampered.elf");
    let image = edit_flash(&FlashEdit::FlipVerified {
        input: intact.to_path_buf(),
        output: tampered.clone(),
        log: work.join("intact.log"),
    })?
    .ok_or("flip-verified named no image")?;
    let (log, status) = boot_arm(decoder, work, &tampered, "tampered")?;
    if status == 0 {
        return fail("tampered flash: exit status 0".into());
    }
    if !log.contains(&format!(
        "image {image}: verification failed: SHA-256 mismatch"
    )) {
        return fail(format!(
            "tampered flash: no 'verification failed' line naming {image}"
        ));
    }
    if device::count(&log, "verification failed") != 1 {
        return fail("tampered flash: want exactly one failed image".into());
    }
    if device::count(&log, " verified: ") != images - 1 {
        return fail("tampered flash: the other images should still verify".into());
    }

    let erased = work.join("erased.elf");
    edit_flash(&FlashEdit::Erase {
        input: intact.to_path_buf(),
        output: erased.clone(),
    })?;
    let (log, status) = boot_arm(decoder, work, &erased, "erased")?;
    if status == 0 {
        return fail("erased flash: exit status 0".into());
    }
    if device::count(&log, "verification failed") != images {
        return fail(format!("erased flash: want all {images} images failed"));
    }
    if device::count(&log, " verified: ") != 0 {
        return fail("erased flash: an image verified".into());
    }
    if !log.contains(&format!(
        "engine not loaded: 0 of {images} images loaded, {images} failed"
    )) {
        return fail("erased flash: no 'engine not loaded' line".into());
    }
    Ok(())
}

/// The RISC-V half: the loader on `virt`, intact and with one byte flipped.
pub fn riscv(meta: &Metadata) -> Result<(), String> {
    device::require("qemu-system-riscv32", "qemu-system-misc")?;
    device::rustup_target(device::RISCV);
    let elf = Separate::riscv(meta).build(&[], &[], "nrtucode-riscv-virt")?;
    let work = crate::build::scratch(meta, "qemu-riscv")?;
    let fail = |what: String| Err(format!("{what} (logs in {})", work.display()));
    let boot = |elf: &Path, name: &str| -> Result<(String, i32), String> {
        let run = device::boot(&mut device::riscv(elf), TIMEOUT, false)?;
        crate::files::write(&work.join(format!("{name}.log")), &run.stdout)?;
        let log = String::from_utf8_lossy(&run.stdout).into_owned();
        device::show(name, &log, run.status);
        Ok((log, run.status))
    };
    let (log, status) = boot(&elf, "intact")?;
    let images = device::count(&log, " verified: ");
    if status != 0 || images < 1 {
        return fail(format!(
            "intact: exit status {status}, {images} images verified"
        ));
    }
    if !device::has_line(&log, &format!("{images} of {images} images loaded")) {
        return fail("intact: no summary line".into());
    }
    let tampered = work.join("tampered.elf");
    let image = edit_flash(&FlashEdit::FlipVerified {
        input: elf,
        output: tampered.clone(),
        log: work.join("intact.log"),
    })?
    .ok_or("flip-verified named no image")?;
    let (log, status) = boot(&tampered, "tampered")?;
    if status == 0 {
        return fail("tampered: exit status 0".into());
    }
    let named = format!("{image}: verification failed: SHA-256 mismatch");
    if !log.lines().any(|l| l.starts_with(&named)) {
        return fail(format!("tampered: {image} not named"));
    }
    let _ = std::fs::remove_dir_all(&work);
    println!("qemu: riscv32imac on QEMU virt loads intact images and refuses a flipped byte");
    Ok(())
}
