//! The partition conformance set (`docs/partition.md`, "The conformance set"): small
//! partitions, valid and refused, each with the verdict, step and reason a reader must give,
//! and requests with the answers a valid one must give, for another implementation of the
//! format to run. Generated here, never committed:
//! `cargo run -p nrtucode-conformance --bin partition-conformance-set -- DIR`; the test
//! `tests/partition_set.rs` runs that program and checks this repository's reader against
//! every line.
//!
//! Every expected verdict and answer is stated by hand from the case's construction (a
//! hand-built table, then one change), not computed by the reader under test.

mod cases;
mod requests;
mod spec;

pub use cases::cases;
pub use requests::requests;

use nrtucode_facts::hex::lower_hex;
use nrtucode_pack::SigningKey;

/// The committed test key every signed case is signed with (never a real key).
pub const TEST_KEY_PEM: &str = include_str!("../../../../keys/test-ed25519.pem");

/// Where a reader must stop, when it refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The structure (`Partition::parse`, `FormatError`).
    Parse,
    /// The signature and policy (`Partition::verify`, `TrustError`).
    Verify,
    /// Every blob loaded and checked against its signed digests (`Blob::load_into` of each
    /// table-of-contents entry, `LoadError`).
    Blobs,
}

impl Step {
    /// The manifest's spelling.
    pub const fn name(self) -> &'static str {
        match self {
            Step::Parse => "parse",
            Step::Verify => "verify",
            Step::Blobs => "blobs",
        }
    }
}

/// What a reader must conclude about a whole case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Parsed, verified under the case's policy, every blob checked.
    Accept,
    /// Refused at `step`, with `reason` (the error's name, e.g. `FormatError::BadHeader`) and
    /// `detail` (the header field, the table, the decode failure; `-` when the name says all).
    Refuse {
        /// Where.
        step: Step,
        /// The error's name.
        reason: &'static str,
        /// The field, table or failure it names.
        detail: &'static str,
    },
}

/// One partition of the set.
#[derive(Clone, Debug)]
pub struct Case {
    /// File name.
    pub name: &'static str,
    /// The bytes.
    pub bytes: Vec<u8>,
    /// The policy's minimum security counter.
    pub min_security_counter: u32,
    /// The policy's expected class: `full` or `front`.
    pub expected_class: &'static str,
    /// The verdict.
    pub verdict: Verdict,
    /// What the case is, in a few words.
    pub about: &'static str,
}

/// The answer a request must get.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The vendor's return code (1, 2, 3 or 8).
    Code(u8),
    /// Entry `blob`'s bytes (decoded): their length and SHA-256.
    Blob {
        /// The entry.
        blob: u16,
        /// Length.
        len: usize,
        /// SHA-256, lowercase hex.
        sha256: String,
    },
    /// A cursor: zero bytes at the first byte of entry `n`'s blob.
    CursorStart(u16),
    /// A cursor: zero bytes one past the last byte of entry `n`'s blob.
    CursorEnd(u16),
    /// The getter names entry `n`, whose bytes fail their check: no bytes are handed out.
    Refused(u16),
}

impl Answer {
    /// The manifest's spelling: `code 2`, `blob 3 40 <sha256>`, `cursor-start 3`,
    /// `cursor-end 1`, `refused 1`.
    pub fn text(&self) -> String {
        match self {
            Answer::Code(c) => format!("code {c}"),
            Answer::Blob { blob, len, sha256 } => format!("blob {blob} {len} {sha256}"),
            Answer::CursorStart(n) => format!("cursor-start {n}"),
            Answer::CursorEnd(n) => format!("cursor-end {n}"),
            Answer::Refused(n) => format!("refused {n}"),
        }
    }
}

/// Which resolver a request calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    /// `get_memory_image(idx, region, flavor)`.
    Image,
    /// `get_hwdecode_table(idx, kind)`.
    Prof,
}

/// One request to a valid case, with its environment and answer.
#[derive(Clone, Debug)]
pub struct Request {
    /// The case's file.
    pub file: &'static str,
    /// The resolver.
    pub lane: Lane,
    /// `idx`, as the C `unsigned`.
    pub idx: u32,
    /// `region` (image lane) or `kind` (profiler lane), as the C `int`.
    pub arg: i32,
    /// `flavor` (image lane; 0 in the profiler lane, which has none).
    pub flavor: i32,
    /// `NEURON_UCODE_FLAVOR`: `None` unset, else its bytes.
    pub flavor_var: Option<&'static str>,
    /// `NRTUCODE_MPLUS_ON_MARIANA`: `None` unset, else its bytes.
    pub removed_var: Option<&'static str>,
    /// The answer.
    pub answer: Answer,
    /// Why, in a few words.
    pub about: &'static str,
}

/// `cases.tsv`: one line per case, after a header.
pub fn cases_tsv(cases: &[Case]) -> String {
    let mut out = String::from(
        "file\tmin_security_counter\texpected_class\tverdict\tstep\treason\tdetail\tabout\n",
    );
    for c in cases {
        let (verdict, step, reason, detail) = match c.verdict {
            Verdict::Accept => ("accept", "-", "-", "-"),
            Verdict::Refuse {
                step,
                reason,
                detail,
            } => ("refuse", step.name(), reason, detail),
        };
        out += &format!(
            "{}\t{}\t{}\t{verdict}\t{step}\t{reason}\t{detail}\t{}\n",
            c.name, c.min_security_counter, c.expected_class, c.about
        );
    }
    out
}

/// How the manifest writes an environment variable: `unset`, or `=` and its value.
fn var_text(value: Option<&str>) -> String {
    value.map_or_else(|| "unset".to_owned(), |v| format!("={v}"))
}

/// `requests.tsv`: one line per request, after a header.
pub fn requests_tsv(requests: &[Request]) -> String {
    let mut out = String::from(
        "file\tlane\tidx\tregion_or_kind\tflavor\tNEURON_UCODE_FLAVOR\tNRTUCODE_MPLUS_ON_MARIANA\tanswer\tabout\n",
    );
    for r in requests {
        let lane = match r.lane {
            Lane::Image => "image",
            Lane::Prof => "prof",
        };
        out += &format!(
            "{}\t{lane}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
            r.file,
            r.idx,
            r.arg,
            r.flavor,
            var_text(r.flavor_var),
            var_text(r.removed_var),
            r.answer.text(),
            r.about
        );
    }
    out
}

/// The test public key, as 64 lowercase hex digits (`public-key.hex`).
pub fn public_key_hex() -> String {
    let key = SigningKey::from_pem(TEST_KEY_PEM).expect("the committed test key");
    lower_hex(key.public_key().as_bytes())
}
