//! `nrtucode sbom PART|LIB|DIR [--format cyclonedx|spdx] [-o FILE] [--timestamp]`: a bill of
//! materials of what a partition, a vendor library or a blob directory carries
//! (`inventory`): CycloneDX 1.6 JSON ([`cyclonedx`], the default) or SPDX 2.3 JSON
//! ([`spdx`]), from the same [`FirmwareBlob`](blobs::FirmwareBlob)s ([`blobs`]): one per getter with bytes (not a cursor or
//! NULL), by vendor symbol, with where the tables use it.
//!
//! Reproducible: the same input gives the same bytes. Blobs are sorted by name, the input is
//! named by its file name only, and there is no serial number and no time unless `--timestamp`
//! asks (then `SOURCE_DATE_EPOCH` if set, else the current time, in UTC). SPDX requires a
//! creation time: without `--timestamp` it is the Unix epoch, `1970-01-01T00:00:00Z`.

use std::path::Path;
use std::process::ExitCode;

use crate::shared::error::Error;
use crate::shared::exit::Exit;
use crate::shared::inventory;
use crate::shared::output::{fail, json_document, out_fmt, out_line};
use crate::shared::output_file::{Mode, refuse_input, write_output};
use crate::shared::trust::TrustArgs;

pub(crate) mod blobs;
pub(crate) mod cyclonedx;
pub(crate) mod spdx;

use blobs::firmware;

/// The document `sbom` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// CycloneDX 1.6 JSON.
    Cyclonedx,
    /// SPDX 2.3 JSON.
    Spdx,
}

/// `seconds` since the Unix epoch as RFC 3339 UTC (`2026-12-03T07:45:00Z`).
pub(crate) fn rfc3339(seconds: u64) -> String {
    let days = seconds / 86_400;
    let rem = seconds % 86_400;
    // Howard Hinnant's civil_from_days, for days since 1970-01-01 (never negative here).
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The time `--timestamp` records: `SOURCE_DATE_EPOCH` (seconds) if set, else now.
fn timestamp() -> Result<String, Error> {
    let seconds = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(text) => text.trim().parse::<u64>().map_err(|_| {
            Error::new(
                Exit::Usage,
                format!("SOURCE_DATE_EPOCH={text:?}: not a number of seconds"),
            )
        })?,
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    Ok(rfc3339(seconds))
}

fn run_inner(
    input: &Path,
    format: Format,
    trust: &TrustArgs,
    out: Option<&Path>,
    with_timestamp: bool,
) -> Result<Option<String>, Error> {
    // `-o -` is standard output, as for `resolve`.
    let out = out.filter(|p| *p != Path::new("-"));
    if let Some(out) = out {
        // Early, before the input is read; `write_output` checks again.
        refuse_input(out, "-o", false)?;
    }
    let stamp = with_timestamp.then(timestamp).transpose()?;
    let inv = inventory::read(input, trust)?;
    let blobs = firmware(&inv);
    let (text, format_name) = match format {
        Format::Cyclonedx => (
            json_document(&cyclonedx::bom(&inv, &blobs, stamp)),
            "CycloneDX 1.6",
        ),
        Format::Spdx => (
            json_document(&spdx::document(&inv, &blobs, stamp)),
            "SPDX 2.3",
        ),
    };
    let Some(out) = out else {
        out_fmt!("{text}");
        return Ok(None);
    };
    write_output(out, text.as_bytes(), Mode::Replace)?;
    Ok(Some(format!(
        "{}: {format_name}, {} {} ({} tables), {} firmware blobs",
        out.display(),
        inv.origin.kind.name(),
        inv.origin.name,
        inv.origin.class,
        blobs.len()
    )))
}

/// Writes the BOM (in `format`) of the input at `input` to `out` (atomically), or to stdout.
pub(crate) fn run(
    input: &Path,
    format: Format,
    trust: &TrustArgs,
    out: Option<&Path>,
    with_timestamp: bool,
) -> ExitCode {
    match run_inner(input, format, trust, out, with_timestamp) {
        Ok(Some(summary)) => {
            out_line!("{summary}");
            ExitCode::SUCCESS
        }
        Ok(None) => ExitCode::SUCCESS,
        Err(e) => fail(e),
    }
}

#[cfg(test)]
mod tests {
    use super::rfc3339;

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_796_283_900), "2026-12-03T07:45:00Z");
        assert_eq!(rfc3339(4_102_444_799), "2099-12-31T23:59:59Z");
    }
}
