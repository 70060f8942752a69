//! The one way the CLI reads a file it is handed (a key, a layout, a memory map, a flash
//! image, a partition in any flashable form): opened once, without blocking; its type checked
//! on the open descriptor (so the file checked is the file read, whatever is renamed over the
//! path meanwhile); then at most the bound its [`Kind`] states is read, and every buffer is
//! sized from the bytes the descriptor holds (or the bound), never from a field inside them.
//!
//! A regular file is read; so is a pipe or a character device where the kind allows it (a key:
//! `--key <(secret-tool lookup …)`, `key public /dev/stdin`), read blocking up to its bound
//! plus one byte, which tells an input larger than the bound. Every other kind of file is
//! refused before a byte is read. The faults and their exit codes, the same for every kind:
//!
//! * cannot open it: 66 (missing, not permitted); an I/O error reading it: 74;
//! * not a file of the kind's sort (a directory; a FIFO, device or socket where the kind reads
//!   regular files only): 66, nothing read from it;
//! * larger than the bound: 65, the size and the bound said (from the descriptor's size
//!   before a byte is read, or from the bytes read, one past the bound);
//! * text that is not UTF-8: 65, with the line and the column of the first bad byte.

use std::fs::{File, Metadata};
use std::io::Read as _;
use std::path::{Path, PathBuf};

use nrtucode::partition::{OpenError, PartitionFile};
use nrtucode_facts::input_file::{Links, kind_of, open_nonblocking};

use crate::shared::error::Error;
use crate::shared::exit::{self, Exit};
use crate::shared::output_file::note_input;

/// A kind of input: what it is called, and how much of it is read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Kind {
    /// What it is, for messages: `a key file`, `a layout file`, ….
    pub name: &'static str,
    /// The most bytes read: a larger input is refused.
    pub max: u64,
    /// Whether a pipe or a character device is read (bounded) as well as a regular file.
    pub streams: bool,
}

/// A PEM key file: 16 KiB, from a regular file, a pipe or a character device.
pub(crate) const KEY: Kind = Kind {
    name: "a key file",
    max: nrtucode_pack::MAX_PEM_BYTES as u64,
    streams: true,
};

/// A layout file: 16 KiB of text.
pub(crate) const LAYOUT: Kind = Kind {
    name: "a layout file",
    max: 16 * 1024,
    streams: false,
};

/// A GNU ld memory map: 256 KiB of text.
pub(crate) const MEMORY_MAP: Kind = Kind {
    name: "a memory map",
    max: 256 * 1024,
    streams: false,
};

/// A flash image of an update region: 1 GiB, as the largest partition file read.
pub(crate) const FLASH_IMAGE: Kind = Kind {
    name: "a flash image",
    max: 1 << 30,
    streams: false,
};

/// A partition in any form: 3 GiB (Intel HEX takes 2.75 characters a byte in 16-byte
/// records, and a partition is at most 1 GiB; a partition file is read up to its header's
/// length, at most 1 GiB).
pub(crate) const PARTITION: Kind = Kind {
    name: "a partition",
    max: 3 << 30,
    streams: false,
};

/// A file opened for reading and checked: a regular file of at most its kind's bound, or a
/// stream its kind allows.
pub(crate) struct Input {
    file: File,
    meta: Metadata,
    path: PathBuf,
    kind: Kind,
}

/// `path: message`, bad data (65).
fn bad(path: &Path, message: impl std::fmt::Display) -> Error {
    Error::bad_data(path, message)
}

/// Opens `path` once (following links, non-blocking) and checks the descriptor: a regular
/// file is read; a pipe or character device is read when `kind.streams` (blocking from here
/// on); anything else (a directory, a FIFO or device the kind does not read, a socket) is 66.
pub(crate) fn open(path: &Path, kind: Kind) -> Result<Input, Error> {
    let io = |e: std::io::Error| Error::new(exit::reading(&e), format!("{}: {e}", path.display()));
    let (file, meta) = open_nonblocking(path, Links::Follow).map_err(io)?;
    let name = kind.name;
    if meta.is_dir() {
        return Err(Error::new(
            Exit::NoInput,
            format!("{}: is a directory, not {name}", path.display()),
        ));
    }
    if meta.is_file() {
        // Its size is checked when it is read: a partition's header says how much of it is.
    } else if kind.streams && is_stream(&meta) {
        blocking(&file, &meta).map_err(io)?;
    } else {
        let allowed = if kind.streams {
            "a regular file, a pipe or a character device"
        } else {
            "a regular file"
        };
        return Err(Error::new(
            Exit::NoInput,
            format!(
                "{}: is {}, not a regular file ({name} is read from {allowed}); nothing was read from it",
                path.display(),
                kind_of(&meta)
            ),
        ));
    }
    Ok(Input {
        file,
        meta,
        path: path.to_owned(),
        kind,
    })
}

/// A pipe or a character device (read with a bound).
fn is_stream(meta: &Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        let t = meta.file_type();
        t.is_fifo() || t.is_char_device()
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

/// Clears `O_NONBLOCK`: a stream the user named is waited for (a pipe's writer may not have
/// written yet); its bound still holds. A FIFO opened before any writer opened it (`mkfifo k;
/// writer > k &; nrtucode … --key k`, the writer not yet scheduled) would read as empty at once:
/// it is polled until its writer wrote to it or closed it, so the read that follows sees what
/// the writer sent.
fn blocking(file: &File, meta: &Metadata) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;

        use rustix::event::{PollFd, PollFlags, poll};
        use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
        let flags = fcntl_getfl(file)?;
        fcntl_setfl(file, flags - OFlags::NONBLOCK)?;
        if meta.file_type().is_fifo() {
            let mut fds = [PollFd::new(file, PollFlags::IN)];
            loop {
                match poll(&mut fds, None) {
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(e) => return Err(e.into()),
                    Ok(_) => break,
                }
            }
        }
    }
    #[cfg(not(unix))]
    let _ = (file, meta);
    Ok(())
}

impl Input {
    /// The file's size as the descriptor says (0 for a stream).
    pub(crate) fn len(&self) -> u64 {
        if self.meta.is_file() {
            self.meta.len()
        } else {
            0
        }
    }

    fn io(&self, e: &std::io::Error) -> Error {
        Error::new(exit::reading(e), format!("{}: {e}", self.path.display()))
    }

    /// Reads what is left of the input after `head` (bytes already read from it), at most
    /// the kind's bound in all, and notes the file as an input of the command (no output may
    /// overwrite it). The buffer is reserved for the bytes the file holds (a file that grew
    /// meanwhile grows it up to the bound plus one byte, which tells it is too large).
    pub(crate) fn read_rest(self, head: &[u8]) -> Result<Vec<u8>, Error> {
        let max = self.kind.max;
        if self.len() > max {
            return Err(bad(
                &self.path,
                format_args!(
                    "{} bytes, larger than the {max} bytes {} may have; nothing more was read",
                    self.len(),
                    self.kind.name
                ),
            ));
        }
        let mut bytes = Vec::new();
        let expect = usize::try_from(self.len().min(max)).unwrap_or(0);
        bytes
            .try_reserve_exact(expect.max(head.len()))
            .map_err(|_| {
                bad(
                    &self.path,
                    format_args!("{expect} bytes: more than this machine can hold"),
                )
            })?;
        bytes.extend_from_slice(head);
        let left = (max + 1).saturating_sub(head.len() as u64);
        (&self.file)
            .take(left)
            .read_to_end(&mut bytes)
            .map_err(|e| self.io(&e))?;
        if bytes.len() as u64 > max {
            return Err(bad(
                &self.path,
                format_args!(
                    "{} bytes or more, larger than the {max} bytes {} may have",
                    bytes.len(),
                    self.kind.name
                ),
            ));
        }
        note_input(&self.path, &self.meta);
        Ok(bytes)
    }

    /// Reads the whole input (at most the kind's bound).
    pub(crate) fn read_all(self) -> Result<Vec<u8>, Error> {
        self.read_rest(&[])
    }

    /// Reads the whole input as UTF-8 text: bytes that are not are 65, with the line and
    /// column of the first.
    pub(crate) fn read_text(self) -> Result<String, Error> {
        let path = self.path.clone();
        let name = self.kind.name;
        let bytes = self.read_all()?;
        String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            let bytes = e.as_bytes();
            let (line, column) = line_and_column(&bytes[..at]);
            bad(
                &path,
                format_args!(
                    "line {line}, column {column} (byte {at}): not UTF-8 text, so not {name}"
                ),
            )
        })
    }
}

/// The line and column (from 1, the column in bytes) of the byte after `before`.
fn line_and_column(before: &[u8]) -> (usize, usize) {
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1);
    (line, before.len() - start + 1)
}

/// A partition input, read from its one open descriptor as [`PartitionFile::read_open`]
/// reads one: the header, then the header's `total_len` bytes (at most 1 GiB).
pub(crate) enum PartitionInput {
    /// A partition file (noted as an input), and the input read up to the partition's end,
    /// to tell what follows it.
    File {
        /// The partition's bytes (its header's `total_len`, or fewer when the file is short).
        file: PartitionFile,
        /// The input, positioned after them.
        rest: Box<Input>,
    },
    /// Its first bytes are not a partition header: what they are not, and the input, to read
    /// on from the header's end (a flashable form) or to refuse.
    NotAPartition {
        /// The bytes read.
        header: Box<[u8]>,
        /// The input, read up to the end of `header`.
        input: Box<Input>,
    },
}

/// Opens the partition at `path` once and reads it ([`PartitionInput`]).
pub(crate) fn read_partition(path: &Path) -> Result<PartitionInput, Error> {
    let mut input = open(path, PARTITION)?;
    match PartitionFile::read_open(&mut input.file) {
        Ok(file) => {
            note_input(path, &input.meta);
            Ok(PartitionInput::File {
                file,
                rest: Box::new(input),
            })
        }
        Err(OpenError::Header { header, .. }) => Ok(PartitionInput::NotAPartition {
            header,
            input: Box::new(input),
        }),
        Err(OpenError::Io(e)) => Err(input.io(&e)),
        Err(e @ OpenError::NotRegular { .. }) => Err(Error::new(
            Exit::NoInput,
            format!("{}: {e}", path.display()),
        )),
        Err(e) => Err(bad(path, e)),
    }
}

impl Input {
    /// Notes the input as read (no output may overwrite it) without reading more of it.
    pub(crate) fn note(&self) {
        note_input(&self.path, &self.meta);
    }

    /// What follows the bytes read so far, scanned in 64 KiB pieces up to the kind's bound
    /// (nothing is kept): how many bytes, whether all are erased flash (`0xFF`), and the
    /// offset in the file of the first partition magic among them (a second slot's partition).
    pub(crate) fn scan_rest(self, read_so_far: u64) -> Result<Rest, Error> {
        const MAGIC: &[u8] = &nrtucode::partition::format::MAGIC;
        let mut rest = Rest {
            len: 0,
            erased: true,
            partition_at: None,
        };
        // The last MAGIC.len() - 1 bytes of the previous piece, for a magic across two.
        let mut window: Vec<u8> = Vec::with_capacity(64 * 1024 + MAGIC.len());
        let mut piece = vec![0u8; 64 * 1024];
        while rest.len < self.kind.max {
            let got = match (&self.file).read(&mut piece) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.io(&e)),
            };
            let new = &piece[..got];
            rest.erased &= new.iter().all(|&b| b == 0xFF);
            let carried = window.len() as u64;
            window.extend_from_slice(new);
            if rest.partition_at.is_none() {
                rest.partition_at = (window.windows(MAGIC.len()))
                    .position(|w| w == MAGIC)
                    .map(|at| read_so_far + rest.len + at as u64 - carried);
            }
            rest.len += got as u64;
            let keep = window.len().saturating_sub(MAGIC.len() - 1);
            window.drain(..keep);
        }
        Ok(rest)
    }
}

/// What follows a partition in its file ([`Input::scan_rest`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rest {
    /// How many bytes (up to the kind's bound).
    pub len: u64,
    /// Whether every one is `0xFF` (erased flash; true when there are none).
    pub erased: bool,
    /// The offset in the file of the first partition magic after the partition.
    pub partition_at: Option<u64>,
}

/// Reads the text file at `path` of `kind` (open, check, bounded read, UTF-8).
pub(crate) fn read_text(path: &Path, kind: Kind) -> Result<String, Error> {
    open(path, kind)?.read_text()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_lines_and_columns_from_one() {
        assert_eq!(line_and_column(b""), (1, 1));
        assert_eq!(line_and_column(b"ab"), (1, 3));
        assert_eq!(line_and_column(b"ab\n"), (2, 1));
        assert_eq!(line_and_column(b"ab\ncde\nf"), (3, 2));
    }

    #[test]
    fn bounds_are_checked_from_the_descriptor_and_from_what_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let small = Kind {
            name: "a test file",
            max: 4,
            streams: false,
        };
        let file = dir.path().join("f");
        std::fs::write(&file, b"abcd").unwrap();
        assert_eq!(open(&file, small).unwrap().read_all().unwrap(), b"abcd");
        std::fs::write(&file, b"abcde").unwrap();
        let e = open(&file, small).unwrap().read_all().unwrap_err();
        let (exit, message) = (e.kind(), e.to_string());
        assert_eq!(exit, Exit::DataErr);
        assert!(
            message.contains("5 bytes, larger than the 4 bytes"),
            "{message}"
        );
        std::fs::write(&file, b"ab\n\xffc").unwrap();
        let e = read_text(&file, LAYOUT).unwrap_err();
        let (exit, message) = (e.kind(), e.to_string());
        assert_eq!(exit, Exit::DataErr);
        assert!(message.contains("line 2, column 1 (byte 3)"), "{message}");
        let exit = open(dir.path(), small).err().unwrap().kind();
        assert_eq!(exit, Exit::NoInput);
    }

    #[cfg(unix)]
    #[test]
    fn a_character_device_is_read_bounded_when_the_kind_allows_streams() {
        let zero = Path::new("/dev/zero");
        let e = open(zero, LAYOUT).err().unwrap();
        let (exit, message) = (e.kind(), e.to_string());
        assert_eq!(exit, Exit::NoInput);
        assert!(message.contains("is a character device"), "{message}");
        let e = open(zero, KEY).unwrap().read_all().unwrap_err();
        let (exit, message) = (e.kind(), e.to_string());
        assert_eq!(exit, Exit::DataErr);
        assert!(message.contains("16385 bytes or more"), "{message}");
        assert_eq!(
            open(Path::new("/dev/null"), KEY)
                .unwrap()
                .read_all()
                .unwrap(),
            b""
        );
    }
}
