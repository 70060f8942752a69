//! Building and running what the tasks then test: every artifact a task checks comes from the
//! build it just ran (cargo's JSON messages name the files, in whatever target directory cargo
//! used), never from a path guessed under `target/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `PROGRAM ARGS`, the arguments split at whitespace (none of them holds any).
pub fn cmd(program: &str, args: &str) -> Command {
    let mut command = Command::new(program);
    command.args(args.split_whitespace());
    command
}

/// `cargo ARGS` with the toolchain's cargo (`$CARGO` under `cargo xtask`); `+TOOLCHAIN` needs
/// rustup's proxy, [`cmd`]`("cargo", …)`.
pub fn cargo(args: &str) -> Command {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    cmd(&cargo, args)
}

/// Runs `command`, failing with its command line unless it exits 0.
pub fn status(command: &mut Command) -> Result<(), String> {
    let shown = format!("{command:?}");
    match command.status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("{shown} failed ({s})")),
        Err(e) => Err(format!("cannot run {shown}: {e}")),
    }
}

/// Runs `command`, its output captured: its command line as shown in errors, and what it did;
/// fails only when it cannot run.
pub fn output(command: &mut Command) -> Result<(String, std::process::Output), String> {
    let shown = format!("{command:?}");
    let out = command.output();
    out.map(|out| (shown.clone(), out))
        .map_err(|e| format!("cannot run {shown}: {e}"))
}

/// Whether `command` runs and exits 0, its output discarded.
pub fn quietly(command: &mut Command) -> bool {
    let quiet = command.stdout(Stdio::null()).stderr(Stdio::null());
    quiet.status().is_ok_and(|s| s.success())
}

/// Runs `command` and returns its standard output (UTF-8, lossy); fails with its command line
/// and standard error unless it exits 0.
pub fn stdout(command: &mut Command) -> Result<String, String> {
    let (shown, out) = output(command.stderr(Stdio::piped()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("{shown} failed ({}): {}", out.status, err.trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The executable named `name` that `command` (a `cargo build`, `bench --no-run`, …) just built.
pub fn executable(command: &mut Command, name: &str) -> Result<PathBuf, String> {
    Ok(executables(command, &[name], &[])?.remove(0))
}

/// The executables named `names` that `command` just built, in that order: it runs with
/// `--message-format=json-render-diagnostics` and then `after` (`--` and rustc's arguments, for
/// `cargo rustc`). Fails when the build fails, with cargo's diagnostics (its standard error).
pub fn executables(
    command: &mut Command,
    names: &[&str],
    after: &[&str],
) -> Result<Vec<PathBuf>, String> {
    command
        .arg("--message-format=json-render-diagnostics")
        .args(after)
        .stdout(Stdio::piped());
    let (shown, out) = output(command.stderr(Stdio::piped()))?;
    if !out.status.success() {
        // The diagnostics went to the captured stderr: the failure carries them.
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("{shown} failed ({}): {}", out.status, err.trim()));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    names
        .iter()
        .map(|name| {
            last_executable(&text, name)?
                .ok_or_else(|| format!("{shown} built no executable {name}"))
        })
        .collect()
}

/// The executable of the last `compiler-artifact` message (one JSON message a line) naming
/// `name` that has one and is a binary, example, test or bench (never a build script).
fn last_executable(messages: &str, name: &str) -> Result<Option<PathBuf>, String> {
    const RUNNABLE: [&str; 4] = ["bin", "example", "test", "bench"];
    let mut found = None;
    for line in messages.lines() {
        let Ok(m) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if m["reason"] == "build-finished" && m["success"] == false {
            return Err("the build failed".into());
        }
        let kinds = m["target"]["kind"].as_array().into_iter().flatten();
        if m["reason"] == "compiler-artifact"
            && m["target"]["name"] == name
            && kinds
                .filter_map(|k| k.as_str())
                .any(|k| RUNNABLE.contains(&k))
            && let Some(exe) = m["executable"].as_str()
        {
            found = Some(PathBuf::from(exe));
        }
    }
    Ok(found)
}

/// `p` as UTF-8, for command lines that need a `&str`.
pub fn path_str(p: &Path) -> Result<&str, String> {
    p.to_str()
        .ok_or_else(|| format!("{} is not UTF-8", p.display()))
}

/// Builds the look-alike of the vendor's full library into `dir` (it needs gcc); returns its
/// `libnrtucode_internal.so`. In release, as the template README's walkthrough runs it: one
/// build of the generator for both.
pub fn lookalike(dir: &Path) -> Result<PathBuf, String> {
    let args =
        "run --quiet --release --locked -p nrtucode-lookalike -- --library full --build --out";
    status(cargo(args).arg(dir).stdout(Stdio::null()))?;
    Ok(dir.join("libnrtucode_internal.so"))
}

/// Builds the look-alike ([`lookalike`]) into `work/la` and carves it with the workspace's
/// release CLI (the build `cargo run --release -p nrtucode-cli` makes, which the other steps
/// share: `device::host_tool`) into `work/blobs`; returns the blob directory.
pub fn carved_lookalike(work: &Path) -> Result<PathBuf, String> {
    let (so, blobs) = (lookalike(&work.join("la"))?, work.join("blobs"));
    let mut carve = cargo("run --quiet --release -p nrtucode-cli -- carve");
    status(carve.arg(so).arg("--out").arg(&blobs).stdout(Stdio::null()))?;
    Ok(blobs)
}

// ---- fresh consumer crates (`package`, `msrv`) ----

/// A TOML basic string holding `s` (quotes and backslashes escaped; control characters, which
/// no path or feature list here holds, refused).
pub fn toml_string(s: &str) -> Result<String, String> {
    if let Some(c) = s.chars().find(|c| c.is_control()) {
        return Err(format!("{s:?} holds the control character {c:?}"));
    }
    Ok(format!(
        "\"{}\"",
        s.replace('\\', "\\\\").replace('"', "\\\"")
    ))
}

/// The `Cargo.toml` of a fresh crate `name` outside any workspace (an empty `[workspace]`
/// table): `dependencies` are the `[dependencies]` lines, `tables` more tables
/// (`[patch.crates-io]`, `[features]`, `[profile.release]`), each line ending in a newline.
pub fn consumer_manifest(name: &str, dependencies: &str, tables: &str) -> String {
    format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\n{dependencies}\n\n{tables}[workspace]\n"
    )
}

/// Writes the fresh crate `name` into `dir`: its manifest ([`consumer_manifest`]) and
/// `src/FILE` (`main.rs` or `lib.rs`) holding `source`. A file that already holds what it
/// would be given is left alone, so a kept consumer rebuilds only what changed.
pub fn consumer(
    dir: &Path,
    name: &str,
    (dependencies, tables): (&str, &str),
    file: &str,
    source: &str,
) -> Result<(), String> {
    crate::files::create_dir(&dir.join("src"))?;
    let manifest = consumer_manifest(name, dependencies, tables);
    for (path, text) in [
        (dir.join("Cargo.toml"), manifest.as_str()),
        (dir.join("src").join(file), source),
    ] {
        if !std::fs::read_to_string(&path).is_ok_and(|old| old == text) {
            crate::files::write(&path, text)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_executable_comes_from_the_messages_and_a_failed_build_is_an_error() {
        let text = concat!(
            r#"{"reason":"compiler-artifact","target":{"name":"a","kind":["bin"]},"executable":"/t/a"}"#,
            "\nnot json\n",
            r#"{"reason":"compiler-artifact","target":{"name":"a","kind":["custom-build"]},"executable":"/t/build-script-build"}"#,
            "\n",
            r#"{"reason":"compiler-artifact","target":{"name":"c","kind":["cdylib"]},"executable":null}"#,
            "\n",
            r#"{"reason":"build-finished","success":true}"#,
        );
        // A build script is an executable too, of kind custom-build: never the one taken.
        assert_eq!(last_executable(text, "a"), Ok(Some("/t/a".into())));
        assert_eq!(last_executable(text, "c"), Ok(None));
        let failed = text.replace(r#""success":true"#, r#""success":false"#);
        assert!(last_executable(&failed, "a").is_err());
        let args: Vec<_> = cmd("cargo", " build  -p x ")
            .get_args()
            .map(|a| a.to_owned())
            .collect();
        assert_eq!(args, ["build", "-p", "x"]);
    }

    #[test]
    fn a_consumer_manifest_is_its_own_workspace_with_the_tables_given() {
        let plain = consumer_manifest("c", "nrtucode = \"0.1\"", "");
        assert!(
            plain.contains("[dependencies]\nnrtucode = \"0.1\"\n"),
            "{plain}"
        );
        assert!(plain.ends_with("\n\n[workspace]\n"), "{plain}");
        let patched = consumer_manifest(
            "c",
            "x = \"1\"",
            "[patch.crates-io]\nx = { path = \"/p\" }\n",
        );
        assert!(
            patched
                .ends_with("x = \"1\"\n\n[patch.crates-io]\nx = { path = \"/p\" }\n[workspace]\n"),
            "{patched}"
        );
        assert_eq!(toml_string(r#"/a"b\c"#).unwrap(), r#""/a\"b\\c""#);
        assert!(toml_string("/a\nb").is_err());
    }
}
