//! The C compiler driver: builds a generated look-alike into a shared object.

use std::path::Path;
use std::process::Command;

/// The optimisation level for [`build_shared_object`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OptLevel {
    /// `-O2`, like the vendor build.
    O2,
    /// `-Os`.
    Os,
}

impl OptLevel {
    /// The gcc flag.
    pub fn flag(self) -> &'static str {
        match self {
            OptLevel::O2 => "-O2",
            OptLevel::Os => "-Os",
        }
    }

    /// Parses `O2`, `-O2`, `Os` or `-Os`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name.trim_start_matches('-') {
            "O2" => Some(OptLevel::O2),
            "Os" => Some(OptLevel::Os),
            _ => None,
        }
    }
}

/// The C compiler: `$CC` if set, else `gcc`.
pub fn c_compiler() -> String {
    std::env::var("CC")
        .ok()
        .filter(|cc| !cc.trim().is_empty())
        .unwrap_or_else(|| "gcc".to_owned())
}

/// Compiles `c_path` into the shared object `out_path` with
/// `gcc <opt> -shared -fPIC -fno-toplevel-reorder -Wall -Wextra -Werror` (`-s` too when `strip`,
/// like the vendor's stripped front library). `-fno-toplevel-reorder` keeps blobs and getters in
/// source order, which is the vendor's address order.
pub fn build_shared_object(
    c_path: &Path,
    out_path: &Path,
    opt: OptLevel,
    strip: bool,
) -> Result<(), String> {
    let cc = c_compiler();
    let mut cmd = Command::new(&cc);
    cmd.args([
        opt.flag(),
        "-shared",
        "-fPIC",
        "-fno-toplevel-reorder",
        "-Wall",
        "-Wextra",
        "-Werror",
    ]);
    if strip {
        cmd.arg("-s");
    }
    cmd.arg("-o").arg(out_path).arg(c_path);
    let output = cmd.output().map_err(|e| format!("cannot run {cc}: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cc} failed ({}) on {}:\n{}",
            output.status,
            c_path.display(),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}
