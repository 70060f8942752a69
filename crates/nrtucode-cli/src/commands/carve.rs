//! `nrtucode carve`: carve a library into a blob directory, summarise the carve and compare it
//! with the facts.

use std::path::Path;
use std::process::ExitCode;

use nrtucode_carve::{
    Carve, FileError, Found, NamedBy, PublishError, carve_into_dir_cancellable, compare,
    known_build,
};

use crate::shared::carve_diagnosis::not_the_vendors;
use crate::shared::error::Error;
use crate::shared::exit::{self, Exit};
use crate::shared::interrupt::{clean_up_on_signals, interruptible};
use crate::shared::output::{err_line, fail, out_fmt, out_line};
use crate::shared::output_file::{note_input_path, refuse_input};
use crate::shared::text_table;

fn found(f: &Found) -> String {
    match f {
        Found::Symbol => "by symbol".into(),
        Found::Resolver(r) => format!("decoded from {r}"),
    }
}

/// The human summary of a carve.
pub(crate) fn carve_summary(carve: &Carve, out: &Path) -> String {
    let h = &carve.header;
    let real = carve.getters.iter().filter(|g| g.size > 0).count();
    let positional = carve
        .getters
        .iter()
        .filter(|g| g.named_by == NamedBy::Position)
        .count();
    let rows = vec![
        vec![
            "source".into(),
            format!("{} ({} bytes)", h.source, h.source_size),
        ],
        vec!["sha256".into(), h.source_sha256.clone()],
        vec!["build_id".into(), h.build_id.clone()],
        vec![
            "known build".into(),
            known_build(h)
                .unwrap_or("no (published hashes not checked)")
                .into(),
        ],
        vec![
            "image_list".into(),
            format!(
                "VA {:#x}, {}",
                carve.tables.image_list,
                found(&carve.tables.image_list_found)
            ),
        ],
        vec![
            "hwdecode_table_list".into(),
            format!(
                "VA {:#x}, {}",
                carve.tables.hwdecode_list,
                found(&carve.tables.hwdecode_list_found)
            ),
        ],
        vec![
            "getters".into(),
            format!(
                "{} ({} real, {} cursors; {} named by position), {} NULL slots",
                carve.getters.len(),
                real,
                carve.getters.len() - real,
                positional,
                carve.null_getters.len()
            ),
        ],
        vec!["distinct blobs".into(), carve.distinct_blobs().to_string()],
        vec!["written".into(), out.display().to_string()],
    ];
    text_table::render(&["carve", "result"], &rows)
}

/// For a carve that failed on what the library holds, the message when the library is not the
/// vendor's ([`not_the_vendors`]): the diagnosis, a hint, and the carve's error with `verbose`.
fn not_the_vendors_message(e: &FileError, verbose: bool) -> Option<String> {
    let (path, what, tried) = not_the_vendors(e)?;
    let details = if verbose {
        format!("\nnrtucode: note: what carve tried: {tried}")
    } else {
        " (-v: what carve tried)".to_owned()
    };
    Some(format!(
        "nrtucode: error: {}: not the vendor's library: {what}\n\
         nrtucode: hint: carve the vendor's libnrtucode_internal.so or its front library \
         libnrtucode.so{details}\n",
        path.display()
    ))
}

/// The library's message for `e`, naming the `--out` flag where the destination it names is
/// of the wrong kind (the library speaks of paths only).
fn with_flags(e: &FileError) -> String {
    match e {
        FileError::Publish(PublishError::NotADirectory { path }) => format!(
            "{}: exists and is not a directory; --out names the directory to carve into",
            path.display()
        ),
        FileError::Publish(PublishError::SymbolicLink { path }) => format!(
            "{}: is a symbolic link; --out does not follow symbolic links, name the directory itself",
            path.display()
        ),
        _ => e.to_string(),
    }
}

/// Carves `lib` into `out`; `list` prints one line per getter, `strict` fails on any
/// disagreement with the facts, `verbose` prints the carve's details behind a diagnosis.
pub(crate) fn run(lib: &Path, out: &Path, list: bool, strict: bool, verbose: bool) -> ExitCode {
    if let Err(e) = clean_up_on_signals() {
        return fail(Error::new(
            Exit::IoErr,
            format_args!("cannot handle interrupts (SIGINT, SIGTERM, SIGHUP, Ctrl-C): {e}"),
        ));
    }
    // The destination may not be the library, nor a directory holding it (a carve replaces
    // the directory's content).
    note_input_path(lib);
    if let Err(e) = refuse_input(out, "--out", true) {
        return fail(e);
    }
    let carve = match interruptible(|cancel| carve_into_dir_cancellable(lib, out, cancel)) {
        Ok((carve, leftovers)) => {
            for note in leftovers {
                err_line!("nrtucode: note: {note}");
            }
            carve
        }
        Err(e) => {
            let exit = match &e {
                FileError::Io { source, .. } => exit::reading(source),
                FileError::NotARegularFile { .. } => Exit::NoInput,
                FileError::Carve { .. } | FileError::TooLarge { .. } => Exit::DataErr,
                FileError::Publish(PublishError::Io { source, .. }) => exit::creating(source),
                FileError::Publish(_) => Exit::CantCreate,
                // A kind of failure added to the library later: its input, most likely.
                _ => Exit::DataErr,
            };
            if let Some(message) = not_the_vendors_message(&e, verbose) {
                crate::shared::output::write_err(&message);
                return exit.into();
            }
            return fail(Error::new(exit, with_flags(&e)).caused_by(e));
        }
    };
    out_fmt!("{}", carve_summary(&carve, out));
    if list {
        let rows: Vec<Vec<String>> = carve
            .getters
            .iter()
            .map(|g| {
                vec![
                    g.name.symbol.clone(),
                    format!("{:#x}", g.accessor_va),
                    format!("{:#x}", g.blob_va),
                    g.size.to_string(),
                    g.sha256[..16].to_string(),
                ]
            })
            .collect();
        out_fmt!(
            "\n{}",
            text_table::render(&["symbol", "getter_va", "blob_va", "size", "sha256"], &rows)
        );
    }
    for note in &carve.notes {
        err_line!("nrtucode: note: {note}");
    }
    let findings = compare(&carve.header, &carve.getters);
    let mismatches = findings.iter().filter(|f| f.is_mismatch()).count();
    for f in &findings {
        if f.is_mismatch() {
            err_line!("nrtucode: warning: {}: {f}", lib.display());
        } else {
            out_line!("published hash: {f}");
        }
    }
    if mismatches == 0 {
        out_line!("facts: every carved size matches the facts (getters.tsv)");
        ExitCode::SUCCESS
    } else if strict {
        let getters = if mismatches == 1 {
            "getter disagrees"
        } else {
            "getters disagree"
        };
        fail(Error::new(
            Exit::DataErr,
            format_args!("{mismatches} {getters} with the facts"),
        ))
    } else {
        ExitCode::SUCCESS
    }
}
