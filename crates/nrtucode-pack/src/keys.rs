//! ed25519 keys: [`SigningKey`] (PKCS#8 PEM) and public keys (SPKI PEM, or the Rust `const`
//! a firmware pastes).

use ed25519_compact::{KeyPair, PublicKey as EdPublicKey};
use nrtucode::partition::PublicKey;

use crate::error::PackError;

/// The longest PEM text a key is read from (the one PEM reader's bound,
/// [`nrtucode_facts::pem_key::MAX_PEM_BYTES`]).
pub use nrtucode_facts::pem_key::MAX_PEM_BYTES;
use nrtucode_facts::pem_key::{PemLabel, pem_label};

/// An ed25519 signing key (a key pair).
#[derive(Clone)]
pub struct SigningKey(KeyPair);

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SigningKey(public {:?})", self.public_key())
    }
}

impl SigningKey {
    /// A new random key (from the operating system's generator).
    pub fn generate() -> Self {
        SigningKey(KeyPair::generate())
    }

    /// The key of a PKCS#8 PEM file (`-----BEGIN PRIVATE KEY-----`, as `openssl genpkey
    /// -algorithm ed25519` writes it), of at most [`MAX_PEM_BYTES`].
    pub fn from_pem(text: &str) -> Result<Self, PackError> {
        if text.len() > MAX_PEM_BYTES {
            return Err(PackError::Key(format!(
                "{} bytes, more than the {MAX_PEM_BYTES} bytes of the largest private key PEM read; not a key",
                text.len()
            )));
        }
        KeyPair::from_pem(text.trim()).map(SigningKey).map_err(|e| {
            PackError::Key(match pem_label(text) {
                Some(PemLabel::Public) => "a public key (SPKI PEM, BEGIN PUBLIC KEY), not a private key: signing takes the private key (nrtucode key generate writes one; its public key is what a reader verifies with)".to_owned(),
                Some(PemLabel::Other(label)) => format!("a PEM {label}, not an ed25519 PKCS#8 PEM private key (BEGIN PRIVATE KEY)"),
                Some(PemLabel::Private) | None => format!("not an ed25519 PKCS#8 PEM private key: {e}"),
            })
        })
    }

    /// The PKCS#8 PEM text of the private key.
    pub fn to_pem(&self) -> String {
        self.0.sk.to_pem()
    }

    /// The public key.
    pub fn public_key(&self) -> PublicKey {
        PublicKey::from_bytes(*self.0.pk)
    }

    /// The deterministic (RFC 8032) signature of `message`.
    pub fn sign(&self, message: &[u8]) -> [u8; 64] {
        *self.0.sk.sign(message, None)
    }
}

/// The SPKI PEM text of a public key (`-----BEGIN PUBLIC KEY-----`).
pub fn public_key_pem(key: &PublicKey) -> String {
    EdPublicKey::new(*key.as_bytes()).to_pem()
}

/// The public key of an SPKI PEM file, of at most [`MAX_PEM_BYTES`] (the one PEM reader,
/// [`nrtucode_facts::pem_key::public_key_from_pem`]).
pub fn public_key_from_pem(text: &str) -> Result<PublicKey, PackError> {
    nrtucode_facts::pem_key::public_key_from_pem(text)
        .map(PublicKey::from_bytes)
        .map_err(|e| PackError::Key(e.to_string()))
}

/// The Rust `const` of a public key, for a firmware to paste.
pub fn public_key_rust(key: &PublicKey, name: &str) -> String {
    let bytes: Vec<String> = key
        .as_bytes()
        .iter()
        .map(|b| format!("0x{b:02x}"))
        .collect();
    let lines: Vec<String> = bytes
        .chunks(8)
        .map(|c| format!("    {},", c.join(", ")))
        .collect();
    format!(
        "/// The ed25519 public key nrtucode partitions are verified with (key ID {}).\n\
         pub const {name}: nrtucode::partition::PublicKey = nrtucode::partition::PublicKey::from_bytes([\n{}\n]);\n",
        nrtucode_facts::hex::lower_hex(&key.key_id()),
        lines.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_of_the_wrong_type_is_named_for_what_it_is() {
        let key = SigningKey::generate();
        let public = public_key_pem(&key.public_key());
        let e = SigningKey::from_pem(&public).unwrap_err().to_string();
        assert!(e.contains("a public key (SPKI PEM"), "{e}");
        let e = public_key_from_pem(&key.to_pem()).unwrap_err().to_string();
        assert!(e.contains("a private key (PKCS#8 PEM"), "{e}");
        let cert = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
        let e = public_key_from_pem(cert).unwrap_err().to_string();
        assert!(e.contains("a PEM CERTIFICATE"), "{e}");
        let e = SigningKey::from_pem("garbage").unwrap_err().to_string();
        assert!(e.contains("not an ed25519 PKCS#8 PEM private key"), "{e}");
    }
    use proptest::prelude::*;

    #[test]
    fn a_long_text_is_refused_before_it_is_parsed() {
        let long = "A".repeat(MAX_PEM_BYTES + 1);
        let e = SigningKey::from_pem(&long).unwrap_err().to_string();
        assert!(e.contains("16384"), "{e}");
        assert!(public_key_from_pem(&long).is_err());
    }

    proptest! {
        /// Any text, and any change to a real key's text, is a key or an error: never a panic.
        #[test]
        fn key_parsing_never_panics(
            bytes in proptest::collection::vec(any::<u8>(), 0..400),
            at in any::<usize>(),
            byte in any::<u8>(),
        ) {
            let text = String::from_utf8_lossy(&bytes);
            let _ = SigningKey::from_pem(&text);
            let _ = public_key_from_pem(&text);
            let key = SigningKey::from_pem(&SigningKey::generate().to_pem()).unwrap();
            for pem in [key.to_pem(), public_key_pem(&key.public_key())] {
                let mut bytes = pem.into_bytes();
                let n = at % bytes.len();
                bytes[n] = byte;
                let text = String::from_utf8_lossy(&bytes);
                let _ = SigningKey::from_pem(&text);
                let _ = public_key_from_pem(&text);
            }
        }
    }
}
