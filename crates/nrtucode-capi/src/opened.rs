//! [`OpenedPartition`]: a signed partition copied into memory it owns, verified whole at open
//! (signature, policy, then every blob's digest; each compressed blob decoded once, after its
//! stream's digest held, into one buffer it owns, and its decoded digest checked), answering the
//! vendor's two resolvers with pointers into that memory.
//!
//! Everything is decided at open, so a resolver never fails for the data's sake and never hands
//! out a byte whose digest was not checked: the partition's bytes are never changed after the
//! checks (the copy is this value's own, immutable), and the decoded bytes are written once,
//! before the value exists.

use core::ffi::c_int;

use nrtucode::partition::{
    BlobId, Codec, Cursor, Loader, Partition, Policy, PublicKey, VerifiedPartition,
};
use nrtucode::{ResolveErr, StdEnv};

use crate::refusal::{NRTUCODE_PARTITION_E_KEY, NRTUCODE_PARTITION_E_MEMORY, Refusal};

/// The alignment of every non-empty blob an opened partition answers (`NRTUCODE_BLOB_ALIGN`).
const ALIGN: usize = nrtucode::catalog::BLOB_ALIGN;

/// The longest PEM text a key is read from (an ed25519 SPKI PEM is about 113 bytes).
const MAX_PEM_BYTES: usize = 4096;

/// Bytes whose first one lies at an address that is a multiple of 16: a vector a little longer
/// than the bytes, and where in it they start. Never changed after it is made.
pub struct AlignedBytes {
    storage: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBytes {
    /// `len` zero bytes, aligned; a refusal, not an abort, when they cannot be allocated.
    fn zeroed(len: usize) -> Result<Self, Refusal> {
        let cannot = || {
            Refusal::new(
                NRTUCODE_PARTITION_E_MEMORY,
                format!("cannot allocate {len} bytes for the partition"),
            )
        };
        let size = len.checked_add(ALIGN - 1).ok_or_else(cannot)?;
        let mut storage = Vec::new();
        storage.try_reserve_exact(size).map_err(|_| cannot())?;
        storage.resize(size, 0);
        // `align_offset` of a `u8` pointer is always below `ALIGN` (it is never `usize::MAX`
        // for a byte pointer); `min` keeps the window inside the vector regardless.
        let start = storage.as_ptr().align_offset(ALIGN).min(ALIGN - 1);
        Ok(Self {
            storage,
            start,
            len,
        })
    }

    /// A copy of `bytes`, aligned.
    pub fn copy_of(bytes: &[u8]) -> Result<Self, Refusal> {
        let mut this = Self::zeroed(bytes.len())?;
        this.as_mut_slice().copy_from_slice(bytes);
        Ok(this)
    }

    /// `bytes`, kept where they are when they start aligned (as an allocator of 16-byte
    /// aligned blocks gives them), else copied.
    pub fn from_vec(bytes: Vec<u8>) -> Result<Self, Refusal> {
        if bytes.as_ptr().align_offset(ALIGN) == 0 {
            let len = bytes.len();
            Ok(Self {
                storage: bytes,
                start: 0,
                len,
            })
        } else {
            Self::copy_of(&bytes)
        }
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        self.storage
            .get(self.start..self.start + self.len)
            .unwrap_or(&[])
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        let (start, len) = (self.start, self.len);
        self.storage.get_mut(start..start + len).unwrap_or(&mut [])
    }
}

/// The verified view of a partition's owned bytes.
type Verified<'a> = VerifiedPartition<'a>;

self_cell::self_cell!(
    /// A partition's bytes and the verified view that borrows them.
    struct OwnedVerified {
        owner: AlignedBytes,
        #[covariant]
        dependent: Verified,
    }
);

/// A verified partition that owns its bytes and its decoded blobs.
pub struct OpenedPartition {
    verified: OwnedVerified,
    /// The decoded bytes of every compressed blob, each at a 16-byte aligned offset.
    decoded: AlignedBytes,
    /// Per table-of-contents entry: where its decoded bytes lie in `decoded` (offset, length),
    /// for a compressed blob; `None` for a stored one.
    decoded_at: Vec<Option<(usize, usize)>>,
}

/// A public key from 32 raw bytes, or from an ed25519 public key in SPKI PEM text (any other
/// length).
pub fn public_key_of(key: &[u8]) -> Result<PublicKey, Refusal> {
    if let Ok(raw) = <[u8; 32]>::try_from(key) {
        return Ok(PublicKey::from_bytes(raw));
    }
    let refuse = |why: &str| {
        Refusal::new(
            NRTUCODE_PARTITION_E_KEY,
            format!("the key is neither 32 raw bytes nor an ed25519 public key in SPKI PEM: {why}"),
        )
    };
    if key.len() > MAX_PEM_BYTES {
        return Err(refuse(&format!(
            "{} bytes, more than the {MAX_PEM_BYTES} a PEM key may have",
            key.len()
        )));
    }
    let text = core::str::from_utf8(key).map_err(|_| refuse("not text"))?;
    // A C string's terminating NUL, when the caller counted it.
    let text = text.trim_end_matches('\0').trim();
    if text.contains("PRIVATE KEY") {
        return Err(Refusal::new(
            NRTUCODE_PARTITION_E_KEY,
            "the key is a private key; give its public key (nrtucode key public KEY.pem)",
        ));
    }
    let key = ed25519_compact::PublicKey::from_pem(text).map_err(|e| refuse(&e.to_string()))?;
    Ok(PublicKey::from_bytes(*key))
}

impl OpenedPartition {
    /// Verifies `bytes` (`what` names them in a refusal) with `key` and `policy`: parse, the
    /// signature and policy, then every blob: a stored one hashed in place, a compressed one's
    /// stream hashed, then decoded into the buffer this value owns while hashing the output.
    /// Refused at the first failure, naming it.
    pub fn open(
        bytes: AlignedBytes,
        what: &str,
        key: &PublicKey,
        policy: &Policy,
    ) -> Result<Self, Refusal> {
        let verified = OwnedVerified::try_new(bytes, |bytes| {
            let partition =
                Partition::parse(bytes.as_slice()).map_err(|e| Refusal::of_format(what, &e))?;
            partition
                .verify(key, policy)
                .map_err(|e| Refusal::of_trust(what, &e, key))
        })?;
        let p = verified.borrow_dependent();
        let tables = p.tables();
        let ids: Vec<BlobId> = tables.blob_ids().collect();
        // Where each compressed blob goes: lengths were bounded by parse (64 MiB in all).
        let mut decoded_at = vec![None; ids.len()];
        let mut total = 0usize;
        for &id in &ids {
            let Some(entry) = tables.toc_entry(id) else {
                continue;
            };
            if entry.codec != Codec::Stored {
                let len = entry.decoded_len as usize;
                decoded_at[id.index()] = Some((total, len));
                total = (total + len).next_multiple_of(ALIGN);
            }
        }
        let mut decoded = AlignedBytes::zeroed(total)?;
        let mut loader = Box::new(Loader::new());
        for &id in &ids {
            let Some(blob) = p.blob(id) else { continue };
            let checked = match decoded_at[id.index()] {
                None => blob.check(loader.hasher()).map(|_| ()),
                Some((at, len)) => {
                    let out = decoded
                        .as_mut_slice()
                        .get_mut(at..at + len)
                        .unwrap_or(&mut []);
                    blob.load_into(out, &mut loader).map(|_| ())
                }
            };
            checked.map_err(|e| Refusal::of_load(what, &e, &tables, id))?;
        }
        Ok(Self {
            verified,
            decoded,
            decoded_at,
        })
    }

    /// The verified partition.
    pub fn partition(&self) -> &VerifiedPartition<'_> {
        self.verified.borrow_dependent()
    }

    /// Bytes of the decoded blobs this value holds (0 when no blob is compressed).
    pub fn decoded_bytes(&self) -> usize {
        self.decoded.as_slice().len()
    }

    /// The bytes a blob handle names: in place for a stored blob (checked at open), in the
    /// decoded buffer for a compressed one; a cursor's empty slice at its boundary.
    fn bytes_of<'s>(&'s self, blob: nrtucode::partition::Blob<'s>) -> Option<&'s [u8]> {
        match blob.codec() {
            // Hashed against its signed digest at open, in memory nobody writes.
            Codec::Stored => blob.unchecked_in_place(),
            _ => {
                let (at, len) = (*self.decoded_at.get(blob.id().index())?)?;
                let whole = self.decoded.as_slice().get(at..at + len)?;
                Some(match blob.cursor() {
                    None => whole,
                    Some(Cursor::Start) => whole.split_at(0).0,
                    Some(Cursor::End) => whole.split_at(whole.len()).1,
                })
            }
        }
    }

    /// The vendor's `nrtucode_get_memory_image` over this partition (the process environment
    /// read like the vendor's): the bytes, or the vendor's code.
    pub fn memory_image(&self, idx: u32, region: c_int, flavor: c_int) -> Result<&[u8], c_int> {
        let blob = self
            .partition()
            .get_memory_image(idx, region, flavor, &StdEnv)
            .map_err(|e| e.code())?;
        self.bytes_of(blob)
            .ok_or_else(|| ResolveErr::NullGetter.code())
    }

    /// The vendor's `nrtucode_get_hwdecode_table` over this partition.
    pub fn hwdecode_table(&self, idx: u32, kind: c_int) -> Result<&[u8], c_int> {
        let blob = self
            .partition()
            .get_hwdecode_table(idx, kind)
            .map_err(|e| e.code())?;
        self.bytes_of(blob)
            .ok_or_else(|| ResolveErr::NoProfiler.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrtucode::partition::TableClass;
    use nrtucode_pack::{Blobs, Compression, PackOptions, SigningKey, pack_with};

    const TEST_KEY: &str = include_str!("../../../keys/test-ed25519.pem");
    const TEST_KEY_PUB: &str = include_str!("../../../keys/test-ed25519.pub.pem");

    /// What an opened partition holds besides its file: the decoded compressed blobs, once.
    /// `cargo test -p nrtucode-capi --lib memory -- --nocapture` prints the figures of
    /// docs/c-abi.md.
    #[test]
    #[cfg_attr(miri, ignore = "packs and verifies 10 MB twice: hours under miri")]
    fn memory_is_the_file_and_each_compressed_blob_decoded_once() {
        let key = SigningKey::from_pem(TEST_KEY).expect("test key");
        let options = PackOptions {
            security_counter: 1,
            key: Some(&key),
        };
        let policy = Policy {
            min_security_counter: 1,
            expected_class: TableClass::Full,
        };
        for compression in [Compression::Stored, Compression::Deflate] {
            let blobs = Blobs::fixtures(TableClass::Full);
            let (bytes, _) = pack_with(&blobs, &options, compression).expect("pack");
            let opened = OpenedPartition::open(
                AlignedBytes::copy_of(&bytes).expect("memory"),
                "test",
                &key.public_key(),
                &policy,
            )
            .expect("opens");
            let tables = opened.partition().tables();
            let (mut decoded, mut deflate) = (0usize, 0usize);
            for id in tables.blob_ids() {
                let entry = tables.toc_entry(id).expect("entry");
                if entry.codec == Codec::Deflate {
                    deflate += 1;
                    decoded = (decoded + entry.decoded_len as usize).next_multiple_of(ALIGN);
                }
            }
            assert_eq!(opened.decoded_bytes(), decoded);
            assert_eq!(compression == Compression::Stored, decoded == 0);
            println!(
                "{compression:?}: partition {} bytes, {deflate} compressed blobs decoded into {} bytes",
                bytes.len(),
                opened.decoded_bytes()
            );
        }
    }

    /// A size no allocator gives is a refusal, not an abort.
    #[test]
    fn memory_that_cannot_be_allocated_is_refused() {
        for len in [usize::MAX, usize::MAX - 3, isize::MAX as usize] {
            let refusal = AlignedBytes::zeroed(len).err().expect("refused");
            assert_eq!(refusal.code, NRTUCODE_PARTITION_E_MEMORY, "{len}");
            assert!(refusal.message.contains(&len.to_string()));
        }
        let small = AlignedBytes::copy_of(&[1, 2, 3]).expect("3 bytes");
        assert_eq!(small.as_slice(), &[1, 2, 3]);
        assert_eq!(small.as_slice().as_ptr().align_offset(ALIGN), 0);
        let empty = AlignedBytes::from_vec(Vec::new()).expect("nothing");
        assert!(empty.as_slice().is_empty());
    }

    #[test]
    fn a_key_is_32_raw_bytes_or_spki_pem_text() {
        let raw = *SigningKey::from_pem(TEST_KEY)
            .expect("test key")
            .public_key()
            .as_bytes();
        assert_eq!(public_key_of(&raw).expect("raw").as_bytes(), &raw);
        let pem = public_key_of(TEST_KEY_PUB.as_bytes()).expect("PEM");
        assert_eq!(pem.as_bytes(), &raw);
        // A C string with its NUL counted.
        let with_nul = [TEST_KEY_PUB.as_bytes(), b"\0"].concat();
        assert_eq!(
            public_key_of(&with_nul).expect("PEM and NUL").as_bytes(),
            &raw
        );
        let private = public_key_of(TEST_KEY.as_bytes()).expect_err("private");
        assert!(
            private.message.contains("private key"),
            "{}",
            private.message
        );
        for bad in [
            &raw[..31],
            b"not a key at all",
            &[0xff; 40][..],
            &[b'a'; 5000][..],
        ] {
            assert_eq!(
                public_key_of(bad).expect_err("refused").code,
                NRTUCODE_PARTITION_E_KEY
            );
        }
    }
}
