//! `nrtucode pack`, `key`, `inspect`, and `list` / `resolve` / `prof --partition`, end to end
//! through the binary: a partition of the fixtures answers exactly as the embedded tables
//! (same output, exit codes and messages), every refusal exits with its reason, and packing
//! is deterministic whatever the directory, umask, time zone or locale.

mod partition_common;
use partition_common::{key, nrtucode, public, text};

use std::path::{Path, PathBuf};
use std::process::Command;

macro_rules! run {
    ($cwd:expr, $($arg:expr),* $(,)?) => {
        nrtucode(&[$(std::ffi::OsStr::new(&$arg)),*], $cwd)
    };
}

fn pack_fixtures(dir: &Path, class: &str, extra: &[&str]) -> PathBuf {
    let out = dir.join(format!("{class}.part"));
    let mut args: Vec<std::ffi::OsString> = vec![
        "pack".into(),
        "--fixtures".into(),
        class.into(),
        "-o".into(),
        out.clone().into(),
    ];
    args.extend(extra.iter().map(Into::into));
    let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let o = nrtucode(&refs, dir);
    assert!(o.status.success(), "{}", text(&o.stderr));
    out
}

#[test]
fn a_fixtures_partition_answers_exactly_like_the_embedded_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let key = key().display().to_string();
    let part = pack_fixtures(tmp.path(), "full", &["--key", &key]);
    let part = part.display().to_string();
    let public = public().display().to_string();
    let with = |args: &[&str]| {
        let mut a: Vec<&str> = args.to_vec();
        a.extend(["--partition", &part, "--public-key", &public]);
        let refs: Vec<&std::ffi::OsStr> = a.iter().map(std::ffi::OsStr::new).collect();
        nrtucode(&refs, tmp.path())
    };
    let without = |args: &[&str]| {
        let refs: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
        nrtucode(&refs, tmp.path())
    };
    let cases: &[&[&str]] = &[
        &["list"],
        &["list", "--json"],
        &["list", "--gen", "maverick", "--json"],
        &[
            "resolve", "7", "iram", "--flavor", "perf", "--sha256", "--hex=32",
        ],
        &["resolve", "7", "sram", "--flavor", "perf"],
        &["resolve", "37", "dram", "--flavor", "debug", "--sha256"],
        &["resolve", "36", "iram", "--flavor", "perf"],
        &["resolve", "7", "iram", "--flavor", "dkl-test"],
        &["resolve", "99", "iram"],
        &["resolve", "7", "--prof", "table", "--sha256"],
        &["resolve", "0", "--prof", "cam"],
        &["prof", "7"],
        &["prof", "16", "--json"],
        &["prof", "0", "--json"],
        &["prof", "99"],
    ];
    for case in cases {
        let (a, b) = (with(case), without(case));
        assert_eq!(
            a.status.code(),
            b.status.code(),
            "{case:?}: {}",
            text(&a.stderr)
        );
        assert_eq!(text(&a.stdout), text(&b.stdout), "{case:?}");
        assert_eq!(text(&a.stderr), text(&b.stderr), "{case:?}");
        assert!(!a.stdout.is_empty() || !a.stderr.is_empty(), "{case:?}");
    }
    // The exit code is the resolver's, over a partition too.
    assert_eq!(
        with(&["resolve", "36", "iram", "--flavor", "perf"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(with(&["resolve", "99", "iram"]).status.code(), Some(1));
}

#[test]
fn a_partition_is_refused_without_its_key() {
    let tmp = tempfile::tempdir().unwrap();
    let key = key().display().to_string();
    let signed = pack_fixtures(tmp.path(), "full", &["--key", &key]);
    let unsigned = pack_fixtures(tmp.path(), "front", &["--unsigned"]);
    let t = tmp.path();
    // No key: a usage error that says what to give.
    let o = run!(t, "resolve", "7", "iram", "--partition", signed);
    assert_eq!(o.status.code(), Some(64));
    assert!(
        text(&o.stderr).contains("--public-key"),
        "{}",
        text(&o.stderr)
    );
    // Skipping the signature is refused for a signed pack...
    let o = run!(
        t,
        "list",
        "--partition",
        signed,
        "--insecure-skip-signature"
    );
    assert_eq!(o.status.code(), Some(65));
    assert!(text(&o.stderr).contains("signed"), "{}", text(&o.stderr));
    // ... and works, when said in so many words, for an unsigned one.
    let o = run!(
        t,
        "resolve",
        "7",
        "iram",
        "--flavor",
        "perf",
        "--partition",
        unsigned,
        "--insecure-skip-signature"
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = run!(
        t,
        "resolve",
        "7",
        "iram",
        "--flavor",
        "debug",
        "--partition",
        unsigned,
        "--insecure-skip-signature"
    );
    assert_eq!(o.status.code(), Some(3), "front: DEBUG is a NULL getter");
    // A key given to an unsigned pack, another key, a changed byte.
    let o = run!(t, "list", "--partition", unsigned, "--public-key", public());
    assert_eq!(o.status.code(), Some(65));
    assert!(text(&o.stderr).contains("unsigned"), "{}", text(&o.stderr));
    let other = t.join("other.pem");
    assert!(run!(t, "key", "generate", "-o", other).status.success());
    let other_pub = t.join("other.pub.pem");
    assert!(
        run!(t, "key", "public", other, "-o", other_pub)
            .status
            .success()
    );
    let o = run!(t, "list", "--partition", signed, "--public-key", other_pub);
    assert_eq!(o.status.code(), Some(65));
    assert!(
        text(&o.stderr).contains("unknown key"),
        "{}",
        text(&o.stderr)
    );
    let mut bytes = std::fs::read(&signed).unwrap();
    bytes[0x18] ^= 1; // the security counter: signed
    let tampered = t.join("tampered.part");
    std::fs::write(&tampered, &bytes).unwrap();
    let o = run!(t, "list", "--partition", tampered, "--public-key", public());
    assert_eq!(o.status.code(), Some(65));
    assert!(
        text(&o.stderr).contains("bad signature"),
        "{}",
        text(&o.stderr)
    );
}

/// The bare-metal template's minimum security counter (`MIN_SECURITY_COUNTER` in
/// examples/bare-metal/src/part.rs).
const TEMPLATE_MIN_SECURITY_COUNTER: u32 = 1;

#[test]
fn a_signed_pack_with_defaults_passes_the_templates_minimum() {
    let template = include_str!("../../../examples/bare-metal/src/part.rs");
    assert!(
        template.contains(&format!(
            "pub const MIN_SECURITY_COUNTER: u32 = {TEMPLATE_MIN_SECURITY_COUNTER};"
        )),
        "the template's MIN_SECURITY_COUNTER changed: change pack's default with it"
    );
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let key = key().display().to_string();
    let part = pack_fixtures(t, "full", &["--key", &key]);
    let min = TEMPLATE_MIN_SECURITY_COUNTER.to_string();
    let o = run!(
        t,
        "inspect",
        part,
        "--public-key",
        public(),
        "--min-security-counter",
        min
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = run!(t, "inspect", part, "--json");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["header"]["security_counter"],
        TEMPLATE_MIN_SECURITY_COUNTER
    );
}

#[test]
fn inspect_checks_structure_signature_counter_and_digests() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let key = key().display().to_string();
    let part = pack_fixtures(t, "full", &["--key", &key, "--security-counter", "4"]);
    let o = run!(
        t,
        "inspect",
        part,
        "--public-key",
        public(),
        "--min-security-counter",
        "4"
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("table class") && out.contains("full"), "{out}");
    assert!(out.contains("yes, key ID 5065d9189b5b8976"), "{out}");
    let o = run!(t, "inspect", part, "--json", "--public-key", public());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["format"], "nrtucode-inspect/3");
    assert_eq!(v["verdict"], "verified");
    assert_eq!(v["checks"]["signature"], "ok");
    assert_eq!(v["header"]["security_counter"], 4);
    assert_eq!(v["image_list"].as_array().unwrap().len(), 38);
    // Getters are fields, not strings (nrtucode-inspect/3).
    let getters = &v["image_list"][0]["descriptors"][0]["getters"];
    assert_eq!(
        getters[0],
        serde_json::json!({"kind": "blob", "blob": 0}),
        "{getters}"
    );
    assert_eq!(getters.as_array().unwrap().len(), 4);
    let all: Vec<&serde_json::Value> = v["image_list"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["descriptors"].as_array().unwrap())
        .flat_map(|d| d["getters"].as_array().unwrap())
        .collect();
    assert!(
        all.iter()
            .any(|g| g["kind"] == "cursor-end" && g["blob"].is_u64())
    );
    assert!(all.iter().all(|g| g.is_null() || g["blob"].is_u64()));
    let prof = &v["hwdecode_table_list"][7];
    assert_eq!(prof["cam"]["kind"], "blob", "{prof}");
    assert!(v["hwdecode_table_list"][36]["cam"].is_null());
    assert_eq!(
        v["image_list"][36]["descriptors"].as_array().unwrap().len(),
        0
    );
    assert_eq!(
        v["toc"].as_array().unwrap().len(),
        nrtucode::catalog::DISTINCT_BLOB_COUNT
    );
    // Rollback.
    let o = run!(t, "inspect", part, "--min-security-counter", "5");
    assert_eq!(o.status.code(), Some(65));
    assert!(
        text(&o.stderr).contains("security counter 4 is below the minimum 5"),
        "{}",
        text(&o.stderr)
    );
    // A changed blob byte: the digest names the blob and its first user.
    let mut bytes = std::fs::read(&part).unwrap();
    let blobs_off = u32::from_le_bytes(bytes[0x14..0x18].try_into().unwrap()) as usize;
    bytes[blobs_off + 5] ^= 0x40;
    let bad = t.join("bad.part");
    std::fs::write(&bad, &bytes).unwrap();
    let o = run!(t, "inspect", bad, "--public-key", public());
    assert_eq!(o.status.code(), Some(65));
    let err = text(&o.stderr);
    assert!(
        err.contains("blob 0 (image_list slot 0 flavor 1 IRAM): SHA-256 mismatch"),
        "{err}"
    );
    // Garbage and erased flash.
    std::fs::write(&bad, [0xffu8; 200]).unwrap();
    let o = run!(t, "inspect", bad);
    assert_eq!(o.status.code(), Some(65));
    assert!(
        text(&o.stderr).contains("erased flash"),
        "{}",
        text(&o.stderr)
    );
    let o = run!(t, "inspect", t.join("missing.part"));
    assert_eq!(o.status.code(), Some(66));
    let o = run!(t, "inspect", t);
    assert_eq!(o.status.code(), Some(66), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("a directory"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn packing_is_the_same_from_anywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b/c");
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let pack = |cwd: &Path, umask: &str, tz: &str, lang: &str| {
        let out = cwd.join("p.part");
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "umask {umask} && exec \"$0\" pack --fixtures front -o p.part --key \"$1\" --security-counter 3"
            ))
            .arg(env!("CARGO_BIN_EXE_nrtucode"))
            .arg(key())
            .current_dir(cwd)
            .env("TZ", tz)
            .env("LC_ALL", lang)
            .env("LANG", lang)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        std::fs::read(out).unwrap()
    };
    let first = pack(&a, "022", "UTC", "C");
    let second = pack(&b, "077", "Asia/Kolkata", "de_DE.UTF-8");
    assert_eq!(first, second);
}

#[test]
fn pack_needs_a_key_or_an_explicit_unsigned() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let o = run!(t, "pack", "--fixtures", "full", "-o", "x.part");
    assert_eq!(o.status.code(), Some(64));
    assert!(!t.join("x.part").exists());
    let o = run!(
        t,
        "pack",
        "--fixtures",
        "full",
        "-o",
        "x.part",
        "--key",
        t.join("nokey.pem")
    );
    assert_eq!(o.status.code(), Some(66));
    assert!(!t.join("x.part").exists());
    std::fs::write(
        t.join("bad.pem"),
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
    )
    .unwrap();
    let o = run!(
        t,
        "pack",
        "--fixtures",
        "full",
        "-o",
        "x.part",
        "--key",
        t.join("bad.pem")
    );
    assert_eq!(o.status.code(), Some(65));
    assert!(!t.join("x.part").exists());
    assert!(
        std::fs::read_dir(t).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with(".tmp"))
    );
}

#[test]
fn key_generate_never_replaces_and_keeps_the_key_private() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let k = t.join("k.pem");
    assert!(run!(t, "key", "generate", "-o", k).status.success());
    let before = std::fs::read(&k).unwrap();
    let o = run!(t, "key", "generate", "-o", k);
    assert_eq!(o.status.code(), Some(73));
    assert_eq!(std::fs::read(&k).unwrap(), before);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(
            std::fs::metadata(&k).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let o = run!(t, "key", "public", k, "--format", "rust");
    assert!(o.status.success());
    assert!(text(&o.stdout).contains("nrtucode::partition::PublicKey::from_bytes(["));
}

#[test]
fn a_library_and_its_carved_directory_pack_to_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    use nrtucode_lookalike::{LibraryBuild, OptLevel, Options, build_shared_object, write_sources};
    std::fs::create_dir_all(t.join("la")).unwrap();
    let written = write_sources(&t.join("la"), &Options::new(LibraryBuild::Front)).unwrap();
    build_shared_object(
        &written.c_source,
        &t.join("la/libnrtucode.so"),
        OptLevel::O2,
        false,
    )
    .expect("gcc builds the look-alike");
    let lib = t.join("la/libnrtucode.so");
    assert!(
        run!(t, "carve", lib, "--out", t.join("blobs"))
            .status
            .success()
    );
    let o = run!(t, "pack", lib, "-o", "from-lib.part", "--key", key());
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = run!(
        t,
        "pack",
        "--blob-dir",
        t.join("blobs"),
        "-o",
        "from-dir.part",
        "--key",
        key()
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (a, b) = (
        std::fs::read(t.join("from-lib.part")).unwrap(),
        std::fs::read(t.join("from-dir.part")).unwrap(),
    );
    assert_eq!(a, b);
    let o = run!(
        t,
        "inspect",
        "from-lib.part",
        "--public-key",
        public(),
        "--json"
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["header"]["class"], "front", "{v}");
    assert_eq!(v["verdict"], "verified");
    // A library's blobs: no fixtures note in the text output.
    let public = public().display().to_string();
    for args in [&["list"][..], &["resolve", "7", "iram", "--sha256"]] {
        let mut a: Vec<&str> = args.to_vec();
        a.extend(["--partition", "from-lib.part", "--public-key", &public]);
        let refs: Vec<&std::ffi::OsStr> = a.iter().map(std::ffi::OsStr::new).collect();
        let o = nrtucode(&refs, t);
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert!(!text(&o.stderr).contains("fixtures"), "{}", text(&o.stderr));
    }
}

#[test]
fn text_output_of_the_fixtures_says_so_on_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let note = "nrtucode: note: blob source: the built-in fixtures, not the vendor's blobs";
    // The embedded tables of this build (no NRTUCODE_BLOB_DIR), and a fixtures partition.
    let part = pack_fixtures(t, "full", &["--key", &key().display().to_string()]);
    let with_part = |args: &[&str]| {
        let mut a: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        a.extend(["--partition".into(), part.clone().into()]);
        a.extend(["--public-key".into(), public().into()]);
        a
    };
    let cases: Vec<Vec<std::ffi::OsString>> = vec![
        vec!["list".into()],
        vec![
            "resolve".into(),
            "7".into(),
            "iram".into(),
            "--sha256".into(),
        ],
        with_part(&["list"]),
        with_part(&["resolve", "7", "iram", "--sha256"]),
    ];
    for args in &cases {
        let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let o = nrtucode(&refs, t);
        assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).lines().any(|l| l.starts_with(note)),
            "{args:?}: {}",
            text(&o.stderr)
        );
        assert!(!text(&o.stdout).contains("note"), "{args:?}");
    }
    // JSON says it in blob_source, and nothing on stderr.
    let o = run!(t, "list", "--json");
    assert!(o.status.success());
    assert!(o.stderr.is_empty(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["blob_source"], "fixtures");
}

#[test]
fn every_failure_under_json_prints_a_json_error_object() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    std::fs::write(t.join("garbage.part"), b"not a partition").unwrap();
    let cases: &[(&[&str], u8)] = &[
        (&["inspect", "missing.part", "--json"], 66),
        (&["inspect", ".", "--json"], 66),
        (
            &["inspect", "missing.part", "--json", "--class", "full"],
            64,
        ),
        (&["list", "--json", "--partition", "missing.part"], 66),
        (&["list", "--json", "--partition", "garbage.part"], 65),
        (&["prof", "7", "--json", "--partition", "missing.part"], 66),
        (&["list", "--json", "--gen", "nope"], 64),
        (&["inspect", "--json"], 64),
    ];
    for (args, code) in cases {
        let refs: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
        let o = nrtucode(&refs, t);
        assert_eq!(o.status.code(), Some(i32::from(*code)), "{args:?}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: no JSON on stdout ({e}): {}", text(&o.stdout)));
        assert_eq!(v["format"], "nrtucode-error/1", "{args:?}");
        assert_eq!(v["exit_code"], *code, "{args:?}");
        let error = v["error"].as_str().unwrap();
        assert!(
            !error.is_empty() && text(&o.stderr).contains(error),
            "{args:?}: {error:?} / {}",
            text(&o.stderr)
        );
    }
    // Without --json, stdout stays empty.
    let o = run!(t, "inspect", "missing.part");
    assert_eq!(o.status.code(), Some(66));
    assert!(o.stdout.is_empty());
}
