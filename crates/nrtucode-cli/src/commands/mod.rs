//! The command line: `cli` defines the arguments and dispatches to one module per
//! subcommand (`carve`, `verify`, [`list`], [`resolve`], [`prof`]); [`exit`] names the exit
//! codes; `interrupt` cleans up an interrupted carve (the signal handler); [`values`] holds
//! the `clap` value enums built from the core's names; `output` writes to stdout/stderr;
//! `text_table` renders aligned plain-text tables.
//!
//! `list`, `resolve` and `prof` render to strings, which the golden tests check; they are
//! public for that reason.

pub(crate) mod carve;
pub(crate) mod carve_diagnosis;
pub(crate) mod cli;
pub mod exit;
pub(crate) mod interrupt;
pub mod list;
pub(crate) mod output;
pub mod prof;
pub mod resolve;
pub(crate) mod text_table;
pub mod values;
pub(crate) mod verify;

pub use cli::run;
