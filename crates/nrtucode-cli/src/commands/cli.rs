//! The command line: the `clap` argument definition and the dispatch to one module per
//! subcommand.
//!
//! Exit codes (`exit`): 0 success; `resolve` exits with the resolver's own code (1, 2, 3, 8);
//! every other failure uses a sysexits code outside those: 64 usage, 65 bad data, 66 no input,
//! 73 cannot create, 74 I/O error. Help texts are plain text: no Markdown.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, Subcommand};
use nrtucode::Request;
use nrtucode::partition::{LoadedPartition, Unverified};

use crate::commands::key::KeyFormat;
use crate::commands::resolve::Show;
use crate::commands::{
    carve, check, diff, inspect, inspect_image, key, list, pack, package, prof, provision, resolve,
    sbom,
};
use crate::shared::exit::EXIT_CODES_HELP;
use crate::shared::flash_image::{LayoutArgs, parse_number};
use crate::shared::output::Mode;
use crate::shared::tables::PartitionArgs;
use crate::shared::trust::TrustArgs;
use crate::shared::values::{
    ClassArg, CodecArg, FLAVOR, GenerationArg, KIND, REGION, parse_raw_index,
};
use crate::shared::{flash_file, output};

/// Carve the firmware blobs out of a vendor library, check blob directories, pack and inspect
/// signed partitions, list and resolve.
#[derive(Debug, Parser)]
#[command(
    name = "nrtucode",
    version,
    about = "Carve the firmware blobs out of a vendor library, check blob directories, pack and inspect signed partitions, list and resolve.",
    after_help = EXIT_CODES_HELP
)]
pub(crate) struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Carve the blobs out of an x86-64 ELF shared object into a blob directory.
    Carve {
        /// The library (e.g. libnrtucode_internal.so, stripped or not).
        lib: PathBuf,
        /// The output directory: absent (created), empty (filled in place: its mode and owner
        /// stay), or an earlier carve (replaced whole, no stale SHA256.bin left). Anything else
        /// (a file, a symbolic link, which is not followed, a directory with other files, an
        /// earlier carve this user may not delete) is refused and never touched. Written all or
        /// nothing: a failed or interrupted (Ctrl-C, SIGTERM) carve leaves it as it was.
        #[arg(long)]
        out: PathBuf,
        /// Print one line per carved getter.
        #[arg(long)]
        getters: bool,
        /// Exit 65 when a getter's size differs from the facts or a published hash differs.
        #[arg(long)]
        strict: bool,
        /// When the library is not the vendor's: print what carve tried, too.
        #[arg(short, long)]
        verbose: bool,
    },
    /// Check a blob directory against its manifest and the facts.
    // `verify` was its name: kept as a hidden alias so scripts keep working.
    #[command(alias = "verify")]
    Check {
        /// The blob directory.
        dir: PathBuf,
    },
    /// Pack a signed partition (docs/partition.md): the vendor's tables and blobs, from a
    /// library (carved in memory), a blob directory or the built-in fixtures.
    #[command(group(clap::ArgGroup::new("input").required(true).args(["lib", "blob_dir", "fixtures"])))]
    #[command(group(clap::ArgGroup::new("signing").required(true).args(["key", "unsigned"])))]
    Pack {
        /// The library (e.g. libnrtucode_internal.so or libnrtucode.so).
        lib: Option<PathBuf>,
        /// A blob directory nrtucode carve wrote (checked first, as nrtucode check does).
        #[arg(long, value_name = "DIR")]
        blob_dir: Option<PathBuf>,
        /// The built-in fixture set of the full or the front tables.
        #[arg(long, value_name = "CLASS", value_enum)]
        fixtures: Option<ClassArg>,
        /// The partition file to write (atomically: a failure leaves it as it was).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: PathBuf,
        /// Sign with this ed25519 private key (PKCS#8 PEM; nrtucode key generate writes one).
        #[arg(long, value_name = "KEY.pem")]
        key: Option<PathBuf>,
        /// Write an unsigned partition: readers accept it only when told to skip the signature.
        #[arg(long)]
        unsigned: bool,
        /// The security counter: readers refuse a partition with a lower one than they expect.
        /// The default is 1, the bare-metal template's minimum (MIN_SECURITY_COUNTER).
        #[arg(long, value_name = "N", default_value_t = 1)]
        security_counter: u32,
        /// Compress each blob: deflate keeps raw deflate where it saves space (a 16-byte
        /// unit), stored otherwise, and prints the ratio; none stores every blob.
        #[arg(long, value_name = "CODEC", value_enum, default_value = "none")]
        compress: CodecArg,
        /// The output's form: bin (the bytes), ihex (Intel HEX), elf (one PT_LOAD segment at
        /// the address, no code; see --machine) or uf2 (256-byte blocks; needs --uf2-family). All but bin carry
        /// the address: give --memory-map or --base-address.
        #[arg(long, value_enum, default_value = "bin", help_heading = "Flashing")]
        format: flash_file::Format,
        /// The memory map the firmware is linked with (a GNU ld script, e.g. the bare-metal
        /// template's memory/board.x): the partition goes at its __nrtucode_partition_start and
        /// must end by its __nrtucode_partition_end.
        #[arg(
            long,
            value_name = "MAP.x",
            conflicts_with = "base_address",
            help_heading = "Flashing"
        )]
        memory_map: Option<PathBuf>,
        /// The partition's address (a multiple of 16; of 256 for uf2), instead of --memory-map.
        #[arg(long, value_name = "ADDR", value_parser = parse_number, help_heading = "Flashing")]
        base_address: Option<u64>,
        /// The UF2 family ID: a number, or a name such as rp2040, rp2350-arm-s,
        /// rp2xxx-absolute, nrf52840, samd51, stm32f4 (the bootloader refuses other families).
        #[arg(long, value_name = "ID", value_parser = flash_file::uf2_families::parse, help_heading = "Flashing")]
        uf2_family: Option<u32>,
        /// The ELF's machine, for --format elf: arm (EM_ARM, a Cortex-M: the bare-metal
        /// template's) or riscv (EM_RISCV, a riscv32 target), so that objcopy and GDB read it.
        #[arg(long, value_enum, default_value = "arm", help_heading = "Flashing")]
        machine: flash_file::Machine,
    },
    /// Write the factory image of a device's update region (docs/update.md, Provisioning): both
    /// partition slots and the state, for a given layout, as the device's own update code
    /// leaves them, in one file to program at the layout's lowest offset. Each partition is
    /// verified with the public key and must fit its slot; the first boot is checked on the
    /// image before it is written.
    #[command(
        after_help = "Layout file (--layout), offsets from the start of the NorFlash the firmware hands to Slots::new:\n  slot_a = 0x000000\n  slot_b = 0x100000\n  slot_len = 1M\n  state = 0x200000\n  erase_size = 4K\n  write_size = 4\n  read_size = 1            (optional, default 1)\n  flash_base = 0x90000000  (optional: the CPU address of offset 0, for the programming hint)\n\nExit codes: 0 written; 64 bad arguments or a layout given by flags that does not hold; 65 a\npartition refused or too large for its slot, a bad layout file or key; 66 an input missing;\n73 the output cannot be created or is one of the inputs; 74 I/O error."
    )]
    // One --public-key, required (the firmware's key); --insecure-skip-signature then
    // conflicts with it: an unsigned partition is never provisioned.
    #[command(mut_arg("public_key", |a| a.required(true).action(clap::ArgAction::Set)))]
    Provision {
        /// Slot A's partition (nrtucode pack wrote it): what the device boots first.
        #[arg(long, value_name = "A.part")]
        slot_a: PathBuf,
        /// Slot B's partition, if any: a spare (--first-boot a) or the candidate on trial
        /// (--first-boot b-trial). Without it, slot B is erased.
        #[arg(long, value_name = "B.part")]
        slot_b: Option<PathBuf>,
        /// How each partition is trusted: --public-key (required: the firmware's key, one)
        /// and --class (default: slot A's) are used; --min-security-counter refuses a slot
        /// below it; an unsigned partition is never provisioned.
        #[command(flatten)]
        trust: TrustArgs,
        /// What the first boot does: a (slot A, confirmed; the state erased, the factory
        /// default) or b-trial (slot B installed as the candidate: the first boot tries it).
        #[arg(long, value_enum, default_value = "a")]
        first_boot: provision::FirstBoot,
        /// The image to write (atomically: a failure leaves it as it was).
        #[arg(short = 'o', long = "output", value_name = "IMAGE")]
        output: PathBuf,
        /// The layout.
        #[command(flatten)]
        layout: LayoutArgs,
    },
    /// Make and show ed25519 keys for signed partitions.
    Key {
        /// The key subcommand.
        #[command(subcommand)]
        action: KeyCommand,
    },
    /// Show a partition's header, tables and table of contents, and check its structure, its
    /// signature (with --public-key), its security counter (with --min-security-counter) and
    /// every blob's digests: with --public-key, once the signature holds, each blob's stored
    /// bytes, then each compressed blob decoded; without --public-key, the stored bytes only
    /// (nothing is decoded, nothing vouched for: a compressed blob may not decode). Exit 0 only
    /// when every check made holds, 65 with the reason otherwise. FILE may
    /// be any form pack --format writes (Intel HEX, ELF, UF2: read back strictly first); with
    /// --memory-map, its address and length are checked against the firmware's memory map.
    ///
    /// With a layout (--layout FILE, or the layout flags), FILE is a flash image of an update
    /// region (nrtucode provision wrote it, or a device's flash read back): it shows the state
    /// (the active slot, confirmed or on trial, trial boots left, the minimum security counter)
    /// and checks each slot and the next boot as the device would (format
    /// nrtucode-inspect-image/2 with --json).
    ///
    /// FILE may also be a C library built from nrtucode-capi (libnrtucode.so): its library
    /// record says what it answers from and trusts (blob source, the key built into it and its
    /// ID, the build; format nrtucode-inspect-library/1 with --json).
    // What a partition and an image take, said by clap: `LayoutArgs` is the group of every
    // layout flag. An image's slots are verified with the (first) --public-key.
    #[command(
        mut_arg("class", |a| a.requires("LayoutArgs")),
        mut_arg("min_security_counter", |a| a.conflicts_with("LayoutArgs")),
        mut_arg("insecure_skip_signature", |a| a.conflicts_with("LayoutArgs"))
    )]
    Inspect {
        /// The partition file: bin, ihex, elf or uf2 (or, with a layout, the flash image; or a
        /// C library built from nrtucode-capi).
        file: PathBuf,
        /// How the partition is trusted: --public-key (needed for an image),
        /// --min-security-counter (not for an image: its state holds the minimum), --class
        /// (for an image: a partition's class is in its header), --insecure-skip-signature (an
        /// unsigned partition's blobs decoded too, as list reads them).
        #[command(flatten)]
        trust: TrustArgs,
        /// Check the placement against the memory map the firmware is linked with (not for an
        /// image): a HEX, ELF or UF2 file's address is its __nrtucode_partition_start, and the
        /// partition ends by its __nrtucode_partition_end.
        #[arg(long, value_name = "MAP.x", conflicts_with = "LayoutArgs")]
        memory_map: Option<PathBuf>,
        /// For an update package: the partition the device runs (the package's base); the
        /// partition the package gives over it is inspected too, as a partition file is.
        #[arg(long, value_name = "RUNNING.part", conflicts_with = "LayoutArgs")]
        base: Option<PathBuf>,
        /// JSON output (format nrtucode-inspect/3; for an image nrtucode-inspect-image/2; for
        /// an update package nrtucode-inspect-package/1).
        #[arg(long)]
        json: bool,
        /// The layout, for a flash image.
        #[command(flatten)]
        layout: LayoutArgs,
    },
    /// List the catalog embedded in this build: every image getter (slot, generation, engine,
    /// flavor, region, size, sha256, real/cursor/null), then both profiler getters of all 38
    /// slots.
    List {
        /// Only this generation.
        #[arg(long = "gen", value_enum, ignore_case = true)]
        generation: Option<GenerationArg>,
        /// JSON output (format nrtucode-list/1).
        #[arg(long)]
        json: bool,
        /// Read the tables from a partition instead.
        #[command(flatten)]
        partition: PartitionArgs,
    },
    /// Call a resolver: resolve IDX REGION [--flavor F], or resolve IDX --prof KIND.
    ///
    /// The exit code is the resolver's code (0, 1, 2, 3 or 8); other failures exit 64 to 74.
    #[command(after_help = EXIT_CODES_HELP)]
    Resolve {
        /// Flat slot index, or a slot name such as cayman-nx-act. Any integer C can pass is
        /// passed as is (38 and above answer code 1; -1 is 4294967295, as in C).
        #[arg(value_parser = parse_raw_index, allow_negative_numbers = true)]
        idx: u32,
        /// Memory region, or any C int (0 to 3 are the regions; others answer code 2); not
        /// with --prof.
        #[arg(
            value_parser = REGION,
            allow_negative_numbers = true,
            required_unless_present = "prof",
            conflicts_with = "prof"
        )]
        region: Option<i32>,
        /// Flavor, or any C int (its integer, as the C ABI takes it); auto reads
        /// NEURON_UCODE_FLAVOR.
        #[arg(
            long,
            value_parser = FLAVOR,
            allow_negative_numbers = true,
            default_value = "auto",
            conflicts_with = "prof"
        )]
        flavor: i32,
        /// Resolve a profiler table of this kind (or any C int: 0 and 1 are the kinds)
        /// instead of an image.
        #[arg(long, value_parser = KIND, allow_negative_numbers = true)]
        prof: Option<i32>,
        /// Write the bytes to FILE; with -, write them to stdout and the summary to stderr.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        /// Hex-dump the first N bytes (--hex alone: 64; give N as --hex=N).
        #[arg(long, value_name = "N", num_args = 0..=1, require_equals = true, default_missing_value = "64")]
        hex: Option<usize>,
        /// Print the sha256 of the bytes.
        #[arg(long)]
        sha256: bool,
        /// Read the tables from a partition instead.
        #[command(flatten)]
        partition: PartitionArgs,
    },
    /// Decode and validate the PROF_CAM / PROF_TABLE pair of a slot.
    Prof {
        /// Slot: 0 to 37, or a slot name such as cayman-nx-act; any other integer C can pass
        /// gets the resolver's answer (38 and above: code 1). (Checked after parsing, so that
        /// with --json a bad argument is reported as JSON too.)
        #[arg(value_name = "IDX", allow_negative_numbers = true)]
        idx: String,
        /// JSON output (format nrtucode-prof/1), also for a failure.
        #[arg(long)]
        json: bool,
        /// Read the tables from a partition instead.
        #[command(flatten)]
        partition: PartitionArgs,
    },
    /// Write a CycloneDX 1.6 (or SPDX 2.3) JSON bill of materials of a partition, a library or
    /// a blob directory.
    ///
    /// The input is the top component (its SHA-256, the vendor library's build ID, and a
    /// partition's key ID and security counter); every firmware blob is a component with its
    /// SHA-256, size, generation, engine, flavor and region. The same input gives the same
    /// bytes: no serial number, and no time unless --timestamp.
    Sbom {
        /// The partition, library or blob directory.
        input: PathBuf,
        /// cyclonedx (CycloneDX 1.6 JSON) or spdx (SPDX 2.3 JSON; its required creation time
        /// is the Unix epoch without --timestamp).
        #[arg(long, value_enum, default_value = "cyclonedx")]
        format: sbom::Format,
        /// Write it to this file (atomically: a failure leaves it as it was) instead of
        /// standard output (also with -).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        /// Record the time (SOURCE_DATE_EPOCH if set, else now) in metadata.timestamp; without
        /// it the BOM has no time, so that it is reproducible.
        #[arg(long)]
        timestamp: bool,
        /// How a partition input is trusted (a library or blob directory needs nothing).
        #[command(flatten)]
        trust: TrustArgs,
    },
    /// Write an update package: a new partition as a delta from the one a device runs
    ///
    /// The update package that takes a device running one partition to another
    /// (docs/update.md, "Update packages"): the new partition's signed tables and only the
    /// blobs the running one does not hold, the rest copied on the device from its running
    /// slot; or the whole new partition when that is not smaller. Both are verified first.
    #[command(
        after_help = "Exit codes: 0 written; 64 bad arguments; 65 an input refused; 66 an input missing; 73 the\noutput cannot be created; 74 I/O error."
    )]
    Package {
        /// The partition the device runs (the package's base).
        #[arg(long, value_name = "RUNNING.part")]
        base: PathBuf,
        /// The partition it is to run.
        #[arg(long, value_name = "NEW.part")]
        new: PathBuf,
        /// The package file to write (atomically: a failure leaves it as it was).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: PathBuf,
        /// How both partitions are trusted.
        #[command(flatten)]
        trust: TrustArgs,
    },
    /// Show what changed between two vendor drops: libraries, blob directories or partitions.
    ///
    /// Per generation, engine, flavor and region: the getters added, removed, changed (old and
    /// new size and SHA-256) and unchanged; the table-shape changes (an image slot's
    /// descriptors, a slot's profiler getters) apart. A partition is read only once it verifies
    /// with --public-key (or, unsigned, with --insecure-skip-signature).
    #[command(
        after_help = "Exit codes: 0 the same blobs and tables (the files may differ: it says so); 1 they differ;\n64 bad arguments; 65 an input refused (a bad library, blob directory or partition); 66 an input\nmissing; 74 I/O error."
    )]
    Diff {
        /// The old drop.
        old: PathBuf,
        /// The new drop.
        new: PathBuf,
        /// JSON output (format nrtucode-diff/1).
        #[arg(long)]
        json: bool,
        /// How a partition input is trusted (a library or blob directory needs nothing).
        #[command(flatten)]
        trust: TrustArgs,
    },
}

/// `nrtucode key` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum KeyCommand {
    /// Write a new random ed25519 private key (PKCS#8 PEM, readable by its owner only; an
    /// existing file is never replaced).
    Generate {
        /// The key file to write.
        #[arg(short = 'o', long = "output", value_name = "KEY.pem")]
        output: PathBuf,
    },
    /// Print (or write) the public key of a private key: SPKI PEM, or a Rust const.
    Public {
        /// The private key (PKCS#8 PEM).
        key: PathBuf,
        /// Write it to this file instead of standard output.
        #[arg(short = 'o', long = "output", value_name = "PUB.pem")]
        output: Option<PathBuf>,
        /// pem (SPKI) or rust (a const nrtucode::partition::PublicKey to paste).
        #[arg(long, value_enum, default_value = "pem")]
        format: KeyFormat,
    },
}

/// The tables `args` name, or the exit code of why not.
fn tables_or_fail(
    args: &PartitionArgs,
    mode: Mode,
) -> Result<Option<&'static LoadedPartition<Unverified>>, ExitCode> {
    args.load().map_err(|e| mode.fail(e))
}

/// Parses the process arguments and runs the command.
pub fn run() -> ExitCode {
    output::guard_std_fds();
    output::finish(dispatch())
}

fn dispatch() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Usage errors go to stderr, --help and --version to stdout.
            if e.use_stderr() {
                // The subcommand the arguments name, for the help hint.
                let command = std::env::args()
                    .nth(1)
                    .filter(|a| Cli::command().find_subcommand(a).is_some())
                    .map_or_else(|| "nrtucode".to_owned(), |a| format!("nrtucode {a}"));
                let message = if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                    let names: Vec<String> = Cli::command()
                        .get_subcommands()
                        .map(|c| c.get_name().to_owned())
                        .filter(|n| n != "help")
                        .collect();
                    format!(
                        "nrtucode: error: no subcommand given\nnrtucode: hint: one of {}; see '{command} --help'\n",
                        names.join(", ")
                    )
                } else {
                    output::usage_error(&e.render().to_string(), &command)
                };
                // `--json` before any `--`: a script that asked for JSON gets JSON.
                let json = std::env::args_os()
                    .skip(1)
                    .take_while(|a| a != "--")
                    .any(|a| a == "--json");
                return output::usage_failure(&message, Mode::json(json));
            }
            output::write_out(&e.render().to_string());
            return ExitCode::SUCCESS;
        }
    };
    match cli.command {
        Command::Carve {
            lib,
            out,
            getters,
            strict,
            verbose,
        } => carve::run(&lib, &out, getters, strict, verbose),
        Command::Check { dir } => check::run(&dir),
        Command::Pack {
            lib,
            blob_dir,
            fixtures,
            output,
            key,
            unsigned: _,
            security_counter,
            compress,
            format,
            memory_map,
            base_address,
            uf2_family,
            machine,
        } => {
            // The "input" group requires exactly one of the three.
            let input = match (lib, blob_dir, fixtures) {
                (Some(lib), _, _) => pack::Input::Library(lib),
                (_, Some(dir), _) => pack::Input::BlobDir(dir),
                (_, _, class) => pack::Input::Fixtures(
                    class.map_or(nrtucode::partition::TableClass::Full, Into::into),
                ),
            };
            pack::run(
                &input,
                &output,
                key.as_deref(),
                security_counter,
                compress.into(),
                &pack::Target {
                    format,
                    base_address,
                    memory_map,
                    uf2_family,
                    machine,
                },
            )
        }
        Command::Key { action } => match action {
            KeyCommand::Generate { output } => key::generate(&output),
            KeyCommand::Public {
                key,
                output,
                format,
            } => key::public(&key, output.as_deref(), format),
        },
        Command::Provision {
            slot_a,
            slot_b,
            trust,
            first_boot,
            output,
            layout,
        } => provision::run(&provision::Options {
            slot_a: &slot_a,
            slot_b: slot_b.as_deref(),
            // clap requires one --public-key (see the command's mut_arg).
            public_key: trust
                .public_key
                .first()
                .map_or(Path::new(""), PathBuf::as_path),
            min_security_counter: trust.min_security_counter.unwrap_or(0),
            class: trust.class.map(Into::into),
            first_boot,
            layout: &layout,
            out: &output,
        }),
        Command::Inspect {
            file,
            trust,
            memory_map,
            base,
            json,
            layout,
        } => {
            if !layout.given() {
                return inspect::run(&file, &trust, memory_map.as_deref(), base.as_deref(), json);
            }
            inspect_image::run(
                &file,
                &layout,
                trust.public_key.first().map(PathBuf::as_path),
                trust.class.map(Into::into),
                json,
            )
        }
        Command::List {
            generation,
            json,
            partition,
        } => match tables_or_fail(&partition, Mode::json(json)) {
            Ok(None) => list::run(&nrtucode::Embedded, generation.map(|g| g.0), json),
            Ok(Some(partition)) => list::run(partition, generation.map(|g| g.0), json),
            Err(code) => code,
        },
        Command::Resolve {
            idx,
            region,
            flavor,
            prof,
            output,
            hex,
            sha256,
            partition,
        } => {
            let tables = match tables_or_fail(&partition, Mode::Text) {
                Ok(tables) => tables,
                Err(code) => return code,
            };
            let request = match (prof, region) {
                (Some(kind), _) => Request::prof(idx, kind),
                (None, region) => Request::image(idx, region.unwrap_or(0), flavor),
            };
            let show = Show { hex, sha256 };
            match tables {
                None => resolve::run(&nrtucode::Embedded, request, show, output.as_deref()),
                Some(partition) => resolve::run(partition, request, show, output.as_deref()),
            }
        }
        Command::Prof {
            idx,
            json,
            partition,
        } => match tables_or_fail(&partition, Mode::json(json)) {
            Ok(None) => prof::run(&nrtucode::Embedded, &idx, json),
            Ok(Some(partition)) => prof::run(partition, &idx, json),
            Err(code) => code,
        },
        Command::Sbom {
            input,
            format,
            output,
            timestamp,
            trust,
        } => sbom::run(&input, format, &trust, output.as_deref(), timestamp),
        Command::Diff {
            old,
            new,
            json,
            trust,
        } => diff::run(&old, &new, &trust, json),
        Command::Package {
            base,
            new,
            output,
            trust,
        } => package::run(&base, &new, &trust, &output),
    }
}
