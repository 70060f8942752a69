//! The fixed process environment the resolvers are measured in (`cargo xtask bench --measure instructions`,
//! `cargo xtask bench`): 30 variables of a typical host running the accelerator runtime (a login
//! shell's, two `NEURON_RT_*` runtime settings that share the `NEURON_` prefix with
//! `NEURON_UCODE_FLAVOR`, and neither of the two variables the resolver reads, so every getenv
//! scans to the end). Under valgrind the process sees one more, valgrind's `LD_PRELOAD`.

use std::ffi::{OsStr, OsString};
use std::process::Command;

/// The rows of the `instructions` and `bench` tables, in order: path, its C counterpart, its
/// ideal counterpart. `bench` has no partition benchmarks and leaves the `partition_` rows out.
pub const ROWS: [(&str, Option<&str>, Option<&str>); 13] = [
    ("ours_explicit", Some("c_explicit"), Some("ideal_explicit")),
    (
        "ours_explicit_std",
        Some("c_explicit"),
        Some("ideal_explicit"),
    ),
    ("ours_auto_std", Some("c_auto"), None),
    ("ours_auto_snapshot", Some("c_auto"), None),
    ("ours_hwdecode", Some("c_hwdecode"), Some("ideal_hwdecode")),
    (
        "partition_explicit",
        Some("c_explicit"),
        Some("ideal_explicit"),
    ),
    (
        "partition_hwdecode",
        Some("c_hwdecode"),
        Some("ideal_hwdecode"),
    ),
    ("c_explicit", None, None),
    ("c_auto", None, None),
    ("c_hwdecode", None, None),
    ("ideal_explicit", None, None),
    ("ideal_hwdecode", None, None),
    ("empty", None, None),
];

/// The 30 variables, in the order the process sees them.
pub const MEASURE_ENV: [(&str, &str); 30] = [
    ("HOSTNAME", "trn1-host-0042"),
    ("SHELL", "/bin/bash"),
    ("TERM", "xterm-256color"),
    ("HISTSIZE", "1000"),
    ("USER", "ubuntu"),
    (
        "LS_COLORS",
        "rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:do=01;35:bd=40;33;01",
    ),
    ("MAIL", "/var/spool/mail/ubuntu"),
    (
        "PATH",
        "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    ),
    ("PWD", "/home/ubuntu"),
    ("LANG", "C.UTF-8"),
    ("HISTCONTROL", "ignoredups"),
    ("SHLVL", "1"),
    ("HOME", "/home/ubuntu"),
    ("LOGNAME", "ubuntu"),
    ("SSH_CONNECTION", "10.0.0.2 50022 10.0.0.42 22"),
    ("SSH_CLIENT", "10.0.0.2 50022 22"),
    ("SSH_TTY", "/dev/pts/0"),
    ("XDG_SESSION_ID", "7"),
    ("XDG_RUNTIME_DIR", "/run/user/1000"),
    ("XDG_DATA_DIRS", "/usr/local/share:/usr/share"),
    ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
    ("LESSOPEN", "||/usr/bin/lesspipe.sh %s"),
    ("EDITOR", "vim"),
    ("PAGER", "less"),
    ("TZ", "UTC"),
    ("OLDPWD", "/home/ubuntu/src"),
    ("CARGO_HOME", "/home/ubuntu/.cargo"),
    ("NEURON_RT_LOG_LEVEL", "WARN"),
    ("NEURON_RT_VISIBLE_CORES", "0-1"),
    ("_", "/usr/bin/env"),
];

/// `program` run with [`MEASURE_ENV`], then `extra`, as its whole environment, in that order
/// (`env -i NAME=value… PROGRAM`: `Command::envs` would pass them sorted by name, and the order
/// shows in the counts, e.g. 958.7 against 967.0 instructions for flavor 0 with `StdEnv`).
pub fn command(program: impl AsRef<OsStr>, extra: &[(&str, &OsStr)]) -> Command {
    let mut command = Command::new("env");
    command.arg("-i");
    for (name, value) in MEASURE_ENV {
        command.arg(format!("{name}={value}"));
    }
    for (name, value) in extra {
        let mut pair = OsString::from(name);
        pair.push("=");
        pair.push(value);
        command.arg(pair);
    }
    command.arg(program);
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirty_distinct_variables_and_neither_the_resolver_reads() {
        let mut names: Vec<&str> = MEASURE_ENV.iter().map(|(k, _)| *k).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 30);
        for read in ["NEURON_UCODE_FLAVOR", "NRTUCODE_MPLUS_ON_MARIANA"] {
            assert!(!names.contains(&read), "{read}");
        }
        assert_eq!(names.iter().filter(|n| n.starts_with("NEURON_")).count(), 2);
    }

    #[test]
    fn the_command_passes_the_variables_in_order_then_the_extra_ones() {
        let c = command("/bin/true", &[("CRITERION_HOME", OsStr::new("/t/c"))]);
        let args: Vec<&OsStr> = c.get_args().collect();
        assert_eq!(c.get_program(), "env");
        assert_eq!(args[0], "-i");
        assert_eq!(args[1], "HOSTNAME=trn1-host-0042");
        assert_eq!(args[30], "_=/usr/bin/env");
        assert_eq!(args[31], "CRITERION_HOME=/t/c");
        assert_eq!(args[32], "/bin/true");
        assert_eq!(args.len(), 33);
    }
}
