//! A signed blob partition read in place (feature `partition`): the vendor's two tables and the
//! blobs, written apart from the program by `nrtucode pack`, answered with the vendor's exact
//! answers. `no_std`, no allocation, no `unsafe`; the byte-for-byte format is in
//! `docs/partition.md` (the contract; the constants the parser and the packer share are not
//! public API).
//!
//! Each step a type, each done once, so that nothing reads a table before it is checked and
//! trusted, no blob byte before it is hashed, and nothing is hashed twice:
//!
//! 1. [`Partition::parse`] checks every bound, overlap, alignment, count and version of the
//!    bytes, and bounds every decoded length, never trusting a length before checking it
//!    against the input ([`FormatError`]). It reads the header, then the signed prefix the
//!    header sizes, then the blob area by offset, each from its own bytes, so that the prefix
//!    can be held in RAM and the blobs read through a flash driver (the whole-partition check
//!    and a blob's check and load read by offset too);
//! 2. [`Partition::verify`] checks the ed25519 signature with your [`PublicKey`], then the
//!    [`Policy`] (minimum security counter, expected table class), and builds the lookup index
//!    once, giving a [`VerifiedPartition`] ([`TrustError`]). An unsigned partition is read only
//!    by `insecure_trust_unsigned`, with feature `insecure-unsigned`, as an `UnsignedPartition`
//!    (never a verified one);
//! 3. their resolvers answer like the embedded ones (the same body of checks, `crate::resolve`:
//!    index bound, removed flag, auto flavor, empty slot, flavor scan, region bound, NULL
//!    getter) with a [`Blob`]: the blob bytes lie outside the signed bytes and are vouched for
//!    only by their SHA-256 in the signed table of contents, so a `Blob` of a verified
//!    partition gives them only through a check ([`Blob::check`] in place,
//!    [`Blob::load_into`] into your buffer, either codec, [`LoadError`]);
//! 4. or [`VerifiedPartition::check_blobs`], the whole-partition check, hashes every blob's
//!    stored bytes once and gives a [`CheckedPartition`], whose handles answer a stored blob's
//!    bytes as a plain slice ([`Blob::bytes`]) and decode a compressed one without hashing its
//!    stream again.
//!
//! On a host (feature `std`), [`PartitionFile::open`] reads a file and does all of it, decoding
//! every compressed blob once, into a [`LoadedPartition`] that owns its bytes and answers
//! `&[u8]` like the embedded tables.
//!
//! The embedded tables answer `&'static [u8]` instead: their blobs are part of the program
//! image, vouched for with it by whoever flashed it; a partition is updated on its own.
//!
//! ```
//! use nrtucode::partition::{Loader, Partition, Policy, PublicKey, TableClass};
//! use nrtucode::NoEnv;
//! // Each step has its own error (`FormatError`, `TrustError`, `LoadError`); a firmware maps
//! // them into its own, a host boxes them.
//! # fn run(flash: &'static [u8], key: PublicKey) -> Result<(), Box<dyn core::error::Error>> {
//! let policy = Policy { min_security_counter: 3, expected_class: TableClass::Full };
//! let partition = Partition::parse(flash)?.verify(&key, &policy)?;
//! let Ok(iram) = partition.get_memory_image(7, 0, 1, &NoEnv) else { return Ok(()) };
//! let mut device = [0u8; 0x14000];
//! let mut loader = Loader::new(); // SHA-256, and the inflater with feature `deflate`
//! let written: &[u8] = iram.load_into(&mut device, &mut loader)?; // copied and checked
//! # Ok(()) }
//! ```

// The modules below import one another without a circle: leaves first (`format`, `bytes`,
// `entry`, `header`, `error`, then `source`, the blob area read by offset), then the handle,
// the parser, the tables, the index, the trust types and the resolvers. To check it (prints an order, or `tsort: ... loop`):
//   for f in src/partition/*.rs; do m=$(basename $f .rs); sed '/^#\[cfg(test)\]/q' $f |
//   grep -o 'super::[a-z_]*::' | sed "s/super::\(.*\)::/$m \1/"; done | grep -v '^mod ' | tsort
//
// The byte-level constants are shared with the packer (`nrtucode-pack`), the tools and the
// tests, but they are not this crate's API: the format's contract is `docs/partition.md`, and
// a change of layout is a format version, not a semver change of these names.
#[doc(hidden)]
pub mod format;

#[cfg(feature = "std")]
mod aligned;
mod answer;
mod blob;
mod bytes;
mod canonical;

mod entry;
pub(crate) mod error;
#[cfg(feature = "std")]
mod file;
mod header;
mod index;
mod load;
#[cfg(feature = "std")]
mod loaded;
mod lookup;
mod parse;
mod source;
#[cfg(feature = "update")]
mod streamed;
mod tables;
mod trust;

pub use blob::Blob;
pub use entry::{BlobId, Codec, Cursor, Getter, TocEntry};
pub use error::{BlobUse, FormatError, LoadError, TableName, TrustError};
#[cfg(feature = "std")]
pub use file::{OpenError, PartitionFile};
pub use header::{Source, TableClass};
pub use load::Loader;
#[cfg(all(feature = "std", feature = "insecure-unsigned"))]
pub use loaded::Unverified;
#[cfg(feature = "std")]
pub use loaded::{LoadedPartition, Trust, Verified};
pub use parse::Partition;
#[cfg(feature = "update")]
pub(crate) use parse::{Parsed, toc_of};
#[cfg(feature = "update")]
pub(crate) use source::aligned_reads;
#[cfg(feature = "update")]
pub(crate) use streamed::{BlobArea, check_blobs_of};
#[cfg(feature = "update")]
pub use streamed::{READ_PIECE, StreamError, StreamedBlob, StreamedPartition};
pub use tables::Tables;
#[cfg(feature = "insecure-unsigned")]
pub use trust::UnsignedPartition;
pub use trust::{CheckedPartition, Policy, PublicKey, VerifiedPartition};

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    /// The reader alone (`--no-default-features --features partition`, as CI tests it) embeds
    /// no blob: the firmware's bytes are all in the partition.
    #[test]
    #[cfg(not(any(
        feature = "gen-sunda",
        feature = "gen-cayman",
        feature = "gen-mariana",
        feature = "gen-mariana-plus",
        feature = "gen-maverick"
    )))]
    fn the_reader_alone_embeds_no_blob() {
        assert_eq!(crate::catalog::DISTINCT_BLOB_COUNT, 0);
        assert_eq!(crate::catalog::EMBEDDED_BLOB_BYTES, 0);
    }

    #[test]
    fn short_and_foreign_bytes_are_refused_by_name() {
        assert_eq!(
            Partition::parse(&[]),
            Err(FormatError::Truncated {
                needed: format::HEADER_LEN,
                available: 0
            })
        );
        assert_eq!(Partition::parse(&[0xff; 8]), Err(FormatError::Erased));
        assert_eq!(Partition::parse(&[0; 200]), Err(FormatError::BadMagic));
        let mut head = [0u8; format::HEADER_LEN];
        head[..8].copy_from_slice(&format::MAGIC);
        head[format::H_VERSION] = 9;
        assert_eq!(
            Partition::parse(&head),
            Err(FormatError::UnsupportedVersion { found: 9 })
        );
        head[format::H_VERSION] = format::VERSION as u8;
        assert_eq!(
            Partition::parse(&head[..50]),
            Err(FormatError::Truncated {
                needed: format::HEADER_LEN,
                available: 50
            })
        );
        // A header claiming more bytes than there are.
        head[format::H_HEADER_LEN] = format::HEADER_LEN as u8;
        head[format::H_TOTAL_LEN + 1] = 1; // 256
        assert_eq!(
            Partition::parse(&head),
            Err(FormatError::Truncated {
                needed: 256,
                available: format::HEADER_LEN
            })
        );
    }

    #[test]
    fn the_layout_follows_the_counts() {
        assert_eq!(format::DESCS_OFF, 248);
        assert_eq!(format::layout(102, 177), Some([2288, 2592, 16752, 16816]));
        assert_eq!(format::layout(0, 0), Some([248, 552, 552, 624]));
        assert_eq!(format::layout(usize::MAX, 1), None);
        assert_eq!(format::align_up(usize::MAX), None);
    }

    /// An unsigned partition with no descriptor and one table-of-contents entry per `(codec,
    /// stored_len, decoded_len)`, entry `n` named by profiler getter `n` (slot `n / 2`), its
    /// stored bytes zero and both digests `n` (`parse` reads no blob byte and hashes nothing).
    fn synthetic(entries: &[(u8, usize, usize)]) -> std::vec::Vec<u8> {
        use format::*;
        let [prof_off, toc_off, _, blobs_off] = layout(0, entries.len()).unwrap();
        let mut toc = std::vec::Vec::new();
        let mut at = blobs_off;
        for (n, &(codec, stored, decoded)) in entries.iter().enumerate() {
            toc.extend((at as u32).to_le_bytes());
            toc.extend((stored as u32).to_le_bytes());
            toc.extend((decoded as u32).to_le_bytes());
            toc.extend([codec, 0, 0, 0]);
            let mut digest = [0u8; 32];
            digest[..2].copy_from_slice(&(n as u16).to_le_bytes());
            toc.extend(digest);
            toc.extend(digest);
            at = align_up(at + stored).unwrap();
        }
        let mut out = std::vec![0u8; at];
        out[..8].copy_from_slice(&MAGIC);
        out[H_VERSION..H_VERSION + 2].copy_from_slice(&VERSION.to_le_bytes());
        out[H_HEADER_LEN..H_HEADER_LEN + 2].copy_from_slice(&(HEADER_LEN as u16).to_le_bytes());
        out[H_TOTAL_LEN..H_TOTAL_LEN + 4].copy_from_slice(&(at as u32).to_le_bytes());
        out[H_BLOBS_OFF..H_BLOBS_OFF + 4].copy_from_slice(&(blobs_off as u32).to_le_bytes());
        out[H_CLASS] = CLASS_FULL;
        out[H_SOURCE] = SOURCE_NO_BUILD_ID;
        out[H_SLOT_COUNT..H_SLOT_COUNT + 2].copy_from_slice(&(SLOT_COUNT as u16).to_le_bytes());
        out[H_PROF_COUNT..H_PROF_COUNT + 2].copy_from_slice(&(SLOT_COUNT as u16).to_le_bytes());
        out[H_TOC_COUNT..H_TOC_COUNT + 2].copy_from_slice(&(entries.len() as u16).to_le_bytes());
        out[toc_off..toc_off + toc.len()].copy_from_slice(&toc);
        for n in 0..entries.len() {
            let getter = prof_off + n * GETTER_LEN;
            out[getter] = GETTER_BLOB;
            out[getter + 2..getter + 4].copy_from_slice(&(n as u16).to_le_bytes());
        }
        out
    }

    fn toc_refusal(bytes: &[u8]) -> Option<(u16, &'static str)> {
        match Partition::parse(bytes) {
            Err(FormatError::Table {
                table: TableName::Toc,
                entry,
                reason,
            }) => Some((entry, reason)),
            _ => None,
        }
    }

    /// No decoded length a reader could size a buffer from is left unbounded: not one blob's
    /// (1 MiB), not deflate's ratio (1032 per stored byte), not all of them together (64 MiB).
    #[test]
    fn decoded_lengths_are_bounded_before_anything_is_sized_from_them() {
        use format::{CODEC_DEFLATE as Z, CODEC_STORED as S, MAX_BLOB_LEN};
        assert!(Partition::parse(&synthetic(&[(S, 32, 32), (Z, 1017, MAX_BLOB_LEN)])).is_ok());
        // A decoded length of 0xffff_ffff, which a reader sizing from it would try to allocate.
        let (entry, reason) =
            toc_refusal(&synthetic(&[(S, 32, 32), (Z, 64, u32::MAX as usize)])).expect("refused");
        assert_eq!(entry, 1);
        assert!(reason.contains("largest blob"), "{reason}");
        let (_, reason) = toc_refusal(&synthetic(&[(Z, 4096, MAX_BLOB_LEN + 1)])).expect("refused");
        assert!(reason.contains("largest blob"), "{reason}");
        // Deflate's ceiling: 1032 bytes per stored byte, exactly.
        assert!(Partition::parse(&synthetic(&[(Z, 100, 103_200)])).is_ok());
        let (_, reason) = toc_refusal(&synthetic(&[(Z, 100, 103_201)])).expect("refused");
        assert!(reason.contains("ceiling"), "{reason}");
        // 64 blobs of 1 MiB add up to the limit; one more byte is refused, naming the entry.
        let mut many = std::vec![(Z, 1017, MAX_BLOB_LEN); 64];
        assert!(Partition::parse(&synthetic(&many)).is_ok());
        many.push((Z, 16, 1));
        let (entry, reason) = toc_refusal(&synthetic(&many)).expect("refused");
        assert_eq!(entry, 64);
        assert!(reason.contains("64 MiB"), "{reason}");
    }

    /// A stored blob has one set of bytes, so its two digests are one: a table of contents
    /// that says otherwise is refused.
    #[test]
    fn a_stored_blob_whose_two_digests_differ_is_refused() {
        let mut bytes = synthetic(&[(format::CODEC_STORED, 32, 32)]);
        assert!(Partition::parse(&bytes).is_ok());
        let [_, toc_off, _, _] = format::layout(0, 1).unwrap();
        bytes[toc_off + format::T_STORED_SHA256] = 1;
        let (_, reason) = toc_refusal(&bytes).expect("refused");
        assert!(reason.contains("digests differ"), "{reason}");
    }

    /// The canonical layout (src/partition/canonical.rs): an entry no getter names, the same
    /// blob twice, and a front partition with a getter the front tables leave NULL are refused,
    /// each by name.
    #[test]
    fn non_canonical_tables_are_refused() {
        use format::*;
        let stored = (CODEC_STORED, 32, 32);
        let [prof_off, toc_off, _, _] = layout(0, 2).unwrap();
        let good = synthetic(&[stored, stored]);
        assert!(Partition::parse(&good).is_ok());

        let mut unnamed = good.clone();
        unnamed[prof_off + GETTER_LEN] = GETTER_NULL;
        unnamed[prof_off + GETTER_LEN + 2] = 0;
        assert_eq!(
            Partition::parse(&unnamed),
            Err(FormatError::UnreferencedBlob {
                blob: BlobId::new(1)
            })
        );

        let mut twice = good.clone();
        for digest in [T_SHA256, T_STORED_SHA256] {
            twice[toc_off + TOC_LEN + digest] = 0;
        }
        assert_eq!(
            Partition::parse(&twice),
            Err(FormatError::DuplicateBlob {
                blob: BlobId::new(1),
                first: BlobId::new(0)
            })
        );

        // Slot 0 is SUNDA's: the front tables have its profiler getters; MAVERICK's (slot 37)
        // they leave NULL.
        assert_eq!(
            crate::ImageIndex::ALL[37].generation(),
            crate::Generation::Maverick
        );
        let mut front = good.clone();
        front[H_CLASS] = CLASS_FRONT;
        assert!(Partition::parse(&front).is_ok());
        let last = prof_off + 37 * PROF_LEN;
        front.copy_within(prof_off..prof_off + GETTER_LEN, last);
        front[prof_off..prof_off + GETTER_LEN].copy_from_slice(&[GETTER_BLOB, 0, 1, 0]);
        assert_eq!(
            Partition::parse(&front),
            Err(FormatError::ClassContradicted {
                table: TableName::ProfList,
                entry: 37
            })
        );
    }
}
