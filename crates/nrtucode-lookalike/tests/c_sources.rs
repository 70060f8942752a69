//! `c/lookalike.h` and `c/resolvers.c` are real C: gcc accepts them on their own, outside the
//! generated translation unit, with warnings as errors.

use std::path::{Path, PathBuf};
use std::process::Command;

use nrtucode::ImageIndex;
use nrtucode_lookalike::c_compiler;

fn c_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("c")
}

/// Runs `$CC -fsyntax-only -Wall -Wextra -Werror <args>` and returns gcc's stderr on failure.
fn syntax_check(args: &[&str]) -> Result<(), String> {
    let out = Command::new(c_compiler())
        .args(["-fsyntax-only", "-std=c11", "-Wall", "-Wextra", "-Werror"])
        .args(args)
        .output()
        .map_err(|e| format!("cannot run the C compiler: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// What the generated part of the look-alike provides before the resolvers: the placeholder
/// names as macros and the two tables (declared here, defined by the generator).
fn resolver_environment() -> String {
    let header = c_dir().join("lookalike.h");
    format!(
        "#include \"{}\"\n\
         #define LOOKALIKE_MEMORY_IMAGE_SYMBOL nrtucode_get_memory_image\n\
         #define LOOKALIKE_HWDECODE_TABLE_SYMBOL nrtucode_get_hwdecode_table\n\
         #define LOOKALIKE_REMOVAL_MESSAGE \"removed flag\\n\"\n\
         extern const struct image_list_ent image_list[{slots}];\n\
         extern const struct hwdecode_ent hwdecode_table_list[{slots}];\n",
        header.display(),
        slots = ImageIndex::COUNT
    )
}

#[test]
fn lookalike_header_compiles_on_its_own() {
    let header = c_dir().join("lookalike.h");
    syntax_check(&["-x", "c", header.to_str().expect("utf-8 path")]).expect("lookalike.h");
}

#[test]
fn resolvers_compile_as_c_given_the_generated_declarations() {
    let dir = tempfile::tempdir().expect("temp dir");
    let env = dir.path().join("environment.h");
    std::fs::write(&env, resolver_environment()).expect("write environment.h");
    let resolvers = c_dir().join("resolvers.c");
    let resolvers = resolvers.to_str().expect("utf-8 path");
    let env = env.to_str().expect("utf-8 path");
    syntax_check(&["-include", env, resolvers]).expect("resolvers.c");
    // The check can fail: without the declarations the tables are unknown.
    let header = c_dir().join("lookalike.h");
    let err = syntax_check(&["-include", header.to_str().expect("utf-8 path"), resolvers])
        .expect_err("resolvers.c needs the generated declarations");
    assert!(err.contains("image_list"), "{err}");
}
