//! `nrtucode provision --slot-a A.part [--slot-b B.part] --public-key PUB.pem --layout FILE
//! -o IMAGE`: the factory image of a device's update region (docs/update.md, "Provisioning"),
//! one file a programmer writes at the layout's lowest offset: both slots, every unused byte
//! erased (`0xff`), and the state as the device's own `nrtucode::update::Slots` leaves it.
//!
//! Each partition is verified with the public key first (structure, signature, class, every
//! blob's digest, compressed blobs decoded) and must fit its slot. The image is then built by
//! the core itself over an in-memory NOR flash ([`flash_image`](crate::commands::flash_image)):
//! slot A written as a programmer writes a partition (its bytes, then erased flash), slot B
//! either the same (`--first-boot a`: a spare the device falls back to) or installed through
//! `Slots::install` and `Install::finish` (`--first-boot b-trial`: the record the device writes
//! for a candidate). Before anything is written, `Slots::boot` over a copy of the image must
//! boot the slot asked for, fully verified, without falling back.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use nrtucode::partition::{Partition, Policy, PublicKey, TableClass};
use nrtucode::update::{Config, Layout, MAX_TRIAL_BOOTS, Slot, Slots, State, Status};

use crate::commands::exit::Exit;
use crate::commands::flash_image::{FlashMap, Image, Job, LayoutArgs, with_geometry};
use crate::commands::output::{fail, out_line};
use crate::commands::output_file::{Mode, refuse_input, write_output};
use crate::commands::tables::{load_refusal, read_partition, read_public_key};

/// What the device's first boot does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FirstBoot {
    /// Slot A, confirmed: the state erased, as on a device that never updated (slot B, if
    /// given, is a spare the device falls back to when slot A fails its check).
    #[default]
    A,
    /// Slot B on trial: installed as the device installs an update (slot A is what a trial
    /// not confirmed within 3 boots reverts to).
    BTrial,
}

/// The command's inputs.
#[derive(Debug)]
pub(crate) struct Options<'a> {
    /// Slot A's partition.
    pub slot_a: &'a Path,
    /// Slot B's, if any.
    pub slot_b: Option<&'a Path>,
    /// The key every partition must be signed with.
    pub public_key: &'a Path,
    /// The class the program was built for (default: slot A's).
    pub class: Option<TableClass>,
    /// What the first boot does.
    pub first_boot: FirstBoot,
    /// The layout.
    pub layout: &'a LayoutArgs,
    /// The image to write.
    pub out: &'a Path,
}

/// Why `provision` wrote nothing.
#[derive(Debug)]
pub(crate) enum ProvisionError {
    /// An input could not be read or was refused (a key file, a partition file's header, the
    /// layout): its exit code and message.
    Input(Exit, String),
    /// A partition larger than its slot.
    DoesNotFit {
        /// The slot.
        slot: Slot,
        /// The partition file.
        path: PathBuf,
        /// Its length.
        len: usize,
        /// The slot's.
        slot_len: u32,
    },
    /// A partition that does not verify with the key (structure, signature, class, digests).
    Refused {
        /// The slot.
        slot: Slot,
        /// The partition file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The core, building the image, refused it (a fault: the checks above should have).
    Core(String),
}

impl ProvisionError {
    fn exit(&self) -> Exit {
        match self {
            ProvisionError::Input(exit, _) => *exit,
            _ => Exit::DataErr,
        }
    }
}

impl fmt::Display for ProvisionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProvisionError::Input(_, message) => f.write_str(message),
            ProvisionError::DoesNotFit {
                slot,
                path,
                len,
                slot_len,
            } => write!(
                f,
                "{}: {len} bytes do not fit slot {slot:?} ({slot_len} bytes, slot_len {slot_len:#x}): nothing was written",
                path.display()
            ),
            ProvisionError::Refused { slot, path, reason } => write!(
                f,
                "{}: refused for slot {slot:?}: {reason}; nothing was written",
                path.display()
            ),
            ProvisionError::Core(message) => write!(
                f,
                "the update code refused the image it built: {message}; nothing was written"
            ),
        }
    }
}

impl From<(Exit, String)> for ProvisionError {
    fn from((exit, message): (Exit, String)) -> Self {
        ProvisionError::Input(exit, message)
    }
}

/// A partition read and fully verified for a slot.
struct Checked {
    path: PathBuf,
    bytes: &'static [u8],
    class: TableClass,
    counter: u32,
    key_id: String,
}

fn check_partition(
    slot: Slot,
    path: &Path,
    key: &PublicKey,
    class: Option<TableClass>,
    slot_len: u32,
) -> Result<Checked, ProvisionError> {
    let refused = |reason: String| ProvisionError::Refused {
        slot,
        path: path.to_owned(),
        reason,
    };
    let bytes = read_partition(path)?;
    let parsed = Partition::parse(bytes).map_err(|e| refused(e.to_string()))?;
    let len = parsed.bytes().len();
    if u32::try_from(len).map_or(true, |n| n > slot_len) {
        return Err(ProvisionError::DoesNotFit {
            slot,
            path: path.to_owned(),
            len,
            slot_len,
        });
    }
    let expected_class = class.unwrap_or(parsed.class());
    let policy = Policy {
        min_security_counter: 0,
        expected_class,
    };
    let verified = parsed
        .verify(key, &policy)
        .map_err(|e| refused(e.to_string()))?;
    verified
        .check_every_blob()
        .map_err(|e| refused(load_refusal(&verified.tables(), e)))?;
    Ok(Checked {
        path: path.to_owned(),
        bytes: parsed.bytes(),
        class: expected_class,
        counter: parsed.security_counter(),
        key_id: nrtucode_facts::hex::lower_hex(&parsed.key_id()),
    })
}

/// The core's part: the image built and booted.
struct Build<'a> {
    config: Config,
    /// Slot B's partition to install as the candidate (`--first-boot b-trial`).
    install: Option<&'a [u8]>,
    /// The slot the first boot must use.
    expect: Slot,
}

/// What the core built.
struct Built {
    image: Vec<u8>,
    state: State,
    /// A written record (`None`: the state is erased, the factory default).
    recorded: bool,
}

impl Job for Build<'_> {
    type Output = Result<Built, String>;

    fn run<F: Image>(self, flash: F) -> Self::Output {
        let mut slots = Slots::new(flash, self.config).map_err(|e| e.to_string())?;
        let recorded = if let Some(partition) = self.install {
            let mut install = slots.install().map_err(|e| e.to_string())?;
            if install.target() != Slot::B {
                return Err(format!(
                    "the install targets slot {:?}, not B",
                    install.target()
                ));
            }
            // Chunks as a radio would deliver them; any size gives the same bytes.
            for chunk in partition.chunks(4096) {
                install.write(chunk).map_err(|e| e.to_string())?;
            }
            install.finish().map_err(|e| e.to_string())?;
            true
        } else {
            false
        };
        let state = slots.state().map_err(|e| e.to_string())?;
        // The first boot, on a copy: what the device will do with these bytes.
        let mut first =
            Slots::new(slots.flash().clone(), self.config).map_err(|e| e.to_string())?;
        let boot = first.boot().map_err(|e| format!("the first boot: {e}"))?;
        if boot.slot != self.expect || boot.fell_back {
            return Err(format!(
                "the first boot uses slot {:?}{}, not {:?}",
                boot.slot,
                if boot.fell_back { " (fell back)" } else { "" },
                self.expect
            ));
        }
        Ok(Built {
            image: slots.into_flash().into_bytes(),
            state,
            recorded,
        })
    }
}

fn hex(n: u64) -> String {
    format!("{n:#x}")
}

fn run_inner(o: &Options<'_>) -> Result<String, ProvisionError> {
    let map: FlashMap = o.layout.load()?;
    let key = read_public_key(o.public_key)?;
    let slot_len = map.layout.slot_len;
    let a = check_partition(Slot::A, o.slot_a, &key, o.class, slot_len)?;
    let b = o
        .slot_b
        .map(|path| check_partition(Slot::B, path, &key, Some(a.class), slot_len))
        .transpose()?;
    // Early, before the image is built; `write_output` checks again.
    refuse_input(o.out, "-o", false)?;
    let rebased: Layout = map
        .rebased()
        .ok_or_else(|| ProvisionError::Core("the layout does not rebase".into()))?;
    let len = usize::try_from(map.image_len())
        .map_err(|_| ProvisionError::Core("the image is too large for this host".into()))?;
    let mut image = vec![0xffu8; len];
    // A slot as a programmer writes a partition: its bytes from the slot's first, then the
    // erased flash (docs/update.md, "The byte layout").
    let mut place = |at: u32, bytes: &[u8]| {
        let at = at as usize;
        if let Some(slot) = image.get_mut(at..at + bytes.len()) {
            slot.copy_from_slice(bytes);
        }
    };
    place(rebased.slot_a, a.bytes);
    let install = match (o.first_boot, &b) {
        (FirstBoot::A, Some(b)) => {
            place(rebased.slot_b, b.bytes);
            None
        }
        (FirstBoot::BTrial, Some(b)) => Some(b.bytes),
        (FirstBoot::BTrial, None) => {
            return Err(ProvisionError::Input(
                Exit::Usage,
                "--first-boot b-trial needs --slot-b B.part".into(),
            ));
        }
        (FirstBoot::A, None) => None,
    };
    let build = Build {
        config: Config {
            layout: rebased,
            key,
            class: a.class,
        },
        install,
        expect: if install.is_some() { Slot::B } else { Slot::A },
    };
    let built = with_geometry(&map, image, build)
        .ok_or_else(|| ProvisionError::Core("unsupported geometry".into()))?
        .map_err(ProvisionError::Core)?;
    write_output(o.out, &built.image, Mode::Replace)?;

    let (start, end) = map.span();
    let at = match map.flash_base.and_then(|base| base.checked_add(start)) {
        Some(address) => format!("flash offset {}, address {}", hex(start), hex(address)),
        None => format!("flash offset {}", hex(start)),
    };
    let mut lines = vec![format!(
        "{}: {} bytes, flash offsets {} to {} (program it at {at})",
        o.out.display(),
        built.image.len(),
        hex(start),
        hex(end)
    )];
    let describe = |c: &Checked| {
        format!(
            "{}, {} of {slot_len} bytes, {} tables, security counter {}, key ID {}: verified",
            c.path.display(),
            c.bytes.len(),
            c.class.name(),
            c.counter,
            c.key_id
        )
    };
    lines.push(format!(
        "slot A at {}: {}",
        hex(map.layout.slot_a.into()),
        describe(&a)
    ));
    lines.push(format!(
        "slot B at {}: {}",
        hex(map.layout.slot_b.into()),
        match (&b, o.first_boot) {
            (None, _) => "erased".to_owned(),
            (Some(b), FirstBoot::A) => format!(
                "{} (a spare: booted if slot A fails its check)",
                describe(b)
            ),
            (Some(b), FirstBoot::BTrial) => format!("{} (installed as the candidate)", describe(b)),
        }
    ));
    let s = built.state;
    lines.push(format!(
        "state at {}: {}",
        hex(map.layout.state.into()),
        if built.recorded {
            format!(
                "record {}: slot {:?} {}, previous {}, minimum security counter {}",
                s.seq,
                s.active,
                status_text(s.status),
                s.previous.map_or("none".to_owned(), |p| format!("{p:?}")),
                s.min_security_counter
            )
        } else {
            format!(
                "erased (no record: the factory default, slot A confirmed, minimum security counter {}: slot A's)",
                s.min_security_counter
            )
        }
    ));
    lines.push(format!(
        "checked: Slots::boot over the image boots slot {:?}{}, fully verified",
        built.state.active,
        if built.recorded {
            " on trial"
        } else {
            ", confirmed"
        }
    ));
    Ok(lines.join("\n"))
}

/// `confirmed` or `on trial (N of 3 boots counted)`.
pub(crate) fn status_text(status: Status) -> String {
    match status {
        Status::Confirmed => "confirmed".into(),
        Status::Trial { boots } => {
            format!("on trial ({boots} of {MAX_TRIAL_BOOTS} boots counted)")
        }
    }
}

/// Runs `provision`.
pub(crate) fn run(o: &Options<'_>) -> ExitCode {
    match run_inner(o) {
        Ok(summary) => {
            out_line!("{summary}");
            ExitCode::SUCCESS
        }
        Err(e) => fail(e.exit(), e),
    }
}
