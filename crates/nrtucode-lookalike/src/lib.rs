//! A C look-alike of the vendor library, generated from the vendor facts.
//!
//! [`generate_c`] writes one C translation unit that mirrors the structure of
//! `libnrtucode_internal.so` (variant [`Variant::Full`]) or of its reduced front twin
//! `libnrtucode.so` (variant [`Variant::Front`]), over our deterministic fixture bytes
//! ([`nrtucode_facts::fixture_bytes`]) instead of firmware:
//!
//! * every blob a linked getter returns is a `static const unsigned char` array in `.rodata`;
//! * every getter is a separate `static` function named exactly like the vendor symbol, with the
//!   vendor's shape `void X_get(void **out_ptr, size_t *out_len)`, so that `gcc -O2` emits the
//!   vendor's four-instruction stub (`lea blob(%rip),%rax; mov %rax,(%rdi); movq $size,(%rsi);
//!   ret`); a boundary cursor returns a pointer into (or one past) a neighbouring blob with size 0;
//! * the flavor descriptor arrays `{uint64_t flavor_key; getter *iram, *dram, *sram, *extram;}`
//!   are writable statics (`.data`), the 38-entry `image_list` `{uint64_t count; desc *table;}`
//!   and the 38-entry `hwdecode_table_list` `{getter *cam, *table;}` are `static const` tables
//!   with relocations (`.data.rel.ro`);
//! * the two resolvers are written in C from the seed's pseudocode (`getenv`, `strcmp`, return
//!   codes 0/1/2/3/8, the one-line removal message on stderr) and exported under the vendor's
//!   names, or under a caller-chosen prefix ([`Options::with_prefix`]) so that several variants
//!   can be linked into one Rust binary next to our own C ABI.
//!
//! The output is a pure function of the facts and the [`Options`]: no timestamps, no paths.
//! [`ground_truth`] lists what every linked getter returns (symbol, size, sha256, bytes) for
//! tests of the carve tool, and [`build_shared_object`] runs `gcc -shared -fPIC`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use nrtucode_facts::facts::{REGIONS, variant_for_key};
use nrtucode_facts::{Getter, fixture_bytes, getters, hwdecode_slots, image_slots};
use sha2::{Digest, Sha256};

/// The one-line message the look-alike writes to stderr when `NRTUCODE_MPLUS_ON_MARIANA` is `"1"`.
pub const REMOVAL_MESSAGE: &str = "nrtucode: NRTUCODE_MPLUS_ON_MARIANA=1 is a removed flag; unset it (code 8, no image resolved)\n";

/// Number of slots in `image_list` and `hwdecode_table_list`.
pub const SLOTS: usize = 38;

/// Which vendor library the look-alike mirrors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// `libnrtucode_internal.so`: every base, DKL and profiler getter of all five generations.
    Full,
    /// `libnrtucode.so`: only PERF/RELEASE (key 1) and DKL_PERF (key 17) getters and the
    /// profiler getters, no MAVERICK getter at all; the table shapes stay complete and the
    /// missing getters are NULL.
    Front,
}

impl Variant {
    /// Both variants, full first.
    pub const ALL: [Variant; 2] = [Variant::Full, Variant::Front];

    /// `"full"` or `"front"`.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Full => "full",
            Variant::Front => "front",
        }
    }

    /// Parses `"full"` or `"front"`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.name() == name)
    }

    /// The file name of the vendor library this variant mirrors.
    pub fn library_name(self) -> &'static str {
        match self {
            Variant::Full => "libnrtucode_internal.so",
            Variant::Front => "libnrtucode.so",
        }
    }

    /// `true` if this variant links `getter` (has its stub and its blob).
    pub fn links(self, getter: &Getter) -> bool {
        if !getter.is_resolver_reachable() {
            return false;
        }
        match self {
            Variant::Full => true,
            Variant::Front => {
                getter.gen_name != "MAVERICK"
                    && matches!(getter.variant, "RELEASE" | "PERF" | "DKL_PERF" | "PROF")
            }
        }
    }
}

/// What to generate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    variant: Variant,
    prefix: String,
}

impl Options {
    /// The vendor's exported names (`nrtucode_get_memory_image`, `nrtucode_get_hwdecode_table`).
    pub fn new(variant: Variant) -> Self {
        Self {
            variant,
            prefix: "nrtucode_".to_owned(),
        }
    }

    /// Exports the resolvers as `<prefix>get_memory_image` and `<prefix>get_hwdecode_table`
    /// (e.g. prefix `lookalike_full_`). Fails unless `prefix` is a C identifier.
    pub fn with_prefix(mut self, prefix: &str) -> Result<Self, String> {
        let mut chars = prefix.chars();
        let ok = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            return Err(format!("symbol prefix {prefix:?} is not a C identifier"));
        }
        self.prefix = prefix.to_owned();
        Ok(self)
    }

    /// The variant.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The exported name of the memory-image resolver.
    pub fn memory_image_symbol(&self) -> String {
        format!("{}get_memory_image", self.prefix)
    }

    /// The exported name of the hwdecode-table resolver.
    pub fn hwdecode_table_symbol(&self) -> String {
        format!("{}get_hwdecode_table", self.prefix)
    }
}

/// One blob array of the look-alike (one per linked real getter; the vendor never shares one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobModel {
    /// The C array name, `blob_<STEM>`.
    pub array: String,
    /// The getter that returns the whole array.
    pub getter: Getter,
    /// The fixture bytes.
    pub bytes: Vec<u8>,
}

/// One getter stub of the look-alike.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GetterModel {
    /// The facts row (its `symbol` is the C function name).
    pub getter: Getter,
    /// The blob array the stub points into, `None` only if the variant has no blob at all.
    pub array: Option<String>,
    /// Byte offset into `array` (0, or the array length for an end-of-blob cursor).
    pub offset: usize,
    /// The size the stub writes (the size in the facts).
    pub size: usize,
}

/// One flavor descriptor: a key and the four region getters (`None` = NULL).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DescModel {
    /// The flavor key (1/2/3 or 17/18/19).
    pub flavor_key: u32,
    /// IRAM, DRAM, SRAM, EXTRAM getter symbols.
    pub getters: [Option<&'static str>; 4],
}

/// One `image_list` slot: its descriptors in vendor order (empty for slot 36).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotModel {
    /// Flat index.
    pub idx: u32,
    /// The descriptors.
    pub descs: Vec<DescModel>,
}

/// Everything a look-alike variant contains.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Model {
    /// The variant.
    pub variant: Variant,
    /// Blob arrays in vendor `.rodata` order.
    pub blobs: Vec<BlobModel>,
    /// Linked getters in vendor `.text` order.
    pub getters: Vec<GetterModel>,
    /// The 38 `image_list` slots.
    pub image_list: Vec<SlotModel>,
    /// The 38 `hwdecode_table_list` entries: (PROF_CAM, PROF_TABLE) getter symbols.
    pub hwdecode: Vec<[Option<&'static str>; 2]>,
}

fn blob_array_name(getter: &Getter) -> String {
    format!("blob_{}", getter.stem())
}

/// Builds the model of a variant from the facts.
pub fn model(variant: Variant) -> Model {
    let mut linked: Vec<Getter> = getters().into_iter().filter(|g| variant.links(g)).collect();
    linked.sort_by_key(|g| g.accessor_va);

    let mut reals: Vec<&Getter> = linked.iter().filter(|g| g.real && g.size > 0).collect();
    reals.sort_by_key(|g| g.blob_va);
    let blobs: Vec<BlobModel> = reals
        .iter()
        .map(|g| BlobModel {
            array: blob_array_name(g),
            getter: (*g).clone(),
            bytes: fixture_bytes(g),
        })
        .collect();

    let getter_models = linked
        .iter()
        .map(|g| {
            let (array, offset) = if g.real && g.size > 0 {
                (Some(blob_array_name(g)), 0)
            } else {
                cursor_target(g, &blobs)
            };
            GetterModel {
                getter: g.clone(),
                array,
                offset,
                size: g.size,
            }
        })
        .collect();

    let is_linked = |sym: &str| linked.iter().any(|g| g.symbol == sym);
    let image_list = image_slots()
        .into_iter()
        .map(|slot| {
            let descs = match (slot.gen_name, slot.class, slot.engine) {
                (Some(gen_name), Some(class), Some(engine)) => slot
                    .flavor_keys
                    .iter()
                    .map(|&key| {
                        let variant_name = variant_for_key(gen_name, key);
                        let getters = REGIONS.map(|region| {
                            let row = linked.iter().find(|g| {
                                g.gen_name == gen_name
                                    && g.class == class
                                    && g.engine == engine
                                    && Some(g.variant) == variant_name
                                    && g.region == region
                            });
                            row.map(|g| g.symbol)
                        });
                        DescModel {
                            flavor_key: key,
                            getters,
                        }
                    })
                    .collect(),
                _ => Vec::new(),
            };
            SlotModel {
                idx: slot.idx,
                descs,
            }
        })
        .collect();

    let hwdecode = hwdecode_slots()
        .into_iter()
        .map(|s| [s.cam, s.table].map(|sym| sym.filter(|sym| is_linked(sym))))
        .collect();

    Model {
        variant,
        blobs,
        getters: getter_models,
        image_list,
        hwdecode,
    }
}

/// Where a boundary cursor points. In the vendor binary its address is both a place in its own
/// image (one past the end of a region's blob, or the start of one) and often the start of
/// the next image's blob; separate C arrays are not adjacent, so the look-alike keeps the place
/// in the cursor's own image: the same image's blob that ends there, else the one that starts
/// there. Otherwise: any blob that starts there, else one that ends there, else (its
/// neighbour is not linked in this variant) the nearest blob boundary of the variant.
fn cursor_target(cursor: &Getter, blobs: &[BlobModel]) -> (Option<String>, usize) {
    let va = cursor.blob_va;
    let same_image = |b: &&BlobModel| {
        let g = &b.getter;
        (g.gen_name, g.class, g.engine, g.variant)
            == (cursor.gen_name, cursor.class, cursor.engine, cursor.variant)
    };
    if let Some(b) = blobs
        .iter()
        .filter(same_image)
        .find(|b| b.getter.blob_va + b.getter.size as u64 == va)
    {
        return (Some(b.array.clone()), b.bytes.len());
    }
    if let Some(b) = blobs
        .iter()
        .filter(same_image)
        .find(|b| b.getter.blob_va == va)
    {
        return (Some(b.array.clone()), 0);
    }
    if let Some(b) = blobs.iter().find(|b| b.getter.blob_va == va) {
        return (Some(b.array.clone()), 0);
    }
    if let Some(b) = blobs
        .iter()
        .find(|b| b.getter.blob_va + b.getter.size as u64 == va)
    {
        return (Some(b.array.clone()), b.bytes.len());
    }
    let nearest = blobs
        .iter()
        .flat_map(|b| {
            let start = b.getter.blob_va;
            let end = start + b.getter.size as u64;
            [
                (start.abs_diff(va), b, 0),
                (end.abs_diff(va), b, b.bytes.len()),
            ]
        })
        .min_by_key(|(distance, _, _)| *distance);
    match nearest {
        Some((_, b, offset)) => (Some(b.array.clone()), offset),
        None => (None, 0),
    }
}

/// One row of ground truth: what a linked getter of the look-alike returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TruthRow {
    /// The facts row of the getter.
    pub getter: Getter,
    /// The bytes it returns (empty for a cursor).
    pub bytes: Vec<u8>,
    /// sha256 of `bytes`, lowercase hex.
    pub sha256: String,
}

/// What every linked getter of a variant returns, in symbol order.
pub fn ground_truth(variant: Variant) -> Vec<TruthRow> {
    let mut rows: Vec<TruthRow> = model(variant)
        .getters
        .into_iter()
        .map(|gm| {
            let bytes = fixture_bytes(&gm.getter);
            TruthRow {
                sha256: sha256_hex(&bytes),
                getter: gm.getter,
                bytes,
            }
        })
        .collect();
    rows.sort_by(|a, b| a.getter.symbol.cmp(b.getter.symbol));
    rows
}

/// The ground truth as TSV: `symbol gen class engine variant region size sha256`, sorted by
/// symbol, size in decimal.
pub fn ground_truth_tsv(variant: Variant) -> String {
    let mut out = String::from("symbol\tgen\tclass\tengine\tvariant\tregion\tsize\tsha256\n");
    for row in ground_truth(variant) {
        let g = &row.getter;
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            g.symbol, g.gen_name, g.class, g.engine, g.variant, g.region, g.size, row.sha256
        );
    }
    out
}

/// Lowercase hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .fold(String::with_capacity(64), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// Appends `bytes` as a sequence of C string literals, one line per 64 bytes. Printable ASCII
/// stays literal; everything else is a three-digit octal escape, which a following digit cannot
/// extend.
fn push_c_string(out: &mut String, bytes: &[u8]) {
    for chunk in bytes.chunks(64) {
        out.push_str("    \"");
        for &b in chunk {
            match b {
                b'\\' => out.push_str("\\\\"),
                b'"' => out.push_str("\\\""),
                b'?' => out.push_str("\\?"),
                0x20..=0x7e => out.push(char::from(b)),
                _ => {
                    out.push('\\');
                    out.push(char::from(b'0' + (b >> 6)));
                    out.push(char::from(b'0' + ((b >> 3) & 7)));
                    out.push(char::from(b'0' + (b & 7)));
                }
            }
        }
        out.push_str("\"\n");
    }
}

const PRELUDE: &str = r#"#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The vendor's getter shape: write the blob pointer and its size. */
typedef void img_get(void **out_ptr, size_t *out_len);

/* image_list descriptor, stride 0x28. */
struct image_desc {
    uint64_t flavor_key;
    img_get *iram;
    img_get *dram;
    img_get *sram;
    img_get *extram;
};

/* image_list entry, 16 bytes. */
struct image_list_ent {
    uint64_t count;
    struct image_desc *table;
};

/* hwdecode_table_list entry, 16 bytes. */
struct hwdecode_ent {
    img_get *prof_cam;
    img_get *prof_table;
};

/* Separate, never inlined, never folded: each compiles to the 4-instruction stub. */
#define NRT_GETTER static __attribute__((noipa, used)) void

"#;

fn c_pointer(sym: Option<&str>) -> &str {
    sym.unwrap_or("NULL")
}

fn c_string_literal(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out
}

/// Generates the C source of the look-alike. Deterministic: same options, same text.
pub fn generate_c(opts: &Options) -> String {
    let m = model(opts.variant);
    let payload: usize = m.blobs.iter().map(|b| b.bytes.len()).sum();
    let mut out = String::with_capacity(payload * 4 + 256 * 1024);
    let _ = write!(
        out,
        "/* A look-alike of {lib} (variant \"{variant}\") over the nrtucode fixture bytes.\n \
         * Generated by nrtucode-lookalike from the repository facts (the blobs/ TSV files); do not edit.\n \
         * {nblobs} blobs ({payload} bytes), {ngetters} getters, exports {mem} and {hw}.\n \
         * Build: gcc -O2 -shared -fPIC -o {lib} <this file>\n */\n",
        lib = opts.variant.library_name(),
        variant = opts.variant.name(),
        nblobs = m.blobs.len(),
        ngetters = m.getters.len(),
        mem = opts.memory_image_symbol(),
        hw = opts.hwdecode_table_symbol(),
    );
    out.push_str(PRELUDE);

    out.push_str("/* ---- blobs (.rodata), in vendor address order ---- */\n\n");
    for b in &m.blobs {
        let _ = writeln!(
            out,
            "static const unsigned char {}[{:#x}] =",
            b.array,
            b.bytes.len()
        );
        push_c_string(&mut out, &b.bytes);
        out.push_str(";\n\n");
    }

    out.push_str("/* ---- getters (.text), in vendor address order ---- */\n\n");
    for gm in &m.getters {
        let target = match &gm.array {
            Some(array) if gm.offset == 0 => format!("(void *){array}"),
            Some(array) => format!("(void *)({array} + {:#x})", gm.offset),
            None => "NULL".to_owned(),
        };
        let kind = if gm.getter.real {
            ""
        } else {
            " /* boundary cursor */"
        };
        let _ = writeln!(
            out,
            "NRT_GETTER {sym}(void **out_ptr, size_t *out_len)\n{{{kind}\n    *out_ptr = {target};\n    *out_len = {size:#x};\n}}\n",
            sym = gm.getter.symbol,
            size = gm.size,
        );
    }

    out.push_str("/* ---- flavor descriptor arrays (.data) ---- */\n\n");
    for slot in m.image_list.iter().filter(|s| !s.descs.is_empty()) {
        let _ = writeln!(
            out,
            "static struct image_desc image_desc_{:02}[{}] = {{",
            slot.idx,
            slot.descs.len()
        );
        for d in &slot.descs {
            let [i, dr, s, e] = d.getters;
            let _ = writeln!(
                out,
                "    {{ {}, {}, {}, {}, {} }},",
                d.flavor_key,
                c_pointer(i),
                c_pointer(dr),
                c_pointer(s),
                c_pointer(e)
            );
        }
        out.push_str("};\n\n");
    }

    out.push_str("/* ---- image_list (.data.rel.ro): 38 x {count, descriptors} ---- */\n\n");
    let _ = writeln!(
        out,
        "static const struct image_list_ent image_list[{SLOTS}] = {{"
    );
    for slot in &m.image_list {
        if slot.descs.is_empty() {
            let _ = writeln!(out, "    /* {:2} */ {{ 0, NULL }},", slot.idx);
        } else {
            let _ = writeln!(
                out,
                "    /* {:2} */ {{ {}, image_desc_{:02} }},",
                slot.idx,
                slot.descs.len(),
                slot.idx
            );
        }
    }
    out.push_str("};\n\n");

    out.push_str(
        "/* ---- hwdecode_table_list (.data.rel.ro): 38 x {PROF_CAM, PROF_TABLE} ---- */\n\n",
    );
    let _ = writeln!(
        out,
        "static const struct hwdecode_ent hwdecode_table_list[{SLOTS}] = {{"
    );
    for (idx, [cam, table]) in m.hwdecode.iter().enumerate() {
        let _ = writeln!(
            out,
            "    /* {idx:2} */ {{ {}, {} }},",
            c_pointer(*cam),
            c_pointer(*table)
        );
    }
    out.push_str("};\n\n");

    let _ = write!(
        out,
        r#"/* ---- the two resolvers (the seed's pseudocode) ---- */

static const char removed_flag_message[] = "{msg}";

__attribute__((visibility("default")))
int {mem}(unsigned idx, int region, int flavor, void *out_ptr, void *out_len)
{{
    if (idx > 37)
        return 1;

    /* Tombstone: the removed NRTUCODE_MPLUS_ON_MARIANA trips exactly on "1". */
    const char *mp = getenv("NRTUCODE_MPLUS_ON_MARIANA");
    if (mp) {{
        int c = (unsigned char)mp[0] - '1';
        if (mp[0] == '1')
            c = (unsigned char)mp[1];
        if (-c == 0)
            goto removed_flag;
    }}

    const struct image_list_ent *e = &image_list[idx];

    if (flavor == 0) {{
        const char *fv = getenv("NEURON_UCODE_FLAVOR");
        if (!fv)
            flavor = 1;
        else if (!strcmp(fv, "debug") || !strcmp(fv, "DEBUG"))
            flavor = 2;
        else if (!strcmp(fv, "test"))
            flavor = 3;
        else
            flavor = (strcmp(fv, "TEST") == 0) ? 3 : 1;
    }}

    uint64_t n = e->count;
    if (n == 0)
        return 2;
    const struct image_desc *d = e->table;
    /* 32-bit compare, like the vendor's cmp (%rdi),%r15d. */
    for (; (uint32_t)flavor != (uint32_t)d->flavor_key; d++) {{
        if (--n == 0)
            return 2;
    }}

    if ((unsigned)region > 3)
        return 2;
    img_get *g;
    switch (region) {{
    case 0: g = d->iram; break;
    case 1: g = d->dram; break;
    case 2: g = d->sram; break;
    default: g = d->extram; break;
    }}
    if (g == NULL)
        return 3;
    g((void **)out_ptr, (size_t *)out_len);
    return 0;

removed_flag:
    fwrite(removed_flag_message, sizeof removed_flag_message - 1, 1, stderr);
    return 8;
}}

__attribute__((visibility("default")))
int {hw}(unsigned idx, int kind, void *out_ptr, void *out_len)
{{
    if (idx > 37)
        return 1;
    const struct hwdecode_ent *e = &hwdecode_table_list[idx];
    img_get *g;
    if (kind == 0)
        g = e->prof_cam;
    else if (kind == 1)
        g = e->prof_table;
    else
        return 2;
    if (g == NULL)
        return 2;
    g((void **)out_ptr, (size_t *)out_len);
    return 0;
}}
"#,
        msg = c_string_literal(REMOVAL_MESSAGE),
        mem = opts.memory_image_symbol(),
        hw = opts.hwdecode_table_symbol(),
    );
    out
}

/// The optimisation level for [`build_shared_object`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OptLevel {
    /// `-O2`, like the vendor build.
    O2,
    /// `-Os`.
    Os,
}

impl OptLevel {
    /// The gcc flag.
    pub fn flag(self) -> &'static str {
        match self {
            OptLevel::O2 => "-O2",
            OptLevel::Os => "-Os",
        }
    }

    /// Parses `O2`, `-O2`, `Os` or `-Os`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name.trim_start_matches('-') {
            "O2" => Some(OptLevel::O2),
            "Os" => Some(OptLevel::Os),
            _ => None,
        }
    }
}

/// The C compiler: `$CC` if set, else `gcc`.
pub fn c_compiler() -> String {
    std::env::var("CC")
        .ok()
        .filter(|cc| !cc.trim().is_empty())
        .unwrap_or_else(|| "gcc".to_owned())
}

/// Compiles `c_path` into the shared object `out_path` with
/// `gcc <opt> -shared -fPIC -fno-toplevel-reorder -Wall -Wextra -Werror` (`-s` too when `strip`,
/// like the vendor's stripped front library). `-fno-toplevel-reorder` keeps blobs and getters in
/// source order, which is the vendor's address order.
pub fn build_shared_object(
    c_path: &Path,
    out_path: &Path,
    opt: OptLevel,
    strip: bool,
) -> Result<(), String> {
    let cc = c_compiler();
    let mut cmd = Command::new(&cc);
    cmd.args([
        opt.flag(),
        "-shared",
        "-fPIC",
        "-fno-toplevel-reorder",
        "-Wall",
        "-Wextra",
        "-Werror",
    ]);
    if strip {
        cmd.arg("-s");
    }
    cmd.arg("-o").arg(out_path).arg(c_path);
    let output = cmd.output().map_err(|e| format!("cannot run {cc}: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cc} failed ({}) on {}:\n{}",
            output.status,
            c_path.display(),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// Files written by [`write_sources`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// The C source, `nrtucode_lookalike_<variant>.c`.
    pub c_source: PathBuf,
    /// The ground truth, `nrtucode_lookalike_<variant>.truth.tsv`.
    pub truth: PathBuf,
}

/// Writes the C source and the ground-truth TSV of `opts` into `dir` (created if missing).
pub fn write_sources(dir: &Path, opts: &Options) -> Result<Written, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let stem = format!("nrtucode_lookalike_{}", opts.variant.name());
    let c_source = dir.join(format!("{stem}.c"));
    let truth = dir.join(format!("{stem}.truth.tsv"));
    std::fs::write(&c_source, generate_c(opts))
        .map_err(|e| format!("cannot write {}: {e}", c_source.display()))?;
    std::fs::write(&truth, ground_truth_tsv(opts.variant))
        .map_err(|e| format!("cannot write {}: {e}", truth.display()))?;
    Ok(Written { c_source, truth })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_model_has_the_vendor_shape() {
        let m = model(Variant::Full);
        assert_eq!(m.getters.len(), 354);
        assert_eq!(m.blobs.len(), 193);
        assert_eq!(m.image_list.len(), SLOTS);
        assert_eq!(m.hwdecode.len(), SLOTS);
        let descs: usize = m.image_list.iter().map(|s| s.descs.len()).sum();
        assert_eq!(descs, 102);
        let refs: usize = m
            .image_list
            .iter()
            .flat_map(|s| &s.descs)
            .map(|d| d.getters.iter().filter(|g| g.is_some()).count())
            .sum();
        assert_eq!(refs, 408, "every descriptor has four getters");
        assert_eq!(m.hwdecode.iter().filter(|e| e[0].is_some()).count(), 15);
        assert!(m.image_list[36].descs.is_empty());
        assert!(m.getters.iter().all(|g| g.array.is_some()));
    }

    #[test]
    fn sp_slots_share_getters_and_second_q7_slot_uses_base_getters() {
        let m = model(Variant::Full);
        for (a, b) in [(4, 5), (11, 12), (19, 20), (27, 28), (34, 35)] {
            assert_eq!(m.image_list[a].descs, m.image_list[b].descs, "{a}/{b}");
        }
        for (first, second) in [(13, 14), (21, 22), (29, 30)] {
            for d in &m.image_list[second].descs {
                let same = m.image_list[first]
                    .descs
                    .iter()
                    .find(|x| x.flavor_key == d.flavor_key)
                    .expect("key in first Q7 slot");
                assert_eq!(same.getters, d.getters);
            }
        }
        assert_eq!(
            m.image_list[7].descs[0].getters[0],
            Some("CAYMAN_NX_ACT_PERF_IRAM_get")
        );
    }

    #[test]
    fn front_model_links_only_perf_dkl_perf_and_no_maverick() {
        let m = model(Variant::Front);
        assert!(m.getters.iter().all(|g| g.getter.gen_name != "MAVERICK"));
        assert!(
            m.getters
                .iter()
                .all(|g| matches!(g.getter.variant, "RELEASE" | "PERF" | "DKL_PERF" | "PROF"))
        );
        let populated: Vec<usize> = (0..SLOTS).filter(|&i| m.hwdecode[i][0].is_some()).collect();
        let expected: Vec<usize> = (7..=10).chain(15..=18).chain(23..=26).collect();
        assert_eq!(populated, expected);
        for slot in &m.image_list {
            for d in &slot.descs {
                let linked = d.getters.iter().any(|g| g.is_some());
                let gen_maverick = slot.idx >= 31;
                assert_eq!(
                    linked,
                    !gen_maverick && matches!(d.flavor_key, 1 | 17),
                    "{} {}",
                    slot.idx,
                    d.flavor_key
                );
            }
        }
        // Descriptor counts stay the vendor's in the front library too.
        let descs: usize = m.image_list.iter().map(|s| s.descs.len()).sum();
        assert_eq!(descs, 102);
    }

    #[test]
    fn cursors_point_at_a_neighbouring_blob() {
        for variant in Variant::ALL {
            let m = model(variant);
            for gm in m.getters.iter().filter(|g| !g.getter.real) {
                let array = gm.array.as_deref().expect("cursor target");
                let blob = m.blobs.iter().find(|b| b.array == array).expect("blob");
                assert!(gm.offset == 0 || gm.offset == blob.bytes.len());
                assert_eq!(gm.size, 0);
            }
        }
    }

    #[test]
    fn c_strings_round_trip() {
        let bytes: Vec<u8> = (0..=255u8).chain(b"0?\"\\7".iter().copied()).collect();
        let mut out = String::new();
        push_c_string(&mut out, &bytes);
        // Decode our own encoding back.
        let mut decoded = Vec::new();
        for line in out.lines() {
            let inner = line
                .trim()
                .strip_prefix('"')
                .unwrap()
                .strip_suffix('"')
                .unwrap();
            let b = inner.as_bytes();
            let mut i = 0;
            while i < b.len() {
                if b[i] == b'\\' {
                    if b[i + 1].is_ascii_digit() {
                        let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
                        decoded.push(v);
                        i += 4;
                    } else {
                        decoded.push(b[i + 1]);
                        i += 2;
                    }
                } else {
                    decoded.push(b[i]);
                    i += 1;
                }
            }
        }
        assert_eq!(decoded, bytes);
    }

    #[test]
    fn prefix_must_be_an_identifier() {
        assert!(
            Options::new(Variant::Full)
                .with_prefix("lookalike_full_")
                .is_ok()
        );
        assert!(Options::new(Variant::Full).with_prefix("1x").is_err());
        assert!(Options::new(Variant::Full).with_prefix("a-b").is_err());
        assert!(Options::new(Variant::Full).with_prefix("").is_err());
        let o = Options::new(Variant::Front).with_prefix("lf_").unwrap();
        assert_eq!(o.memory_image_symbol(), "lf_get_memory_image");
        assert_eq!(o.hwdecode_table_symbol(), "lf_get_hwdecode_table");
    }

    #[test]
    fn removal_message_is_one_line() {
        assert!(REMOVAL_MESSAGE.ends_with('\n'));
        assert_eq!(REMOVAL_MESSAGE.matches('\n').count(), 1);
    }

    #[test]
    fn ground_truth_matches_fixtures() {
        let rows = ground_truth(Variant::Front);
        assert!(
            rows.windows(2)
                .all(|w| w[0].getter.symbol < w[1].getter.symbol)
        );
        for r in &rows {
            assert_eq!(r.bytes.len(), r.getter.size);
            assert_eq!(r.sha256, sha256_hex(&r.bytes));
        }
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
