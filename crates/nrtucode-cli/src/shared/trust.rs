//! How every command trusts a partition: one set of options ([`TrustArgs`]: the public keys,
//! the minimum security counter, the table class, the insecure escape for an unsigned pack),
//! flattened into each command that reads a partition, and one way to open a partition with
//! them ([`TrustArgs::open`]): verified with the key its header names (or, unsigned, only under
//! `--insecure-skip-signature`), the policy checked, then every blob checked against its
//! digest (a compressed one decoded), as a Rust host opens one
//! ([`PartitionFile::verify`]). Nothing is trusted by default: a partition with neither a key
//! nor the escape is refused (exit 64).

use std::path::{Path, PathBuf};

use nrtucode::partition::{
    LoadedPartition, OpenError, Partition, PartitionFile, Policy, PublicKey, TableClass, Unverified,
};
use nrtucode_facts::hex::lower_hex;

use crate::shared::error::Error;
use crate::shared::exit::Exit;
use crate::shared::reader::read_public_key;
use crate::shared::values::ClassArg;

/// The trust options every command that reads a partition takes.
#[derive(Clone, Debug, Default, clap::Args)]
pub(crate) struct TrustArgs {
    /// The SPKI PEM public key a partition must verify with (the firmware's key). Repeat it
    /// for partitions signed by different keys: each verifies with the key whose ID its header
    /// names.
    #[arg(long, value_name = "PUB.pem")]
    pub public_key: Vec<PathBuf>,
    /// Refuse a partition whose security counter is below N (for an image: its state holds the
    /// minimum).
    #[arg(long, value_name = "N")]
    pub min_security_counter: Option<u32>,
    /// The table class the firmware was built for: a partition of the other class is refused
    /// (default: the partition's own; for an image, the first slot's).
    #[arg(long, value_enum)]
    pub class: Option<ClassArg>,
    /// Read an unsigned partition (nrtucode pack --unsigned) without any signature check. For
    /// tests only: whoever can write the file chooses the answers.
    #[arg(long, conflicts_with = "public_key")]
    pub insecure_skip_signature: bool,
}

impl TrustArgs {
    /// Whether any trust option was given.
    pub(crate) fn given(&self) -> bool {
        !self.public_key.is_empty()
            || self.min_security_counter.is_some()
            || self.class.is_some()
            || self.insecure_skip_signature
    }

    /// The policy for a partition of class `own`: the minimum counter (0 without one), the
    /// class asked for (the partition's own without one).
    pub(crate) fn policy(&self, own: TableClass) -> Policy {
        Policy {
            min_security_counter: self.min_security_counter.unwrap_or(0),
            expected_class: self.class.map_or(own, Into::into),
        }
    }

    /// Of the `--public-key` files, the key whose ID is `named` (the ID a partition's header
    /// names; `None`: unsigned). None of them: with one key given, that key (verifying with it
    /// says why); with several, a refusal naming every key ID; with none, `None`.
    pub(crate) fn key_named(
        &self,
        path: &Path,
        named: Option<[u8; 8]>,
    ) -> Result<Option<PublicKey>, Error> {
        let keys = (self.public_key.iter())
            .map(|p| read_public_key(p))
            .collect::<Result<Vec<_>, _>>()?;
        let found = keys.iter().find(|k| Some(k.key_id()) == named);
        match (found, &keys[..], named) {
            (_, [], _) => Ok(None),
            (Some(key), _, _) | (None, [key], _) | (None, [key, ..], None) => Ok(Some(*key)),
            (None, _, Some(named)) => {
                let ids: Vec<String> = keys.iter().map(|k| lower_hex(&k.key_id())).collect();
                Err(Error::bad_data(
                    path,
                    format_args!(
                        "signed by key ID {}, which none of the {} --public-key keys has ({})",
                        lower_hex(&named),
                        ids.len(),
                        ids.join(", ")
                    ),
                ))
            }
        }
    }

    /// The partition `bytes` (read from `path`) opened whole as these options say: verified
    /// with the key its header names, or, unsigned, under `--insecure-skip-signature`; with
    /// neither, refused (exit 64). Then the policy, then every blob checked. The tool serves
    /// both alike, so it holds either as [`Unverified`]: nothing it does needs a verified type.
    pub(crate) fn open(
        &self,
        path: &Path,
        bytes: Vec<u8>,
    ) -> Result<LoadedPartition<Unverified>, Error> {
        let file = PartitionFile::from_bytes(bytes);
        let (policy, named) = {
            let parsed: Partition<'_> = file.parse().map_err(|e| Error::refused(path, e))?;
            (
                self.policy(parsed.class()),
                parsed.is_signed().then(|| parsed.key_id()),
            )
        };
        let opened = match (self.key_named(path, named)?, self.insecure_skip_signature) {
            (Some(key), _) => file.verify(&key, &policy).map(LoadedPartition::into),
            (None, true) => file.insecure_trust_unsigned(&policy),
            (None, false) => {
                return Err(Error::new(
                    Exit::Usage,
                    format!(
                        "{}: a partition needs --public-key PUB.pem (or, for an unsigned pack only, --insecure-skip-signature)",
                        path.display()
                    ),
                ));
            }
        };
        opened.map_err(|e: OpenError| Error::refused(path, e))
    }
}
