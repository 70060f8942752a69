//! `cargo xtask ci`: every check of the repository in order, after the toolchains and tools are
//! installed (`.ci/run` does that, then runs this in two lanes at once: [`Lane`]). Each step
//! prints its start time; the run ends with one summary of the seconds each step took, wall and
//! CPU (user + system), and the disk left free when it ended. With `--reclaim` (`.ci/run`),
//! what a passed step built that no later step reads is removed ([`Step::freeing`]).
//!
//! A step is a title and its command lines ([`STEPS`]), run in order from the workspace root:
//! `DIR: ` first runs it in the separate workspace `DIR` (the templates, fuzz, tests/no_std),
//! `NAME=value` words before the program set its environment, and `xtask TASK …` runs one of
//! this crate's tasks. `{work}` is a scratch directory of the step (removed after it),
//! `{target}` the target directory, `{fuzz}` the seconds per fuzz target. `cargo` is rustup's
//! proxy (for `+nightly`).

use std::time::{Duration, Instant};

use crate::build::{cmd, path_str, status};
use crate::metadata::Metadata;

/// The title of the step that runs README's test command (`--skip-workspace-tests` leaves it
/// out: `.ci/run` runs it itself, in so many words, first).
const WORKSPACE_TESTS: &str = "tests: cargo test --workspace (README's test command)";

/// Which of the two processes `.ci/run` starts runs a step (`cargo xtask ci` without `--lane`
/// runs every step, in order).
///
/// `.ci/run` starts the lane beside first, in the background, then runs README's test command
/// and the main lane: the two run at once. The steps beside build in target directories of
/// their own (nightly's docs.rs build, the oldest Rust, miri, the fuzz targets), then come the
/// bare-metal template's (its own workspaces and target directories); what they build in the
/// workspace's (the fuzz seeds' two small tools, the release CLI and defmt decoder the template
/// steps run, the firmware its README's blocks build there as a user would) waits for its lock,
/// and changes nothing the main lane builds. Much of their time uses one core (miri's
/// interpreter, a toolchain download, an emulator) while the other lane's tests and builds use
/// the other; the template's steps start about when README's test command ends, and run while
/// the main lane does. Last beside comes the link check for panics (`tests/nopanic`): its
/// builds go to a target directory of its own, and of the workspace's it runs the test binary
/// README's test command built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Lane {
    /// README's test command's companions: every step not beside.
    Main,
    /// The steps with target directories of their own, then the template's, then the link
    /// check for panics.
    Beside,
}

impl Lane {
    /// Its name on the command line and in scratch directories.
    fn name(self) -> &'static str {
        match self {
            Lane::Main => "main",
            Lane::Beside => "beside",
        }
    }
}

/// One step: its lane, its title, its command lines, and what it leaves that no later step
/// reads ([`Step::frees`]).
struct Step {
    lane: Lane,
    title: &'static str,
    lines: &'static [&'static str],
    frees: &'static [&'static str],
}

/// A step that leaves nothing to free.
const fn step(lane: Lane, title: &'static str, lines: &'static [&'static str]) -> Step {
    Step {
        lane,
        title,
        lines,
        frees: &[],
    }
}

impl Step {
    /// The same step, naming the directories under the target directory that it (with the steps
    /// of its lane before it) builds and that no step after it reads: `--reclaim` removes them
    /// once it has passed. A directory named here that a later step does read is built again,
    /// which costs that step the build: the lane then fails, naming it.
    const fn freeing(self, frees: &'static [&'static str]) -> Step {
        Step { frees, ..self }
    }
}

/// Every step, in order.
const STEPS: &[Step] = &[
    step(
        Lane::Main,
        "format",
        &[
            "cargo fmt --all -- --check",
            "tests/no_std: cargo fmt -- --check",
            "examples/bare-metal: cargo fmt -- --check",
            "examples/riscv-virt: cargo fmt -- --check",
            "fuzz: cargo fmt -- --check",
        ],
    ),
    step(
        Lane::Main,
        "clippy (-D warnings, all targets, all features)",
        &[
            "NRTUCODE_PARTITION_KEY=test cargo clippy --workspace --all-targets --all-features -- -D warnings",
        ],
    ),
    // Includes crates/nrtucode-env-stress (StdEnv racing std::env::set_var on another thread in
    // an edition-2021 safe program, 3 s), the repository policy
    // (crates/xtask/tests/policy), the generated tables up to date
    // (crates/nrtucode-codegen/tests/up_to_date.rs) and the carve bench's self-check.
    // The partition-backed C libraries of the full set (the front step builds its own).
    step(Lane::Main, WORKSPACE_TESTS, &["cargo test --workspace"])
        .freeing(&["tmp/capi-partitions-full"]),
    step(
        Lane::Main,
        "the CLI's tests ignored where they cannot run, run here as root: tmpfs mounts, carving as nobody, resolve, pack and key -o onto device nodes made with mknod",
        // Every test file with `#[ignore = "needs root…"]` cases (a unit test below checks).
        &[
            "cargo test --workspace --test atomic_write --test hostile --test bounded_io -- --ignored",
        ],
    ),
    // cyclonedx-python-lib (with its json-validation extra) and spdx-tools: .ci/run installs them.
    step(
        Lane::Main,
        "nrtucode sbom's BOMs: CycloneDX against the official 1.6 schema (cyclonedx-python-lib's copy, strict), SPDX 2.3 by spdx-tools",
        &["cargo test --workspace --test sbom -- --ignored"],
    ),
    step(
        Lane::Main,
        "README's main job: the loader example on the built-in fixtures",
        &["cargo run --quiet --example loader"],
    ),
    step(
        Lane::Main,
        "front-library feature selection: core, C ABI and differential oracle",
        // One invocation: the core is built once for the three (their features of it unify to
        // what the core's own test build has: front, and the packer's, a dev-dependency); three
        // invocations built it and its dependents three times, the same tests passing (28
        // CPU-s more). Tests only (`--tests`): the core's doc examples assume the full set, and
        // the other two have none under `front`.
        &[
            "cargo test -p nrtucode -p nrtucode-capi -p nrtucode-conformance --tests --no-default-features --features nrtucode/front,nrtucode-capi/front,nrtucode-conformance/front",
        ],
    )
    // The core's tests that run cargo (README's and these) share the nested target directory.
    .freeing(&["tmp/nested-cargo", "tmp/capi-partitions-front"]),
    // Feature digest's tests (every fixture blob checks against its recorded digest) run in
    // README's test command: the workspace unifies the core's features (the CLI and the packer
    // enable digest, and the core's dev-dependency on the packer does in `cargo test -p
    // nrtucode` too), so a separate `cargo test -p nrtucode --features digest` built the same
    // tests again with the same features. Digest without the rest is built for bare metal below
    // (`--features digest,defmt`), and crates/nrtucode-cli/tests/e2e_core.rs runs the core's
    // tests with digest over a carve.
    // The oracle over full partitions and the CLI and pack tests run under `cargo test
    // --workspace`, the oracle over front partitions in the front step; the portable hosts
    // check `partition` in the portable-hosts step. The size is informative (docs/partition.md
    // quotes it).
    step(
        Lane::Main,
        "signed partitions: the reader alone (no blob embedded) on bare metal and other hosts; a pack and its inspect; flash cost of the verifier",
        &[
            "cargo build -p nrtucode --target thumbv7em-none-eabihf --no-default-features --features partition",
            "cargo build -p nrtucode --target riscv32imac-unknown-none-elf --no-default-features --features partition",
            "cargo test -p nrtucode --no-default-features --features partition --lib",
            "xtask size --what partition",
            "cargo run --quiet --release -p nrtucode-cli -- pack --fixtures full -o {work}/full.part --key keys/test-ed25519.pem",
            "cargo run --quiet --release -p nrtucode-cli -- inspect {work}/full.part --public-key keys/test-ed25519.pub.pem",
        ],
    ),
    step(
        Lane::Main,
        "flashable partitions: Intel HEX, ELF and UF2 read back by binutils (objcopy, readelf), the adafruit-uf2 package's uf2conv and pyOCD's file readers, then inspected",
        &["cargo test --workspace --test flash_formats -- --ignored"],
    )
    // The look-alike libraries the carve and CLI tests share: these are the last to read them.
    .freeing(&["tmp/nrtucode-carve"]),
    step(
        Lane::Main,
        "no_std cross build (thumbv7em-none-eabihf)",
        &[
            "cargo build -p nrtucode --target thumbv7em-none-eabihf --no-default-features",
            "cargo build -p nrtucode --target thumbv7em-none-eabihf --no-default-features --features defmt",
            "cargo build -p nrtucode --target thumbv7em-none-eabihf --no-default-features --features digest,defmt",
            "cargo build -p nrtucode --target thumbv7em-none-eabihf",
            // Every public error of the core asserts its size (at most 16 bytes) for a 32-bit
            // target, and the package reader its state (at most 200): this build compiles each
            // of them for thumbv7em, with the async updater.
            "cargo build -p nrtucode --target thumbv7em-none-eabihf --no-default-features --features partition,deflate,update,async,defmt",
        ],
    ),
    // digest alone is built by the partition step (partition implies it) and defmt alone for
    // thumbv7em above; src/ has no `not(feature)` code: the two ends of the matrix.
    step(
        Lane::Main,
        "more bare-metal targets: the core for RISC-V (riscv32imac) and AArch64 (aarch64-unknown-none), one generation and flavor, without and with digest and defmt",
        &[
            "cargo build -p nrtucode --target riscv32imac-unknown-none-elf --no-default-features --features gen-cayman,flavor-perf",
            "cargo build -p nrtucode --target riscv32imac-unknown-none-elf --no-default-features --features gen-cayman,flavor-perf,digest,defmt",
            "cargo build -p nrtucode --target aarch64-unknown-none --no-default-features --features gen-cayman,flavor-perf",
            "cargo build -p nrtucode --target aarch64-unknown-none --no-default-features --features gen-cayman,flavor-perf,digest,defmt",
        ],
    ),
    // Every optional feature of the core at once (partition implies digest; one invocation a
    // target, so the core is checked once, with its users' features unified in); Mach-O, COFF
    // (no per-blob link_section there) and aarch64 Linux. The carve library and the CLI are
    // checked where their code differs from the host build's, macOS and Windows (cfg(unix) and
    // cfg(windows) code); on aarch64 Linux they would compile the host's code again: nothing of
    // theirs depends on the architecture (no target_arch or pointer-width cfg, no C types, no
    // unsafe: the unit test `the_cli_and_carver_have_no_code_by_architecture` keeps it so).
    step(
        Lane::Main,
        "portable hosts: the core (with partition), the C ABI, the carve library and the CLI type-check for macOS and Windows (no per-blob link_section there), the core and the C ABI for aarch64 Linux",
        &[
            "cargo check -p nrtucode -p nrtucode-capi -p nrtucode-carve -p nrtucode-cli --features nrtucode/std,nrtucode/digest,nrtucode/defmt,nrtucode/partition --target x86_64-apple-darwin",
            "cargo check -p nrtucode -p nrtucode-capi -p nrtucode-carve -p nrtucode-cli --features nrtucode/std,nrtucode/digest,nrtucode/defmt,nrtucode/partition --target x86_64-pc-windows-msvc",
            // The CLI's features of the core named, as its presence unified them in above.
            "cargo check -p nrtucode -p nrtucode-capi --features nrtucode/std,nrtucode/defmt,nrtucode/deflate,nrtucode/insecure-unsigned,nrtucode/update,nrtucode/async --target aarch64-unknown-linux-gnu",
        ],
    ),
    // The StdEnv example checks flavor 0 against its environment: once more with a flavor set.
    step(
        Lane::Main,
        "doc tests and docs: the StdEnv example once more with a flavor set, rustdoc -D warnings, no link leaves the docs (README's test command runs every doc test)",
        &[
            "NEURON_UCODE_FLAVOR=test cargo test --workspace --doc StdEnv",
            "RUSTDOCFLAGS=-Dwarnings cargo doc --workspace --no-deps",
            "cargo test --workspace --test policy -- --ignored the_rendered_docs_link_only_inside_them",
        ],
    ),
    step(
        Lane::Main,
        // The shipped binaries only: the repository's tools and test crates have no release
        // users (the benchmarks build their own, below).
        // Each package alone: the build `cargo run --release -p nrtucode-cli` makes, which the
        // template's steps beside reuse (built together, the C library's features of shared
        // dependencies would make the CLI a build of its own: `device::host_tool`).
        "release build of the CLI and the C libraries",
        &[
            "cargo build --release -p nrtucode-cli",
            "cargo build --release -p nrtucode-capi",
            "ls -l {target}/release/nrtucode {target}/release/libnrtucode_capi.a {target}/release/libnrtucode_capi.so",
        ],
    ),
    step(
        Lane::Beside,
        "docs as docs.rs builds them (nightly, --cfg docsrs, the metadata's features, -D warnings)",
        &["xtask docs"],
    )
    .freeing(&["docsrs"]),
    step(
        Lane::Beside,
        "the oldest Rust the core builds with (its rust-version): a fresh crate resolving and building with it, host and thumbv7em",
        &["xtask msrv"],
    )
    .freeing(&["msrv"]),
    step(
        Lane::Main,
        "packages: cargo package, < 10 MiB, no binaries; each built from its .crate: by fresh crates (host, thumbv7em), the C library alone, the packaged CLI",
        &["xtask package"],
    ),
    // crates/nrtucode-capi/tests/install_c.rs; `--workspace` keeps README's test command's
    // features: nothing is built again.
    step(
        Lane::Main,
        "C library: scripts/install-c.sh into temporary prefixes, C programs through pkg-config (shared, then static), refusals, uninstall, hostile cases",
        &["cargo test --workspace --test install_c -- --ignored"],
    )
    .freeing(&["tmp/install-c"]),
    step(
        Lane::Main,
        "C library read from its file: nrtucode inspect of the partition-backed library built with the test key named and with a key of its own (blob source, key ID, build)",
        &["cargo test --workspace --test inspect_library -- --ignored"],
    )
    .freeing(&["tmp/inspect-library"]),
    step(
        Lane::Main,
        "deflate codec: real firmware (cyw43-firmware crate) against gzip -9 (its round trips, refusals and stored fixtures run in README's test command), the decoder built for thumbv7em",
        &[
            // The codec's one ignored test (it needs gzip); README's test command ran the rest,
            // and `--workspace` is its build (`-p` would compile the codec's tests again).
            "cargo test --workspace --test real_firmware -- --ignored",
            "cargo build -p nrtucode --target thumbv7em-none-eabihf --no-default-features --features gen-cayman,flavor-perf,deflate,defmt",
        ],
    ),
    step(Lane::Beside, "miri", &["xtask miri"]).freeing(&["miri"]),
    // The informative benchmarks (figures nothing asserts) run on demand: `cargo xtask bench`.
    // What CI ran of them is checked where it costs nothing more: the clippy step type-checks
    // every bench target (`--all-targets`) and README's test command runs the carve bench's
    // self-check.
    step(
        Lane::Beside,
        "fuzz the carver, the blob directory check, the partition reader and the deflate decoder (bounded in all)",
        &["xtask fuzz --seconds {fuzz}"],
    )
    .freeing(&["fuzz"]),
    // The template's steps (its own workspace and target directories; the release CLI it
    // uses is built in the workspace's, waiting for its lock) run beside too, after fuzzing:
    // README's test command has about ended by then, and they run while the main lane does.
    step(
        Lane::Beside,
        "bare-metal template: blobs in XFLASH, internal flash < 16 KiB, gc per blob",
        &[
            "examples/bare-metal: cargo clippy --quiet --release --locked --bins --examples -- -D warnings",
            "examples/bare-metal: cargo clippy --quiet --release --locked --bins --examples --features qemu,const-resolve -- -D warnings",
            "xtask bare-metal",
        ],
    ),
    step(
        Lane::Beside,
        "bare metal under QEMU: the template on mps2-an386 (intact, tampered, erased flash; decoded defmt log), a RISC-V loader on virt",
        &[
            "xtask qemu --case arm",
            "examples/riscv-virt: cargo clippy --quiet --release --locked -- -D warnings",
            "xtask qemu --case riscv",
        ],
    ),
    step(
        Lane::Beside,
        "the template README's walkthrough, as written: carve (the look-alike for the vendor library), build a copy of the template from the carve, boot it under QEMU",
        &["xtask qemu --case walkthrough"],
    ),
    step(
        Lane::Beside,
        "the template with feature partition under QEMU: no blob linked, the signed partition loaded on its own at 0x21000000, every tamper case refused (decoded log, exit status), the README's three commands as written",
        &[
            "examples/bare-metal: NRTUCODE_PARTITION_KEY=test cargo clippy --quiet --release --locked --bins --no-default-features --features partition,deflate -- -D warnings",
            "examples/bare-metal: NRTUCODE_PARTITION_KEY=test cargo clippy --quiet --release --locked --bins --no-default-features --features qemu,partition -- -D warnings",
            "examples/bare-metal: NRTUCODE_PARTITION_KEY=test cargo clippy --quiet --release --locked --bins --examples --no-default-features --features qemu,deflate -- -D warnings",
            "xtask qemu --case partition",
        ],
    ),
    step(
        Lane::Beside,
        "the template with feature update under QEMU: a factory image from `nrtucode provision` for its own layout boots slot A; slot A boots, an update streamed into slot B boots on trial, is confirmed and boots again across resets; an update package (a delta by blob) whose link drops halfway resumes past what slot B holds, checked; a changed, a cut-off and a downgraded update are refused and slot A keeps booting; the install, the refusal and the package again with the slots read through `read` alone (feature unmapped); the async updater's install, trial and confirmation (example update_async)",
        &[
            "examples/bare-metal: NRTUCODE_PARTITION_KEY=test cargo clippy --quiet --release --locked --bins --examples --no-default-features --features update -- -D warnings",
            "examples/bare-metal: NRTUCODE_PARTITION_KEY=test cargo clippy --quiet --release --locked --bins --examples --no-default-features --features update,unmapped -- -D warnings",
            "examples/bare-metal: NRTUCODE_PARTITION_KEY=test cargo clippy --quiet --release --locked --bins --examples --no-default-features --features async -- -D warnings",
            "xtask qemu --case update",
        ],
    ),
    step(
        Lane::Beside,
        "reproducible firmware: the template from two checkouts puts the same bytes into flash",
        &["xtask reproducible"],
    )
    // The last of the template's steps: its builds and the RISC-V loader's.
    .freeing(&["bare-metal", "riscv-virt"]),
    // Beside, last: its builds go to a target directory of its own (under cargo's target tmp);
    // in the workspace's it only runs the test binary README's test command built (cargo holds
    // the workspace's lock for the check that it is fresh, not while the test runs). The lane
    // beside ends minutes before the main lane otherwise.
    step(
        Lane::Beside,
        "no panic reachable from the resolvers (link check on thumbv7em and riscv32imac; the deflate path by its call graph)",
        &["cargo test --workspace --test nopanic -- --ignored"],
    )
    .freeing(&["tmp/nopanic-check"]),
];

/// Runs every step of `lane` (every step when `None`), in order, stopping at the first that
/// fails; prints the summary either way. With `reclaim`, what a passed step frees
/// ([`Step::freeing`]) is removed (a fresh clone in CI: nothing would reuse it), README's test
/// command's too when `skip_workspace_tests` says it ran before.
pub fn run(
    meta: &Metadata,
    fuzz_seconds: u64,
    skip_workspace_tests: bool,
    lane: Option<Lane>,
    reclaim: bool,
) -> Result<(), String> {
    let per_target = (fuzz_seconds / crate::fuzz::TARGETS.len() as u64).max(1);
    let started = Instant::now();
    let cpu_started = cpu_seconds();
    let mut took: Vec<(&str, Duration, Option<f64>, Option<f64>)> = Vec::new();
    let mut failed = None;
    // What --reclaim removed, and after which step.
    let mut freed: Vec<(&str, &str)> = Vec::new();
    // One scratch directory a lane: the two lanes run at once.
    let scratch_name = lane.map_or_else(|| "ci".to_owned(), |l| format!("ci-{}", l.name()));
    for step in STEPS {
        let Step {
            lane: step_lane,
            title,
            lines,
            frees,
        } = *step;
        if lane.is_some_and(|l| l != step_lane) {
            continue;
        }
        if skip_workspace_tests && title == WORKSPACE_TESTS {
            if reclaim {
                free(&meta.target_dir, frees);
            }
            continue;
        }
        println!("\n==> [{:4}s] {title}", started.elapsed().as_secs());
        let t = Instant::now();
        let cpu = cpu_seconds();
        let work = meta.scratch(&scratch_name)?;
        let fill = |line: &str| -> Result<String, String> {
            Ok(line
                .replace("{work}", path_str(&work)?)
                .replace("{target}", path_str(&meta.target_dir)?)
                .replace("{fuzz}", &per_target.to_string()))
        };
        let result = lines.iter().try_for_each(|line| run_line(&fill(line)?));
        let _ = std::fs::remove_dir_all(&work);
        let step_cpu = cpu_seconds().zip(cpu).map(|(end, start)| end - start);
        if reclaim && result.is_ok() {
            free(&meta.target_dir, frees);
            freed.extend(frees.iter().map(|dir| (title, *dir)));
        }
        took.push((title, t.elapsed(), step_cpu, free_gb(&meta.target_dir)));
        if let Err(e) = result {
            failed = Some(format!("step \"{title}\": {e}"));
            break;
        }
    }
    // A freed directory a later step built again cost that step its build: the freeing is in
    // the wrong place. Said as a failure, so the list stays true as the steps change.
    if failed.is_none() {
        let again: Vec<String> = (freed.iter())
            .filter(|(_, dir)| meta.target_dir.join(dir).exists())
            .map(|(title, dir)| format!("{dir} (freed after \"{title}\")"))
            .collect();
        if !again.is_empty() {
            failed = Some(format!(
                "built again after it was freed, by a later step: {}; free it after the last step that reads it (Step::freeing)",
                again.join(", ")
            ));
        }
    }
    // Wall seconds depend on what else the machine runs; CPU seconds (user + system of the
    // step's processes) much less: both, so a run on a busy machine still shows the cost.
    let of_lane = lane.map_or_else(String::new, |l| format!(", lane {}", l.name()));
    // The disk left when each step ended (both lanes write to it): CI on a small disk fails
    // where it fills, so the figure shows the margin.
    println!(
        "\n==> summary{of_lane}: seconds per step (wall, then CPU: user + system), then GB free on the target directory's disk at its end"
    );
    let cpu_column = |cpu: Option<f64>| cpu.map_or_else(|| "     -".into(), |c| format!("{c:6.0}"));
    let disk_column =
        |free: Option<f64>| free.map_or_else(|| "     -".into(), |f| format!("{f:6.1}"));
    for (title, d, cpu, free) in &took {
        println!(
            "{:6.0} {} {}  {title}",
            d.as_secs_f64(),
            cpu_column(*cpu),
            disk_column(*free)
        );
    }
    let total_cpu = cpu_seconds()
        .zip(cpu_started)
        .map(|(end, start)| end - start);
    println!(
        "{:6.0} {} {}  total",
        started.elapsed().as_secs_f64(),
        cpu_column(total_cpu),
        disk_column(free_gb(&meta.target_dir))
    );
    match failed {
        Some(e) => Err(e),
        None => {
            println!("ci: all steps passed");
            Ok(())
        }
    }
}

/// Removes each of `dirs` (relative to `target_dir`), saying how much it held.
fn free(target_dir: &std::path::Path, dirs: &[&str]) {
    for dir in dirs {
        let path = target_dir.join(dir);
        let bytes = crate::files::tree_bytes(&path);
        match std::fs::remove_dir_all(&path) {
            Ok(()) => println!("ci: freed {dir} ({} MB)", bytes / 1_000_000),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            // A directory left behind costs disk, not a verdict: said, and the run goes on.
            Err(e) => println!("ci: could not free {}: {e}", path.display()),
        }
    }
}

/// The gigabytes free to this user on the disk holding `path` (`df -Pk`); `None` where `df`
/// does not answer so.
fn free_gb(path: &std::path::Path) -> Option<f64> {
    let out = std::process::Command::new("df")
        .arg("-Pk")
        .arg(path)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    // POSIX format: a header, then "filesystem blocks used available capacity mount".
    let kib: u64 = text
        .lines()
        .nth(1)?
        .split_whitespace()
        .nth(3)?
        .parse()
        .ok()?;
    Some(kib as f64 * 1024.0 / 1e9)
}

/// CPU seconds (user + system) of this process and of every process it has waited for, from
/// `/proc/self/stat` (in clock ticks of 1/100 s, Linux's fixed USER_HZ); `None` elsewhere.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // After the command name in parentheses: field 3 (state) onwards; utime, stime, cutime and
    // cstime are fields 14 to 17.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = fields
        .get(11..15)?
        .iter()
        .map(|f| f.parse::<u64>().ok())
        .sum::<Option<u64>>()?;
    Some(ticks as f64 / 100.0)
}

/// Runs one command line of a step (the syntax above).
fn run_line(line: &str) -> Result<(), String> {
    let (dir, line) = match line.split_once(": ") {
        Some((dir, rest)) if !dir.contains(' ') => (Some(dir), rest),
        _ => (None, line),
    };
    let mut words: Vec<&str> = line.split_whitespace().collect();
    let env_words = words.iter().take_while(|w| w.contains('=')).count();
    let env: Vec<&str> = words.drain(..env_words).collect();
    if words.first() == Some(&"xtask") {
        return crate::run_args(&words[1..]);
    }
    let mut command = cmd(words[0], &words[1..].join(" "));
    for pair in env {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        command.env(name, value);
    }
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    status(&mut command)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_cli_test_file_with_root_only_cases_is_run_as_root() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../nrtucode-cli/tests");
        let mut found = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            if text.contains("#[ignore = \"needs root") {
                found.push(path.file_stem().unwrap().to_string_lossy().into_owned());
            }
        }
        let line = (super::STEPS.iter().flat_map(|s| s.lines))
            .find(|l| l.starts_with("cargo test --workspace --test atomic_write "))
            .unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        let mut listed: Vec<&str> = (words.windows(2))
            .filter(|w| w[0] == "--test")
            .map(|w| w[1])
            .collect();
        found.sort();
        listed.sort_unstable();
        assert_eq!(found, listed);
    }

    /// The portable-hosts step leaves the carve library and the CLI out of the aarch64 Linux
    /// check because none of their code depends on the architecture: this keeps it so.
    #[test]
    fn the_cli_and_carver_have_no_code_by_architecture() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = 0;
        for dir in ["nrtucode-cli/src", "nrtucode-carve/src"] {
            for path in crate::files::walk(&root.join(dir), ".rs").unwrap() {
                let text = std::fs::read_to_string(&path).unwrap();
                // Code, not comments (doc comments say why `unsafe` is forbidden).
                let code: Vec<&str> = (text.lines())
                    .filter(|l| !l.trim_start().starts_with("//"))
                    .filter(|l| !l.contains("forbid(unsafe_code)"))
                    .collect();
                for word in [
                    "target_arch",
                    "target_pointer_width",
                    "target_endian",
                    "c_char",
                    "unsafe",
                ] {
                    let uses: Vec<&&str> = code.iter().filter(|l| l.contains(word)).collect();
                    assert!(uses.is_empty(), "{}: {word}: {uses:?}", path.display());
                }
                files += 1;
            }
        }
        assert!(files > 10, "{files} source files read");
    }

    /// A release build or run of the CLI names it alone, so that it is the build the template's
    /// steps and README blocks reuse (`device::host_tool`); a line naming a second package fails.
    #[test]
    fn the_release_cli_is_built_alone() {
        let lines = (super::STEPS.iter().flat_map(|s| s.lines))
            .filter(|l| l.contains("--release") && l.contains("-p nrtucode-cli"));
        let mut seen = 0;
        for line in lines {
            assert_eq!(line.matches("-p ").count(), 1, "{line}");
            seen += 1;
        }
        assert!(
            seen >= 2,
            "{seen} release builds or runs of the CLI in the steps"
        );
    }

    #[test]
    fn the_cpu_seconds_count_the_processes_waited_for() {
        let before = super::cpu_seconds().unwrap();
        // A fixed amount of work in a child: 20 GiB of zeros copied, ~0.6 s of system time.
        assert!(
            super::run_line("dd if=/dev/zero of=/dev/null bs=1M count=20480 status=none").is_ok()
        );
        let spent = super::cpu_seconds().unwrap() - before;
        assert!(spent >= 0.2, "{spent} s");
    }

    #[test]
    fn a_line_runs_in_its_directory_with_its_environment() {
        assert!(super::run_line("src: test -f ci.rs").is_ok());
        assert!(super::run_line("test -f ci.rs").is_err());
        assert!(super::run_line("CI_X=1 printenv CI_X").is_ok());
        assert!(super::run_line("printenv CI_Y").is_err());
    }

    /// Every command line of the lane beside is a task that builds in a target directory of
    /// its own (or miri's, under nightly) or one of the template's steps (its own workspaces;
    /// the tools they run wait for the workspace's lock), never a plain cargo command in the
    /// workspace's target directory, and README's test command stays in the main lane.
    #[test]
    fn the_lane_beside_builds_only_in_target_directories_of_its_own() {
        use super::{Lane, STEPS, WORKSPACE_TESTS};
        let own = [
            "xtask docs",
            "xtask msrv",
            "xtask miri",
            "xtask fuzz ",
            "cargo +nightly miri ",
            "xtask bare-metal",
            "xtask qemu ",
            "xtask reproducible",
            "examples/bare-metal: ",
            "examples/riscv-virt: ",
            // README's test command built it; it builds in CARGO_TARGET_TMPDIR/nopanic-check.
            "cargo test --workspace --test nopanic ",
        ];
        let beside: Vec<&str> = (STEPS.iter())
            .filter(|s| s.lane == Lane::Beside)
            .flat_map(|s| s.lines.iter().copied())
            .collect();
        assert!(!beside.is_empty());
        for line in beside {
            assert!(own.iter().any(|p| line.starts_with(p)), "{line}");
        }
        let tests = STEPS.iter().find(|s| s.title == WORKSPACE_TESTS).unwrap();
        assert_eq!(tests.lane, Lane::Main);
    }

    /// A step frees only scratch of its own: never what README's test command, the release
    /// CLI or the cross builds leave for later steps (the profiles' and targets' directories),
    /// and only below the target directory.
    #[test]
    fn steps_free_only_their_own_directories() {
        let shared = ["debug", "release", "doc", "xtask", "package", "tmp"];
        let mut freed = Vec::new();
        for step in super::STEPS {
            for dir in step.frees {
                let first = dir.split('/').next().unwrap();
                assert!(!shared.contains(dir), "{}: {dir}", step.title);
                assert!(!first.contains('-') || first == "bare-metal" || first == "riscv-virt");
                assert!(!dir.split('/').any(|part| part == ".." || part.is_empty()));
                assert!(!freed.contains(dir), "{dir} freed twice");
                freed.push(dir);
            }
        }
        assert!(freed.len() >= 10, "{freed:?}");
    }

    #[test]
    fn free_removes_a_directory_and_passes_over_a_missing_one() {
        let target = std::env::temp_dir().join(format!("xtask-free-{}", std::process::id()));
        std::fs::create_dir_all(target.join("a/b")).unwrap();
        std::fs::write(target.join("a/b/file"), [0u8; 2_000_000]).unwrap();
        assert_eq!(crate::files::tree_bytes(&target.join("a")), 2_000_000);
        super::free(&target, &["a", "missing"]);
        assert!(!target.join("a").exists() && target.exists());
        std::fs::remove_dir_all(&target).unwrap();
    }

    #[test]
    fn the_free_disk_is_read_from_df() {
        let free = super::free_gb(std::path::Path::new(".")).unwrap();
        assert!(free > 0.0, "{free}");
    }

    #[test]
    fn every_xtask_line_parses() {
        for line in super::STEPS.iter().flat_map(|s| s.lines) {
            if let Some(task) = line.strip_prefix("xtask ") {
                let task = task.replace("{fuzz}", "1");
                let args = std::iter::once("cargo xtask").chain(task.split_whitespace());
                assert!(
                    <crate::Cli as clap::Parser>::try_parse_from(args).is_ok(),
                    "{line}"
                );
            }
        }
    }
}
