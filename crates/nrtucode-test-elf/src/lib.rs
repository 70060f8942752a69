//! Test support for the carver (`nrtucode-carve`), never shipped: small hand-built x86-64
//! shared objects (a few KB) with the vendor's table layout, for tests, the fuzz seeds
//! (`cargo run -p nrtucode-test-elf --example fuzz_seeds`) and the fuzz target: an ELF header,
//! program headers, a dynamic section with symbols, a hash table and relocations, four getters
//! of chosen code shapes, their blobs, the two tables and, optionally, the two exported
//! resolvers and a section header table. [`remove_section_headers`] strips the section header
//! table of any ELF64 image (the look-alike's `sstrip` condition uses it too).
//!
//! Deterministic: the same [`TinyElf`] always gives the same bytes. Addresses equal file
//! offsets (the file is loaded at 0 in two `PT_LOAD` segments: code and read-only data, then
//! writable data).
//!
//! ```text
//! 0x0000 ELF header, program headers
//! 0x0200 .dynsym  .dynstr  .hash / .gnu.hash  .rela.dyn  [.relr.dyn]  build-ID note
//! 0x0800 .text: getters, resolvers          0x0c00 .rodata: blobs
//! 0x1000 .dynamic  .got  .data.rel.ro: image_list, hwdecode_table_list, descriptor
//! after: .shstrtab, section headers (when asked for)
//! ```

#![forbid(unsafe_code)]
#![deny(unreachable_pub)]

use nrtucode_facts::facts::REGIONS;

/// The code shape of one getter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GetterShape {
    /// `lea rax,[rip+blob]; mov [rdi],rax; mov qword [rsi],size; ret` (the vendor's `-O2`).
    Vendor,
    /// An `-O0` frame: `push rbp; mov rbp,rsp`, both arguments spilled and reloaded.
    FrameO0,
    /// `-fstack-protector-all`: canary stored, stores, canary checked, `jne` to `ud2`.
    StackProtector,
    /// `-mfentry -pg`: `call [rip+GOT(__fentry__)]` first, then the vendor stub.
    Fentry,
    /// `-mcmodel=large`: GOT base from `lea [rip]` + `movabs`, blob as a `movabs` offset.
    LargeModel,
    /// `endbr64`, then a `jmp` over padding to the vendor stub.
    EndbrJump,
}

impl GetterShape {
    /// Every shape.
    pub const ALL: [GetterShape; 6] = [
        GetterShape::Vendor,
        GetterShape::FrameO0,
        GetterShape::StackProtector,
        GetterShape::Fentry,
        GetterShape::LargeModel,
        GetterShape::EndbrJump,
    ];
}

/// How the dynamic symbol count is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashStyle {
    /// `DT_HASH` (SysV).
    Sysv,
    /// `DT_GNU_HASH`.
    Gnu,
}

/// What to build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TinyElf {
    /// The IRAM, DRAM, SRAM and EXTRAM getters of the one descriptor (slot 7, key 1:
    /// `CAYMAN_NX_ACT_PERF_*_get`).
    pub getters: [GetterShape; 4],
    /// Export `image_list` and `hwdecode_table_list` as symbols (else only the resolvers).
    pub table_symbols: bool,
    /// The resolvers address the tables the large-code-model way.
    pub large_model_resolvers: bool,
    /// The symbol count source.
    pub hash: HashStyle,
    /// Relocate the table pointers with `DT_RELR` instead of `R_X86_64_RELATIVE`.
    pub relr: bool,
    /// Write a section header table.
    pub section_headers: bool,
}

impl Default for TinyElf {
    fn default() -> Self {
        Self {
            getters: [GetterShape::Vendor; 4],
            table_symbols: true,
            large_model_resolvers: false,
            hash: HashStyle::Gnu,
            relr: false,
            section_headers: true,
        }
    }
}

/// The image_list slot the descriptor sits in (CAYMAN NX ACT).
pub const SLOT: usize = 7;
/// The descriptor's flavor key (PERF).
pub const KEY: u64 = 1;

const DYNSYM: u64 = 0x200;
const TEXT: u64 = 0x800;
const RODATA: u64 = 0xc00;
const DATA: u64 = 0x1000;
const DYNAMIC_LEN: u64 = 0x100;
const GOT: u64 = DATA + DYNAMIC_LEN;
const IMAGE_LIST: u64 = GOT + 0x20;
const HWDECODE_TABLE_LIST: u64 = IMAGE_LIST + 38 * 16;
const DESC: u64 = HWDECODE_TABLE_LIST + 38 * 16;
const DATA_END: u64 = DESC + 40;
/// The GOT slot `__fentry__` is called through.
const FENTRY_SLOT: u64 = GOT + 8;

/// The blob of getter `region` (0..4): small, distinct, deterministic.
pub fn blob(region: usize) -> Vec<u8> {
    let len = [48, 32, 24, 0][region % 4];
    (0..len)
        .map(|i| {
            (i as u8)
                .wrapping_mul(37)
                .wrapping_add(region as u8 * 61 + 1)
        })
        .collect()
}

/// The positional symbol of getter `region`.
pub fn getter_symbol(region: usize) -> String {
    format!("CAYMAN_NX_ACT_PERF_{}_get", REGIONS[region % 4])
}

fn rel32(from_end: u64, to: u64) -> [u8; 4] {
    (to.wrapping_sub(from_end) as u32).to_le_bytes()
}

/// Appends the machine code of a getter at `va` returning (`blob`, `size`).
fn getter_code(shape: GetterShape, va: u64, blob: u64, size: u32) -> Vec<u8> {
    let mut c = Vec::new();
    let vendor = |c: &mut Vec<u8>, at: u64| {
        c.extend([0x48, 0x8d, 0x05]);
        c.extend(rel32(at + 7, blob));
        c.extend([0x48, 0x89, 0x07, 0x48, 0xc7, 0x06]);
        c.extend(size.to_le_bytes());
        c.push(0xc3);
    };
    match shape {
        GetterShape::Vendor => vendor(&mut c, va),
        GetterShape::FrameO0 => {
            c.extend([
                0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0x7d, 0xf8, 0x48, 0x89, 0x75, 0xf0,
            ]);
            c.extend([0x48, 0x8b, 0x45, 0xf8, 0x48, 0x8d, 0x15]);
            c.extend(rel32(va + c.len() as u64 + 4, blob));
            c.extend([0x48, 0x89, 0x10, 0x48, 0x8b, 0x45, 0xf0, 0x48, 0xc7, 0x00]);
            c.extend(size.to_le_bytes());
            c.extend([0x90, 0x5d, 0xc3]);
        }
        GetterShape::StackProtector => {
            c.extend([
                0x48, 0x83, 0xec, 0x18, 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0,
            ]);
            c.extend([0x48, 0x89, 0x44, 0x24, 0x08, 0x48, 0x8d, 0x05]);
            c.extend(rel32(va + c.len() as u64 + 4, blob));
            c.extend([0x48, 0x89, 0x07, 0x48, 0xc7, 0x06]);
            c.extend(size.to_le_bytes());
            c.extend([0x48, 0x8b, 0x44, 0x24, 0x08]);
            c.extend([0x64, 0x48, 0x2b, 0x04, 0x25, 0x28, 0, 0, 0]);
            c.extend([0x75, 0x05, 0x48, 0x83, 0xc4, 0x18, 0xc3, 0x0f, 0x0b]);
        }
        GetterShape::Fentry => {
            c.extend([0xff, 0x15]);
            c.extend(rel32(va + 6, FENTRY_SLOT));
            vendor(&mut c, va + 6);
        }
        GetterShape::LargeModel => {
            c.extend([0x48, 0x8d, 0x05, 0xf9, 0xff, 0xff, 0xff, 0x49, 0xbb]);
            c.extend(GOT.wrapping_sub(va).to_le_bytes());
            c.extend([0x4c, 0x01, 0xd8, 0x48, 0xb9]);
            c.extend(blob.wrapping_sub(GOT).to_le_bytes());
            c.extend([0x48, 0x8d, 0x04, 0x08, 0x48, 0x89, 0x07, 0x48, 0xc7, 0x06]);
            c.extend(size.to_le_bytes());
            c.push(0xc3);
        }
        GetterShape::EndbrJump => {
            c.extend([0xf3, 0x0f, 0x1e, 0xfa, 0xeb, 0x03, 0xcc, 0xcc, 0xcc]);
            vendor(&mut c, va + 9);
        }
    }
    c
}

/// A resolver at `va` that computes `table`'s address and returns it in `rax`.
fn resolver_code(large: bool, va: u64, table: u64) -> Vec<u8> {
    let mut c = Vec::new();
    if large {
        // lea rbx,[rip-7]; movabs r11,GOT-va; add rbx,r11; movabs rax,table-GOT;
        // lea rax,[rbx+rax]; ret
        c.extend([0x48, 0x8d, 0x1d, 0xf9, 0xff, 0xff, 0xff, 0x49, 0xbb]);
        c.extend(GOT.wrapping_sub(va).to_le_bytes());
        c.extend([0x4c, 0x01, 0xdb, 0x48, 0xb8]);
        c.extend(table.wrapping_sub(GOT).to_le_bytes());
        c.extend([0x48, 0x8d, 0x04, 0x03, 0xc3]);
    } else {
        c.extend([0x48, 0x8d, 0x05]);
        c.extend(rel32(va + 7, table));
        c.push(0xc3);
    }
    c
}

/// Packs sorted, 8-aligned addresses as `DT_RELR` words: an address, then bitmaps whose bit
/// `j` (1..=63) stands for the word `j - 1` places after the last covered one.
fn relr_encode(slots: &[u64]) -> Vec<u64> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < slots.len() {
        out.push(slots[i]);
        let mut next = slots[i] + 8;
        i += 1;
        loop {
            let mut bits = 0u64;
            while i < slots.len() && slots[i] >= next && slots[i] < next + 63 * 8 {
                bits |= 1 << ((slots[i] - next) / 8 + 1);
                i += 1;
            }
            if bits == 0 {
                break;
            }
            out.push(bits | 1);
            next += 63 * 8;
        }
    }
    out
}

fn gnu_hash(name: &str) -> u32 {
    name.bytes().fold(5381u32, |h, b| {
        h.wrapping_mul(33).wrapping_add(u32::from(b))
    })
}

/// A little-endian byte image with absolute writes.
struct Image(Vec<u8>);

impl Image {
    fn put(&mut self, at: u64, bytes: &[u8]) {
        let at = at as usize;
        if self.0.len() < at + bytes.len() {
            self.0.resize(at + bytes.len(), 0);
        }
        self.0[at..at + bytes.len()].copy_from_slice(bytes);
    }
    fn u16(&mut self, at: u64, v: u16) {
        self.put(at, &v.to_le_bytes());
    }
    fn u32(&mut self, at: u64, v: u32) {
        self.put(at, &v.to_le_bytes());
    }
    fn u64(&mut self, at: u64, v: u64) {
        self.put(at, &v.to_le_bytes());
    }
}

struct Sym {
    name: &'static str,
    value: u64,
    size: u64,
    /// STT_FUNC / STT_OBJECT / STT_NOTYPE.
    kind: u8,
    defined: bool,
}

impl TinyElf {
    /// The file's bytes.
    pub fn build(&self) -> Vec<u8> {
        let mut img = Image(vec![0; DATA_END as usize]);

        // Code and blobs.
        let mut text = TEXT;
        let mut blob_va = RODATA;
        let mut getters = [0u64; 4];
        for (r, shape) in self.getters.iter().enumerate() {
            let b = blob(r);
            img.put(blob_va, &b);
            let code = getter_code(*shape, text, blob_va, b.len() as u32);
            img.put(text, &code);
            getters[r] = text;
            text += (code.len() as u64).next_multiple_of(16);
            blob_va += (b.len() as u64).next_multiple_of(16);
        }
        let mut resolvers = [0u64; 2];
        let mut resolver_len = [0u64; 2];
        for (i, table) in [IMAGE_LIST, HWDECODE_TABLE_LIST].into_iter().enumerate() {
            let code = resolver_code(self.large_model_resolvers, text, table);
            img.put(text, &code);
            resolvers[i] = text;
            resolver_len[i] = code.len() as u64;
            text += (code.len() as u64).next_multiple_of(16);
        }

        // Tables: slot 7 -> one descriptor (key 1, four getters); hwdecode_table_list all NULL.
        img.u64(IMAGE_LIST + SLOT as u64 * 16, 1);
        img.u64(DESC, KEY);
        let mut pointers: Vec<(u64, u64)> = vec![(IMAGE_LIST + SLOT as u64 * 16 + 8, DESC)];
        for (r, g) in getters.iter().enumerate() {
            pointers.push((DESC + 8 + 8 * r as u64, *g));
        }

        // Dynamic symbols: undefined ones first (GNU hash leaves them unhashed).
        let mut syms = vec![Sym {
            name: "__fentry__",
            value: 0,
            size: 0,
            kind: 2,
            defined: false,
        }];
        syms.push(Sym {
            name: "nrtucode_get_memory_image",
            value: resolvers[0],
            size: resolver_len[0],
            kind: 2,
            defined: true,
        });
        syms.push(Sym {
            name: "nrtucode_get_hwdecode_table",
            value: resolvers[1],
            size: resolver_len[1],
            kind: 2,
            defined: true,
        });
        if self.table_symbols {
            for (name, value) in [
                ("image_list", IMAGE_LIST),
                ("hwdecode_table_list", HWDECODE_TABLE_LIST),
            ] {
                syms.push(Sym {
                    name,
                    value,
                    size: 38 * 16,
                    kind: 1,
                    defined: true,
                });
            }
        }
        let nsyms = syms.len() as u64 + 1;
        let dynstr = DYNSYM + nsyms * 24;
        let mut strings = vec![0u8];
        let mut name_offsets = Vec::new();
        for s in &syms {
            name_offsets.push(strings.len() as u32);
            strings.extend(s.name.bytes());
            strings.push(0);
        }
        img.put(dynstr, &strings);
        for (i, s) in syms.iter().enumerate() {
            let at = DYNSYM + (i as u64 + 1) * 24;
            img.u32(at, name_offsets[i]);
            img.put(at + 4, &[0x10 | s.kind, 0]); // STB_GLOBAL
            img.u16(at + 6, if s.defined { 7 } else { 0 });
            img.u64(at + 8, s.value);
            img.u64(at + 16, s.size);
        }
        let hash = (dynstr + strings.len() as u64).next_multiple_of(8);
        let hash_len = match self.hash {
            HashStyle::Sysv => {
                // One bucket chaining every symbol from the last down to 1.
                img.u32(hash, 1);
                img.u32(hash + 4, nsyms as u32);
                img.u32(hash + 8, nsyms as u32 - 1);
                for i in 0..nsyms {
                    img.u32(hash + 12 + 4 * i, i.saturating_sub(1) as u32);
                }
                12 + 4 * nsyms
            }
            HashStyle::Gnu => {
                // One bucket, one all-ones bloom word; symbol 1 is undefined and unhashed.
                let base = 2u32;
                img.u32(hash, 1);
                img.u32(hash + 4, base);
                img.u32(hash + 8, 1);
                img.u32(hash + 12, 6);
                img.u64(hash + 16, u64::MAX);
                img.u32(hash + 24, base);
                let hashed = &syms[base as usize - 1..];
                for (i, s) in hashed.iter().enumerate() {
                    let last = i + 1 == hashed.len();
                    img.u32(
                        hash + 28 + 4 * i as u64,
                        (gnu_hash(s.name) & !1) | u32::from(last),
                    );
                }
                28 + 4 * hashed.len() as u64
            }
        };

        // Relocations.
        let rela = (hash + hash_len).next_multiple_of(8);
        let mut relas: Vec<(u64, u32, u32, i64)> = Vec::new();
        if self.getters.contains(&GetterShape::Fentry) {
            relas.push((FENTRY_SLOT, 6, 1, 0)); // R_X86_64_GLOB_DAT __fentry__
        }
        let mut relr_words = Vec::new();
        if self.relr {
            for (slot, value) in &pointers {
                img.u64(*slot, *value);
            }
            let mut slots: Vec<u64> = pointers.iter().map(|p| p.0).collect();
            slots.sort_unstable();
            relr_words = relr_encode(&slots);
        } else {
            for (slot, value) in &pointers {
                relas.push((*slot, 8, 0, *value as i64)); // R_X86_64_RELATIVE
            }
        }
        for (i, (off, ty, sym, addend)) in relas.iter().enumerate() {
            let at = rela + 24 * i as u64;
            img.u64(at, *off);
            img.u64(at + 8, (u64::from(*sym) << 32) | u64::from(*ty));
            img.u64(at + 16, *addend as u64);
        }
        let relr = rela + 24 * relas.len() as u64;
        for (i, w) in relr_words.iter().enumerate() {
            img.u64(relr + 8 * i as u64, *w);
        }
        let note = relr + 8 * relr_words.len() as u64;
        img.put(
            note,
            &[4, 0, 0, 0, 8, 0, 0, 0, 3, 0, 0, 0, b'G', b'N', b'U', 0],
        );
        img.put(note + 16, &[0xb1, 0xd0, 0x5e, 0xed, 0x00, 0x11, 0x22, 0x33]);
        assert!(note + 24 <= TEXT, "tiny ELF metadata overflows into .text");

        // .dynamic
        let mut tags: Vec<(u64, u64)> = vec![
            (6, DYNSYM),
            (11, 24),
            (5, dynstr),
            (10, strings.len() as u64),
            (3, GOT), // DT_PLTGOT
        ];
        tags.push(match self.hash {
            HashStyle::Sysv => (4, hash),
            HashStyle::Gnu => (0x6fff_fef5, hash),
        });
        if !relas.is_empty() {
            tags.extend([(7, rela), (8, 24 * relas.len() as u64), (9, 24)]);
        }
        if !relr_words.is_empty() {
            tags.extend([(36, relr), (35, 8 * relr_words.len() as u64), (37, 8)]);
        }
        tags.push((0, 0));
        for (i, (tag, val)) in tags.iter().enumerate() {
            img.u64(DATA + 16 * i as u64, *tag);
            img.u64(DATA + 16 * i as u64 + 8, *val);
        }

        // ELF header and program headers.
        let phdrs: [(u32, u32, u64, u64); 5] = [
            (1, 5, 0, DATA),                       // PT_LOAD R-X (headers, code, blobs)
            (1, 6, DATA, DATA_END - DATA),         // PT_LOAD RW-
            (2, 6, DATA, DYNAMIC_LEN),             // PT_DYNAMIC
            (0x6474_e552, 4, GOT, DATA_END - GOT), // PT_GNU_RELRO
            (4, 4, note, 24),                      // PT_NOTE
        ];
        img.put(0, &[0x7f, b'E', b'L', b'F', 2, 1, 1, 0]);
        img.u16(0x10, 3); // ET_DYN
        img.u16(0x12, 62); // EM_X86_64
        img.u32(0x14, 1);
        img.u64(0x20, 0x40); // e_phoff
        img.u16(0x34, 64);
        img.u16(0x36, 56);
        img.u16(0x38, phdrs.len() as u16);
        img.u16(0x3a, 64);
        for (i, (ty, flags, at, len)) in phdrs.iter().enumerate() {
            let p = 0x40 + 56 * i as u64;
            img.u32(p, *ty);
            img.u32(p + 4, *flags);
            img.u64(p + 8, *at);
            img.u64(p + 16, *at);
            img.u64(p + 24, *at);
            img.u64(p + 32, *len);
            img.u64(p + 40, *len);
            img.u64(p + 48, if *ty == 1 { 0x1000 } else { 8 });
        }

        if self.section_headers {
            let sections: Vec<(&str, u32, u64, u64, u64, u32, u64)> = vec![
                // name, type, flags, addr, size, link, entsize
                (".dynsym", 11, 2, DYNSYM, nsyms * 24, 2, 24),
                (".dynstr", 3, 2, dynstr, strings.len() as u64, 0, 0),
                match self.hash {
                    HashStyle::Sysv => (".hash", 5, 2, hash, hash_len, 1, 4),
                    HashStyle::Gnu => (".gnu.hash", 0x6fff_fff6, 2, hash, hash_len, 1, 0),
                },
                (".rela.dyn", 4, 2, rela, 24 * relas.len() as u64, 1, 24),
                (".relr.dyn", 19, 2, relr, 8 * relr_words.len() as u64, 0, 8),
                (".note.gnu.build-id", 7, 2, note, 24, 0, 0),
                (".text", 1, 6, TEXT, text - TEXT, 0, 0),
                (".rodata", 1, 2, RODATA, blob_va - RODATA, 0, 0),
                (".dynamic", 6, 3, DATA, DYNAMIC_LEN, 2, 16),
                (".got", 1, 3, GOT, IMAGE_LIST - GOT, 0, 8),
                (
                    ".data.rel.ro",
                    1,
                    3,
                    IMAGE_LIST,
                    DATA_END - IMAGE_LIST,
                    0,
                    0,
                ),
            ];
            let shstrtab = DATA_END;
            let mut names = vec![0u8];
            let mut name_at = Vec::new();
            for s in sections.iter().map(|s| s.0).chain([".shstrtab"]) {
                name_at.push(names.len() as u32);
                names.extend(s.bytes());
                names.push(0);
            }
            img.put(shstrtab, &names);
            let shoff = (shstrtab + names.len() as u64).next_multiple_of(8);
            let count = sections.len() as u64 + 2;
            img.put(shoff, &vec![0; 64 * count as usize]);
            for (i, (_, ty, flags, addr, size, link, entsize)) in sections.iter().enumerate() {
                let at = shoff + 64 * (i as u64 + 1);
                img.u32(at, name_at[i]);
                img.u32(at + 4, *ty);
                img.u64(at + 8, *flags);
                img.u64(at + 16, *addr);
                img.u64(at + 24, *addr);
                img.u64(at + 32, *size);
                img.u32(at + 40, *link);
                img.u32(at + 44, u32::from(*ty == 11));
                img.u64(at + 48, 8);
                img.u64(at + 56, *entsize);
            }
            let at = shoff + 64 * (count - 1);
            img.u32(at, name_at[sections.len()]);
            img.u32(at + 4, 3);
            img.u64(at + 24, shstrtab);
            img.u64(at + 32, names.len() as u64);
            img.u64(at + 48, 1);
            img.u64(0x28, shoff);
            img.u16(0x3a, 64);
            img.u16(0x3c, count as u16);
            img.u16(0x3e, count as u16 - 1);
        }
        img.0
    }
}

/// Removes the section header table the way `sstrip`-style tools leave a file: `e_shoff`,
/// `e_shnum` and `e_shstrndx` zeroed (the table's bytes, no longer referenced, stay).
/// Returns `false` when `data` is too short to hold an ELF64 header.
pub fn remove_section_headers(data: &mut [u8]) -> bool {
    let Some(header) = data.get_mut(..64) else {
        return false;
    };
    header[0x28..0x30].fill(0);
    header[0x3c..0x40].fill(0);
    true
}
