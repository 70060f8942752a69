//! Compiles `tests/c/abi_test.c` with gcc against `include/nrtucode.h` and this crate's static
//! library, then its shared library, and runs it: every return code (0, 1, 2, 3 in the front
//! selection, 8, 22) must come back as the header documents.
//!
//! The libraries are the ones cargo built for this very test run (`target/<profile>/deps/`,
//! next to the test executable), so `cargo test -p nrtucode-capi --no-default-features
//! --features front` checks the front selection, where code 3 is reachable.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CRATE_DIR: &str = env!("CARGO_MANIFEST_DIR");
/// Native libraries a Rust staticlib needs on linux-gnu (`rustc --print native-static-libs`).
const NATIVE_LIBS: [&str; 7] = [
    "-lgcc_s",
    "-lutil",
    "-lrt",
    "-lpthread",
    "-lm",
    "-ldl",
    "-lc",
];

fn deps_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent().expect("deps directory").to_path_buf()
}

fn gcc(args: &[&std::ffi::OsStr]) {
    let cc = std::env::var("CC").unwrap_or_else(|_| "gcc".to_owned());
    let out = Command::new(&cc)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cc}: {e}"));
    assert!(
        out.status.success(),
        "{cc} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn compile(lib_args: &[&std::ffi::OsStr], exe: &Path) {
    let include = Path::new(CRATE_DIR).join("include");
    let source = Path::new(CRATE_DIR).join("tests/c/abi_test.c");
    let front = format!("-DNRTUCODE_EXPECT_FRONT={}", u8::from(nrtucode_capi::FRONT));
    let align = format!("-DNRTUCODE_EXPECT_BLOB_ALIGN={}", nrtucode::BLOB_ALIGN);
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "-std=c11".as_ref(),
        "-Wall".as_ref(),
        "-Wextra".as_ref(),
        "-Werror".as_ref(),
        front.as_ref(),
        align.as_ref(),
        "-I".as_ref(),
        include.as_os_str(),
        source.as_os_str(),
        "-o".as_ref(),
        exe.as_os_str(),
    ];
    args.extend_from_slice(lib_args);
    gcc(&args);
}

fn run(exe: &Path) -> Output {
    Command::new(exe)
        // cargo's LD_LIBRARY_PATH lists target/<profile>, whose uplifted copy of the shared
        // library can be older than the one in deps/ this test just built; the program's
        // rpath names deps/ and must decide.
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("NRTUCODE_MPLUS_ON_MARIANA")
        .env_remove("NEURON_UCODE_FLAVOR")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()))
}

fn check(output: &Output, what: &str) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    print!("{what}: {stdout}");
    assert!(output.status.success(), "{what}: {stdout}\n{stderr}");
    let summary = stdout
        .lines()
        .find_map(|l| l.strip_prefix("c_abi: "))
        .expect("summary line");
    let passed: u32 = summary
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .expect("passed count");
    assert!(passed >= 38, "{what}: only {passed} checks ran");
    assert!(summary.ends_with(" 0 failed"), "{what}: {summary}");
    // Exactly one removal notice: the one call that tripped the removed flag.
    let notices: Vec<&str> = stderr.lines().collect();
    assert_eq!(notices.len(), 1, "{what}: stderr {stderr:?}");
    assert!(
        notices[0].contains("NRTUCODE_MPLUS_ON_MARIANA"),
        "{what}: {stderr:?}"
    );
}

#[test]
#[cfg_attr(miri, ignore = "runs gcc and a C program")]
fn c_program_exercises_every_return_code() {
    let deps = deps_dir();
    let staticlib = deps.join("libnrtucode_capi.a");
    let cdylib = deps.join("libnrtucode_capi.so");
    for lib in [&staticlib, &cdylib] {
        assert!(lib.exists(), "{} not built by cargo", lib.display());
    }
    let variant = if nrtucode_capi::FRONT {
        "front"
    } else {
        "full"
    };
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("capi-c-{variant}"));
    std::fs::create_dir_all(&work).expect("work dir");

    let exe_static = work.join("abi_test_static");
    let mut static_args: Vec<&std::ffi::OsStr> = vec![staticlib.as_os_str()];
    static_args.extend(NATIVE_LIBS.iter().map(std::ffi::OsStr::new));
    compile(&static_args, &exe_static);
    check(&run(&exe_static), "static");

    let exe_shared = work.join("abi_test_shared");
    let lib_dir = format!("-L{}", deps.display());
    let rpath = format!("-Wl,-rpath,{}", deps.display());
    let shared_args: Vec<&std::ffi::OsStr> = vec![
        lib_dir.as_ref(),
        "-l:libnrtucode_capi.so".as_ref(),
        rpath.as_ref(),
    ];
    compile(&shared_args, &exe_shared);
    check(&run(&exe_shared), "shared");
}
