//! `nrtucode pack`: write a signed blob partition (docs/partition.md) from a library, a blob
//! directory or the built-in fixtures, atomically, through `output_file` (the output may not
//! be the key, the library or a file of the blob directory), in one of the flashable forms
//! (`--format bin|ihex|elf|uf2`, `flash_file`) at the address `--base-address` gives or the
//! memory map's `__nrtucode_partition_start` (`--memory-map`, `memory_map`), which also
//! bounds the partition's length.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use nrtucode::partition::{Partition, TableClass};
use nrtucode_pack::{Blobs, Compression, PackError, PackOptions, pack_with};

use crate::commands::key::read_signing_key;
use crate::shared::carve_diagnosis::library_refusal;
use crate::shared::error::Error;
use crate::shared::exit::{self, Exit};
use crate::shared::flash_file::{self, Format, Machine, Placement};
use crate::shared::memory_map::{self, PartitionRegion};
use crate::shared::output::{fail, out_line};
use crate::shared::output_file::{Mode, note_input_path, refuse_input, write_output};

/// What to pack.
#[derive(Clone, Debug)]
pub(crate) enum Input {
    /// Carve this library.
    Library(PathBuf),
    /// This blob directory.
    BlobDir(PathBuf),
    /// The built-in fixture set of a class.
    Fixtures(TableClass),
}

/// Where the partition goes: the form, and the address from `--base-address` or the region
/// from `--memory-map` (at most one of the two: clap refuses both).
#[derive(Clone, Debug)]
pub(crate) struct Target {
    /// The form of the output file.
    pub format: Format,
    /// `--base-address`.
    pub base_address: Option<u64>,
    /// `--memory-map`.
    pub memory_map: Option<PathBuf>,
    /// `--uf2-family`.
    pub uf2_family: Option<u32>,
    /// `--machine` (the ELF form's).
    pub machine: Machine,
}

/// The region of `--memory-map`, and the placement: checked for the usage errors (a form
/// with an address and none given, a family for a form other than UF2) before anything is
/// read or packed.
fn placement(target: &Target) -> Result<(Option<PartitionRegion>, Option<Placement>), Error> {
    if target.uf2_family.is_some() && target.format != Format::Uf2 {
        return Err(Error::new(
            Exit::Usage,
            format!(
                "--uf2-family is for --format uf2, not {}",
                target.format.name()
            ),
        ));
    }
    if target.format == Format::Uf2 && target.uf2_family.is_none() {
        return Err(Error::new(
            Exit::Usage,
            "--format uf2 needs --uf2-family ID (rp2040, rp2350-arm-s, nrf52840, a number, …): a boot ROM that filters on the family, as RP2040's does, ignores blocks without one".to_owned(),
        ));
    }
    let region = target
        .memory_map
        .as_deref()
        .map(memory_map::read)
        .transpose()?;
    let base = target.base_address.or(region.map(|r| r.start));
    let Some(base) = base else {
        return match target.format {
            Format::Bin => Ok((None, None)),
            other => Err(Error::new(
                Exit::Usage,
                format!(
                    "--format {} writes the address into the file: give --memory-map MAP (the memory map the firmware is linked with) or --base-address ADDR",
                    other.name()
                ),
            )),
        };
    };
    let Ok(base_address) = u32::try_from(base) else {
        return Err(Error::new(
            Exit::Usage,
            format!("--base-address {base:#x} is beyond the 32-bit address space"),
        ));
    };
    Ok((
        region,
        Some(Placement {
            base_address,
            uf2_family: target.uf2_family,
        }),
    ))
}

fn pack_error(e: PackError) -> Error {
    let exit = match &e {
        PackError::Io { source, .. } => exit::reading(source),
        PackError::Carve(nrtucode_carve::FileError::Io { source, .. }) => exit::reading(source),
        _ => Exit::DataErr,
    };
    match &e {
        PackError::Carve(carve) => Error::new(exit, library_refusal(carve)),
        _ => Error::new(exit, &e).caused_by(e),
    }
}

fn run_inner(
    input: &Input,
    out: &Path,
    key: Option<&Path>,
    security_counter: u32,
    compression: Compression,
    target: &Target,
) -> Result<String, Error> {
    let (region, placement) = placement(target)?;
    let key = key.map(read_signing_key).transpose()?;
    if let Input::Library(lib) = input {
        note_input_path(lib);
    }
    // Early, before the blobs are read and packed; `write_output` checks again with them.
    refuse_input(out, "-o", false)?;
    let blobs = match input {
        Input::Library(lib) => Blobs::from_library(lib),
        Input::BlobDir(dir) => Blobs::from_dir(dir),
        Input::Fixtures(class) => Ok(Blobs::fixtures(*class)),
    }
    .map_err(pack_error)?;
    for input in blobs.inputs() {
        note_input_path(input);
    }
    let (bytes, summary) = pack_with(
        &blobs,
        &PackOptions {
            security_counter,
            key: key.as_ref(),
        },
        compression,
    )
    .map_err(pack_error)?;
    let parsed = Partition::parse(&bytes).map_err(|e| {
        Error::new(
            Exit::DataErr,
            format!("the packed partition does not parse: {e}"),
        )
    })?;
    if let Some(region) = region
        && bytes.len() as u64 > region.len()
    {
        return Err(Error::new(
            Exit::DataErr,
            format!(
                "the partition is {} bytes; the memory map's region {:#x}..{:#x} holds {}",
                bytes.len(),
                region.start,
                region.end,
                region.len()
            ),
        ));
    }
    let file =
        flash_file::encode(target.format, &bytes, placement, target.machine).map_err(|e| {
            let exit = if target.memory_map.is_some() {
                Exit::DataErr
            } else {
                Exit::Usage
            };
            Error::new(exit, format_args!("--format {}: {e}", target.format.name())).caused_by(e)
        })?;
    write_output(out, &file, Mode::Replace)?;
    let signed = match &key {
        Some(k) => format!(
            "signed, key ID {}",
            nrtucode_facts::hex::lower_hex(&k.public_key().key_id())
        ),
        None => "UNSIGNED".to_owned(),
    };
    let line = format!(
        "{}: {} bytes, {} tables, {} descriptors, {} blobs, security counter {security_counter}, {signed}",
        out.display(),
        bytes.len(),
        parsed.class().name(),
        parsed.descriptor_count(),
        parsed.blob_count()
    );
    let line = match placement {
        Some(p) => format!(
            "{line}; {} for {:#010x}..{:#010x}{}",
            target.format.name(),
            p.base_address,
            u64::from(p.base_address) + bytes.len() as u64,
            match p.uf2_family {
                Some(id) => format!(
                    ", UF2 family {id:#010x}{}",
                    flash_file::uf2_families::name(id)
                        .map(|n| format!(" ({n})"))
                        .unwrap_or_default()
                ),
                None => String::new(),
            }
        ),
        None => line,
    };
    Ok(match compression {
        Compression::Stored => line,
        Compression::Deflate => format!("{line}\n{summary}"),
    })
}

/// Packs `input` into `out`, signed with the key at `key` (`None`: unsigned), its blobs kept
/// as `compression` says (with deflate, a second line gives the ratio), in the form and at
/// the address `target` says.
pub(crate) fn run(
    input: &Input,
    out: &Path,
    key: Option<&Path>,
    security_counter: u32,
    compression: Compression,
    target: &Target,
) -> ExitCode {
    match run_inner(input, out, key, security_counter, compression, target) {
        Ok(summary) => {
            out_line!("{summary}");
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}
