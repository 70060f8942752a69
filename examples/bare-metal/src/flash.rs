//! Feature `partition`: the flash region the partition is written to, as the memory map gives
//! it (`__nrtucode_partition_start` .. `__nrtucode_partition_end`, in memory/board.x and
//! memory/mps2-an386.x). Shared by the loader and `examples/partition_cost.rs`.

/// The partition's flash region, from the memory map. (Not in the update build: there the same
/// bytes are slot A of `update_flash`.)
#[cfg(not(feature = "update"))]
pub fn partition() -> &'static [u8] {
    unsafe extern "C" {
        static __nrtucode_partition_start: u8;
        static __nrtucode_partition_end: u8;
    }
    let start = &raw const __nrtucode_partition_start;
    let end = &raw const __nrtucode_partition_end;
    // At most isize::MAX bytes, as a slice may hold, whatever region a board's map names.
    let len = (end as usize)
        .saturating_sub(start as usize)
        .min(isize::MAX as usize);
    // SAFETY: the two symbols are the bounds of the partition's region in the memory map
    // (memory/board.x, memory/mps2-an386.x): memory-mapped flash (PSRAM under QEMU) that is
    // readable for the whole program, `len` bytes from `start` (0 if the map gets them the
    // wrong way round; never more than isize::MAX, the limit of a slice). Nothing in the
    // program writes it and the linker puts no Rust object there (the XFLASH region holds no
    // section in this build: no blob is linked), so no `&mut` can alias the slice.
    // Any byte value is a valid `u8`; `u8` needs no alignment.
    unsafe { core::slice::from_raw_parts(start, len) }
}

/// Feature `update`: the RAM region `src/nor.rs` emulates a NOR flash over (slot A, slot B,
/// the two state sectors), `__nrtucode_update_flash_start` .. `__nrtucode_update_flash_end` of
/// memory/mps2-an386.x. `None` after the first call: there is one flash.
#[cfg(feature = "update")]
pub fn update_flash() -> Option<&'static mut [u8]> {
    use core::sync::atomic::{AtomicBool, Ordering};
    static TAKEN: AtomicBool = AtomicBool::new(false);
    unsafe extern "C" {
        static mut __nrtucode_update_flash_start: u8;
        static mut __nrtucode_update_flash_end: u8;
    }
    if TAKEN.swap(true, Ordering::AcqRel) {
        return None;
    }
    let start = &raw mut __nrtucode_update_flash_start;
    let end = &raw mut __nrtucode_update_flash_end;
    let len = (end as usize)
        .saturating_sub(start as usize)
        .min(isize::MAX as usize);
    // SAFETY: the two symbols bound a region of the memory map (PSRAM under QEMU) that is
    // readable and writable for the whole program, `len` bytes from `start`, holding no Rust
    // object (the update build links no blob into XFLASH). `TAKEN` makes this the only `&mut`
    // to it, for the rest of the program; `partition()` (the same bytes) is not called in the
    // update build. Any byte value is a valid `u8`; `u8` needs no alignment.
    Some(unsafe { core::slice::from_raw_parts_mut(start, len) })
}

/// Feature `update`: the bytes the link delivered, as `-device loader` leaves them in the
/// download area: a little-endian length word at `__nrtucode_update_link_start`, the bytes
/// after it (at most what the area holds; empty when nothing was delivered: the length reads 0).
#[cfg(feature = "update")]
pub fn link() -> &'static [u8] {
    unsafe extern "C" {
        static __nrtucode_update_link_start: u32;
        static __nrtucode_update_link_end: u8;
    }
    let start = &raw const __nrtucode_update_link_start;
    let end = &raw const __nrtucode_update_link_end;
    // SAFETY: `start` is the 4-aligned first word of the download area (memory/mps2-an386.x),
    // readable memory no Rust object occupies; a volatile read, as the link's hardware writes it.
    let announced = unsafe { start.read_volatile() } as usize;
    let data = start.wrapping_add(1).cast::<u8>();
    let room = (end as usize).saturating_sub(data as usize);
    // SAFETY: `data .. data + room` lies in the download area, readable for the whole program;
    // nothing in the program writes it (only QEMU's loader, before the program starts), so no
    // `&mut` aliases the slice. At most `room` bytes, whatever the length word says.
    unsafe { core::slice::from_raw_parts(data, announced.min(room)) }
}

/// Feature `update`: the mailbox's four words (`__nrtucode_update_mailbox`), kept across a reset.
#[cfg(feature = "update")]
fn mailbox_word(i: usize) -> *mut u32 {
    unsafe extern "C" {
        static mut __nrtucode_update_mailbox: [u32; 4];
    }
    (&raw mut __nrtucode_update_mailbox)
        .cast::<u32>()
        .wrapping_add(i.min(3))
}

/// Feature `update`: reads the mailbox (zeros at power-on under QEMU; random on a board).
#[cfg(feature = "update")]
pub fn mailbox() -> [u32; 4] {
    // SAFETY: the mailbox is four 4-aligned words at the end of PSRAM (memory/mps2-an386.x),
    // no Rust object's memory, only ever accessed through these volatile reads and writes.
    core::array::from_fn(|i| unsafe { mailbox_word(i).read_volatile() })
}

/// Feature `update`: writes the mailbox.
#[cfg(feature = "update")]
pub fn set_mailbox(words: [u32; 4]) {
    for (i, w) in words.into_iter().enumerate() {
        // SAFETY: as in `mailbox`: four 4-aligned words of PSRAM no Rust object occupies.
        unsafe { mailbox_word(i).write_volatile(w) }
    }
}
