//! `nrtucode-defmt -e ELF`: decodes the defmt frames on standard input with the ELF's `.defmt`
//! table and prints one line per log message, `LEVEL message` (`INFO  engine ready: …`), as
//! `defmt-print -e ELF` prints them without locations. It is the bare-metal template's log
//! reader under QEMU (`cargo xtask qemu`, the template's README), built with the workspace in
//! about a minute, instead of `cargo install defmt-print` on every fresh machine.
//!
//! Exit status: 0 when every frame decoded; 1 when the ELF has no defmt table or cannot be
//! read, when the input cannot be read, or when a frame is malformed (with rzcobs framing the
//! decoder skips it, says so on stderr, and the status is 1 at the end). Bytes of an unfinished
//! last frame are not reported (the decoder does not say whether it holds any).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use defmt_decoder::{DecodeError, Table};

/// Decode a defmt log read from standard input.
#[derive(Debug, Parser)]
#[command(name = "nrtucode-defmt", version)]
struct Args {
    /// The ELF file the firmware was built as (its .defmt section decodes the frames).
    #[arg(short = 'e', long = "elf", value_name = "ELF")]
    elf: PathBuf,
}

/// One decoded message as a line: the level padded to five columns, then the message.
fn line(level: Option<&str>, message: &str) -> String {
    match level {
        Some(level) => format!("{:<5} {message}\n", level.to_ascii_uppercase()),
        None => format!("{message}\n"),
    }
}

/// Decodes `input` with `table` into `out`; returns the number of malformed frames it could not decode (it reads on past each).
fn decode(table: &Table, input: &mut dyn Read, out: &mut dyn Write) -> Result<usize, String> {
    let mut decoder = table.new_stream_decoder();
    let mut buffer = [0u8; 4096];
    let mut malformed = 0;
    loop {
        let n = match input.read(&mut buffer) {
            Ok(0) => return Ok(malformed),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("cannot read standard input: {e}")),
        };
        decoder.received(&buffer[..n]);
        loop {
            match decoder.decode() {
                Ok(frame) => {
                    let level = frame.level().map(|l| l.as_str());
                    let text = line(level, &frame.display_message().to_string());
                    out.write_all(text.as_bytes())
                        .map_err(|e| format!("cannot write standard output: {e}"))?;
                }
                Err(DecodeError::UnexpectedEof) => break,
                Err(DecodeError::Malformed) if table.encoding().can_recover() => {
                    malformed += 1;
                    eprintln!("nrtucode-defmt: warning: a malformed frame could not be decoded");
                }
                Err(DecodeError::Malformed) => {
                    return Err("a malformed frame, and this encoding cannot resynchronise".into());
                }
            }
        }
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let elf = match std::fs::read(&args.elf) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("nrtucode-defmt: error: {}: {e}", args.elf.display());
            return ExitCode::FAILURE;
        }
    };
    let table = match Table::parse(&elf) {
        Ok(Some(table)) => table,
        Ok(None) => {
            eprintln!(
                "nrtucode-defmt: error: {}: no .defmt section (not built with defmt?)",
                args.elf.display()
            );
            return ExitCode::FAILURE;
        }
        Err(e) => {
            eprintln!("nrtucode-defmt: error: {}: {e}", args.elf.display());
            return ExitCode::FAILURE;
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match decode(&table, &mut std::io::stdin().lock(), &mut out) {
        Ok(0) => ExitCode::SUCCESS,
        Ok(malformed) => {
            eprintln!("nrtucode-defmt: error: {malformed} malformed frames could not be decoded");
            ExitCode::FAILURE
        }
        Err(message) => {
            eprintln!("nrtucode-defmt: error: {message}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_level_then_message() {
        assert_eq!(line(Some("info"), "engine ready"), "INFO  engine ready\n");
        assert_eq!(line(Some("error"), "x"), "ERROR x\n");
        assert_eq!(line(None, "plain"), "plain\n");
    }
}
