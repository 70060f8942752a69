//! Standard output that cannot be written: a reader that stops reading (`EPIPE`, as with
//! `| head`) ends the output quietly with the command's own exit code; any other write
//! failure (`/dev/full`) is exit 74 with a message on stderr, for every subcommand.

use std::path::Path;
use std::process::{Command, Stdio};

use nrtucode_test_elf::TinyElf;

fn nrtucode() -> Command {
    Command::new(env!("CARGO_BIN_EXE_nrtucode"))
}

/// Every subcommand with arguments that succeed, in `dir` (which holds `tiny.so`).
fn commands(dir: &Path) -> Vec<Vec<String>> {
    let tiny = dir.join("tiny.so");
    std::fs::write(&tiny, TinyElf::default().build()).unwrap();
    let s = |v: &[&str]| v.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
    vec![
        s(&["list"]),
        s(&["list", "--json"]),
        s(&["prof", "7"]),
        s(&["prof", "7", "--json"]),
        s(&["resolve", "7", "iram", "--sha256"]),
        s(&["resolve", "7", "iram", "-o", "-"]),
        s(&["--help"]),
        s(&["carve", "--help"]),
        s(&["--version"]),
        vec![
            "carve".into(),
            tiny.display().to_string(),
            "--out".into(),
            dir.join("blobs").display().to_string(),
        ],
    ]
}

#[test]
#[cfg_attr(
    not(any(target_os = "linux", target_os = "freebsd")),
    ignore = "needs /dev/full (Linux, FreeBSD)"
)]
fn a_full_stdout_is_exit_74_with_a_message() {
    let tmp = tempfile::tempdir().unwrap();
    for args in commands(tmp.path()) {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full: a device whose writes fail with ENOSPC");
        let o = nrtucode().args(&args).stdout(full).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(74), "{args:?}: {err}");
        assert!(
            err.contains("nrtucode: error: cannot write to standard output: No space left"),
            "{args:?}: {err}"
        );
        let _ = std::fs::remove_dir_all(tmp.path().join("blobs"));
    }
}

#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    // Both write more than a pipe holds, so the write after the reader left fails (EPIPE).
    for args in [
        vec!["list", "--json"],
        vec!["resolve", "7", "iram", "-o", "-"],
    ] {
        let mut child = nrtucode()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("error"), "{args:?}: {err}");
    }
}

#[cfg(unix)]
#[test]
fn a_closed_stdout_is_exit_74_with_a_message() {
    let tmp = tempfile::tempdir().unwrap();
    for args in commands(tmp.path()) {
        // `exec ... >&-`: the command starts with fd 1 closed.
        let o = Command::new("sh")
            .arg("-c")
            .arg("exec \"$0\" \"$@\" >&-")
            .arg(env!("CARGO_BIN_EXE_nrtucode"))
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(74), "{args:?}: {err}");
        assert!(
            err.contains(
                "nrtucode: error: cannot write to standard output: standard output is closed"
            ),
            "{args:?}: {err}"
        );
        let _ = std::fs::remove_dir_all(tmp.path().join("blobs"));
    }
    // A redirection to /dev/null is not a closed stdout.
    let o = nrtucode()
        .arg("list")
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
}
