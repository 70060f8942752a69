//! The library behind the `nrtucode` tool: [`commands`], the command line, one module per
//! subcommand (`carve`, `check`, `list`, `resolve`, `prof`) plus the argument definition, the
//! output helpers and the text-table renderer. The carve pipeline, the blob-directory writer
//! and the blob-directory check are the `nrtucode-carve` library; this crate adds the process
//! policy around them (signal handling, exit codes, what is printed where).
//!
//! It is a library only so that the golden tests can render `list`, `resolve` and `prof`
//! to strings.
#![forbid(unsafe_code)]
#![deny(unreachable_pub)]

pub mod commands;
