//! `nrtucode key generate -o KEY.pem` and `nrtucode key public KEY.pem [-o PUB.pem]
//! [--format pem|rust]`: ed25519 keys for signed partitions (PKCS#8 PEM private keys, SPKI PEM
//! public keys, or the Rust `const` a firmware pastes).
//!
//! A key file is read bounded: it must be a regular file (its type checked on the descriptor,
//! opened non-blocking so a FIFO never blocks) of at most [`MAX_PEM_BYTES`] (16 KiB) of UTF-8
//! text. Anything else (a device such as `/dev/zero`, a FIFO, a larger file, bytes that are
//! not UTF-8, a PEM that is not an ed25519 key) is a bad key: exit 65, nothing more is read.

use std::path::Path;
use std::process::ExitCode;

use nrtucode_pack::{MAX_PEM_BYTES, SigningKey, public_key_pem, public_key_rust};

use nrtucode_facts::input_file::{Links, kind_of, open_nonblocking};

use crate::commands::exit::{self, Exit};
use crate::commands::output::{fail, out_fmt, out_line};
use crate::commands::output_file::{Mode, note_input, write_output};

/// The text of the key file at `path` (`what`: `private` or `public`), read as the module
/// documentation says, and noted as an input of the command (no output may overwrite it).
pub(crate) fn read_key_file(path: &Path, what: &str) -> Result<String, (Exit, String)> {
    use std::io::Read as _;
    let shown = path.display();
    let io = |e: std::io::Error| (exit::reading(&e), format!("{shown}: {e}"));
    let bad = |detail: String| {
        (
            Exit::DataErr,
            format!("{shown}: {detail}; not a {what} key"),
        )
    };
    let (file, meta) = open_nonblocking(path, Links::Follow).map_err(io)?;
    if meta.is_dir() {
        return Err((
            Exit::NoInput,
            format!("{shown}: is a directory; name the {what} key file"),
        ));
    }
    if !meta.is_file() {
        return Err(bad(format!(
            "is {}, not a regular file (a key is read from a regular file of at most {MAX_PEM_BYTES} bytes); nothing was read from it",
            kind_of(&meta)
        )));
    }
    let too_large = |size: String| {
        bad(format!(
            "{size}, larger than the {MAX_PEM_BYTES} bytes a PEM key file may have"
        ))
    };
    if meta.len() > MAX_PEM_BYTES as u64 {
        return Err(too_large(format!("{} bytes", meta.len())));
    }
    let mut bytes = Vec::new();
    // The file may grow while it is read: one byte past the limit tells.
    file.take(MAX_PEM_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() > MAX_PEM_BYTES {
        return Err(too_large(format!("{} bytes or more", bytes.len())));
    }
    note_input(path, &meta);
    String::from_utf8(bytes).map_err(|e| {
        bad(format!(
            "not UTF-8 text (byte {} is not), so not a PEM file",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Reads the PKCS#8 PEM private key at `path` (bounded: see the module documentation).
pub(crate) fn read_signing_key(path: &Path) -> Result<SigningKey, (Exit, String)> {
    let text = read_key_file(path, "private")?;
    SigningKey::from_pem(&text).map_err(|e| (Exit::DataErr, format!("{}: {e}", path.display())))
}

/// Writes a new random key to `out` (readable by its owner only; never replacing a file).
pub(crate) fn generate(out: &Path) -> ExitCode {
    let key = SigningKey::generate();
    if let Err((exit, message)) = write_output(out, key.to_pem().as_bytes(), Mode::NewPrivate) {
        return fail(exit, message);
    }
    out_line!(
        "{}: new ed25519 key, key ID {}",
        out.display(),
        nrtucode_facts::hex::lower_hex(&key.public_key().key_id())
    );
    ExitCode::SUCCESS
}

/// The public key's output format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum KeyFormat {
    /// SPKI PEM (-----BEGIN PUBLIC KEY-----).
    #[default]
    Pem,
    /// A Rust const nrtucode::partition::PublicKey, to paste into a firmware.
    Rust,
}

/// Prints (or writes to `out`) the public key of the private key at `key`.
pub(crate) fn public(key: &Path, out: Option<&Path>, format: KeyFormat) -> ExitCode {
    let signing = match read_signing_key(key) {
        Ok(k) => k,
        Err((exit, message)) => return fail(exit, message),
    };
    let public = signing.public_key();
    let text = match format {
        KeyFormat::Pem => public_key_pem(&public),
        KeyFormat::Rust => public_key_rust(&public, "NRTUCODE_PARTITION_KEY"),
    };
    match out {
        Some(path) => {
            if let Err((exit, message)) = write_output(path, text.as_bytes(), Mode::Replace) {
                return fail(exit, message);
            }
        }
        None => out_fmt!("{text}"),
    }
    ExitCode::SUCCESS
}
