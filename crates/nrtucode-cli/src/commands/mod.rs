//! The command line: `cli` defines the arguments and dispatches to one module per
//! subcommand (`carve`, `check`, `pack`, `provision`, `key`, `inspect`, [`list`], [`resolve`], [`prof`],
//! `sbom`, `diff`); `inventory` reads any of the three inputs (library, blob directory,
//! partition) into the getters `sbom` and `diff` report, `sbom_cyclonedx` and `sbom_spdx`
//! are `sbom`'s two documents;
//! [`tables`] is where `list`, `resolve` and `prof` read the tables from (embedded, or a
//! verified partition); `flash_image` is the update region's image (its layout, and the core's `Slots` over
//! it in memory) that `provision` writes and `inspect --layout` reads; `flash_file` the
//! flashable forms of a partition (`pack --format`, read back by `inspect`), `memory_map` the
//! partition's region read from a linker memory map (`--memory-map`); `output_file` writes every output file (all or nothing, never
//! replacing a link, device or FIFO, never onto an input); [`exit`] names the exit
//! codes; `interrupt` stops an interrupted carve or write (the signal handler, the carve's
//! cancellation token, the temporary files to remove); [`values`] holds
//! the `clap` value enums built from the core's names; `output` writes to stdout/stderr;
//! `text_table` renders aligned plain-text tables.
//!
//! `list`, `resolve` and `prof` render to strings, which the golden tests check; they are
//! public for that reason.

pub(crate) mod carve;
pub(crate) mod carve_diagnosis;
pub(crate) mod check;
pub(crate) mod cli;
pub(crate) mod diff;
pub mod exit;
pub(crate) mod flash_file;
pub(crate) mod flash_image;
pub(crate) mod inspect;
pub(crate) mod inspect_image;
pub(crate) mod interrupt;
pub(crate) mod inventory;
pub(crate) mod key;
pub mod list;
pub(crate) mod memory_map;
pub(crate) mod output;
pub(crate) mod output_file;
pub(crate) mod pack;
pub mod prof;
pub(crate) mod provision;
pub mod resolve;
pub(crate) mod sbom;
pub(crate) mod sbom_cyclonedx;
pub(crate) mod sbom_spdx;
pub mod tables;
pub(crate) mod text_table;
pub mod values;

pub use cli::run;
