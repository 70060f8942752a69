//! [`EnvPartition`]: the partition the vendor's two symbols answer from in the drop-in without
//! firmware (feature `partition`): the file named by `NRTUCODE_PARTITION` (an absolute path),
//! opened and verified whole once, at the first call, by whichever thread makes it (the others
//! wait for it: a `OnceLock`), with the key and policy fixed at build time. When it cannot be
//! opened, every call answers a fixed vendor code and records the reason as the thread's last
//! refusal (`nrtucode_partition_last_error`); the reason is printed once, on stderr.

use core::ffi::c_int;
use std::io::Write as _;
use std::path::Path;
use std::sync::OnceLock;

use nrtucode::ResolveErr;
use nrtucode::partition::{Policy, PublicKey};

use nrtucode::partition::LoadedPartition;

use crate::opened::open_path;
use crate::refusal::{KeyOrigin, NRTUCODE_PARTITION_E_NOT_CONFIGURED, Refusal, set_last};

/// The environment variable naming the partition file.
pub const PARTITION_VAR: &str = "NRTUCODE_PARTITION";

/// What every `nrtucode_get_memory_image` answers when the partition cannot be opened:
/// `NRTUCODE_E_NOT_BUILT` (3), the image is not in this library.
pub const UNAVAILABLE_IMAGE_CODE: c_int = ResolveErr::NullGetter.code();
/// What every `nrtucode_get_hwdecode_table` answers then: `NRTUCODE_E_NOT_FOUND` (2), the
/// vendor's only code for a missing table.
pub const UNAVAILABLE_TABLE_CODE: c_int = ResolveErr::NoProfiler.code();

/// A partition opened from the environment at first use.
pub struct EnvPartition {
    key: PublicKey,
    policy: Policy,
    opened: OnceLock<Result<LoadedPartition, Refusal>>,
}

impl EnvPartition {
    /// Not opened yet; the first call opens the file `NRTUCODE_PARTITION` names with `key` and
    /// `policy`.
    pub const fn new(key: PublicKey, policy: Policy) -> Self {
        Self {
            key,
            policy,
            opened: OnceLock::new(),
        }
    }

    /// The opened partition, or why there is none (opened at the first call; the reason said
    /// once on stderr).
    pub fn get(&self) -> Result<&LoadedPartition, &Refusal> {
        self.opened
            .get_or_init(|| {
                let opened = self.open();
                if let Err(refusal) = &opened {
                    // Not `eprintln!`, which panics when stderr cannot be written.
                    let _ = writeln!(
                        std::io::stderr(),
                        "nrtucode: no firmware partition: {}",
                        refusal.message
                    );
                }
                opened
            })
            .as_ref()
    }

    fn open(&self) -> Result<LoadedPartition, Refusal> {
        let Some(path) = std::env::var_os(PARTITION_VAR).filter(|p| !p.is_empty()) else {
            return Err(Refusal::new(
                NRTUCODE_PARTITION_E_NOT_CONFIGURED,
                format!(
                    "{PARTITION_VAR} is not set: name the signed partition file (an absolute path)"
                ),
            ));
        };
        let path = Path::new(&path);
        let name = path.display().to_string();
        if !path.is_absolute() {
            return Err(Refusal::new(
                NRTUCODE_PARTITION_E_NOT_CONFIGURED,
                format!("{PARTITION_VAR}={name} is not an absolute path"),
            ));
        }
        open_path(path, &name, &self.key, KeyOrigin::BuiltIn, &self.policy)
    }

    /// What `resolve` answers over the partition (a core resolver of [`LoadedPartition`]), its
    /// code on failure; `unavailable` (the reason recorded for the thread) when there is no
    /// partition: [`UNAVAILABLE_IMAGE_CODE`] or [`UNAVAILABLE_TABLE_CODE`].
    pub fn answer<'s>(
        &'s self,
        unavailable: c_int,
        resolve: impl FnOnce(&'s LoadedPartition) -> Result<&'s [u8], ResolveErr>,
    ) -> Result<&'s [u8], c_int> {
        match self.get() {
            Ok(p) => resolve(p).map_err(|e| e.code()),
            Err(refusal) => {
                set_last(refusal);
                Err(unavailable)
            }
        }
    }
}
