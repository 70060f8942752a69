//! `nrtucode resolve`: call the core crate's resolvers like a C caller would.
//!
//! Every argument goes to the resolver as the C integer given (a name is its integer), so an
//! out-of-range one gets the vendor's code and message: 38 and above answer code 1, region 4
//! code 2 (`commands::values` parses them). The exit code is the resolver's code; writing the
//! output can fail with 73 or 74 instead.
//!
//! The summary names the request as `nrtucode::Request` prints it, with the flavor the
//! environment selected when the flavor is auto. With `-o -` the bytes, and nothing else, go to
//! stdout; the summary goes to stderr. `-o FILE` goes through the writer every command shares
//! (`output_file`): a temporary file next to FILE, renamed over it, so a failure or a signal
//! never leaves a half-written FILE; onto a device, FIFO or terminal it writes to it, and
//! through a symbolic link onto its target, never replacing the link; never onto the
//! `--partition` or `--public-key` file.

use std::path::Path;
use std::process::ExitCode;

use nrtucode::{Env, FLAVOR_VAR, Request};
use nrtucode_facts::hex::lower_hex;
use sha2::{Digest, Sha256};

use crate::shared::output::{err_fmt, err_line, exit_code, fail, out_fmt, write_out_bytes};
use crate::shared::output_file::{Mode, write_output};
use crate::shared::tables::TableSource;

/// How to show the bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Show {
    /// Hex-dump this many leading bytes.
    pub hex: Option<usize>,
    /// Print the sha256.
    pub sha256: bool,
}

/// The result of one resolve: the text to print and the exit code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The bytes (empty on error).
    pub bytes: &'static [u8],
    /// On success: the summary line, then the sha256 and hex dump asked for (stdout, or stderr
    /// with `-o -`).
    pub summary: String,
    /// On failure: the message naming the request (stderr).
    pub error: String,
    /// The resolver's code.
    pub code: i32,
}

/// Classic 16-bytes-a-line hex dump of `bytes`.
pub(crate) fn hex_dump(bytes: &[u8]) -> String {
    let mut out = String::new();
    for (i, chunk) in bytes.chunks(16).enumerate() {
        out.push_str(&format!("{:08x}:", i * 16));
        for b in chunk {
            out.push_str(&format!(" {b:02x}"));
        }
        out.push_str(&"   ".repeat(16 - chunk.len()));
        out.push_str("  |");
        out.extend(chunk.iter().map(|&b| {
            if (0x20..0x7f).contains(&b) {
                b as char
            } else {
                '.'
            }
        }));
        out.push_str("|\n");
    }
    out
}

/// What the auto flavor read: ` (auto: NEURON_UCODE_FLAVOR=debug)`, `... unset)`; bytes
/// outside printable ASCII are escaped (`\xff`), so the message stays one valid UTF-8 line.
fn auto_note<E: Env + ?Sized>(env: &E) -> String {
    let mut note = String::new();
    env.visit_var(FLAVOR_VAR, &mut |value| {
        note = match value {
            None => format!(" (auto: {FLAVOR_VAR} unset)"),
            Some([]) => format!(" (auto: {FLAVOR_VAR} empty)"),
            Some(bytes) => format!(" (auto: {FLAVOR_VAR}={})", bytes.escape_ascii()),
        };
    });
    note
}

/// Makes the resolver call `request` describes with `env` and renders the result.
pub fn resolve<E: Env + ?Sized>(request: Request, show: Show, env: &E) -> Resolved {
    resolve_from(&nrtucode::Embedded, request, show, env)
}

/// [`resolve`] over `tables` (the embedded ones or a partition's).
pub fn resolve_from<T: TableSource, E: Env + ?Sized>(
    tables: &'static T,
    request: Request,
    show: Show,
    env: &E,
) -> Resolved {
    let (call, result) = match request {
        Request::Image {
            idx,
            region,
            flavor,
        } => (
            format!("get_memory_image(idx {idx}, region {region}, flavor {flavor})"),
            tables.get_memory_image(idx, region, flavor, env),
        ),
        Request::Prof { idx, kind } => (
            format!("get_hwdecode_table(idx {idx}, kind {kind})"),
            tables.get_hwdecode_table(idx, kind),
        ),
    };
    // Flavor 0 is shown as the flavor the environment selected, as the resolver chose it.
    let auto = matches!(request, Request::Image { flavor: 0, .. });
    let note = if auto { auto_note(env) } else { String::new() };
    let request = request.with_effective_flavor(env);
    match result {
        Ok(bytes) => {
            let mut summary = format!("{call}: {request}{note}: code 0, {} bytes\n", bytes.len());
            if show.sha256 {
                summary.push_str(&format!("sha256 {}\n", lower_hex(&Sha256::digest(bytes))));
            }
            if let Some(n) = show.hex {
                summary.push_str(&hex_dump(&bytes[..n.min(bytes.len())]));
            }
            Resolved {
                bytes,
                summary,
                error: String::new(),
                code: 0,
            }
        }
        Err(e) => {
            let failure = e.with_request(request);
            Resolved {
                bytes: &[],
                summary: String::new(),
                error: format!(
                    "nrtucode: error: {call}: {}{note}: {}\n",
                    failure.request(),
                    failure.error()
                ),
                code: failure.code(),
            }
        }
    }
}

/// Resolves `request` with the process environment, prints the result and, on success, writes
/// the bytes to `output` (`-`: stdout, and the summary to stderr); the exit code is the
/// resolver's code, or 73/74 when the output cannot be written.
pub(crate) fn run<T: TableSource>(
    tables: &'static T,
    request: Request,
    show: Show,
    output: Option<&Path>,
) -> ExitCode {
    let r = resolve_from(tables, request, show, &nrtucode::StdEnv);
    if r.code != 0 {
        err_fmt!("{}", r.error);
        return exit_code(r.code);
    }
    match output {
        Some(path) if path.as_os_str() == "-" => {
            err_fmt!("{}", r.summary);
            write_out_bytes(r.bytes);
        }
        Some(path) => {
            if let Err(e) = write_output(path, r.bytes, Mode::Replace) {
                return fail(e);
            }
            out_fmt!("{}", r.summary);
        }
        None => out_fmt!("{}", r.summary),
    }
    // After the answer, and only with one: a failure's stderr starts with its error.
    if let Some(note) = tables.fixtures_note() {
        err_line!("{note}");
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(env: &[(&str, &[u8])]) -> String {
        resolve(Request::image(7, 0, 0), Show::default(), env).summary
    }

    #[test]
    fn the_auto_note_says_what_the_variable_held() {
        assert!(summary(&[]).contains("flavor PERF (auto: NEURON_UCODE_FLAVOR unset)"));
        let debug = summary(&[("NEURON_UCODE_FLAVOR", b"debug")]);
        assert!(
            debug.contains("(auto: NEURON_UCODE_FLAVOR=debug)"),
            "{debug}"
        );
        let raw = summary(&[("NEURON_UCODE_FLAVOR", b"\xffde\n")]);
        assert!(
            raw.contains("(auto: NEURON_UCODE_FLAVOR=\\xffde\\n)"),
            "{raw}"
        );
        let explicit = resolve(
            Request::image(7, 0, 1),
            Show::default(),
            &[("NEURON_UCODE_FLAVOR", "debug")],
        );
        assert!(!explicit.summary.contains("auto"), "{}", explicit.summary);
    }
}
