//! Renames the all-or-nothing write needs: without replacing, and exchanging two directories,
//! each in one step where the platform has the call (Linux `renameat2`, macOS `renamex_np`),
//! with a portable fallback elsewhere or where the filesystem lacks it.

use std::fs;
use std::path::Path;

/// Renames `from` to `to`, failing if `to` exists: in one step on Linux (`renameat2`
/// `RENAME_NOREPLACE`) and macOS (`renamex_np` `RENAME_EXCL`). Elsewhere, or where the
/// filesystem lacks it, a file is hard-linked to `to` (which fails if `to` exists, on every
/// platform) and then unlinked from `from`; without hard links (FAT) or for a directory, `to`
/// is checked and then renamed onto, so a file another process creates there in between
/// would be replaced.
pub(crate) fn rename_no_replace(from: &Path, to: &Path) -> std::io::Result<()> {
    #[cfg(any(target_os = "linux", target_vendor = "apple"))]
    if one_step_renames() {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        match renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE) {
            Err(e) if rename_flags_unsupported(e) => {}
            r => return r.map_err(std::io::Error::from),
        }
    }
    if fs::symlink_metadata(from)?.is_file() {
        match fs::hard_link(from, to) {
            Ok(()) => {
                return fs::remove_file(from).inspect_err(|_| {
                    // Both names exist: take back the new one, so `to` is as it was.
                    let _ = fs::remove_file(to);
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(e),
            // No hard links here: check, then rename.
            Err(_) => {}
        }
    }
    if fs::symlink_metadata(to).is_ok() {
        return Err(std::io::ErrorKind::AlreadyExists.into());
    }
    fs::rename(from, to)
}

/// Exchanges the directories `a` and `b` in one step (Linux `renameat2` `RENAME_EXCHANGE`,
/// macOS `renamex_np` `RENAME_SWAP`); `Ok(false)` where the system or filesystem cannot.
pub(crate) fn exchange(a: &Path, b: &Path) -> std::io::Result<bool> {
    #[cfg(any(target_os = "linux", target_vendor = "apple"))]
    if one_step_renames() {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        match renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE) {
            Ok(()) => return Ok(true),
            Err(e) if rename_flags_unsupported(e) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let _ = (a, b);
    Ok(false)
}

#[cfg(test)]
thread_local! {
    /// Set by tests to run the portable paths (two renames; a check, then a rename) where the
    /// platform has the one-step calls: the paths Windows and other Unix systems take.
    static PORTABLE_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the one-step rename calls are tried (always, outside this module's tests).
#[cfg(any(target_os = "linux", target_vendor = "apple"))]
fn one_step_renames() -> bool {
    #[cfg(test)]
    {
        !PORTABLE_ONLY.get()
    }
    #[cfg(not(test))]
    {
        true
    }
}

/// Whether a `renameat2` / `renamex_np` error means "this kernel or filesystem has no such
/// flag" (then the portable fallback runs), not a failure of the rename itself.
#[cfg(any(target_os = "linux", target_vendor = "apple"))]
fn rename_flags_unsupported(e: rustix::io::Errno) -> bool {
    use rustix::io::Errno;
    // Linux: EINVAL (filesystem), ENOSYS (kernel before 3.15). macOS: ENOTSUP (a filesystem
    // other than APFS/HFS+, e.g. SMB or FAT).
    e == Errno::INVAL || e == Errno::NOSYS || e == Errno::NOTSUP || e == Errno::OPNOTSUPP
}

/// Runs the portable rename paths on this thread while it lives (tests only).
#[cfg(test)]
pub(crate) struct PortableOnly;

#[cfg(test)]
impl PortableOnly {
    pub(crate) fn set(portable: bool) -> Self {
        PORTABLE_ONLY.set(portable);
        Self
    }
}

#[cfg(test)]
impl Drop for PortableOnly {
    fn drop(&mut self) {
        PORTABLE_ONLY.set(false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rename_no_replace_refuses_an_existing_name_in_one_step_or_after_a_check() {
        for portable in [false, true] {
            let _mode = PortableOnly::set(portable);
            let tmp = tempfile::tempdir().unwrap();
            let (from, taken, free) = (
                tmp.path().join("from"),
                tmp.path().join("taken"),
                tmp.path().join("free"),
            );
            fs::create_dir(&from).unwrap();
            fs::create_dir(&taken).unwrap();
            fs::write(taken.join("mine"), "kept").unwrap();
            let e = rename_no_replace(&from, &taken).unwrap_err();
            assert_eq!(
                e.kind(),
                std::io::ErrorKind::AlreadyExists,
                "portable {portable}: {e}"
            );
            assert_eq!(fs::read_to_string(taken.join("mine")).unwrap(), "kept");
            rename_no_replace(&from, &free).unwrap();
            assert!(free.is_dir() && !from.exists(), "portable {portable}");
            // A file (the portable path hard-links it): the same.
            let (file, taken_file) = (tmp.path().join("new.bin"), tmp.path().join("old.bin"));
            fs::write(&file, "new").unwrap();
            fs::write(&taken_file, "old").unwrap();
            let e = rename_no_replace(&file, &taken_file).unwrap_err();
            assert_eq!(
                e.kind(),
                std::io::ErrorKind::AlreadyExists,
                "portable {portable}: {e}"
            );
            assert_eq!(fs::read_to_string(&taken_file).unwrap(), "old");
            assert_eq!(fs::read_to_string(&file).unwrap(), "new");
            rename_no_replace(&file, &free.join("moved.bin")).unwrap();
            assert_eq!(fs::read_to_string(free.join("moved.bin")).unwrap(), "new");
            assert!(!file.exists(), "portable {portable}: the old name is gone");
        }
    }
}
