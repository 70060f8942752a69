//! Writing an output file all or nothing: a temporary file next to it, flushed, then renamed
//! over it; on any error the temporary file is removed and the destination is as it was.

use std::io::Write as _;
use std::path::Path;

use crate::commands::exit::{self, Exit};

/// Writes `bytes` to `path` atomically. `private` creates the file readable by its owner only
/// (a private key). `replace` false refuses an existing `path` (exit 73).
pub(crate) fn write_atomic(
    path: &Path,
    bytes: &[u8],
    private: bool,
    replace: bool,
) -> Result<(), (Exit, String)> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err((
            Exit::CantCreate,
            format!(
                "{}: is a directory; -o names the file to write",
                path.display()
            ),
        ));
    }
    if !replace && std::fs::symlink_metadata(path).is_ok() {
        return Err((
            Exit::CantCreate,
            format!("{}: exists; not replacing it", path.display()),
        ));
    }
    let Some(name) = path.file_name() else {
        return Err((
            Exit::CantCreate,
            format!("{}: not a file name", path.display()),
        ));
    };
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(".{}.tmp", std::process::id()));
    let temp = path.with_file_name(temp_name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(if private { 0o600 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = private;
    let mut file = options.open(&temp).map_err(|e| {
        (
            exit::creating(&e),
            format!("cannot create {}: {e}", path.display()),
        )
    })?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    drop(file);
    let done = written.and_then(|()| {
        if replace {
            std::fs::rename(&temp, path)
        } else {
            // Never replace: a hard link fails if the name appeared meanwhile.
            std::fs::hard_link(&temp, path).and_then(|()| std::fs::remove_file(&temp))
        }
    });
    done.map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        (exit::creating(&e), format!("{}: {e}", path.display()))
    })
}
