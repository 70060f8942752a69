//! A C look-alike of the vendor library, generated from the vendor facts.
//!
//! [`generate_c`] writes one C translation unit that mirrors the structure of
//! `libnrtucode_internal.so` (build [`LibraryBuild::Full`]) or of its reduced front twin
//! `libnrtucode.so` (build [`LibraryBuild::Front`]), over our deterministic fixture bytes
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
//!   codes 0/1/2/3/8, the one-line removal message on stderr), kept as real C in
//!   `c/resolvers.c` (the shared types in `c/lookalike.h`), and exported under the vendor's
//!   names, or under a caller-chosen prefix ([`Options::with_prefix`]) so that several builds
//!   can be linked into one Rust binary next to our own C ABI.
//!
//! The output is a pure function of the facts and the [`Options`]: no timestamps, no paths.
//! [`ground_truth`] lists what every linked getter returns (symbol, size, sha256, bytes) for
//! tests of the carve tool, and [`build_shared_object`] runs `gcc -shared -fPIC`.
//!
//! Modules, one job each: `library_build` (what to generate), `layout` (the contents as data),
//! `generate` with `c_text` (the C text), `ground_truth`, `output` (writing the files) and `gcc`
//! (the compiler driver).
#![forbid(unsafe_code)]

mod c_text;
mod conditions;
mod gcc;
mod generate;
mod ground_truth;
mod layout;
mod library_build;
mod output;

pub use conditions::{
    CONDITIONS, Condition, Stripping, build_with_condition, remove_section_headers, strip_to,
};
pub use gcc::{OptLevel, build_shared_object, c_compiler};
pub use generate::{REMOVAL_MESSAGE, generate_c};
pub use ground_truth::{TruthRow, ground_truth, ground_truth_tsv, sha256_hex};
pub use layout::{BlobLayout, DescLayout, GetterLayout, Layout, SlotLayout, layout};
pub use library_build::{LibraryBuild, Options};
pub use output::{Written, write_sources};
