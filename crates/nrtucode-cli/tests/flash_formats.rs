//! `nrtucode pack --format bin|ihex|elf|uf2` and `inspect` of each form, end to end through the
//! binary: every form of one partition inspects as verified at the address of the template's
//! memory map; a form cut, corrupted or placed elsewhere is refused with its reason; usage
//! errors write nothing; the template README's board block packs and checks what its flashing
//! lines name, at the board map's address.
//!
//! `third_party_readers_give_back_the_same_bytes` (ignored by default: it needs binutils and
//! the `adafruit-uf2` and `pyocd` packages; `cargo xtask ci` runs it) reads each form with
//! binutils' `objcopy` and `readelf`, the UF2 package's `uf2conv` (`python3 -m
//! adafruit_uf2.uf2conv`) and pyOCD's file readers (what `pyocd load` would write).

mod partition_common;
use partition_common::{key, nrtucode, public, root, text};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// QEMU's map: XFLASH at 0x2100_0000, 16 MiB (the full fixtures' partition is 9.7 MB).
fn qemu_map() -> PathBuf {
    root().join("examples/bare-metal/memory/mps2-an386.x")
}

/// The board's map: XFLASH at 0x9000_0000.
fn board_map() -> PathBuf {
    root().join("examples/bare-metal/memory/board.x")
}

fn run(dir: &Path, args: &[&str]) -> Output {
    nrtucode(args, dir)
}

/// Packs the front fixtures into `name` with `extra`, and asserts success.
fn pack(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let key = key().display().to_string();
    let mut args = vec![
        "pack",
        "--fixtures",
        "front",
        "--key",
        &key,
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = run(dir, &args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    out
}

/// `inspect FILE --public-key … --json [extra]`: the exit code and the document.
fn inspect(dir: &Path, file: &Path, extra: &[&str]) -> (Option<i32>, serde_json::Value) {
    let public = public().display().to_string();
    let mut args = vec![
        "inspect",
        file.to_str().unwrap(),
        "--public-key",
        &public,
        "--json",
    ];
    args.extend_from_slice(extra);
    let o = run(dir, &args);
    let doc = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&o.stdout), text(&o.stderr)));
    (o.status.code(), doc)
}

#[test]
fn every_form_inspects_as_verified_at_the_memory_maps_address() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let map = qemu_map().display().to_string();
    let bin = pack(dir, "p.bin", &[]);
    let bytes = std::fs::read(&bin).unwrap();
    let (code, plain) = inspect(dir, &bin, &["--memory-map", &map]);
    assert_eq!(code, Some(0));
    assert_eq!(plain["verdict"], "verified");
    assert_eq!(plain["checks"]["memory_map"], "ok");
    assert!(plain["flash"].is_null());
    for (format, family) in [("ihex", None), ("elf", None), ("uf2", Some("rp2040"))] {
        let name = format!("p.{format}");
        let mut extra = vec!["--format", format, "--memory-map", &map];
        if let Some(f) = family {
            extra.extend(["--uf2-family", f]);
        }
        let file = pack(dir, &name, &extra);
        assert_ne!(std::fs::read(&file).unwrap(), bytes, "{format}");
        let (code, doc) = inspect(dir, &file, &["--memory-map", &map]);
        assert_eq!(code, Some(0), "{format}: {doc}");
        assert_eq!(doc["verdict"], "verified", "{format}");
        assert_eq!(doc["checks"]["memory_map"], "ok", "{format}");
        assert_eq!(doc["flash"]["format"], format);
        assert_eq!(doc["flash"]["base_address"], 0x2100_0000);
        assert_eq!(
            doc["flash"]["end_address"],
            0x2100_0000 + bytes.len() as u64
        );
        let family_id = family.map(|_| 0xe48b_ff56u32);
        assert_eq!(doc["flash"]["uf2_family"], serde_json::json!(family_id));
        // The same partition: the same header and table of contents as the bin file's.
        assert_eq!(doc["header"], plain["header"], "{format}");
        assert_eq!(doc["toc"], plain["toc"], "{format}");
    }
}

#[test]
fn a_file_for_another_address_or_too_large_for_the_region_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let board = board_map().display().to_string();
    let hex = pack(
        dir,
        "p.hex",
        &["--format", "ihex", "--base-address", "0x21000000"],
    );
    let (code, doc) = inspect(dir, &hex, &["--memory-map", &board]);
    assert_eq!(code, Some(65));
    assert_eq!(doc["verdict"], "refused");
    assert_eq!(
        doc["error"],
        "the file is for 0x21000000; the memory map's __nrtucode_partition_start is 0x90000000"
    );
    // A region smaller than the partition: pack refuses it and writes nothing; inspect of the
    // bin file refuses it too.
    let small = dir.join("small.x");
    std::fs::write(
        &small,
        "MEMORY { XFLASH : ORIGIN = 0x90000000, LENGTH = 64K }\n\
         PROVIDE(__nrtucode_partition_start = ORIGIN(XFLASH));\n\
         PROVIDE(__nrtucode_partition_end = ORIGIN(XFLASH) + LENGTH(XFLASH));\n",
    )
    .unwrap();
    let small = small.display().to_string();
    let out = dir.join("never.elf");
    let key = key().display().to_string();
    let o = run(
        dir,
        &[
            "pack",
            "--fixtures",
            "front",
            "--key",
            &key,
            "--format",
            "elf",
            "--memory-map",
            &small,
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(65));
    assert!(
        text(&o.stderr).contains("the memory map's region 0x90000000..0x90010000 holds 65536"),
        "{}",
        text(&o.stderr)
    );
    assert!(!out.exists());
    let bin = pack(dir, "p.bin", &[]);
    let (code, doc) = inspect(dir, &bin, &["--memory-map", &small]);
    assert_eq!(code, Some(65));
    assert!(
        doc["checks"]["memory_map"]
            .as_str()
            .unwrap()
            .ends_with("holds 65536")
    );
}

#[test]
fn a_cut_or_corrupted_form_is_refused_with_its_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let map = qemu_map().display().to_string();
    let hex = pack(dir, "p.hex", &["--format", "ihex", "--memory-map", &map]);
    let uf2 = pack(
        dir,
        "p.uf2",
        &[
            "--format",
            "uf2",
            "--memory-map",
            &map,
            "--uf2-family",
            "rp2040",
        ],
    );
    let elf = pack(dir, "p.elf", &["--format", "elf", "--memory-map", &map]);
    let refused = |file: &Path, bytes: Vec<u8>, expected: &str| {
        let bad = file.with_extension("bad");
        std::fs::write(&bad, bytes).unwrap();
        let o = run(dir, &["inspect", bad.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(65), "{expected}");
        let stderr = text(&o.stderr);
        assert!(stderr.contains(expected), "{expected:?} not in {stderr}");
    };
    let hex_text = std::fs::read_to_string(&hex).unwrap();
    // A data digit changed on line 3: its checksum no longer holds.
    let mut lines: Vec<String> = hex_text.lines().map(str::to_owned).collect();
    let digit = if lines[2].as_bytes()[9] == b'0' {
        "1"
    } else {
        "0"
    };
    lines[2].replace_range(9..10, digit);
    refused(
        &hex,
        (lines.join("\n") + "\n").into_bytes(),
        "Intel HEX line 3: checksum mismatch",
    );
    // The last data line dropped with the end: cut short.
    let cut: Vec<&str> = hex_text
        .lines()
        .take(hex_text.lines().count() - 1)
        .collect();
    refused(
        &hex,
        (cut.join("\n") + "\n").into_bytes(),
        "no end-of-file record",
    );
    // A data record in the middle removed: a gap.
    let mut gap: Vec<&str> = hex_text.lines().collect();
    gap.remove(10);
    refused(
        &hex,
        (gap.join("\n") + "\n").into_bytes(),
        "no data from 0x21000090 to 0x210000a0",
    );
    // UF2: a block removed (the count no longer holds), a block's number changed.
    let uf2_bytes = std::fs::read(&uf2).unwrap();
    let mut short = uf2_bytes.clone();
    short.drain(512..1024);
    refused(&uf2, short, "UF2 block 0: says the file has");
    let mut renumbered = uf2_bytes;
    renumbered[512 + 20] ^= 1;
    refused(&uf2, renumbered, "UF2 block 1: numbered 0, expected 1");
    // ELF: cut in the middle of its segment.
    let mut elf_bytes = std::fs::read(&elf).unwrap();
    elf_bytes.truncate(elf_bytes.len() / 2);
    refused(&elf, elf_bytes, "ELF: ");
}

#[test]
fn usage_errors_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let key = key().display().to_string();
    let out = dir.join("out");
    let o_path = out.to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (
            &["--format", "elf"],
            "--format elf writes the address into the file",
        ),
        (
            &[
                "--format",
                "ihex",
                "--base-address",
                "0x90000000",
                "--uf2-family",
                "rp2040",
            ],
            "--uf2-family is for --format uf2, not ihex",
        ),
        (
            &["--format", "elf", "--base-address", "0x90000008"],
            "is not a multiple of 16",
        ),
        (
            &[
                "--format",
                "uf2",
                "--base-address",
                "0x90000010",
                "--uf2-family",
                "rp2040",
            ],
            "is not a multiple of 256",
        ),
        (
            &["--format", "uf2", "--base-address", "0x90000000"],
            "--format uf2 needs --uf2-family",
        ),
        (
            &["--format", "ihex", "--base-address", "0x100000000"],
            "beyond the 32-bit address space",
        ),
    ];
    for (extra, expected) in cases {
        let mut args = vec!["pack", "--fixtures", "front", "--key", &key, "-o", o_path];
        args.extend_from_slice(extra);
        let o = run(dir, &args);
        assert_eq!(o.status.code(), Some(64), "{extra:?}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains(expected),
            "{expected:?} not in {}",
            text(&o.stderr)
        );
        assert!(!out.exists(), "{extra:?}");
    }
    let o = run(
        dir,
        &[
            "pack",
            "--fixtures",
            "front",
            "--key",
            &key,
            "-o",
            o_path,
            "--format",
            "uf2",
            "--base-address",
            "0",
            "--uf2-family",
            "rp2041",
        ],
    );
    assert_eq!(o.status.code(), Some(64));
    assert!(
        text(&o.stderr).contains("known names: rp2040"),
        "{}",
        text(&o.stderr)
    );
    let o = run(
        dir,
        &[
            "pack",
            "--fixtures",
            "front",
            "--key",
            &key,
            "-o",
            o_path,
            "--memory-map",
            "a.x",
            "--base-address",
            "0",
        ],
    );
    assert_eq!(o.status.code(), Some(64));
    assert!(!out.exists());
}

/// The Python that has the `adafruit-uf2` and `pyocd` packages (.ci/run installs them).
const PYTHON: &str = "python3";
/// Its converter, run as a module (no dependence on where pip put the script).
const UF2CONV: &str = "adafruit_uf2.uf2conv";

/// What `pyocd load FILE` would write without a probe: its `FileProgrammer`'s ELF and Intel HEX
/// readers (pyOCD 0.46, as .ci/run pins it) feeding a recorder instead of a flash loader; prints
/// each chunk's address and length, writes their bytes to the second argument.
const PYOCD_READ: &str = r#"
import sys
from pyocd.flash.file_programmer import FileProgrammer
class Recorder:
    def __init__(self):
        self.chunks = []
    def add_data(self, address, data):
        self.chunks.append((address, bytes(data)))
programmer = FileProgrammer.__new__(FileProgrammer)
programmer._loader = Recorder()
path, out = sys.argv[1], sys.argv[2]
elf = path.endswith(".elf")
with open(path, "rb" if elf else "r") as f:
    (programmer._program_elf if elf else programmer._program_hex)(f)
for address, data in programmer._loader.chunks:
    print(f"{address:#010x} {len(data)}")
open(out, "wb").write(b"".join(d for _, d in sorted(programmer._loader.chunks)))
"#;

/// `PROGRAM ARGS`, which must exist and succeed: its standard output.
fn tool(program: &str, args: &[&str]) -> String {
    let o = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e} (this test needs it: see .ci/run)"));
    assert!(
        o.status.success(),
        "{program} {args:?}: {}",
        text(&o.stderr)
    );
    text(&o.stdout)
}

/// `gdb-multiarch -batch` with `commands` (each an `-ex`) over `file`: its standard output.
fn gdb(file: &Path, commands: &[&str]) -> String {
    let mut args = vec!["-nx".to_owned(), "-batch".to_owned()];
    for c in commands {
        args.push("-ex".to_owned());
        args.push((*c).to_owned());
    }
    args.push(file.to_str().unwrap().to_owned());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    tool("gdb-multiarch", &refs)
}

#[test]
#[ignore = "needs arm-none-eabi-objcopy (binutils-arm-none-eabi) and gdb-multiarch; cargo xtask ci runs it"]
fn the_elf_form_is_read_by_the_targets_objcopy_and_gdb() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let map = qemu_map().display().to_string();
    let bytes = std::fs::read(pack(dir, "p.bin", &[])).unwrap();
    // The default machine is ARM (the Cortex-M template's): the ARM toolchain's objcopy, which
    // refuses a machine-less ELF ("Unable to recognise the format"), gives the bytes back.
    let elf = pack(dir, "p.elf", &["--format", "elf", "--memory-map", &map]);
    let back = dir.join("back.bin");
    tool(
        "arm-none-eabi-objcopy",
        &[
            "-O",
            "binary",
            elf.to_str().unwrap(),
            back.to_str().unwrap(),
        ],
    );
    assert_eq!(
        std::fs::read(&back).unwrap(),
        bytes,
        "arm-none-eabi-objcopy"
    );
    // GDB (the BFD its `load` uses, as through OpenOCD or probe-rs) reads it as ARM, the
    // section at the memory map's address.
    let end = 0x2100_0000 + bytes.len();
    let info = gdb(&elf, &["info files"]);
    assert!(info.contains("file type elf32-littlearm"), "{info}");
    assert!(
        info.contains(&format!("0x21000000 - {end:#010x} is .nrtucode_partition")),
        "{info}"
    );
    // --machine riscv: a riscv32 ELF, the same bytes at the same address.
    let riscv = pack(
        dir,
        "p-riscv.elf",
        &[
            "--format",
            "elf",
            "--memory-map",
            &map,
            "--machine",
            "riscv",
        ],
    );
    let info = gdb(&riscv, &["info files"]);
    assert!(info.contains("file type elf32-littleriscv"), "{info}");
    assert!(
        info.contains(&format!("0x21000000 - {end:#010x} is .nrtucode_partition")),
        "{info}"
    );
}

#[test]
#[ignore = "needs binutils (objcopy, readelf) and python3 with adafruit-uf2 and pyocd (pip install adafruit-uf2 pyocd); cargo xtask ci runs it"]
fn third_party_readers_give_back_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let map = qemu_map().display().to_string();
    let bin = pack(dir, "p.bin", &[]);
    let bytes = std::fs::read(&bin).unwrap();
    let hex = pack(dir, "p.hex", &["--format", "ihex", "--memory-map", &map]);
    let elf = pack(dir, "p.elf", &["--format", "elf", "--memory-map", &map]);
    let uf2 = pack(
        dir,
        "p.uf2",
        &[
            "--format",
            "uf2",
            "--memory-map",
            &map,
            "--uf2-family",
            "rp2350-arm-s",
        ],
    );
    let s = |p: &Path| p.to_str().unwrap().to_owned();
    // Intel HEX: binutils back to the same bytes.
    let from_hex = dir.join("from-hex.bin");
    tool(
        "objcopy",
        &["-I", "ihex", "-O", "binary", &s(&hex), &s(&from_hex)],
    );
    assert_eq!(std::fs::read(&from_hex).unwrap(), bytes, "objcopy -I ihex");
    // ELF: one PT_LOAD at the address, R only; binutils back to the same bytes (a host
    // objcopy reads an ELF of another machine as elf32-little).
    let segments = tool("readelf", &["-lW", &s(&elf)]);
    let loads: Vec<&str> = segments
        .lines()
        .filter(|l| l.trim_start().starts_with("LOAD"))
        .collect();
    assert_eq!(loads.len(), 1, "{segments}");
    let fields: Vec<&str> = loads[0].split_whitespace().collect();
    assert_eq!(&fields[2..4], ["0x21000000", "0x21000000"], "{segments}");
    assert_eq!(fields[4], format!("{:#07x}", bytes.len()), "{segments}");
    assert_eq!(fields[6], "R", "{segments}");
    assert!(segments.contains("Entry point 0x0"), "{segments}");
    let sections = tool("readelf", &["-SW", &s(&elf)]);
    assert!(
        sections.contains(".nrtucode_partition PROGBITS        21000000"),
        "{sections}"
    );
    let from_elf = dir.join("from-elf.bin");
    tool(
        "objcopy",
        &[
            "-I",
            "elf32-little",
            "-O",
            "binary",
            &s(&elf),
            &s(&from_elf),
        ],
    );
    assert_eq!(
        std::fs::read(&from_elf).unwrap(),
        bytes,
        "objcopy -O binary"
    );
    // UF2: the package's converter back to the bytes (then the 0xFF fill of the last block),
    // its header report naming the family and the address.
    let from_uf2 = dir.join("from-uf2.bin");
    let info = tool(PYTHON, &["-m", UF2CONV, "-i", &s(&uf2)]);
    assert!(
        info.contains("Family ID is RP2350_ARM_S, hex value is 0xe48bff59"),
        "{info}"
    );
    assert!(info.contains("Target Address is 0x21000000"), "{info}");
    tool(
        PYTHON,
        &["-m", UF2CONV, "-c", "-o", &s(&from_uf2), &s(&uf2)],
    );
    let back = std::fs::read(&from_uf2).unwrap();
    assert_eq!(&back[..bytes.len()], &bytes[..], "uf2conv -c");
    assert!(back.len() - bytes.len() < 256 && back[bytes.len()..].iter().all(|&b| b == 0xff));
    // pyOCD's own file readers (`pyocd load` without a probe): what it would write, and where.
    let mut from_pyocd = Vec::new();
    for file in [&hex, &elf] {
        let out = file.with_extension("pyocd.bin");
        let chunks = tool(PYTHON, &["-c", PYOCD_READ, &s(file), &s(&out)]);
        assert_eq!(
            chunks.trim(),
            format!("0x21000000 {}", bytes.len()),
            "{}",
            file.display()
        );
        assert_eq!(
            std::fs::read(&out).unwrap(),
            bytes,
            "pyOCD reading {}",
            file.display()
        );
        from_pyocd.push(out);
    }
    // The converters' bytes inspect as verified: the device's checks hold after the trip.
    for file in [
        &from_hex,
        &from_elf,
        &from_uf2,
        &from_pyocd[0],
        &from_pyocd[1],
    ] {
        let (code, doc) = inspect(dir, file, &[]);
        assert_eq!(
            (code, &doc["verdict"]),
            (Some(0), &"verified".into()),
            "{}",
            file.display()
        );
    }
    // The family names this tool knows are the package's registry's.
    let families = tool(
        PYTHON,
        &[
            "-c",
            "import adafruit_uf2, json, os; print(json.dumps(json.load(open(os.path.join(os.path.dirname(adafruit_uf2.__file__), 'uf2families.json')))))",
        ],
    );
    let registry: Vec<serde_json::Value> = serde_json::from_str(&families).unwrap();
    let key = key().display().to_string();
    let out = dir.join("family.uf2");
    let family = |name: &str| {
        run(
            dir,
            &[
                "pack",
                "--fixtures",
                "front",
                "--key",
                &key,
                "--format",
                "uf2",
                "--base-address",
                "0",
                "--uf2-family",
                name,
                "-o",
                out.to_str().unwrap(),
            ],
        )
    };
    // The names the tool knows, as its refusal of an unknown one lists them.
    let refusal = text(&family("no-such-family").stderr);
    let known = refusal
        .split("known names: ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .unwrap_or_else(|| panic!("{refusal}"));
    let known: Vec<&str> = known.split(", ").collect();
    assert!(known.len() >= 30 && known.contains(&"rp2040"), "{known:?}");
    for name in known {
        let entry = registry
            .iter()
            .find(|e| {
                e["short_name"]
                    .as_str()
                    .unwrap()
                    .to_ascii_lowercase()
                    .replace('_', "-")
                    == name
            })
            .unwrap_or_else(|| panic!("{name} is not in the package's uf2families.json"));
        let id = u32::from_str_radix(entry["id"].as_str().unwrap().trim_start_matches("0x"), 16)
            .unwrap();
        let o = family(name);
        let said = text(&o.stdout);
        assert!(
            said.contains(&format!("UF2 family {id:#010x} ({name})")),
            "{name}: {said}{}",
            text(&o.stderr)
        );
    }
}

/// The sh block of the template README after the line starting with `marker`.
fn readme_block(marker: &str) -> String {
    let text = std::fs::read_to_string(root().join("examples/bare-metal/README.md")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with(marker))
        .unwrap_or_else(|| panic!("no {marker} in the template README"));
    assert_eq!(lines[start + 1], "```sh", "{marker}");
    let end = (start + 2..lines.len())
        .find(|&i| lines[i] == "```")
        .unwrap();
    lines[start + 2..end].join("\n")
}

/// The line of `block` that starts with `prefix`.
fn line<'a>(block: &'a str, prefix: &str) -> &'a str {
    block
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting with {prefix:?} in\n{block}"))
}

#[test]
fn the_templates_board_block_packs_and_checks_what_its_flashing_lines_write() {
    let board = readme_block("<!-- board-flashing:");
    let qemu = readme_block("<!-- partition-walkthrough:");
    // The board's build is the QEMU one without `qemu`, and its ELF is found as the QEMU block
    // finds it (`cargo xtask qemu --case partition` runs that block): the path cargo reports,
    // wherever its target directory is.
    let build = "elf=$(cd examples/bare-metal && NRTUCODE_PARTITION_KEY=test cargo build";
    assert_eq!(line(&board, build), line(&qemu, build).replace("qemu,", ""));
    let located = "  --message-format=json-render-diagnostics | ";
    assert_eq!(line(&board, located), line(&qemu, located));
    assert_eq!(
        line(&board, located),
        r#"  --message-format=json-render-diagnostics | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p')"#
    );
    // No line types an address: the memory maps are the one place.
    for l in board.lines().chain(qemu.lines()) {
        assert!(
            !l.contains("0x") && !l.contains("addr="),
            "an address typed: {l}"
        );
    }
    assert_eq!(
        line(&board, "map="),
        "map=examples/bare-metal/memory/board.x   # the board's memory map: the partition's address"
    );
    // The nrtucode lines as written, from the repository's root (the tool: this build's, for
    // the block's `cargo run`; the library: the front look-alike; the UF2 family: rp2040).
    let tmp = tempfile::tempdir().unwrap();
    use nrtucode_lookalike::{LibraryBuild, OptLevel, Options, build_shared_object, write_sources};
    let la = tmp.path().join("la");
    std::fs::create_dir_all(&la).unwrap();
    let written = write_sources(&la, &Options::new(LibraryBuild::Front)).unwrap();
    let lib = la.join("libnrtucode.so");
    build_shared_object(&written.c_source, &lib, OptLevel::O2, false)
        .expect("gcc builds the look-alike");
    let out = tmp.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let tool_lines: Vec<String> = board
        .lines()
        .filter(|l| l.starts_with("map=") || l.starts_with("out=") || l.starts_with("nrtucode "))
        .map(|l| l.replace("<your family>", "rp2040"))
        .collect();
    assert_eq!(tool_lines.len(), 6, "{tool_lines:?}");
    let script = format!(
        "nrtucode() {{ \"$NRTUCODE\" \"$@\"; }}\n{}",
        tool_lines.join("\n")
    );
    let o = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &script])
        .current_dir(root())
        .env("NRTUCODE", env!("CARGO_BIN_EXE_nrtucode"))
        .env("OUT", &out)
        .env("vendor_lib", &lib)
        .env_remove("NEURON_UCODE_FLAVOR")
        .env_remove("NRTUCODE_MPLUS_ON_MARIANA")
        .output()
        .unwrap();
    let said = text(&o.stdout);
    assert!(o.status.success(), "{said}{}", text(&o.stderr));
    assert!(said.contains("VERIFIED"), "{said}");
    assert!(
        said.contains("flashed as              elf for 0x90000000.."),
        "{said}"
    );
    assert!(said.contains("memory map check        ok"), "{said}");
    // Each flashing line names a file the pack lines wrote, in the form that tool reads.
    let forms = [
        ("probe-rs download", "nrtucode-part.elf", &b"\x7fELF"[..]),
        ("openocd", "nrtucode-part.hex", &b":"[..]),
        ("pyocd load", "nrtucode-part.hex", &b":"[..]),
        ("cp ", "nrtucode-part.uf2", &b"UF2\n"[..]),
    ];
    for (tool, file, magic) in forms {
        assert!(
            line(&board, tool).contains(&format!("$out/{file}")),
            "{tool}"
        );
        let bytes = std::fs::read(out.join(file)).unwrap();
        assert!(bytes.starts_with(magic), "{file}");
        let (code, doc) = inspect(
            tmp.path(),
            &out.join(file),
            &["--memory-map", &board_map().display().to_string()],
        );
        assert_eq!(code, Some(0), "{file}: {doc}");
        assert_eq!(doc["flash"]["base_address"], 0x9000_0000_u32, "{file}");
    }
    assert!(line(&board, "probe-rs run").ends_with("\"$elf\""));
}
