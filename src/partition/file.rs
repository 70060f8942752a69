//! [`PartitionFile`]: a partition read from a file on a host (features `partition` and `std`).

extern crate std;

use std::boxed::Box;
use std::fs::File;
use std::io::Read as _;
use std::path::Path;
use std::vec::Vec;

use super::bytes::{le16, le32};
use super::error::{BlobUse, FormatError, LoadError, TrustError};
use super::format::{H_MAGIC, H_TOTAL_LEN, H_VERSION, HEADER_LEN, MAGIC, VERSION};
use super::parse::Partition;

/// A partition file read into memory, owned; [`parse`](Self::parse) borrows it, and the same
/// verification and resolvers follow.
///
/// Read, not memory-mapped: a mapped file can be changed under the program by any process
/// that can write it (or truncated, which turns a read into `SIGBUS`), and a `&[u8]` over
/// bytes that change is unsound in Rust, and would let the bytes change after the signature
/// and the digests were checked. A copy in memory is what was verified.
///
/// ```no_run
/// use nrtucode::partition::{PartitionFile, Policy, PublicKey, TableClass};
/// # fn run(key: PublicKey) -> Result<(), Box<dyn std::error::Error>> {
/// let file = PartitionFile::read("/lib/firmware/nrtucode.part")?;
/// let policy = Policy { min_security_counter: 0, expected_class: TableClass::Full };
/// let partition = file.parse()?.verify(&key, &policy)?;
/// let iram = partition.get_memory_image(7, 0, 0, &nrtucode::StdEnv)?;
/// # Ok(()) }
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct PartitionFile {
    bytes: Box<[u8]>,
}

/// The largest partition file read, 1 GiB (the vendor's blobs are 10 MB).
const MAX_FILE_BYTES: u64 = 1 << 30;

/// Why [`PartitionFile::read`] or [`PartitionFile::open`] (or [`PartitionFile::verify`])
/// refused a partition file: reading it, or one of the three steps ([`FormatError`],
/// [`TrustError`], a blob's [`LoadError`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum OpenError {
    /// Opening, inspecting or reading the file failed.
    Io(std::io::Error),
    /// Not a regular file: a directory, FIFO, device or socket (nothing was read from it;
    /// a FIFO is opened without waiting for a writer).
    NotRegular {
        /// What it is: `a directory`, `a FIFO`, ...
        kind: &'static str,
    },
    /// The header's `total_len` is larger than a partition file may be (1 GiB).
    TooLarge {
        /// The partition's length, as its header says.
        len: u64,
    },
    /// The first bytes are not a header this reader reads (erased, bad magic, unsupported
    /// version): the file was read no further.
    Header {
        /// Why, as [`Partition::parse`] says it.
        error: FormatError,
        /// The bytes read: the header (or as much of it as the file holds).
        /// [`Partition::parse`] of them gives `error` again.
        header: Box<[u8]>,
    },
    /// Its structure ([`Partition::parse`]).
    Format(FormatError),
    /// Its signature or policy ([`Partition::verify`]).
    Trust(TrustError),
    /// A blob's check (the first refused, in table-of-contents order).
    Blob {
        /// Why.
        error: LoadError,
        /// The first getter that uses the blob, to name it to a person.
        first_use: Option<BlobUse>,
    },
    /// The memory to hold the partition's bytes or its decoded blobs could not be allocated.
    Memory {
        /// The bytes asked for.
        len: usize,
    },
}

impl core::fmt::Display for OpenError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            OpenError::Io(e) => write!(f, "{e}"),
            OpenError::NotRegular { kind } => {
                write!(f, "is {kind}, not a regular file; nothing was read from it")
            }
            OpenError::TooLarge { len } => write!(
                f,
                "the header says {len} bytes, more than the {MAX_FILE_BYTES} a partition file may have"
            ),
            OpenError::Header { error, .. } | OpenError::Format(error) => write!(f, "{error}"),
            OpenError::Trust(e) => write!(f, "{e}"),
            // `blob 15 (hwdecode_table_list slot 7 PROF_CAM): SHA-256 mismatch …`
            OpenError::Blob { error, first_use } => {
                let text = std::format!("{error}");
                match (error.blob(), first_use) {
                    (Some(blob), Some(user)) => match text.strip_prefix(&std::format!("{blob}")) {
                        Some(rest) => write!(f, "{blob} ({user}){rest}"),
                        None => f.write_str(&text),
                    },
                    _ => f.write_str(&text),
                }
            }
            OpenError::Memory { len } => {
                write!(f, "cannot allocate {len} bytes for the partition")
            }
        }
    }
}

impl std::error::Error for OpenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            OpenError::Io(e) => Some(e),
            OpenError::Header { error, .. } | OpenError::Format(error) => Some(error),
            OpenError::Trust(e) => Some(e),
            OpenError::Blob { error, .. } => Some(error),
            OpenError::NotRegular { .. }
            | OpenError::TooLarge { .. }
            | OpenError::Memory { .. } => None,
        }
    }
}

impl From<std::io::Error> for OpenError {
    fn from(e: std::io::Error) -> Self {
        OpenError::Io(e)
    }
}

impl From<FormatError> for OpenError {
    fn from(e: FormatError) -> Self {
        OpenError::Format(e)
    }
}

impl From<TrustError> for OpenError {
    fn from(e: TrustError) -> Self {
        OpenError::Trust(e)
    }
}

impl From<super::aligned::AllocError> for OpenError {
    fn from(e: super::aligned::AllocError) -> Self {
        OpenError::Memory { len: e.len }
    }
}

/// What a file that is not a regular file is, for messages.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Opens `path` for reading without waiting: non-blocking on Unix, so that a FIFO with no
/// writer cannot block the open (the descriptor is checked to be a regular file before a byte
/// is read, so the flag changes nothing for what is read).
fn open(path: &Path) -> std::io::Result<File> {
    #[cfg(unix)]
    {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        Ok(File::from(rustix::fs::open(path, flags, Mode::empty())?))
    }
    #[cfg(not(unix))]
    {
        File::open(path)
    }
}

/// Reads into `buf` until it is full or the file ends; the number of bytes read.
fn read_up_to(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

impl PartitionFile {
    /// Reads the partition file at `path`: a regular file (its type checked on the open
    /// descriptor; on Unix opened non-blocking, so a FIFO is refused, not waited for). The
    /// header is read first: a file that is not a partition of this format version is refused
    /// from it ([`OpenError::Header`]) without reading further; then exactly the header's
    /// `total_len` bytes are read (at most 1 GiB; fewer when the file is shorter,
    /// which [`parse`](Self::parse) then reports as truncated). Bytes after `total_len` are
    /// not read, as [`Partition::parse`] ignores them.
    pub fn read(path: impl AsRef<Path>) -> Result<Self, OpenError> {
        Self::read_open(&mut open(path.as_ref())?)
    }

    /// [`read`](Self::read) of a file already open (the caller opened it once and may go on
    /// reading it: after [`OpenError::Header`], from the end of the header): its type checked
    /// on the descriptor, then read as `read` says, from the file's current position.
    pub fn read_open(file: &mut File) -> Result<Self, OpenError> {
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(OpenError::NotRegular {
                kind: kind_of(&meta),
            });
        }
        let mut header = [0u8; HEADER_LEN];
        let got = read_up_to(file, &mut header)?;
        let header = header.get(..got).unwrap_or(&[]);
        let magic = header.get(H_MAGIC..H_MAGIC + MAGIC.len());
        let version = le16(header, H_VERSION);
        let total = le32(header, H_TOTAL_LEN);
        let (Some(total), true) = (total, got == HEADER_LEN) else {
            // Shorter than a header: all of it is read; `parse` says it is truncated (or why
            // its first bytes are not a partition's).
            return Ok(Self::from_bytes(header.to_vec()));
        };
        if magic != Some(&MAGIC[..]) || version != Some(VERSION) {
            let error = match Partition::parse(header) {
                Err(error) => error,
                // Not reached: the magic or the version is wrong.
                Ok(_) => FormatError::BadMagic,
            };
            return Err(OpenError::Header {
                error,
                header: header.into(),
            });
        }
        let total = u64::from(total);
        if total > MAX_FILE_BYTES {
            return Err(OpenError::TooLarge { len: total });
        }
        // At most what the file holds now (a shorter file is a truncated partition), and never
        // more than the header says: one allocation, of the size read.
        let len = usize::try_from(total.min(meta.len()).max(HEADER_LEN as u64))
            .map_err(|_| OpenError::TooLarge { len: total })?;
        let mut bytes = Vec::new();
        bytes
            .try_reserve_exact(len)
            .map_err(|_| OpenError::TooLarge { len: total })?;
        bytes.extend_from_slice(header);
        bytes.resize(len, 0);
        let got = read_up_to(file, &mut bytes[HEADER_LEN..])?;
        bytes.truncate(HEADER_LEN + got);
        Ok(Self::from_bytes(bytes))
    }

    /// A partition from bytes already in memory.
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        Self {
            bytes: bytes.into_boxed_slice(),
        }
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The bytes, owned, without a copy (to keep them for the life of a process, say).
    pub fn into_bytes(self) -> Box<[u8]> {
        self.bytes
    }

    /// [`Partition::parse`] over the bytes.
    pub fn parse(&self) -> Result<Partition<'_>, FormatError> {
        Partition::parse(&self.bytes)
    }
}

impl core::fmt::Debug for PartitionFile {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "PartitionFile(<{} bytes>)", self.bytes.len())
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::partition::format::H_HEADER_LEN;
    use std::io::Write as _;

    fn temp(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(std::format!(
            "nrtucode-partition-file-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_large_junk_file_is_refused_from_its_header() {
        let dir = temp("junk");
        let path = dir.join("junk.part");
        let file = File::create(&path).unwrap();
        // Sparse: 1 GiB + 1 of zeros, never read.
        file.set_len(MAX_FILE_BYTES + 1).unwrap();
        match PartitionFile::read(&path) {
            Err(OpenError::Header { error, header }) => {
                assert_eq!(error, FormatError::BadMagic);
                assert_eq!(header.len(), HEADER_LEN);
            }
            other => panic!("{other:?}"),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn only_total_len_bytes_are_read_and_a_short_file_is_kept_whole() {
        let dir = temp("len");
        let path = dir.join("p.part");
        let mut head = [0u8; HEADER_LEN];
        head[..8].copy_from_slice(&MAGIC);
        head[H_VERSION..H_VERSION + 2].copy_from_slice(&VERSION.to_le_bytes());
        head[H_HEADER_LEN..H_HEADER_LEN + 2].copy_from_slice(&(HEADER_LEN as u16).to_le_bytes());
        head[H_TOTAL_LEN..H_TOTAL_LEN + 4].copy_from_slice(&200u32.to_le_bytes());
        let mut f = File::create(&path).unwrap();
        f.write_all(&head).unwrap();
        f.write_all(&[7u8; 300]).unwrap();
        drop(f);
        assert_eq!(PartitionFile::read(&path).unwrap().bytes().len(), 200);
        // Shorter than total_len: what there is, for parse to call truncated.
        std::fs::write(&path, &head[..]).unwrap();
        let file = PartitionFile::read(&path).unwrap();
        assert_eq!(file.bytes().len(), HEADER_LEN);
        assert!(matches!(
            file.parse(),
            Err(FormatError::Truncated { needed: 200, .. })
        ));
        // Shorter than a header.
        std::fs::write(&path, &head[..10]).unwrap();
        assert_eq!(PartitionFile::read(&path).unwrap().into_bytes().len(), 10);
        // total_len past the limit.
        head[H_TOTAL_LEN..H_TOTAL_LEN + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        std::fs::write(&path, &head[..]).unwrap();
        assert!(matches!(
            PartitionFile::read(&path),
            Err(OpenError::TooLarge { .. })
        ));
        assert!(matches!(
            PartitionFile::read(&dir),
            Err(OpenError::NotRegular { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = temp("fifo");
        let path = dir.join("fifo");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &path,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        assert!(matches!(
            PartitionFile::read(&path),
            Err(OpenError::NotRegular { kind: "a FIFO" })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
