//! [`EmbeddedBlob`] (public as `nrtucode::verify::EmbeddedBlob`): one distinct embedded blob
//! and its build-time SHA-256, the element of the digest table the build script generates into
//! `catalog`. It lives apart from `verify` so that `catalog` (which holds the table) and
//! `verify` (which reads it) do not import each other.

use core::fmt;

/// A SHA-256 digest.
pub type Sha256Digest = [u8; 32];

/// One distinct embedded blob and the SHA-256 the build computed from its source file.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct EmbeddedBlob {
    pub(crate) bytes: &'static [u8],
    pub(crate) sha256: Sha256Digest,
}

impl EmbeddedBlob {
    /// Used by the generated blob module only.
    #[allow(dead_code)] // unused when features deselect every blob
    pub(crate) const fn new(bytes: &'static [u8], sha256: Sha256Digest) -> Self {
        Self { bytes, sha256 }
    }

    /// The embedded bytes.
    pub const fn bytes(&self) -> &'static [u8] {
        self.bytes
    }

    /// Their SHA-256, as recorded at build time.
    pub const fn sha256(&self) -> &Sha256Digest {
        &self.sha256
    }
}

impl fmt::Debug for EmbeddedBlob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EmbeddedBlob")
            .field("bytes", &crate::table::BlobDebug(Some(self.bytes)))
            .field("sha256", &Hex(&self.sha256))
            .finish()
    }
}

/// Prints bytes (a digest, a key ID) in lower-case hex. (The std-side `nrtucode_facts::hex::lower_hex` cannot serve
/// here: the facts crate is the core's build dependency and allocates; this one allocates nothing.)
pub(crate) struct Hex<'a>(pub(crate) &'a [u8]);

impl fmt::Debug for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}
