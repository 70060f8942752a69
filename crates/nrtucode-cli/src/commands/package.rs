//! `nrtucode package --base RUNNING.part --new NEW.part --public-key PUB.pem -o UPDATE.pkg`:
//! the update package a device running `RUNNING.part` installs to run `NEW.part`
//! (`docs/update.md`, "Update packages, byte for byte"): a delta that carries the new
//! partition's signed prefix and the stored bytes of the blobs the running one does not hold
//! (by the digest of their stored bytes), or the whole new partition when that is not smaller.
//!
//! Both partitions are opened as every command opens one (verified with the key their header
//! names, the policy, every blob checked: `--insecure-skip-signature` for unsigned test packs);
//! the package is read back through the device's reader and must give the new partition byte
//! for byte before it is written (atomically). One line says what it holds.

use std::path::Path;
use std::process::ExitCode;

use nrtucode_facts::hex::lower_hex;
use nrtucode_pack::{read_package, update_package};

use crate::shared::error::Error;
use crate::shared::exit::Exit;
use crate::shared::output::{fail, out_line};
use crate::shared::output_file::{Mode, write_output};
use crate::shared::reader::read_partition;
use crate::shared::trust::TrustArgs;

/// Writes the package from `base` to `new` into `out`.
pub(crate) fn run(base: &Path, new: &Path, trust: &TrustArgs, out: &Path) -> ExitCode {
    match write(base, new, trust, out) {
        Ok(line) => {
            out_line!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

fn write(base: &Path, new: &Path, trust: &TrustArgs, out: &Path) -> Result<String, Error> {
    let open = |path: &Path| {
        let loaded = read_partition(path)?;
        trust.open(path, loaded.bytes.into_vec())
    };
    let (running, next) = (open(base)?, open(new)?);
    let (running, next) = (running.partition().bytes(), next.partition().bytes());
    let package = update_package(running, next)
        .map_err(|e| Error::new(Exit::DataErr, format!("{}: {e}", new.display())))?;
    let summary = read_package(&package)
        .map_err(|e| Error::new(Exit::DataErr, format!("the package written: {e}")))?;
    write_output(out, &package, Mode::Replace)?;
    let share = 100.0 * package.len() as f64 / next.len() as f64;
    Ok(format!(
        "{}: {} package of {} bytes ({share:.2}% of the new partition's {}), for the base \
         with prefix digest {}: {} blobs carried ({} bytes), {} copied from the running slot \
         ({} bytes)",
        out.display(),
        summary.header.kind.name(),
        package.len(),
        next.len(),
        &lower_hex(&summary.header.base)[..16],
        summary.carried.0,
        summary.carried.1,
        summary.copied.0,
        summary.copied.1,
    ))
}
