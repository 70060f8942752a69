//! `nrtucode provision` and `nrtucode inspect --layout`: the factory image
//! of an update region, checked by the core's own `Slots` over the image bytes in the core's
//! in-memory NOR flash (`update::mem_flash`, with the device's exact geometry), the refusals, the
//! inspection of a provisioned image and of one the core advanced, hostile images, and the
//! commands docs/update.md gives a user.

mod partition_common;
use partition_common::{key, nrtucode, public, root, text};

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Output;

use nrtucode::partition::{PublicKey, TableClass};
use nrtucode::update::mem_flash::MemFlash;
use nrtucode::update::{Config, Layout, MappedFlash, Slot, Slots, Status};

// ---------------------------------------------------------------------------------------------
// A NOR flash of the device's geometry (the core's `mem_flash`): `R`-byte reads, `W`-byte
// writes, `E`-byte erases.

/// QSPI NOR: 4 KiB sectors, 4-byte writes, byte reads.
type Qspi = MemFlash<1, 4, 4096>;
/// Internal flash: 2 KiB pages, 8-byte writes, 4-byte reads.
type Internal = MemFlash<4, 8, 2048>;

// ---------------------------------------------------------------------------------------------
// The layouts and partitions.

/// The QSPI layout: 3 MiB slots at 0 and 3 MiB, the state at 6 MiB.
const QSPI: Layout = Layout {
    slot_a: 0,
    slot_b: 0x30_0000,
    slot_len: 0x30_0000,
    state: 0x60_0000,
};
const QSPI_IMAGE_LEN: usize = 0x60_2000;

const QSPI_FILE: &str = "\
# QSPI NOR (4 KiB sectors, 4-byte writes)
slot_a     = 0x000000
slot_b     = 0x300000
slot_len   = 3M
state      = 0x600000
erase_size = 4K
write_size = 4
read_size  = 1
";

/// The same layout as flags.
fn qspi_flags() -> Vec<OsString> {
    [
        "--slot-a-offset",
        "0",
        "--slot-b-offset",
        "0x300000",
        "--slot-len",
        "3M",
        "--state-offset",
        "0x600000",
        "--erase-size",
        "4096",
        "--write-size",
        "4",
    ]
    .map(OsString::from)
    .to_vec()
}

fn test_key() -> PublicKey {
    let pem = std::fs::read_to_string(public()).unwrap();
    nrtucode_pack::public_key_from_pem(&pem).unwrap()
}

/// The front fixtures packed into `dir/NAME` with the test key and `counter`.
fn pack(dir: &Path, name: &str, counter: u32, extra: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let mut args: Vec<OsString> = vec![
        "pack".into(),
        "--fixtures".into(),
        "front".into(),
        "--security-counter".into(),
        counter.to_string().into(),
        "-o".into(),
        out.clone().into(),
    ];
    args.extend(extra.iter().map(OsString::from));
    if !extra.contains(&"--unsigned") && !extra.contains(&"--key") {
        args.extend(["--key".into(), key().into()]);
    }
    let o = nrtucode(&args, dir);
    assert!(o.status.success(), "{}", text(&o.stderr));
    out
}

/// A test directory with `a.part` (counter 1), `b.part` (counter 2, deflate) and the QSPI
/// layout file `board.layout`.
fn setup() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let a = pack(t, "a.part", 1, &[]);
    let b = pack(t, "b.part", 2, &["--compress", "deflate"]);
    let layout = t.join("board.layout");
    std::fs::write(&layout, QSPI_FILE).unwrap();
    (tmp, a, b, layout)
}

fn args(words: &[&dyn AsRef<std::ffi::OsStr>]) -> Vec<OsString> {
    words.iter().map(|w| w.as_ref().to_owned()).collect()
}

fn provision(dir: &Path, extra: &[OsString]) -> Output {
    let mut a: Vec<OsString> = vec!["provision".into(), "--public-key".into(), public().into()];
    a.extend(extra.iter().cloned());
    nrtucode(&a, dir)
}

fn inspect(dir: &Path, image: &Path, layout: &Path, json: bool) -> Output {
    let mut a = args(&[
        &"inspect",
        &image,
        &"--layout",
        &layout,
        &"--public-key",
        &public(),
    ]);
    if json {
        a.push("--json".into());
    }
    nrtucode(&a, dir)
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o.stdout)))
}

fn slots<F: MappedFlash>(flash: F, layout: Layout) -> Slots<F> {
    let config = Config {
        layout,
        key: test_key(),
        class: TableClass::Front,
    };
    Slots::new(flash, config).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Provisioning.

/// The image of slot A alone boots slot A, confirmed, through the core over the image bytes in
/// the device's geometry: slot A holds the partition byte for byte, everything else is erased.
#[test]
fn a_provisioned_image_boots_slot_a_confirmed() {
    let (tmp, a, _, layout) = setup();
    let t = tmp.path();
    let out = t.join("factory.bin");
    let o = provision(
        t,
        &args(&[&"--slot-a", &a, &"--layout", &layout, &"-o", &out]),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let said = text(&o.stdout);
    assert!(said.contains("program it at flash offset 0x0"), "{said}");
    assert!(said.contains("boots slot A, confirmed"), "{said}");
    let image = std::fs::read(&out).unwrap();
    assert_eq!(image.len(), QSPI_IMAGE_LEN);
    let part = std::fs::read(&a).unwrap();
    assert_eq!(&image[..part.len()], &part[..]);
    assert!(image[part.len()..].iter().all(|b| *b == 0xff));

    let mut s = slots(Qspi::from(image), QSPI);
    let boot = s.boot().unwrap();
    assert_eq!(boot.slot, Slot::A);
    assert!(!boot.fell_back);
    assert_eq!(boot.state.status, Status::Confirmed);
    assert_eq!(boot.state.min_security_counter, 1);
    assert_eq!(boot.partition.partition().bytes(), &part[..]);
}

/// Slot B given with `--first-boot a` (the default) is a spare: the state stays erased, the
/// device boots A, and falls back to B when A is damaged. The layout as flags gives the same
/// image as the layout file.
#[test]
fn slot_b_as_a_spare_is_the_fallback_and_flags_equal_the_file() {
    let (tmp, a, b, layout) = setup();
    let t = tmp.path();
    let (from_file, from_flags) = (t.join("file.bin"), t.join("flags.bin"));
    let o = provision(
        t,
        &args(&[
            &"--slot-a",
            &a,
            &"--slot-b",
            &b,
            &"--layout",
            &layout,
            &"-o",
            &from_file,
        ]),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let mut flags = args(&[&"--slot-a", &a, &"--slot-b", &b, &"-o", &from_flags]);
    flags.extend(qspi_flags());
    let o = provision(t, &flags);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let image = std::fs::read(&from_file).unwrap();
    assert_eq!(image, std::fs::read(&from_flags).unwrap());
    let b_bytes = std::fs::read(&b).unwrap();
    let at = QSPI.slot_b as usize;
    assert_eq!(&image[at..at + b_bytes.len()], &b_bytes[..]);
    assert!(image[QSPI.state as usize..].iter().all(|x| *x == 0xff));

    let mut s = slots(Qspi::from(image.clone()), QSPI);
    let boot = s.boot().unwrap();
    assert_eq!((boot.slot, boot.fell_back), (Slot::A, false));
    // Slot A damaged: the device falls back to the spare.
    let mut damaged = image;
    damaged[0x200] ^= 0x01;
    let mut s = slots(Qspi::from(damaged), QSPI);
    let boot = s.boot().unwrap();
    assert_eq!((boot.slot, boot.fell_back), (Slot::B, true));
}

/// `--first-boot b-trial` writes what the device's own install writes: the test repeats it
/// through the core over a flash of the device's exact geometry (4-byte writes, byte reads,
/// where the tool's in-memory flash uses 4 for both) and gets the same bytes; the first boot
/// tries B on trial.
#[test]
fn b_on_trial_is_byte_for_byte_the_devices_install() {
    let (tmp, a, b, layout) = setup();
    let t = tmp.path();
    let out = t.join("trial.bin");
    let o = provision(
        t,
        &args(&[
            &"--slot-a",
            &a,
            &"--slot-b",
            &b,
            &"--first-boot",
            &"b-trial",
            &"--layout",
            &layout,
            &"-o",
            &out,
        ]),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("record 1: slot B on trial"));
    let image = std::fs::read(&out).unwrap();

    let mut device = vec![0xff; QSPI_IMAGE_LEN];
    let a_bytes = std::fs::read(&a).unwrap();
    device[..a_bytes.len()].copy_from_slice(&a_bytes);
    let mut s = slots(Qspi::from(device), QSPI);
    let mut install = s.install().unwrap();
    assert_eq!(install.target(), Slot::B);
    for chunk in std::fs::read(&b).unwrap().chunks(1000) {
        install.write(chunk).unwrap();
    }
    install.finish().unwrap();
    let device = s.into_flash().into_bytes();
    assert!(
        image == device,
        "the tool's image differs from the device's"
    );

    let mut s = slots(Qspi::from(image), QSPI);
    let boot = s.boot().unwrap();
    assert_eq!(boot.slot, Slot::B);
    assert_eq!(boot.state.status, Status::Trial { boots: 1 });
    assert_eq!(boot.state.previous, Some(Slot::A));
}

/// A layout above flash offset 0, in internal-flash geometry (2 KiB pages, 8-byte writes,
/// 4-byte reads): the image starts at the lowest region, and programmed there (the flash below
/// it left as it was) it boots B on trial through the core at the real offsets.
#[test]
fn an_image_above_offset_0_boots_where_it_is_programmed() {
    let (tmp, a, b, _) = setup();
    let t = tmp.path();
    let layout_file = t.join("internal.layout");
    std::fs::write(
        &layout_file,
        "slot_a = 0x340000\nslot_b = 0x40000\nslot_len = 0x300000\nstate = 0x640000\n\
         state_len = 4K\nerase_size = 2K\nwrite_size = 8\nread_size = 4\nerased = 0xff\n\
         flash_base = 0x08000000\n",
    )
    .unwrap();
    let out = t.join("internal.bin");
    let o = provision(
        t,
        &args(&[
            &"--slot-a",
            &a,
            &"--slot-b",
            &b,
            &"--first-boot",
            &"b-trial",
            &"--layout",
            &layout_file,
            &"-o",
            &out,
        ]),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let said = text(&o.stdout);
    assert!(
        said.contains("flash offsets 0x40000 to 0x641000 (program it at flash offset 0x40000, address 0x8040000)"),
        "{said}"
    );
    let image = std::fs::read(&out).unwrap();
    assert_eq!(image.len(), 0x64_1000 - 0x4_0000);
    // The device's flash: something of its own below the image, then the image.
    let mut flash = vec![0x5a; 0x4_0000];
    flash.extend_from_slice(&image);
    let layout = Layout {
        slot_a: 0x34_0000,
        slot_b: 0x4_0000,
        slot_len: 0x30_0000,
        state: 0x64_0000,
    };
    let mut s = slots(Internal::from(flash), layout);
    let boot = s.boot().unwrap();
    assert_eq!((boot.slot, boot.fell_back), (Slot::B, false));
    assert_eq!(boot.state.status, Status::Trial { boots: 1 });
    assert!(s.flash().bytes()[..0x4_0000].iter().all(|b| *b == 0x5a));
}

/// Every refusal: its exit code, its reason, and no output file.
#[test]
fn provision_refuses_what_the_device_would_not_boot() {
    let (tmp, a, b, layout) = setup();
    let t = tmp.path();
    let unsigned = pack(t, "u.part", 1, &["--unsigned"]);
    let other_key = t.join("other.pem");
    let o = nrtucode(&args(&[&"key", &"generate", &"-o", &other_key]), t);
    assert!(o.status.success());
    let foreign = pack(t, "o.part", 1, &["--key", other_key.to_str().unwrap()]);
    let mut flipped = std::fs::read(&b).unwrap();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x80;
    let flipped_path = t.join("flipped.part");
    std::fs::write(&flipped_path, &flipped).unwrap();
    let small = t.join("small.layout");
    std::fs::write(
        &small,
        QSPI_FILE.replace("slot_len   = 3M", "slot_len = 2M"),
    )
    .unwrap();
    let misaligned = t.join("misaligned.layout");
    std::fs::write(
        &misaligned,
        QSPI_FILE.replace("slot_b     = 0x300000", "slot_b = 0x300800"),
    )
    .unwrap();
    let out = t.join("out.bin");
    let with = |extra: Vec<OsString>| {
        let mut v = args(&[&"-o", &out]);
        v.extend(extra);
        v
    };
    let flags_with = |change: (&str, &str)| {
        let mut v = args(&[&"--slot-a", &a]);
        v.extend(
            qspi_flags()
                .into_iter()
                .map(|f| if f == change.0 { change.1.into() } else { f }),
        );
        v
    };
    let cases: Vec<(Vec<OsString>, i32, &str)> = vec![
        (
            with(args(&[&"--slot-a", &a, &"--layout", &small])),
            65,
            "a.part: 2860384 bytes do not fit slot A (2097152 bytes",
        ),
        (
            with(args(&[&"--slot-a", &a, &"--layout", &misaligned])),
            65,
            "slot_b 0x300800 is not a multiple of erase_size 0x1000",
        ),
        (
            with(flags_with(("0x300000", "0x200000"))),
            64,
            "the slots and the state must not overlap",
        ),
        (
            with(flags_with(("4096", "3000"))),
            64,
            "erase_size 3000 is not supported",
        ),
        (
            with(args(&[&"--slot-a", &a, &"--slot-len", &"3M"])),
            64,
            "the layout needs --slot-a-offset, --slot-b-offset, --state-offset, --erase-size, --write-size too",
        ),
        (
            with(args(&[&"--slot-a", &unsigned, &"--layout", &layout])),
            65,
            "u.part: refused for slot A: the partition is unsigned",
        ),
        (
            with(args(&[
                &"--slot-a",
                &a,
                &"--slot-b",
                &foreign,
                &"--layout",
                &layout,
            ])),
            65,
            "o.part: refused for slot B: signed by an unknown key",
        ),
        (
            with(args(&[
                &"--slot-a",
                &a,
                &"--slot-b",
                &flipped_path,
                &"--layout",
                &layout,
            ])),
            65,
            "flipped.part: refused for slot B: blob",
        ),
        (
            with(args(&[
                &"--slot-a",
                &a,
                &"--class",
                &"full",
                &"--layout",
                &layout,
            ])),
            65,
            "refused for slot A",
        ),
        (
            with(args(&[
                &"--slot-a",
                &a,
                &"--first-boot",
                &"b-trial",
                &"--layout",
                &layout,
            ])),
            64,
            "--first-boot b-trial needs --slot-b B.part",
        ),
        (
            with(args(&[
                &"--slot-a",
                &t.join("missing.part"),
                &"--layout",
                &layout,
            ])),
            66,
            "missing.part",
        ),
        (
            with(args(&[
                &"--slot-a",
                &a,
                &"--layout",
                &t.join("missing.layout"),
            ])),
            66,
            "missing.layout",
        ),
    ];
    for (extra, code, want) in cases {
        let o = provision(t, &extra);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{extra:?}: {err}");
        assert!(err.starts_with("nrtucode: error: "), "{err}");
        assert!(err.contains(want), "{extra:?}: want {want:?} in {err}");
        assert!(!out.exists(), "{extra:?} wrote {}", out.display());
    }
    // The output may not be an input: 73, the input unchanged.
    for input in [&a, &layout] {
        let before = std::fs::read(input).unwrap();
        let o = provision(
            t,
            &args(&[&"--slot-a", &a, &"--layout", &layout, &"-o", input]),
        );
        assert_eq!(o.status.code(), Some(73), "{}", text(&o.stderr));
        assert_eq!(std::fs::read(input).unwrap(), before);
    }
}

// ---------------------------------------------------------------------------------------------
// Inspecting an image.

fn provisioned(t: &Path, a: &Path, layout: &Path) -> PathBuf {
    let out = t.join("factory.bin");
    let o = provision(
        t,
        &args(&[&"--slot-a", &a, &"--layout", &layout, &"-o", &out]),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    out
}

/// A provisioned image: slot A confirmed (the factory default), slot B erased, exit 0; then
/// the core installs B as the candidate over the image: inspect says B on trial, 3 boots
/// left; after one boot, 2; after the confirmation, B confirmed and the minimum raised to B's
/// counter, A refused for it.
#[test]
fn inspect_follows_the_state_as_the_core_advances_it() {
    let (tmp, a, b, layout) = setup();
    let t = tmp.path();
    let image = provisioned(t, &a, &layout);
    let o = inspect(t, &image, &layout, false);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let said = text(&o.stdout);
    for want in [
        "VERIFIED: the next boot uses slot A",
        "active slot           A confirmed",
        "min security counter  1",
        "no record: the factory default",
    ] {
        assert!(said.contains(want), "{want:?} in {said}");
    }
    let j = json(&inspect(t, &image, &layout, true));
    assert_eq!(j["format"], "nrtucode-inspect-image/2");
    assert_eq!(j["verdict"], "verified");
    assert_eq!(j["state"]["source"], "factory default");
    assert_eq!(j["state"]["active"], "A");
    assert_eq!(j["state"]["status"], "confirmed");
    assert_eq!(j["state"]["trial_boots_left"], serde_json::Value::Null);
    assert_eq!(j["state"]["min_security_counter"], 1);
    assert_eq!(j["next_boot"]["slot"], "A");
    assert_eq!(j["slots"][0]["contents"], "partition");
    assert_eq!(j["slots"][0]["partition"]["format"], "nrtucode-inspect/3");
    assert_eq!(j["slots"][0]["partition"]["verdict"], "verified");
    assert_eq!(j["slots"][1]["contents"], "erased");

    // The device installs B.
    let mut s = slots(Qspi::from(std::fs::read(&image).unwrap()), QSPI);
    let mut install = s.install().unwrap();
    install.write(&std::fs::read(&b).unwrap()).unwrap();
    install.finish().unwrap();
    std::fs::write(&image, s.flash().bytes()).unwrap();
    let o = inspect(t, &image, &layout, false);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let said = text(&o.stdout);
    assert!(
        said.contains("B on trial, 0 of 3 boots counted (3 left before the revert to slot A)"),
        "{said}"
    );
    let j = json(&inspect(t, &image, &layout, true));
    assert_eq!(
        (
            &j["state"]["source"],
            &j["state"]["seq"],
            &j["state"]["active"],
            &j["state"]["status"],
            &j["state"]["trial_boots"],
            &j["state"]["trial_boots_left"],
            &j["state"]["previous"],
        ),
        (
            &"record".into(),
            &1.into(),
            &"B".into(),
            &"trial".into(),
            &0.into(),
            &3.into(),
            &"A".into()
        )
    );
    assert_eq!(j["next_boot"]["writes"], "a trial count");

    // One boot, then the confirmation.
    let booted = s.boot().unwrap().slot;
    std::fs::write(&image, s.flash().bytes()).unwrap();
    let j = json(&inspect(t, &image, &layout, true));
    assert_eq!(j["state"]["trial_boots_left"], 2);
    s.confirm(booted).unwrap();
    std::fs::write(&image, s.flash().bytes()).unwrap();
    let j = json(&inspect(t, &image, &layout, true));
    assert_eq!(j["verdict"], "verified", "{j}");
    assert_eq!(j["state"]["active"], "B");
    assert_eq!(j["state"]["status"], "confirmed");
    assert_eq!(j["state"]["min_security_counter"], 2);
    assert_eq!(j["state"]["records"]["valid"], 3);
    let a_check = j["slots"][0]["check"].as_str().unwrap();
    assert!(a_check.contains("security counter"), "{a_check}");
}

/// Hostile images: a clear refusal with exit 65 (66 for what is not a file), never a signal.
#[test]
fn a_hostile_image_is_refused_never_a_panic() {
    let (tmp, a, b, layout) = setup();
    let t = tmp.path();
    let trial = t.join("trial.bin");
    let o = provision(
        t,
        &args(&[
            &"--slot-a",
            &a,
            &"--slot-b",
            &b,
            &"--first-boot",
            &"b-trial",
            &"--layout",
            &layout,
            &"-o",
            &trial,
        ]),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let good = std::fs::read(&trial).unwrap();
    let state = QSPI.state as usize;
    let mut cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "truncated",
            good[..good.len() - 1].to_vec(),
            "a truncated image, or another layout",
        ),
        ("empty", Vec::new(), "a truncated image"),
        (
            "one byte longer",
            [&good[..], &[0xff]].concat(),
            "another layout",
        ),
        ("all zero", vec![0; good.len()], "no slot verifies"),
        ("all erased", vec![0xff; good.len()], "no slot verifies"),
    ];
    // The state record damaged: its active-slot byte, then its check.
    for (what, at) in [("record field", state + 9), ("record check", state + 24)] {
        let mut bad = good.clone();
        bad[at] ^= 0x01;
        cases.push((what, bad, "neither erased nor a valid record"));
    }
    // The candidate damaged: the device falls back to A.
    let mut bad = good.clone();
    bad[QSPI.slot_b as usize + 0x100] ^= 0x01;
    cases.push(("slot B damaged", bad, "the device falls back to slot A"));
    // Junk in the state sectors.
    let mut bad = good.clone();
    bad[state + 4096..state + 4096 + 64].fill(0x00);
    cases.push(("state junk", bad, "state sector 1 record place 0"));
    let img = t.join("bad.bin");
    for (what, bytes, want) in cases {
        std::fs::write(&img, &bytes).unwrap();
        for json in [false, true] {
            let o = inspect(t, &img, &layout, json);
            let err = text(&o.stderr);
            assert_eq!(o.status.code(), Some(65), "{what}: {err}");
            assert!(err.contains(want), "{what}: want {want:?} in {err}");
            if json && !err.contains("another layout") && !err.contains("truncated") {
                let j = self::json(&o);
                assert_eq!(j["verdict"], "refused", "{what}");
                assert!(j["error"].as_str().unwrap().contains(want), "{what}");
            }
        }
    }
    // A record damaged: the report still says which state the device reads instead.
    let mut bad = good.clone();
    bad[state + 9] ^= 0x01;
    std::fs::write(&img, &bad).unwrap();
    let j = json(&inspect(t, &img, &layout, true));
    assert_eq!(j["state"]["active"], "A");
    assert_eq!(j["state"]["records"]["invalid"][0]["index"], 0);
    // Not a regular file: refused without blocking.
    let o = inspect(t, Path::new("/dev/zero"), &layout, false);
    assert_eq!(o.status.code(), Some(66), "{}", text(&o.stderr));
    // A partition's options that an image does not take.
    let o = nrtucode(
        &args(&[
            &"inspect",
            &trial,
            &"--layout",
            &layout,
            &"--public-key",
            &public(),
            &"--min-security-counter",
            &"3",
        ]),
        t,
    );
    assert_eq!(o.status.code(), Some(64));
    let o = nrtucode(&args(&[&"inspect", &trial, &"--layout", &layout]), t);
    assert_eq!(o.status.code(), Some(64));
    assert!(text(&o.stderr).contains("give --public-key"));
}

// ---------------------------------------------------------------------------------------------
// The documentation's commands.

/// The sh block after `<!-- provision-walkthrough -->` in docs/update.md, run as written by
/// bash with this build's `nrtucode` first on the PATH, `REPO` the repository's root and
/// `WORK` a scratch directory (also the working directory): every command must succeed, its
/// image boot slot A confirmed, and every file it writes lands in `WORK`.
#[test]
fn the_provisioning_commands_of_docs_update_md_run_as_written() {
    let doc = std::fs::read_to_string(root().join("docs/update.md")).unwrap();
    let after = doc
        .split_once("<!-- provision-walkthrough -->")
        .expect("docs/update.md marks its provisioning block")
        .1;
    let block = after
        .trim_start()
        .strip_prefix("```sh\n")
        .and_then(|b| b.split_once("\n```"))
        .expect("an sh block right after the marker")
        .0;
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_nrtucode"), bin.join("nrtucode")).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = std::process::Command::new("bash")
        .args(["-euo", "pipefail", "-c", block])
        .current_dir(tmp.path())
        .env("PATH", path)
        .env("REPO", root())
        .env("WORK", tmp.path())
        .env_remove("NEURON_UCODE_FLAVOR")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{block}\n--- stdout\n{}\n--- stderr\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let said = text(&o.stdout);
    assert!(
        said.contains("VERIFIED: the next boot uses slot A"),
        "{said}"
    );
    assert!(said.contains("B on trial"), "{said}");
    for written in [
        "v1.part",
        "v2.part",
        "pub.pem",
        "board.layout",
        "factory.bin",
        "trial.bin",
    ] {
        assert!(
            tmp.path().join(written).is_file(),
            "{written} is not in WORK"
        );
    }
}
