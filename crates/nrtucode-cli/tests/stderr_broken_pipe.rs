//! The removed-flag notice is written like C's `fprintf(stderr, ...)`: when stderr is a broken
//! pipe the notice is lost and the lookup still answers code 8. (With `eprintln!` the notice
//! panicked there, so the tool exited 101 and a C host of the C ABI aborted.)

use std::process::{Command, Stdio};

#[test]
fn removed_flag_answers_8_when_stderr_is_a_broken_pipe() {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader); // every write to stderr now fails with EPIPE (Rust ignores SIGPIPE)
    let status = Command::new(env!("CARGO_BIN_EXE_nrtucode"))
        .args(["resolve", "7", "iram", "--flavor", "perf"])
        .env("NRTUCODE_MPLUS_ON_MARIANA", "1")
        .stdout(Stdio::null())
        .stderr(writer)
        .status()
        .expect("run nrtucode");
    assert_eq!(status.code(), Some(8), "{status:?}");
}
