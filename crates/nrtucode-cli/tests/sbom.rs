//! `nrtucode sbom PART|LIB|DIR`, end to end through the binary: the CycloneDX 1.6 document
//! names the input with its digest, key ID, security counter and build ID, lists every blob
//! `list --partition` lists with the same digest and size, is the same bytes for the same input
//! (named from anywhere), records a time only when asked, and is written all or nothing; the
//! SPDX 2.3 form lists the same blobs. The official checks (cyclonedx-python-lib's bundled
//! CycloneDX 1.6 schema, the SPDX project's spdx-tools) are the ignored test at the end, which
//! `cargo xtask ci` runs.

mod partition_common;
use partition_common::{key, nrtucode, public, text};

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use nrtucode_lookalike::{LibraryBuild, OptLevel, Options, build_shared_object, write_sources};
use sha2::{Digest, Sha256};

macro_rules! run {
    ($cwd:expr, $($arg:expr),* $(,)?) => {
        nrtucode(&[$(std::ffi::OsStr::new(&$arg)),*], $cwd)
    };
}

fn json(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).unwrap_or_else(|e| panic!("{e}: {}", text(out)))
}

/// The value of the `nrtucode:NAME` properties of `component`.
fn props(component: &serde_json::Value, name: &str) -> Vec<String> {
    component["properties"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .filter(|p| p["name"] == format!("nrtucode:{name}"))
                .map(|p| p["value"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// A component's only SHA-256.
fn sha256_of(component: &serde_json::Value) -> String {
    let hashes = component["hashes"].as_array().unwrap();
    assert_eq!(hashes.len(), 1);
    assert_eq!(hashes[0]["alg"], "SHA-256");
    hashes[0]["content"].as_str().unwrap().to_owned()
}

/// A signed fixtures partition of `class` with security counter 7, in `dir`.
fn partition(dir: &Path, class: &str) -> PathBuf {
    let out = dir.join(format!("{class}.part"));
    let o = run!(
        dir,
        "pack",
        "--fixtures",
        class,
        "-o",
        out,
        "--key",
        key(),
        "--security-counter",
        "7"
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    out
}

/// The front look-alike library, built in `dir`.
fn library(dir: &Path) -> PathBuf {
    let written = write_sources(&dir.join("src"), &Options::new(LibraryBuild::Front)).unwrap();
    let lib = dir.join("libnrtucode.so");
    build_shared_object(&written.c_source, &lib, OptLevel::O2, false)
        .expect("gcc builds the look-alike");
    lib
}

#[test]
fn a_partitions_bom_names_it_and_every_blob_list_lists() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let part = partition(t, "full");
    let o = run!(t, "sbom", part, "--public-key", public());
    assert!(o.status.success(), "{}", text(&o.stderr));
    let bom = json(&o.stdout);
    assert_eq!(bom["bomFormat"], "CycloneDX");
    assert_eq!(bom["specVersion"], "1.6");
    assert!(bom.get("serialNumber").is_none());
    assert!(bom["metadata"].get("timestamp").is_none());
    let top = &bom["metadata"]["component"];
    assert_eq!(top["type"], "firmware");
    assert_eq!(top["name"], "full.part");
    let file_sha = nrtucode_facts::hex::lower_hex(&Sha256::digest(std::fs::read(&part).unwrap()));
    assert_eq!(sha256_of(top), file_sha);
    let inspect = json(&run!(t, "inspect", part, "--json").stdout);
    assert_eq!(
        props(top, "key_id"),
        [inspect["header"]["key_id"].as_str().unwrap()]
    );
    assert_eq!(props(top, "security_counter"), ["7"]);
    assert_eq!(props(top, "class"), ["full"]);
    assert_eq!(props(top, "source"), ["fixtures"]);

    // Every blob list lists (state real), by symbol, with its digest and size; nothing else.
    let list = json(
        &run!(
            t,
            "list",
            "--json",
            "--partition",
            part,
            "--public-key",
            public()
        )
        .stdout,
    );
    let mut listed: BTreeMap<String, (String, u64, BTreeSet<String>)> = BTreeMap::new();
    for e in list["entries"].as_array().unwrap() {
        if e["state"] != "real" {
            continue;
        }
        let entry = listed
            .entry(e["symbol"].as_str().unwrap().to_owned())
            .or_insert((
                e["sha256"].as_str().unwrap().to_owned(),
                e["size"].as_u64().unwrap(),
                BTreeSet::new(),
            ));
        entry.2.insert(format!(
            "{} slot {}",
            e["table"].as_str().unwrap(),
            e["slot"]
        ));
    }
    let components = bom["components"].as_array().unwrap();
    assert_eq!(components.len(), listed.len());
    let refs: Vec<&str> = components
        .iter()
        .map(|c| c["bom-ref"].as_str().unwrap())
        .collect();
    let mut sorted = refs.clone();
    sorted.sort_unstable();
    assert_eq!(refs, sorted, "components sorted by bom-ref");
    for c in components {
        let name = c["name"].as_str().unwrap();
        let (sha, size, slots) = &listed[name];
        assert_eq!(c["type"], "firmware");
        assert_eq!(&sha256_of(c), sha, "{name}");
        assert_eq!(props(c, "size"), [size.to_string()], "{name}");
        for p in ["generation", "engine", "variant", "region"] {
            assert_eq!(props(c, p).len(), 1, "{name} {p}");
        }
        let used: BTreeSet<String> = props(c, "use")
            .iter()
            .map(|u| u.split(' ').take(3).collect::<Vec<_>>().join(" "))
            .collect();
        assert_eq!(&used, slots, "{name}");
    }
    let deps = bom["dependencies"].as_array().unwrap();
    assert_eq!(deps.len(), 1);
    assert_eq!(deps[0]["ref"], top["bom-ref"]);
    assert_eq!(
        deps[0]["dependsOn"].as_array().unwrap().len(),
        components.len()
    );
}

#[test]
fn the_same_input_gives_the_same_bytes_and_a_time_only_when_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let part = partition(t, "front");
    let elsewhere = t.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::copy(&part, elsewhere.join("front.part")).unwrap();
    let a = run!(t, "sbom", part, "--public-key", public());
    let b = run!(
        &elsewhere,
        "sbom",
        "front.part",
        "--public-key",
        public(),
        "-o",
        "bom.json"
    );
    assert!(
        a.status.success() && b.status.success(),
        "{}",
        text(&b.stderr)
    );
    assert_eq!(a.stdout, std::fs::read(elsewhere.join("bom.json")).unwrap());
    let dash = run!(
        &elsewhere,
        "sbom",
        "front.part",
        "--public-key",
        public(),
        "-o",
        "-"
    );
    assert_eq!(dash.stdout, a.stdout, "-o - is standard output");
    assert!(!elsewhere.join("-").exists());
    assert!(text(&b.stdout).contains("CycloneDX 1.6, partition front.part (front tables)"));

    let o = Command::new(env!("CARGO_BIN_EXE_nrtucode"))
        .args(["sbom", "front.part", "--timestamp", "--public-key"])
        .arg(public())
        .current_dir(&elsewhere)
        .env("SOURCE_DATE_EPOCH", "1796283900")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        json(&o.stdout)["metadata"]["timestamp"],
        "2026-12-03T07:45:00Z"
    );
}

#[test]
fn a_library_and_its_blob_directory_have_the_same_blobs() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let lib = library(t);
    assert!(
        run!(t, "carve", lib, "--out", t.join("blobs"))
            .status
            .success()
    );
    let manifest = std::fs::read_to_string(
        t.join("blobs")
            .join(nrtucode_facts::manifest::MANIFEST_FILE),
    )
    .unwrap();
    let build_id = manifest
        .lines()
        .find_map(|l| l.strip_prefix("# build_id\t"))
        .unwrap()
        .to_owned();
    let lib_sha = nrtucode_facts::hex::lower_hex(&Sha256::digest(std::fs::read(&lib).unwrap()));

    let from_lib = json(&run!(t, "sbom", lib).stdout);
    let top = &from_lib["metadata"]["component"];
    assert_eq!(top["type"], "library");
    assert_eq!(sha256_of(top), lib_sha);
    assert_eq!(props(top, "build_id"), std::slice::from_ref(&build_id));
    assert_eq!(props(top, "class"), ["front"]);

    let from_dir = json(&run!(t, "sbom", t.join("blobs")).stdout);
    let top = &from_dir["metadata"]["component"];
    assert_eq!(top["type"], "firmware");
    assert_eq!(props(top, "source_sha256"), [lib_sha]);
    assert_eq!(props(top, "build_id"), [build_id]);
    assert_eq!(from_lib["components"], from_dir["components"]);
    assert!(!from_lib["components"].as_array().unwrap().is_empty());

    // A partition packed from the library records its build ID, and holds the same blobs.
    let o = run!(t, "pack", lib, "-o", "lib.part", "--key", key());
    assert!(o.status.success(), "{}", text(&o.stderr));
    let from_part = json(&run!(t, "sbom", "lib.part", "--public-key", public()).stdout);
    let top = &from_part["metadata"]["component"];
    assert_eq!(
        props(top, "build_id"),
        props(&from_lib["metadata"]["component"], "build_id")
    );
    assert_eq!(props(top, "source"), ["build-id"]);
    assert_eq!(from_part["components"], from_lib["components"]);
}

#[test]
fn the_spdx_form_lists_the_same_blobs() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let full = partition(t, "full");
    let front = partition(t, "front");
    let spdx_of = |part: &Path| {
        let o = run!(
            t,
            "sbom",
            part,
            "--format",
            "spdx",
            "--public-key",
            public()
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
        o.stdout
    };
    let bytes = spdx_of(&full);
    assert_eq!(bytes, spdx_of(&full), "the same input, the same bytes");
    let spdx = json(&bytes);
    assert_eq!(spdx["spdxVersion"], "SPDX-2.3");
    assert_eq!(spdx["creationInfo"]["created"], "1970-01-01T00:00:00Z");
    let namespace = spdx["documentNamespace"].as_str().unwrap();
    assert!(namespace.starts_with("urn:nrtucode:spdx:"), "{namespace}");
    assert_ne!(json(&spdx_of(&front))["documentNamespace"], namespace);

    let cdx = json(&run!(t, "sbom", full, "--public-key", public()).stdout);
    let cdx_blobs: BTreeMap<String, String> = cdx["components"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap().to_owned(), sha256_of(c)))
        .collect();
    let packages = spdx["packages"].as_array().unwrap();
    let (input, blobs) = packages.split_first().unwrap();
    assert_eq!(input["SPDXID"], "SPDXRef-input");
    let file_sha = nrtucode_facts::hex::lower_hex(&Sha256::digest(std::fs::read(&full).unwrap()));
    assert_eq!(input["checksums"][0]["checksumValue"], file_sha.as_str());
    assert!(
        input["comment"]
            .as_str()
            .unwrap()
            .contains("security counter 7")
    );
    let spdx_blobs: BTreeMap<String, String> = blobs
        .iter()
        .map(|p| {
            assert_eq!(p["checksums"][0]["algorithm"], "SHA256");
            (
                p["name"].as_str().unwrap().to_owned(),
                p["checksums"][0]["checksumValue"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            )
        })
        .collect();
    assert_eq!(spdx_blobs, cdx_blobs);
    // The document describes the input, which contains every blob.
    let relationships = spdx["relationships"].as_array().unwrap();
    assert_eq!(relationships.len(), blobs.len() + 1);
    let contained: BTreeSet<&str> = relationships
        .iter()
        .filter(|r| r["relationshipType"] == "CONTAINS" && r["spdxElementId"] == "SPDXRef-input")
        .map(|r| r["relatedSpdxElement"].as_str().unwrap())
        .collect();
    let ids: BTreeSet<&str> = blobs
        .iter()
        .map(|p| p["SPDXID"].as_str().unwrap())
        .collect();
    assert_eq!(contained, ids);
}

#[test]
fn failures_leave_no_output_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let part = partition(t, "front");
    std::fs::write(t.join("junk"), b"neither").unwrap();
    let o = run!(t, "sbom", "junk", "-o", "bom.json");
    assert_eq!(o.status.code(), Some(65), "{}", text(&o.stderr));
    assert!(!t.join("bom.json").exists());
    // An unsigned read of a signed partition is refused, before anything is written.
    let o = run!(
        t,
        "sbom",
        part,
        "--insecure-skip-signature",
        "-o",
        "bom.json"
    );
    assert_eq!(o.status.code(), Some(65), "{}", text(&o.stderr));
    assert!(!t.join("bom.json").exists());
    // The output may not be the input.
    let before = std::fs::read(&part).unwrap();
    let o = run!(t, "sbom", part, "--public-key", public(), "-o", part);
    assert_eq!(o.status.code(), Some(73), "{}", text(&o.stderr));
    assert_eq!(std::fs::read(&part).unwrap(), before);
}

/// Validates each of `boms`: a CycloneDX one (a `Bom::Cdx`) against the CycloneDX 1.6 JSON
/// schema bundled with cyclonedx-python-lib (strict: no property the schema does not define),
/// an SPDX one with spdx-tools (the SPDX project's parser and validator, 2.3), all in one
/// Python process (its imports alone take seconds): per document, `Err` with the validator's
/// first line.
fn validate(dir: &Path, boms: &[Bom]) -> Vec<Result<(), String>> {
    const CHECK: &str = r#"
import sys
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from spdx_tools.spdx.parser.parse_anything import parse_file
from spdx_tools.spdx.validation.document_validator import validate_full_spdx_document
cyclonedx = JsonStrictValidator(SchemaVersion.V1_6)
for path in sys.argv[1:]:
    if path.endswith(".spdx.json"):
        try:
            errors = [m.validation_message for m in validate_full_spdx_document(parse_file(path))]
        except Exception as e:  # the parser's refusal
            errors = [str(e) or type(e).__name__]
    else:
        with open(path) as f:
            error = cyclonedx.validate_str(f.read())
        errors = [str(error)] if error else []
    print(errors[0].splitlines()[0] if errors else "valid")
"#;
    let paths: Vec<PathBuf> = boms
        .iter()
        .enumerate()
        .map(|(n, bom)| {
            let (name, bytes) = match bom {
                Bom::Cdx(b) => (format!("bom-{n}.cdx.json"), b),
                Bom::Spdx(b) => (format!("bom-{n}.spdx.json"), b),
            };
            let path = dir.join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        })
        .collect();
    let o = Command::new("python3")
        .args(["-c", CHECK])
        .args(&paths)
        .stdin(Stdio::null())
        .output()
        .expect("python3 runs");
    assert!(
        o.status.success(),
        "the validator did not run: {}",
        text(&o.stderr)
    );
    let out = text(&o.stdout);
    let verdicts: Vec<Result<(), String>> = out
        .lines()
        .map(|l| {
            if l == "valid" {
                Ok(())
            } else {
                Err(l.to_owned())
            }
        })
        .collect();
    assert_eq!(verdicts.len(), boms.len(), "{out}");
    verdicts
}

/// A document to validate, by format.
enum Bom {
    /// CycloneDX JSON.
    Cdx(Vec<u8>),
    /// SPDX JSON.
    Spdx(Vec<u8>),
}

#[test]
#[ignore = "needs python3 with cyclonedx-python-lib[json-validation] and spdx-tools: .ci/run installs them, cargo xtask ci runs this"]
fn every_kind_of_bom_is_valid_cyclonedx_1_6_and_spdx_2_3() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let lib = library(t);
    assert!(
        run!(t, "carve", lib, "--out", t.join("blobs"))
            .status
            .success()
    );
    let full = partition(t, "full");
    let o = run!(
        t,
        "pack",
        "--fixtures",
        "front",
        "-o",
        "u.part",
        "--unsigned"
    );
    assert!(o.status.success());
    let inputs: [Vec<std::ffi::OsString>; 4] = [
        vec![full.into(), "--public-key".into(), public().into()],
        vec!["u.part".into(), "--insecure-skip-signature".into()],
        vec![lib.into()],
        vec![t.join("blobs").into()],
    ];
    let mut docs = Vec::new();
    for input in &inputs {
        for format in ["cyclonedx", "spdx"] {
            let mut args: Vec<std::ffi::OsString> =
                vec!["sbom".into(), "--format".into(), format.into()];
            args.extend(input.iter().cloned());
            let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
            let o = nrtucode(&refs, t);
            assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
            docs.push(if format == "spdx" {
                Bom::Spdx(o.stdout)
            } else {
                Bom::Cdx(o.stdout)
            });
        }
    }
    let good = docs.len();
    // The validators refuse what they should: a digest that is not hex, an unknown key, a
    // relationship to nothing.
    let (Bom::Cdx(cdx), Bom::Spdx(spdx)) = (&docs[0], &docs[1]) else {
        unreachable!()
    };
    let (cdx, spdx) = (json(cdx), json(spdx));
    let mut bad = cdx.clone();
    bad["components"][0]["hashes"][0]["content"] = "not hex".into();
    docs.push(Bom::Cdx(bad.to_string().into_bytes()));
    let mut bad = cdx;
    bad["metadata"]["component"]["firmware"] = true.into();
    docs.push(Bom::Cdx(bad.to_string().into_bytes()));
    let mut bad = spdx.clone();
    bad["packages"][1]["checksums"][0]["checksumValue"] = "not hex".into();
    docs.push(Bom::Spdx(bad.to_string().into_bytes()));
    let mut bad = spdx;
    bad["relationships"][1]["relatedSpdxElement"] = "SPDXRef-nothing".into();
    docs.push(Bom::Spdx(bad.to_string().into_bytes()));
    let verdicts = validate(t, &docs);
    for (n, verdict) in verdicts[..good].iter().enumerate() {
        assert_eq!(verdict, &Ok(()), "document {n}");
    }
    assert!(verdicts[good..].iter().all(Result::is_err), "{verdicts:?}");
}
