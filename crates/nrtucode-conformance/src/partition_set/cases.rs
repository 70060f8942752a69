//! The set's partitions ([`cases`]): each hand-built, then changed in one way, with the verdict
//! that change must get.

use nrtucode::partition::PublicKey;
use nrtucode::partition::format::*;
use nrtucode_pack::SigningKey;

use super::spec::*;
use super::{Case, Step, TEST_KEY_PEM, Verdict};

fn refuse(step: Step, reason: &'static str, detail: &'static str) -> Verdict {
    Verdict::Refuse {
        step,
        reason,
        detail,
    }
}

/// The set's partitions, in manifest order.
pub fn cases() -> Vec<Case> {
    use nrtucode::partition::TableClass;
    let key = SigningKey::from_pem(TEST_KEY_PEM).expect("the committed test key");
    let tiny_full = tiny(false);
    let good = tiny_full.signed(&key);
    let mut cases = Vec::new();
    let mut case = |name, bytes, verdict, about| {
        cases.push(Case {
            name,
            bytes,
            min_security_counter: 1,
            expected_class: "full",
            verdict,
            about,
        });
    };
    let parse = |reason, detail| refuse(Step::Parse, reason, detail);
    // A change of the signed bytes, re-signed: only the change is wrong.
    let changed = |change: &dyn Fn(&mut Vec<u8>)| {
        let mut bytes = good.clone();
        change(&mut bytes);
        sign(&mut bytes, &key);
        bytes
    };
    // A change of the hand-built tables, laid out and signed.
    let respec = |change: &dyn Fn(&mut Spec)| {
        let mut spec = tiny(false);
        change(&mut spec);
        spec.signed(&key)
    };

    case(
        "tiny.part",
        good.clone(),
        Verdict::Accept,
        "hand-built tables answering the requests (requests.tsv)",
    );
    for (name, class, deflate, about) in [
        (
            "fixtures-full.part",
            TableClass::Full,
            false,
            "the full tables' shape (102 descriptors, 177 blobs), blobs of 32 bytes",
        ),
        (
            "fixtures-full-deflate.part",
            TableClass::Full,
            true,
            "the same, blobs kept as deflate but those a cursor points into",
        ),
    ] {
        case(
            name,
            fixture_shape(class, deflate).signed(&key),
            Verdict::Accept,
            about,
        );
    }

    // parse: the header.
    case(
        "empty.part",
        Vec::new(),
        parse("FormatError::Truncated", "-"),
        "zero bytes",
    );
    case(
        "erased.part",
        vec![0xff; 4096],
        parse("FormatError::Erased", "-"),
        "erased flash: the magic is all 0xff",
    );
    case(
        "bad-magic.part",
        changed(&|b| b[7] = b'X'),
        parse("FormatError::BadMagic", "-"),
        "magic NRTUPARX",
    );
    case(
        "version-1.part",
        changed(&|b| put(b, H_VERSION, &1u16.to_le_bytes())),
        parse("FormatError::UnsupportedVersion", "-"),
        "format version 1",
    );
    case(
        "short-erased.part",
        vec![0xff; 7],
        parse("FormatError::Truncated", "-"),
        "7 bytes of 0xff: too short for the magic, so not Erased",
    );
    case(
        "magic-only.part",
        MAGIC.to_vec(),
        parse("FormatError::Truncated", "-"),
        "the 8 bytes of the magic and nothing more: the version (bytes 8..10) is missing",
    );
    case(
        "magic-and-version-1.part",
        [&MAGIC[..], &1u16.to_le_bytes()].concat(),
        parse("FormatError::UnsupportedVersion", "-"),
        "10 bytes, the magic and version 1: the version is checked before the 96-byte header",
    );
    case(
        "magic-and-version-2.part",
        [&MAGIC[..], &VERSION.to_le_bytes()].concat(),
        parse("FormatError::Truncated", "-"),
        "10 bytes, the magic and version 2: the header (96 bytes) is missing",
    );
    case(
        "truncated.part",
        good[..good.len() - 16].to_vec(),
        parse("FormatError::Truncated", "-"),
        "the last 16 bytes cut",
    );
    case(
        "header-len.part",
        changed(&|b| put(b, H_HEADER_LEN, &64u16.to_le_bytes())),
        parse("FormatError::BadHeader", "header_len"),
        "header_len 64",
    );
    case(
        "flags.part",
        changed(&|b| b[H_FLAGS] |= 2),
        parse("FormatError::BadHeader", "flags"),
        "an unknown flag bit",
    );
    case(
        "class-3.part",
        changed(&|b| b[H_CLASS] = 3),
        parse("FormatError::BadHeader", "class"),
        "class 3",
    );
    case(
        "source-without-build-id.part",
        changed(&|b| b[H_SOURCE] = SOURCE_BUILD_ID),
        parse("FormatError::BadHeader", "source"),
        "source 1 (a library with a build ID) and build_id_len 0",
    );
    case(
        "reserved.part",
        changed(&|b| b[H_RESERVED1] = 1),
        parse("FormatError::BadHeader", "reserved"),
        "a reserved header byte not 0",
    );
    case(
        "total-len.part",
        changed(&|b| {
            let total = le32(b, H_TOTAL_LEN) + 16;
            put(b, H_TOTAL_LEN, &(total as u32).to_le_bytes());
            b.resize(total, 0);
        }),
        parse("FormatError::BadHeader", "total_len"),
        "total_len 16 bytes past the last blob's padding (the bytes present)",
    );
    case(
        "unsigned-with-signature.part",
        {
            let mut b = tiny_full.build();
            let [_, _, sig_off, _] = offsets(&b);
            b[sig_off] = 1;
            b
        },
        parse("FormatError::Table", "padding"),
        "unsigned, and the signature block is not zero",
    );

    // parse: the tables.
    case(
        "slot-order.part",
        changed(&|b| put(b, SLOTS_OFF + 7 * SLOT_LEN, &2u16.to_le_bytes())),
        parse("FormatError::Table", "image_list"),
        "slot 7's first descriptor is 2, not the previous slot's end (3)",
    );
    case(
        "flavor-key-0.part",
        respec(&|s| s.slots[0][1].0 = 0),
        parse("FormatError::Table", "descriptors"),
        "a descriptor with key 0",
    );
    case(
        "getter-past-toc.part",
        respec(&|s| s.slots[0][0].1[2] = whole(7)),
        parse("FormatError::Table", "descriptors"),
        "a getter naming entry 7 of 7",
    );
    case(
        "getter-kind-4.part",
        respec(&|s| s.slots[0][0].1[2] = (4, 0)),
        parse("FormatError::Table", "descriptors"),
        "getter kind 4",
    );
    case(
        "null-getter-with-index.part",
        respec(&|s| s.slots[0][0].1[2] = (GETTER_NULL, 1)),
        parse("FormatError::Table", "descriptors"),
        "a NULL getter with index 1",
    );
    case(
        "profiler-cursor.part",
        respec(&|s| s.prof[0][1] = (GETTER_CURSOR_END, B_PROF_CAM)),
        parse("FormatError::Table", "hwdecode_table_list"),
        "a profiler getter that is a cursor",
    );
    case(
        "unknown-codec.part",
        changed(&|b| {
            let e = toc_entry(b, 0);
            b[e + T_CODEC] = 2;
        }),
        parse("FormatError::UnknownCodec", "-"),
        "codec 2",
    );
    case(
        "stored-lengths-differ.part",
        changed(&|b| {
            let e = toc_entry(b, 0);
            put(b, e + T_DECODED_LEN, &41u32.to_le_bytes());
        }),
        parse("FormatError::Table", "table of contents"),
        "a stored blob whose decoded_len is not its stored_len",
    );
    case(
        "blob-over-1-mib.part",
        changed(&|b| {
            let e = toc_entry(b, usize::from(B_PROF_TABLE));
            put(b, e + T_DECODED_LEN, &((1u32 << 20) + 1).to_le_bytes());
        }),
        parse("FormatError::Table", "table of contents"),
        "a deflate blob whose decoded_len is 1 MiB + 1",
    );
    case(
        "blob-of-1-mib.part",
        respec(&|s| {
            s.blobs.push(BlobSpec {
                decoded: text_blob("exactly 1 MiB decoded", MAX_BLOB_LEN),
                deflate: true,
            });
            s.slots[0][2].1[1] = whole(7);
        }),
        Verdict::Accept,
        "entry 7, a deflate blob of exactly 1 MiB (1,048,576 bytes) decoded: the bound is inclusive",
    );
    case(
        "toc-reserved.part",
        changed(&|b| {
            let e = toc_entry(b, 0);
            b[e + T_CODEC + 2] = 1;
        }),
        parse("FormatError::Table", "table of contents"),
        "a reserved byte of entry 0 (at +14) not 0",
    );
    case(
        "decoded-total-64-mib.part",
        sixty_four_mib(&key, 0),
        refuse(Step::Blobs, "LoadError::Decode", "TooShort"),
        "decoded lengths adding up to exactly 64 MiB (allowed: it parses and verifies); entry 7 records 1 MiB, its stream decodes to 1,100 bytes",
    );
    case(
        "decoded-total-over-64-mib.part",
        sixty_four_mib(&key, 1),
        parse("FormatError::Table", "table of contents"),
        "decoded lengths adding up to 64 MiB + 1 byte (entry 70 takes the sum past)",
    );
    case(
        "blob-offset.part",
        changed(&|b| {
            let e = toc_entry(b, 1);
            let offset = le32(b, e + T_OFFSET) + 16;
            put(b, e + T_OFFSET, &(offset as u32).to_le_bytes());
        }),
        parse("FormatError::Table", "table of contents"),
        "entry 1 starts 16 bytes after the end of entry 0's padding",
    );
    case(
        "blob-padding.part",
        {
            let mut b = good.clone();
            let e = toc_entry(&b, usize::from(B_IRAM_PERF));
            let after = le32(&b, e + T_OFFSET) + 40;
            b[after] = 1;
            b
        },
        parse("FormatError::Table", "padding"),
        "a padding byte after blob 0 not 0",
    );

    // parse: the canonical layout.
    case(
        "unreferenced-blob.part",
        respec(&|s| {
            s.blobs.push(BlobSpec {
                decoded: text_blob("named by no getter", 24),
                deflate: false,
            })
        }),
        parse("FormatError::UnreferencedBlob", "-"),
        "entry 7, which no getter names",
    );
    case(
        "duplicate-blob.part",
        respec(&|s| {
            s.blobs.push(s.blobs[usize::from(B_IRAM_PERF)].clone());
            s.slots[0][2].1[1] = whole(7);
        }),
        parse("FormatError::DuplicateBlob", "-"),
        "entry 7 holds the same bytes as entry 0",
    );
    case(
        "cursor-onto-deflate.part",
        respec(&|s| s.slots[7][0].1[2] = (GETTER_CURSOR_END, B_PROF_TABLE)),
        parse("FormatError::CursorOntoCompressed", "-"),
        "a cursor onto the deflate blob 5",
    );
    case(
        "named-by-a-cursor-only.part",
        respec(&|s| {
            s.blobs.push(BlobSpec {
                decoded: text_blob("named by a cursor only", 24),
                deflate: false,
            });
            s.slots[0][0].1[2] = (GETTER_CURSOR_START, 7);
        }),
        Verdict::Accept,
        "entry 7, which only a cursor (slot 0's SRAM, key 1) names: a cursor names its entry",
    );
    let front = tiny(true).signed(&key);
    let mut front_case = |name, bytes, verdict, about| {
        cases.push(Case {
            name,
            bytes,
            min_security_counter: 1,
            expected_class: "front",
            verdict,
            about,
        });
    };
    front_case(
        "tiny-front.part",
        front.clone(),
        Verdict::Accept,
        "the hand-built tables as the front class has them (keys 2 and -5 NULL)",
    );
    front_case(
        "front-with-debug.part",
        {
            let mut s = tiny(true);
            s.slots[0][1].1[0] = whole(B_IRAM_PERF_SHADOWED);
            s.signed(&key)
        },
        parse("FormatError::ClassContradicted", "descriptors"),
        "class front, and a DEBUG (key 2) getter that is not NULL",
    );
    front_case(
        "front-with-maverick-profiler.part",
        {
            let mut s = tiny(true);
            s.prof[37] = [whole(B_PROF_CAM), NULL];
            s.signed(&key)
        },
        parse("FormatError::ClassContradicted", "hwdecode_table_list"),
        "class front, and a MAVERICK (slot 37) profiler getter",
    );
    front_case(
        "front-null-getters-outside.part",
        {
            let mut s = tiny(true);
            s.slots[37] = vec![(2, [NULL; 4])];
            s.signed(&key)
        },
        Verdict::Accept,
        "class front, and a MAVERICK (slot 37) DEBUG descriptor whose getters are all NULL: only a non-NULL getter contradicts the class",
    );
    let mut cases_verify = |name, bytes, verdict, about| {
        cases.push(Case {
            name,
            bytes,
            min_security_counter: 1,
            expected_class: "full",
            verdict,
            about,
        });
    };

    // verify.
    let verify = |reason| refuse(Step::Verify, reason, "-");
    cases_verify(
        "wrong-class.part",
        front,
        verify("TrustError::WrongClass"),
        "tiny-front.part where full tables are expected",
    );
    cases_verify(
        "unsigned.part",
        tiny_full.build(),
        verify("TrustError::Unsigned"),
        "no signature (flag bit 0 clear)",
    );
    cases_verify(
        "other-key.part",
        {
            // Another key's ID, the signature still the test key's over the changed bytes.
            let mut b = good.clone();
            put(
                &mut b,
                H_KEY_ID,
                &PublicKey::from_bytes([0x5a; 32]).key_id(),
            );
            let [_, _, sig_off, _] = offsets(&b);
            let signature = key.sign(&b[..sig_off]);
            put(&mut b, sig_off, &signature);
            b
        },
        verify("TrustError::UnknownKey"),
        "the key ID of another key (of 32 bytes 0x5a)",
    );
    cases_verify(
        "bad-signature.part",
        {
            let mut b = good.clone();
            put(&mut b, H_SECURITY_COUNTER, &2u32.to_le_bytes());
            b
        },
        verify("TrustError::BadSignature"),
        "the security counter changed after signing",
    );
    cases_verify(
        "rollback.part",
        changed(&|b| put(b, H_SECURITY_COUNTER, &0u32.to_le_bytes())),
        verify("TrustError::Rollback"),
        "security counter 0, minimum 1",
    );

    // blobs: a device checks each blob when it uses it; these fail only there.
    let blob_at = |b: &[u8], n: u16| le32(b, toc_entry(b, usize::from(n)) + T_OFFSET);
    cases_verify(
        "tampered-blob.part",
        {
            let mut b = good.clone();
            let at = blob_at(&b, B_DRAM_PERF);
            b[at] ^= 1;
            b
        },
        refuse(Step::Blobs, "LoadError::DigestMismatch", "-"),
        "a flipped bit in stored blob 1 (outside the signed bytes)",
    );
    cases_verify(
        "tampered-stream.part",
        {
            let mut b = good.clone();
            let at = blob_at(&b, B_PROF_TABLE);
            b[at + 2] ^= 1;
            b
        },
        refuse(Step::Blobs, "LoadError::StoredDigestMismatch", "-"),
        "a flipped bit in deflate blob 5's stream",
    );
    cases_verify(
        "short-stream.part",
        changed(&|b| {
            let e = toc_entry(b, usize::from(B_PROF_TABLE));
            put(b, e + T_DECODED_LEN, &401u32.to_le_bytes());
        }),
        refuse(Step::Blobs, "LoadError::Decode", "TooShort"),
        "deflate blob 5 records 401 decoded bytes; its stream decodes to 400",
    );
    let literals = b"nrtucode";
    let (stream, unused) = fixed_huffman_literals(literals);
    assert_eq!((stream.len(), unused), (10, 6), "3 + 8 x 8 + 7 bits");
    let hand = |flip: u8| {
        let mut s = tiny(false);
        s.blobs.push(BlobSpec {
            decoded: literals.to_vec(),
            deflate: true,
        });
        s.slots[0][2].1[1] = whole(7);
        let mut stream = stream.clone();
        let last = stream.len() - 1;
        s = s.with_stream(7, stream.clone());
        let mut bytes = s.signed(&key);
        // The change is made after signing, to the blob's bytes (outside the signed bytes).
        stream[last] ^= flip;
        let at = blob_at(&bytes, 7) + last;
        bytes[at] = stream[last];
        bytes
    };
    cases_verify(
        "hand-written-stream.part",
        hand(0),
        Verdict::Accept,
        "entry 7: a deflate stream written by hand (one fixed-Huffman block, 8 literals, 6 unused bits after the end code, 0)",
    );
    cases_verify(
        "stream-end-bits.part",
        hand(0x80),
        refuse(Step::Blobs, "LoadError::StoredDigestMismatch", "-"),
        "entry 7's last stream byte with an unused bit after the end code set: it decodes the same, and the signed stored_sha256 refuses it",
    );
    cases
}

/// `len` bytes that deflate cannot shrink (xorshift32 from `seed`).
fn noise(seed: u32, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x.to_le_bytes()[0]
        })
        .collect()
}

/// The hand-built tables plus 64 deflate blobs of 1,100 noisy bytes each (entries 7 to 70,
/// named by 16 descriptors of slot 10), whose recorded decoded lengths are then set so that
/// all 71 add up to 64 MiB + `over` bytes: entries 7 to 69 record 1 MiB, entry 70 the rest.
/// Signed after the change. Every recorded length is within the entry's own bounds (1 MiB,
/// 1032 per stored byte), so only the sum can refuse it.
fn sixty_four_mib(key: &SigningKey, over: usize) -> Vec<u8> {
    let mut spec = tiny(false);
    let first = spec.blobs.len();
    let small: usize = spec.blobs.iter().map(|b| b.decoded.len()).sum();
    for n in 0..64u16 {
        spec.blobs.push(BlobSpec {
            decoded: noise(u32::from(n) + 1, 1100),
            deflate: true,
        });
    }
    spec.slots[10] = (0..16u16)
        .map(|d| {
            let n = |r: u16| whole(first as u16 + d * 4 + r);
            (100 + i32::from(d), [n(0), n(1), n(2), n(3)])
        })
        .collect();
    let mut bytes = spec.build();
    let last = first + 63;
    for n in first..=last {
        let e = toc_entry(&bytes, n);
        let decoded = if n == last {
            MAX_DECODED_TOTAL - 63 * MAX_BLOB_LEN - small + over
        } else {
            MAX_BLOB_LEN
        };
        assert!(
            decoded <= le32(&bytes, e + T_STORED_LEN) * DEFLATE_MAX_RATIO,
            "entry {n}'s stream is long enough for 1 MiB"
        );
        put(
            &mut bytes,
            e + T_DECODED_LEN,
            &(decoded as u32).to_le_bytes(),
        );
    }
    sign(&mut bytes, key);
    bytes
}
