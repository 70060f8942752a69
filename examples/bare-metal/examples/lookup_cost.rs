//! What one lookup costs on the Cortex-M, embedded tables against a verified partition, in
//! instructions counted by QEMU (`cargo xtask cost --what lookup`). The same program is built
//! twice: with the template's default `embedded` blobs (CAYMAN, PERF), and with
//! `--no-default-features --features partition` over the fixtures partition packed stored (no
//! deflate: a lookup answers the bytes in place), loaded at 0x21000000 and verified first.
//!
//! Four passes, each between the markers `cost_begin` and `cost_end`: the image mix, the
//! profiler mix, then each mix's loop with no lookup (the harness, to subtract). Every
//! lookup's answer (code, address, length) is folded into sums that are logged, so nothing is
//! optimised away, and inputs go through `black_box`. The mixes ask only what both builds
//! answer alike: CAYMAN's PERF images and profiler tables, and the error classes.
//! Feature `qemu` (with `embedded` or `partition`).
#![no_std]
#![no_main]

#[path = "../src/board.rs"]
#[cfg_attr(feature = "update", allow(dead_code))] // `reset` and `Outcome::Kept` are the updater's
mod board;
#[cfg(feature = "partition")]
#[path = "../src/flash.rs"]
#[cfg_attr(feature = "update", allow(dead_code))] // the link and the mailbox are the updater's
mod flash;

use core::hint::black_box;

use cortex_m as _; // its critical section, which defmt's logger takes
use cortex_m_rt::entry;
use nrtucode::ResolveErr;

use crate::board::Outcome;

#[cfg(feature = "partition")]
include!(concat!(env!("OUT_DIR"), "/partition_key.rs"));

/// `(idx, region, flavor)`: CAYMAN's PERF images (its first descriptor and a later slot's, every
/// region, NULL getters included), then every error class (index, empty slot, flavor not
/// found, region bounds).
const IMAGE_MIX: [(u32, i32, i32); 16] = [
    (7, 0, 1),
    (7, 1, 1),
    (7, 2, 1),
    (7, 3, 1),
    (8, 0, 1),
    (8, 1, 1),
    (9, 0, 1),
    (10, 1, 1),
    (13, 0, 1),
    (14, 1, 1),
    (38, 0, 1),
    (36, 0, 1),
    (7, 0, -1),
    (7, 0, 17),
    (7, 4, 1),
    (7, -1, 1),
];

/// `(idx, kind)`: CAYMAN's profiler tables, then the error classes.
const HWDECODE_MIX: [(u32, i32); 8] = [
    (7, 0),
    (7, 1),
    (8, 1),
    (9, 0),
    (0, 0),
    (7, 2),
    (7, -1),
    (38, 0),
];

/// Two sums of the answers: of (code, address, length), so that nothing is optimised away,
/// and of (code, length) alone, which both builds must agree on (the same fixture blobs).
type Sums = (u32, u32);

/// `answer` folded into `sums`.
#[inline(always)]
fn fold((all, same): Sums, answer: Result<(usize, usize), ResolveErr>) -> Sums {
    let (code, ptr, len) = match answer {
        Ok((ptr, len)) => (0, ptr as u32, len as u32),
        Err(e) => (e.code() as u32, 0, 0),
    };
    (
        all.rotate_left(5) ^ code ^ ptr ^ len,
        same.rotate_left(7) ^ code ^ len,
    )
}

/// Marks the start of a measured pass (QEMU's exec log shows the symbol).
#[unsafe(no_mangle)]
#[inline(never)]
extern "C" fn cost_begin(pass: u32) {
    black_box(pass);
}

/// Marks its end.
#[unsafe(no_mangle)]
#[inline(never)]
extern "C" fn cost_end(all: u32, same: u32) {
    black_box((all, same));
}

/// The image mix, each answer through `image`.
#[inline(always)]
fn image_pass(image: impl Fn(u32, i32, i32) -> Result<(usize, usize), ResolveErr>) -> Sums {
    let mut acc = (0, 0);
    for &(idx, region, flavor) in black_box(&IMAGE_MIX) {
        acc = fold(
            acc,
            image(black_box(idx), black_box(region), black_box(flavor)),
        );
    }
    acc
}

/// The profiler mix, each answer through `table`.
#[inline(always)]
fn hwdecode_pass(table: impl Fn(u32, i32) -> Result<(usize, usize), ResolveErr>) -> Sums {
    let mut acc = (0, 0);
    for &(idx, kind) in black_box(&HWDECODE_MIX) {
        acc = fold(acc, table(black_box(idx), black_box(kind)));
    }
    acc
}

/// Bytes as (address, length).
#[inline(always)]
fn parts(bytes: &[u8]) -> (usize, usize) {
    (bytes.as_ptr() as usize, bytes.len())
}

/// The four passes over `image` and `table`: their sums.
#[inline(always)]
fn passes(
    image: impl Fn(u32, i32, i32) -> Result<(usize, usize), ResolveErr>,
    table: impl Fn(u32, i32) -> Result<(usize, usize), ResolveErr>,
) -> [Sums; 4] {
    cost_begin(0);
    let images = image_pass(image);
    cost_end(images.0, images.1);
    cost_begin(1);
    let tables = hwdecode_pass(table);
    cost_end(tables.0, tables.1);
    // The loops alone: the inputs folded as an answer would be.
    cost_begin(2);
    let image_loop =
        image_pass(|idx, region, flavor| Ok((idx as usize, (region ^ flavor) as usize)));
    cost_end(image_loop.0, image_loop.1);
    cost_begin(3);
    let table_loop = hwdecode_pass(|idx, kind| Ok((idx as usize, kind as usize)));
    cost_end(table_loop.0, table_loop.1);
    [images, tables, image_loop, table_loop]
}

#[cfg(not(feature = "partition"))]
fn measure() -> Option<[Sums; 4]> {
    use nrtucode::{NoEnv, get_hwdecode_table, get_memory_image};
    Some(passes(
        |idx, region, flavor| get_memory_image(idx, region, flavor, &NoEnv).map(parts),
        |idx, kind| get_hwdecode_table(idx, kind).map(parts),
    ))
}

/// The partition's flash region; in the `update` build, the emulated flash whose slot A starts
/// at the same address (the partition's length comes from its header).
#[cfg(feature = "partition")]
fn partition_bytes() -> Option<&'static [u8]> {
    #[cfg(not(feature = "update"))]
    return Some(flash::partition());
    #[cfg(feature = "update")]
    return flash::update_flash().map(|flash| &*flash);
}

#[cfg(feature = "partition")]
fn measure() -> Option<[Sums; 4]> {
    use nrtucode::NoEnv;
    use nrtucode::partition::{Blob, Partition, Policy, TableClass};
    let policy = Policy {
        min_security_counter: 1,
        expected_class: TableClass::Full,
    };
    let partition = Partition::parse(black_box(partition_bytes()?))
        .ok()?
        .verify(&PARTITION_KEY, &policy)
        .ok()?
        .check_blobs(&mut nrtucode::digest::SoftSha256::new())
        .ok()?;
    // The bytes in place, as the checked partition answers them (the partition is packed
    // stored, so every blob has them).
    let in_place = |blob: Blob<'_>| blob.bytes().map_or((0, 0), parts);
    Some(passes(
        |idx, region, flavor| {
            partition
                .get_memory_image(idx, region, flavor, &NoEnv)
                .map(in_place)
        },
        |idx, kind| partition.get_hwdecode_table(idx, kind).map(in_place),
    ))
}

#[entry]
fn main() -> ! {
    let Some(sums) = measure() else {
        defmt::error!("the partition was refused");
        board::finish(Outcome::Failed);
    };
    defmt::info!(
        "lookups: {} image, {} hwdecode; codes and lengths {=u32:#x} {=u32:#x}; all {=u32:#x} {=u32:#x}",
        IMAGE_MIX.len(),
        HWDECODE_MIX.len(),
        sums[0].1,
        sums[1].1,
        sums[0].0,
        sums[1].0,
    );
    board::finish(Outcome::Loaded)
}
