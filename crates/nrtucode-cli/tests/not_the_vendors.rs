//! Carving a library that is not the vendor's says so in two lines, what it found instead and
//! where to go, with the carve's own details behind `-v`.

use std::process::Command;

/// `nrtucode carve LIB --out DIR [-v]`: exit code and stderr.
fn carve(lib: &std::path::Path, verbose: bool) -> (i32, String) {
    let out = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_nrtucode"));
    cmd.arg("carve")
        .arg(lib)
        .arg("--out")
        .arg(out.path().join("blobs"));
    if verbose {
        cmd.arg("-v");
    }
    let o = cmd.output().unwrap();
    assert!(!out.path().join("blobs").exists(), "nothing written");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_library_without_the_vendors_tables_is_named_as_such() {
    // This test program: an ELF file built by rustc, without image_list, getters or resolver.
    let lib = std::env::current_exe().unwrap();
    let (code, stderr) = carve(&lib, false);
    assert_eq!(code, 65, "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].ends_with(
            ": not the vendor's library: no image_list, no getters (such as \
             CAYMAN_NX_ACT_PERF_IRAM_get) and no exported nrtucode_get_memory_image"
        ),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with("nrtucode: hint: carve the vendor's"),
        "{stderr}"
    );
    assert!(lines[1].ends_with("(-v: what carve tried)"), "{stderr}");
    // -v adds what the carve tried.
    let (code, verbose) = carve(&lib, true);
    assert_eq!(code, 65);
    assert!(
        verbose.contains("nrtucode: note: what carve tried: "),
        "{verbose}"
    );
    assert!(verbose.starts_with(lines[0]), "{verbose}");
}
