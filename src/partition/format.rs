//! The partition format, version 2, as constants: every offset and size of
//! `docs/partition.md`, in one place, for the parser here and the writer (`nrtucode-pack`).
//! Hidden from the documentation and outside the crate's semver: `docs/partition.md` is the
//! format's contract, and its version ([`VERSION`]) is what a change of layout bumps.
//!
//! All integers are little-endian. The file is: the header ([`HEADER_LEN`] bytes), the
//! `image_list` slots, the descriptors, the `hwdecode_table_list` slots, the table of contents,
//! the signature, zero padding to [`BLOB_ALIGN`], then the blobs, each at a multiple of
//! [`BLOB_ALIGN`]. The signature covers every byte before it; the blob bytes are covered by the
//! SHA-256 digests in the table of contents: one of the bytes as stored (checked before anything
//! reads them, a decoder included) and one of the bytes as decoded.

/// The first eight bytes of a partition.
pub const MAGIC: [u8; 8] = *b"NRTUPART";
/// The format version this crate reads and `nrtucode pack` writes.
/// Version 1 had one digest per table-of-contents entry, of the decoded bytes only: a changed
/// byte of a compressed stream that still decoded to the same bytes went unnoticed, and every
/// stored byte reached the inflater before anything vouched for it.
pub const VERSION: u16 = 2;
/// Bytes of the header.
pub const HEADER_LEN: usize = 96;
/// Alignment of the blob area and of every blob (the same as the embedded blobs').
pub const BLOB_ALIGN: usize = 16;

// Header fields: byte offsets.
/// `[u8; 8]` magic.
pub const H_MAGIC: usize = 0x00;
/// `u16` format version.
pub const H_VERSION: usize = 0x08;
/// `u16` header length ([`HEADER_LEN`]).
pub const H_HEADER_LEN: usize = 0x0A;
/// `u32` flags ([`FLAG_SIGNED`]; every other bit zero).
pub const H_FLAGS: usize = 0x0C;
/// `u32` total length of the partition in bytes.
pub const H_TOTAL_LEN: usize = 0x10;
/// `u32` offset of the blob area.
pub const H_BLOBS_OFF: usize = 0x14;
/// `u32` security counter.
pub const H_SECURITY_COUNTER: usize = 0x18;
/// `u8` table class ([`CLASS_FULL`], [`CLASS_FRONT`]).
pub const H_CLASS: usize = 0x1C;
/// `u8` where the blobs come from ([`SOURCE_BUILD_ID`], [`SOURCE_NO_BUILD_ID`],
/// [`SOURCE_FIXTURES`]).
pub const H_SOURCE: usize = 0x1D;
/// `u8` length of the build ID, at most [`BUILD_ID_MAX`].
pub const H_BUILD_ID_LEN: usize = 0x1E;
/// `u8` reserved, zero.
pub const H_RESERVED0: usize = 0x1F;
/// `[u8; 32]` build ID, zero padded.
pub const H_BUILD_ID: usize = 0x20;
/// `[u8; 8]` key ID: the first 8 bytes of SHA-256 of the signing public key; zero unsigned.
pub const H_KEY_ID: usize = 0x40;
/// `u16` number of `image_list` slots ([`SLOT_COUNT`]).
pub const H_SLOT_COUNT: usize = 0x48;
/// `u16` number of descriptors.
pub const H_DESC_COUNT: usize = 0x4A;
/// `u16` number of `hwdecode_table_list` slots ([`SLOT_COUNT`]).
pub const H_PROF_COUNT: usize = 0x4C;
/// `u16` number of table-of-contents entries.
pub const H_TOC_COUNT: usize = 0x4E;
/// `[u8; 16]` reserved, zero.
pub const H_RESERVED1: usize = 0x50;

/// Header flag: the partition is signed (the signature block holds an ed25519 signature).
/// Clear: unsigned, the signature block and the key ID are zero.
pub const FLAG_SIGNED: u32 = 1;

/// Table class: the vendor's full library (`libnrtucode_internal.so`).
pub const CLASS_FULL: u8 = 1;
/// Table class: the vendor's reduced front library (`libnrtucode.so`).
pub const CLASS_FRONT: u8 = 2;

/// Source: a library with a GNU build ID (in the build-ID field).
pub const SOURCE_BUILD_ID: u8 = 1;
/// Source: a library without a build ID (the field is empty).
pub const SOURCE_NO_BUILD_ID: u8 = 2;
/// Source: the built-in fixture set (the build-ID field holds `fixtures`).
pub const SOURCE_FIXTURES: u8 = 3;
/// The build-ID field of a fixtures partition.
pub const FIXTURES_ID: &[u8] = b"fixtures";
/// Longest build ID.
pub const BUILD_ID_MAX: usize = 32;

/// Slots in each of the two vendor tables.
pub const SLOT_COUNT: usize = 38;
/// Most descriptors a partition may hold (the vendor has 102).
pub const MAX_DESCRIPTORS: usize = 1024;
/// Most table-of-contents entries a partition may hold (the vendor has 193 real getters).
pub const MAX_TOC: usize = 4096;

/// Bytes of one `image_list` slot: `u16` first descriptor, `u16` descriptor count.
pub const SLOT_LEN: usize = 4;
/// Bytes of one getter: `u8` kind, `u8` reserved zero, `u16` table-of-contents index.
pub const GETTER_LEN: usize = 4;
/// Bytes of one descriptor: `i32` flavor key, then four getters (IRAM, DRAM, SRAM, EXTRAM).
pub const DESC_LEN: usize = 4 + 4 * GETTER_LEN;
/// Bytes of one `hwdecode_table_list` slot: two getters (PROF_CAM, PROF_TABLE).
pub const PROF_LEN: usize = 2 * GETTER_LEN;
/// Bytes of one table-of-contents entry.
pub const TOC_LEN: usize = 80;
/// Bytes of the signature block.
pub const SIG_LEN: usize = 64;

/// Getter kind: NULL (the vendor's NULL getter; index zero).
pub const GETTER_NULL: u8 = 0;
/// Getter kind: the whole blob of the entry.
pub const GETTER_BLOB: u8 = 1;
/// Getter kind: a boundary cursor at the first byte of the entry's blob.
pub const GETTER_CURSOR_START: u8 = 2;
/// Getter kind: a boundary cursor one past the last byte of the entry's blob.
pub const GETTER_CURSOR_END: u8 = 3;

// Table-of-contents entry fields: byte offsets inside an entry.
/// `u32` offset of the stored bytes from the start of the partition.
pub const T_OFFSET: usize = 0;
/// `u32` stored length.
pub const T_STORED_LEN: usize = 4;
/// `u32` decoded length.
pub const T_DECODED_LEN: usize = 8;
/// `u8` codec.
pub const T_CODEC: usize = 12;
/// `[u8; 32]` SHA-256 of the decoded bytes (the blob the resolvers answer with).
pub const T_SHA256: usize = 16;
/// `[u8; 32]` SHA-256 of the stored bytes (equal to [`T_SHA256`]'s for [`CODEC_STORED`]).
pub const T_STORED_SHA256: usize = 48;

/// The largest decoded blob a partition may hold: 1 MiB, eight times the vendor's largest
/// (126,720 B, MARIANA_PLUS Q7 POOL DEBUG IRAM; the IRAM images are the largest class, the
/// profiler tables are 8 KiB). A reader sizes nothing from a length above it.
pub const MAX_BLOB_LEN: usize = 1 << 20;
/// The most decoded bytes a partition may hold, all its blobs added up: 64 MiB (the vendor's
/// distinct blobs add up to about 9.7 MB). What a host that decodes every blob allocates at most.
pub const MAX_DECODED_TOTAL: usize = 64 << 20;
/// Deflate's ceiling: no raw-deflate stream decodes to more than 1032 bytes per stored byte (a
/// match needs at least two bits, a length code and a distance code, and copies at most 258
/// bytes; a literal needs at least one bit for one byte). A deflate entry whose decoded length
/// is above `stored_len * DEFLATE_MAX_RATIO` is refused before any decoding.
pub const DEFLATE_MAX_RATIO: usize = 1032;

/// Codec: stored as is (stored length = decoded length).
pub const CODEC_STORED: u8 = 0;
/// Codec: raw deflate (RFC 1951); not readable in place: the decoding reads (features
/// `partition` and `deflate`, `Blob::load_into`) decode it into a buffer.
pub const CODEC_DEFLATE: u8 = 1;

/// Offset of the `image_list` slots.
pub const SLOTS_OFF: usize = HEADER_LEN;
/// Offset of the descriptors.
pub const DESCS_OFF: usize = SLOTS_OFF + SLOT_COUNT * SLOT_LEN;

/// `n` rounded up to [`BLOB_ALIGN`], `None` on overflow.
pub const fn align_up(n: usize) -> Option<usize> {
    match n.checked_add(BLOB_ALIGN - 1) {
        Some(m) => Some(m & !(BLOB_ALIGN - 1)),
        None => None,
    }
}

/// The offsets of the tables after the descriptors, from the counts: (`hwdecode_table_list`,
/// table of contents, signature, blob area). `None` on overflow.
pub const fn layout(desc_count: usize, toc_count: usize) -> Option<[usize; 4]> {
    let Some(descs) = desc_count.checked_mul(DESC_LEN) else {
        return None;
    };
    let Some(prof) = DESCS_OFF.checked_add(descs) else {
        return None;
    };
    let Some(toc) = prof.checked_add(SLOT_COUNT * PROF_LEN) else {
        return None;
    };
    let Some(tocs) = toc_count.checked_mul(TOC_LEN) else {
        return None;
    };
    let Some(sig) = toc.checked_add(tocs) else {
        return None;
    };
    let Some(sig_end) = sig.checked_add(SIG_LEN) else {
        return None;
    };
    let Some(blobs) = align_up(sig_end) else {
        return None;
    };
    Some([prof, toc, sig, blobs])
}

/// For the unit tests that build partitions byte by byte: the header of an unsigned full
/// partition (source: no build ID) of `total` bytes whose blobs start at `blobs_off`, with
/// `desc_count` descriptors and `toc_count` table-of-contents entries, written into `out`.
#[cfg(test)]
pub(super) fn write_test_header(
    out: &mut [u8],
    total: usize,
    blobs_off: usize,
    desc_count: usize,
    toc_count: usize,
) {
    let mut put = |at: usize, b: &[u8]| out[at..at + b.len()].copy_from_slice(b);
    put(H_MAGIC, &MAGIC);
    put(H_VERSION, &VERSION.to_le_bytes());
    put(H_HEADER_LEN, &(HEADER_LEN as u16).to_le_bytes());
    put(H_TOTAL_LEN, &(total as u32).to_le_bytes());
    put(H_BLOBS_OFF, &(blobs_off as u32).to_le_bytes());
    put(H_CLASS, &[CLASS_FULL, SOURCE_NO_BUILD_ID]);
    put(H_SLOT_COUNT, &(SLOT_COUNT as u16).to_le_bytes());
    put(H_DESC_COUNT, &(desc_count as u16).to_le_bytes());
    put(H_PROF_COUNT, &(SLOT_COUNT as u16).to_le_bytes());
    put(H_TOC_COUNT, &(toc_count as u16).to_le_bytes());
}
