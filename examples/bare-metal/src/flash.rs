//! Feature `partition`: the flash region the partition is written to, as the memory map gives
//! it (`__nrtucode_partition_start` .. `__nrtucode_partition_end`, in memory/board.x and
//! memory/mps2-an386.x). Shared by the loader and `examples/partition_cost.rs`.

/// The partition's flash region, from the memory map.
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
