//! Building and running things the tasks then test: every artifact a task checks comes from the
//! `cargo build` it just ran (cargo's JSON messages name the files, in whatever target directory
//! cargo used), never from a path guessed under `target/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::metadata::Metadata;

/// One `compiler-artifact` message of a build.
#[derive(Clone, Debug)]
pub struct Artifact {
    /// The target's name (`nrtucode-bare-metal`, `nrtucode_capi`, …).
    pub name: String,
    /// The target's kinds (`bin`, `example`, `lib`, `cdylib`, `staticlib`, …).
    pub kind: Vec<String>,
    /// The executable, for a binary, example or test.
    pub executable: Option<PathBuf>,
}

/// Runs `command` (a `cargo build`/`cargo test --no-run`/… invocation) with
/// `--message-format=json-render-diagnostics` appended, diagnostics going to stderr as usual,
/// and returns the artifacts it reported. Fails when the build fails.
pub fn artifacts(command: &mut Command) -> Result<Vec<Artifact>, String> {
    artifacts_then(command, &[])
}

/// [`artifacts`], with `after` appended after the message format (`--` and rustc's arguments,
/// for `cargo rustc`).
fn artifacts_then(command: &mut Command, after: &[&str]) -> Result<Vec<Artifact>, String> {
    command
        .arg("--message-format=json-render-diagnostics")
        .args(after)
        .stdout(Stdio::piped());
    let shown = format!("{command:?}");
    let out = command
        .output()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{shown} failed ({})", out.status));
    }
    parse_messages(&String::from_utf8_lossy(&out.stdout))
}

/// The artifacts of cargo's JSON messages (one per line; other lines are ignored).
pub fn parse_messages(text: &str) -> Result<Vec<Artifact>, String> {
    let mut found = Vec::new();
    for line in text.lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["reason"] == "build-finished" && message["success"] == false {
            return Err("the build failed".into());
        }
        if message["reason"] != "compiler-artifact" {
            continue;
        }
        let strings = |v: &serde_json::Value| -> Vec<String> {
            v.as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        found.push(Artifact {
            name: message["target"]["name"].as_str().unwrap_or("").to_owned(),
            kind: strings(&message["target"]["kind"]),
            executable: message["executable"].as_str().map(PathBuf::from),
        });
    }
    Ok(found)
}

/// The executable named `name` that `command` just built (the last one reported).
pub fn executable(command: &mut Command, name: &str) -> Result<PathBuf, String> {
    let shown = format!("{command:?}");
    last_executable(artifacts(command)?, name)
        .ok_or_else(|| format!("{shown} built no executable {name}"))
}

/// The executable of the last artifact named `name` that has one (a binary, example, test or
/// bench target: a build script's artifact is never taken for it).
fn last_executable(artifacts: Vec<Artifact>, name: &str) -> Option<PathBuf> {
    const RUNNABLE: [&str; 4] = ["bin", "example", "test", "bench"];
    artifacts
        .into_iter()
        .rev()
        .filter(|a| a.name == name && a.kind.iter().any(|k| RUNNABLE.contains(&k.as_str())))
        .find_map(|a| a.executable)
}

/// `cargo` with the toolchain's cargo (`$CARGO` under `cargo xtask`).
pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// Runs `command` and returns its standard output (UTF-8, lossy); fails with its command line
/// and standard error unless it exits 0.
pub fn stdout(command: &mut Command) -> Result<String, String> {
    let shown = format!("{command:?}");
    let out = command
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{shown} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A scratch directory `xtask/NAME` under the target directory, emptied first.
pub fn scratch(meta: &Metadata, name: &str) -> Result<PathBuf, String> {
    let dir = meta.target_dir.join("xtask").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

/// `p` as UTF-8, for command lines that need a `&str`.
pub fn path_str(p: &Path) -> Result<&str, String> {
    p.to_str()
        .ok_or_else(|| format!("{} is not UTF-8", p.display()))
}

// ---- x-pkg: fresh consumer crates (`package`, `msrv`) ----

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
/// table): `dependencies` are the `[dependencies]` lines, `patches` the `[patch.crates-io]`
/// ones (none: no such table).
pub fn consumer_manifest(name: &str, dependencies: &str, patches: &str) -> String {
    let mut text = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\n{dependencies}\n"
    );
    if !patches.is_empty() {
        text.push_str("\n[patch.crates-io]\n");
        text.push_str(patches);
    }
    text.push_str("\n[workspace]\n");
    text
}

/// Writes the fresh crate `name` into `dir`: its manifest ([`consumer_manifest`]) and
/// `src/FILE` (`main.rs` or `lib.rs`) holding `source`. A file that already holds what it
/// would be given is left alone, so a kept consumer rebuilds only what changed.
pub fn consumer(
    dir: &Path,
    name: &str,
    dependencies: &str,
    patches: &str,
    file: &str,
    source: &str,
) -> Result<(), String> {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).map_err(|e| format!("cannot create {}: {e}", src.display()))?;
    let manifest = consumer_manifest(name, dependencies, patches);
    for (path, text) in [
        (dir.join("Cargo.toml"), manifest.as_str()),
        (src.join(file), source),
    ] {
        if std::fs::read_to_string(&path).is_ok_and(|old| old == text) {
            continue;
        }
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

// ---- x-host: helpers of the host measurements (size, nopanic, …) ----

/// The executable named `name` that `command` (a `cargo rustc …` invocation) just built, with
/// `rustc_args` passed to the final rustc after `--` (where [`artifacts`] cannot append the
/// message format).
pub fn rustc_executable(
    command: &mut Command,
    name: &str,
    rustc_args: &[&str],
) -> Result<PathBuf, String> {
    let mut after = vec!["--"];
    after.extend_from_slice(rustc_args);
    let shown = format!("{command:?}");
    last_executable(artifacts_then(command, &after)?, name)
        .ok_or_else(|| format!("{shown} built no executable {name}"))
}

/// `cargo run --quiet -p PACKAGE -- ARGS` from the workspace root, its standard output
/// discarded.
pub fn run_quiet(package: &str, args: &[&str]) -> Result<(), String> {
    crate::status(
        cargo()
            .args(["run", "--quiet", "-p", package, "--"])
            .args(args)
            .stdout(Stdio::null()),
    )
}

/// Builds the full look-alike of the vendor library into `work/la` and carves it with the
/// workspace's CLI into `work/blobs`; returns the blob directory.
pub fn carved_lookalike(work: &Path) -> Result<PathBuf, String> {
    let (la, blobs) = (work.join("la"), work.join("blobs"));
    run_quiet(
        "nrtucode-lookalike",
        &["--library", "full", "--out", path_str(&la)?, "--build"],
    )?;
    let so = la.join("libnrtucode_internal.so");
    run_quiet(
        "nrtucode-cli",
        &["carve", path_str(&so)?, "--out", path_str(&blobs)?],
    )?;
    Ok(blobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifacts_come_from_the_messages_and_a_failed_build_is_an_error() {
        let text = concat!(
            r#"{"reason":"compiler-artifact","target":{"name":"a","kind":["bin"]},"filenames":["/t/a"],"executable":"/t/a"}"#,
            "\nnot json\n",
            r#"{"reason":"compiler-artifact","target":{"name":"c","kind":["cdylib","staticlib"]},"filenames":["/t/libc.so","/t/libc.a"],"executable":null}"#,
            "\n",
            r#"{"reason":"build-finished","success":true}"#,
        );
        let found = parse_messages(text).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].executable.as_deref(), Some(Path::new("/t/a")));
        assert_eq!(found[1].kind, ["cdylib", "staticlib"]);
        assert!(found[1].executable.is_none());
        assert_eq!(
            last_executable(found.clone(), "a").as_deref(),
            Some(Path::new("/t/a"))
        );
        // A build script is an executable too, of kind custom-build: never the one taken.
        let script = Artifact {
            name: "a".into(),
            kind: vec!["custom-build".into()],
            executable: Some("/t/build-script-build".into()),
        };
        let mut with_script = found.clone();
        with_script.push(script);
        assert_eq!(
            last_executable(with_script, "a").as_deref(),
            Some(Path::new("/t/a"))
        );
        assert_eq!(last_executable(found, "c"), None);
        let failed = text.replace(r#""success":true"#, r#""success":false"#);
        assert!(parse_messages(&failed).is_err());
    }

    #[test]
    fn a_consumer_manifest_is_its_own_workspace_and_patches_only_when_asked() {
        let plain = consumer_manifest("c", "nrtucode = \"0.1\"", "");
        assert!(
            plain.contains("[dependencies]\nnrtucode = \"0.1\"\n"),
            "{plain}"
        );
        assert!(plain.ends_with("\n[workspace]\n"), "{plain}");
        assert!(!plain.contains("[patch"), "{plain}");
        let patched = consumer_manifest("c", "x = \"1\"", "x = { path = \"/p\" }\n");
        let patch = patched
            .find("[patch.crates-io]\nx = { path = \"/p\" }")
            .unwrap();
        assert!(patch < patched.find("[workspace]").unwrap(), "{patched}");
        assert_eq!(toml_string(r#"/a"b\c"#).unwrap(), r#""/a\"b\\c""#);
        assert!(toml_string("/a\nb").is_err());
    }
}
