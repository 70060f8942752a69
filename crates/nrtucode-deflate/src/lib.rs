//! The packer's side of nrtucode's `deflate` codec (codec 1 of a partition's table of
//! contents; codec 0 is stored).
//!
//! - [`compress_deflate`] compresses a blob to raw deflate (RFC 1951, no zlib or gzip wrapper)
//!   at the level that gives the fewest bytes (miniz_oxide's levels 1 to 10 are all tried);
//! - [`encode_blob`] decides per blob: the deflate stream is **kept only where it saves space**,
//!   that is where it needs fewer [`BLOB_ALIGN`]-byte units than the blob itself (blobs are
//!   16-byte aligned in a partition, so a smaller stream in the same number of units saves
//!   nothing and would only cost decoding time); otherwise the blob stays stored. Every kept
//!   stream is decoded again with the core's device-side decoder
//!   ([`nrtucode::deflate::decode_checked`]) and checked against the blob's SHA-256 before it
//!   is returned, so a packer never writes a stream the device cannot decode;
//! - [`Summary`] adds the blobs up and prints the ratio.
//!
//! ```
//! use nrtucode_deflate::{encode_blob, Codec, Summary};
//!
//! let firmware = b"firmware ".repeat(1000);
//! let encoded = encode_blob(&firmware)?;
//! assert_eq!(encoded.codec(), Codec::Deflate);
//! assert!(encoded.ratio() < 0.05);
//! let mut summary = Summary::default();
//! summary.add(&encoded);
//! println!("{summary}"); // deflate: 1 of 1 blobs compressed, 9,000 B -> 48 B (0.5 %)
//! # Ok::<(), nrtucode_deflate::EncodeError>(())
//! ```

use std::fmt;

use nrtucode::deflate::{DecodeError, Inflater, decode_checked};
use sha2::{Digest, Sha256};

/// The alignment of a blob in a partition: space is counted in units of this many bytes.
pub const BLOB_ALIGN: usize = 16;

/// The highest miniz_oxide level (10: its "uber" mode, the slowest and usually smallest).
const MAX_LEVEL: u8 = 10;

/// How a blob is kept: the value of the table-of-contents codec field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Codec {
    /// The bytes as they are.
    Stored = 0,
    /// Raw deflate (RFC 1951).
    Deflate = 1,
}

impl Codec {
    /// The codec field's value.
    pub const fn raw(self) -> u8 {
        self as u8
    }

    /// Its name: `stored` or `deflate`.
    pub const fn name(self) -> &'static str {
        match self {
            Codec::Stored => "stored",
            Codec::Deflate => "deflate",
        }
    }
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A raw-deflate stream and the level that produced it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deflated {
    /// The stream.
    pub bytes: Vec<u8>,
    /// The miniz_oxide level (1 to 10).
    pub level: u8,
}

/// Compresses `data` to raw deflate at every level from 1 to 10 and returns the smallest stream
/// (the lowest level among equals). Deterministic: the same bytes give the same stream.
pub fn best_deflate(data: &[u8]) -> Deflated {
    let mut best = Deflated {
        bytes: miniz_oxide::deflate::compress_to_vec(data, 1),
        level: 1,
    };
    for level in 2..=MAX_LEVEL {
        let bytes = miniz_oxide::deflate::compress_to_vec(data, level);
        if bytes.len() < best.bytes.len() {
            best = Deflated { bytes, level };
        }
    }
    best
}

/// [`best_deflate`]'s stream alone: `data` as raw deflate at the level that gives the fewest
/// bytes. It may be longer than `data` (random bytes); [`encode_blob`] decides whether to keep it.
pub fn compress_deflate(data: &[u8]) -> Vec<u8> {
    best_deflate(data).bytes
}

/// One blob as a partition keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encoded {
    codec: Codec,
    /// The stored bytes: the deflate stream, or `None` when stored (the blob itself).
    deflated: Option<Deflated>,
    decoded_len: usize,
    sha256: [u8; 32],
}

impl Encoded {
    /// Stored or deflate.
    pub fn codec(&self) -> Codec {
        self.codec
    }

    /// The bytes a partition holds for this blob: the deflate stream, or `blob` itself when
    /// stored (pass the blob this was encoded from).
    pub fn stored<'a>(&'a self, blob: &'a [u8]) -> &'a [u8] {
        self.deflated.as_ref().map_or(blob, |d| &d.bytes)
    }

    /// The stored length.
    pub fn stored_len(&self) -> usize {
        self.deflated
            .as_ref()
            .map_or(self.decoded_len, |d| d.bytes.len())
    }

    /// The decoded length (the blob's).
    pub fn decoded_len(&self) -> usize {
        self.decoded_len
    }

    /// SHA-256 of the decoded bytes (what the table of contents records for every codec).
    pub fn sha256(&self) -> &[u8; 32] {
        &self.sha256
    }

    /// The miniz_oxide level of the kept stream, `None` when stored.
    pub fn level(&self) -> Option<u8> {
        self.deflated.as_ref().map(|d| d.level)
    }

    /// Stored length / decoded length (1.0 when stored; 1.0 for an empty blob).
    pub fn ratio(&self) -> f64 {
        ratio(self.stored_len(), self.decoded_len)
    }
}

fn ratio(stored: usize, decoded: usize) -> f64 {
    if decoded == 0 {
        1.0
    } else {
        stored as f64 / decoded as f64
    }
}

/// The space `len` bytes take in a partition: whole [`BLOB_ALIGN`] units.
pub fn aligned_len(len: usize) -> usize {
    len.div_ceil(BLOB_ALIGN) * BLOB_ALIGN
}

/// A compressed stream did not decode back to its blob with the device's decoder (a bug in
/// the encoder or the decoder; the packer must stop rather than write it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodeError {
    /// The blob's length.
    pub decoded_len: usize,
    /// The level whose stream failed.
    pub level: u8,
    /// What the decoder said.
    pub error: DecodeError,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the level-{} deflate stream of a {}-byte blob does not decode back: {}",
            self.level, self.decoded_len, self.error
        )
    }
}

impl std::error::Error for EncodeError {}

/// Decides how a partition keeps `blob`: deflate at the best level where that needs fewer
/// [`BLOB_ALIGN`]-byte units than storing it, stored otherwise; a kept stream has been decoded
/// with the device's decoder and checked against the blob's SHA-256.
pub fn encode_blob(blob: &[u8]) -> Result<Encoded, EncodeError> {
    let sha256: [u8; 32] = Sha256::digest(blob).into();
    let stored = Encoded {
        codec: Codec::Stored,
        deflated: None,
        decoded_len: blob.len(),
        sha256,
    };
    let deflated = best_deflate(blob);
    if aligned_len(deflated.bytes.len()) >= aligned_len(blob.len()) {
        return Ok(stored);
    }
    let mut inflater = Box::new(Inflater::new());
    let mut check = vec![0u8; blob.len()];
    match decode_checked(
        &deflated.bytes,
        blob.len(),
        &sha256,
        &mut check,
        &mut inflater,
    ) {
        Ok(_) => Ok(Encoded {
            codec: Codec::Deflate,
            deflated: Some(deflated),
            ..stored
        }),
        Err(error) => Err(EncodeError {
            decoded_len: blob.len(),
            level: deflated.level,
            error,
        }),
    }
}

/// Blobs added up: how many were compressed and the bytes before and after.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Blobs added.
    pub blobs: usize,
    /// Of which kept as deflate.
    pub compressed: usize,
    /// Their decoded bytes.
    pub decoded_bytes: usize,
    /// Their stored bytes.
    pub stored_bytes: usize,
}

impl Summary {
    /// Adds a blob.
    pub fn add(&mut self, encoded: &Encoded) {
        self.blobs += 1;
        self.compressed += usize::from(encoded.codec == Codec::Deflate);
        self.decoded_bytes += encoded.decoded_len;
        self.stored_bytes += encoded.stored_len();
    }

    /// Stored bytes / decoded bytes (1.0 when empty).
    pub fn ratio(&self) -> f64 {
        ratio(self.stored_bytes, self.decoded_bytes)
    }
}

/// `deflate: 3 of 40 blobs compressed, 9,700,000 B -> 6,100,000 B (62.9 %)`.
impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "deflate: {} of {} blobs compressed, {} B -> {} B ({:.1} %)",
            self.compressed,
            self.blobs,
            Thousands(self.decoded_bytes),
            Thousands(self.stored_bytes),
            self.ratio() * 100.0
        )
    }
}

/// A count with `,` between thousands.
struct Thousands(usize);

impl fmt::Display for Thousands {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.0.to_string();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                f.write_str(",")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands() {
        assert_eq!(Thousands(0).to_string(), "0");
        assert_eq!(Thousands(999).to_string(), "999");
        assert_eq!(Thousands(1000).to_string(), "1,000");
        assert_eq!(Thousands(231_077).to_string(), "231,077");
        assert_eq!(Thousands(9_700_000).to_string(), "9,700,000");
    }

    #[test]
    fn aligned() {
        assert_eq!(aligned_len(0), 0);
        assert_eq!(aligned_len(1), 16);
        assert_eq!(aligned_len(16), 16);
        assert_eq!(aligned_len(17), 32);
    }
}
