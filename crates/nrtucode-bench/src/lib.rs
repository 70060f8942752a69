//! What the benchmarks and the instruction counts measure, shared by `benches/lookup.rs`
//! (criterion, wall time) and `src/bin/instr.rs` (run under `valgrind --tool=callgrind`).
//!
//! Every path resolves the same fixed input mix ([`mix`]) and folds each answer into a `u64`, so
//! no call can be optimised away:
//!
//! | path | what |
//! |---|---|
//! | `ours_explicit` | [`nrtucode::get_memory_image`], explicit flavor, [`nrtucode::NoEnv`] |
//! | `ours_explicit_std` | the same with [`nrtucode::StdEnv`] (reads the removed flag, as C does) |
//! | `ours_auto_std` | flavor 0 with `StdEnv` (both variables, one pass) |
//! | `ours_hwdecode` | [`nrtucode::get_hwdecode_table`] |
//! | `c_explicit`, `c_auto`, `c_hwdecode` | the look-alike's C resolvers on the same inputs ([`c`]) |
//! | `ideal_explicit`, `ideal_hwdecode` | a dense precomputed array ([`ideal`]) |

pub mod c;
pub mod ideal;
pub mod mix;
pub mod paths;

/// A resolver's answer in the C shape: return code, blob address, blob length (0 and null on
/// error, as the C caller's untouched out-parameters).
pub type Answer = (i32, usize, usize);

/// Converts a Rust resolver result to an [`Answer`].
#[inline(always)]
pub fn answer<E: Code>(result: Result<&'static [u8], E>) -> Answer {
    match result {
        Ok(bytes) => (0, bytes.as_ptr() as usize, bytes.len()),
        Err(e) => (e.code(), 0, 0),
    }
}

/// An error with a vendor return code.
pub trait Code {
    /// The vendor's integer.
    fn code(&self) -> i32;
}

impl Code for nrtucode::ResolveErr {
    #[inline(always)]
    fn code(&self) -> i32 {
        nrtucode::ResolveErr::code(self)
    }
}

/// Converts a partition resolver's result to an [`Answer`]: the handle's bytes in place (a
/// `CheckedPartition`'s: its blobs were all checked once, when it was loaded; a lookup is what
/// is measured).
#[cfg(feature = "partition")]
#[inline(always)]
pub fn blob_answer(
    result: Result<nrtucode::partition::Blob<'static>, nrtucode::ResolveErr>,
) -> Answer {
    match result.map(|b| b.bytes()) {
        Ok(Some(bytes)) => (0, bytes.as_ptr() as usize, bytes.len()),
        Ok(None) => (-1, 0, 0),
        Err(e) => (e.code(), 0, 0),
    }
}

impl Code for u8 {
    #[inline(always)]
    fn code(&self) -> i32 {
        i32::from(*self)
    }
}

/// Folds an answer into an accumulator (cheap, keeps every field live).
#[inline(always)]
pub fn fold(acc: u64, (code, ptr, len): Answer) -> u64 {
    acc.rotate_left(5) ^ (code as u64) ^ (ptr as u64) ^ (len as u64)
}
