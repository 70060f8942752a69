//! `cargo xtask bare-metal`: the link checks of the bare-metal template (examples/bare-metal,
//! thumbv7em-none-eabihf). Builds it with run-time and compile-time resolution, with and without
//! LTO, and checks each ELF (sections, program headers and symbols read with `object`): every
//! blob lies in the `XFLASH` region of its memory map (`memory/board.x`) and is 16-byte
//! aligned, internal `FLASH` holds under 16 KiB, and resolving at compile time links exactly the
//! blobs named (so `--gc-sections` drops each unused blob on its own). Prints the flash split of
//! run-time vs compile-time resolution that docs/bare-metal.md describes.

use std::ffi::OsStr;
use std::path::Path;

use nrtucode_facts::facts::Getter;

use crate::device::{self, Separate, commas};
use crate::elf;
use crate::metadata::Metadata;

/// The image whose regions the template's `const-resolve` names.
const NAMED: &str = "CAYMAN_NX_ACT_PERF";

/// Internal flash must stay under this.
const INTERNAL_LIMIT: u64 = 16 * 1024;

/// Runs the four builds and checks; prints the table.
pub fn run(meta: &Metadata) -> Result<(), String> {
    device::rustup_target(device::THUMB);
    let template = Separate::template(meta);
    let memory = crate::files::read_text(&template.dir.join("memory/board.x"))?;
    let regions = regions(&memory)?;
    let want = named_bytes(&nrtucode_facts::facts::getters());
    println!(
        "examples/bare-metal, thumbv7em-none-eabihf, opt-level s, gen-cayman + flavor-perf (+ digest, defmt)"
    );
    println!();
    println!(
        "| resolution | LTO | blobs linked | blob bytes | XFLASH section | internal FLASH (load) |"
    );
    println!("|---|---|---:|---:|---:|---:|");
    for (mode, lto) in [
        ("run-time", "true"),
        ("compile-time", "true"),
        ("compile-time", "false"),
        ("run-time", "false"),
    ] {
        let features: &[&str] = if mode == "compile-time" {
            &["--features", "const-resolve"]
        } else {
            &[]
        };
        let elf = template.build(
            features,
            &[("CARGO_PROFILE_RELEASE_LTO", OsStr::new(lto))],
            "nrtucode-bare-metal",
        )?;
        let placement = Placement::of(&elf, &regions)?;
        println!("{}", placement.row(mode, lto));
        let problems = placement.problems(&regions, (mode == "compile-time").then_some(want));
        if !problems.is_empty() {
            for p in &problems {
                eprintln!("bare-metal: {p}");
            }
            return Err(format!(
                "{mode} resolution, LTO {lto}: {} placement problems",
                problems.len()
            ));
        }
    }
    Ok(())
}

/// A region of a linker script's `MEMORY` block.
#[derive(Debug, PartialEq, Eq)]
struct Region {
    name: String,
    origin: u64,
    length: u64,
}

/// `64K`, `8M`, `0x1000`, `4096`.
fn size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (number, unit) = match text.strip_suffix('K') {
        Some(n) => (n, 1024),
        None => match text.strip_suffix('M') {
            Some(n) => (n, 1024 * 1024),
            None => (text, 1),
        },
    };
    let number = number.trim();
    let value = match number.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok()?,
        None => number.parse().ok()?,
    };
    value.checked_mul(unit)
}

/// The regions of `NAME : ORIGIN = 0x…, LENGTH = …` lines (a trailing `/* … */` allowed).
fn regions(script: &str) -> Result<Vec<Region>, String> {
    let mut found = Vec::new();
    for line in script.lines() {
        let line = line.split("/*").next().unwrap_or("").trim();
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        let name = name.trim();
        let fields: Vec<(&str, &str)> = (rest.split(','))
            .filter_map(|f| f.split_once('='))
            .map(|(k, v)| (k.trim(), v.trim()))
            .collect();
        let [("ORIGIN", origin), ("LENGTH", length)] = fields[..] else {
            continue;
        };
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let region = size(origin)
            .zip(size(length))
            .map(|(origin, length)| Region {
                name: name.to_string(),
                origin,
                length,
            });
        found.push(region.ok_or_else(|| format!("cannot read the MEMORY line {line:?}"))?);
    }
    if found.is_empty() {
        return Err("the memory map names no region".into());
    }
    Ok(found)
}

fn inside(regions: &[Region], name: &str, addr: u64, n: u64) -> bool {
    regions.iter().any(|r| {
        r.name == name && r.origin <= addr && addr.saturating_add(n) <= r.origin + r.length
    })
}

/// The bytes of the images `const-resolve` names: the real (blob) regions of [`NAMED`] among
/// the facts' getters.
fn named_bytes(getters: &[Getter]) -> u64 {
    let named = getters.iter().filter(|g| g.real && g.image_name() == NAMED);
    named.map(|g| g.size as u64).sum()
}

/// Where a build put its blobs.
struct Placement {
    /// `.nrtucode_blobs`: address and size (0, 0 when missing).
    section: (u64, u64),
    /// The `BLOB_*` data symbols (`STT_OBJECT`): address and size.
    blobs: Vec<(u64, u64)>,
    /// The bytes PT_LOAD segments write into the `FLASH` region (by load address).
    internal: u64,
}

impl Placement {
    fn of(path: &Path, regions: &[Region]) -> Result<Self, String> {
        let elf = elf::read(path)?;
        let section = (elf.sections.iter())
            .find(|s| s.alloc() && s.name == ".nrtucode_blobs")
            .map_or((0, 0), |s| (s.addr, s.size));
        let blobs = (elf.symbols.iter())
            .filter(|s| s.object && s.name.contains("BLOB_"))
            .map(|s| (s.addr, s.size))
            .collect();
        let internal = (elf.loads.iter())
            .filter(|l| inside(regions, "FLASH", l.paddr, 0))
            .map(|l| l.filesz)
            .sum();
        Ok(Placement {
            section,
            blobs,
            internal,
        })
    }

    fn payload(&self) -> u64 {
        self.blobs.iter().map(|b| b.1).sum()
    }

    /// One row of the table.
    fn row(&self, mode: &str, lto: &str) -> String {
        let (addr, n) = self.section;
        format!(
            "| {mode} | {lto} | {} | {} B | {} B at {addr:#010x} | {} B |",
            self.blobs.len(),
            commas(self.payload()),
            commas(n),
            commas(self.internal),
        )
    }

    /// What is wrong with the placement; `want`: the blob bytes compile-time resolution must link.
    fn problems(&self, regions: &[Region], want: Option<u64>) -> Vec<String> {
        let mut problems = Vec::new();
        let (addr, n) = self.section;
        if n == 0 || !inside(regions, "XFLASH", addr, n) {
            problems.push(format!(
                ".nrtucode_blobs at {addr:#x}+{n:#x} is not inside XFLASH"
            ));
        }
        for &(a, s) in &self.blobs {
            if !inside(regions, "XFLASH", a, s) || a % 16 != 0 {
                problems.push(format!(
                    "blob at {a:#x} ({s} B) outside XFLASH or not 16-byte aligned"
                ));
            }
        }
        if self.internal >= INTERNAL_LIMIT {
            problems.push(format!(
                "internal FLASH holds {} B (target < 16 KiB)",
                self.internal
            ));
        }
        if let Some(want) = want
            && self.payload() != want
        {
            problems.push(format!(
                "compile-time resolution links {} B of blobs, the 4 images named hold {want} B",
                self.payload()
            ));
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOARD: &str = "MEMORY\n{\n  FLASH  : ORIGIN = 0x08000000, LENGTH = 64K  /* internal */\n  \
        RAM    : ORIGIN = 0x20000000, LENGTH = 256K\n  XFLASH : ORIGIN = 0x90000000, LENGTH = 8M   /* external */\n}\n\
        PROVIDE(__nrtucode_partition_start = ORIGIN(XFLASH));\n";

    #[test]
    fn the_memory_map_gives_each_region() {
        let r = regions(BOARD).unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(
            r[2],
            Region {
                name: "XFLASH".into(),
                origin: 0x9000_0000,
                length: 8 << 20
            }
        );
        assert_eq!(r[0].length, 64 * 1024);
        assert!(regions("nothing").is_err());
        assert_eq!(size("0x100"), Some(256));
        assert_eq!(size("4 K"), Some(4096));
    }

    #[test]
    fn a_misplaced_blob_or_a_full_flash_is_a_problem() {
        let r = regions(BOARD).unwrap();
        let good = Placement {
            section: (0x9000_0000, 0x1000),
            blobs: vec![(0x9000_0000, 0x800), (0x9000_0800, 0x800)],
            internal: 11_608,
        };
        assert!(good.problems(&r, Some(0x1000)).is_empty());
        assert_eq!(good.problems(&r, Some(0x800)).len(), 1);
        assert_eq!(
            good.row("run-time", "true"),
            "| run-time | true | 2 | 4,096 B | 4,096 B at 0x90000000 | 11,608 B |"
        );
        let unaligned = Placement {
            blobs: vec![(0x9000_0008, 0x10)],
            ..good
        };
        assert_eq!(unaligned.problems(&r, None).len(), 1);
        let internal = Placement {
            section: (0x0800_0000, 0x10),
            blobs: vec![],
            internal: 16 * 1024,
        };
        assert_eq!(internal.problems(&r, None).len(), 2);
    }

    #[test]
    fn the_named_bytes_are_the_blob_rows_of_the_image() {
        let getters = nrtucode_facts::facts::getters();
        let size = |region: &str| {
            let symbol = format!("{NAMED}_{region}_get");
            let getter = getters.iter().find(|g| g.symbol == symbol);
            getter.map_or(0, |g| g.size as u64)
        };
        let regions = ["IRAM", "DRAM", "SRAM", "EXTRAM", "CAM", "TABLE"];
        assert_eq!(size("IRAM"), 81_344);
        assert_eq!(named_bytes(&getters), regions.map(size).iter().sum::<u64>());
        let release = getters.iter().filter(|g| g.image_name() != NAMED);
        assert_eq!(named_bytes(&release.cloned().collect::<Vec<_>>()), 0);
    }
}
