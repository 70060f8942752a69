//! Each blob exists once in a binary however many crates use the tables.
//!
//! This test binary is a consumer crate of its own: it evaluates the const tables here (its
//! `const` items are codegened in this crate) and calls the resolvers compiled in the library
//! crate. If the tables copied blob bytes into each crate that names them, this executable would
//! carry the bytes twice and the two paths would answer different addresses.
#![cfg(all(feature = "gen-cayman", feature = "flavor-perf"))]

use std::hint::black_box;

use nrtucode::catalog::IMAGE_LIST;
use nrtucode::{NoEnv, Region, get_memory_image, get_memory_image_const};

/// Resolved at compile time in this crate.
const FROM_CONST: Result<&[u8], nrtucode::ResolveErr> = get_memory_image_const(7, 0, 1);

fn occurrences(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .filter(|w| *w == needle)
        .count()
}

#[test]
fn const_table_and_resolver_share_one_address() {
    let from_const = black_box(FROM_CONST).unwrap();
    let from_table = black_box(IMAGE_LIST)[7].descriptors()[0]
        .region(Region::Iram)
        .unwrap();
    let from_fn = get_memory_image(black_box(7), 0, 1, &NoEnv).unwrap();
    assert_eq!(from_const.as_ptr(), from_fn.as_ptr());
    assert_eq!(from_table.as_ptr(), from_fn.as_ptr());
}

#[test]
fn the_payload_is_in_this_executable_once() {
    let blob = black_box(FROM_CONST).unwrap();
    // A 256-byte window from inside the blob: fixture filler, or real firmware, either way
    // unique to this blob.
    let needle = &blob[0x1000..0x1100];
    let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    assert_eq!(
        occurrences(&exe, needle),
        1,
        "blob bytes appear more than once"
    );
    // And the blob the table names from this crate is the same one.
    let other = black_box(IMAGE_LIST)[7].descriptors()[0]
        .region(Region::Dram)
        .unwrap();
    assert_eq!(occurrences(&exe, &other[..other.len().min(256)]), 1);
}
