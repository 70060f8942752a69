//! `nrtucode inspect UPDATE.pkg [--base RUNNING.part --public-key PUB.pem] [--json]`: what an
//! update package holds (`docs/update.md`, "Update packages, byte for byte"), read to its end
//! by the device's reader: whole or delta, the base it was made for (the digest of the running
//! partition's signed prefix), the new partition's length, the blobs it carries and the blobs
//! the device copies from its running slot. With `--base`, the package must be for that
//! partition, and the partition it gives is inspected as a partition file is (structure,
//! signature, policy, digests: `inspect`), its verdict the exit code. A package has no
//! signature of its own: only that inspection (or the device's check) vouches for anything.
//!
//! JSON (`--json`), one object, keys in this order:
//!
//! ```text
//! { "format": "nrtucode-inspect-package/1", "file": "...", "kind": "delta" | "whole",
//!   "package_len": 8472, "base": "<64 hex>", "target": "<64 hex>", "total_len": 2860384,
//!   "prefix_len": 7856,
//!   "carried": { "blobs": 3, "bytes": 66736 }, "copied": { "blobs": 62, "bytes": 2785792 },
//!   "base_file": null | "...", "partition": null | INSPECT }   // INSPECT: nrtucode-inspect/3's object
//! ```

use std::path::Path;
use std::process::ExitCode;

use nrtucode_facts::hex::lower_hex;
use nrtucode_pack::{PackageSummary, apply_package, read_package};
use serde::Serialize;

use crate::commands::inspect::{Doc, doc_text, partition_doc, verdict};
use crate::shared::error::Error;
use crate::shared::exit::Exit;
use crate::shared::output::{Mode, out_fmt};
use crate::shared::reader::{Loaded, read_partition};
use crate::shared::trust::TrustArgs;

/// Blobs and their stored bytes.
#[derive(Serialize)]
struct Count {
    blobs: u16,
    bytes: u64,
}

/// The JSON document.
#[derive(Serialize)]
struct PackageDoc<'a> {
    format: &'static str,
    file: String,
    kind: &'static str,
    package_len: usize,
    base: String,
    target: String,
    total_len: u32,
    prefix_len: u32,
    carried: Count,
    copied: Count,
    base_file: Option<String>,
    partition: Option<&'a Doc>,
}

/// Inspects the package `bytes` read from `path`, and with `base` the partition it gives.
pub(crate) fn run(
    path: &Path,
    bytes: &[u8],
    base: Option<&Path>,
    trust: &TrustArgs,
    memory_map: Option<&Path>,
    json: bool,
) -> ExitCode {
    let mode = Mode::json(json);
    let summary = match read_package(bytes) {
        Ok(summary) => summary,
        Err(e) => return mode.fail(Error::bad_data(path, e)),
    };
    let partition = match base.map(|base| rebuilt(path, bytes, base, trust, memory_map)) {
        Some(Ok(doc)) => Some(doc),
        Some(Err(e)) => return mode.fail(e),
        None => None,
    };
    let doc = document(path, bytes.len(), &summary, base, partition.as_ref());
    if json {
        out_fmt!("{}", crate::shared::output::json_document(&doc));
    } else {
        out_fmt!("{}", text(&doc));
        if let Some(partition) = &partition {
            out_fmt!("\n{}", doc_text(partition));
        }
    }
    match &partition {
        Some(partition) => verdict(path, partition),
        None => ExitCode::SUCCESS,
    }
}

/// The partition the package gives over the partition at `base`, inspected.
fn rebuilt(
    path: &Path,
    bytes: &[u8],
    base: &Path,
    trust: &TrustArgs,
    memory_map: Option<&Path>,
) -> Result<Doc, Error> {
    let running = read_partition(base)?;
    let new = apply_package(&running.bytes, bytes).map_err(|e| {
        Error::new(
            Exit::DataErr,
            format!("{}: over {}: {e}", path.display(), base.display()),
        )
    })?;
    let loaded = Loaded {
        bytes: new.into_boxed_slice(),
        flashed: None,
    };
    partition_doc(path, Ok(loaded), trust, memory_map)
}

fn document<'a>(
    path: &Path,
    package_len: usize,
    summary: &PackageSummary,
    base: Option<&Path>,
    partition: Option<&'a Doc>,
) -> PackageDoc<'a> {
    let h = &summary.header;
    PackageDoc {
        format: "nrtucode-inspect-package/1",
        file: path.display().to_string(),
        kind: h.kind.name(),
        package_len,
        base: lower_hex(&h.base),
        target: lower_hex(&h.target),
        total_len: h.total_len,
        prefix_len: h.prefix_len,
        carried: Count {
            blobs: summary.carried.0,
            bytes: summary.carried.1,
        },
        copied: Count {
            blobs: summary.copied.0,
            bytes: summary.copied.1,
        },
        base_file: base.map(|b| b.display().to_string()),
        partition,
    }
}

fn text(doc: &PackageDoc<'_>) -> String {
    let share = 100.0 * doc.package_len as f64 / f64::from(doc.total_len.max(1));
    let mut out = format!(
        "file: {}\nupdate package: {}, {} bytes ({share:.2}% of the partition it gives)\n\
         base: the partition whose signed prefix has SHA-256 {}\n\
         new partition: {} bytes, signed prefix {} bytes, whose SHA-256 is {}\n\
         blobs carried: {} ({} bytes)\nblobs copied from the running slot: {} ({} bytes)\n",
        doc.file,
        doc.kind,
        doc.package_len,
        doc.base,
        doc.total_len,
        doc.prefix_len,
        doc.target,
        doc.carried.blobs,
        doc.carried.bytes,
        doc.copied.blobs,
        doc.copied.bytes,
    );
    match &doc.base_file {
        Some(base) => out.push_str(&format!(
            "over {base}: the partition it gives follows, inspected as a partition file\n"
        )),
        None => out.push_str(
            "not vouched for: a package has no signature of its own; give --base RUNNING.part \
             and --public-key PUB.pem to check the partition it gives\n",
        ),
    }
    out
}
