//! The requests to the set's valid partitions and their answers ([`requests`]), one a line.

use nrtucode_facts::hex::lower_hex;

use super::spec::{
    B_DRAM_PERF, B_IRAM_DEBUG, B_IRAM_DKL, B_IRAM_PERF, B_PROF_CAM, B_PROF_TABLE, sha256, tiny,
};
use super::{Answer, Lane, Request};

/// What a request must get, by blob number: [`requests`] adds the blob's length and digest.
#[derive(Clone, Copy)]
enum Want {
    Code(u8),
    Blob(u16),
    Start(u16),
    End(u16),
    Refused(u16),
}

const TINY: &str = "tiny.part";
const FRONT: &str = "tiny-front.part";
const TAMPERED: &str = "tampered-blob.part";

/// One request: file, lane, idx, region or kind, flavor, `NEURON_UCODE_FLAVOR`,
/// `NRTUCODE_MPLUS_ON_MARIANA`, answer, why.
type Row = (
    &'static str,
    Lane,
    u32,
    i32,
    i32,
    Option<&'static str>,
    Option<&'static str>,
    Want,
    &'static str,
);

use Lane::{Image, Prof};
use Want::{Blob as B, Code as C, End, Refused, Start};

/// The requests, one a line (a table reads better unwrapped).
#[rustfmt::skip]
const ROWS: &[Row] = &[
    (TINY, Image, 0, 0, 1, None, None, B(B_IRAM_PERF), "the first key-1 descriptor's IRAM"),
    (TINY, Image, 0, 1, 1, None, None, B(B_DRAM_PERF), "DRAM"),
    (TINY, Image, 0, 2, 1, None, None, C(3), "a NULL getter"),
    (TINY, Image, 0, 3, 1, None, None, End(B_DRAM_PERF), "a cursor at the DRAM blob's end"),
    (TINY, Image, 0, 0, 2, None, None, B(B_IRAM_DEBUG), "key 2"),
    (TINY, Image, 0, 0, 3, None, None, C(2), "no descriptor with key 3"),
    (TINY, Image, 0, 0, 4, None, None, C(2), "key 4: no descriptor"),
    (TINY, Image, 1, 0, 1, None, None, C(2), "an empty slot"),
    (TINY, Image, 38, 0, 1, None, None, C(1), "idx past the 38 slots"),
    (TINY, Image, u32::MAX, 0, 1, None, None, C(1), "idx is unsigned: -1 is 4294967295"),
    (TINY, Image, 0, 4, 1, None, None, C(2), "region 4"),
    (TINY, Image, 0, -1, 1, None, None, C(2), "a negative region"),
    (TINY, Image, 0, 4, 3, None, None, C(2), "region 4 and no key 3: code 2 either way"),
    (TINY, Image, 1, 9, 1, None, None, C(2), "an empty slot and region 9"),
    (TINY, Image, 0, 0, 0, None, None, B(B_IRAM_PERF), "auto, variable unset: key 1"),
    (TINY, Image, 0, 0, 0, Some("debug"), None, B(B_IRAM_DEBUG), "auto, debug: key 2"),
    (TINY, Image, 0, 0, 0, Some("DEBUG"), None, B(B_IRAM_DEBUG), "auto, DEBUG: key 2"),
    (TINY, Image, 0, 0, 0, Some("Debug"), None, B(B_IRAM_PERF), "auto, Debug: key 1 (case matters)"),
    (TINY, Image, 0, 0, 0, Some("debug "), None, B(B_IRAM_PERF), "auto, 'debug ': key 1 (the whole value)"),
    (TINY, Image, 0, 0, 0, Some(""), None, B(B_IRAM_PERF), "auto, empty: key 1"),
    (TINY, Image, 0, 0, 0, Some("test"), None, C(2), "auto, test: key 3, not in slot 0"),
    (TINY, Image, 0, 0, 0, Some("TEST"), None, C(2), "auto, TEST: key 3"),
    (TINY, Image, 0, 0, 0, Some("perf"), None, B(B_IRAM_PERF), "auto, perf: key 1 (any other value)"),
    (TINY, Image, 0, 0, 2, Some("test"), None, B(B_IRAM_DEBUG), "flavor 2: the variable is not read"),
    (TINY, Image, 0, 0, 1, None, Some("1"), C(8), "the removed flag"),
    (TINY, Image, 0, 0, 0, Some("debug"), Some("1"), C(8), "the flag wins over auto"),
    (TINY, Image, 1, 0, 1, None, Some("1"), C(8), "the flag before the empty slot"),
    (TINY, Image, 0, 9, 1, None, Some("1"), C(8), "the flag before the region bound"),
    (TINY, Image, 38, 0, 1, None, Some("1"), C(1), "the index bound before the flag"),
    (TINY, Image, 0, 0, 1, None, Some("11"), B(B_IRAM_PERF), "flag 11: not 1"),
    (TINY, Image, 0, 0, 1, None, Some("0"), B(B_IRAM_PERF), "flag 0"),
    (TINY, Image, 0, 0, 1, None, Some(""), B(B_IRAM_PERF), "flag empty"),
    (TINY, Image, 0, 0, 1, None, Some("1 "), B(B_IRAM_PERF), "flag '1 ': not 1"),
    (TINY, Image, 7, 0, 17, None, None, B(B_IRAM_DKL), "key 17"),
    (TINY, Image, 7, 1, 17, None, None, Start(B_IRAM_DKL), "a cursor at the start of blob 3"),
    (TINY, Image, 7, 2, 17, None, None, C(3), "NULL"),
    (TINY, Image, 7, 0, 18, None, None, C(2), "no key 18"),
    (TINY, Image, 7, 0, -5, None, None, B(B_IRAM_DKL), "key -5: a raw flavor finds any key"),
    (TINY, Image, 7, 0, 0, Some("debug"), None, C(2), "auto debug: no key 2 in slot 7"),
    (TINY, Prof, 0, 0, 0, None, None, B(B_PROF_CAM), "PROF_CAM"),
    (TINY, Prof, 0, 1, 0, None, None, C(2), "a NULL profiler getter: code 2"),
    (TINY, Prof, 0, 2, 0, None, None, C(2), "kind 2"),
    (TINY, Prof, 0, -1, 0, None, None, C(2), "kind -1"),
    (TINY, Prof, 7, 1, 0, None, None, B(B_PROF_TABLE), "PROF_TABLE, kept as deflate: its decoded bytes"),
    (TINY, Prof, 38, 0, 0, None, None, C(1), "idx past the slots"),
    (TINY, Prof, 38, 2, 0, None, None, C(1), "the index bound before the kind bound"),
    (TINY, Prof, 0, 0, 0, None, Some("1"), B(B_PROF_CAM), "the profiler lane reads no variable"),
    (FRONT, Image, 0, 0, 1, None, None, B(B_IRAM_PERF), "front: key 1"),
    (FRONT, Image, 0, 0, 2, None, None, C(3), "front: key 2's getters are NULL (code 3, not 2)"),
    (FRONT, Image, 7, 0, -5, None, None, C(3), "front: key -5's getters are NULL"),
    (TAMPERED, Image, 0, 0, 1, None, None, B(B_IRAM_PERF), "an intact blob of a tampered partition"),
    (TAMPERED, Image, 0, 1, 1, None, None, Refused(B_DRAM_PERF), "the tampered blob: refused on use"),
    (TAMPERED, Image, 0, 3, 1, None, None, End(B_DRAM_PERF), "a cursor has no bytes to check"),
];

/// The requests to `tiny.part`, `tiny-front.part` and `tampered-blob.part`, in manifest order.
pub fn requests() -> Vec<Request> {
    let spec = tiny(false);
    ROWS.iter()
        .map(
            |&(file, lane, idx, arg, flavor, flavor_var, removed_var, want, about)| {
                let answer = match want {
                    Want::Code(c) => Answer::Code(c),
                    Want::Blob(n) => {
                        let bytes = &spec.blobs[usize::from(n)].decoded;
                        Answer::Blob {
                            blob: n,
                            len: bytes.len(),
                            sha256: lower_hex(&sha256(bytes)),
                        }
                    }
                    Want::Start(n) => Answer::CursorStart(n),
                    Want::End(n) => Answer::CursorEnd(n),
                    Want::Refused(n) => Answer::Refused(n),
                };
                Request {
                    file,
                    lane,
                    idx,
                    arg,
                    flavor,
                    flavor_var,
                    removed_var,
                    answer,
                    about,
                }
            },
        )
        .collect()
}
