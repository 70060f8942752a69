//! `StdEnv` reads the environment the process actually has: each case starts this test binary
//! again as a child with an environment chosen here (`Command::env`, no `set_var` anywhere), and
//! the child reports what the resolver answered through `StdEnv`.
#![cfg(feature = "std")]

use std::ffi::OsString;
use std::process::Command;

use nrtucode::{FLAVOR_VAR, NoEnv, REMOVED_FLAG_VAR, ResolveErr, StdEnv, get_memory_image};

/// Set in a child: this test then reports instead of spawning.
const CHILD_MARK: &str = "NRTUCODE_STD_ENV_TEST_CHILD";

/// What the child reports: which explicit flavor flavor 0 answered like (by pointer), or the
/// error code.
fn report() -> String {
    match get_memory_image(7, 0, 0, &StdEnv) {
        Ok(live) => {
            let like = [1, 2, 3].into_iter().find(|&f| {
                get_memory_image(7, 0, f, &NoEnv).map(<[u8]>::as_ptr) == Ok(live.as_ptr())
            });
            format!("flavor {like:?}")
        }
        Err(e) => format!("code {}", e.code()),
    }
}

/// Runs this test in a child whose environment holds exactly `vars` of the two variables;
/// returns the child's report and its stderr.
fn child(vars: &[(&str, OsString)]) -> (String, String) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "std_env_answers_from_the_environment_it_was_started_with",
        ])
        .args(["--nocapture", "--test-threads=1"])
        .env(CHILD_MARK, "1")
        .env_remove(FLAVOR_VAR)
        .env_remove(REMOVED_FLAG_VAR);
    for (name, value) in vars {
        command.env(name, value);
    }
    let out = command.output().expect("run the child");
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let reported = stdout
        .lines()
        .find_map(|l| l.split_once("report: ").map(|(_, r)| r))
        .unwrap_or_else(|| panic!("no report in {stdout:?}"))
        .to_owned();
    (reported, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn std_env_answers_from_the_environment_it_was_started_with() {
    if std::env::var_os(CHILD_MARK).is_some() {
        println!("report: {}", report());
        return;
    }
    let flavor = |v: &str| vec![(FLAVOR_VAR, OsString::from(v))];
    let cases: Vec<(Vec<(&str, OsString)>, &str)> = vec![
        (vec![], "flavor Some(1)"),
        (flavor("debug"), "flavor Some(2)"),
        (flavor("DEBUG"), "flavor Some(2)"),
        (flavor("test"), "flavor Some(3)"),
        (flavor("Debug"), "flavor Some(1)"), // byte for byte, like strcmp
        (flavor("debug "), "flavor Some(1)"),
        (vec![(REMOVED_FLAG_VAR, "1".into())], "code 8"),
        (vec![(REMOVED_FLAG_VAR, "11".into())], "flavor Some(1)"),
        (
            vec![(REMOVED_FLAG_VAR, "0".into()), (FLAVOR_VAR, "test".into())],
            "flavor Some(3)",
        ),
    ];
    for (vars, expected) in &cases {
        let (reported, stderr) = child(vars);
        assert_eq!(&reported, expected, "{vars:?}");
        // The removal notice goes to stderr exactly when the flag trips.
        assert_eq!(
            stderr.contains("is a removed flag"),
            *expected == "code 8",
            "{vars:?}: {stderr}"
        );
    }
    assert_eq!(ResolveErr::RemovedFlag.code(), 8);
}

/// A value that is not UTF-8 is compared as the raw bytes the environment holds.
#[cfg(unix)]
#[test]
fn std_env_compares_raw_bytes() {
    use std::os::unix::ffi::OsStringExt;
    let value = |bytes: &[u8]| vec![(FLAVOR_VAR, OsString::from_vec(bytes.to_vec()))];
    assert_eq!(child(&value(b"test")).0, "flavor Some(3)");
    assert_eq!(child(&value(b"test\xff")).0, "flavor Some(1)");
    assert_eq!(child(&value(b"\xffdebug")).0, "flavor Some(1)");
}
