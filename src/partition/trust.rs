//! [`Partition::verify`]: the signature, then the policy; the trusted [`VerifiedPartition`]
//! (or, with feature `insecure-unsigned`, an `UnsignedPartition`), and the
//! [`CheckedPartition`] its whole-partition check gives.

use core::fmt;

use super::error::{LoadError, TrustError};
use super::header::TableClass;
use super::index::Index;
use super::parse::Partition;
use super::tables::Tables;
use crate::digest::{Sha256Hasher, SoftSha256};
use crate::table::Hex;

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

/// The tables of a partition trusted one way or the other (a [`VerifiedPartition`], an
/// `UnsignedPartition`, a [`CheckedPartition`]) and the lookup index built from them, once.
///
/// The index holds, for the first descriptor of every slot and key, and every profiler getter,
/// the final answer (the stored bytes in place and the packed getter), so that a lookup scans
/// nothing, reads no table-of-contents record and checks no bound.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Trusted<'a> {
    pub(super) p: Partition<'a>,
    /// The table of contents: `TOC_LEN` bytes per entry (what a getter's number indexes).
    pub(super) toc: &'a [u8],
    /// The lookup index (`super::index`), each getter with its answer's stored bytes.
    pub(super) index: Index<&'a [u8]>,
}

impl<'a> Trusted<'a> {
    /// `p`'s tables, trusted by the caller, and their index (built here, the one time).
    pub(super) fn of(p: Partition<'a>) -> Self {
        Self {
            p,
            toc: p.toc_records(),
            index: Index::build(&p.untrusted_tables()),
        }
    }

    /// Every stored blob hashed in place against its signed digest of the stored bytes, once
    /// (a compressed blob's stream included; its decoded bytes are checked as they are
    /// decoded). The first mismatch.
    fn check_blobs<H: Sha256Hasher + ?Sized>(&self, hasher: &mut H) -> Result<(), LoadError> {
        Tables { p: self.p }.check_stored_digests(hasher)
    }
}

/// A partition whose signature and policy were verified ([`Partition::verify`]): its tables
/// are trusted and its resolvers answer (see the `resolve` methods) with a [`Blob`](super::Blob)
/// handle, whose bytes, outside the signed bytes, are vouched for only by their signed digest:
/// [`Blob::check`](super::Blob::check) or [`Blob::load_into`](super::Blob::load_into) hashes
/// them when they are used, or [`check_blobs`](Self::check_blobs) hashes all of them once and
/// gives a [`CheckedPartition`].
///
/// It holds the lookup index that verification builds from the trusted tables, once: at most
/// [`VerifiedPartition::MAX_SIZE`] bytes (10,184 on a 32-bit target, 18,280 on a 64-bit one),
/// whatever the partition holds, and no allocation. Keep it where it lives long (a `static`,
/// your boot state); each move copies those bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct VerifiedPartition<'a>(pub(super) Trusted<'a>);

/// **Insecure**: an unsigned partition (one `nrtucode pack --unsigned` wrote) trusted without
/// any signature ([`Partition::insecure_trust_unsigned`], feature `insecure-unsigned`), for
/// tests and bring-up only: anyone who can write the partition chooses what it answers. It
/// answers like a [`VerifiedPartition`] and is never one.
#[cfg(feature = "insecure-unsigned")]
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct UnsignedPartition<'a>(pub(super) Trusted<'a>);

/// A trusted partition whose every blob's stored bytes were hashed once against their signed
/// digests ([`VerifiedPartition::check_blobs`]): its handles give a stored blob's bytes as a
/// plain slice ([`Blob::bytes`](super::Blob::bytes)) with no second hash, and a compressed
/// blob is decoded (its output hashed) by [`Blob::load_into`](super::Blob::load_into) without
/// hashing its stream again. Those bytes are the signed ones as long as nobody can change the
/// memory they lie in.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CheckedPartition<'a>(pub(super) Trusted<'a>);

impl fmt::Debug for VerifiedPartition<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("VerifiedPartition").field(&self.0.p).finish()
    }
}

#[cfg(feature = "insecure-unsigned")]
impl fmt::Debug for UnsignedPartition<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("UnsignedPartition").field(&self.0.p).finish()
    }
}

impl fmt::Debug for CheckedPartition<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CheckedPartition").field(&self.0.p).finish()
    }
}

impl<'a> VerifiedPartition<'a> {
    /// The whole-partition check, once: the stored bytes of every blob hashed in place with
    /// `hasher` (a compressed blob's stream included) against the signed digests of the stored
    /// bytes; the first mismatch. The [`CheckedPartition`] it gives answers stored blobs as
    /// plain slices.
    pub fn check_blobs<H: Sha256Hasher + ?Sized>(
        &self,
        hasher: &mut H,
    ) -> Result<CheckedPartition<'a>, LoadError> {
        self.0.check_blobs(hasher)?;
        Ok(CheckedPartition(self.0))
    }
}

#[cfg(feature = "update")]
impl<'a> Partition<'a> {
    /// This partition as verified, by a caller that checked its signature and policy
    /// (`update`, which checks a slot once and lends it later).
    pub(crate) fn vouched(self) -> VerifiedPartition<'a> {
        VerifiedPartition(Trusted::of(self))
    }

    /// This partition as checked, by a caller that checked its signature, its policy and
    /// every blob's stored digest.
    pub(crate) fn vouched_checked(self) -> CheckedPartition<'a> {
        CheckedPartition(Trusted::of(self))
    }
}

#[cfg(feature = "insecure-unsigned")]
impl UnsignedPartition<'_> {
    /// Every blob's stored bytes hashed in place against the digests its unsigned table of
    /// contents records, as [`VerifiedPartition::check_blobs`] does; the first mismatch. It
    /// gives no [`CheckedPartition`]: those digests are signed by nobody, so a match says the
    /// bytes are the ones the tables describe, not that anyone vouched for them.
    pub fn check_blobs<H: Sha256Hasher + ?Sized>(&self, hasher: &mut H) -> Result<(), LoadError> {
        self.0.check_blobs(hasher)
    }

    /// [`check_blobs`](Self::check_blobs), then every compressed blob decoded and its output
    /// hashed against its recorded digest, keeping nothing (feature `std`), as
    /// [`CheckedPartition::check_decoding`] does for a signed partition: what an inspection
    /// tool reports of an unsigned partition. The first refusal.
    #[cfg(feature = "std")]
    pub fn check_decoding(&self) -> Result<(), LoadError> {
        self.check_blobs(&mut SoftSha256::new())?;
        // Never handed out: the checked type only lends its decoding check here.
        CheckedPartition(self.0).check_decoding()
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
        self.check_signature(key)?;
        self.check_policy(policy)?;
        Ok(VerifiedPartition(Trusted::of(self)))
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
    ) -> Result<UnsignedPartition<'a>, TrustError> {
        if self.is_signed() {
            return Err(TrustError::Signed);
        }
        self.check_policy(policy)?;
        Ok(UnsignedPartition(Trusted::of(self)))
    }

    /// The policy: the security counter, then the class (read from bytes the caller trusts).
    pub(crate) fn check_policy(&self, policy: &Policy) -> Result<(), TrustError> {
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
        Ok(())
    }

    /// The signature: signed, with `key`'s ID, and the ed25519 signature over every byte
    /// before the signature block.
    pub(crate) fn check_signature(&self, key: &PublicKey) -> Result<(), TrustError> {
        if !self.is_signed() {
            return Err(TrustError::Unsigned);
        }
        let found = self.key_id();
        if found != key.key_id() {
            return Err(TrustError::UnknownKey { found });
        }
        if !ed25519_verify(&key.0, self.signed_bytes(), self.signature()) {
            return Err(TrustError::BadSignature);
        }
        Ok(())
    }
}

impl VerifiedPartition<'_> {
    /// The most bytes a `VerifiedPartition` (or a `CheckedPartition`) takes on any target (its
    /// index and a few words); `size_of` is 10,184 on thumbv7em and 18,280 on x86-64.
    pub const MAX_SIZE: usize = 18_280;
}

static_assertions::const_assert!(
    core::mem::size_of::<VerifiedPartition<'static>>() <= VerifiedPartition::MAX_SIZE
);
static_assertions::const_assert!(
    core::mem::size_of::<CheckedPartition<'static>>() <= VerifiedPartition::MAX_SIZE
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
        assert_eq!(
            core::mem::size_of::<super::CheckedPartition<'static>>(),
            size
        );
        assert!(size <= VerifiedPartition::MAX_SIZE);
        assert_eq!(size, if words == 4 { 10_184 } else { 18_280 });
    }
}
