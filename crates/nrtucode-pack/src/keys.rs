//! ed25519 keys: [`SigningKey`] (PKCS#8 PEM) and public keys (SPKI PEM, or the Rust `const`
//! a firmware pastes).

use ed25519_compact::{KeyPair, PublicKey as EdPublicKey};
use nrtucode::partition::PublicKey;

use crate::error::PackError;

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
    /// -algorithm ed25519` writes it).
    pub fn from_pem(text: &str) -> Result<Self, PackError> {
        KeyPair::from_pem(text.trim())
            .map(SigningKey)
            .map_err(|e| PackError::Key(format!("not an ed25519 PKCS#8 PEM private key: {e}")))
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

/// The public key of an SPKI PEM file.
pub fn public_key_from_pem(text: &str) -> Result<PublicKey, PackError> {
    let key = EdPublicKey::from_pem(text.trim())
        .map_err(|e| PackError::Key(format!("not an ed25519 SPKI PEM public key: {e}")))?;
    Ok(PublicKey::from_bytes(*key))
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
