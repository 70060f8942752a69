//! A hand-built partition's tables ([`Spec`]), laid out canonically and signed as `nrtucode
//! pack` does; the hand-built tables the requests are asked of ([`tiny`]); and the fixtures'
//! real table shape with tiny blobs ([`fixture_shape`]).

use nrtucode::digest::{Sha256Hasher, SoftSha256};
use nrtucode::partition::format::*;
use nrtucode::partition::{Getter, Partition};
use nrtucode_pack::{Blobs, PackOptions, SigningKey};

/// A getter as stored: kind and table-of-contents index.
pub(super) type RawGetter = (u8, u16);

pub(super) const NULL: RawGetter = (GETTER_NULL, 0);
pub(super) const fn whole(n: u16) -> RawGetter {
    (GETTER_BLOB, n)
}

/// A blob of a hand-built partition: its decoded bytes and whether it is kept as deflate.
#[derive(Clone, Debug)]
pub(super) struct BlobSpec {
    pub(super) decoded: Vec<u8>,
    pub(super) deflate: bool,
}

impl BlobSpec {
    /// The bytes as stored: the decoded bytes, or the encoder's deflate stream of them.
    fn stored(&self) -> Vec<u8> {
        match self.deflate {
            true => nrtucode_deflate::compress_deflate(&self.decoded),
            false => self.decoded.clone(),
        }
    }
}

/// A raw-deflate stream written by hand, bit by bit: one final block with the fixed Huffman
/// codes (RFC 1951, 3.2.6) holding `literals` (each below 144: an 8-bit code), then the
/// end-of-block code (7 zero bits). Returns the stream and the number of bits of its last
/// byte that follow the end code (never read by a decoder; written 0).
pub(super) fn fixed_huffman_literals(literals: &[u8]) -> (Vec<u8>, u32) {
    let mut bits: Vec<bool> = vec![true, true, false]; // BFINAL 1, BTYPE 01 (LSB first)
    for &lit in literals {
        assert!(lit < 144, "a literal with an 8-bit fixed code");
        let code = 0x30 + u32::from(lit);
        bits.extend((0..8).rev().map(|i| code >> i & 1 == 1)); // Huffman codes: MSB first
    }
    bits.extend([false; 7]); // end of block: code 256 is 0000000
    let unused = (8 - bits.len() % 8) % 8;
    let mut out = vec![0u8; bits.len().div_ceil(8)];
    for (i, bit) in bits.iter().enumerate() {
        out[i / 8] |= u8::from(*bit) << (i % 8);
    }
    (out, unused as u32)
}

/// The tables of a hand-built partition, laid out canonically by [`Spec::build`].
#[derive(Clone, Debug)]
pub(super) struct Spec {
    pub(super) class: u8,
    pub(super) counter: u32,
    /// Per slot (38): descriptors, each a flavor key and four region getters.
    pub(super) slots: Vec<Vec<(i32, [RawGetter; 4])>>,
    /// Per slot (38): PROF_CAM and PROF_TABLE.
    pub(super) prof: Vec<[RawGetter; 2]>,
    pub(super) blobs: Vec<BlobSpec>,
    /// The stored bytes of every blob, when some are written by hand ([`Spec::with_stream`]);
    /// `None`: each blob's [`BlobSpec::stored`].
    pub(super) streams: Option<Vec<Vec<u8>>>,
}

pub(super) fn sha256(bytes: &[u8]) -> [u8; 32] {
    let mut h = SoftSha256::new();
    h.update(bytes);
    h.finish()
}

/// `len` bytes of text naming the blob (distinct for distinct labels).
pub(super) fn text_blob(label: &str, len: usize) -> Vec<u8> {
    format!("nrtucode conformance blob: {label}. ")
        .bytes()
        .cycle()
        .take(len)
        .collect()
}

pub(super) fn put(out: &mut [u8], at: usize, bytes: &[u8]) {
    out[at..at + bytes.len()].copy_from_slice(bytes);
}

pub(super) fn le16(bytes: &[u8], at: usize) -> usize {
    usize::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]))
}

pub(super) fn le32(bytes: &[u8], at: usize) -> usize {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]) as usize
}

/// Offsets of a partition's tables, from the counts in its header.
pub(super) fn offsets(bytes: &[u8]) -> [usize; 4] {
    layout(le16(bytes, H_DESC_COUNT), le16(bytes, H_TOC_COUNT)).expect("counts in range")
}

/// Signs `bytes` (a partition with its signed flag set) with `key` over everything before the
/// signature block, as `nrtucode pack` does.
pub(super) fn sign(bytes: &mut [u8], key: &SigningKey) {
    let [_, _, sig_off, _] = offsets(bytes);
    let flags = le32(bytes, H_FLAGS) as u32 | FLAG_SIGNED;
    put(bytes, H_FLAGS, &flags.to_le_bytes());
    put(bytes, H_KEY_ID, &key.public_key().key_id());
    let signature = key.sign(&bytes[..sig_off]);
    put(bytes, sig_off, &signature);
}

/// The offset of table-of-contents entry `n`.
pub(super) fn toc_entry(bytes: &[u8], n: usize) -> usize {
    offsets(bytes)[1] + n * TOC_LEN
}

impl Spec {
    /// The partition, unsigned (flag 0, key ID and signature 0): [`sign`] signs it.
    pub(super) fn build(&self) -> Vec<u8> {
        let desc_count: usize = self.slots.iter().map(Vec::len).sum();
        let [prof_off, toc_off, _, blobs_off] =
            layout(desc_count, self.blobs.len()).expect("a small partition");
        let stored: Vec<Vec<u8>> = match &self.streams {
            Some(streams) => streams.clone(),
            None => self.blobs.iter().map(BlobSpec::stored).collect(),
        };
        let mut at = blobs_off;
        let mut places = Vec::new();
        for s in &stored {
            places.push(at);
            at = align_up(at + s.len()).expect("small");
        }
        let total = at;
        let mut out = vec![0u8; total];
        put(&mut out, H_MAGIC, &MAGIC);
        put(&mut out, H_VERSION, &VERSION.to_le_bytes());
        put(&mut out, H_HEADER_LEN, &(HEADER_LEN as u16).to_le_bytes());
        put(&mut out, H_TOTAL_LEN, &(total as u32).to_le_bytes());
        put(&mut out, H_BLOBS_OFF, &(blobs_off as u32).to_le_bytes());
        put(&mut out, H_SECURITY_COUNTER, &self.counter.to_le_bytes());
        put(&mut out, H_CLASS, &[self.class, SOURCE_NO_BUILD_ID]);
        put(&mut out, H_SLOT_COUNT, &(SLOT_COUNT as u16).to_le_bytes());
        put(&mut out, H_DESC_COUNT, &(desc_count as u16).to_le_bytes());
        put(&mut out, H_PROF_COUNT, &(SLOT_COUNT as u16).to_le_bytes());
        put(
            &mut out,
            H_TOC_COUNT,
            &(self.blobs.len() as u16).to_le_bytes(),
        );
        let getter = |(kind, n): RawGetter| {
            let [lo, hi] = n.to_le_bytes();
            [kind, 0, lo, hi]
        };
        let mut d = 0usize;
        for (slot, descs) in self.slots.iter().enumerate() {
            let first = if descs.is_empty() { 0 } else { d as u16 };
            put(&mut out, SLOTS_OFF + slot * SLOT_LEN, &first.to_le_bytes());
            put(
                &mut out,
                SLOTS_OFF + slot * SLOT_LEN + 2,
                &(descs.len() as u16).to_le_bytes(),
            );
            for (key, getters) in descs {
                let at = DESCS_OFF + d * DESC_LEN;
                put(&mut out, at, &key.to_le_bytes());
                for (r, g) in getters.iter().enumerate() {
                    put(&mut out, at + 4 + r * GETTER_LEN, &getter(*g));
                }
                d += 1;
            }
        }
        for (slot, pair) in self.prof.iter().enumerate() {
            for (k, g) in pair.iter().enumerate() {
                put(
                    &mut out,
                    prof_off + slot * PROF_LEN + k * GETTER_LEN,
                    &getter(*g),
                );
            }
        }
        for (n, ((blob, s), place)) in self.blobs.iter().zip(&stored).zip(&places).enumerate() {
            let e = toc_off + n * TOC_LEN;
            put(&mut out, e + T_OFFSET, &(*place as u32).to_le_bytes());
            put(&mut out, e + T_STORED_LEN, &(s.len() as u32).to_le_bytes());
            put(
                &mut out,
                e + T_DECODED_LEN,
                &(blob.decoded.len() as u32).to_le_bytes(),
            );
            let codec = if blob.deflate {
                CODEC_DEFLATE
            } else {
                CODEC_STORED
            };
            put(&mut out, e + T_CODEC, &[codec]);
            put(&mut out, e + T_SHA256, &sha256(&blob.decoded));
            put(&mut out, e + T_STORED_SHA256, &sha256(s));
            put(&mut out, *place, s);
        }
        out
    }

    /// The spec with blob `n`'s stored bytes replaced by `stream` (a deflate blob written by
    /// hand); its decoded bytes stay what the stream must decode to.
    pub(super) fn with_stream(mut self, n: usize, stream: Vec<u8>) -> Spec {
        let mut streams: Vec<Vec<u8>> = match self.streams.take() {
            Some(streams) => streams,
            None => self.blobs.iter().map(BlobSpec::stored).collect(),
        };
        streams[n] = stream;
        self.streams = Some(streams);
        self
    }

    /// Built and signed with the test key.
    pub(super) fn signed(&self, key: &SigningKey) -> Vec<u8> {
        let mut bytes = self.build();
        sign(&mut bytes, key);
        bytes
    }
}

// The hand-built partition's blobs, by table-of-contents number.
pub(super) const B_IRAM_PERF: u16 = 0;
pub(super) const B_DRAM_PERF: u16 = 1;
pub(super) const B_IRAM_PERF_SHADOWED: u16 = 2;
pub(super) const B_IRAM_DKL: u16 = 3;
pub(super) const B_PROF_CAM: u16 = 4;
pub(super) const B_PROF_TABLE: u16 = 5;
pub(super) const B_IRAM_DEBUG: u16 = 6;

/// The hand-built partition the requests are asked of (class full), or its front twin.
///
/// - slot 0 (SUNDA): key 1 (IRAM, DRAM, NULL SRAM, a cursor at the end of the DRAM blob), key 2
///   (IRAM only), key 1 again (never found: the scan takes the first);
/// - slot 7 (CAYMAN): key 17 (IRAM, a cursor at its start), key -5 (a key outside the vendor's
///   six: only a raw flavor of -5 finds it);
/// - profiler slot 0: PROF_CAM only; slot 7: PROF_TABLE only, kept as deflate;
/// - every other slot empty.
///
/// The front twin keeps the descriptors but leaves NULL what the front tables leave NULL (key
/// 2, key -5), and has no DEBUG blob.
pub(super) fn tiny(front: bool) -> Spec {
    let mut slots = vec![Vec::new(); SLOT_COUNT];
    let mut prof = vec![[NULL, NULL]; SLOT_COUNT];
    let debug = if front {
        [NULL; 4]
    } else {
        [whole(B_IRAM_DEBUG), NULL, NULL, NULL]
    };
    let foreign = if front {
        [NULL; 4]
    } else {
        [whole(B_IRAM_DKL), NULL, NULL, NULL]
    };
    slots[0] = vec![
        (
            1,
            [
                whole(B_IRAM_PERF),
                whole(B_DRAM_PERF),
                NULL,
                (GETTER_CURSOR_END, B_DRAM_PERF),
            ],
        ),
        (2, debug),
        (1, [whole(B_IRAM_PERF_SHADOWED), NULL, NULL, NULL]),
    ];
    slots[7] = vec![
        (
            17,
            [
                whole(B_IRAM_DKL),
                (GETTER_CURSOR_START, B_IRAM_DKL),
                NULL,
                NULL,
            ],
        ),
        (-5, foreign),
    ];
    prof[0] = [whole(B_PROF_CAM), NULL];
    prof[7] = [NULL, whole(B_PROF_TABLE)];
    let stored = |label: &str, len| BlobSpec {
        decoded: text_blob(label, len),
        deflate: false,
    };
    let mut blobs = vec![
        stored("SUNDA slot 0 IRAM PERF", 40),
        stored("SUNDA slot 0 DRAM PERF", 50),
        stored("SUNDA slot 0 IRAM PERF, second descriptor", 20),
        stored("CAYMAN slot 7 IRAM DKL_PERF", 70),
        stored("CAYMAN slot 0 PROF_CAM", 64),
        BlobSpec {
            decoded: [0u8; 8]
                .iter()
                .chain(b"PROF_TABLE slot 7")
                .copied()
                .cycle()
                .take(400)
                .collect(),
            deflate: true,
        },
    ];
    if !front {
        blobs.push(stored("SUNDA slot 0 IRAM DEBUG", 36));
    }
    Spec {
        class: if front { CLASS_FRONT } else { CLASS_FULL },
        counter: 1,
        slots,
        prof,
        blobs,
        streams: None,
    }
}

/// The fixtures' tables (`nrtucode pack`'s output for the built-in fixtures of `class`) with
/// each blob replaced by the 32 bytes of its SHA-256: the vendor's real table shape in about
/// 25 KB. Cursor targets stay stored; with `deflate`, every other blob is its 32 bytes
/// repeated 8 times, kept as deflate.
pub(super) fn fixture_shape(class: nrtucode::partition::TableClass, deflate: bool) -> Spec {
    let packed = nrtucode_pack::pack(
        &Blobs::fixtures(class),
        &PackOptions {
            security_counter: 1,
            key: None,
        },
    )
    .expect("the fixtures pack");
    let p = Partition::parse(&packed).expect("pack's output parses");
    let tables = p.untrusted_tables();
    let raw = |g: Option<Getter>| match g {
        None => NULL,
        Some(Getter::Blob(n)) => (GETTER_BLOB, n.raw()),
        Some(Getter::CursorStart(n)) => (GETTER_CURSOR_START, n.raw()),
        Some(Getter::CursorEnd(n)) => (GETTER_CURSOR_END, n.raw()),
    };
    let slots: Vec<_> = (0..SLOT_COUNT as u32)
        .map(|idx| {
            tables
                .descriptors(idx)
                .map(|(key, regions)| (key, regions.map(raw)))
                .collect::<Vec<_>>()
        })
        .collect();
    let prof = (0..SLOT_COUNT as u32)
        .map(|idx| tables.prof_getters(idx).expect("38 slots").map(raw))
        .collect();
    let cursor_targets: Vec<u16> = slots
        .iter()
        .flatten()
        .flat_map(|(_, regions)| regions.iter())
        .filter(|(kind, _)| *kind == GETTER_CURSOR_START || *kind == GETTER_CURSOR_END)
        .map(|(_, n)| *n)
        .collect();
    let blobs = tables
        .blob_ids()
        .map(|id| {
            let digest = tables.toc_entry(id).expect("an entry").sha256;
            let compress = deflate && !cursor_targets.contains(&id.raw());
            BlobSpec {
                decoded: if compress {
                    digest.repeat(8)
                } else {
                    digest.to_vec()
                },
                deflate: compress,
            }
        })
        .collect();
    Spec {
        class: class.raw(),
        counter: 1,
        slots,
        prof,
        blobs,
        streams: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrtucode::deflate::{Inflater, decode_checked};
    use nrtucode::partition::{Loader, Policy, TableClass};

    const LITERALS: &[u8] = b"nrtucode";

    /// The hand-written stream decodes to its literals whatever its unused bits hold, and not
    /// when a bit of its end code changes: so the bits `fixed_huffman_literals` calls unused
    /// are those a decoder never reads.
    #[test]
    fn the_unused_bits_after_the_end_code_change_nothing_decoded() {
        let (stream, unused) = fixed_huffman_literals(LITERALS);
        let mut inflater = Box::new(Inflater::new());
        let last = stream.len() - 1;
        for bit in 0..8u32 {
            let mut changed = stream.clone();
            changed[last] ^= 1 << bit;
            let mut out = [0u8; 8];
            let decodes = decode_checked(
                &changed,
                LITERALS.len(),
                &sha256(LITERALS),
                &mut out,
                &mut inflater,
            )
            .is_ok();
            assert_eq!(decodes, bit >= 8 - unused, "bit {bit} of the last byte");
        }
    }

    /// Unsigned, nothing vouches for a stream's unused bits: changed, with `stored_sha256`
    /// written for the changed bytes, the partition reads as before (docs/partition.md, "The
    /// bits after a deflate stream's end code").
    #[test]
    fn an_unsigned_partition_is_read_whatever_its_unused_stream_bits_hold() {
        let (mut stream, _) = fixed_huffman_literals(LITERALS);
        let last = stream.len() - 1;
        stream[last] ^= 0x80;
        let mut spec = tiny(false);
        spec.blobs.push(BlobSpec {
            decoded: LITERALS.to_vec(),
            deflate: true,
        });
        spec.slots[0][2].1[1] = whole(7);
        let bytes = spec.with_stream(7, stream).build();
        let policy = Policy {
            min_security_counter: 1,
            expected_class: TableClass::Full,
        };
        let v = Partition::parse(&bytes)
            .expect("parses")
            .insecure_trust_unsigned(&policy)
            .expect("unsigned, as expected");
        let mut loader = Box::new(Loader::new());
        let mut out = [0u8; 64];
        let blob = v
            .blob(nrtucode::partition::BlobId::new(7))
            .expect("entry 7");
        assert_eq!(blob.load_into(&mut out, &mut loader).ok(), Some(LITERALS));
    }
}
