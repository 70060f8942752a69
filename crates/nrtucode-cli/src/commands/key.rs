//! `nrtucode key generate -o KEY.pem` and `nrtucode key public KEY.pem [-o PUB.pem]
//! [--format pem|rust]`: ed25519 keys for signed partitions (PKCS#8 PEM private keys, SPKI PEM
//! public keys, or the Rust `const` a firmware pastes).
//!
//! A key file is read bounded, by the CLI's one reader (`input`): a regular file, a pipe or a
//! character device (`--key <(secret-tool lookup …)`, `key public /dev/stdin`: the usual ways
//! to keep a private key off the disk), of at most [`MAX_PEM_BYTES`](nrtucode_pack::MAX_PEM_BYTES) (16 KiB) of UTF-8 text.
//! More (`/dev/zero`, a larger file), bytes that are not UTF-8, a PEM that is not an ed25519
//! key: a bad key, exit 65, nothing more is read. A directory or a socket: 66.

use std::path::Path;
use std::process::ExitCode;

use nrtucode_pack::{SigningKey, public_key_pem, public_key_rust};

use crate::shared::error::Error;
use crate::shared::input;
use crate::shared::output::{fail, out_fmt, out_line};
use crate::shared::output_file::{Mode, write_output};

/// The text of the key file at `path` (`what`: `private` or `public`), read as the module
/// documentation says, and noted as an input of the command (no output may overwrite it).
pub(crate) fn read_key_file(path: &Path, what: &str) -> Result<String, Error> {
    input::read_text(path, input::KEY)
        .map_err(|e| e.map_message(|message| format!("{message}; not a {what} key")))
}

/// Reads the PKCS#8 PEM private key at `path` (bounded: see the module documentation).
pub(crate) fn read_signing_key(path: &Path) -> Result<SigningKey, Error> {
    let text = read_key_file(path, "private")?;
    SigningKey::from_pem(&text).map_err(|e| Error::bad_data(path, e))
}

/// Writes a new random key to `out` (readable by its owner only; never replacing a file).
pub(crate) fn generate(out: &Path) -> ExitCode {
    let key = SigningKey::generate();
    if let Err(e) = write_output(out, key.to_pem().as_bytes(), Mode::NewPrivate) {
        return fail(e);
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
        Err(e) => return fail(e),
    };
    let public = signing.public_key();
    let text = match format {
        KeyFormat::Pem => public_key_pem(&public),
        KeyFormat::Rust => public_key_rust(&public, "NRTUCODE_PARTITION_KEY"),
    };
    match out {
        Some(path) => {
            if let Err(e) = write_output(path, text.as_bytes(), Mode::Replace) {
                return fail(e);
            }
        }
        None => out_fmt!("{text}"),
    }
    ExitCode::SUCCESS
}
