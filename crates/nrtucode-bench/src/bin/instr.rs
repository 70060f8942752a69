//! The callgrind driver: `instr <path> <passes>` runs one warm-up pass of `<path>` (lazy symbol
//! binding, cold caches), then `<passes>` passes inside `nrtucode_bench_measure`, the only
//! function the report binary (`--measure instructions`) tells callgrind to count (`--toggle-collect`).
//! `instr --env` prints the number of environment variables the process sees; `instr --list`
//! the paths.
#![allow(unsafe_code)] // the unmangled measure symbol and the paths' `# Safety` promise

use std::hint::black_box;
use std::process::ExitCode;

use nrtucode_bench::paths::{self, Path};

/// The measured region: `passes` passes of `run`.
// An unmangled name callgrind can toggle on; no other object defines it.
#[unsafe(no_mangle)]
#[inline(never)]
///
/// # Safety
///
/// As for [`Path::run`]: no other thread modifies the process environment meanwhile.
pub unsafe fn nrtucode_bench_measure(run: unsafe fn() -> u64, passes: u64) -> u64 {
    let mut acc = 0u64;
    for _ in 0..passes {
        // SAFETY: forwarded from this function's caller.
        acc ^= unsafe { run() };
    }
    acc
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["--env"] => {
            println!("{}", std::env::vars_os().count());
            ExitCode::SUCCESS
        }
        ["--list"] => {
            for p in paths::every() {
                println!("{}\t{}\t{}", p.name, p.calls, p.about);
            }
            ExitCode::SUCCESS
        }
        [name, passes] => {
            let (Some(Path { run, calls, .. }), Ok(passes)) =
                (paths::by_name(name), passes.parse::<u64>())
            else {
                eprintln!("usage: instr <path> <passes> | --env | --list");
                return ExitCode::FAILURE;
            };
            // SAFETY: this program is single-threaded and never modifies its environment.
            let acc = unsafe {
                black_box(run());
                nrtucode_bench_measure(black_box(run), black_box(passes))
            };
            println!("{name}\tcalls={}\tacc={acc:#x}", passes * calls as u64);
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("usage: instr <path> <passes> | --env | --list");
            ExitCode::FAILURE
        }
    }
}
