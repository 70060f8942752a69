//! `cargo xtask package`: packages the publishable crates the way `cargo publish` would, checks
//! what they hold, then builds and uses them the way a registry user does (which is
//! `cargo publish`'s verification and more: every `.crate` is unpacked and built from its own
//! manifest, so cargo's own verification, building each package once more in a directory of its
//! own, is left out): fresh crates outside the workspace that depend on
//! `nrtucode = "<the workspace's version>"`, resolved to the unpacked `.crate`s through `[patch.crates-io]`.
//!
//! Checks: every `.crate` < 10 MiB (the registry's limit); a host consumer with default features
//! builds once (a second build is fresh) and resolves CAYMAN NX ACT's PERF IRAM image, byte for
//! byte what the packaged CLI's `resolve` writes and as long as the facts say; a
//! `default-features = false` consumer with one generation builds for thumbv7em-none-eabihf; the
//! CLI built from its package carves the look-alike library and checks the result (the packaged carve library at work: every getter, size and sha256 as the
//! look-alike's ground truth says; what its `list` prints is crates/nrtucode-cli/tests/golden.rs's,
//! on the same sources). What the packages list (no build output, blob or binary, the
//! licences, no relative link out of the package) and depend on (an unpublished crate only as a
//! dev-dependency without a version, which cargo package strips) is the policy test's,
//! `crates/xtask/tests/policy/`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::build::{self, cmd, status};
use crate::metadata::Metadata;

/// The registry's largest `.crate`.
const MAX_CRATE_BYTES: u64 = 10 * 1024 * 1024;

/// The getter both consumers and the packaged CLI resolve.
const GETTER: &str = "CAYMAN_NX_ACT_PERF_IRAM_get";

/// The host consumer: writes CAYMAN NX ACT's PERF IRAM image to stdout.
const HOST_MAIN: &str = r#"//! Writes CAYMAN NX ACT's PERF IRAM image to stdout.
use std::io::Write;

fn main() {
    let image = nrtucode::get_memory_image(7, 0, 1, &nrtucode::NoEnv).expect("the image resolves");
    std::io::stdout().write_all(image).expect("stdout");
}
"#;

/// The firmware consumer: one generation and one flavor family, no_std.
const FIRMWARE_LIB: &str = r#"//! A no_std user of one generation and one flavor family.
#![no_std]

/// CAYMAN NX ACT's PERF IRAM image, if this build embeds it.
pub fn cayman_iram() -> Option<&'static [u8]> {
    nrtucode::get_memory_image(7, 0, 1, &nrtucode::NoEnv).ok()
}
"#;

/// Runs the task; `args` go to `cargo package` (e.g. `--allow-dirty`).
pub fn run(meta: &Metadata, args: &[String]) -> Result<(), String> {
    let published = meta.published();
    if published.is_empty() {
        return Err("package: cargo metadata lists no published crate".into());
    }
    let version = meta
        .field("nrtucode", "version")
        .ok_or("package: no crate nrtucode in the workspace")?;

    forget_unpacked_packages(&published, &version)?;
    let mut package = build::cargo("package --locked --no-verify");
    for name in &published {
        package.args(["-p", name]);
    }
    status(package.args(args))?;

    // Outside the workspace (as a registry user's crates are): `cargo install --path` of an
    // unpacked package under the workspace's target/ would take the workspace for its own.
    let work = std::env::temp_dir().join(format!("xtask-package-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    crate::files::create_dir(&work)?;
    let result = check(meta, &published, &version, &work);
    let _ = std::fs::remove_dir_all(&work);
    result
}

/// Removes what an earlier `cargo package` of these crates left unpacked in cargo's home.
/// Verifying several packages together, cargo unpacks each fresh `.crate` into
/// `$CARGO_HOME/registry/src/-<hash>/<name>-<version>/` (a local overlay source) and, finding
/// that directory already there on a later run, builds the old sources in it: a crate whose
/// sources changed since (a new module) then fails to verify against its own stale copy, on a
/// machine that is kept between runs. Only those overlay directories (named `-<hash>`, not a
/// registry's) and only our crates' `<name>-<version>` entries are removed.
fn forget_unpacked_packages(published: &[String], version: &str) -> Result<(), String> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let Some(src) = home.map(|h| h.join("registry").join("src")) else {
        return Ok(());
    };
    let Ok(sources) = std::fs::read_dir(&src) else {
        return Ok(()); // nothing unpacked yet
    };
    for source in sources.flatten() {
        if !source.file_name().to_string_lossy().starts_with('-') {
            continue;
        }
        for name in published {
            let stale = source.path().join(format!("{name}-{version}"));
            if stale.exists() {
                std::fs::remove_dir_all(&stale)
                    .map_err(|e| format!("package: cannot remove {}: {e}", stale.display()))?;
            }
        }
    }
    Ok(())
}

fn check(meta: &Metadata, published: &[String], version: &str, work: &Path) -> Result<(), String> {
    let unpacked = work.join("unpacked");
    crate::files::create_dir(&unpacked)?;
    let mut patches = String::from("[patch.crates-io]\n");
    for name in published {
        let file = meta
            .target_dir
            .join("package")
            .join(format!("{name}-{version}.crate"));
        let bytes = std::fs::metadata(&file)
            .map_err(|e| format!("{} was not written: {e}", file.display()))?
            .len();
        if bytes >= MAX_CRATE_BYTES {
            return Err(format!(
                "{name}: {bytes} bytes, the registry takes at most {MAX_CRATE_BYTES}"
            ));
        }
        println!("package: {name}-{version}.crate: {bytes} bytes");

        status(cmd("tar", "-xzf").arg(&file).arg("-C").arg(&unpacked))?;
        let dir = unpacked.join(format!("{name}-{version}"));
        patches.push_str(&format!(
            "{name} = {{ path = {} }}\n",
            build::toml_string(build::path_str(&dir)?)?
        ));
    }

    // A registry user's crates: the dependency is a version; [patch.crates-io] points it at the
    // unpacked packages (built from there: their paths differ from the workspace's). Each is
    // built from its own directory (no workspace configuration applies); the workspace's target
    // directory lends them the registry dependencies it has already built.
    let host = work.join("host-user");
    build::consumer(
        &host,
        "host-user",
        (&format!("nrtucode = \"{version}\""), &patches),
        "main.rs",
        HOST_MAIN,
    )?;
    let consumer = |args: &str, dir: &Path| {
        let mut command = build::cargo(args);
        command
            .arg("--manifest-path")
            .arg(dir.join("Cargo.toml"))
            .current_dir(dir);
        command.env("CARGO_TARGET_DIR", &meta.target_dir);
        command
    };
    let exe = build::executable(&mut consumer("build --quiet", &host), "host-user")?;
    let host_bytes = output_bytes(Command::new(&exe).current_dir(&host))?;
    // A second build does nothing: the packaged build script names no path outside its package.
    let (_, second) = build::output(&mut consumer("build --verbose", &host))?;
    let log = String::from_utf8_lossy(&second.stderr);
    let rebuilt: Vec<&str> = log
        .lines()
        .filter(|l| l.trim_start().starts_with("Dirty"))
        .collect();
    if !second.status.success() {
        return Err(format!("a second build of the consumer failed: {log}"));
    }
    if !rebuilt.is_empty() {
        return Err(format!(
            "a second build of the consumer rebuilds: {}",
            rebuilt.join("\n")
        ));
    }

    let firmware = work.join("firmware-user");
    let dependency = format!(
        "nrtucode = {{ version = \"{version}\", default-features = false, features = [\"gen-cayman\", \"flavor-perf\"] }}"
    );
    build::consumer(
        &firmware,
        "firmware-user",
        (&dependency, &patches),
        "lib.rs",
        FIRMWARE_LIB,
    )?;
    status(&mut consumer(
        "build --quiet --target thumbv7em-none-eabihf",
        &firmware,
    ))?;

    // The same [patch.crates-io] table, as a configuration file.
    let patch = work.join("patch.toml");
    crate::files::write(&patch, &patches)?;

    // The C library from its package, the one published crate no consumer here depends on
    // (what `cargo package`'s verification would build; the others are built below as their
    // users build them).
    let capi = unpacked.join(format!("nrtucode-capi-{version}"));
    status(consumer("build --quiet", &capi).arg("--config").arg(&patch))?;

    // The CLI from its package (its packaged Cargo.lock pins the tools' dependencies).
    let root = work.join("cli");
    let mut install = build::cargo("install --quiet --debug --root");
    install
        .arg(&root)
        .arg("--path")
        .arg(unpacked.join(format!("nrtucode-cli-{version}")))
        .env("CARGO_TARGET_DIR", &meta.target_dir);
    status(install.arg("--config").arg(&patch))?;
    let cli = root.join("bin").join("nrtucode");
    let cli_str = build::path_str(&cli)?;
    let cli_bytes = output_bytes(&mut cmd(cli_str, "resolve 7 IRAM --flavor perf -o -"))?;

    // The packaged carve library, through the packaged CLI: carve the look-alike of the
    // vendor's full library (built from the workspace; needs gcc) and check its blob directory.
    let lookalike = work.join("lookalike");
    let (so, carved) = (build::lookalike(&lookalike)?, work.join("carved"));
    build::stdout(
        Command::new(&cli)
            .arg("carve")
            .arg(so)
            .arg("--out")
            .arg(&carved),
    )?;
    build::stdout(Command::new(&cli).arg("verify").arg(&carved)).map_err(|e| {
        format!("the packaged CLI's check of its own carve of the look-alike failed: {e}")
    })?;
    let truth = crate::files::read_text(&lookalike.join("nrtucode_lookalike_full.truth.tsv"))?;
    let carved_manifest = crate::files::read_text(&carved.join("manifest.tsv"))?;
    let getters = compare_with_truth(&carved_manifest, &truth).map_err(|diff| {
        format!("the packaged CLI's carve of the look-alike differs from its ground truth: {diff}")
    })?;
    println!(
        "package: the packaged CLI carved the look-alike's {getters} getters as its ground truth says, and checked them"
    );

    let want = getter_size(GETTER)?;
    if host_bytes.len() as u64 != want {
        return Err(format!(
            "consumer resolved {} bytes, the facts say {want}",
            host_bytes.len()
        ));
    }
    if host_bytes != cli_bytes {
        return Err("the consumer and the packaged CLI resolve different bytes".into());
    }
    println!(
        "package: packaged crates resolve CAYMAN NX ACT PERF IRAM ({want} bytes) from a registry-style consumer and the packaged CLI"
    );
    println!(
        "package: {} packaged, built from their packages and used from outside the workspace",
        published.join(" ")
    );
    Ok(())
}

/// The size of `symbol` in the facts' getters table (`nrtucode_facts::facts::getters`).
pub fn getter_size(symbol: &str) -> Result<u64, String> {
    nrtucode_facts::facts::getters()
        .into_iter()
        .find(|g| g.symbol == symbol)
        .map(|g| g.size as u64)
        .ok_or_else(|| format!("the getters table has no {symbol}"))
}

/// Compares a carved manifest (its rows' first eight fields) with the look-alike's ground truth,
/// as sets of lines; returns the number of getters (the truth's lines but its header), or the
/// first differing lines.
pub fn compare_with_truth(manifest: &str, truth: &str) -> Result<usize, String> {
    let mut carved: Vec<String> = manifest
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split('\t').take(8).collect::<Vec<_>>().join("\t"))
        .collect();
    let mut want: Vec<String> = truth.lines().map(str::to_string).collect();
    carved.sort();
    want.sort();
    if carved == want {
        return Ok(want.len().saturating_sub(1));
    }
    let missing = want.iter().filter(|l| !carved.contains(l)).take(3);
    let extra = carved.iter().filter(|l| !want.contains(l)).take(3);
    let mut diff: Vec<String> = missing.map(|l| format!("< {l}")).collect();
    diff.extend(extra.map(|l| format!("> {l}")));
    if diff.is_empty() {
        diff.push("the same lines, another number of times".into());
    }
    Err(diff.join("\n"))
}

fn output_bytes(command: &mut Command) -> Result<Vec<u8>, String> {
    let (shown, out) = build::output(command.stderr(std::process::Stdio::null()))?;
    if !out.status.success() {
        return Err(format!("{shown} failed ({})", out.status));
    }
    Ok(out.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_getter_size_comes_from_the_facts() {
        // CAYMAN NX ACT PERF IRAM is the 81,344-byte image every consumer resolves.
        assert_eq!(getter_size(GETTER).unwrap(), 81_344);
        assert!(getter_size("C_get").is_err());
    }

    #[test]
    fn the_carve_matches_its_truth_as_a_set_of_rows() {
        let truth = "symbol\tb\nB_get\t2\nA_get\t1\n";
        let manifest = "# build_id\tx\nsymbol\tb\nA_get\t1\nB_get\t2\n";
        assert_eq!(compare_with_truth(manifest, truth), Ok(2));
        let wrong = manifest.replace("B_get\t2", "B_get\t3");
        let diff = compare_with_truth(&wrong, truth).unwrap_err();
        assert!(
            diff.contains("< B_get\t2") && diff.contains("> B_get\t3"),
            "{diff}"
        );
    }
}
