//! Decoding a getter by what it does: the getter `void get(void **out_ptr /*rdi*/, size_t
//! *out_len /*rsi*/)` is run on the small abstract interpreter of `emulate`, from its entry to
//! its `ret`, and the two constants it stores through `rdi` and `rsi` are the blob's address
//! and size. The vendor's `-O2` stub
//!
//! ```text
//! lea  rax, [rip + blob]      ; 48 8d 05 <disp32>
//! mov  [rdi], rax             ; 48 89 07
//! mov  qword [rsi], <size>    ; 48 c7 06 <imm32>
//! ret                         ; c3
//! ```
//!
//! is one case; `-O0` frames, the stack protector, `-pg` / `-mfentry` profiling calls, the
//! large code model, `endbr64`, `nop`s and the `jmp` identical-code folding leaves are others.
//! Anything the interpreter cannot account for is an error naming the instruction's address.

use iced_x86::{Decoder, DecoderOptions, Mnemonic, OpKind};

use crate::elf::Elf;
use crate::emulate::{BareCode, CallTarget, CodeView, run_getter};
use crate::error::CarveError;
use crate::reloc::RelocMap;

/// Bytes of code the fuzz target hands to [`decode_stub`].
pub const MAX_STUB_BYTES: u64 = 96;

/// What a getter returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stub {
    /// The address stored through `rdi`.
    pub blob_va: u64,
    /// The size stored through `rsi`.
    pub size: u64,
}

/// Decodes the getter whose code starts at `va`, with `code` the bytes from there on and
/// nothing else known (no relocations, no symbols; jumps must stay inside `code`).
pub fn decode_stub(code: &[u8], va: u64) -> Result<Stub, CarveError> {
    let (blob_va, size) = run_getter(&BareCode { code, va }, va)?;
    Ok(Stub { blob_va, size })
}

/// Decodes the getter at `entry` of a library.
pub(crate) fn decode_getter(view: &LibraryView<'_, '_>, entry: u64) -> Result<Stub, CarveError> {
    let (blob_va, size) = run_getter(view, entry)?;
    Ok(Stub { blob_va, size })
}

/// A library as the interpreter sees it: its code, its relocated pointer slots, and the names
/// of the functions its calls reach.
pub(crate) struct LibraryView<'e, 'a> {
    /// The file.
    pub(crate) elf: &'e Elf<'a>,
    /// Its dynamic relocations.
    pub(crate) relocs: &'e RelocMap,
    /// What the code is, for error messages.
    pub(crate) what: &'e str,
}

/// Instructions of a PLT entry read before its `jmp [rip + slot]`.
const PLT_PREFIX: usize = 2;

impl CodeView for LibraryView<'_, '_> {
    fn code(&self, va: u64, max: u64) -> Result<&[u8], CarveError> {
        self.elf.code_at(va, max, self.what)
    }

    fn pointer(&self, va: u64) -> Option<u64> {
        self.relocs
            .pointer(self.elf, va, "GOT slot")
            .ok()
            .and_then(|p| p.va())
    }

    fn callee(&self, target: CallTarget) -> Option<String> {
        match target {
            CallTarget::Slot(slot) => self.relocs.symbol_name(slot).map(str::to_owned),
            CallTarget::Direct(va) => {
                if let Some(name) = self.elf.functions_at(va).first() {
                    return Some((*name).to_owned());
                }
                // A PLT entry: [endbr64] [bnd] jmp [rip + slot].
                let code = self.elf.code_at(va, 16, "PLT entry").ok()?;
                let decoder = Decoder::with_ip(64, code, va, DecoderOptions::NONE);
                for insn in decoder.into_iter().take(PLT_PREFIX + 1) {
                    match insn.mnemonic() {
                        Mnemonic::Endbr64 | Mnemonic::Nop => {}
                        Mnemonic::Jmp
                            if insn.op0_kind() == OpKind::Memory
                                && insn.is_ip_rel_memory_operand() =>
                        {
                            let slot = insn.ip_rel_memory_address();
                            return self.relocs.symbol_name(slot).map(str::to_owned);
                        }
                        _ => return None,
                    }
                }
                None
            }
        }
    }
}
