//! The device-side decoder (`nrtucode::deflate`) against the packer's encoder: round trips over
//! random and structured inputs at every level, and every refusal (short buffer, corrupt,
//! truncated or over-long streams, wrong length, wrong digest) with nothing written past the
//! decoded length and nothing left behind on an error.

use nrtucode::deflate::{DecodeError, Inflater, decode_checked};
use nrtucode_deflate::{Codec, Summary, best_deflate, compress_deflate, encode_blob};
use proptest::prelude::*;
use sha2::{Digest, Sha256};

/// What the buffer is filled with before a decode: bytes past the decoded length must keep it.
const GUARD: u8 = 0xa5;

fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// Decodes into a buffer `room` bytes long, pre-filled with [`GUARD`]; returns the result (the
/// decoded bytes on success) and the whole buffer afterwards.
fn decode(
    stored: &[u8],
    decoded_len: usize,
    digest: &[u8; 32],
    room: usize,
) -> (Result<Vec<u8>, DecodeError>, Vec<u8>) {
    let mut inflater = Box::new(Inflater::new());
    let mut out = vec![GUARD; room];
    let result =
        decode_checked(stored, decoded_len, digest, &mut out, &mut inflater).map(<[u8]>::to_vec);
    (result, out)
}

/// Inputs with structure: runs, repeats of a short pattern, text-like words, and random bytes
/// with repeated slices, as firmware has.
fn structured() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        (any::<u8>(), 0usize..70_000).prop_map(|(b, n)| vec![b; n]),
        (proptest::collection::vec(any::<u8>(), 1..40), 0usize..3000)
            .prop_map(|(pattern, times)| pattern.repeat(times)),
        proptest::collection::vec(
            prop_oneof![
                Just(&b"mov r0, "[..]),
                Just(&b"ldr "[..]),
                Just(&b"\0\0\0\0"[..]),
                Just(&b"firmware"[..])
            ],
            0..5000
        )
        .prop_map(|words| words.concat()),
        (
            proptest::collection::vec(any::<u8>(), 0..4000),
            proptest::collection::vec((0usize..4000, 3usize..300), 0..40)
        )
            .prop_map(|(mut bytes, copies)| {
                for (from, len) in copies {
                    if bytes.is_empty() {
                        break;
                    }
                    let from = from % bytes.len();
                    let end = (from + len).min(bytes.len());
                    let slice = bytes[from..end].to_vec();
                    bytes.extend_from_slice(&slice);
                }
                bytes
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Any bytes, any level: decoded exactly, into a buffer with room to spare that keeps its
    /// guard bytes past the decoded length.
    #[test]
    fn random_bytes_round_trip(data in proptest::collection::vec(any::<u8>(), 0..20_000), level in 0u8..=10, spare in 0usize..64) {
        let stored = miniz_oxide::deflate::compress_to_vec(&data, level);
        let (result, out) = decode(&stored, data.len(), &sha256(&data), data.len() + spare);
        prop_assert_eq!(result.as_deref(), Ok(&data[..]));
        prop_assert!(out[data.len()..].iter().all(|&b| b == GUARD));
    }

    #[test]
    fn structured_round_trip(data in structured(), level in 1u8..=10) {
        let stored = miniz_oxide::deflate::compress_to_vec(&data, level);
        let (result, out) = decode(&stored, data.len(), &sha256(&data), data.len() + 16);
        prop_assert_eq!(result.as_deref(), Ok(&data[..]));
        prop_assert!(out[data.len()..].iter().all(|&b| b == GUARD));
    }

    /// The packer's choice decodes back, and is kept only where it saves 16-byte units.
    #[test]
    fn encode_blob_keeps_deflate_only_where_it_saves(data in structured()) {
        let encoded = encode_blob(&data).unwrap();
        prop_assert_eq!(encoded.decoded_len(), data.len());
        prop_assert_eq!(encoded.sha256(), &sha256(&data));
        let deflated = best_deflate(&data);
        let saves = nrtucode_deflate::aligned_len(deflated.bytes.len()) < nrtucode_deflate::aligned_len(data.len());
        prop_assert_eq!(encoded.codec() == Codec::Deflate, saves);
        match encoded.codec() {
            Codec::Stored => prop_assert_eq!(encoded.stored(&data), &data[..]),
            Codec::Deflate => {
                prop_assert_eq!(encoded.stored(&data), &deflated.bytes[..]);
                let (result, _) = decode(encoded.stored(&data), data.len(), encoded.sha256(), data.len());
                prop_assert_eq!(result.as_deref(), Ok(&data[..]));
            }
        }
    }

    /// One flipped bit anywhere: never a panic; an `Ok` only with the original bytes (never
    /// happens in practice: the digest catches what the stream does not), and on an error the
    /// buffer holds zeros where anything was written and the guard everywhere else.
    #[test]
    fn flipped_bit_is_refused_or_harmless(data in structured(), at in any::<prop::sample::Index>(), bit in 0u8..8) {
        let mut stored = compress_deflate(&data);
        let at = at.index(stored.len());
        stored[at] ^= 1 << bit;
        let (result, out) = decode(&stored, data.len(), &sha256(&data), data.len() + 8);
        match result {
            Ok(bytes) => prop_assert_eq!(bytes, data.clone()),
            Err(e) => {
                prop_assert!(!matches!(e, DecodeError::BufferTooSmall { .. }), "{e}");
                prop_assert!(out.iter().all(|&b| b == 0 || b == GUARD));
            }
        }
        prop_assert!(out[data.len()..].iter().all(|&b| b == GUARD));
    }

    /// Garbage as a stream: a typed error or the claimed bytes, never a panic or a hang.
    #[test]
    fn garbage_never_panics(stored in proptest::collection::vec(any::<u8>(), 0..2000), decoded_len in 0usize..5000) {
        let (result, out) = decode(&stored, decoded_len, &[0; 32], decoded_len + 4);
        prop_assert!(result.is_err());
        prop_assert!(out[..decoded_len].iter().all(|&b| b == 0 || b == GUARD));
        prop_assert!(out[decoded_len..].iter().all(|&b| b == GUARD));
    }

    /// Every strict prefix of a stream is truncated.
    #[test]
    fn prefixes_are_truncated(data in structured(), cut in any::<prop::sample::Index>()) {
        let stored = compress_deflate(&data);
        let cut = cut.index(stored.len());
        let (result, out) = decode(&stored[..cut], data.len(), &sha256(&data), data.len());
        prop_assert!(matches!(result, Err(DecodeError::Truncated { .. })), "{:?}", result);
        prop_assert!(out.iter().all(|&b| b == 0 || b == GUARD));
    }
}

// The inflater's state is the ~11 KB the docs announce.
const _: () = assert!(Inflater::SIZE > 8 * 1024 && Inflater::SIZE < 16 * 1024);

fn sample() -> Vec<u8> {
    (0..50_000u32).flat_map(|i| (i / 7).to_le_bytes()).collect()
}

#[test]
fn short_buffer_needs_the_decoded_length_and_writes_nothing() {
    let data = sample();
    let stored = compress_deflate(&data);
    for room in [0, 1, data.len() / 2, data.len() - 1] {
        let (result, out) = decode(&stored, data.len(), &sha256(&data), room);
        assert_eq!(
            result,
            Err(DecodeError::BufferTooSmall {
                needed: data.len(),
                available: room
            })
        );
        assert!(out.iter().all(|&b| b == GUARD), "room {room}: written");
    }
    let (result, _) = decode(&stored, data.len(), &sha256(&data), data.len());
    assert_eq!(result.as_deref(), Ok(&data[..]));
}

#[test]
fn wrong_decoded_length_is_refused_and_the_buffer_zeroed() {
    let data = sample();
    let stored = compress_deflate(&data);
    let digest = sha256(&data);
    let n = data.len();
    let (result, out) = decode(&stored, n - 1, &digest, n + 8);
    assert_eq!(result, Err(DecodeError::TooLong { expected: n - 1 }));
    assert!(out[..n - 1].iter().all(|&b| b == 0), "left behind");
    assert!(
        out[n - 1..].iter().all(|&b| b == GUARD),
        "written past the decoded length"
    );
    let (result, out) = decode(&stored, n + 1, &digest, n + 8);
    assert_eq!(
        result,
        Err(DecodeError::TooShort {
            expected: n + 1,
            decoded: n
        })
    );
    assert!(out[..n].iter().all(|&b| b == 0), "left behind");
    let (result, _) = decode(&stored, 0, &digest, 0);
    assert_eq!(result, Err(DecodeError::TooLong { expected: 0 }));
}

#[test]
fn wrong_digest_is_refused_and_the_buffer_zeroed() {
    let data = sample();
    let stored = compress_deflate(&data);
    let mut digest = sha256(&data);
    digest[31] ^= 1;
    let (result, out) = decode(&stored, data.len(), &digest, data.len());
    assert_eq!(result, Err(DecodeError::Mismatch));
    assert!(
        out.iter().all(|&b| b == 0),
        "a mismatching image left in the buffer"
    );
    let message = result.unwrap_err().to_string();
    assert!(
        message.starts_with("SHA-256 mismatch: the decoded bytes"),
        "{message}"
    );
}

#[test]
fn bytes_after_the_final_block_are_refused() {
    let data = sample();
    let mut stored = compress_deflate(&data);
    stored.extend_from_slice(&[0, 0, 0]);
    let (result, out) = decode(&stored, data.len(), &sha256(&data), data.len());
    assert_eq!(result, Err(DecodeError::TrailingBytes { count: 3 }));
    assert!(out.iter().all(|&b| b == 0));
}

#[test]
fn corrupt_streams_are_typed() {
    // BFINAL=1, BTYPE=11 (reserved).
    let (result, _) = decode(&[0x07], 0, &[0; 32], 0);
    assert!(
        matches!(result, Err(DecodeError::Corrupt { .. })),
        "{result:?}"
    );
    // A stored block whose NLEN is not LEN's complement.
    let (result, _) = decode(&[0x01, 0x02, 0x00, 0x00, 0x00, b'h', b'i'], 2, &[0; 32], 2);
    assert!(
        matches!(result, Err(DecodeError::Corrupt { .. })),
        "{result:?}"
    );
    // Fixed Huffman: literal 'a', then a match at distance 2 with one byte decoded (before the
    // start of the output).
    let lit_a = fixed_literal(b'a');
    let mut bits = Bits::default();
    bits.push(1, 1); // BFINAL
    bits.push(1, 2); // BTYPE=01
    bits.push_code(lit_a.0, lit_a.1);
    bits.push_code(0b0000001, 7); // length code 257: length 3
    bits.push_code(0b00001, 5); // distance code 1: distance 2
    bits.push_code(0, 7); // end of block (256)
    let (result, _) = decode(&bits.bytes(), 4, &[0; 32], 4);
    assert!(
        matches!(result, Err(DecodeError::Corrupt { .. })),
        "{result:?}"
    );
    // The same stream with distance 1 is valid: "aaaa".
    let mut bits = Bits::default();
    bits.push(1, 1);
    bits.push(1, 2);
    bits.push_code(lit_a.0, lit_a.1);
    bits.push_code(0b0000001, 7);
    bits.push_code(0b00000, 5); // distance code 0: distance 1
    bits.push_code(0, 7);
    let (result, _) = decode(&bits.bytes(), 4, &sha256(b"aaaa"), 4);
    assert_eq!(result.as_deref(), Ok(&b"aaaa"[..]));
}

/// The fixed Huffman code of a literal below 144: 8 bits, 0x30 + value.
fn fixed_literal(value: u8) -> (u32, u32) {
    (0x30 + u32::from(value), 8)
}

/// An LSB-first bit writer, as deflate packs its bits.
#[derive(Default)]
struct Bits {
    bits: Vec<bool>,
}

impl Bits {
    /// A value `n` bits wide, least significant bit first (header fields, extra bits).
    fn push(&mut self, value: u32, n: u32) {
        (0..n).for_each(|i| self.bits.push(value >> i & 1 == 1));
    }

    /// A Huffman code `n` bits wide, most significant bit first.
    fn push_code(&mut self, code: u32, n: u32) {
        (0..n)
            .rev()
            .for_each(|i| self.bits.push(code >> i & 1 == 1));
    }

    fn bytes(&self) -> Vec<u8> {
        self.bits
            .chunks(8)
            .map(|c| {
                c.iter()
                    .enumerate()
                    .fold(0, |b, (i, &on)| b | u8::from(on) << i)
            })
            .collect()
    }
}

#[test]
fn one_inflater_serves_many_blobs() {
    let mut inflater = Box::new(Inflater::new());
    let a = sample();
    let b = b"second blob ".repeat(700);
    let (sa, sb) = (compress_deflate(&a), compress_deflate(&b));
    let mut out = vec![0u8; a.len()];
    // A failed decode in between leaves nothing that spoils the next one.
    assert!(
        decode_checked(
            &sa[..sa.len() / 2],
            a.len(),
            &sha256(&a),
            &mut out,
            &mut inflater
        )
        .is_err()
    );
    for (stored, data) in [(&sa, &a), (&sb, &b), (&sa, &a)] {
        let got =
            decode_checked(stored, data.len(), &sha256(data), &mut out, &mut inflater).unwrap();
        assert_eq!(got, &data[..]);
    }
}

#[test]
fn summary_prints_the_ratio() {
    let mut summary = Summary::default();
    let text = b"firmware ".repeat(1000);
    summary.add(&encode_blob(&text).unwrap());
    summary.add(&encode_blob(&[1, 2, 3]).unwrap());
    assert_eq!((summary.blobs, summary.compressed), (2, 1));
    assert_eq!(summary.decoded_bytes, 9003);
    let line = summary.to_string();
    assert!(
        line.starts_with("deflate: 1 of 2 blobs compressed, 9,003 B -> "),
        "{line}"
    );
    assert!(line.ends_with(" %)"), "{line}");
}

/// A stream a few bytes shorter than its blob but in as many 16-byte units saves nothing: the
/// blob stays stored. (Found among near-random blobs ending in a run of zeros.)
#[test]
fn a_saving_under_one_unit_stays_stored() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut random = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state as u8
    };
    let noise: Vec<u8> = (0..512).map(|_| random()).collect();
    let case = (16..512usize)
        .flat_map(|len| (1..64usize).map(move |zeros| (len, zeros)))
        .map(|(len, zeros)| {
            let mut blob = noise[..len].to_vec();
            blob.extend(std::iter::repeat_n(0, zeros));
            blob
        })
        .find(|blob| {
            let stream = best_deflate(blob).bytes.len();
            stream < blob.len() && stream.div_ceil(16) == blob.len().div_ceil(16)
        })
        .expect("such a blob exists");
    let encoded = encode_blob(&case).unwrap();
    assert_eq!(encoded.codec(), Codec::Stored, "{} bytes", case.len());
    assert_eq!(encoded.stored_len(), case.len());
}
