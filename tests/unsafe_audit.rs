//! The core's `unsafe` budget, checked on the sources: no `unsafe` block, fn, impl or extern
//! anywhere in `src/` (with every feature: `StdEnv` reads through `std::env::var_os`); the one
//! `unsafe` is the `#[unsafe(link_section = …)]` attribute inside the hand-written
//! `embed_blob!` in `src/catalog.rs`, and neither the build script nor the module it generates
//! spells `unsafe` or a section.

use std::path::Path;

/// Byte offsets of the `unsafe` keyword in `source`, outside `//` comments and string literals
/// (good enough for this crate's sources, which have no raw strings containing quotes).
fn unsafe_keywords(source: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in source.lines().enumerate() {
        let mut code = String::new();
        let mut in_string = false;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if in_string => {
                    chars.next();
                }
                '"' => in_string = !in_string,
                '/' if !in_string && chars.peek() == Some(&'/') => break,
                _ if in_string => {}
                _ => code.push(c),
            }
        }
        let bytes = code.as_bytes();
        let mut from = 0;
        while let Some(at) = code[from..].find("unsafe") {
            let start = from + at;
            let end = start + "unsafe".len();
            let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
            let before = start == 0 || !ident(bytes[start - 1]);
            let after = end == bytes.len() || !ident(bytes[end]);
            if before && after {
                found.push((n + 1, line.trim().to_owned()));
            }
            from = end;
        }
    }
    found
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut dirs = vec![dir.to_owned()];
    let mut files = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files
}

/// The text of `macro_rules! embed_blob { ... }` in `source`, up to its closing brace.
fn embed_blob_definition(source: &str) -> &str {
    let start = source
        .find("macro_rules! embed_blob {")
        .expect("catalog.rs defines embed_blob!");
    let end = source[start..]
        .find("\n}\n")
        .expect("the definition ends with a `}` line");
    &source[start..start + end + 2]
}

#[test]
fn the_no_std_core_has_no_unsafe_code() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = rust_files(&src);
    assert!(files.len() >= 8, "read {} files", files.len());
    for path in files {
        let source = std::fs::read_to_string(&path).unwrap();
        let hits = unsafe_keywords(&source);
        if path.ends_with("catalog.rs") {
            // The one exemption: the link_section attribute inside the embedding macro.
            assert_eq!(hits.len(), 1, "{}: {hits:?}", path.display());
            let definition = embed_blob_definition(&source);
            assert_eq!(
                unsafe_keywords(definition).len(),
                1,
                "outside embed_blob!: {hits:?}"
            );
            assert!(
                hits[0].1.starts_with("unsafe(link_section = concat!("),
                "{hits:?}"
            );
        } else {
            assert!(hits.is_empty(), "{}: {hits:?}", path.display());
        }
    }
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    assert!(lib.contains("#![deny(unsafe_code)]"));
    // That `StdEnv` stays behind feature `std` is checked by behaviour, not spelling: CI builds
    // the core for thumbv7em-none-eabihf without it, where any use of `std` fails to compile.
}

#[test]
fn the_generated_blob_module_spells_no_unsafe_and_no_attribute() {
    // What the build script wrote for this build: blobs go through `embed_blob!` only.
    let generated = std::fs::read_to_string(concat!(env!("OUT_DIR"), "/blobs.rs")).unwrap();
    assert!(generated.starts_with("// @generated"));
    assert!(unsafe_keywords(&generated).is_empty());
    assert!(!generated.contains("unsafe") && !generated.contains("link_section"));
    let build =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("build.rs")).unwrap();
    assert!(!build.contains("unsafe") && !build.contains("link_section"));
}

#[test]
fn the_scanner_finds_what_it_must() {
    assert_eq!(unsafe_keywords("let x = unsafe { y };").len(), 1);
    assert_eq!(unsafe_keywords("unsafe fn f() {}").len(), 1);
    assert_eq!(unsafe_keywords("unsafe impl Send for X {}").len(), 1);
    assert!(unsafe_keywords("#![deny(unsafe_code)] // unsafe here").is_empty());
    assert!(unsafe_keywords(r#"let s = "unsafe";"#).is_empty());
}
