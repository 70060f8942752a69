//! The one reader of what a path holds, for every command: a partition in any flashable form
//! ([`read_partition`]: a partition file, or Intel HEX, ELF or UF2 put back together), the
//! public key it is verified with ([`read_public_key`]), and which of the tool's inputs a path
//! is ([`what_is`]: a blob directory, a library, a partition in any form).
//!
//! Every byte comes through the bounded reader (`input`: opened once, checked on its
//! descriptor, read up to a bound). An input of the wrong kind is named for what it is, with
//! the command that takes it: a library or a blob directory where a partition is read ("pack
//! it"), nrtucode's own C library ("it holds no blobs"), a flash image of an update region
//! given without its layout (a second partition after the first: "give --layout").

use std::io::Read as _;
use std::path::Path;

use nrtucode::partition::PublicKey;
use nrtucode_facts::input_file::{Links, kind_of, open_nonblocking};

use crate::shared::carve_diagnosis::Holds;
use crate::shared::error::Error;
use crate::shared::exit::{self, Exit};
use crate::shared::flash_file::{Format, Placement, decode, detect};
use crate::shared::input::{self, Input, PartitionInput, Rest};
use crate::shared::output::err_line;

/// A partition as read: its bytes, and when it came in a flashable form, the form and where
/// the form places it.
pub(crate) struct Loaded {
    /// The partition's bytes (a UF2 file's `0xFF` fill after them included).
    pub bytes: Box<[u8]>,
    /// The form and the placement, for Intel HEX, ELF and UF2.
    pub flashed: Option<(Format, Placement)>,
}

/// Reads the partition at `path`: a partition file (read as `PartitionFile::read` does), or a
/// file in one of the flashable forms, detected from its first bytes; opened once, the
/// flashable form read on from the same descriptor. A file whose first bytes are no partition
/// header and no flashable form gives those bytes (their parse says why); a library, a blob
/// directory or a flash image of an update region is refused, named for what it is.
pub(crate) fn read_partition(path: &Path) -> Result<Loaded, Error> {
    match read_partition_or_library(path)? {
        PartitionOrLibrary::Partition(loaded) => Ok(loaded),
        PartitionOrLibrary::Library(content) => Err(library_refusal(path, content.as_deref())),
        PartitionOrLibrary::Package(_) => Err(Error::bad_data(
            path,
            "an update package (nrtucode package wrote it), not a partition: nrtucode inspect \
             reads it, and with --base RUNNING.part the partition it gives",
        )),
    }
}

/// What [`read_partition_or_library`] read.
pub(crate) enum PartitionOrLibrary {
    /// A partition, in any form.
    Partition(Loaded),
    /// A library (an ELF shared object or a 64-bit ELF): its bytes, for `inspect` to read a C
    /// library's record from; `None` when it is larger than a partition's bound (not read).
    Library(Option<Box<[u8]>>),
    /// An update package (`nrtucode package`): its bytes, read within a partition's bound.
    Package(Box<[u8]>),
}

/// [`read_partition`], except that a library is read (bounded), not refused: `inspect` reads
/// the record of a C library built from `nrtucode-capi`.
pub(crate) fn read_partition_or_library(path: &Path) -> Result<PartitionOrLibrary, Error> {
    let read = input::read_partition(path).map_err(|e| with_blob_dir_hint(path, e))?;
    let bytes = match read {
        PartitionInput::File { file, rest } => {
            let len = file.bytes().len() as u64;
            after_the_partition(path, len, rest.scan_rest(len)?)?;
            file.into_bytes()
        }
        PartitionInput::NotAPartition { header, input, .. } if is_package(&header) => {
            let content = input.read_rest(&header)?;
            return Ok(PartitionOrLibrary::Package(content.into_boxed_slice()));
        }
        PartitionInput::NotAPartition { header, input, .. } if is_library(&header) => {
            let content = input.read_rest(&header).ok().map(Vec::into_boxed_slice);
            return Ok(PartitionOrLibrary::Library(content));
        }
        PartitionInput::NotAPartition { header, input, .. } if detect(&header) != Format::Bin => {
            return read_flashable(path, *input, &header).map(PartitionOrLibrary::Partition);
        }
        PartitionInput::NotAPartition { header, input, .. } => {
            input.note();
            header
        }
    };
    Ok(PartitionOrLibrary::Partition(Loaded {
        bytes,
        flashed: None,
    }))
}

/// Reads the rest of an Intel HEX, ELF or UF2 file (at most [`input::PARTITION`]'s bound)
/// after its first bytes `head`, and puts the partition back together.
fn read_flashable(path: &Path, input: Input, head: &[u8]) -> Result<Loaded, Error> {
    let content = input.read_rest(head)?;
    let decoded = decode(&content).map_err(|e| Error::refused(path, e))?;
    Ok(Loaded {
        bytes: decoded.bytes.into_boxed_slice(),
        flashed: decoded.placement.map(|p| (decoded.format, p)),
    })
}

/// What follows a partition in its file: another partition is a flash image of an update
/// region (both slots), refused, as its slot A alone is not what the device boots; other bytes
/// are noted, not read.
fn after_the_partition(path: &Path, len: u64, rest: Rest) -> Result<(), Error> {
    let shown = path.display();
    if let Some(at) = rest.partition_at {
        return Err(Error::new(
            Exit::DataErr,
            format!(
                "{shown}: a second partition starts at offset {at:#x}, after this one's {len} bytes: \
                 this is a flash image of an update region (nrtucode provision writes one), not a \
                 partition; read it with its layout: nrtucode inspect {shown} --layout LAYOUT \
                 --public-key PUB.pem"
            ),
        ));
    }
    if rest.len > 0 {
        let what = if rest.erased {
            "all erased (0xFF)"
        } else {
            "not all erased"
        };
        err_line!(
            "nrtucode: note: {shown}: {} bytes after the partition's {len} ({what}) were not read; \
             a flash image of an update region is read with its --layout",
            rest.len
        );
    }
    Ok(())
}

/// Whether the first bytes `head` are an update package's (its magic).
fn is_package(head: &[u8]) -> bool {
    head.starts_with(&nrtucode::update::package::MAGIC)
}

/// Whether the first bytes `head` are an ELF file no flashable form is (`pack --format elf`
/// writes a 32-bit executable): a 64-bit ELF, or a shared object (`ET_DYN`).
fn is_library(head: &[u8]) -> bool {
    const ELFCLASS64: u8 = 2;
    const ET_DYN: [u8; 2] = [3, 0];
    head.starts_with(b"\x7fELF")
        && (head.get(4) == Some(&ELFCLASS64) || head.get(16..18) == Some(&ET_DYN[..]))
}

/// The refusal of a library given where a partition is read (`content`: its bytes, when read
/// within a partition's bound): what it is, and what takes it.
pub(crate) fn library_refusal(path: &Path, content: Option<&[u8]>) -> Error {
    let shown = path.display();
    // Read only to tell nrtucode's own C library from the vendor's.
    let own = content
        .and_then(Holds::of)
        .and_then(|holds| holds.not_the_vendors());
    let message = match own {
        Some(why) => format!(
            "{shown}: a library, not a partition, and not the vendor's: {why}; there are no \
             blobs in it to pack (nrtucode pack takes the vendor's libnrtucode_internal.so or \
             libnrtucode.so)"
        ),
        None => format!(
            "{shown}: a library (an ELF shared object), not a partition: nrtucode pack {shown} \
             -o PART packs its blobs into one (sbom and diff read a library as it is)"
        ),
    };
    Error::new(Exit::DataErr, message)
}

/// A directory given where a partition is read: when it holds a manifest, it is named a blob
/// directory, with the command that packs it.
fn with_blob_dir_hint(path: &Path, error: Error) -> Error {
    if error.kind() == Exit::NoInput && path.join(nrtucode_facts::manifest::MANIFEST_FILE).is_file()
    {
        let shown = path.display();
        return error.map_message(|message| {
            format!(
                "{message}: it is a blob directory; nrtucode pack --blob-dir {shown} -o PART packs \
                 it (sbom and diff read it as it is)"
            )
        });
    }
    error
}

/// Reads the SPKI PEM public key at `path` (bounded, as every key file is read); a private
/// key, or a PEM of another type, is named for what it is.
pub(crate) fn read_public_key(path: &Path) -> Result<PublicKey, Error> {
    let text = crate::commands::key::read_key_file(path, "public")?;
    nrtucode_pack::public_key_from_pem(&text).map_err(|e| Error::refused(path, e))
}

/// Which of the tool's inputs a path is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum What {
    /// A directory: a blob directory `nrtucode carve` wrote.
    BlobDir,
    /// An ELF shared object or 64-bit ELF: a library.
    Library,
    /// A partition in any form `read_partition` reads.
    Partition,
}

/// What `path` is: a directory (a blob directory), or by its first bytes a library, or a
/// partition in any flashable form. Links are followed here (as `carve` and `check` follow a
/// link to their input); the readers then open the input as they always do.
pub(crate) fn what_is(path: &Path) -> Result<What, Error> {
    let shown = path.display();
    let meta = std::fs::metadata(path)
        .map_err(|e| Error::new(exit::reading(&e), format!("{shown}: {e}")))?;
    if meta.is_dir() {
        return Ok(What::BlobDir);
    }
    // Without blocking: a FIFO is refused, not waited on.
    let (file, meta) = open_nonblocking(path, Links::Follow)
        .map_err(|e| Error::new(exit::reading(&e), format!("{shown}: {e}")))?;
    if !meta.is_file() {
        return Err(Error::new(
            Exit::NoInput,
            format!(
                "{shown}: is {}, not a library, a blob directory or a partition",
                kind_of(&meta)
            ),
        ));
    }
    let mut head = Vec::with_capacity(32);
    file.take(32)
        .read_to_end(&mut head)
        .map_err(|e| Error::new(exit::reading(&e), format!("{shown}: {e}")))?;
    if is_library(&head) {
        Ok(What::Library)
    } else if head.starts_with(&nrtucode::partition::format::MAGIC) || detect(&head) != Format::Bin
    {
        Ok(What::Partition)
    } else {
        Err(Error::new(
            Exit::DataErr,
            format!(
                "{shown}: neither a library (no ELF header), a blob directory nor a partition (no NRTUPART header, and not the Intel HEX, ELF or UF2 form of one)"
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_is_told_from_the_elf_form_of_a_partition() {
        let mut elf64 = *b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0";
        assert!(is_library(&elf64));
        elf64[16] = 2; // ET_EXEC, still 64-bit
        assert!(is_library(&elf64));
        let mut elf32_exec = *b"\x7fELF\x01\x01\x01\0\0\0\0\0\0\0\0\0\x02\0";
        assert!(!is_library(&elf32_exec));
        elf32_exec[16] = 3; // a 32-bit shared object
        assert!(is_library(&elf32_exec));
        assert!(!is_library(b"NRTUPART"));
    }
}
