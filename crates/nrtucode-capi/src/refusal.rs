//! Why a partition was refused ([`Refusal`]: a code of `nrtucode.h`'s `NRTUCODE_PARTITION_E_*`
//! and a message), and the calling thread's last refusal, which
//! `nrtucode_partition_last_error` reports.

use core::ffi::c_int;
use std::cell::RefCell;

use nrtucode::partition::{BlobUse, FormatError, LoadError, OpenError, PublicKey, TrustError};

/// No refusal.
pub const NRTUCODE_PARTITION_OK: c_int = 0;
/// A NULL or out-of-range argument: path, bytes, key, out-pointer or table class.
pub const NRTUCODE_PARTITION_E_ARGUMENT: c_int = 1;
/// The key is neither 32 raw bytes nor an ed25519 public key in SPKI PEM text.
pub const NRTUCODE_PARTITION_E_KEY: c_int = 2;
/// The file cannot be opened or read, or is not a regular file.
pub const NRTUCODE_PARTITION_E_IO: c_int = 3;
/// The bytes are not a partition of this format (truncated, bad magic, broken table, ...).
pub const NRTUCODE_PARTITION_E_FORMAT: c_int = 4;
/// The partition is unsigned.
pub const NRTUCODE_PARTITION_E_UNSIGNED: c_int = 5;
/// The partition was signed with another key.
pub const NRTUCODE_PARTITION_E_UNKNOWN_KEY: c_int = 6;
/// The signature does not verify: the signed bytes were changed.
pub const NRTUCODE_PARTITION_E_BAD_SIGNATURE: c_int = 7;
/// The security counter is below the minimum: a downgrade.
pub const NRTUCODE_PARTITION_E_ROLLBACK: c_int = 8;
/// The partition follows the other table class (full or front).
pub const NRTUCODE_PARTITION_E_WRONG_CLASS: c_int = 9;
/// A blob's bytes do not hash to the digest in the signed table of contents.
pub const NRTUCODE_PARTITION_E_DIGEST: c_int = 10;
/// A compressed blob's authenticated stream does not decode to its recorded bytes.
pub const NRTUCODE_PARTITION_E_DECODE: c_int = 11;
/// A NULL, closed or unknown handle.
pub const NRTUCODE_PARTITION_E_HANDLE: c_int = 12;
/// `NRTUCODE_PARTITION` is unset, empty or not an absolute path (partition-backed build).
pub const NRTUCODE_PARTITION_E_NOT_CONFIGURED: c_int = 13;
/// The memory to hold the partition or its decoded blobs could not be allocated.
pub const NRTUCODE_PARTITION_E_MEMORY: c_int = 14;

/// Where the key a partition is checked with comes from, which a refusal names: the caller
/// gave it (`nrtucode_partition_open_*`), or it was built into this library (the drop-in
/// without firmware, whose user gave none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyOrigin {
    /// Given by the caller.
    Given,
    /// Built into this library (`NRTUCODE_PARTITION_KEY` at build time).
    BuiltIn,
}

impl KeyOrigin {
    /// What a refusal says of `key`: its ID, and whose key it is.
    fn says(self, key: &PublicKey) -> String {
        let id = hex(&key.key_id());
        match self {
            KeyOrigin::Given => format!("the given key's ID is {id}"),
            KeyOrigin::BuiltIn => format!("the key built into this library has key ID {id}"),
        }
    }
}

/// A refusal: its code and what a person reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// One of the `NRTUCODE_PARTITION_E_*` codes.
    pub code: c_int,
    /// Why, in one line, naming what was refused.
    pub message: String,
}

impl Refusal {
    /// A refusal with this code and message.
    pub fn new(code: c_int, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// `what` refused by the parser.
    pub fn of_format(what: &str, e: &FormatError) -> Self {
        Self::new(
            NRTUCODE_PARTITION_E_FORMAT,
            format!("{what}: not a valid partition: {e}"),
        )
    }

    /// `what` refused by the signature or policy check with `key` (from `origin`).
    pub fn of_trust(what: &str, e: &TrustError, key: &PublicKey, origin: KeyOrigin) -> Self {
        let code = match e {
            TrustError::Unsigned => NRTUCODE_PARTITION_E_UNSIGNED,
            TrustError::UnknownKey { .. } => NRTUCODE_PARTITION_E_UNKNOWN_KEY,
            TrustError::Rollback { .. } => NRTUCODE_PARTITION_E_ROLLBACK,
            TrustError::WrongClass { .. } => NRTUCODE_PARTITION_E_WRONG_CLASS,
            _ => NRTUCODE_PARTITION_E_BAD_SIGNATURE,
        };
        let message = match e {
            TrustError::UnknownKey { .. } => {
                format!("{what}: {e}; {}", origin.says(key))
            }
            _ => format!("{what}: {e}"),
        };
        Self::new(code, message)
    }

    /// `what` refused at open, for any of [`OpenError`]'s reasons (`key`, from `origin`, the key
    /// it was checked with).
    pub fn of_open(what: &str, e: &OpenError, key: &PublicKey, origin: KeyOrigin) -> Self {
        match e {
            OpenError::Header { .. } | OpenError::TooLarge { .. } => {
                Self::new(NRTUCODE_PARTITION_E_FORMAT, format!("{what}: {e}"))
            }
            OpenError::Io(_) | OpenError::NotRegular { .. } => {
                Self::new(NRTUCODE_PARTITION_E_IO, format!("{what}: {e}"))
            }
            OpenError::Format(e) => Self::of_format(what, e),
            OpenError::Trust(e) => Self::of_trust(what, e, key, origin),
            OpenError::Blob { error, first_use } => Self::of_load(what, error, first_use.as_ref()),
            OpenError::Memory { .. } => Self::new(NRTUCODE_PARTITION_E_MEMORY, e.to_string()),
            // A reason a later core adds: not a valid partition, as far as C can tell.
            _ => Self::new(NRTUCODE_PARTITION_E_FORMAT, format!("{what}: {e}")),
        }
    }

    /// `what` refused because a blob failed its check (`first_use`: the first getter that
    /// uses it).
    pub fn of_load(what: &str, e: &LoadError, first_use: Option<&BlobUse>) -> Self {
        let code = match e {
            LoadError::DigestMismatch { .. } | LoadError::StoredDigestMismatch { .. } => {
                NRTUCODE_PARTITION_E_DIGEST
            }
            _ => NRTUCODE_PARTITION_E_DECODE,
        };
        let used = match first_use {
            Some(used) => format!(" (first used by {used})"),
            None => String::new(),
        };
        Self::new(code, format!("{what}: {e}{used}"))
    }
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

thread_local! {
    /// The calling thread's last refusal (`NRTUCODE_PARTITION_OK` and empty before any).
    static LAST: RefCell<Refusal> = RefCell::new(Refusal::new(NRTUCODE_PARTITION_OK, ""));
}

/// Records `refusal` as the calling thread's last.
pub fn set_last(refusal: &Refusal) {
    // A thread being torn down has no slot left: nothing to record then.
    let _ = LAST.try_with(|last| last.borrow_mut().clone_from(refusal));
}

/// Clears the calling thread's last refusal (a successful open).
pub fn clear_last() {
    let _ = LAST.try_with(|last| {
        let mut last = last.borrow_mut();
        last.code = NRTUCODE_PARTITION_OK;
        last.message.clear();
    });
}

/// The calling thread's last refusal.
pub fn last() -> Refusal {
    LAST.try_with(|last| last.borrow().clone())
        .unwrap_or_else(|_| Refusal::new(NRTUCODE_PARTITION_OK, ""))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Memory the allocator refuses at open is `NRTUCODE_PARTITION_E_MEMORY`, naming the size.
    #[test]
    fn memory_refused_at_open_is_its_own_code() {
        let key = PublicKey::from_bytes([7; 32]);
        for len in [usize::MAX, isize::MAX as usize] {
            let refusal =
                Refusal::of_open("p.part", &OpenError::Memory { len }, &key, KeyOrigin::Given);
            assert_eq!(refusal.code, NRTUCODE_PARTITION_E_MEMORY, "{len}");
            assert_eq!(
                refusal.message,
                format!("cannot allocate {len} bytes for the partition")
            );
        }
        let format = Refusal::of_open(
            "p.part",
            &OpenError::Format(FormatError::BadMagic),
            &key,
            KeyOrigin::BuiltIn,
        );
        assert_eq!(format.code, NRTUCODE_PARTITION_E_FORMAT);
        assert!(
            format
                .message
                .starts_with("p.part: not a valid partition: ")
        );
    }

    /// A partition signed by another key: the message names the key it was checked with as
    /// the caller's, or, in the drop-in without firmware (whose user gave none), as the key
    /// built into this library.
    #[test]
    fn an_unknown_key_is_named_by_where_the_checking_key_comes_from() {
        let key = PublicKey::from_bytes([7; 32]);
        let id = hex(&key.key_id());
        let e = TrustError::UnknownKey { found: [1; 8] };
        let built_in = Refusal::of_trust("p.part", &e, &key, KeyOrigin::BuiltIn);
        assert_eq!(built_in.code, NRTUCODE_PARTITION_E_UNKNOWN_KEY);
        assert_eq!(
            built_in.message,
            format!(
                "p.part: signed by an unknown key: key ID 0101010101010101, not the key it was checked with; the key built into this library has key ID {id}"
            )
        );
        assert!(!built_in.message.contains("given"), "{}", built_in.message);
        let given = Refusal::of_trust("p.part", &e, &key, KeyOrigin::Given);
        assert!(
            given
                .message
                .ends_with(&format!("; the given key's ID is {id}")),
            "{}",
            given.message
        );
    }
}
