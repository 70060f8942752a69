//! `cargo run -p nrtucode-codegen` writes the generated files; `-- --check` only says which
//! differ from what the fact tables give, and fails if any does.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let check = match std::env::args().nth(1).as_deref() {
        None => false,
        Some("--check") => true,
        Some(other) => {
            eprintln!("nrtucode-codegen: unknown argument {other:?} (only --check)");
            return ExitCode::from(2);
        }
    };
    let result = if check {
        nrtucode_codegen::stale(&root).map(|stale| {
            for path in &stale {
                eprintln!(
                    "nrtucode-codegen: {} is stale: run `{}`",
                    path.display(),
                    nrtucode_codegen::COMMAND
                );
            }
            stale.is_empty()
        })
    } else {
        nrtucode_codegen::generate(&root).and_then(|files| {
            for (path, text) in files {
                if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                    std::fs::write(&path, text)
                        .map_err(|e| format!("write {}: {e}", path.display()))?;
                    eprintln!("nrtucode-codegen: wrote {}", path.display());
                }
            }
            Ok(true)
        })
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("nrtucode-codegen: {e}");
            ExitCode::FAILURE
        }
    }
}
