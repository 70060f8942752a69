//! [`PackError`].

use std::path::PathBuf;

/// Why a partition could not be packed (or signed).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PackError {
    /// The blob directory failed its check (`nrtucode check` says the same).
    #[error("{dir}: not a usable blob directory: {problems}")]
    BadBlobDir {
        /// The directory.
        dir: PathBuf,
        /// Its problems, one per line.
        problems: String,
    },
    /// Reading an input failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Carving the library failed.
    #[error(transparent)]
    Carve(#[from] nrtucode_carve::FileError),
    /// The getters present are neither the full nor the front library's.
    #[error(
        "the blobs are neither the full library's nor the front library's: {missing} getters of the front selection missing, {extra} outside it"
    )]
    UnknownClass {
        /// Front getters missing.
        missing: usize,
        /// Getters outside the front selection.
        extra: usize,
    },
    /// A blob disagrees with the facts.
    #[error("{0}")]
    Facts(String),
    /// A value does not fit the format (a blob over 4 GiB, too many blobs).
    #[error("does not fit the partition format: {0}")]
    TooLarge(&'static str),
    /// A key file is not an ed25519 key in the expected PEM form.
    #[error("{0}")]
    Key(String),
    /// The bytes given to [`crate::sign_partition`] are not laid out as a partition.
    #[error("not a partition to sign: {0}")]
    NotAPartition(&'static str),
    /// An input of an update package (the base, the new partition) does not parse as a
    /// partition: which one.
    #[error("{0} is not a partition (its parse failed)")]
    NotPartition(&'static str),
    /// An update package was refused (or, writing one, did not read back as the new
    /// partition).
    #[error("update package: {0}")]
    Package(#[from] nrtucode::update::package::PackageError),
}
