//! [`OpenedPartition`]: a signed partition verified whole at open by the core's
//! [`CheckedPartition`] (signature, policy, then every blob's digest; each compressed blob decoded
//! once into memory it owns, its decoded digest checked), answering the vendor's two resolvers
//! with pointers into that memory: every non-empty blob 16-byte aligned (`NRTUCODE_BLOB_ALIGN`),
//! unmoved and unchanged until the partition is dropped. What this layer adds for C: the
//! refusal codes and messages of `nrtucode.h`, the key from raw bytes or SPKI PEM text, the
//! process environment, and the vendor's integer codes.

use core::ffi::c_int;
use std::path::Path;

use nrtucode::StdEnv;
use nrtucode::partition::{CheckedPartition, PartitionFile, Policy, PublicKey};

use crate::refusal::{NRTUCODE_PARTITION_E_KEY, Refusal};

/// The longest PEM text a key is read from (an ed25519 SPKI PEM is about 113 bytes).
const MAX_PEM_BYTES: usize = 4096;

/// A partition verified whole at open, owning its bytes and its decoded blobs.
pub struct OpenedPartition(CheckedPartition);

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
    /// Reads the partition file at `path` and verifies it (`name` names it in a refusal) with
    /// `key` and `policy`: parse, the signature and policy, then every blob. Refused at the
    /// first failure, naming it.
    pub fn open_path(
        path: &Path,
        name: &str,
        key: &PublicKey,
        policy: &Policy,
    ) -> Result<Self, Refusal> {
        PartitionFile::open(path, key, policy)
            .map(Self)
            .map_err(|e| Refusal::of_open(name, &e, key))
    }

    /// Verifies a copy of `bytes` (`what` names them in a refusal), as
    /// [`open_path`](Self::open_path) verifies a file's; the caller's buffer is not kept.
    pub fn open_copy(
        bytes: &[u8],
        what: &str,
        key: &PublicKey,
        policy: &Policy,
    ) -> Result<Self, Refusal> {
        CheckedPartition::verify_copy(bytes, key, policy)
            .map(Self)
            .map_err(|e| Refusal::of_open(what, &e, key))
    }

    /// The checked partition.
    pub fn checked(&self) -> &CheckedPartition {
        &self.0
    }

    /// The vendor's `nrtucode_get_memory_image` over this partition (the process environment
    /// read like the vendor's): the bytes, or the vendor's code.
    pub fn memory_image(&self, idx: u32, region: c_int, flavor: c_int) -> Result<&[u8], c_int> {
        self.0
            .get_memory_image(idx, region, flavor, &StdEnv)
            .map_err(|e| e.code())
    }

    /// The vendor's `nrtucode_get_hwdecode_table` over this partition.
    pub fn hwdecode_table(&self, idx: u32, kind: c_int) -> Result<&[u8], c_int> {
        self.0.get_hwdecode_table(idx, kind).map_err(|e| e.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrtucode::partition::{Codec, TableClass};
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
            let opened = OpenedPartition::open_copy(&bytes, "test", &key.public_key(), &policy)
                .expect("opens");
            let tables = opened.checked().tables();
            let (mut decoded, mut deflate) = (0usize, 0usize);
            for id in tables.blob_ids() {
                let entry = tables.toc_entry(id).expect("entry");
                if entry.codec == Codec::Deflate {
                    deflate += 1;
                    decoded = (decoded + entry.decoded_len as usize)
                        .next_multiple_of(nrtucode::catalog::BLOB_ALIGN);
                }
            }
            assert_eq!(opened.checked().decoded_len(), decoded);
            assert_eq!(compression == Compression::Stored, decoded == 0);
            println!(
                "{compression:?}: partition {} bytes, {deflate} compressed blobs decoded into {} bytes",
                bytes.len(),
                opened.checked().decoded_len()
            );
        }
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
