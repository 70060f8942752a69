//! The test cases the core's integration tests and the differential oracle share (and how much
//! of an exhaustive sweep a test runs, `sweep`), kept out of
//! `nrtucode-facts` (the core's published build-dependency, which holds only what a build
//! needs).
#![forbid(unsafe_code)]

pub mod env_matrix;
pub mod sweep;
