//! Writing the subcommands' output and turning results into exit codes.
//!
//! Output goes through [`write_out`] / [`write_err`]; the `out_*` / `err_*` macros are
//! `print!`-style wrappers around them. Standard output follows the Unix convention for a
//! reader that stops reading: a closed pipe (`nrtucode list | head`, `EPIPE`) ends the output
//! quietly and the command exits with the code it would have had. Any other failure to write
//! standard output (a full disk, `/dev/full`) is remembered, and [`finish`] turns it into exit
//! 74 with a message on stderr. Failures writing stderr are ignored: there is nowhere left to
//! report them.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Mutex;

use crate::shared::error::Error;
use crate::shared::exit::Exit;

/// `doc` as the `--json` output prints it: pretty JSON and a newline. (Our documents are
/// plain structs of strings and numbers, which always serialize; the empty string is the
/// unreachable fallback.)
pub(crate) fn json_document(doc: &impl serde::Serialize) -> String {
    let mut s = serde_json::to_string_pretty(doc).unwrap_or_default();
    s.push('\n');
    s
}

/// How standard output has fared.
#[derive(Debug)]
enum StdoutState {
    /// Every write succeeded.
    Open,
    /// It was closed when the process started: the first write fails (Unix).
    #[cfg_attr(not(unix), allow(dead_code))]
    Closed,
    /// The reader went away (`EPIPE`): further output is dropped, silently.
    ReaderGone,
    /// A write failed otherwise.
    Failed(std::io::Error),
}

static STDOUT: Mutex<StdoutState> = Mutex::new(StdoutState::Open);

/// Records the outcome of a write to stdout.
fn record(result: std::io::Result<()>) {
    let Err(e) = result else { return };
    let mut state = STDOUT.lock().unwrap_or_else(|p| p.into_inner());
    if matches!(*state, StdoutState::Open) {
        *state = if e.kind() == std::io::ErrorKind::BrokenPipe {
            StdoutState::ReaderGone
        } else {
            StdoutState::Failed(e)
        };
    }
}

fn stdout_open() -> bool {
    matches!(
        *STDOUT.lock().unwrap_or_else(|p| p.into_inner()),
        StdoutState::Open
    )
}

/// Writes `bytes` to stdout unless an earlier write failed; see the module documentation.
pub(crate) fn write_out_bytes(bytes: &[u8]) {
    {
        let mut state = STDOUT.lock().unwrap_or_else(|p| p.into_inner());
        if matches!(*state, StdoutState::Closed) {
            *state = StdoutState::Failed(std::io::Error::other(
                "standard output is closed (Bad file descriptor)",
            ));
        }
    }
    if stdout_open() {
        record(std::io::stdout().lock().write_all(bytes));
    }
}

/// Notices a standard output closed at start (`nrtucode list >&-`), so that writing to it
/// fails (exit 74) instead of going nowhere. Rust's runtime reopens a closed fd 0, 1 or 2 on
/// `/dev/null` before `main`, read-write, so that no file the program opens takes its number;
/// a `>/dev/null` redirection opens it write-only. So fd 1 on `/dev/null` opened read-write is
/// taken for a closed standard output (`<>/dev/null` would be too: that is the price).
pub(crate) fn guard_std_fds() {
    #[cfg(unix)]
    {
        use rustix::fs::{OFlags, fcntl_getfl, fstat, stat};
        use std::os::fd::AsFd as _;
        let stdout = std::io::stdout();
        let fd = stdout.as_fd();
        let on_dev_null = match (fstat(fd), stat("/dev/null")) {
            (Ok(out), Ok(null)) => {
                out.st_rdev == null.st_rdev
                    && out.st_dev == null.st_dev
                    && out.st_ino == null.st_ino
            }
            _ => false,
        };
        let read_write = fcntl_getfl(fd).is_ok_and(|f| f & OFlags::RWMODE == OFlags::RDWR);
        if on_dev_null && read_write {
            *STDOUT.lock().unwrap_or_else(|p| p.into_inner()) = StdoutState::Closed;
        }
    }
}

/// Writes `text` to stdout; see [`write_out_bytes`].
pub(crate) fn write_out(text: &str) {
    write_out_bytes(text.as_bytes());
}

/// Flushes stdout and returns `code`, or 74 (with a message on stderr) when writing stdout
/// failed other than by the reader going away.
pub(crate) fn finish(code: ExitCode) -> ExitCode {
    if stdout_open() {
        record(std::io::stdout().lock().flush());
    }
    let state = STDOUT.lock().unwrap_or_else(|p| p.into_inner());
    match &*state {
        StdoutState::Failed(e) => {
            write_err(&format!(
                "nrtucode: error: cannot write to standard output: {e}\n"
            ));
            Exit::IoErr.into()
        }
        StdoutState::Open | StdoutState::Closed | StdoutState::ReaderGone => code,
    }
}

/// `print!` to stdout through [`write_out`].
macro_rules! out_fmt { ($($a:tt)*) => { $crate::shared::output::write_out(&format!($($a)*)) } }
/// `println!` to stdout through [`write_out`].
macro_rules! out_line { ($($a:tt)*) => { $crate::shared::output::write_out(&format!("{}\n", format_args!($($a)*))) } }
/// `eprint!` through [`write_err`].
macro_rules! err_fmt { ($($a:tt)*) => { $crate::shared::output::write_err(&format!($($a)*)) } }
/// `eprintln!` through [`write_err`].
macro_rules! err_line { ($($a:tt)*) => { $crate::shared::output::write_err(&format!("{}\n", format_args!($($a)*))) } }

pub(crate) use {err_fmt, err_line, out_fmt, out_line};

/// Writes to stderr, ignoring failures.
pub(crate) fn write_err(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// An exit code from a resolver code (clamped to 0..=255).
pub(crate) fn exit_code(c: i32) -> ExitCode {
    ExitCode::from(u8::try_from(c).unwrap_or(u8::MAX))
}

/// clap's usage error (its plain rendering, `rendered`) in the tool's one error style:
/// `nrtucode: error: …`, then `nrtucode: hint: …` lines for the valid values, clap's tip and
/// the usage, ending with where the help is. clap's own `Usage:` and `For more information`
/// lines become that last hint; a tip to pass a value after `--` is dropped (negative numbers
/// need none, and an unknown option is not a value).
///
/// `command` (`nrtucode resolve`) names the help when clap printed no usage line.
pub(crate) fn usage_error(rendered: &str, command: &str) -> String {
    let mut error = String::new();
    let mut hints: Vec<String> = Vec::new();
    let mut usage = None;
    for line in rendered.lines().map(str::trim_end) {
        let trimmed = line.trim_start();
        if let Some(rest) = line.strip_prefix("error: ") {
            error = rest.to_owned();
        } else if let Some(rest) = line.strip_prefix("Usage: ") {
            usage = Some(rest.to_owned());
        } else if let Some(tip) = trimmed.strip_prefix("tip: ") {
            if !tip.starts_with("to pass '") {
                hints.push(tip.to_owned());
            }
        } else if let Some(values) = trimmed
            .strip_prefix("[possible values: ")
            .and_then(|v| v.strip_suffix(']'))
        {
            hints.push(format!("possible values: {values}"));
        } else if trimmed.is_empty() || trimmed.starts_with("For more information") {
        } else if line.starts_with("  ") && !error.is_empty() {
            // A list under the error (the missing required arguments).
            error.push_str(if error.ends_with(':') { " " } else { ", " });
            error.push_str(trimmed);
        } else {
            hints.push(trimmed.to_owned());
        }
    }
    if error.is_empty() {
        error = "bad arguments".to_owned();
    }
    let mut out = format!("nrtucode: error: {error}\n");
    for hint in hints {
        out.push_str(&format!("nrtucode: hint: {hint}\n"));
    }
    // `nrtucode resolve <IDX> …`: the command path is the words before the first argument.
    let help = usage.as_deref().map_or_else(
        || command.to_owned(),
        |u| {
            let words: Vec<&str> = u
                .split(' ')
                .take_while(|w| !w.starts_with(['<', '[', '-']))
                .collect();
            words.join(" ")
        },
    );
    match &usage {
        Some(usage) => out.push_str(&format!(
            "nrtucode: hint: usage: {usage}; see '{help} --help'\n"
        )),
        None => out.push_str(&format!("nrtucode: hint: see '{help} --help'\n")),
    }
    out
}

/// How a command reports: plain text, or JSON (`--json`), where every failure also prints a
/// JSON error object on stdout ([`Mode::fail`], [`usage_failure`]). Passed as a value to each
/// command that has `--json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Text on stdout, the error on stderr.
    Text,
    /// `--json`: a JSON document on stdout, also for a failure.
    Json,
}

impl Mode {
    /// `Json` when `json`.
    pub(crate) fn json(json: bool) -> Mode {
        if json { Mode::Json } else { Mode::Text }
    }

    /// Prints `nrtucode: error: {error}` to stderr (and, in JSON mode, the JSON error object
    /// on stdout) and returns the error's exit code. Every failure before a command has a
    /// document of its own goes through here.
    pub(crate) fn fail(self, error: impl Into<Error>) -> ExitCode {
        let error = error.into();
        err_line!("nrtucode: error: {error}");
        if self == Mode::Json {
            json_error(&error.to_string(), error.kind());
        }
        error.kind().into()
    }
}

/// The JSON error object a failure under `--json` prints on stdout (format
/// `nrtucode-error/1`): `{ "format": "nrtucode-error/1", "error": "<the stderr message>",
/// "exit_code": 66 }`. A command's own document (`inspect`, `prof`) carries its own `error`
/// instead; this object is for a failure before there is a document (an unreadable file, a
/// bad argument, a refused `--partition`).
#[derive(serde::Serialize)]
struct ErrorDoc<'a> {
    format: &'static str,
    error: &'a str,
    exit_code: u8,
}

fn json_error(message: &str, exit: Exit) {
    write_out(&json_document(&ErrorDoc {
        format: "nrtucode-error/1",
        error: message,
        exit_code: exit.code(),
    }));
}

/// [`Mode::fail`] of a command without `--json`: the error on stderr, its exit code.
pub(crate) fn fail(error: impl Into<Error>) -> ExitCode {
    Mode::Text.fail(error)
}

/// A usage error, rendered by [`usage_error`]: to stderr, and under `--json` (found in the
/// raw arguments, as parsing failed) the JSON error object with its first line on stdout.
pub(crate) fn usage_failure(rendered: &str, mode: Mode) -> ExitCode {
    write_err(rendered);
    if mode == Mode::Json {
        let first = rendered.lines().next().unwrap_or_default();
        json_error(
            first.strip_prefix("nrtucode: error: ").unwrap_or(first),
            Exit::Usage,
        );
    }
    Exit::Usage.into()
}
