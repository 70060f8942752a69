//! `nrtucode key generate -o KEY.pem` and `nrtucode key public KEY.pem [-o PUB.pem]
//! [--format pem|rust]`: ed25519 keys for signed partitions (PKCS#8 PEM private keys, SPKI PEM
//! public keys, or the Rust `const` a firmware pastes).

use std::path::Path;
use std::process::ExitCode;

use nrtucode_pack::{SigningKey, public_key_pem, public_key_rust};

use crate::commands::atomic::write_atomic;
use crate::commands::exit::{self, Exit};
use crate::commands::output::{fail, out_fmt, out_line};

/// Reads the PKCS#8 PEM private key at `path`.
pub(crate) fn read_signing_key(path: &Path) -> Result<SigningKey, (Exit, String)> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| (exit::reading(&e), format!("{}: {e}", path.display())))?;
    SigningKey::from_pem(&text).map_err(|e| (Exit::DataErr, format!("{}: {e}", path.display())))
}

/// Writes a new random key to `out` (readable by its owner only; never replacing a file).
pub(crate) fn generate(out: &Path) -> ExitCode {
    let key = SigningKey::generate();
    if let Err((exit, message)) = write_atomic(out, key.to_pem().as_bytes(), true, false) {
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
            if let Err((exit, message)) = write_atomic(path, text.as_bytes(), false, true) {
                return fail(exit, message);
            }
        }
        None => out_fmt!("{text}"),
    }
    ExitCode::SUCCESS
}
