//! The C compiler driver: builds a generated look-alike into a shared object.

use std::path::Path;
use std::process::Command;

/// The optimisation level for [`build_shared_object`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OptLevel {
    /// `-O0`.
    O0,
    /// `-O1`.
    O1,
    /// `-O2`, like the vendor build.
    O2,
    /// `-O3`.
    O3,
    /// `-Os`.
    Os,
    /// `-Og`.
    Og,
}

impl OptLevel {
    /// The gcc flag.
    pub fn flag(self) -> &'static str {
        match self {
            OptLevel::O0 => "-O0",
            OptLevel::O1 => "-O1",
            OptLevel::O2 => "-O2",
            OptLevel::O3 => "-O3",
            OptLevel::Os => "-Os",
            OptLevel::Og => "-Og",
        }
    }

    /// Every level.
    pub const ALL: [OptLevel; 6] = [
        OptLevel::O0,
        OptLevel::O1,
        OptLevel::O2,
        OptLevel::O3,
        OptLevel::Os,
        OptLevel::Og,
    ];

    /// Parses `O2` or `-O2` (and the other levels alike).
    pub fn from_name(name: &str) -> Option<Self> {
        let name = name.trim_start_matches('-');
        Self::ALL
            .into_iter()
            .find(|o| o.flag().trim_start_matches('-') == name)
    }
}

/// The C compiler: `$CC` if set, else `gcc`.
pub fn c_compiler() -> String {
    std::env::var("CC")
        .ok()
        .filter(|cc| !cc.trim().is_empty())
        .unwrap_or_else(|| "gcc".to_owned())
}

/// The flags every build uses: `<opt> -shared -fPIC -fno-toplevel-reorder -Wall -Wextra
/// -Werror`.
pub(crate) fn base_flags(opt: OptLevel) -> [&'static str; 7] {
    [
        opt.flag(),
        "-shared",
        "-fPIC",
        "-fno-toplevel-reorder",
        "-Wall",
        "-Wextra",
        "-Werror",
    ]
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
    cmd.args(base_flags(opt));
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
