//! Opening a signed partition for C: the core's [`LoadedPartition`] (signature, policy, then
//! every blob's digest; each compressed blob decoded once into memory it owns, its decoded
//! digest checked) is what a handle and the drop-in hold and resolve through, answering the
//! vendor's two resolvers with pointers into that memory: every non-empty blob 16-byte aligned
//! (`NRTUCODE_BLOB_ALIGN`), unmoved and unchanged until the partition is dropped. What this
//! layer adds for C: the refusal codes and messages of `nrtucode.h` and the key from raw bytes
//! or SPKI PEM text.

use std::path::Path;

use nrtucode::partition::{LoadedPartition, PartitionFile, Policy, PublicKey};

use nrtucode_facts::pem_key::{MAX_PEM_BYTES, public_key_from_pem};

use crate::refusal::{KeyOrigin, NRTUCODE_PARTITION_E_KEY, Refusal};

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
    // The one PEM reader bounds the text too; refused here before it is scanned as UTF-8.
    if key.len() > MAX_PEM_BYTES {
        return Err(refuse(&format!(
            "{} bytes, more than the {MAX_PEM_BYTES} a PEM key may have",
            key.len()
        )));
    }
    let text = core::str::from_utf8(key).map_err(|_| refuse("not text"))?;
    // A C string's terminating NUL, when the caller counted it.
    let text = text.trim_end_matches('\0');
    public_key_from_pem(text)
        .map(PublicKey::from_bytes)
        .map_err(|e| refuse(&e.to_string()))
}

/// Reads the partition file at `path` and verifies it (`name` names it in a refusal) with `key`
/// (from `origin`) and `policy`: parse, the signature and policy, then every blob. Refused at
/// the first failure, naming it.
pub fn open_path(
    path: &Path,
    name: &str,
    key: &PublicKey,
    origin: KeyOrigin,
    policy: &Policy,
) -> Result<LoadedPartition, Refusal> {
    PartitionFile::open(path, key, policy).map_err(|e| Refusal::of_open(name, &e, key, origin))
}

/// Verifies a copy of `bytes` (`what` names them in a refusal) with the caller's `key`, as
/// [`open_path`] verifies a file's; the caller's buffer is not kept.
pub fn open_copy(
    bytes: &[u8],
    what: &str,
    key: &PublicKey,
    policy: &Policy,
) -> Result<LoadedPartition, Refusal> {
    LoadedPartition::verify_copy(bytes, key, policy)
        .map_err(|e| Refusal::of_open(what, &e, key, KeyOrigin::Given))
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
            let opened = open_copy(&bytes, "test", &key.public_key(), &policy).expect("opens");
            let tables = opened.tables();
            let (mut decoded, mut deflate) = (0usize, 0usize);
            for id in tables.blob_ids() {
                let entry = tables.toc_entry(id).expect("entry");
                if entry.codec == Codec::Deflate {
                    deflate += 1;
                    decoded = (decoded + entry.decoded_len as usize)
                        .next_multiple_of(nrtucode::catalog::BLOB_ALIGN);
                }
            }
            assert_eq!(opened.decoded_len(), decoded);
            assert_eq!(compression == Compression::Stored, decoded == 0);
            println!(
                "{compression:?}: partition {} bytes, {deflate} compressed blobs decoded into {} bytes",
                bytes.len(),
                opened.decoded_len()
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
