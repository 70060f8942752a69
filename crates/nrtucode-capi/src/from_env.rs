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

use crate::handle::open_path;
use crate::opened::OpenedPartition;
use crate::refusal::{NRTUCODE_PARTITION_E_NOT_CONFIGURED, Refusal, set_last};

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
    opened: OnceLock<Result<OpenedPartition, Refusal>>,
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
    pub fn get(&self) -> Result<&OpenedPartition, &Refusal> {
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

    fn open(&self) -> Result<OpenedPartition, Refusal> {
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
        open_path(path, &name, &self.key, &self.policy)
    }

    /// `nrtucode_get_memory_image` over the partition: its answer, or
    /// [`UNAVAILABLE_IMAGE_CODE`] when there is none (the reason recorded for the thread).
    pub fn memory_image(&self, idx: u32, region: c_int, flavor: c_int) -> Result<&[u8], c_int> {
        match self.get() {
            Ok(p) => p.memory_image(idx, region, flavor),
            Err(refusal) => {
                set_last(refusal);
                Err(UNAVAILABLE_IMAGE_CODE)
            }
        }
    }

    /// `nrtucode_get_hwdecode_table` over the partition: its answer, or
    /// [`UNAVAILABLE_TABLE_CODE`] when there is none.
    pub fn hwdecode_table(&self, idx: u32, kind: c_int) -> Result<&[u8], c_int> {
        match self.get() {
            Ok(p) => p.hwdecode_table(idx, kind),
            Err(refusal) => {
                set_last(refusal);
                Err(UNAVAILABLE_TABLE_CODE)
            }
        }
    }
}
