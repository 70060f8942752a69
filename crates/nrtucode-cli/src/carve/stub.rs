//! Decoding a getter stub with `iced-x86`.
//!
//! A getter is `void get(void **out_ptr /*rdi*/, size_t *out_len /*rsi*/)`. The vendor emits
//!
//! ```text
//! lea  rax, [rip + blob]      ; 48 8d 05 <disp32>
//! mov  [rdi], rax             ; 48 89 07
//! mov  qword [rsi], <size>    ; 48 c7 06 <imm32>
//! ret                         ; c3
//! ```
//!
//! Compilers vary this harmlessly, and all of these are accepted: any scratch register instead
//! of `rax`; the two stores in either order; `endbr64` and `nop`s; the size built in a register
//! (`mov reg, imm` / `movabs` / `xor reg, reg`) and stored from it; a zero size stored as
//! `and qword [rsi], 0`; and a direct `jmp` to another stub before any store (what identical
//! code folding leaves behind) — reported as [`Stub::Jump`] for the caller to follow. Anything
//! else is an error naming the instruction's address.

use iced_x86::{
    Decoder, DecoderOptions, Formatter as _, Instruction, IntelFormatter, Mnemonic, OpKind,
    Register,
};

use crate::carve::error::CarveError;

/// Most instructions a stub may have before its `ret`.
pub(crate) const MAX_INSTRUCTIONS: usize = 16;
/// Bytes of code handed to the decoder.
pub const MAX_STUB_BYTES: u64 = 96;

/// What a getter body does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stub {
    /// Writes `(blob_va, size)` and returns.
    Getter {
        /// The address stored through `rdi`.
        blob_va: u64,
        /// The size stored through `rsi`.
        size: u64,
    },
    /// Jumps to another stub before storing anything.
    Jump(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Val {
    Addr(u64),
    Imm(u64),
}

fn gpr64_index(reg: Register) -> Option<usize> {
    let full = reg.full_register();
    let idx = (full as usize).checked_sub(Register::RAX as usize)?;
    (idx < 16 && (reg.is_gpr64() || reg.is_gpr32())).then_some(idx)
}

fn text(insn: &Instruction) -> String {
    let mut out = String::new();
    IntelFormatter::new().format(insn, &mut out);
    out
}

/// The store target of a memory operand `[rdi]` / `[rsi]` (no index, no displacement).
fn plain_mem_base(insn: &Instruction) -> Option<Register> {
    let simple = insn.memory_index() == Register::None
        && insn.memory_displacement64() == 0
        && insn.segment_prefix() == Register::None;
    simple.then(|| insn.memory_base())
}

/// Decodes the getter whose code starts at `va` with `code` the bytes from there on.
pub fn decode_stub(code: &[u8], va: u64) -> Result<Stub, CarveError> {
    let mut decoder = Decoder::with_ip(64, code, va, DecoderOptions::NONE);
    let mut regs: [Option<Val>; 16] = [None; 16];
    let mut stored_ptr: Option<u64> = None;
    let mut stored_len: Option<u64> = None;
    let err = |insn: &Instruction, why: &str| CarveError::NotAStub {
        va,
        reason: format!("at {:#x} `{}`: {why}", insn.ip(), text(insn)),
    };
    for _ in 0..MAX_INSTRUCTIONS {
        if !decoder.can_decode() {
            return Err(CarveError::NotAStub {
                va,
                reason: format!(
                    "code ends at {:#x} before a `ret`",
                    va.wrapping_add(code.len() as u64)
                ),
            });
        }
        let insn = decoder.decode();
        if insn.is_invalid() {
            return Err(err(&insn, "invalid instruction"));
        }
        match insn.mnemonic() {
            Mnemonic::Endbr64 | Mnemonic::Nop => {}
            Mnemonic::Ret if insn.op_count() == 0 => {
                return match (stored_ptr, stored_len) {
                    (Some(blob_va), Some(size)) => Ok(Stub::Getter { blob_va, size }),
                    (None, _) => Err(err(
                        &insn,
                        "returns before storing the blob pointer to [rdi]",
                    )),
                    (_, None) => Err(err(&insn, "returns before storing the size to [rsi]")),
                };
            }
            Mnemonic::Jmp
                if matches!(insn.op0_kind(), OpKind::NearBranch64)
                    && stored_ptr.is_none()
                    && stored_len.is_none() =>
            {
                return Ok(Stub::Jump(insn.near_branch_target()));
            }
            Mnemonic::Lea if insn.op0_kind() == OpKind::Register => {
                let r = writable(&insn).ok_or_else(|| err(&insn, "writes an argument register"))?;
                if !insn.is_ip_rel_memory_operand() {
                    return Err(err(&insn, "expected a rip-relative lea"));
                }
                regs[r] = Some(Val::Addr(insn.ip_rel_memory_address()));
            }
            Mnemonic::Mov if insn.op0_kind() == OpKind::Register => {
                let r = writable(&insn).ok_or_else(|| err(&insn, "writes an argument register"))?;
                regs[r] = Some(match insn.op1_kind() {
                    OpKind::Immediate32 | OpKind::Immediate64 | OpKind::Immediate32to64 => {
                        Val::Imm(insn.immediate(1))
                    }
                    OpKind::Register => gpr64_index(insn.op1_register())
                        .and_then(|s| regs[s])
                        .ok_or_else(|| err(&insn, "copies an unknown register"))?,
                    _ => return Err(err(&insn, "loads from memory")),
                });
            }
            Mnemonic::Xor
                if insn.op0_kind() == OpKind::Register
                    && insn.op1_kind() == OpKind::Register
                    && insn.op0_register() == insn.op1_register() =>
            {
                let r = writable(&insn).ok_or_else(|| err(&insn, "writes an argument register"))?;
                regs[r] = Some(Val::Imm(0));
            }
            Mnemonic::Mov | Mnemonic::And if insn.op0_kind() == OpKind::Memory => {
                if insn.memory_size().size() != 8 {
                    return Err(err(&insn, "expected an 8-byte store"));
                }
                let value = match (insn.mnemonic(), insn.op1_kind()) {
                    (Mnemonic::And, OpKind::Immediate8to64 | OpKind::Immediate32to64)
                        if insn.immediate(1) == 0 =>
                    {
                        Val::Imm(0)
                    }
                    (Mnemonic::Mov, OpKind::Immediate32to64) => Val::Imm(insn.immediate(1)),
                    (Mnemonic::Mov, OpKind::Register) => gpr64_index(insn.op1_register())
                        .and_then(|s| regs[s])
                        .ok_or_else(|| err(&insn, "stores a register of unknown value"))?,
                    _ => return Err(err(&insn, "unexpected store")),
                };
                match (plain_mem_base(&insn), value) {
                    (Some(Register::RDI), Val::Addr(a)) if stored_ptr.is_none() => {
                        stored_ptr = Some(a)
                    }
                    (Some(Register::RSI), Val::Imm(n)) if stored_len.is_none() => {
                        if n > i64::MAX as u64 {
                            return Err(err(&insn, "size is negative"));
                        }
                        stored_len = Some(n)
                    }
                    _ => {
                        return Err(err(
                            &insn,
                            "expected one pointer store to [rdi] and one size store to [rsi]",
                        ));
                    }
                }
            }
            _ => return Err(err(&insn, "not part of a getter stub")),
        }
    }
    Err(CarveError::NotAStub {
        va,
        reason: format!("no `ret` within {MAX_INSTRUCTIONS} instructions"),
    })
}

/// The index of the register `insn` writes, unless it is `rdi`, `rsi` or `rsp`.
fn writable(insn: &Instruction) -> Option<usize> {
    let reg = insn.op0_register();
    let idx = gpr64_index(reg)?;
    let full = reg.full_register();
    (![Register::RDI, Register::RSI, Register::RSP].contains(&full)).then_some(idx)
}

#[cfg(test)]
mod tests {
    use super::*;

    const VA: u64 = 0x1000;

    fn vendor(disp: i32, size: u32) -> Vec<u8> {
        let mut c = vec![0x48, 0x8d, 0x05];
        c.extend_from_slice(&disp.to_le_bytes());
        c.extend_from_slice(&[0x48, 0x89, 0x07, 0x48, 0xc7, 0x06]);
        c.extend_from_slice(&size.to_le_bytes());
        c.push(0xc3);
        c
    }

    #[test]
    fn the_vendor_stub_decodes() {
        let s = decode_stub(&vendor(0x100, 0x400), VA).unwrap();
        assert_eq!(
            s,
            Stub::Getter {
                blob_va: VA + 7 + 0x100,
                size: 0x400
            }
        );
    }

    #[test]
    fn reordered_stores_other_registers_and_endbr_are_fine() {
        // endbr64; mov qword [rsi], 0x20; lea rdx, [rip+0x10]; mov [rdi], rdx; ret
        let mut c = vec![0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0xc7, 0x06, 0x20, 0, 0, 0];
        c.extend_from_slice(&[0x48, 0x8d, 0x15, 0x10, 0, 0, 0, 0x48, 0x89, 0x17, 0xc3]);
        let s = decode_stub(&c, VA).unwrap();
        assert_eq!(
            s,
            Stub::Getter {
                blob_va: VA + 18 + 0x10,
                size: 0x20
            }
        );
    }

    #[test]
    fn and_zero_is_a_zero_size_and_jmp_is_reported() {
        // lea rax,[rip+0]; and qword [rsi],0; mov [rdi],rax; ret
        let c = [
            0x48, 0x8d, 0x05, 0, 0, 0, 0, 0x48, 0x83, 0x26, 0x00, 0x48, 0x89, 0x07, 0xc3,
        ];
        assert_eq!(
            decode_stub(&c, VA).unwrap(),
            Stub::Getter {
                blob_va: VA + 7,
                size: 0
            }
        );
        let j = [0xe9, 0x10, 0, 0, 0];
        assert_eq!(decode_stub(&j, VA).unwrap(), Stub::Jump(VA + 5 + 0x10));
    }

    #[test]
    fn non_stubs_are_errors_naming_the_address() {
        for code in [
            &[0x55, 0x48, 0x89, 0xe5][..],             // push rbp; mov rbp, rsp
            &[0xc3][..],                               // ret without stores
            &[0x48, 0x89, 0x07, 0xc3][..],             // store of an unknown register
            &vendor(0, 1)[..10],                       // cut before the end
            &[0x48, 0x8d, 0x3d, 0, 0, 0, 0, 0xc3][..], // lea rdi (clobbers an argument)
        ] {
            let e = decode_stub(code, VA).unwrap_err();
            assert!(matches!(e, CarveError::NotAStub { va: VA, .. }), "{e}");
        }
        let e = decode_stub(&[0x55], VA).unwrap_err().to_string();
        assert!(e.contains("0x1000") && e.contains("push"), "{e}");
    }
}
