//! Writes the seed corpus of the `carve` fuzz target into the directory given as the only
//! argument: hand-built shared objects of a few KB (`nrtucode-test-elf`: every getter shape,
//! both hash styles, RELA and RELR, tables by symbol and through plain or large-model
//! resolvers, with and without section headers) and getter code on its own.
//!
//! `cargo run -p nrtucode-test-elf --example fuzz_seeds -- fuzz/corpus/carve` (`cargo xtask fuzz`).

use std::path::PathBuf;
use std::process::ExitCode;

use nrtucode_test_elf::{GetterShape, HashStyle, TinyElf};

fn seeds() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for (i, shape) in GetterShape::ALL.iter().enumerate() {
        let mut getters = [*shape; 4];
        getters[3] = GetterShape::ALL[(i + 1) % GetterShape::ALL.len()];
        for (hash, relr, table_symbols, large, section_headers) in [
            (HashStyle::Gnu, false, true, false, true),
            (HashStyle::Sysv, true, false, false, false),
            (HashStyle::Gnu, false, false, true, false),
        ] {
            let spec = TinyElf {
                getters,
                table_symbols,
                large_model_resolvers: large,
                hash,
                relr,
                section_headers,
            };
            let name = format!(
                "tiny-{shape:?}-{hash:?}{}{}{}{}",
                if relr { "-relr" } else { "" },
                if table_symbols {
                    "-symbols"
                } else {
                    "-resolvers"
                },
                if large { "-large" } else { "" },
                if section_headers { "" } else { "-no-shdr" },
            );
            out.push((name, spec.build()));
        }
    }
    // The getter code alone, as the stub decoder sees it: the text of a vendor-stub library
    // starts at 0x800.
    for shape in GetterShape::ALL {
        let data = TinyElf {
            getters: [shape; 4],
            ..TinyElf::default()
        }
        .build();
        out.push((format!("code-{shape:?}"), data[0x800..0x880].to_vec()));
    }
    out
}

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: fuzz_seeds DIR");
        return ExitCode::from(2);
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("fuzz_seeds: {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    for (name, bytes) in seeds() {
        let path = dir.join(name);
        if let Err(e) = std::fs::write(&path, bytes) {
            eprintln!("fuzz_seeds: {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
