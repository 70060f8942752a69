//! [`Partition::verify`]: the signature, then the policy; and the trusted
//! [`VerifiedPartition`].

use core::fmt;

use super::TableClass;
use super::error::TrustError;
use super::index::Index;
use super::parse::Partition;
use super::tables::Tables;
use crate::digest::{Hex, Sha256Hasher, SoftSha256};

/// An ed25519 public key (32 bytes), the one a partition's signature must verify with.
///
/// `nrtucode key public KEY.pem --format rust` prints the `const` a firmware pastes:
///
/// ```
/// use nrtucode::partition::PublicKey;
/// const KEY: PublicKey = PublicKey::from_bytes([7; 32]);
/// assert_eq!(KEY.as_bytes(), &[7; 32]);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PublicKey([u8; 32]);

impl PublicKey {
    /// The key of these 32 bytes (the raw ed25519 public key, as RFC 8032 encodes it).
    pub const fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The 32 bytes.
    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The key ID a partition signed with this key carries: the first 8 bytes of the SHA-256 of
    /// the 32 key bytes.
    pub fn key_id(&self) -> [u8; 8] {
        let mut h = SoftSha256::new();
        h.update(&self.0);
        let d = h.finish();
        let mut id = [0u8; 8];
        id.iter_mut().zip(d.iter()).for_each(|(i, d)| *i = *d);
        id
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", Hex(&self.0))
    }
}

/// What a verified partition must also satisfy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Policy {
    /// The lowest security counter accepted: a partition with a lower one is a downgrade
    /// ([`TrustError::Rollback`]). Keep it in storage the partition cannot rewrite.
    pub min_security_counter: u32,
    /// The table class the program was built for ([`TrustError::WrongClass`] otherwise).
    pub expected_class: TableClass,
}

/// A partition whose signature (or, for a test pack, whose explicit lack of one) and policy
/// were checked: its tables are trusted and its resolvers answer (see the `resolve` methods).
///
/// It holds the lookup index that verification builds from the trusted tables (for the first
/// descriptor of every slot and key, and every profiler getter, the final answer: the stored
/// bytes in place and the packed getter), so that a lookup scans nothing, reads no
/// table-of-contents record and checks no bound: at most [`VerifiedPartition::MAX_SIZE`]
/// bytes (10,184 on a 32-bit target, 18,280 on a 64-bit one), whatever the partition holds,
/// and no allocation. It is a value like any other: keep it
/// where it lives long (a `static`, your boot state); each move copies those bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct VerifiedPartition<'a> {
    pub(super) p: Partition<'a>,
    /// The table of contents: `TOC_LEN` bytes per entry (what a getter's number indexes).
    pub(super) toc: &'a [u8],
    /// The lookup index (`super::index`), each getter with its answer's stored bytes.
    pub(super) index: Index<&'a [u8]>,
}

impl fmt::Debug for VerifiedPartition<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("VerifiedPartition").field(&self.p).finish()
    }
}

/// The one call into the ed25519 verifier (`ed25519-compact`), never inlined, so that the
/// verifier's code stays in this function: `tests/nopanic` checks that the only panic
/// call sites of a firmware that verifies partitions are here and in the verifier's own
/// functions (the bounds checks of its SHA-512 and point code, which the optimiser cannot
/// prove dead; docs/partition.md says why none is reachable).
#[inline(never)]
fn ed25519_verify(key: &[u8; 32], message: &[u8], signature: [u8; 64]) -> bool {
    let pk = ed25519_compact::PublicKey::new(*key);
    pk.verify(message, &ed25519_compact::Signature::new(signature))
        .is_ok()
}

impl<'a> Partition<'a> {
    /// Checks, in this order: that the partition is signed ([`TrustError::Unsigned`]), that
    /// its key ID is `key`'s ([`TrustError::UnknownKey`]), the ed25519 signature over every
    /// byte before the signature block ([`TrustError::BadSignature`]), then `policy`: the
    /// security counter ([`TrustError::Rollback`]) and the class
    /// ([`TrustError::WrongClass`]). The counter and class are read from signed bytes only
    /// after the signature holds.
    pub fn verify(
        self,
        key: &PublicKey,
        policy: &Policy,
    ) -> Result<VerifiedPartition<'a>, TrustError> {
        if !self.is_signed() {
            return Err(TrustError::Unsigned);
        }
        let expected = key.key_id();
        let found = self.key_id();
        if found != expected {
            return Err(TrustError::UnknownKey { found });
        }
        if !ed25519_verify(&key.0, self.signed_bytes(), self.signature()) {
            return Err(TrustError::BadSignature);
        }
        self.check_policy(policy)
    }

    /// **Insecure**: trusts an **unsigned** partition (one `nrtucode pack --unsigned` wrote)
    /// without any signature, for tests and bring-up only: anyone who can write the partition
    /// chooses what it answers. Only with feature `insecure-unsigned`, so that a release build
    /// cannot link it by mistake. Refuses a signed partition ([`TrustError::Signed`]: verify
    /// it), and still checks `policy`.
    #[cfg(feature = "insecure-unsigned")]
    pub fn insecure_trust_unsigned(
        self,
        policy: &Policy,
    ) -> Result<VerifiedPartition<'a>, TrustError> {
        if self.is_signed() {
            return Err(TrustError::Signed);
        }
        self.check_policy(policy)
    }

    pub(super) fn check_policy(self, policy: &Policy) -> Result<VerifiedPartition<'a>, TrustError> {
        let found = self.security_counter();
        if found < policy.min_security_counter {
            return Err(TrustError::Rollback {
                found,
                minimum: policy.min_security_counter,
            });
        }
        let class = self.class();
        if class != policy.expected_class {
            return Err(TrustError::WrongClass {
                found: class,
                expected: policy.expected_class,
            });
        }
        Ok(VerifiedPartition {
            p: self,
            toc: self.toc_records(),
            index: Index::build(&self.untrusted_tables()),
        })
    }
}

impl<'a> VerifiedPartition<'a> {
    /// The most bytes a `VerifiedPartition` takes on any target (its index and a few words);
    /// `size_of` is 10,184 on thumbv7em and 18,280 on x86-64.
    pub const MAX_SIZE: usize = 18_280;

    /// The partition's header fields and counts.
    pub const fn partition(&self) -> &Partition<'a> {
        &self.p
    }

    /// Its tables, read only (trusted: the signature covers them).
    pub const fn tables(&self) -> Tables<'a> {
        Tables { p: self.p }
    }
}

static_assertions::const_assert!(
    core::mem::size_of::<VerifiedPartition<'static>>() <= VerifiedPartition::MAX_SIZE
);
#[cfg(test)]
mod tests {
    /// The index's RAM: what docs/partition.md and [`VerifiedPartition`]'s docs say.
    #[test]
    fn a_verified_partition_is_its_index_and_a_few_words() {
        use super::{Index, VerifiedPartition};
        let words = core::mem::size_of::<usize>();
        // 266 bytes of row numbers (padded to a word), then 228 rows of four getters and 38 of
        // two: a `u16` and a slice each (the row padded to a word).
        let row = |n: usize| (n * 2 + n * 2 * words).next_multiple_of(words);
        let index = 266usize.next_multiple_of(words) + 228 * row(4) + 38 * row(2);
        assert_eq!(core::mem::size_of::<Index<&'static [u8]>>(), index);
        // The partition (a slice and five counts and offsets), the table of contents (a
        // slice), the index.
        let size = 9 * words + index;
        assert_eq!(core::mem::size_of::<VerifiedPartition<'static>>(), size);
        assert!(size <= VerifiedPartition::MAX_SIZE);
        assert_eq!(size, if words == 4 { 10_184 } else { 18_280 });
    }
}
