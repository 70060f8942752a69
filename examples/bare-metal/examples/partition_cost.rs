//! What reading a signed partition costs on the Cortex-M, in instructions counted by QEMU
//! (`cargo xtask partition-cost`, which loads a fixtures partition packed with
//! `--compress deflate` at 0x21000000): each step runs once between the markers `cost_begin`
//! and `cost_end`, as a boot runs it: parse the structure, verify (the ed25519 signature over
//! the tables, then the policy), resolve one image (its handle), copy-check it into its window
//! (`load_into`), and load the engine's deflate-compressed PROF_TABLE (its stream checked,
//! then decode-checked). Feature `deflate`
//! (with `partition` and `qemu`), `--no-default-features`.
#![no_std]
#![no_main]

#[path = "../src/board.rs"]
mod board;
#[path = "../src/flash.rs"]
mod flash;

use core::hint::black_box;

use cortex_m_rt::entry;
use nrtucode::partition::{Loader, Partition, Policy, TableClass};
use nrtucode::{Flavor, ImageIndex, NoEnv, ProfKind, Region};

use crate::board::Outcome;

include!(concat!(env!("OUT_DIR"), "/partition_key.rs"));

/// The steps, in the order a boot runs them.
const STEPS: [&str; 5] = [
    "parse",
    "verify (signature, policy)",
    "resolve_image",
    "load_into (stored: copy-check)",
    "resolve_hwdecode, load_into (deflate: check, decode-check)",
];

/// Marks the start of a measured step (QEMU's exec log shows the symbol).
#[unsafe(no_mangle)]
#[inline(never)]
extern "C" fn cost_begin(step: u32) {
    black_box(step);
}

/// Marks its end.
#[unsafe(no_mangle)]
#[inline(never)]
extern "C" fn cost_end(ok: bool) {
    black_box(ok);
}

/// The buffers: the IRAM image's window, PROF_TABLE's, and the loader (SHA-256, inflater).
struct Memory {
    image: [u8; 96 * 1024],
    table: [u8; 8 * 1024],
    loader: Loader,
}

#[entry]
fn main() -> ! {
    let Some(memory) = cortex_m::singleton!(: Memory = Memory {
        image: [0; 96 * 1024],
        table: [0; 8 * 1024],
        loader: Loader::new(),
    }) else {
        board::finish(Outcome::Failed);
    };
    let flash = black_box(flash::partition());
    let policy = black_box(Policy {
        min_security_counter: 1,
        expected_class: TableClass::Full,
    });
    let engine = black_box(ImageIndex::CAYMAN_NX_ACT);
    let mut ok = [false; 5];

    cost_begin(0);
    let parsed = Partition::parse(flash);
    cost_end(parsed.is_ok());
    let Ok(parsed) = parsed else {
        board::finish(Outcome::Failed);
    };
    ok[0] = true;

    cost_begin(1);
    let verified = black_box(parsed).verify(&PARTITION_KEY, &policy);
    cost_end(verified.is_ok());
    let Ok(partition) = verified else {
        board::finish(Outcome::Failed);
    };
    ok[1] = true;

    cost_begin(2);
    let image = partition.resolve_image(engine, Region::Iram, Flavor::Perf, &NoEnv);
    cost_end(image.is_ok());
    let Ok(image) = image else {
        board::finish(Outcome::Failed);
    };
    ok[2] = true;

    cost_begin(3);
    let copied = black_box(image).load_into(&mut memory.image, &mut memory.loader);
    cost_end(copied.is_ok());
    ok[3] = copied.is_ok();

    cost_begin(4);
    let decoded = partition
        .resolve_hwdecode(engine, ProfKind::Table)
        .map_err(|_| ())
        .and_then(|table| {
            table
                .load_into(&mut memory.table, &mut memory.loader)
                .map_err(|_| ())
        });
    cost_end(decoded.is_ok());
    ok[4] = decoded.is_ok();

    for (step, ok) in STEPS.iter().zip(ok) {
        defmt::info!("{=str}: ok {}", step, ok);
    }
    defmt::info!(
        "sizes: IRAM {} bytes, PROF_TABLE {} bytes decoded",
        image.len(),
        decoded.map_or(0, <[u8]>::len)
    );
    board::finish(if ok.iter().all(|&ok| ok) {
        Outcome::Loaded
    } else {
        Outcome::Failed
    })
}
