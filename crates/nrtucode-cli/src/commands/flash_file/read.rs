//! Reading a partition for `inspect` in any flashable form: a partition file as it is, or an
//! Intel HEX, ELF or UF2 file put back together into the partition's bytes.

use std::io::Read as _;
use std::path::Path;

use nrtucode::partition::{PartitionFile, ReadError};

use super::{Format, Placement, decode, detect};
use crate::commands::exit::{self, Exit};
use crate::commands::output_file::note_input_path;

/// The largest flashable file read: 3 GiB (Intel HEX takes 2.75 characters a byte in
/// 16-byte records, and a partition is at most 1 GiB).
const MAX_FLASH_FILE_BYTES: u64 = 3 << 30;

/// A partition as read: its bytes, and when it came in a flashable form, the form and where
/// the form places it.
pub(crate) struct Loaded {
    /// The partition's bytes (a UF2 file's `0xFF` fill after them included).
    pub bytes: &'static [u8],
    /// The form and the placement, for Intel HEX, ELF and UF2.
    pub flashed: Option<(Format, Placement)>,
}

/// Reads the partition at `path`: a partition file (read as `PartitionFile::read` does), or a
/// file in one of the flashable forms, detected from its first bytes.
pub(crate) fn read(path: &Path) -> Result<Loaded, (Exit, String)> {
    let shown = path.display();
    let bytes = match PartitionFile::read(path) {
        Ok(file) => file.into_bytes(),
        Err(ReadError::Header { header, .. }) if detect(&header) != Format::Bin => {
            return read_flashable(path);
        }
        Err(ReadError::Header { header, .. }) => header,
        Err(ReadError::Io(e)) => return Err((exit::reading(&e), format!("{shown}: {e}"))),
        Err(e @ ReadError::NotRegular { .. }) => {
            return Err((Exit::NoInput, format!("{shown}: {e}")));
        }
        Err(e) => return Err((Exit::DataErr, format!("{shown}: {e}"))),
    };
    note_input_path(path);
    Ok(Loaded {
        bytes: Box::leak(bytes),
        flashed: None,
    })
}

/// Reads a whole Intel HEX, ELF or UF2 file (a regular file: `PartitionFile::read` checked
/// it) and puts the partition back together.
fn read_flashable(path: &Path) -> Result<Loaded, (Exit, String)> {
    let shown = path.display();
    let io = |e: std::io::Error| (exit::reading(&e), format!("{shown}: {e}"));
    let file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    if len > MAX_FLASH_FILE_BYTES {
        return Err((
            Exit::DataErr,
            format!(
                "{shown}: {len} bytes, more than a flashable file may be ({MAX_FLASH_FILE_BYTES})"
            ),
        ));
    }
    let mut content = Vec::new();
    file.take(MAX_FLASH_FILE_BYTES)
        .read_to_end(&mut content)
        .map_err(io)?;
    note_input_path(path);
    let decoded = decode(&content).map_err(|e| (Exit::DataErr, format!("{shown}: {e}")))?;
    Ok(Loaded {
        bytes: Box::leak(decoded.bytes.into_boxed_slice()),
        flashed: decoded.placement.map(|p| (decoded.format, p)),
    })
}
