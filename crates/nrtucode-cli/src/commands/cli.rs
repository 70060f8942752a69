//! The command line: the `clap` argument definition and the dispatch to one module per
//! subcommand.
//!
//! Exit codes (`exit`): 0 success; `resolve` exits with the resolver's own code (1, 2, 3, 8);
//! every other failure uses a sysexits code outside those: 64 usage, 65 bad data, 66 no input,
//! 73 cannot create, 74 I/O error. Help texts are plain text: no Markdown.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, Subcommand};
use nrtucode::Request;

use crate::commands::exit::{EXIT_CODES_HELP, Exit};
use crate::commands::flash_image::{LayoutArgs, parse_number};
use crate::commands::inventory::Trust;
use crate::commands::key::KeyFormat;
use crate::commands::resolve::Show;
use crate::commands::tables::PartitionArgs;
use crate::commands::values::{FLAVOR, GenerationArg, KIND, REGION, parse_raw_index};
use crate::commands::{
    carve, check, diff, flash_file, inspect, inspect_image, key, list, output, pack, prof,
    provision, resolve, sbom,
};

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
        #[arg(long, value_name = "CLASS", value_parser = ["full", "front"])]
        fixtures: Option<String>,
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
        #[arg(long, value_name = "CODEC", value_parser = ["none", "deflate"], default_value = "none")]
        compress: String,
        /// The output's form: bin (the bytes), ihex (Intel HEX), elf (one PT_LOAD segment at
        /// the address, no code) or uf2 (256-byte blocks; see --uf2-family). All but bin carry
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
    },
    /// Write the factory image of a device's update region (docs/update.md, Provisioning): both
    /// partition slots and the state, for a given layout, as the device's own update code
    /// leaves them, in one file to program at the layout's lowest offset. Each partition is
    /// verified with the public key and must fit its slot; the first boot is checked on the
    /// image before it is written.
    #[command(
        after_help = "Layout file (--layout), offsets from the start of the NorFlash the firmware hands to Slots::new:\n  slot_a = 0x000000\n  slot_b = 0x100000\n  slot_len = 1M\n  state = 0x200000\n  erase_size = 4K\n  write_size = 4\n  read_size = 1            (optional, default 1)\n  flash_base = 0x90000000  (optional: the CPU address of offset 0, for the programming hint)\n\nExit codes: 0 written; 64 bad arguments or a layout given by flags that does not hold; 65 a\npartition refused or too large for its slot, a bad layout file or key; 66 an input missing;\n73 the output cannot be created or is one of the inputs; 74 I/O error."
    )]
    Provision {
        /// Slot A's partition (nrtucode pack wrote it): what the device boots first.
        #[arg(long, value_name = "A.part")]
        slot_a: PathBuf,
        /// Slot B's partition, if any: a spare (--first-boot a) or the candidate on trial
        /// (--first-boot b-trial). Without it, slot B is erased.
        #[arg(long, value_name = "B.part")]
        slot_b: Option<PathBuf>,
        /// The SPKI PEM public key every partition must verify with (the firmware's key).
        #[arg(long, value_name = "PUB.pem")]
        public_key: PathBuf,
        /// The table class the firmware was built for (default: slot A's).
        #[arg(long, value_enum)]
        class: Option<ClassArg>,
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
    /// every blob's digest. Exit 0 only when all hold, 65 with the reason otherwise. FILE may
    /// be any form pack --format writes (Intel HEX, ELF, UF2: read back strictly first); with
    /// --memory-map, its address and length are checked against the firmware's memory map.
    ///
    /// With a layout (--layout FILE, or the layout flags), FILE is a flash image of an update
    /// region (nrtucode provision wrote it, or a device's flash read back): it shows the state
    /// (the active slot, confirmed or on trial, trial boots left, the minimum security counter)
    /// and checks each slot and the next boot as the device would (format
    /// nrtucode-inspect-image/2 with --json).
    Inspect {
        /// The partition file: bin, ihex, elf or uf2 (or, with a layout, the flash image).
        file: PathBuf,
        /// The SPKI PEM public key its signature must verify with (needed for an image).
        #[arg(long, value_name = "PUB.pem")]
        public_key: Option<PathBuf>,
        /// Refuse a security counter below N (not for an image: its state holds the minimum).
        #[arg(long, value_name = "N")]
        min_security_counter: Option<u32>,
        /// An image's table class, as the firmware was built (default: the first slot's).
        #[arg(long, value_enum)]
        class: Option<ClassArg>,
        /// Check the placement against the memory map the firmware is linked with (not for an
        /// image): a HEX, ELF or UF2 file's address is its __nrtucode_partition_start, and the
        /// partition ends by its __nrtucode_partition_end.
        #[arg(long, value_name = "MAP.x")]
        memory_map: Option<PathBuf>,
        /// JSON output (format nrtucode-inspect/3; for an image nrtucode-inspect-image/2).
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
        /// A partition's trust.
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
        /// A partition's trust.
        #[command(flatten)]
        trust: TrustArgs,
    },
}

/// How `sbom` and `diff` trust a partition input (a library or blob directory needs neither).
#[derive(Clone, Debug, Default, clap::Args)]
pub(crate) struct TrustArgs {
    /// The SPKI PEM public key a partition input must verify with. Repeat it for partitions
    /// signed by different keys: each verifies with the key whose ID its header names.
    #[arg(long, value_name = "PUB.pem")]
    public_key: Vec<PathBuf>,
    /// Read an unsigned partition (nrtucode pack --unsigned) without any signature check.
    #[arg(long, conflicts_with = "public_key")]
    insecure_skip_signature: bool,
}

impl From<TrustArgs> for Trust {
    fn from(t: TrustArgs) -> Trust {
        Trust {
            public_keys: t.public_key,
            insecure_skip_signature: t.insecure_skip_signature,
        }
    }
}

/// A table class, as `provision --class` and `inspect --class` take it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ClassArg {
    /// The full library's tables.
    Full,
    /// The front library's.
    Front,
}

impl From<ClassArg> for nrtucode::partition::TableClass {
    fn from(c: ClassArg) -> Self {
        match c {
            ClassArg::Full => nrtucode::partition::TableClass::Full,
            ClassArg::Front => nrtucode::partition::TableClass::Front,
        }
    }
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
fn tables_or_fail(args: &PartitionArgs) -> Result<crate::commands::tables::Tables, ExitCode> {
    args.load()
        .map_err(|(exit, message)| output::fail(exit, message))
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
                return output::usage_failure(&message, json);
            }
            output::write_out(&e.render().to_string());
            return ExitCode::SUCCESS;
        }
    };
    output::set_json(match &cli.command {
        Command::Inspect { json, .. }
        | Command::List { json, .. }
        | Command::Prof { json, .. }
        | Command::Diff { json, .. } => *json,
        _ => false,
    });
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
        } => {
            let input = match (lib, blob_dir, fixtures.as_deref()) {
                (Some(lib), _, _) => pack::Input::Library(lib),
                (_, Some(dir), _) => pack::Input::BlobDir(dir),
                (_, _, Some("front")) => {
                    pack::Input::Fixtures(nrtucode::partition::TableClass::Front)
                }
                _ => pack::Input::Fixtures(nrtucode::partition::TableClass::Full),
            };
            let compression = match compress.as_str() {
                "deflate" => nrtucode_pack::Compression::Deflate,
                _ => nrtucode_pack::Compression::Stored,
            };
            pack::run(
                &input,
                &output,
                key.as_deref(),
                security_counter,
                compression,
                &pack::Target {
                    format,
                    base_address,
                    memory_map,
                    uf2_family,
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
            public_key,
            class,
            first_boot,
            output,
            layout,
        } => provision::run(&provision::Options {
            slot_a: &slot_a,
            slot_b: slot_b.as_deref(),
            public_key: &public_key,
            class: class.map(Into::into),
            first_boot,
            layout: &layout,
            out: &output,
        }),
        Command::Inspect {
            file,
            public_key,
            min_security_counter,
            class,
            memory_map,
            json,
            layout,
        } => {
            if !layout.given() {
                if class.is_some() {
                    return output::fail(
                        Exit::Usage,
                        "--class is for a flash image (with --layout): a partition's class is in its header",
                    );
                }
                return inspect::run(
                    &file,
                    public_key.as_deref(),
                    min_security_counter,
                    memory_map.as_deref(),
                    json,
                );
            }
            if memory_map.is_some() {
                return output::fail(
                    Exit::Usage,
                    "--memory-map is for a partition: an image's placement is its layout",
                );
            }
            if min_security_counter.is_some() {
                return output::fail(
                    Exit::Usage,
                    "--min-security-counter is for a partition: an image's state holds its minimum",
                );
            }
            inspect_image::run(
                &file,
                &layout,
                public_key.as_deref(),
                class.map(Into::into),
                json,
            )
        }
        Command::List {
            generation,
            json,
            partition,
        } => match tables_or_fail(&partition) {
            Ok(tables) => list::run(&tables, generation.map(|g| g.0), json),
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
            let tables = match tables_or_fail(&partition) {
                Ok(tables) => tables,
                Err(code) => return code,
            };
            let request = match (prof, region) {
                (Some(kind), _) => Request::prof(idx, kind),
                (None, region) => Request::image(idx, region.unwrap_or(0), flavor),
            };
            resolve::run(&tables, request, Show { hex, sha256 }, output.as_deref())
        }
        Command::Prof {
            idx,
            json,
            partition,
        } => match tables_or_fail(&partition) {
            Ok(tables) => prof::run(&tables, &idx, json),
            Err(code) => code,
        },
        Command::Sbom {
            input,
            format,
            output,
            timestamp,
            trust,
        } => sbom::run(&input, format, &trust.into(), output.as_deref(), timestamp),
        Command::Diff {
            old,
            new,
            json,
            trust,
        } => diff::run(&old, &new, &trust.into(), json),
    }
}
