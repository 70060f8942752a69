//! [`PartitionFile`]: a partition read from a file on a host (features `partition` and `std`).

extern crate std;

use std::boxed::Box;
use std::io::Read as _;
use std::path::Path;
use std::vec::Vec;

use super::error::PartitionError;
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

/// The largest partition file read (the vendor's blobs are 10 MB).
pub const MAX_FILE_BYTES: u64 = 1 << 30;

impl PartitionFile {
    /// Reads the file at `path` (a regular file of at most 1 GiB).
    pub fn read(path: impl AsRef<Path>) -> std::io::Result<Self> {
        let file = std::fs::File::open(path.as_ref())?;
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::IsADirectory,
                "a directory, not a partition file",
            ));
        }
        if !meta.is_file() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        let mut bytes = Vec::new();
        file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(std::io::Error::other("larger than 1 GiB"));
        }
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

    /// [`Partition::parse`] over the bytes.
    pub fn parse(&self) -> Result<Partition<'_>, PartitionError> {
        Partition::parse(&self.bytes)
    }
}

impl core::fmt::Debug for PartitionFile {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "PartitionFile(<{} bytes>)", self.bytes.len())
    }
}
