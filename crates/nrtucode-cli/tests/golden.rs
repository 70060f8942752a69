//! Golden-output tests for `list`, `resolve` and `prof`, and a transcript of the binary behaving
//! as a Unix tool (exit codes, `-o -`, messages, plain-text help). Set `UPDATE_GOLDEN=1` to
//! rewrite the files under `tests/golden/` from the current output (then review the diff).
//!
//! Most outputs hash the embedded blobs, so they describe the built-in fixture set: in a build
//! with `NRTUCODE_BLOB_DIR` (`cfg(nrtucode_blob_dir)`, set by this crate's build script) those
//! tests are ignored, and [`fixture_golden`] fails if it ever runs on other blobs.

use std::path::{Path, PathBuf};
use std::process::Command;

use nrtucode::catalog::{BLOB_SOURCE, BlobSource};
use nrtucode::{Generation, ImageIndex, NoEnv, Request};
use nrtucode_cli::commands::resolve::{Show, resolve};
use nrtucode_cli::commands::{list, prof};
use sha2::{Digest, Sha256};

/// [`golden`] for an output that depends on the embedded blobs: the golden files describe the
/// built-in fixtures.
fn fixture_golden(name: &str, actual: &str) {
    assert_eq!(
        BLOB_SOURCE,
        BlobSource::Fixtures,
        "{name} describes the built-in fixtures; this build embeds NRTUCODE_BLOB_DIR"
    );
    golden(name, actual);
}

/// Compares `actual` with `tests/golden/<name>` (or rewrites it with `UPDATE_GOLDEN=1`).
fn golden(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_GOLDEN=1)", path.display()));
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b);
        panic!(
            "{} differs from the output (first differing line {:?}); rerun with UPDATE_GOLDEN=1 and review the diff",
            path.display(),
            line.map(|l| l + 1)
        );
    }
}

#[test]
#[cfg_attr(
    nrtucode_blob_dir,
    ignore = "the golden files describe the built-in fixtures; NRTUCODE_BLOB_DIR is set"
)]
fn list_table() {
    let text = list::render(None, false);
    // All 38 profiler slots, both kinds: 76 rows, slot 36's with no class or engine.
    let prof_rows: Vec<&str> = text.lines().filter(|l| l.contains(" PROF ")).collect();
    assert_eq!(prof_rows.len(), 76);
    assert_eq!(
        prof_rows
            .iter()
            .filter(|l| l.starts_with("36 ") && l.ends_with(" null"))
            .count(),
        2
    );
    fixture_golden("list.txt", &text);
}

#[test]
fn list_json_lists_all_76_profiler_getters() {
    let v: serde_json::Value = serde_json::from_str(&list::render(None, true)).unwrap();
    let prof: Vec<&serde_json::Value> = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["table"] == "hwdecode_table_list")
        .collect();
    assert_eq!(prof.len(), 76);
    let gap: Vec<&&serde_json::Value> = prof.iter().filter(|e| e["slot"] == 36).collect();
    assert_eq!(gap.len(), 2);
    for e in gap {
        assert_eq!(e["generation"], "MAVERICK");
        for key in ["class", "engine", "symbol", "size", "sha256"] {
            assert!(e[key].is_null(), "{key}: {e}");
        }
        assert_eq!(e["state"], "null");
    }
}

#[test]
#[cfg_attr(
    nrtucode_blob_dir,
    ignore = "the golden files describe the built-in fixtures; NRTUCODE_BLOB_DIR is set"
)]
fn list_json_one_generation() {
    let json = list::render(Some(Generation::MarianaPlus), true);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(
        v["entries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["generation"] == "MARIANA_PLUS")
    );
    fixture_golden("list-mariana-plus.json", &json);
}

#[test]
#[cfg_attr(
    nrtucode_blob_dir,
    ignore = "the golden files describe the built-in fixtures; NRTUCODE_BLOB_DIR is set"
)]
fn resolve_cases() {
    let image = Request::image;
    let shown = |hex, sha256| Show { hex, sha256 };
    let cases: [(&str, Request, Show); 9] = [
        (
            "7 iram --flavor perf --sha256 --hex=48",
            image(7, 0, 1),
            shown(Some(48), true),
        ),
        (
            "7 sram --flavor perf --sha256",
            image(7, 2, 1),
            shown(None, true),
        ),
        (
            "34 sram --flavor 1 --sha256",
            image(34, 2, 1),
            shown(None, true),
        ),
        ("38 0", image(38, 0, 0), Show::default()),
        ("36 0 --flavor 1", image(36, 0, 1), Show::default()),
        ("7 iram --flavor dkl-perf", image(7, 0, 17), Show::default()),
        ("cayman-nx-act dram", image(7, 1, 0), Show::default()),
        (
            "9 --prof table --sha256",
            Request::prof(9, 1),
            shown(None, true),
        ),
        ("0 --prof cam", Request::prof(0, 0), Show::default()),
    ];
    let mut out = String::new();
    for (args, q, show) in cases {
        let r = resolve(q, show, &NoEnv);
        out.push_str(&format!(
            "$ nrtucode resolve {args}\n{}{}exit {}\n\n",
            r.summary, r.error, r.code
        ));
    }
    // The effective flavor of auto, from an injected environment.
    let debug = [("NEURON_UCODE_FLAVOR", "debug")];
    let r = resolve(image(7, 0, 0), Show::default(), &debug);
    out.push_str(&format!(
        "$ NEURON_UCODE_FLAVOR=debug nrtucode resolve 7 iram\n{}{}exit {}\n",
        r.summary, r.error, r.code
    ));
    assert!(r.summary.contains("flavor DEBUG (auto"), "{}", r.summary);
    fixture_golden("resolve.txt", &out);
}

#[test]
#[cfg_attr(
    nrtucode_blob_dir,
    ignore = "the golden files describe the built-in fixtures; NRTUCODE_BLOB_DIR is set"
)]
fn prof_table_and_json() {
    let human = prof::render(ImageIndex::MARIANA_NX_DVE, false);
    assert_eq!(human.code, 0, "{}", human.stderr);
    fixture_golden("prof-16.txt", &human.stdout);
    let json = prof::render(ImageIndex::CAYMAN_NX_ACT, true);
    assert_eq!(json.code, 0);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["armed"], 47);
    assert_eq!(v["records"][13]["opcode"], 0x21);
    fixture_golden("prof-7.json", &json.stdout);
    let none = prof::render(ImageIndex::SUNDA_NX_ACT, false);
    assert_eq!((none.code, none.stdout.as_str()), (2, ""));
}

#[test]
#[cfg_attr(
    nrtucode_blob_dir,
    ignore = "the golden files describe the built-in fixtures; NRTUCODE_BLOB_DIR is set"
)]
fn prof_json_reports_a_failure_as_json() {
    for idx in [ImageIndex::SUNDA_NX_ACT, ImageIndex::MAVERICK_GAP] {
        let out = prof::render(idx, true);
        assert_eq!(out.code, 2);
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(v["format"], "nrtucode-prof/1");
        assert_eq!(v["valid"], false);
        assert_eq!(v["resolver_code"], 2);
        assert_eq!(v["exit_code"], 2);
        assert_eq!(v["slot"], idx.raw());
    }
    fixture_golden(
        "prof-0-failure.json",
        &prof::render(ImageIndex::SUNDA_NX_ACT, true).stdout,
    );
}

/// One run of the binary in `cwd`: the transcript entry and the raw stdout.
fn run_in(cwd: &Path, env: &[(&str, &str)], args: &[&str]) -> (String, Vec<u8>, i32) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_nrtucode"));
    cmd.args(args)
        .current_dir(cwd)
        .env_remove("NRTUCODE_MPLUS_ON_MARIANA")
        .env_remove("NEURON_UCODE_FLAVOR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let code = out.status.code().unwrap_or(-1);
    let stdout = match std::str::from_utf8(&out.stdout) {
        Ok(text) if !text.contains('\0') => text.to_owned(),
        _ => format!(
            "<{} bytes of binary output, sha256 {}>\n",
            out.stdout.len(),
            nrtucode_facts::hex::lower_hex(&Sha256::digest(&out.stdout))
        ),
    };
    let prefix: String = env.iter().map(|(k, v)| format!("{k}={v} ")).collect();
    let entry = format!(
        "$ {prefix}nrtucode {}\n--- stdout\n{stdout}--- stderr\n{}--- exit {code}\n\n",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    (entry, out.stdout, code)
}

/// Environment variables set for one run.
type Vars<'a> = &'a [(&'a str, &'a str)];

/// The binary as a Unix tool: exit codes that do not collide with the resolver's, `-o -`,
/// messages naming paths as given, with grammar.
#[test]
#[cfg_attr(
    nrtucode_blob_dir,
    ignore = "the golden files describe the built-in fixtures; NRTUCODE_BLOB_DIR is set"
)]
fn binary_transcript() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    std::fs::create_dir(cwd.join("empty")).unwrap();
    std::fs::create_dir(cwd.join("bad")).unwrap();
    std::fs::write(cwd.join("bad/manifest.tsv"), "not a manifest\n").unwrap();
    std::fs::write(cwd.join("notelf.so"), "hello\n").unwrap();
    let flag = [("NRTUCODE_MPLUS_ON_MARIANA", "1")];
    let debug = [("NEURON_UCODE_FLAVOR", "debug")];
    let bogus = [("NEURON_UCODE_FLAVOR", "turbo")];
    let cases: Vec<(Vars, Vec<&str>, i32)> = vec![
        // resolve: the resolver's codes.
        (&[], vec!["resolve", "7", "iram"], 0),
        (&debug, vec!["resolve", "7", "iram"], 0),
        (&bogus, vec!["resolve", "7", "iram"], 0),
        (&[], vec!["resolve", "--hex", "7", "iram"], 0),
        (&[], vec!["resolve", "38", "iram"], 1),
        (&[], vec!["resolve", "36", "dram"], 2),
        (&[], vec!["resolve", "0", "--prof", "cam"], 2),
        (&flag, vec!["resolve", "23", "0", "--flavor", "1"], 8),
        // Output.
        (&[], vec!["resolve", "7", "iram", "-o", "-"], 0),
        (&[], vec!["resolve", "7", "iram", "-o", "image.bin"], 0),
        (
            &[],
            vec!["resolve", "7", "iram", "-o", "missing/image.bin"],
            73,
        ),
        (&[], vec!["resolve", "7", "iram", "-o", "empty"], 73),
        // The integers C takes: any C int goes to the resolver, negative ones without `--`;
        // out of range, the vendor's code and message, in resolve and prof alike.
        (&[], vec!["resolve", "7", "4"], 2),
        (&[], vec!["resolve", "-1", "iram"], 1),
        (&[], vec!["resolve", "7", "iram", "--flavor", "-1"], 2),
        (&[], vec!["resolve", "7", "iram", "--flavor", "99"], 2),
        (&[], vec!["resolve", "7", "--prof", "2"], 2),
        (&[], vec!["prof", "38"], 1),
        (&[], vec!["prof", "99", "--json"], 1),
        // Usage errors: 64, one style, listing the valid values.
        (&[], vec!["resolve", "99999999999", "iram"], 64),
        (
            &[],
            vec!["resolve", "7", "iram", "--flavor", "2147483648"],
            64,
        ),
        (&[], vec!["resolve", "cayman", "iram"], 64),
        (&[], vec!["resolve", "7", "iram", "--flavor", "fast"], 64),
        (&[], vec!["resolve", "7", "iram", "--prof", "cam"], 64),
        (&[], vec!["resolve", "7", "iram", "--bogus"], 64),
        (&[], vec!["list", "--gen", "foo"], 64),
        (&[], vec!["prof", "foo", "--json"], 64),
        (&[], vec!["frobnicate"], 64),
        (&[], vec![], 64),
        // Other failures.
        (&[], vec!["prof", "0", "--json"], 2),
        (&[], vec!["check", "nope"], 66),
        (&[], vec!["check", "empty"], 66),
        (&[], vec!["check", "bad"], 65),
        // `verify`, the name `check` had before, is a hidden alias of it.
        (&[], vec!["verify", "bad"], 65),
        (&[], vec!["carve", "nope.so", "--out", "out"], 66),
        (&[], vec!["carve", "notelf.so", "--out", "out"], 65),
    ];
    let mut transcript = String::new();
    for (env, args, expected) in &cases {
        let (entry, stdout, code) = run_in(cwd, env, args);
        assert_eq!(code, *expected, "{entry}");
        // One error style: a failure's stderr is `nrtucode: error: …` lines, then hints (the
        // removed flag's notice is the vendor's own line, printed by the resolver).
        if code != 0 {
            let stderr = entry.split("--- stderr\n").nth(1).unwrap_or_default();
            let stderr = stderr.split("--- exit").next().unwrap_or_default();
            let mut lines = stderr
                .lines()
                .filter(|l| !l.starts_with("nrtucode: NRTUCODE_MPLUS_ON_MARIANA=1"));
            assert!(
                lines
                    .next()
                    .is_some_and(|l| l.starts_with("nrtucode: error: ")),
                "{entry}"
            );
            assert!(
                lines.all(
                    |l| l.starts_with("nrtucode: error: ") || l.starts_with("nrtucode: hint: ")
                ),
                "{entry}"
            );
        }
        if args.contains(&"-o") && args.contains(&"-") {
            // Exactly the bytes on stdout.
            let bytes = nrtucode::get_memory_image(7, 0, 1, &NoEnv).unwrap();
            assert_eq!(stdout, bytes);
        }
        transcript.push_str(&entry);
    }
    let written = std::fs::read(cwd.join("image.bin")).unwrap();
    assert_eq!(written.len(), 0x13dc0);
    assert!(!cwd.join("missing").exists());
    assert_eq!(std::fs::read_dir(cwd.join("empty")).unwrap().count(), 0);
    // Messages name paths as given, never the absolute directory they were resolved in.
    let cwd_text = cwd.to_string_lossy();
    assert!(!transcript.contains(cwd_text.as_ref()), "{transcript}");
    for bad in ["1 problems", "1 getters", " a error"] {
        assert!(!transcript.contains(bad), "{bad:?}");
    }
    // No integer is called "not an integer"; one spelling of slot names is suggested.
    assert!(!transcript.contains("expected an integer"));
    assert!(
        !transcript.contains("such as CAYMAN_NX_ACT"),
        "suggested as cayman-nx-act"
    );
    fixture_golden("cli-transcript.txt", &transcript);
}

/// Every help text is plain text (no Markdown backticks) and the top-level and `resolve` help
/// list the exit codes.
#[test]
fn help_is_plain_text_and_lists_the_exit_codes() {
    let cwd = std::env::temp_dir();
    let mut all = String::new();
    for args in [
        vec!["--help"],
        vec!["carve", "--help"],
        vec!["check", "--help"],
        vec!["list", "--help"],
        vec!["resolve", "--help"],
        vec!["prof", "--help"],
        vec!["pack", "--help"],
        vec!["provision", "--help"],
        vec!["key", "generate", "--help"],
        vec!["key", "public", "--help"],
        vec!["inspect", "--help"],
    ] {
        let (entry, _, code) = run_in(&cwd, &[], &args);
        assert_eq!(code, 0, "{entry}");
        assert!(!entry.contains('`'), "{entry}");
        if args.len() == 1 || args[0] == "resolve" {
            for code in ["64", "65", "66", "73", "74"] {
                assert!(entry.contains(&format!("\n  {code}   ")), "{entry}");
            }
        }
        all.push_str(&entry);
    }
    golden("help.txt", &all);
}
