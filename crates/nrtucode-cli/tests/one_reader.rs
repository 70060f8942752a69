//! Every command that reads a partition reads it the same way: every form `pack --format`
//! writes, the same trust options, and an input of the wrong kind (a library, a blob
//! directory, a flash image of an update region, a key of the other type) named for what it
//! is, with the command that takes it.

mod partition_common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use partition_common::{key, nrtucode, public, text};

fn args(list: &[&dyn AsRef<std::ffi::OsStr>]) -> Vec<OsString> {
    list.iter().map(|a| a.as_ref().to_owned()).collect()
}

/// `pack --fixtures full -o NAME --key KEY [FORM...]` in `dir`.
fn pack(dir: &Path, name: &str, form: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let mut a = args(&[
        &"pack",
        &"--fixtures",
        &"full",
        &"-o",
        &out,
        &"--key",
        &key(),
    ]);
    a.extend(form.iter().map(OsString::from));
    let o = nrtucode(&a, dir);
    assert!(o.status.success(), "{}", text(&o.stderr));
    out
}

#[test]
fn every_command_that_reads_a_partition_reads_every_flashable_form() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let bin = pack(t, "p.bin", &[]);
    let forms = [
        pack(
            t,
            "p.hex",
            &["--format", "ihex", "--base-address", "0x10000000"],
        ),
        pack(
            t,
            "p.elf",
            &["--format", "elf", "--base-address", "0x10000000"],
        ),
        pack(
            t,
            "p.uf2",
            &[
                "--format",
                "uf2",
                "--base-address",
                "0x10000000",
                "--uf2-family",
                "rp2040",
            ],
        ),
    ];
    let list_of = |file: &Path| {
        let o = nrtucode(
            &args(&[
                &"list",
                &"--json",
                &"--partition",
                &file,
                &"--public-key",
                &public(),
            ]),
            t,
        );
        assert!(
            o.status.success(),
            "{}: {}",
            file.display(),
            text(&o.stderr)
        );
        o.stdout
    };
    let expected = list_of(&bin);
    for form in &forms {
        assert_eq!(list_of(form), expected, "{}", form.display());
        let o = nrtucode(
            &args(&[
                &"resolve",
                &"7",
                &"0",
                &"--sha256",
                &"--partition",
                form,
                &"--public-key",
                &public(),
            ]),
            t,
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
        let o = nrtucode(
            &args(&[
                &"prof",
                &"7",
                &"--partition",
                form,
                &"--public-key",
                &public(),
            ]),
            t,
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
        let o = nrtucode(&args(&[&"sbom", form, &"--public-key", &public()]), t);
        assert!(o.status.success(), "{}", text(&o.stderr));
        // The same blobs and tables as the partition file: diff says so (exit 0).
        let o = nrtucode(&args(&[&"diff", &bin, form, &"--public-key", &public()]), t);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    }
    // The trust options are the same everywhere: a minimum above the partition's counter is
    // refused by list as inspect refuses it.
    let o = nrtucode(
        &args(&[
            &"list",
            &"--partition",
            &forms[0],
            &"--public-key",
            &public(),
            &"--min-security-counter",
            &"9",
        ]),
        t,
    );
    assert_eq!(o.status.code(), Some(65), "{}", text(&o.stderr));
    // Without --partition, a trust option has nothing to apply to.
    let o = nrtucode(&args(&[&"list", &"--public-key", &public()]), t);
    assert_eq!(o.status.code(), Some(64), "{}", text(&o.stderr));
}

#[test]
fn an_input_of_the_wrong_kind_is_named_with_the_command_that_takes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    // A library where a partition is read (this test program: an ELF built by rustc).
    let lib = std::env::current_exe().unwrap();
    let o = nrtucode(&args(&[&"inspect", &lib]), t);
    assert_eq!(o.status.code(), Some(65), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("a library"), "{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains("32-bit"), "{}", text(&o.stderr));
    // A key of the other type, both ways.
    let o = nrtucode(
        &args(&[
            &"pack",
            &"--fixtures",
            &"full",
            &"-o",
            &t.join("x.part"),
            &"--key",
            &public(),
        ]),
        t,
    );
    assert_eq!(o.status.code(), Some(65), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("a public key"),
        "{}",
        text(&o.stderr)
    );
    assert!(!t.join("x.part").exists());
    let part = pack(t, "p.part", &[]);
    let o = nrtucode(&args(&[&"inspect", &part, &"--public-key", &key()]), t);
    assert_eq!(o.status.code(), Some(65), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("a private key"),
        "{}",
        text(&o.stderr)
    );
    // A flash image of an update region (a second partition after the first) without its
    // layout: refused, named, the command that reads it said.
    let bytes = std::fs::read(&part).unwrap();
    let slot_b = bytes.len().next_multiple_of(0x10_0000);
    let mut image = bytes.clone();
    image.resize(slot_b, 0xFF);
    image.extend_from_slice(&bytes);
    std::fs::write(t.join("image.bin"), &image).unwrap();
    let o = nrtucode(
        &args(&[&"inspect", &"image.bin", &"--public-key", &public()]),
        t,
    );
    assert_eq!(o.status.code(), Some(65), "{}", text(&o.stderr));
    let said = text(&o.stderr);
    assert!(said.contains(&format!("offset {slot_b:#x}")), "{said}");
    assert!(said.contains("--layout"), "{said}");
    // Erased flash after a partition: read, and said.
    let mut padded = bytes;
    padded.resize(padded.len() + 4096, 0xFF);
    std::fs::write(t.join("padded.bin"), &padded).unwrap();
    let o = nrtucode(
        &args(&[&"inspect", &"padded.bin", &"--public-key", &public()]),
        t,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("4096 bytes after the partition"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn inspect_under_the_insecure_escape_decodes_an_unsigned_partition() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let out = t.join("u.part");
    let o = nrtucode(
        &args(&[
            &"pack",
            &"--fixtures",
            &"front",
            &"--unsigned",
            &"--compress",
            &"deflate",
            &"-o",
            &out,
        ]),
        t,
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = nrtucode(&args(&[&"inspect", &out, &"--insecure-skip-signature"]), t);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("every decoded blob"),
        "{}",
        text(&o.stdout)
    );
    // A signed partition is verified, not read under the escape.
    let signed = pack(t, "s.part", &[]);
    let o = nrtucode(
        &args(&[&"inspect", &signed, &"--insecure-skip-signature"]),
        t,
    );
    assert_eq!(o.status.code(), Some(65), "{}", text(&o.stderr));
}
