//! `image!` / `prof_table!`: a request that resolves is a `&'static [u8]` in a `const` (checked
//! here with `static_assertions`); one that does not stops the build with a message naming the
//! macro, the request and the reason (checked by compiling a small crate that uses them).
#![cfg(all(
    feature = "gen-cayman",
    feature = "flavor-perf",
    feature = "gen-maverick"
))]

mod nested_cargo;

use nrtucode::{
    Flavor, ImageIndex, NoEnv, ProfKind, Region, ResolveErr, image, prof_table, resolve_image,
};
use static_assertions::{const_assert, const_assert_eq};

const ACT_IRAM: &[u8] = image!(ImageIndex::CAYMAN_NX_ACT, Region::Iram, Flavor::Perf);
const SP_SRAM: &[u8] = image!(ImageIndex::MAVERICK_NX_SP, Region::Sram, Flavor::Perf);
const ACT_EXTRAM: &[u8] = image!(ImageIndex::CAYMAN_NX_ACT, Region::Extram, Flavor::Perf);
const DVE_TABLE: &[u8] = prof_table!(ImageIndex::MAVERICK_NX_DVE, ProfKind::Table);
const_assert_eq!(ACT_IRAM.len(), 0x13dc0);
const_assert_eq!(SP_SRAM.len(), 0xf580);
const_assert!(ACT_EXTRAM.is_empty()); // a boundary cursor resolves, with no bytes
const_assert_eq!(DVE_TABLE.len(), 0x2000);

#[test]
fn the_macros_yield_the_resolvers_blobs() {
    let at_run_time = resolve_image(
        ImageIndex::CAYMAN_NX_ACT,
        Region::Iram,
        Flavor::Perf,
        &NoEnv,
    )
    .unwrap();
    assert_eq!(ACT_IRAM.as_ptr(), at_run_time.as_ptr());
    assert_eq!(ACT_IRAM, at_run_time);
}

#[test]
fn an_unresolvable_request_fails_the_build_naming_it() {
    use std::path::Path;

    let scratch = nested_cargo::scratch("const-macro-fail");
    let dir = scratch.path();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let manifest = format!(
        "[package]\nname = \"const-macro-fail\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\
         publish = false\n\n[dependencies]\nnrtucode = {{ path = {:?} }}\n\n[workspace]\n",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    // The repository's lock file pins the same dependency versions, so this resolves offline.
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock"),
        dir.join("Cargo.lock"),
    )
    .unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        "use nrtucode::{prof_table, image, Flavor, ImageIndex, ProfKind, Region};\n\
         pub const NO_DEBUG: &[u8] = image!(ImageIndex::MAVERICK_NX_POOL, Region::Iram, Flavor::Debug);\n\
         pub const GAP: &[u8] = image!(ImageIndex::from_raw(36).unwrap(), Region::Dram, Flavor::Perf);\n\
         pub const NO_PROF: &[u8] = prof_table!(ImageIndex::SUNDA_NX_ACT, ProfKind::Cam);\n",
    )
    .unwrap();
    let out = nested_cargo::cargo()
        .args(["check", "--offline", "--quiet"])
        .current_dir(dir)
        .env_remove("NRTUCODE_BLOB_DIR")
        .output()
        .expect("run cargo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    // Worded like a `Failure`: the request, then `ResolveErr`'s own message and code.
    for message in [
        format!(
            "nrtucode::image!(ImageIndex::MAVERICK_NX_POOL, Region::Iram, Flavor::Debug): {}",
            ResolveErr::FlavorNotFound
        ),
        format!(
            "nrtucode::image!(ImageIndex::from_raw(36).unwrap(), Region::Dram, Flavor::Perf): {}",
            ResolveErr::EmptySlot
        ),
        format!(
            "nrtucode::prof_table!(ImageIndex::SUNDA_NX_ACT, ProfKind::Cam): {}",
            ResolveErr::NoProfiler
        ),
    ] {
        assert!(
            stderr.contains(&message),
            "missing {message:?} in\n{stderr}"
        );
    }
}
