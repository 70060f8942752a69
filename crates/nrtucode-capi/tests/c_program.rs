//! Compiles `tests/c/abi_test.c` with gcc against `include/nrtucode.h` and this crate's static
//! library, then its shared library, and runs it: every return code (0, 1, 2, 3 in the front
//! selection, 8, 22) must come back as the header documents.
//!
//! Then the switch a C program makes from the vendor's library to ours (docs/c-abi.md, "Switching a
//! C program from the vendor's library"): `tests/c/switch_test.c` is built once, linked against
//! `libnrtucode_capi.so` (whose SONAME `libnrtucode.so.0` it records), and run twice, once
//! finding our library under that name and once the vendor look-alike: same output, byte for
//! byte, on stdout and stderr.
//!
//! The libraries are the ones cargo built for this very test run (`target/<profile>/deps/`,
//! next to the test executable), so `cargo test -p nrtucode-capi --no-default-features
//! --features front` checks the front selection, where code 3 is reachable.

mod common;

use common::{CRATE_DIR, NATIVE_LIBS, deps_dir, gcc};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A new directory `NAME…` under cargo's target tmp for one test's programs and libraries,
/// removed when the guard drops, also when the test fails.
fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("{name}-"))
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("a scratch directory under CARGO_TARGET_TMPDIR")
}

fn compile(lib_args: &[&std::ffi::OsStr], exe: &Path) {
    let include = Path::new(CRATE_DIR).join("include");
    let source = Path::new(CRATE_DIR).join("tests/c/abi_test.c");
    let front = format!("-DNRTUCODE_EXPECT_FRONT={}", u8::from(nrtucode_capi::FRONT));
    let align = format!(
        "-DNRTUCODE_EXPECT_BLOB_ALIGN={}",
        nrtucode::catalog::BLOB_ALIGN
    );
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
#[cfg_attr(
    feature = "partition",
    ignore = "compares with the embedded answers; a build with feature partition answers from NRTUCODE_PARTITION (tests/install_c.rs checks it)"
)]
fn c_program_exercises_every_return_code() {
    let deps = deps_dir();
    let staticlib = deps.join("libnrtucode_capi.a");
    let cdylib = deps.join("libnrtucode_capi.so");
    for lib in [&staticlib, &cdylib] {
        assert!(lib.exists(), "{} not built by cargo", lib.display());
    }
    let library = if nrtucode_capi::FRONT {
        "front"
    } else {
        "full"
    };
    let scratch = scratch(&format!("capi-c-{library}"));
    let work = scratch.path();

    let exe_static = work.join("abi_test_static");
    let mut static_args: Vec<&std::ffi::OsStr> = vec![staticlib.as_os_str()];
    static_args.extend(NATIVE_LIBS.iter().map(std::ffi::OsStr::new));
    compile(&static_args, &exe_static);
    check(&run(&exe_static), "static");

    let exe_shared = work.join("abi_test_shared");
    let lib = install(&cdylib, &work.join("lib"));
    let lib_dir = format!("-L{}", lib.display());
    let rpath = format!("-Wl,-rpath,{}", lib.display());
    let shared_args: Vec<&std::ffi::OsStr> =
        vec![lib_dir.as_ref(), "-lnrtucode_capi".as_ref(), rpath.as_ref()];
    compile(&shared_args, &exe_shared);
    assert_eq!(needed(&exe_shared), ["libnrtucode.so.0"]);
    check(&run(&exe_shared), "shared");
}

/// `tool args file`'s stdout.
fn tool(name: &str, args: &[&str], file: &Path) -> String {
    let out = Command::new(name)
        .args(args)
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {name}: {e}"));
    assert!(out.status.success(), "{name} {args:?} {}", file.display());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `[...]` values of the dynamic-section lines tagged `tag` (`SONAME`, `NEEDED`).
fn dynamic(file: &Path, tag: &str) -> Vec<String> {
    tool("readelf", &["-d"], file)
        .lines()
        .filter(|l| l.contains(&format!("({tag})")))
        .filter_map(|l| Some(l.split_once('[')?.1.split_once(']')?.0.to_owned()))
        .collect()
}

/// The nrtucode libraries `exe` needs.
fn needed(exe: &Path) -> Vec<String> {
    dynamic(exe, "NEEDED")
        .into_iter()
        .filter(|n| n.contains("nrtucode"))
        .collect()
}

/// Installs `so` in `dir` under its SONAME, and under the file name `libnrtucode_capi.so` the
/// linker's `-lnrtucode_capi` finds here (scripts/install-c.sh installs `libnrtucode.so`).
/// Returns `dir`.
fn install(so: &Path, dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).expect("lib dir");
    for name in ["libnrtucode.so.0", "libnrtucode_capi.so"] {
        let link = dir.join(name);
        let _ = std::fs::remove_file(&link);
        std::fs::copy(so, &link).expect("install library");
    }
    dir.to_path_buf()
}

#[test]
#[cfg(target_os = "linux")]
#[cfg_attr(miri, ignore = "runs readelf")]
fn shared_library_has_a_versioned_soname() {
    let cdylib = deps_dir().join("libnrtucode_capi.so");
    assert_eq!(dynamic(&cdylib, "SONAME"), ["libnrtucode.so.0"]);
}

/// Runs `exe` finding its libraries in `lib_dir` only; returns (stdout, stderr) and checks,
/// through the loader's own trace, that the library it loads is the one in `lib_dir`.
fn run_with(exe: &Path, lib_dir: &Path) -> (Vec<u8>, Vec<u8>) {
    let traced = Command::new(exe)
        .env("LD_LIBRARY_PATH", lib_dir)
        .env("LD_TRACE_LOADED_OBJECTS", "1")
        .output()
        .expect("trace the loader");
    let trace = String::from_utf8_lossy(&traced.stdout);
    let expected = lib_dir.join("libnrtucode.so.0");
    assert!(
        trace.contains(&format!("libnrtucode.so.0 => {}", expected.display())),
        "{exe:?} does not load {expected:?}:\n{trace}"
    );
    let out = Command::new(exe)
        .env("LD_LIBRARY_PATH", lib_dir)
        .env_remove("NRTUCODE_MPLUS_ON_MARIANA")
        .env_remove("NEURON_UCODE_FLAVOR")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (out.stdout, out.stderr)
}

#[test]
#[cfg(target_os = "linux")]
#[cfg_attr(miri, ignore = "runs gcc and a C program")]
#[cfg_attr(
    feature = "partition",
    ignore = "compares with the embedded answers; a build with feature partition answers from NRTUCODE_PARTITION (tests/install_c.rs checks it)"
)]
fn one_c_program_answers_alike_with_the_vendor_lookalike_and_with_our_library() {
    use nrtucode_lookalike::{LibraryBuild, OptLevel, Options, build_shared_object, generate_c};

    let library = if nrtucode_capi::FRONT {
        LibraryBuild::Front
    } else {
        LibraryBuild::Full
    };
    let scratch = scratch(&format!("capi-switch-{}", library.name()));
    let work = scratch.path();

    // The vendor look-alike, installed under our SONAME: what the program finds decides.
    let c_source = work.join("lookalike.c");
    std::fs::write(&c_source, generate_c(&Options::new(library))).expect("write look-alike");
    let lookalike_so = work.join(library.library_name());
    build_shared_object(&c_source, &lookalike_so, OptLevel::O2, false).expect("gcc look-alike");
    let vendor_dir = install(&lookalike_so, &work.join("vendor"));
    let ours_dir = install(&deps_dir().join("libnrtucode_capi.so"), &work.join("ours"));

    // One program, built once against our library, C89 and pedantic.
    let include = Path::new(CRATE_DIR).join("include");
    let source = Path::new(CRATE_DIR).join("tests/c/switch_test.c");
    let exe = work.join("switch_test");
    // The twin-slot pairs the program checks, from the core's one list of them.
    let pairs: Vec<String> = nrtucode::ImageIndex::TWINS
        .iter()
        .map(|(a, b)| format!("{{{}, {}}}", a.as_usize(), b.as_usize()))
        .collect();
    std::fs::write(
        work.join("twin_slots.h"),
        format!(
            "/* Written by tests/c_program.rs from nrtucode::ImageIndex::TWINS. */\n\
             #define NRTUCODE_TEST_TWIN_SLOTS {{{}}}\n",
            pairs.join(", ")
        ),
    )
    .expect("write twin_slots.h");
    let lib_dir = format!("-L{}", ours_dir.display());
    gcc(&[
        "-std=c89".as_ref(),
        "-pedantic".as_ref(),
        "-Wall".as_ref(),
        "-Wextra".as_ref(),
        "-Werror".as_ref(),
        "-I".as_ref(),
        include.as_os_str(),
        "-I".as_ref(),
        work.as_os_str(),
        source.as_os_str(),
        "-o".as_ref(),
        exe.as_os_str(),
        lib_dir.as_ref(),
        "-lnrtucode_capi".as_ref(),
    ]);
    assert_eq!(needed(&exe), ["libnrtucode.so.0"]);

    let (vendor_out, vendor_err) = run_with(&exe, &vendor_dir);
    let (ours_out, ours_err) = run_with(&exe, &ours_dir);
    let text = String::from_utf8_lossy(&ours_out);
    // The run reached every answer: success, index, not found, removed flag.
    for answer in [" 0 ", " 1\n", " 2\n", " 8\n"] {
        assert!(text.contains(answer), "no {answer:?} in the output");
    }
    // Every twin pair was checked (what it answers is compared with the vendor's below).
    for (a, b) in nrtucode::ImageIndex::TWINS {
        let line = format!("\ntwin {} {} ", a.as_usize(), b.as_usize());
        assert!(text.contains(&line), "no {line:?} in the output");
    }
    assert!(
        text.lines().count() > 40 * 6 * 11,
        "{} lines",
        text.lines().count()
    );
    if vendor_out != ours_out {
        let first = String::from_utf8_lossy(&vendor_out)
            .lines()
            .zip(text.lines())
            .find(|(v, o)| v != o)
            .map(|(v, o)| format!("vendor: {v}\nours:   {o}"));
        panic!("outputs differ; first difference:\n{first:?}");
    }
    assert_eq!(
        String::from_utf8_lossy(&vendor_err),
        String::from_utf8_lossy(&ours_err)
    );
    assert_eq!(String::from_utf8_lossy(&ours_err).lines().count(), 1);
}
