//! Build conditions beyond the vendor's: other optimisation levels, code-generation and linker
//! flags, and what a stripping tool leaves (`strip --strip-all`, or no section header table at
//! all, as `sstrip`-style tools leave it). The carver must read every one of them.

use std::path::Path;
use std::process::Command;

use crate::gcc::{OptLevel, c_compiler};

/// One compiler configuration of the look-alike: an optimisation level and extra flags
/// (added after the base flags of [`crate::build_shared_object`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Condition {
    /// A short name, usable in file names (`O0`, `stack-protector-all`, ...).
    pub name: &'static str,
    /// The optimisation level.
    pub opt: OptLevel,
    /// Extra compiler and linker flags.
    pub flags: &'static [&'static str],
}

/// The build matrix: each condition differs from the vendor's `-O2` build in one way.
pub const CONDITIONS: [Condition; 13] = [
    Condition {
        name: "O0",
        opt: OptLevel::O0,
        flags: &[],
    },
    Condition {
        name: "O1",
        opt: OptLevel::O1,
        flags: &[],
    },
    Condition {
        name: "O2",
        opt: OptLevel::O2,
        flags: &[],
    },
    Condition {
        name: "O3",
        opt: OptLevel::O3,
        flags: &[],
    },
    Condition {
        name: "Os",
        opt: OptLevel::Os,
        flags: &[],
    },
    Condition {
        name: "Og",
        opt: OptLevel::Og,
        flags: &[],
    },
    Condition {
        name: "stack-protector-all",
        opt: OptLevel::O2,
        flags: &["-fstack-protector-all"],
    },
    Condition {
        name: "pg",
        opt: OptLevel::O2,
        flags: &["-pg"],
    },
    Condition {
        name: "mcmodel-large",
        opt: OptLevel::O2,
        flags: &["-mcmodel=large"],
    },
    Condition {
        name: "cf-protection-full",
        opt: OptLevel::O2,
        flags: &["-fcf-protection=full"],
    },
    Condition {
        name: "pack-relative-relocs",
        opt: OptLevel::O2,
        flags: &["-Wl,-z,pack-relative-relocs"],
    },
    Condition {
        name: "separate-code",
        opt: OptLevel::O2,
        flags: &["-Wl,-z,separate-code"],
    },
    Condition {
        name: "gold",
        opt: OptLevel::O2,
        flags: &["-fuse-ld=gold"],
    },
];

impl Condition {
    /// The condition called `name`.
    pub fn named(name: &str) -> Option<Condition> {
        CONDITIONS.iter().copied().find(|c| c.name == name)
    }
}

/// What is left of the symbols and sections after the build.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stripping {
    /// As linked.
    None,
    /// `strip --strip-all`: no `.symtab`, only `.dynsym`.
    All,
    /// `strip --strip-all`, then the section header table removed ([`remove_section_headers`]).
    SectionHeaders,
}

impl Stripping {
    /// Every form.
    pub const ALL: [Stripping; 3] = [Stripping::None, Stripping::All, Stripping::SectionHeaders];

    /// A short name: `unstripped`, `stripped`, `no-shdr`.
    pub fn name(self) -> &'static str {
        match self {
            Stripping::None => "unstripped",
            Stripping::All => "stripped",
            Stripping::SectionHeaders => "no-shdr",
        }
    }
}

fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
    let output = cmd
        .output()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// Compiles `c_path` into `out_path` under `condition`: the base flags of
/// [`crate::build_shared_object`], the condition's level and its extra flags.
pub fn build_with_condition(
    c_path: &Path,
    out_path: &Path,
    condition: &Condition,
) -> Result<(), String> {
    let cc = c_compiler();
    let mut cmd = Command::new(&cc);
    cmd.args(crate::gcc::base_flags(condition.opt))
        .args(condition.flags)
        .arg("-o")
        .arg(out_path)
        .arg(c_path);
    run(&mut cmd, &format!("{cc} {}", condition.flags.join(" ")))
}

/// Writes `input` with `stripping` applied to `output` (a copy for [`Stripping::None`]).
pub fn strip_to(input: &Path, output: &Path, stripping: Stripping) -> Result<(), String> {
    if stripping == Stripping::None {
        return std::fs::copy(input, output).map(|_| ()).map_err(|e| {
            format!(
                "cannot copy {} to {}: {e}",
                input.display(),
                output.display()
            )
        });
    }
    run(
        Command::new("strip")
            .arg("--strip-all")
            .arg("-o")
            .arg(output)
            .arg(input),
        "strip --strip-all (binutils)",
    )?;
    if stripping == Stripping::SectionHeaders {
        remove_section_headers(output)?;
    }
    Ok(())
}

/// Removes the section header table of the ELF64 file at `path` the way `sstrip`-style tools
/// do ([`nrtucode_test_elf::remove_section_headers`]: `e_shoff`, `e_shnum` and `e_shstrndx`
/// become zero, so nothing refers to the table; its bytes stay). The dynamic loader never reads
/// section headers; the library still loads.
pub fn remove_section_headers(path: &Path) -> Result<(), String> {
    let mut data =
        std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if data.get(..5).is_none_or(|ident| ident != b"\x7fELF\x02")
        || !nrtucode_test_elf::remove_section_headers(&mut data)
    {
        return Err(format!("{}: not an ELF64 file", path.display()));
    }
    std::fs::write(path, data).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_have_unique_file_names_and_are_found_by_name() {
        let mut names: Vec<&str> = CONDITIONS.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CONDITIONS.len());
        for c in CONDITIONS {
            assert_eq!(Condition::named(c.name), Some(c));
            assert!(
                c.name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            );
        }
        assert_eq!(Condition::named("O9"), None);
    }

    #[test]
    fn removing_section_headers_zeroes_exactly_the_three_fields() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.so");
        let mut elf = vec![0xa5u8; 128];
        elf[..5].copy_from_slice(b"\x7fELF\x02");
        std::fs::write(&path, &elf).unwrap();
        remove_section_headers(&path).unwrap();
        let after = std::fs::read(&path).unwrap();
        for (i, (a, b)) in elf.iter().zip(&after).enumerate() {
            let zeroed = (0x28..0x30).contains(&i) || (0x3c..0x40).contains(&i);
            assert_eq!(*b, if zeroed { 0 } else { *a }, "byte {i:#x}");
        }
        std::fs::write(&path, b"\x7fELF\x01 32-bit").unwrap();
        assert!(
            remove_section_headers(&path)
                .unwrap_err()
                .contains("not an ELF64")
        );
    }
}
