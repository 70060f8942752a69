//! Binds the blob bytes the resolvers return, and does nothing else: chooses and checks the
//! blob source, lets `nrtucode_facts::plan` plan what the cargo features select, and writes
//! the blob statics to `$OUT_DIR/blobs.rs`.
//!
//! Default: the deterministic fixture set generated from `crates/nrtucode-facts/tables/getters.tsv`
//! (`nrtucode_facts::build_input::Fixtures`, written to `OUT_DIR`, never committed). With
//! `NRTUCODE_BLOB_DIR=<dir>`: the blobs of a directory written by `nrtucode carve`
//! (`build_input::CarvedDir`), read and checked by the reader `nrtucode check` uses, so the
//! build accepts exactly the directories `check` accepts. Nothing is ever silently replaced by a
//! fixture: a directory that lacks a blob the selected features need, or holds one of the wrong
//! size or content, fails the build naming the blob and the file. The tables' structure is not
//! made here: it is the committed `src/catalog/generated.rs` (`cargo run -p nrtucode-codegen`).
//! Every decision is an ordinary function of `nrtucode-facts`, unit-tested there; the generated
//! module embeds each blob through the core's one `embed_blob!` definition (`src/catalog.rs`).

use std::path::PathBuf;
use std::{env, process};

use nrtucode_facts::build_input::{CarvedDir, Fixtures, feature_var, write_if_changed};
use nrtucode_facts::getters;
use nrtucode_facts::plan;

fn main() {
    // The fact tables and the fixture generator are compiled into nrtucode-facts, this script's
    // build-dependency: a change there rebuilds and reruns this script. (Naming their paths
    // here would point outside the published package, where cargo reruns on every build.)
    println!("cargo::rerun-if-env-changed=NRTUCODE_BLOB_DIR");
    println!("cargo::rustc-check-cfg=cfg(nrtucode_fixtures)");
    println!("cargo::rustc-check-cfg=cfg(nrtucode_front_selection)");
    println!("cargo::rustc-check-cfg=cfg(nrtucode_embeds_nothing)");

    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let enabled = |feature: &str| env::var_os(feature_var(feature)).is_some();
    let with_digests = enabled("digest");
    if plan::is_front_selection(enabled) {
        println!("cargo::rustc-cfg=nrtucode_front_selection");
    }
    let facts = getters();
    let planned = match env::var_os("NRTUCODE_BLOB_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            let mut source = CarvedDir::open(&dir).unwrap_or_else(|problems| fail(&problems));
            for input in source.inputs() {
                println!("cargo::rerun-if-changed={}", input.display());
            }
            println!("cargo::rustc-env=NRTUCODE_BLOB_ORIGIN={}", source.origin());
            plan::plan(&facts, enabled, &mut source, with_digests)
                .map(|t| (t, "the blob directory named by NRTUCODE_BLOB_DIR"))
        }
        None => {
            println!("cargo::rustc-cfg=nrtucode_fixtures");
            println!("cargo::rustc-env=NRTUCODE_BLOB_ORIGIN=fixtures");
            let mut source = Fixtures::new(out_dir.join("fixtures"), with_digests);
            plan::plan(&facts, enabled, &mut source, with_digests)
                .map(|t| (t, "the built-in fixture set"))
        }
    };
    let (tables, source_name) = planned.unwrap_or_else(|problems| fail(&problems));
    if tables.blobs.is_empty() {
        // The tests that need a blob are `ignore`d, visibly, in such a build.
        println!("cargo::rustc-cfg=nrtucode_embeds_nothing");
    }
    let code = plan::render(&tables, source_name);
    let path = out_dir.join("blobs.rs");
    if let Err(e) = write_if_changed(&path, code.as_bytes()) {
        fail(&[format!("write {}: {e}", path.display())]);
    }
}

/// Reports every problem with the blob source and stops the build.
fn fail(problems: &[String]) -> ! {
    for problem in problems {
        println!("cargo::error=NRTUCODE_BLOB_DIR: {problem}");
    }
    process::exit(1);
}
