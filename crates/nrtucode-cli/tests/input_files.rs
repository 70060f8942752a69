//! What `nrtucode carve` does with an input that is not a library file: exit code and message
//! before anything is read (the carve library's typed errors for malformed bytes are tested in
//! `crates/nrtucode-carve/tests/malformed.rs`).

#[test]
fn a_device_is_refused_before_reading() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_nrtucode"))
        .args(["carve", "/dev/zero", "--out"])
        .arg(tempfile::tempdir().unwrap().path().join("out"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(66), "EX_NOINPUT: {err}");
    assert!(err.contains("/dev/zero: not a regular file"), "{err}");
}

#[test]
fn an_input_above_4_gib_is_refused_before_reading() {
    let tmp = tempfile::tempdir().unwrap();
    let big = tmp.path().join("big.so");
    // Sparse: no blocks are written.
    let file = std::fs::File::create(&big).unwrap();
    file.set_len((4 << 30) + 1)
        .expect("this test needs a filesystem with sparse files for its 4 GiB input");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_nrtucode"))
        .arg("carve")
        .arg(&big)
        .arg("--out")
        .arg(tmp.path().join("out"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(65), "EX_DATAERR: {err}");
    assert!(err.contains("(4 GiB) carve reads"), "{err}");
    assert!(!tmp.path().join("out").exists());
}
