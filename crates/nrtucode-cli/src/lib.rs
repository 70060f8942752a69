//! The library behind the `nrtucode` tool: [`commands`], the command line, one module per
//! subcommand plus the argument definition; [`shared`], what they share (the input readers,
//! the trust options, the error type, the output). The carve pipeline, the blob-directory writer
//! and the blob-directory check are the `nrtucode-carve` library; this crate adds the process
//! policy around them (signal handling, exit codes, what is printed where).
//!
//! It is a library only so that the golden tests can render `list`, `resolve` and `prof`
//! to strings.
#![forbid(unsafe_code)]
#![deny(unreachable_pub)]

pub mod commands;
pub mod shared;
