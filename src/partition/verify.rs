//! [`Partition::verify`]: the signature, then the policy; and the trusted
//! [`VerifiedPartition`].

use core::fmt;

use super::error::PartitionError;
use super::parse::Partition;
use super::{Source, TableClass};
use crate::verify::{Sha256Hasher, SoftSha256};

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
        f.write_str("PublicKey(")?;
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))?;
        f.write_str(")")
    }
}

/// What a verified partition must also satisfy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Policy {
    /// The lowest security counter accepted: a partition with a lower one is a downgrade
    /// ([`PartitionError::Rollback`]). Keep it in storage the partition cannot rewrite.
    pub min_security_counter: u32,
    /// The table class the program was built for ([`PartitionError::WrongClass`] otherwise).
    pub expected_class: TableClass,
}

/// A partition whose signature (or, for a test pack, whose explicit lack of one) and policy
/// were checked: its tables are trusted and its resolvers answer (see the `resolve` methods).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct VerifiedPartition<'a> {
    pub(super) p: Partition<'a>,
}

impl fmt::Debug for VerifiedPartition<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("VerifiedPartition").field(&self.p).finish()
    }
}

/// The one call into the ed25519 verifier (`ed25519-compact`), never inlined, so that the
/// verifier's code stays in this function: `cargo xtask nopanic` checks that the only panic
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
    /// Checks, in this order: that the partition is signed ([`PartitionError::Unsigned`]), that
    /// its key ID is `key`'s ([`PartitionError::UnknownKey`]), the ed25519 signature over every
    /// byte before the signature block ([`PartitionError::BadSignature`]), then `policy`: the
    /// security counter ([`PartitionError::Rollback`]) and the class
    /// ([`PartitionError::WrongClass`]). The counter and class are read from signed bytes only
    /// after the signature holds.
    pub fn verify(
        self,
        key: &PublicKey,
        policy: &Policy,
    ) -> Result<VerifiedPartition<'a>, PartitionError> {
        if !self.is_signed() {
            return Err(PartitionError::Unsigned);
        }
        let expected = key.key_id();
        let found = self.key_id();
        if found != expected {
            return Err(PartitionError::UnknownKey { expected, found });
        }
        if !ed25519_verify(&key.0, self.signed_bytes(), self.signature()) {
            return Err(PartitionError::BadSignature);
        }
        self.check_policy(policy)
    }

    /// Trusts an **unsigned** partition (one `nrtucode pack --unsigned` wrote) without any
    /// signature, for tests and bring-up only: anyone who can write the partition chooses
    /// what it answers. Refuses a signed partition ([`PartitionError::Signed`]: verify it), and
    /// still checks `policy`.
    pub fn trust_unsigned_for_testing(
        self,
        policy: &Policy,
    ) -> Result<VerifiedPartition<'a>, PartitionError> {
        if self.is_signed() {
            return Err(PartitionError::Signed);
        }
        self.check_policy(policy)
    }

    /// For inspection tools (`nrtucode inspect`): the table-of-contents entry `n` of a
    /// partition whose signature was not checked. Nothing read this way is trustworthy.
    pub fn untrusted_toc_entry(&self, n: u16) -> Option<super::TocEntry> {
        VerifiedPartition { p: *self }.toc_entry(n)
    }

    /// For inspection tools: the descriptors of slot `idx` of a partition whose signature was
    /// not checked (see [`VerifiedPartition::descriptors`]). Nothing read this way is
    /// trustworthy.
    pub fn untrusted_descriptors(
        &self,
        idx: u32,
    ) -> impl Iterator<Item = (i32, [Option<super::Getter>; 4])> + use<'a> {
        VerifiedPartition { p: *self }.descriptors(idx)
    }

    /// For inspection tools: the profiler getters of slot `idx` of a partition whose signature
    /// was not checked.
    pub fn untrusted_prof_getters(&self, idx: u32) -> Option<[Option<super::Getter>; 2]> {
        VerifiedPartition { p: *self }.prof_getters(idx)
    }

    /// For inspection tools: the first getter using blob `n` of a partition whose signature was
    /// not checked.
    pub fn untrusted_first_use(&self, n: u16) -> Option<super::BlobUse> {
        VerifiedPartition { p: *self }.first_use(n)
    }

    /// For inspection tools: [`VerifiedPartition::check_blobs`] on a partition whose signature
    /// was not checked (the digests themselves are then not vouched for).
    pub fn untrusted_check_blobs(&self) -> Result<(), PartitionError> {
        VerifiedPartition { p: *self }.check_blobs()
    }

    fn check_policy(self, policy: &Policy) -> Result<VerifiedPartition<'a>, PartitionError> {
        let found = self.security_counter();
        if found < policy.min_security_counter {
            return Err(PartitionError::Rollback {
                found,
                minimum: policy.min_security_counter,
            });
        }
        let class = self.class();
        if class != policy.expected_class {
            return Err(PartitionError::WrongClass {
                found: class,
                expected: policy.expected_class,
            });
        }
        Ok(VerifiedPartition { p: self })
    }
}

impl<'a> VerifiedPartition<'a> {
    /// The partition's header fields and counts.
    pub const fn partition(&self) -> &Partition<'a> {
        &self.p
    }

    /// The table class.
    pub fn class(&self) -> TableClass {
        self.p.class()
    }

    /// Where the blobs come from.
    pub fn source(&self) -> Source<'a> {
        self.p.source()
    }

    /// The security counter.
    pub fn security_counter(&self) -> u32 {
        self.p.security_counter()
    }
}
