//! The core's `unsafe` budget, checked on the sources: no `unsafe` block, fn, impl or extern
//! anywhere in `src/` (with every feature: `StdEnv` reads through `std::env::var_os`), and the
//! build script emits `unsafe` only as `#[unsafe(link_section = ".rodata.nrtucode.…")]` on blob
//! statics.

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

#[test]
fn the_no_std_core_has_no_unsafe_code() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut checked = 0;
    let mut dirs = vec![src.clone()];
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
    for path in files {
        checked += 1;
        let source = std::fs::read_to_string(&path).unwrap();
        let hits = unsafe_keywords(&source);
        assert!(hits.is_empty(), "{}: {hits:?}", path.display());
    }
    assert!(checked >= 8, "read {checked} files");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    assert!(lib.contains("#![deny(unsafe_code)]"));
    // That `StdEnv` stays behind feature `std` is checked by behaviour, not spelling: CI builds
    // the core for thumbv7em-none-eabihf without it, where any use of `std` fails to compile.
}

#[test]
fn the_build_script_emits_unsafe_only_as_link_section() {
    let build =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("build.rs")).unwrap();
    assert!(unsafe_keywords(&build).is_empty());
    // Inside its string literals, `unsafe` appears only as the link_section attribute.
    let mut uses = 0;
    let mut rest = build.as_str();
    while let Some(at) = rest.find("unsafe") {
        rest = &rest[at..];
        assert!(
            rest.starts_with("unsafe(link_section = \\\"{SECTION_PREFIX}"),
            "{}",
            &rest[..rest.len().min(60)]
        );
        uses += 1;
        rest = &rest[1..];
    }
    assert_eq!(uses, 1);
}

#[test]
fn the_scanner_finds_what_it_must() {
    assert_eq!(unsafe_keywords("let x = unsafe { y };").len(), 1);
    assert_eq!(unsafe_keywords("unsafe fn f() {}").len(), 1);
    assert_eq!(unsafe_keywords("unsafe impl Send for X {}").len(), 1);
    assert!(unsafe_keywords("#![deny(unsafe_code)] // unsafe here").is_empty());
    assert!(unsafe_keywords(r#"let s = "unsafe";"#).is_empty());
}
