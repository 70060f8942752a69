//! `nrtucode provision --slot-a A.part [--slot-b B.part] --public-key PUB.pem --layout FILE
//! -o IMAGE`: the factory image of a device's update region (docs/update.md, "Provisioning"),
//! one file a programmer writes at the layout's lowest offset: both slots, every unused byte
//! erased (`0xff`), and the state as the device's own `nrtucode::update::Slots` leaves it.
//!
//! Each partition is verified with the public key first (structure, signature, class, every
//! blob's digest, compressed blobs decoded) and must fit its slot. The image is then built with
//! the core's own code over its bytes ([`FlashImage`], for the layout's geometry): slot A
//! written as a programmer writes a partition (its bytes, then erased flash, as an install
//! leaves a slot too), slot B either the same (`--first-boot a`: a spare the device falls back
//! to) or also given the record `Install::finish` appends for a candidate
//! ([`FlashImage::candidate_record`], `--first-boot b-trial`). Before anything is written, the
//! device's `Slots::boot_checked` over the image ([`FlashImage::next_boot_checked`]) must boot
//! the slot asked for, fully verified, without falling back.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use nrtucode::partition::{Partition, Policy, PublicKey, TableClass};
use nrtucode::update::image::FlashImage;
use nrtucode::update::{Config, Layout, MAX_TRIAL_BOOTS, Slot, State, Status};

use crate::shared::error::Error;
use crate::shared::exit::Exit;
use crate::shared::flash_image::{FlashMap, LayoutArgs, boot_error};
use crate::shared::output::{fail, out_line};
use crate::shared::output_file::{Mode, refuse_input, write_output};
use crate::shared::reader::{read_partition, read_public_key};
use crate::shared::tables::load_refusal;

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
    /// The lowest security counter a slot's partition may have.
    pub min_security_counter: u32,
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
    /// layout): the reader's error (its kind is the exit code).
    Input(Error),
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
            ProvisionError::Input(e) => e.kind(),
            _ => Exit::DataErr,
        }
    }
}

impl fmt::Display for ProvisionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProvisionError::Input(e) => fmt::Display::fmt(e, f),
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

impl From<Error> for ProvisionError {
    fn from(e: Error) -> Self {
        ProvisionError::Input(e)
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
    (min_security_counter, class): (u32, Option<TableClass>),
    slot_len: u32,
) -> Result<Checked, ProvisionError> {
    let refused = |reason: String| ProvisionError::Refused {
        slot,
        path: path.to_owned(),
        reason,
    };
    // Any form `inspect` reads; kept for the life of the process, as the image is built from it.
    let bytes: &'static [u8] = Box::leak(read_partition(path)?.bytes);
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
        min_security_counter,
        expected_class,
    };
    let verified = parsed
        .verify(key, &policy)
        .map_err(|e| refused(e.to_string()))?;
    verified
        .check_blobs(&mut nrtucode::digest::SoftSha256::new())
        .and_then(|checked| checked.check_decoding())
        .map_err(|e| refused(load_refusal(&verified.tables(), e)))?;
    Ok(Checked {
        path: path.to_owned(),
        bytes: parsed.bytes(),
        class: expected_class,
        counter: parsed.security_counter(),
        key_id: nrtucode_facts::hex::lower_hex(&parsed.key_id()),
    })
}

/// What the core built.
struct Built {
    image: Vec<u8>,
    state: State,
    /// A written record (`None`: the state is erased, the factory default).
    recorded: bool,
}

/// `bytes` written into `image` at `at` (a programmer's write, or an install's: the bytes, then
/// erased flash); `false` if they do not fit.
fn place(image: &mut [u8], at: usize, bytes: &[u8]) -> bool {
    match at
        .checked_add(bytes.len())
        .and_then(|end| image.get_mut(at..end))
    {
        Some(place) => {
            place.copy_from_slice(bytes);
            true
        }
        None => false,
    }
}

/// The core's part over `image` (slot A, and a spare slot B, already placed): with `install`,
/// slot B's partition placed and the candidate's record appended as `Install::finish` appends
/// it; then the device's first boot (`boot_checked`: every blob hashed too), which must use
/// `expect` without falling back.
fn build(
    map: &FlashMap,
    config: Config,
    mut image: Vec<u8>,
    install: Option<&[u8]>,
    expect: Slot,
) -> Result<Built, String> {
    let geometry = map.geometry();
    let recorded = if let Some(partition) = install {
        if !place(&mut image, config.layout.slot_b as usize, partition) {
            return Err("slot B lies beyond the image".into());
        }
        let append = FlashImage::new(&image, config, geometry)?
            .candidate_record(Slot::B)
            .map_err(|e| e.to_string())?;
        if let Some(sector) = append.erase.and_then(|r| image.get_mut(r)) {
            sector.fill(0xff);
        }
        if !place(&mut image, append.offset, append.bytes.record()) {
            return Err("the state lies beyond the image".into());
        }
        true
    } else {
        false
    };
    let region = FlashImage::new(&image, config, geometry)?;
    let state = region.state();
    let first = region
        .next_boot_checked()
        .map_err(|e| format!("the first boot: {}", boot_error(&region, &e)))?
        .boot;
    if first.slot != expect || first.fell_back {
        return Err(format!(
            "the first boot uses slot {:?}{}, not {:?}",
            first.slot,
            if first.fell_back { " (fell back)" } else { "" },
            expect
        ));
    }
    Ok(Built {
        image,
        state,
        recorded,
    })
}

fn hex(n: u64) -> String {
    format!("{n:#x}")
}

fn run_inner(o: &Options<'_>) -> Result<String, ProvisionError> {
    let map: FlashMap = o.layout.load()?;
    let key = read_public_key(o.public_key)?;
    let slot_len = map.layout.slot_len;
    let a = check_partition(
        Slot::A,
        o.slot_a,
        &key,
        (o.min_security_counter, o.class),
        slot_len,
    )?;
    let b = o
        .slot_b
        .map(|path| {
            check_partition(
                Slot::B,
                path,
                &key,
                (o.min_security_counter, Some(a.class)),
                slot_len,
            )
        })
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
    // erased flash (docs/update.md, "The byte layout"). `check_partition` checked that each
    // fits its slot, and the layout that each slot lies in the image.
    let beyond = || ProvisionError::Core("a slot lies beyond the image".into());
    if !place(&mut image, rebased.slot_a as usize, a.bytes) {
        return Err(beyond());
    }
    let install = match (o.first_boot, &b) {
        (FirstBoot::A, Some(b)) => {
            if !place(&mut image, rebased.slot_b as usize, b.bytes) {
                return Err(beyond());
            }
            None
        }
        (FirstBoot::BTrial, Some(b)) => Some(b.bytes),
        (FirstBoot::BTrial, None) => {
            return Err(ProvisionError::Input(Error::new(
                Exit::Usage,
                "--first-boot b-trial needs --slot-b B.part",
            )));
        }
        (FirstBoot::A, None) => None,
    };
    let config = Config {
        layout: rebased,
        key,
        class: a.class,
    };
    let expect = if install.is_some() { Slot::B } else { Slot::A };
    let built = build(&map, config, image, install, expect).map_err(ProvisionError::Core)?;
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
        Err(e) => fail(Error::new(e.exit(), e)),
    }
}
