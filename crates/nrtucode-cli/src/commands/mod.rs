//! The commands, one module each: `carve`, `check`, `pack`, `provision`, `key`, `inspect`
//! (`inspect_image` for a flash image of an update region), [`list`], [`resolve`], [`prof`],
//! `sbom` (its two documents in `sbom/`), `diff`, `package` (an update package); `cli` defines the arguments and dispatches
//! to them. What they share (reading inputs, trusting a partition, the error type, writing
//! output) is in [`crate::shared`].
//!
//! `list`, `resolve` and `prof` render to strings, which the golden tests check; they are
//! public for that reason.

pub(crate) mod carve;
pub(crate) mod check;
pub(crate) mod cli;
pub(crate) mod diff;
#[doc(hidden)]
pub mod fuzzing;
pub(crate) mod inspect;
pub(crate) mod inspect_image;
pub(crate) mod inspect_library;
pub(crate) mod inspect_package;
pub(crate) mod key;
pub mod list;
pub(crate) mod pack;
pub(crate) mod package;
pub mod prof;
pub(crate) mod provision;
pub mod resolve;
pub(crate) mod sbom;

pub use cli::run;
