//! Builds both look-alike libraries (full and front) with gcc and checks the result with binutils: the getters are
//! the vendor's four-instruction stubs pointing at the right blob, and the blobs, tables and
//! descriptors live in the vendor's sections under the vendor's names.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use nrtucode_lookalike::{
    Layout, LibraryBuild, OptLevel, Options, build_shared_object, generate_c, layout, write_sources,
};

fn tool(name: &str, args: &[&str], file: &Path) -> String {
    let out = Command::new(name)
        .args(args)
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {name}: {e}"));
    assert!(out.status.success(), "{name} {args:?} failed");
    String::from_utf8(out.stdout).expect("utf-8 tool output")
}

/// `name -> (address, type letter)` from `nm`.
fn symbols(so: &Path) -> HashMap<String, (u64, char)> {
    tool("nm", &[], so)
        .lines()
        .filter_map(|line| {
            let mut f = line.split_whitespace();
            let addr = u64::from_str_radix(f.next()?, 16).ok()?;
            let kind = f.next()?.chars().next()?;
            Some((f.next()?.to_owned(), (addr, kind)))
        })
        .collect()
}

/// `section -> (address, size)` from `readelf -SW`.
fn sections(so: &Path) -> HashMap<String, (u64, u64)> {
    tool("readelf", &["-SW"], so)
        .lines()
        .filter_map(|line| {
            let rest = line.split_once(']')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            let addr = u64::from_str_radix(f.get(2)?, 16).ok()?;
            let size = u64::from_str_radix(f.get(4)?, 16).ok()?;
            Some((f[0].to_owned(), (addr, size)))
        })
        .collect()
}

/// Function name -> its instructions (mnemonic and operands, comments kept).
fn disassembly(so: &Path) -> HashMap<String, Vec<String>> {
    let text = tool("objdump", &["-d", "--no-show-raw-insn", "-j", ".text"], so);
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(name) = line
            .strip_suffix(">:")
            .and_then(|l| l.split_once(" <"))
            .map(|(_, n)| n.to_owned())
        {
            current = Some(name);
            continue;
        }
        if let (Some(name), Some((_, insn))) = (&current, line.split_once(":\t")) {
            out.entry(name.clone())
                .or_default()
                .push(insn.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    out
}

fn within(sections: &HashMap<String, (u64, u64)>, name: &str, addr: u64) -> bool {
    let (start, size) = sections[name];
    (start..start + size).contains(&addr)
}

fn check_shared_object(so: &Path, m: &Layout, opts: &Options, opt: OptLevel) {
    let syms = symbols(so);
    let secs = sections(so);

    for table in ["image_list", "hwdecode_table_list"] {
        let (addr, kind) = syms[table];
        assert_eq!(kind, 'd', "{table} is local data");
        assert!(
            within(&secs, ".data.rel.ro", addr),
            "{table} in .data.rel.ro"
        );
    }
    for slot in m.image_list.iter().filter(|s| !s.descs.is_empty()) {
        let (addr, _) = syms[&format!("image_desc_{:02}", slot.idx)];
        assert!(
            within(&secs, ".data", addr),
            "descriptors of {} in .data",
            slot.idx
        );
    }
    for b in &m.blobs {
        let (addr, _) = syms[&b.array];
        assert!(within(&secs, ".rodata", addr), "{} in .rodata", b.array);
    }

    let dynamic = tool("nm", &["-D", "--defined-only"], so);
    let mut exported: Vec<&str> = dynamic
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    exported.sort_unstable();
    assert_eq!(
        exported,
        [opts.hwdecode_table_symbol(), opts.memory_image_symbol()]
    );

    let getter_count = syms.keys().filter(|s| s.ends_with("_get")).count();
    assert_eq!(getter_count, m.getters.len());
    let dis = disassembly(so);
    for gm in &m.getters {
        let sym = gm.getter.symbol;
        let (addr, kind) = syms[sym];
        assert_eq!(kind, 't', "{sym} is a local function");
        let mut insns = dis[sym].clone();
        if opt == OptLevel::Os && gm.size == 0 && insns[2] == "xor %eax,%eax" {
            // -Os stores a zero size through a cleared register (one byte shorter); fold it
            // back into the -O2 form for the checks below.
            insns.splice(2..4, [String::from("movq $0x0,(%rsi)")]);
        }
        let body: Vec<&String> = insns.iter().take_while(|i| !i.starts_with("ret")).collect();
        assert_eq!(body.len(), 3, "{sym}: {insns:?}");
        assert!(insns[3].starts_with("ret"), "{sym}: {insns:?}");
        assert!(
            body[0].starts_with("lea ") && body[0].contains("(%rip),%rax"),
            "{sym}: {insns:?}"
        );
        assert_eq!(body[1], "mov %rax,(%rdi)", "{sym}");
        assert_eq!(*body[2], format!("movq ${:#x},(%rsi)", gm.size), "{sym}");
        // The lea's resolved target (objdump's `# addr <sym>` comment) is the blob + offset.
        let target = body[0]
            .split_once("# ")
            .and_then(|(_, c)| c.split_whitespace().next())
            .and_then(|a| u64::from_str_radix(a, 16).ok())
            .unwrap_or_else(|| panic!("{sym}: no lea target in {:?}", body[0]));
        let array = gm.array.as_ref().expect("library has blobs");
        assert_eq!(target, syms[array].0 + gm.offset as u64, "{sym} -> {array}");
        if opt == OptLevel::O2 {
            // -O2 aligns functions to 16 bytes: the vendor's stubs sit 0x20 apart.
            assert!(addr % 16 == 0, "{sym} aligned");
        }
    }
}

#[test]
fn both_builds_build_and_look_like_the_vendor() {
    let dir = tempfile::tempdir().expect("temp dir");
    for library in LibraryBuild::ALL {
        let opts = Options::new(library);
        let written = write_sources(dir.path(), &opts).expect("write sources");
        let m = layout(library);
        for opt in [OptLevel::O2, OptLevel::Os] {
            let so = dir.path().join(format!("{}-{opt:?}.so", library.name()));
            build_shared_object(&written.c_source, &so, opt, false).expect("gcc");
            check_shared_object(&so, &m, &opts, opt);
        }
        let truth = std::fs::read_to_string(&written.truth).expect("truth");
        assert_eq!(truth.lines().count(), m.getters.len() + 1);
    }
}

#[test]
fn prefixed_resolvers_and_deterministic_output() {
    let opts = Options::new(LibraryBuild::Front)
        .with_prefix("lookalike_front_")
        .expect("prefix");
    let a = generate_c(&opts);
    assert_eq!(a, generate_c(&opts), "deterministic");
    let dir = tempfile::tempdir().expect("temp dir");
    let c = dir.path().join("front.c");
    std::fs::write(&c, &a).expect("write");
    let so = dir.path().join("front.so");
    build_shared_object(&c, &so, OptLevel::O2, true).expect("gcc -s");
    let dynamic = tool("nm", &["-D", "--defined-only"], &so);
    assert!(dynamic.contains("lookalike_front_get_memory_image"));
    assert!(dynamic.contains("lookalike_front_get_hwdecode_table"));
    assert!(!dynamic.contains("nrtucode_get"));
    // Stripped like the vendor's front library: no local symbols left.
    let out = Command::new("nm").arg(&so).output().expect("nm");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("image_list"));
}

#[test]
fn build_errors_are_reported_not_panicked() {
    let dir = tempfile::tempdir().expect("temp dir");
    let c = dir.path().join("broken.c");
    std::fs::write(&c, "this is not C").expect("write");
    let err = build_shared_object(&c, &dir.path().join("x.so"), OptLevel::O2, false)
        .expect_err("must fail");
    assert!(err.contains("broken.c"), "{err}");
}
