//! What the commands share. Reading: `input` reads every file the tool is handed (opened
//! once, checked on its descriptor, read up to a bound per kind); `reader` turns a path into
//! what it holds (a partition in any flashable form, a library, a blob directory) and names a
//! wrong one; `trust` is the one set of trust options and the one way to open a partition;
//! `inventory` reads any input into the getters `sbom` and `diff` report; [`tables`] is where
//! `list`, `resolve` and `prof` answer from; `flash_file` the flashable forms of a partition,
//! `flash_image` the update region's image, `memory_map` a linker memory map,
//! `carve_diagnosis` why a library is not the vendor's. Failing: `error` is the one error
//! type, [`exit`] its kinds (the exit codes). Writing: `output` writes stdout/stderr in the
//! output mode, `output_file` every output file (all or nothing, never onto an input),
//! `interrupt` stops an interrupted carve or write, `text_table` renders tables, [`values`]
//! holds the `clap` value enums.

pub(crate) mod carve_diagnosis;
pub(crate) mod error;
pub mod exit;
pub(crate) mod flash_file;
pub(crate) mod flash_image;
pub(crate) mod input;
pub(crate) mod interrupt;
pub(crate) mod inventory;
pub(crate) mod memory_map;
pub(crate) mod output;
pub(crate) mod output_file;
pub(crate) mod reader;
pub mod tables;
pub(crate) mod text_table;
pub(crate) mod trust;
pub mod values;
