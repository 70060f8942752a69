//! `nrtucode inspect IMAGE --layout FILE --public-key PUB.pem [--class C] [--json]`: a flash
//! image of an update region (`provision` writes one; a dump read back from a device is one
//! too), read as the device reads it, by the core's own code over the bytes in memory
//! (`nrtucode::update::image::FlashImage`, for the layout's geometry): the state (the newest valid record, or the factory default), every record
//! place of the two state sectors, each slot's full check with the state's minimum security
//! counter, and what the next boot does (`Slots::boot_checked`'s decision, nothing written).
//!
//! The image is read bounded: a regular file (opened non-blocking) of exactly the layout's
//! length; any other length is refused from its metadata before a byte is read.
//!
//! Exit 0 (`"verdict": "verified"`) when the next boot uses the state's slot, fully verified,
//! without falling back, and every record place is erased or a valid record; 65 otherwise,
//! naming the first fault (a state record place that is neither is what a power cut during a
//! record's write leaves, or damaged bytes: the device ignores it, and the report says which
//! state it reads instead).
//!
//! JSON (`--json`), one object, keys in this order:
//!
//! ```text
//! { "format": "nrtucode-inspect-image/2", "file": "...",
//!   "verdict": "verified" | "refused", "error": null | "<the first fault>",
//!   "layout": { "image_offset": 0, "image_len": 2105344, "slot_a": 0, "slot_b": 1048576,
//!               "slot_len": 1048576, "state": 2097152, "state_len": 8192, "erase_size": 4096,
//!               "write_size": 4, "read_size": 1, "class": "full" | "front" },
//!   "state": { "source": "record" | "factory default", "seq": 1, "active": "A" | "B",
//!              "status": "confirmed" | "trial", "trial_boots": 0, "trial_boots_left": 3 | null,
//!              "previous": "A" | "B" | null, "min_security_counter": 1,
//!              "records": { "record_len": 32, "per_sector": 128, "valid": 1,
//!                           "invalid": [ { "sector": 0, "index": 1 } ] } },
//!   "next_boot": null | { "slot": "A" | "B", "fell_back": false,
//!                         "writes": "nothing" | "a trial count" | "the revert" },
//!   "slots": [ { "slot": "A", "offset": 0, "contents": "partition" | "erased" | "not a partition",
//!                "check": "ok" | "<why the device refuses it>",
//!                "partition": null | <the object inspect --json prints for the partition alone> } ] }
//! ```

use std::path::Path;
use std::process::ExitCode;

use nrtucode::partition::{Partition, PublicKey, TableClass};
use nrtucode::update::image::{BootRecord, FlashImage};
use nrtucode::update::record::Record;
use nrtucode::update::{Config, MAX_TRIAL_BOOTS, Slot, State, Status};
use serde::Serialize;

use crate::commands::inspect::{Doc, Unsigned, inspect};
use crate::commands::provision::status_text;
use crate::shared::error::Error;
use crate::shared::exit::Exit;
use crate::shared::flash_image::{FlashMap, LayoutArgs, boot_error};
use crate::shared::input;
use crate::shared::output::Mode;
use crate::shared::output::{err_line, out_fmt};
use crate::shared::reader::read_public_key;
use crate::shared::text_table;

#[derive(Serialize)]
struct LayoutDoc {
    image_offset: u64,
    image_len: u64,
    slot_a: u32,
    slot_b: u32,
    slot_len: u32,
    state: u32,
    state_len: u64,
    erase_size: u32,
    write_size: u32,
    read_size: u32,
    class: &'static str,
}

#[derive(Serialize)]
struct Place {
    sector: usize,
    index: usize,
}

#[derive(Serialize)]
struct Records {
    record_len: usize,
    per_sector: usize,
    valid: usize,
    invalid: Vec<Place>,
}

#[derive(Serialize)]
struct StateDoc {
    source: &'static str,
    seq: u32,
    active: &'static str,
    status: &'static str,
    trial_boots: u8,
    trial_boots_left: Option<u8>,
    previous: Option<&'static str>,
    min_security_counter: u32,
    records: Records,
}

#[derive(Serialize)]
struct NextBoot {
    slot: &'static str,
    fell_back: bool,
    writes: &'static str,
}

#[derive(Serialize)]
struct SlotDoc {
    slot: &'static str,
    offset: u32,
    contents: &'static str,
    check: String,
    partition: Option<Doc>,
}

#[derive(Serialize)]
struct ImageDoc {
    format: &'static str,
    file: String,
    verdict: &'static str,
    error: Option<String>,
    layout: LayoutDoc,
    state: Option<StateDoc>,
    next_boot: Option<NextBoot>,
    slots: Vec<SlotDoc>,
}

const fn name(slot: Slot) -> &'static str {
    match slot {
        Slot::A => "A",
        Slot::B => "B",
    }
}

/// What the core read from the image.
struct Facts {
    state: State,
    record_len: usize,
    per_sector: usize,
    valid: usize,
    invalid: Vec<(usize, usize)>,
    /// `check_slot` of A and B with the state's minimum.
    checks: [Result<(), String>; 2],
    /// The next boot: its slot, whether it fell back, what it wrote.
    boot: Result<(Slot, bool, &'static str), String>,
}

/// What the core reads from `image`, as the device reads it.
fn read(image: &FlashImage<'_>) -> Facts {
    let state = image.state();
    // Each record place, as every read of the state classifies it (the core's codec over
    // the image's bytes).
    let records = image.records();
    let sectors = image.state_bytes();
    let (mut valid, mut invalid) = (0, Vec::new());
    for sector in 0..2 {
        for index in 0..records.per_sector() {
            let place = (records.offset(sector, index))
                .and_then(|at| sectors.get(at..at.saturating_add(records.record_len())));
            match place.map(|bytes| records.decode(bytes)) {
                Some(Record::Valid(_)) => valid += 1,
                Some(Record::Invalid) | None => invalid.push((sector, index)),
                Some(Record::Erased) => {}
            }
        }
    }
    let min = state.min_security_counter;
    let checks = [Slot::A, Slot::B].map(|slot| {
        image
            .check_slot(slot, min)
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
    // The device's boot, with every blob of its slot hashed too (`boot_checked`): an image
    // whose slot fails anywhere is not reported as booting.
    let boot = image
        .next_boot_checked()
        .map(|next| {
            let writes = match next.writes {
                BootRecord::Nothing => "nothing",
                BootRecord::TrialCount => "a trial count",
                BootRecord::Revert => "the revert",
            };
            (next.boot.slot, next.boot.fell_back, writes)
        })
        .map_err(|e| boot_error(image, &e));
    Facts {
        state,
        record_len: records.record_len(),
        per_sector: records.per_sector(),
        valid,
        invalid,
        checks,
        boot,
    }
}

/// Reads the image at `path`: a regular file of exactly `map.image_len()` bytes, its size
/// compared from the open descriptor before a byte is read or a buffer allocated.
fn read_image(path: &Path, map: &FlashMap) -> Result<Vec<u8>, Error> {
    let shown = path.display();
    let image = input::open(path, input::FLASH_IMAGE)?;
    let want = map.image_len();
    let (start, end) = map.span();
    let wrong = |len: String| {
        Error::new(
            Exit::DataErr,
            format!(
                "{shown}: {len}, but the layout's image (flash offsets {start:#x} to {end:#x}) is {want} bytes: a truncated image, or another layout; nothing was checked"
            ),
        )
    };
    if image.len() != want {
        return Err(wrong(format!("{} bytes", image.len())));
    }
    let bytes = image.read_all()?;
    if bytes.len() as u64 != want {
        return Err(wrong(format!("{} bytes read", bytes.len())));
    }
    Ok(bytes)
}

/// Inspects the flash image at `path`.
pub(crate) fn run(
    path: &Path,
    layout: &LayoutArgs,
    public_key: Option<&Path>,
    class: Option<TableClass>,
    json: bool,
) -> ExitCode {
    match run_inner(path, layout, public_key, class) {
        Err(e) => Mode::json(json).fail(e),
        Ok(doc) => {
            if json {
                out_fmt!("{}", crate::shared::output::json_document(&doc));
            } else {
                out_fmt!("{}", text(&doc));
            }
            match &doc.error {
                None => ExitCode::SUCCESS,
                Some(e) => {
                    err_line!("nrtucode: error: {}: {e}", path.display());
                    Exit::DataErr.into()
                }
            }
        }
    }
}

fn run_inner(
    path: &Path,
    layout: &LayoutArgs,
    public_key: Option<&Path>,
    class: Option<TableClass>,
) -> Result<ImageDoc, Error> {
    // The layout's shape first, then the image's size against it, then the core's check
    // over the image read: nothing is allocated for the layout beyond the image's own bytes.
    let map = layout.load_with(FlashMap::shape)?;
    let Some(public_key) = public_key else {
        return Err(Error::new(
            Exit::Usage,
            format!(
                "{}: a flash image is checked as the device checks it: give --public-key PUB.pem",
                path.display()
            ),
        ));
    };
    let key: PublicKey = read_public_key(public_key)?;
    let bytes = read_image(path, &map)?;
    map.check_layout().map_err(|e| layout.fault(e))?;
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    let rebased = map.rebased().ok_or(Error::new(
        Exit::DataErr,
        "the layout does not rebase".to_owned(),
    ))?;
    let slot_bytes = |slot: Slot| -> &'static [u8] {
        let at = match slot {
            Slot::A => rebased.slot_a,
            Slot::B => rebased.slot_b,
        } as usize;
        bytes
            .get(at..at.saturating_add(rebased.slot_len as usize))
            .unwrap_or(&[])
    };
    // The program's class: as given, else the first slot's that parses.
    let class = class
        .or_else(|| {
            [Slot::A, Slot::B]
                .into_iter()
                .find_map(|s| Partition::parse(slot_bytes(s)).ok().map(|p| p.class()))
        })
        .unwrap_or(TableClass::Full);
    let config = Config {
        layout: rebased,
        key,
        class,
    };
    let image = FlashImage::new(bytes, config, map.geometry())
        .map_err(|e| Error::new(Exit::DataErr, format!("{}: {e}", path.display())))?;
    let facts = read(&image);
    let l = map.layout;
    let mut doc = ImageDoc {
        format: "nrtucode-inspect-image/2",
        file: path.display().to_string(),
        verdict: "refused",
        error: None,
        layout: LayoutDoc {
            image_offset: map.image_offset(),
            image_len: map.image_len(),
            slot_a: l.slot_a,
            slot_b: l.slot_b,
            slot_len: l.slot_len,
            state: l.state,
            state_len: map.state_len(),
            erase_size: map.erase_size,
            write_size: map.write_size,
            read_size: map.read_size,
            class: class.name(),
        },
        state: None,
        next_boot: None,
        slots: Vec::new(),
    };
    let s = facts.state;
    let (status, boots) = match s.status {
        Status::Confirmed => ("confirmed", 0),
        Status::Trial { boots } => ("trial", boots),
    };
    doc.state = Some(StateDoc {
        source: if s.seq == 0 {
            "factory default"
        } else {
            "record"
        },
        seq: s.seq,
        active: name(s.active),
        status,
        trial_boots: boots,
        trial_boots_left: s.is_trial().then(|| MAX_TRIAL_BOOTS.saturating_sub(boots)),
        previous: s.previous.map(name),
        min_security_counter: s.min_security_counter,
        records: Records {
            record_len: facts.record_len,
            per_sector: facts.per_sector,
            valid: facts.valid,
            invalid: facts
                .invalid
                .iter()
                .map(|&(sector, index)| Place { sector, index })
                .collect(),
        },
    });
    let mut errors = Vec::new();
    match &facts.boot {
        Ok((slot, fell_back, writes)) => {
            doc.next_boot = Some(NextBoot {
                slot: name(*slot),
                fell_back: *fell_back,
                writes,
            });
            if *fell_back {
                let wanted = slot.other();
                let why = facts.checks[usize::from(wanted == Slot::B)]
                    .clone()
                    .err()
                    .unwrap_or_default();
                errors.push(format!(
                    "slot {} (the state's) does not verify: {why}; the device falls back to slot {}",
                    name(wanted),
                    name(*slot)
                ));
            }
        }
        Err(e) => errors.push(e.clone()),
    }
    if let Some(&(sector, index)) = facts.invalid.first() {
        errors.push(format!(
            "state sector {sector} record place {index} is neither erased nor a valid record (a record's write cut by a power loss, or damaged bytes): the device ignores {}, and reads the state as slot {} {}",
            if facts.invalid.len() == 1 {
                "it".to_owned()
            } else {
                format!("it and {} more", facts.invalid.len() - 1)
            },
            name(s.active),
            status_text(s.status)
        ));
    }
    for (slot, check) in [Slot::A, Slot::B].into_iter().zip(facts.checks) {
        let bytes = slot_bytes(slot);
        let (contents, partition) = if bytes.iter().all(|b| *b == 0xff) {
            ("erased", None)
        } else if Partition::parse(bytes).is_ok() {
            let shown = format!("{} slot {}", path.display(), name(slot));
            (
                "partition",
                Some(inspect(
                    &shown,
                    bytes,
                    Some(&key),
                    None,
                    Unsigned::StoredOnly,
                )),
            )
        } else {
            ("not a partition", None)
        };
        doc.slots.push(SlotDoc {
            slot: name(slot),
            offset: match slot {
                Slot::A => l.slot_a,
                Slot::B => l.slot_b,
            },
            contents,
            check: check.map_or_else(|e| e, |()| "ok".to_owned()),
            partition,
        });
    }
    doc.verdict = if errors.is_empty() {
        "verified"
    } else {
        "refused"
    };
    doc.error = errors.into_iter().next();
    Ok(doc)
}

fn text(doc: &ImageDoc) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let verdict = match (&doc.error, &doc.next_boot) {
        (None, Some(b)) => format!(
            "VERIFIED: the next boot uses slot {}, fully verified (signature, class, security counter, every blob's digest)",
            b.slot
        ),
        (Some(e), _) => format!("REFUSED: {e}"),
        (None, None) => "REFUSED".into(),
    };
    rows.push(vec!["verdict".into(), verdict]);
    let l = &doc.layout;
    rows.push(vec![
        "file".into(),
        format!(
            "{} ({} bytes: flash offsets {:#x} to {:#x})",
            doc.file,
            l.image_len,
            l.image_offset,
            l.image_offset + l.image_len
        ),
    ]);
    rows.push(vec![
        "geometry".into(),
        format!(
            "erase {} B, write {} B, read {} B; {} tables",
            l.erase_size, l.write_size, l.read_size, l.class
        ),
    ]);
    if let Some(s) = &doc.state {
        let status = match s.trial_boots_left {
            Some(left) => format!(
                "on trial, {} of {MAX_TRIAL_BOOTS} boots counted ({left} left before the revert to slot {})",
                s.trial_boots,
                s.previous.unwrap_or("-")
            ),
            None => "confirmed".into(),
        };
        rows.push(vec!["active slot".into(), format!("{} {status}", s.active)]);
        rows.push(vec![
            "min security counter".into(),
            s.min_security_counter.to_string(),
        ]);
        rows.push(vec![
            "state".into(),
            if s.seq == 0 {
                "no record: the factory default (slot A confirmed)".into()
            } else {
                format!("record {}", s.seq)
            },
        ]);
        rows.push(vec![
            "state records".into(),
            format!(
                "{} valid, {} invalid, of 2 x {} places of {} bytes",
                s.records.valid,
                s.records.invalid.len(),
                s.records.per_sector,
                s.records.record_len
            ),
        ]);
    }
    if let Some(b) = &doc.next_boot {
        rows.push(vec![
            "next boot".into(),
            format!(
                "slot {}{}; writes {}",
                b.slot,
                if b.fell_back { " (fell back)" } else { "" },
                b.writes
            ),
        ]);
    }
    let mut out = text_table::render(&["image", "value"], &rows);
    let rows: Vec<Vec<String>> = doc
        .slots
        .iter()
        .map(|s| {
            let header = s
                .partition
                .as_ref()
                .and_then(|p| p.header_line())
                .unwrap_or_else(|| s.contents.to_owned());
            vec![
                s.slot.into(),
                format!("{:#x}", s.offset),
                header,
                s.check.clone(),
            ]
        })
        .collect();
    out.push('\n');
    out.push_str(&text_table::render(
        &["slot", "offset", "contents", "device check"],
        &rows,
    ));
    out
}
