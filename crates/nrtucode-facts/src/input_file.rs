//! Opening a file we are handed without being stalled or misled by it: non-blocking (a FIFO
//! with no writer cannot block the open), its type then checked on the open descriptor, so the
//! file checked is the file read. The one copy the tools share: the blob-directory reader
//! (which also refuses to follow links) and the CLI's key files. (The core's `PartitionFile`
//! keeps its own: the core cannot depend on this std crate.)

use std::fs::{File, Metadata};
use std::path::Path;

/// What a file that is not a regular file is, for messages: `a FIFO`, `a directory`, ….
pub fn kind_of(meta: &Metadata) -> &'static str {
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
    if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Whether the last component of a path may be a symbolic link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Links {
    /// Follow it (a key file named through a link).
    Follow,
    /// Refuse it (`O_NOFOLLOW`: a file inside a blob directory).
    Refuse,
}

/// Opens `path` for reading without blocking (on Unix `O_NONBLOCK`, `O_NOCTTY`, `O_CLOEXEC`,
/// and `O_NOFOLLOW` with [`Links::Refuse`]), and returns it with its metadata read from the
/// descriptor. The caller refuses what is not a regular file (`meta.is_file()`) before reading
/// a byte; for a regular file the non-blocking flag changes nothing.
pub fn open_nonblocking(path: &Path, links: Links) -> std::io::Result<(File, Metadata)> {
    #[cfg(unix)]
    let file = {
        use rustix::fs::{Mode, OFlags};
        let mut flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        if links == Links::Refuse {
            flags |= OFlags::NOFOLLOW;
        }
        File::from(rustix::fs::open(path, flags, Mode::empty())?)
    };
    #[cfg(not(unix))]
    let file = {
        let _ = links;
        File::open(path)?
    };
    let meta = file.metadata()?;
    Ok((file, meta))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_opens_and_is_named_and_a_link_is_refused_when_asked() {
        let dir = tempfile_dir();
        let (_, meta) = open_nonblocking(&dir, Links::Follow).unwrap();
        assert!(!meta.is_file());
        assert_eq!(kind_of(&meta), "a directory");
        let file = dir.join("f");
        std::fs::write(&file, b"x").unwrap();
        let (_, meta) = open_nonblocking(&file, Links::Refuse).unwrap();
        assert!(meta.is_file() && meta.len() == 1);
        #[cfg(unix)]
        {
            let link = dir.join("l");
            std::os::unix::fs::symlink(&file, &link).unwrap();
            assert!(open_nonblocking(&link, Links::Follow).unwrap().1.is_file());
            assert!(open_nonblocking(&link, Links::Refuse).is_err());
            let meta = std::fs::symlink_metadata(&link).unwrap();
            assert_eq!(kind_of(&meta), "a symbolic link");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn tempfile_dir() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("nrtucode-input-file-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
