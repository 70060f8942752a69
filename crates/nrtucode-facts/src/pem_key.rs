//! The one reader of an ed25519 public key in SPKI PEM (`-----BEGIN PUBLIC KEY-----`), for
//! every place that takes one: the packer and the tool (`nrtucode_pack::public_key_from_pem`),
//! the C library's build script and its `nrtucode_partition_open_with_key`, and the bare-metal
//! template's build script (feature `pem`). A text over [`MAX_PEM_BYTES`] is refused before it
//! is parsed; a private key, a certificate or another PEM is named for what it is.

use std::fmt;

/// The longest PEM text a key is read from (an ed25519 PKCS#8 or SPKI PEM is about 120
/// bytes; a key file larger than this is not a key, and is refused before it is parsed).
pub const MAX_PEM_BYTES: usize = 16 << 10;

/// What a PEM text's first `-----BEGIN …-----` line says it holds, so that a key of the
/// wrong type is named for what it is instead of failing to parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PemLabel {
    /// `PRIVATE KEY` (PKCS#8).
    Private,
    /// `PUBLIC KEY` (SPKI).
    Public,
    /// Any other label (`CERTIFICATE`, `OPENSSH PRIVATE KEY`, `EC PRIVATE KEY`, …), as
    /// written (at most 40 characters).
    Other(String),
}

/// The label of the first PEM boundary in `text`, `None` if it has none.
pub fn pem_label(text: &str) -> Option<PemLabel> {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("-----BEGIN "))?;
    let label = line.strip_prefix("-----BEGIN ")?.strip_suffix("-----")?;
    Some(match label {
        "PRIVATE KEY" => PemLabel::Private,
        "PUBLIC KEY" => PemLabel::Public,
        other => PemLabel::Other(other.chars().take(40).collect()),
    })
}

/// Why a text is not an ed25519 SPKI PEM public key.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PemKeyError {
    /// Longer than [`MAX_PEM_BYTES`]: not a key.
    TooLarge {
        /// The text's length in bytes.
        len: usize,
    },
    /// A private key (PKCS#8 PEM), where its public key is wanted.
    PrivateKey,
    /// A PEM of another type (its label).
    OtherPem(String),
    /// Labelled `PUBLIC KEY` (or not PEM at all), but not an ed25519 SPKI key.
    Invalid(String),
}

impl fmt::Display for PemKeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge { len } => write!(
                f,
                "{len} bytes, more than the {MAX_PEM_BYTES} bytes of the largest public key PEM read; not a key"
            ),
            Self::PrivateKey => f.write_str(
                "a private key (PKCS#8 PEM, BEGIN PRIVATE KEY), not a public key: verifying takes \
                 the public key (nrtucode key public KEY.pem writes it); keep the private key off \
                 the device",
            ),
            Self::OtherPem(label) => write!(
                f,
                "a PEM {label}, not an ed25519 SPKI PEM public key (BEGIN PUBLIC KEY)"
            ),
            Self::Invalid(why) => write!(f, "not an ed25519 SPKI PEM public key: {why}"),
        }
    }
}

impl std::error::Error for PemKeyError {}

/// The 32 bytes of the ed25519 public key in the SPKI PEM `text` (surrounding white space
/// ignored), of at most [`MAX_PEM_BYTES`].
pub fn public_key_from_pem(text: &str) -> Result<[u8; 32], PemKeyError> {
    if text.len() > MAX_PEM_BYTES {
        return Err(PemKeyError::TooLarge { len: text.len() });
    }
    ed25519_compact::PublicKey::from_pem(text.trim())
        .map(|key| *key)
        .map_err(|e| match pem_label(text) {
            Some(PemLabel::Private) => PemKeyError::PrivateKey,
            Some(PemLabel::Other(label)) => PemKeyError::OtherPem(label),
            Some(PemLabel::Public) | None => PemKeyError::Invalid(e.to_string()),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PUBLIC: &str = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n";

    #[test]
    fn a_public_key_reads_and_every_other_text_is_named() {
        let key = public_key_from_pem(PUBLIC).unwrap();
        assert_eq!(&key[..3], &[0x19, 0xbf, 0x44]);
        assert_eq!(public_key_from_pem(&format!("  {PUBLIC}  ")), Ok(key));
        let private = PUBLIC.replace("PUBLIC KEY", "PRIVATE KEY");
        assert_eq!(public_key_from_pem(&private), Err(PemKeyError::PrivateKey));
        let cert = PUBLIC.replace("PUBLIC KEY", "CERTIFICATE");
        assert_eq!(
            public_key_from_pem(&cert),
            Err(PemKeyError::OtherPem("CERTIFICATE".into()))
        );
        assert!(matches!(
            public_key_from_pem("not a key"),
            Err(PemKeyError::Invalid(_))
        ));
        let huge = " ".repeat(MAX_PEM_BYTES + 1);
        assert_eq!(
            public_key_from_pem(&huge),
            Err(PemKeyError::TooLarge {
                len: MAX_PEM_BYTES + 1
            })
        );
        assert!(PemKeyError::PrivateKey.to_string().contains("private key"));
    }
}
