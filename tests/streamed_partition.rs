//! Features `update` and `mem-flash`: a partition on a flash that is not memory-mapped
//! (`nrtucode::partition::StreamedPartition`), read through `ReadNorFlash::read` alone, against
//! the same partition read in place: every answer of both resolvers, every blob loaded, the
//! whole check; the refusals (a blob byte, a signed byte, a padding byte changed, a short
//! region, a prefix buffer too small, a driver that fails; any bit changed gets the verdict it
//! gets in place, a property test); and the RAM it takes, printed for
//! the front and the full set (`cargo test -p nrtucode --features update,mem-flash --test
//! streamed_partition -- --nocapture`).

use embedded_storage::nor_flash::{ErrorType, ReadNorFlash};
use nrtucode::partition::format::{H_BLOBS_OFF, H_SECURITY_COUNTER, HEADER_LEN};
use nrtucode::partition::{
    BlobId, LoadError, Loader, Partition, Policy, PublicKey, READ_PIECE, StreamError,
    StreamedPartition, TableClass, TrustError, VerifiedPartition,
};
use nrtucode::update::Refusal;
use nrtucode::update::mem_flash::{MemFlash, MemFlashError};
use nrtucode::{Flavor, NoEnv};
use nrtucode_pack::{Blobs, Compression, PackOptions, SigningKey, pack_with};
use proptest::prelude::*;

mod partitions;

/// A NOR flash on a bus: `read` only (no mapping), each read counted; reads fail from the
/// `fail_from`th on.
struct OnTheBus {
    flash: MemFlash<4, 4, 4096>,
    reads: usize,
    bytes_read: usize,
    fail_from: Option<usize>,
}

impl ErrorType for OnTheBus {
    type Error = MemFlashError;
}

impl ReadNorFlash for OnTheBus {
    const READ_SIZE: usize = 4;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), MemFlashError> {
        if self.fail_from.is_some_and(|n| self.reads >= n) {
            return Err(MemFlashError::PowerOff);
        }
        self.reads += 1;
        self.bytes_read += bytes.len();
        self.flash.read(offset, bytes)
    }

    fn capacity(&self) -> usize {
        self.flash.capacity()
    }
}

/// Where the partition lies: a slot offset that is not the flash's start.
const BASE: u32 = 0x3000;

fn signing_key() -> SigningKey {
    SigningKey::from_pem(include_str!("../keys/test-ed25519.pem")).unwrap()
}

fn signed(class: TableClass, compression: Compression) -> (Vec<u8>, PublicKey) {
    let key = signing_key();
    let options = PackOptions {
        security_counter: 1,
        key: Some(&key),
    };
    let (bytes, _) = pack_with(&Blobs::fixtures(class), &options, compression).unwrap();
    (bytes, PublicKey::from_bytes(*key.public_key().as_bytes()))
}

fn policy(class: TableClass) -> Policy {
    Policy {
        min_security_counter: 0,
        expected_class: class,
    }
}

/// `partition` at [`BASE`] of a flash with room after it.
fn on_the_bus(partition: &[u8]) -> OnTheBus {
    let len = (BASE as usize + partition.len() + 4096).next_multiple_of(4096);
    let mut mem = vec![0xff; len];
    mem[BASE as usize..BASE as usize + partition.len()].copy_from_slice(partition);
    OnTheBus {
        flash: MemFlash::new(mem),
        reads: 0,
        bytes_read: 0,
        fail_from: None,
    }
}

/// The signed prefix's length (`blobs_off`), from the header.
fn blobs_off(partition: &[u8]) -> usize {
    u32::from_le_bytes(partition[H_BLOBS_OFF..H_BLOBS_OFF + 4].try_into().unwrap()) as usize
}

/// `bytes` verified in place, and at [`BASE`] of a flash read through `read` alone (its prefix
/// into `prefix`): the two partitions and the flash.
fn read_both<'a>(
    bytes: &'a [u8],
    key: &PublicKey,
    class: TableClass,
    prefix: &'a mut Vec<u8>,
) -> (VerifiedPartition<'a>, OnTheBus, StreamedPartition<'a>) {
    let in_place = Partition::parse(bytes)
        .unwrap()
        .verify(key, &policy(class))
        .unwrap();
    let mut flash = on_the_bus(bytes);
    prefix.resize(blobs_off(bytes), 0);
    let streamed =
        StreamedPartition::read(&mut flash, BASE, bytes.len(), prefix, key, &policy(class))
            .unwrap();
    (in_place, flash, streamed)
}

/// Every answer of both resolvers over `streamed` and `in_place` is the same handle (blob,
/// cursor, codec, length, digests) or the same code; the number of answers compared.
fn same_answers(streamed: &StreamedPartition<'_>, in_place: &VerifiedPartition<'_>) -> usize {
    let mut compared = 0;
    let flavors = Flavor::KEYS
        .iter()
        .map(|f| f.raw())
        .chain([0, 4, 16, 20, -1, i32::MAX]);
    for idx in 0..40u32 {
        for flavor in flavors.clone() {
            for region in -1..5 {
                let a = streamed.get_memory_image(idx, region, flavor, &NoEnv);
                let b = in_place.get_memory_image(idx, region, flavor, &NoEnv);
                match (a, b) {
                    (Ok(a), Ok(b)) => {
                        assert_eq!(
                            (a.id(), a.cursor(), a.codec(), a.len()),
                            (b.id(), b.cursor(), b.codec(), b.len())
                        );
                        assert_eq!(
                            (a.sha256(), a.stored_sha256()),
                            (b.sha256(), b.stored_sha256())
                        );
                    }
                    (a, b) => assert_eq!(a.err(), b.err(), "{idx} {region} {flavor}"),
                }
                compared += 1;
            }
        }
        for kind in -1..3 {
            let a = streamed.get_hwdecode_table(idx, kind);
            let b = in_place.get_hwdecode_table(idx, kind);
            match (a, b) {
                (Ok(a), Ok(b)) => assert_eq!((a.id(), a.len()), (b.id(), b.len())),
                (a, b) => assert_eq!(a.err(), b.err(), "{idx} {kind}"),
            }
            compared += 1;
        }
    }
    compared
}

#[test]
fn a_partition_read_through_read_answers_and_loads_as_it_does_in_place() {
    for class in [TableClass::Front, TableClass::Full] {
        let (bytes, key) = signed(class, Compression::Stored);
        let mut prefix = Vec::new();
        let (in_place, mut flash, streamed) = read_both(&bytes, &key, class, &mut prefix);
        let (parse_reads, parse_bytes) = (flash.reads, flash.bytes_read);
        let compared = same_answers(&streamed, &in_place);
        assert_eq!(flash.reads, parse_reads, "a lookup reads the flash");
        // Every blob loaded through the driver is the in-place blob, checked.
        let mut loader = Loader::new();
        let blobs = in_place.tables().blob_ids().count();
        for id in in_place.tables().blob_ids() {
            let want = in_place.blob(id).unwrap();
            let mut expected = vec![0u8; want.len()];
            want.load_into(&mut expected, &mut loader).unwrap();
            let got = streamed.blob(id).unwrap();
            let mut out = vec![0x5a; got.len() + 3];
            let loaded = got.load_into(&mut flash, &mut out, &mut loader).unwrap();
            assert_eq!(loaded, &expected[..], "{id:?}");
            got.check(&mut flash, loader.hasher()).unwrap();
        }
        let before = flash.bytes_read;
        streamed.check_blobs(&mut flash, loader.hasher()).unwrap();
        let stored: usize = (in_place.tables().blob_ids())
            .map(|id| in_place.tables().toc_entry(id).unwrap().stored_len as usize)
            .sum();
        // The whole check reads each blob once (plus the read units around each).
        assert!(flash.bytes_read - before >= stored);
        assert!(flash.bytes_read - before <= stored + blobs * 8);
        println!(
            "{class:?}: {} answers the same; prefix {} B in RAM + StreamedPartition {} B + \
             reads of {READ_PIECE} B; parse and verify read {parse_bytes} B in {parse_reads} \
             reads; {blobs} blobs loaded and checked through read",
            compared,
            streamed.partition().bytes().len(),
            StreamedPartition::SIZE,
        );
    }
}

#[test]
fn a_changed_byte_is_refused_where_it_lies_and_a_failing_driver_is_its_error() {
    let class = TableClass::Front;
    let (bytes, key) = signed(class, Compression::Stored);
    let p = Partition::parse(&bytes)
        .unwrap()
        .verify(&key, &policy(class))
        .unwrap();
    let tables = p.tables();
    let second = BlobId::new(1);
    let entry = tables.toc_entry(second).unwrap();
    let read = |image: &[u8], region: usize, prefix: usize, fail: Option<usize>| {
        let mut flash = on_the_bus(image);
        flash.fail_from = fail;
        let mut buf = vec![0u8; prefix];
        StreamedPartition::read(&mut flash, BASE, region, &mut buf, &key, &policy(class))
            .map(|_| ())
    };
    let prefix = blobs_off(&bytes);
    assert_eq!(read(&bytes, bytes.len(), prefix, None), Ok(()));

    // A byte of a blob: the prefix reads and verifies; the blob's check and load refuse it,
    // the load leaving zeros; the whole check names it; the other blobs load.
    let mut rotten = bytes.clone();
    rotten[entry.offset as usize + 3] ^= 0x10;
    let mut flash = on_the_bus(&rotten);
    let mut buf = vec![0u8; prefix];
    let streamed = StreamedPartition::read(
        &mut flash,
        BASE,
        bytes.len(),
        &mut buf,
        &key,
        &policy(class),
    )
    .unwrap();
    let mut loader = Loader::new();
    let mismatch = StreamError::Refused(Refusal::Load(LoadError::DigestMismatch { blob: second }));
    assert_eq!(
        streamed.check_blobs(&mut flash, loader.hasher()),
        Err(mismatch)
    );
    let blob = streamed.blob(second).unwrap();
    let mut out = vec![0x5a; blob.len()];
    assert_eq!(
        blob.load_into(&mut flash, &mut out, &mut loader),
        Err(mismatch)
    );
    assert!(out.iter().all(|&b| b == 0));
    let first = streamed.blob(BlobId::new(0)).unwrap();
    let mut out = vec![0; first.len()];
    assert!(first.load_into(&mut flash, &mut out, &mut loader).is_ok());
    let mut short = vec![0; blob.len() - 1];
    assert_eq!(
        blob.load_into(&mut flash, &mut short, &mut loader),
        Err(StreamError::Refused(Refusal::Load(
            LoadError::BufferTooSmall {
                needed: blob.len(),
                available: blob.len() - 1
            }
        )))
    );

    // A signed byte: the signature.
    let mut forged = bytes.clone();
    forged[H_SECURITY_COUNTER] ^= 1;
    assert_eq!(
        read(&forged, bytes.len(), prefix, None),
        Err(StreamError::Refused(Refusal::Trust(
            TrustError::BadSignature
        )))
    );
    // A padding byte after a blob (outside the signed bytes): the structure.
    // (blob 1 cut to 17 bytes, so that 15 bytes of padding follow it)
    let mut padded = partitions::rewrite(&bytes, 1, &signing_key(), |n, b| {
        if n == 1 { b[..17].to_vec() } else { b.to_vec() }
    });
    let cut = Partition::parse(&padded)
        .unwrap()
        .untrusted_tables()
        .toc_entry(second)
        .unwrap();
    let end = (cut.offset + cut.stored_len) as usize;
    assert_eq!(read(&padded, padded.len(), prefix, None), Ok(()));
    padded[end] = 1;
    assert!(matches!(
        read(&padded, padded.len(), prefix, None),
        Err(StreamError::Refused(Refusal::Format(_)))
    ));
    // A region shorter than the partition, a buffer shorter than the prefix.
    assert!(matches!(
        read(&bytes, bytes.len() - 1, prefix, None),
        Err(StreamError::Refused(Refusal::Format(_)))
    ));
    assert_eq!(
        read(&bytes, bytes.len(), prefix - 1, None),
        Err(StreamError::Refused(Refusal::PrefixBuffer {
            needed: prefix,
            available: prefix - 1
        }))
    );
    assert_eq!(
        read(&bytes, bytes.len(), HEADER_LEN, None),
        Err(StreamError::Refused(Refusal::PrefixBuffer {
            needed: prefix,
            available: HEADER_LEN
        }))
    );
    // The driver failing at each of the first reads (the header, the prefix, a padding).
    for n in 0..4 {
        assert_eq!(
            read(&bytes, bytes.len(), prefix, Some(n)),
            Err(StreamError::Read(MemFlashError::PowerOff)),
            "read {n}"
        );
    }
    // A region past the flash's end: refused before any read past it.
    let mut flash = on_the_bus(&bytes);
    let mut buf = vec![0u8; prefix];
    let capacity = flash.capacity();
    assert!(matches!(
        StreamedPartition::read(
            &mut flash,
            capacity as u32 - 8,
            4096,
            &mut buf,
            &key,
            &policy(class)
        ),
        Err(StreamError::OutOfRange)
    ));
}

#[test]
fn a_compressed_blob_is_decoded_from_its_stream_read_once_into_ram() {
    let class = TableClass::Front;
    let (bytes, key) = signed(class, Compression::Deflate);
    let mut prefix = Vec::new();
    let (in_place, mut flash, streamed) = read_both(&bytes, &key, class, &mut prefix);
    let mut loader = Loader::new();
    let mut compressed = 0;
    for id in in_place.tables().blob_ids() {
        let e = in_place.tables().toc_entry(id).unwrap();
        let blob = streamed.blob(id).unwrap();
        let mut stream = vec![0u8; e.stored_len as usize];
        let mut out = vec![0u8; blob.len()];
        let got = blob.decode_into(&mut flash, &mut stream, &mut out, &mut loader);
        if e.codec == nrtucode::partition::Codec::Stored {
            assert!(got.is_ok());
            continue;
        }
        compressed += 1;
        if cfg!(feature = "deflate") {
            let mut expected = vec![0u8; blob.len()];
            let want = in_place
                .blob(id)
                .unwrap()
                .load_into(&mut expected, &mut loader);
            assert_eq!(
                got.map(<[u8]>::to_vec),
                want.map(<[u8]>::to_vec)
                    .map_err(|e| StreamError::Refused(Refusal::Load(e)))
            );
        }
        // `load_into` does not decode: the stream must be in RAM, authenticated, first.
        assert!(matches!(
            blob.load_into(&mut flash, &mut out, &mut loader),
            Err(StreamError::Refused(Refusal::Load(
                LoadError::NotStored { .. }
            )))
        ));
        let mut short = vec![0u8; e.stored_len as usize - 1];
        assert!(matches!(
            blob.decode_into(&mut flash, &mut short, &mut out, &mut loader),
            Err(StreamError::Refused(Refusal::Load(
                LoadError::BufferTooSmall { .. }
            )))
        ));
    }
    assert!(compressed > 0, "the fixtures compress");
}

/// A small signed front partition (every blob cut to 16 bytes of its digest) and its key.
fn small() -> &'static (Vec<u8>, PublicKey) {
    static SMALL: std::sync::OnceLock<(Vec<u8>, PublicKey)> = std::sync::OnceLock::new();
    SMALL.get_or_init(|| {
        let (bytes, key) = signed(TableClass::Front, Compression::Stored);
        (partitions::shrink(&bytes, 16, &signing_key()), key)
    })
}

/// The verdict on `bytes` read in place: parse, verify, every blob hashed; `Ok` or why not.
fn in_place_verdict(bytes: &[u8], key: &PublicKey) -> Result<(), Refusal> {
    let p = Partition::parse(bytes).map_err(Refusal::Format)?;
    let v = p
        .verify(key, &policy(TableClass::Front))
        .map_err(Refusal::Trust)?;
    v.check_blobs(&mut nrtucode::digest::SoftSha256::new())
        .map(|_| ())
        .map_err(Refusal::Load)
}

/// The same, every byte read through `read` alone.
fn streamed_verdict(bytes: &[u8], key: &PublicKey) -> Result<(), Refusal> {
    let mut flash = on_the_bus(bytes);
    let mut prefix = vec![0u8; 16 * 1024];
    let policy = policy(TableClass::Front);
    let read = StreamedPartition::read(&mut flash, BASE, bytes.len(), &mut prefix, key, &policy);
    let refused = |e: StreamError<MemFlashError>| match e {
        StreamError::Refused(r) => r,
        other => panic!("not a refusal: {other:?}"),
    };
    let p = read.map_err(refused)?;
    (p.check_blobs(&mut flash, &mut nrtucode::digest::SoftSha256::new())).map_err(refused)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// Any bit of a partition changed: read through `read` alone it gets the verdict it gets in
    /// place, the same refusal or the same acceptance (a change in the blob area's padding or
    /// in a blob included), and never a panic or a read outside the flash.
    #[test]
    fn a_changed_bit_gets_the_same_verdict_through_read_as_in_place(at in 0usize..1 << 20, bit in 0u8..8) {
        let (bytes, key) = small();
        let mut changed = bytes.clone();
        let at = at % changed.len();
        changed[at] ^= 1 << bit;
        let (place, streamed) = (in_place_verdict(&changed, key), streamed_verdict(&changed, key));
        prop_assert!(place.is_err(), "a changed bit at {} was accepted", at);
        prop_assert_eq!(place, streamed);
    }
}
