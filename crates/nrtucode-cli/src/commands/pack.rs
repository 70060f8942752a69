//! `nrtucode pack`: write a signed blob partition (docs/partition.md) from a library, a blob
//! directory or the built-in fixtures, atomically, through `output_file` (the output may not
//! be the key, the library or a file of the blob directory).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use nrtucode::partition::{Partition, TableClass};
use nrtucode_pack::{Blobs, Compression, PackError, PackOptions, pack_with};

use crate::commands::exit::{self, Exit};
use crate::commands::key::read_signing_key;
use crate::commands::output::{fail, out_line};
use crate::commands::output_file::{Mode, note_input_path, refuse_input, write_output};

/// What to pack.
#[derive(Clone, Debug)]
pub(crate) enum Input {
    /// Carve this library.
    Library(PathBuf),
    /// This blob directory.
    BlobDir(PathBuf),
    /// The built-in fixture set of a class.
    Fixtures(TableClass),
}

fn pack_error(e: PackError) -> (Exit, String) {
    let exit = match &e {
        PackError::Io { source, .. } => exit::reading(source),
        PackError::Carve(nrtucode_carve::FileError::Io { source, .. }) => exit::reading(source),
        _ => Exit::DataErr,
    };
    (exit, e.to_string())
}

fn run_inner(
    input: &Input,
    out: &Path,
    key: Option<&Path>,
    security_counter: u32,
    compression: Compression,
) -> Result<String, (Exit, String)> {
    let key = key.map(read_signing_key).transpose()?;
    if let Input::Library(lib) = input {
        note_input_path(lib);
    }
    // Early, before the blobs are read and packed; `write_output` checks again with them.
    refuse_input(out, "-o", false)?;
    let blobs = match input {
        Input::Library(lib) => Blobs::from_library(lib),
        Input::BlobDir(dir) => Blobs::from_dir(dir),
        Input::Fixtures(class) => Ok(Blobs::fixtures(*class)),
    }
    .map_err(pack_error)?;
    for input in blobs.inputs() {
        note_input_path(input);
    }
    let (bytes, summary) = pack_with(
        &blobs,
        &PackOptions {
            security_counter,
            key: key.as_ref(),
        },
        compression,
    )
    .map_err(pack_error)?;
    let parsed = Partition::parse(&bytes).map_err(|e| {
        (
            Exit::DataErr,
            format!("the packed partition does not parse: {e}"),
        )
    })?;
    write_output(out, &bytes, Mode::Replace)?;
    let signed = match &key {
        Some(k) => format!(
            "signed, key ID {}",
            nrtucode_facts::hex::lower_hex(&k.public_key().key_id())
        ),
        None => "UNSIGNED".to_owned(),
    };
    let line = format!(
        "{}: {} bytes, {} tables, {} descriptors, {} blobs, security counter {security_counter}, {signed}",
        out.display(),
        bytes.len(),
        parsed.class().name(),
        parsed.descriptor_count(),
        parsed.blob_count()
    );
    Ok(match compression {
        Compression::Stored => line,
        Compression::Deflate => format!("{line}\n{summary}"),
    })
}

/// Packs `input` into `out`, signed with the key at `key` (`None`: unsigned), its blobs kept
/// as `compression` says (with deflate, a second line gives the ratio).
pub(crate) fn run(
    input: &Input,
    out: &Path,
    key: Option<&Path>,
    security_counter: u32,
    compression: Compression,
) -> ExitCode {
    match run_inner(input, out, key, security_counter, compression) {
        Ok(summary) => {
            out_line!("{summary}");
            ExitCode::SUCCESS
        }
        Err((exit, message)) => fail(exit, message),
    }
}
