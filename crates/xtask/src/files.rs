//! File operations whose errors name the file, for every task (one copy of each, where the
//! tasks had their own).

use std::path::{Path, PathBuf};

/// Reads `path`, failing with its name.
pub fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Reads `path` as UTF-8 text, failing with its name.
pub fn read_text(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Writes `path` from `bytes`, failing with its name.
pub fn write(path: &Path, bytes: impl AsRef<[u8]>) -> Result<(), String> {
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Copies `from` to `to`, failing with both names.
pub fn copy(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
}

/// Creates the file `path` for a child's standard output, and a second handle to it for its
/// standard error (`>FILE 2>&1`), failing with its name.
pub fn output(path: &Path) -> Result<(std::fs::File, std::fs::File), String> {
    let file = std::fs::File::create(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let err = file
        .try_clone()
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok((file, err))
}

/// Removes the file `path`, failing with its name.
pub fn remove(path: &Path) -> Result<(), String> {
    std::fs::remove_file(path).map_err(|e| format!("cannot remove {}: {e}", path.display()))
}

/// Creates `path` and its parents, failing with its name.
pub fn create_dir(path: &Path) -> Result<(), String> {
    std::fs::create_dir_all(path).map_err(|e| format!("cannot create {}: {e}", path.display()))
}

/// Every file under `dir` (recursively) whose name ends in `suffix` (`""`: every file), sorted.
pub fn walk(dir: &Path, suffix: &str) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries =
            std::fs::read_dir(&d).map_err(|e| format!("cannot read {}: {e}", d.display()))?;
        for entry in entries {
            let path = entry
                .map_err(|e| format!("cannot read {}: {e}", d.display()))?
                .path();
            if path.is_dir() {
                stack.push(path);
            } else if path
                .to_string_lossy()
                .to_ascii_lowercase()
                .ends_with(suffix)
            {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The bytes of every file under `dir` (0 where it cannot be read: a figure to print, not a
/// verdict).
pub fn tree_bytes(dir: &Path) -> u64 {
    (walk(dir, "").unwrap_or_default().iter())
        .filter_map(|path| std::fs::symlink_metadata(path).ok())
        .map(|meta| meta.len())
        .sum()
}
