//! A small abstract interpreter over straight-line x86-64, built on `iced-x86`.
//!
//! Getters are recognised by what they do, not by their bytes: [`run_getter`] follows register
//! and stack-slot data flow from a getter's entry to its `ret` and reads off the two values it
//! stores through its first two argument registers (`rdi` = where the blob pointer goes,
//! `rsi` = where the size goes). Whatever the compiler wraps around that (an `-O0` frame with
//! spills and reloads, the stack protector's canary check, a `-pg` / `-mfentry` call to
//! `mcount` / `__fentry__`, the large code model's `movabs` + rip-relative GOT base, `endbr64`,
//! `nop`s, a `jmp` left by identical-code folding) is evaluated, not pattern-matched. Anything
//! the interpreter cannot account for is a [`CarveError::NotAStub`] naming the instruction's
//! address and text.
//!
//! The same evaluator, run as a linear sweep that never fails ([`constant_references`]), lists
//! the addresses a resolver computes or loads, which is how a stripped library's tables are
//! found (large code model included).
//!
//! Abstract values ([`Value`]): unknown, a constant (with load base 0, every address in the
//! file is a constant), an argument register plus an offset, an address in the function's own
//! stack frame (relative to `rsp` at entry) and the stack-protector canary (`fs:0x28`).

use std::collections::{BTreeMap, HashMap};

use iced_x86::{
    ConditionCode, Decoder, DecoderOptions, FlowControl, Formatter as _, Instruction,
    InstructionInfoFactory, IntelFormatter, Mnemonic, OpAccess, OpKind, Register,
};

use crate::error::CarveError;

/// Most instructions executed from a getter's entry to its `ret` (jumps followed included).
pub(crate) const MAX_STEPS: usize = 96;
/// Bytes of code requested at each address the interpreter starts decoding from.
pub(crate) const MAX_CODE_BYTES: u64 = 512;
/// Functions a getter may call: profiling hooks that preserve every argument register.
pub(crate) const PROFILING_HOOKS: [&str; 4] = ["mcount", "_mcount", "__fentry__", "__mcount"];
/// The thread-pointer offset of the stack-protector canary on x86-64 glibc.
pub(crate) const CANARY_OFFSET: u64 = 0x28;

/// What a call instruction names as its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CallTarget {
    /// `call rel32`: the code address called.
    Direct(u64),
    /// `call [rip + slot]`: the pointer slot called through.
    Slot(u64),
}

/// What the interpreter needs from the library around the code it runs.
pub(crate) trait CodeView {
    /// Up to `max` bytes of executable code at `va` (fewer at the end of the code).
    fn code(&self, va: u64, max: u64) -> Result<&[u8], CarveError>;
    /// The value the dynamic loader leaves in the 8-byte pointer slot at `va` (a GOT entry),
    /// when it is a relocated pointer into the file; `None` otherwise.
    fn pointer(&self, va: u64) -> Option<u64>;
    /// The name of the function a call reaches (through the PLT or a GOT slot), if known.
    fn callee(&self, target: CallTarget) -> Option<String>;
}

/// Code and nothing else, mapped at one address: no relocations, no symbols. What the fuzzer
/// and the unit tests run the interpreter over.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BareCode<'a> {
    /// The bytes.
    pub(crate) code: &'a [u8],
    /// The address of `code[0]`.
    pub(crate) va: u64,
}

impl CodeView for BareCode<'_> {
    fn code(&self, va: u64, max: u64) -> Result<&[u8], CarveError> {
        let rel = va
            .checked_sub(self.va)
            .filter(|r| *r < self.code.len() as u64);
        let Some(rel) = rel else {
            return Err(CarveError::Unmapped {
                what: "code".into(),
                va,
                len: 1,
            });
        };
        let start = rel as usize;
        let end = start.saturating_add(usize::try_from(max).unwrap_or(usize::MAX));
        Ok(&self.code[start..end.min(self.code.len())])
    }
    fn pointer(&self, _va: u64) -> Option<u64> {
        None
    }
    fn callee(&self, _target: CallTarget) -> Option<String> {
        None
    }
}

/// The output a getter writes through one of its argument registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Out {
    /// `rdi`: `void **out_ptr`.
    Ptr,
    /// `rsi`: `size_t *out_len`.
    Len,
}

/// An abstract 64-bit value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Value {
    /// Nothing is known.
    Unknown,
    /// A known number (an address, with the library loaded at 0).
    Const(u64),
    /// An argument register's value at entry plus an offset.
    Arg(Out, i64),
    /// An address in the stack: `rsp` at entry plus an offset.
    Stack(i64),
    /// The stack-protector canary read from `fs:0x28`.
    Canary,
}

impl Value {
    fn add(self, other: Value) -> Value {
        match (self, other) {
            (Value::Const(a), Value::Const(b)) => Value::Const(a.wrapping_add(b)),
            (Value::Stack(o), Value::Const(c)) | (Value::Const(c), Value::Stack(o)) => {
                Value::Stack(o.wrapping_add(c as i64))
            }
            (Value::Arg(k, o), Value::Const(c)) | (Value::Const(c), Value::Arg(k, o)) => {
                Value::Arg(k, o.wrapping_add(c as i64))
            }
            _ => Value::Unknown,
        }
    }
    fn sub(self, other: Value) -> Value {
        match (self, other) {
            (Value::Const(a), Value::Const(b)) => Value::Const(a.wrapping_sub(b)),
            (Value::Stack(o), Value::Const(c)) => Value::Stack(o.wrapping_sub(c as i64)),
            (Value::Arg(k, o), Value::Const(c)) => Value::Arg(k, o.wrapping_sub(c as i64)),
            (Value::Stack(a), Value::Stack(b)) => Value::Const(a.wrapping_sub(b) as u64),
            (Value::Canary, Value::Canary) => Value::Const(0),
            _ => Value::Unknown,
        }
    }
    fn bitwise(self, other: Value, op: fn(u64, u64) -> u64, same: Option<u64>) -> Value {
        match (self, other) {
            (Value::Const(a), Value::Const(b)) => Value::Const(op(a, b)),
            (a, b) if a == b && a != Value::Unknown => same.map_or(Value::Unknown, Value::Const),
            _ => Value::Unknown,
        }
    }
    fn constant(self) -> Option<u64> {
        match self {
            Value::Const(c) => Some(c),
            _ => None,
        }
    }
}

/// The instruction's address and Intel-syntax text, for error messages.
pub(crate) fn describe(insn: &Instruction) -> String {
    let mut text = String::new();
    IntelFormatter::new().format(insn, &mut text);
    format!("at {:#x} `{text}`", insn.ip())
}

/// The index (0 = `rax` .. 15 = `r15`) of a general-purpose register of any width.
fn gpr_index(reg: Register) -> Option<usize> {
    if !reg.is_gpr() {
        return None;
    }
    let idx = (reg.full_register() as usize).checked_sub(Register::RAX as usize)?;
    (idx < 16).then_some(idx)
}

const RSP: usize = 4;
const RBP: usize = 5;
const RSI: usize = 6;
const RDI: usize = 7;
/// Registers a call may clobber under the System V ABI, less `rdi` / `rsi`, which the
/// profiling hooks preserve: rax, rcx, rdx, r8..r11.
const CALL_CLOBBERED: [usize; 7] = [0, 1, 2, 8, 9, 10, 11];

/// Where a memory operand points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// A thread-local (`fs:`) offset.
    Thread(Value),
    /// An ordinary address.
    Plain(Value),
}

/// The abstract machine state.
#[derive(Clone)]
struct State {
    regs: [Value; 16],
    /// Stack slots by offset from the entry `rsp`: (size in bytes, value).
    stack: BTreeMap<i64, (usize, Value)>,
    /// The zero flag, when the last flag-setting instruction's result is known.
    zero: Option<bool>,
    ptr: Option<Value>,
    len: Option<Value>,
}

/// Why one instruction could not be evaluated (turned into an error or, in a sweep, ignored).
type Step<T> = Result<T, String>;

impl State {
    fn at_entry() -> Self {
        let mut regs = [Value::Unknown; 16];
        regs[RDI] = Value::Arg(Out::Ptr, 0);
        regs[RSI] = Value::Arg(Out::Len, 0);
        regs[RSP] = Value::Stack(0);
        Self {
            regs,
            stack: BTreeMap::new(),
            zero: None,
            ptr: None,
            len: None,
        }
    }

    fn reg(&self, reg: Register) -> Value {
        match gpr_index(reg) {
            Some(i) if reg.size() == 8 => self.regs[i],
            Some(i) if reg.size() == 4 => match self.regs[i] {
                Value::Const(c) => Value::Const(c & 0xffff_ffff),
                _ => Value::Unknown,
            },
            _ => Value::Unknown,
        }
    }

    /// Writes `value` to `reg` with the x86-64 width rules (32-bit writes zero-extend, 8- and
    /// 16-bit writes merge, which this model treats as unknown).
    fn set_reg(&mut self, reg: Register, value: Value) -> Step<()> {
        let Some(i) = gpr_index(reg) else {
            return Err(format!(
                "writes {reg:?}, which is not a general-purpose register"
            ));
        };
        self.regs[i] = match reg.size() {
            8 => value,
            4 => match value {
                Value::Const(c) => Value::Const(c & 0xffff_ffff),
                _ => Value::Unknown,
            },
            _ => Value::Unknown,
        };
        Ok(())
    }

    fn place(&self, insn: &Instruction) -> Place {
        let ea = if insn.is_ip_rel_memory_operand() {
            Value::Const(insn.ip_rel_memory_address())
        } else {
            let base = match insn.memory_base() {
                Register::None => Value::Const(0),
                r => self.reg(r),
            };
            let index = match insn.memory_index() {
                Register::None => Value::Const(0),
                r => match self.reg(r) {
                    Value::Const(c) => {
                        Value::Const(c.wrapping_mul(u64::from(insn.memory_index_scale())))
                    }
                    v if insn.memory_index_scale() == 1 => v,
                    _ => Value::Unknown,
                },
            };
            base.add(index)
                .add(Value::Const(insn.memory_displacement64()))
        };
        match insn.memory_segment() {
            Register::FS | Register::GS => Place::Thread(ea),
            _ => Place::Plain(ea),
        }
    }

    fn load(&self, view: &dyn CodeView, place: Place, size: usize) -> Step<Value> {
        match place {
            Place::Thread(Value::Const(CANARY_OFFSET)) if size == 8 => Ok(Value::Canary),
            Place::Thread(_) => Err("reads thread-local memory other than the canary".into()),
            Place::Plain(Value::Stack(off)) => Ok(match self.stack.get(&off) {
                Some(&(n, v)) if n == size => v,
                Some(&(8, Value::Const(c))) if size == 4 => Value::Const(c & 0xffff_ffff),
                _ => Value::Unknown,
            }),
            Place::Plain(Value::Const(va)) if size == 8 => match view.pointer(va) {
                Some(p) => Ok(Value::Const(p)),
                None => Err(format!(
                    "reads {va:#x}, which is not a relocated pointer slot"
                )),
            },
            Place::Plain(_) => Err("reads memory the interpreter cannot account for".into()),
        }
    }

    fn store(&mut self, place: Place, size: usize, value: Value) -> Step<()> {
        match place {
            Place::Plain(Value::Stack(off)) if off < 0 => {
                let end = off.saturating_add(size as i64);
                if end > 0 {
                    return Err("writes over its return address".into());
                }
                // Forget every slot the store overlaps.
                let overlapping: Vec<i64> = self
                    .stack
                    .range(off.saturating_sub(8) + 1..end)
                    .filter(|(o, (n, _))| o.saturating_add(*n as i64) > off)
                    .map(|(o, _)| *o)
                    .collect();
                for o in overlapping {
                    self.stack.remove(&o);
                }
                self.stack.insert(off, (size, value));
                Ok(())
            }
            Place::Plain(Value::Stack(_)) => Err("writes over its return address".into()),
            Place::Plain(Value::Arg(out, 0)) if size == 8 => {
                match out {
                    Out::Ptr => self.ptr = Some(value),
                    Out::Len => self.len = Some(value),
                }
                Ok(())
            }
            Place::Plain(Value::Arg(out, off)) => Err(format!(
                "stores {size} bytes at {} {off:+}: expected one 8-byte store to each output",
                out_name(out)
            )),
            _ => Err("writes memory other than its own stack and the two outputs".into()),
        }
    }

    fn push(&mut self, value: Value) -> Step<()> {
        let Value::Stack(top) = self.regs[RSP] else {
            return Err("pushes with an unknown stack pointer".into());
        };
        let top = top.wrapping_sub(8);
        self.regs[RSP] = Value::Stack(top);
        self.store(Place::Plain(Value::Stack(top)), 8, value)
    }

    fn pop(&mut self) -> Step<Value> {
        let Value::Stack(top) = self.regs[RSP] else {
            return Err("pops with an unknown stack pointer".into());
        };
        if top >= 0 {
            return Err("pops above its own frame".into());
        }
        let v = match self.stack.get(&top) {
            Some(&(8, v)) => v,
            _ => Value::Unknown,
        };
        self.regs[RSP] = Value::Stack(top.wrapping_add(8));
        Ok(v)
    }
}

fn out_name(out: Out) -> &'static str {
    match out {
        Out::Ptr => "[rdi]",
        Out::Len => "[rsi]",
    }
}

/// The value of source operand `op` of `insn` (register, immediate or memory).
fn operand(state: &State, view: &dyn CodeView, insn: &Instruction, op: u32) -> Step<Value> {
    match insn.op_kind(op) {
        OpKind::Register => Ok(state.reg(insn.op_register(op))),
        OpKind::Memory => state.load(view, state.place(insn), insn.memory_size().size()),
        _ => insn
            .try_immediate(op)
            .map(Value::Const)
            .map_err(|_| "has an operand the interpreter does not model".into()),
    }
}

/// Writes the result of `insn` to its destination operand 0.
fn write_dest(state: &mut State, insn: &Instruction, value: Value) -> Step<()> {
    match insn.op0_kind() {
        OpKind::Register => state.set_reg(insn.op0_register(), value),
        OpKind::Memory => {
            let place = state.place(insn);
            state.store(place, insn.memory_size().size(), value)
        }
        _ => Err("has a destination the interpreter does not model".into()),
    }
}

/// What executing one instruction does to control flow.
enum Flow {
    Next,
    Jump(u64),
    Return,
}

/// Executes one instruction. Errors say why it cannot be accounted for.
fn execute(state: &mut State, view: &dyn CodeView, insn: &Instruction) -> Step<Flow> {
    let binary = |state: &mut State, f: fn(Value, Value) -> Value, write: bool| -> Step<Flow> {
        let a = operand(state, view, insn, 0)?;
        let b = operand(state, view, insn, 1)?;
        let r = f(a, b);
        state.zero = r.constant().map(|c| {
            let bits = insn.op0_register().size().max(insn.memory_size().size()) * 8;
            let mask = if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            c & mask == 0
        });
        if write {
            write_dest(state, insn, r)?;
        }
        Ok(Flow::Next)
    };
    match insn.mnemonic() {
        Mnemonic::Endbr64 | Mnemonic::Nop | Mnemonic::Pause => Ok(Flow::Next),
        Mnemonic::Mov | Mnemonic::Movzx | Mnemonic::Movsxd | Mnemonic::Movsx => {
            let v = operand(state, view, insn, 1)?;
            let v = match insn.mnemonic() {
                Mnemonic::Mov => v,
                _ => Value::Unknown,
            };
            write_dest(state, insn, v).map(|()| Flow::Next)
        }
        Mnemonic::Lea => {
            let Place::Plain(ea) = state.place(insn) else {
                return Err("takes the address of thread-local memory".into());
            };
            state.set_reg(insn.op0_register(), ea).map(|()| Flow::Next)
        }
        Mnemonic::Add => binary(state, Value::add, true),
        Mnemonic::Sub => binary(state, Value::sub, true),
        Mnemonic::Cmp => binary(state, Value::sub, false),
        Mnemonic::Xor => binary(state, |a, b| a.bitwise(b, |x, y| x ^ y, Some(0)), true),
        Mnemonic::Or => binary(state, |a, b| a.bitwise(b, |x, y| x | y, None), true),
        Mnemonic::And => {
            // `and qword [rsi], 0` stores a zero size whatever was there.
            if insn.try_immediate(1).ok() == Some(0) {
                state.zero = Some(true);
                return write_dest(state, insn, Value::Const(0)).map(|()| Flow::Next);
            }
            binary(state, |a, b| a.bitwise(b, |x, y| x & y, None), true)
        }
        Mnemonic::Test => binary(state, |a, b| a.bitwise(b, |x, y| x & y, None), false),
        Mnemonic::Push => {
            let v = operand(state, view, insn, 0)?;
            state.push(v).map(|()| Flow::Next)
        }
        Mnemonic::Pop => {
            let v = state.pop()?;
            write_dest(state, insn, v).map(|()| Flow::Next)
        }
        Mnemonic::Leave => {
            state.regs[RSP] = state.regs[RBP];
            let v = state.pop()?;
            state.regs[RBP] = v;
            Ok(Flow::Next)
        }
        Mnemonic::Ret if insn.op_count() == 0 => Ok(Flow::Return),
        Mnemonic::Jmp if insn.op0_kind() == OpKind::NearBranch64 => {
            Ok(Flow::Jump(insn.near_branch_target()))
        }
        Mnemonic::Call => {
            let target = match insn.op0_kind() {
                OpKind::NearBranch64 => CallTarget::Direct(insn.near_branch_target()),
                OpKind::Memory if insn.is_ip_rel_memory_operand() => {
                    CallTarget::Slot(insn.ip_rel_memory_address())
                }
                _ => return Err("calls through a register or computed address".into()),
            };
            match view.callee(target) {
                Some(name) if PROFILING_HOOKS.contains(&name.as_str()) => {
                    for r in CALL_CLOBBERED {
                        state.regs[r] = Value::Unknown;
                    }
                    state.zero = None;
                    Ok(Flow::Next)
                }
                Some(name) => Err(format!(
                    "calls {name}, which is not a profiling hook ({})",
                    PROFILING_HOOKS.join(", ")
                )),
                None => Err("calls a function the library does not name".into()),
            }
        }
        _ if insn.flow_control() == FlowControl::ConditionalBranch => {
            let taken = match (insn.condition_code(), state.zero) {
                (ConditionCode::e, Some(z)) => z,
                (ConditionCode::ne, Some(z)) => !z,
                _ => return Err("branches on a condition the interpreter cannot decide".into()),
            };
            Ok(if taken {
                Flow::Jump(insn.near_branch_target())
            } else {
                Flow::Next
            })
        }
        _ => Err("is not part of a getter".into()),
    }
}

/// Runs the getter at `entry` and returns `(blob_va, size)`: the constants it stores through
/// `rdi` and `rsi` before returning.
pub(crate) fn run_getter(view: &dyn CodeView, entry: u64) -> Result<(u64, u64), CarveError> {
    let fail = |reason: String| CarveError::NotAStub {
        symbol: None,
        va: entry,
        reason,
    };
    let mut state = State::at_entry();
    let mut va = entry;
    let mut steps = 0;
    loop {
        let code = view.code(va, MAX_CODE_BYTES)?;
        let mut decoder = Decoder::with_ip(64, code, va, DecoderOptions::NONE);
        let jumped_to = loop {
            if steps == MAX_STEPS {
                return Err(fail(format!("no `ret` within {MAX_STEPS} instructions")));
            }
            steps += 1;
            if !decoder.can_decode() {
                return Err(fail(format!(
                    "code ends at {:#x} before a `ret`",
                    va.wrapping_add(code.len() as u64)
                )));
            }
            let insn = decoder.decode();
            if insn.is_invalid() {
                return Err(fail(format!("{}: invalid instruction", describe(&insn))));
            }
            match execute(&mut state, view, &insn) {
                Ok(Flow::Next) => {}
                Ok(Flow::Jump(target)) => break target,
                Ok(Flow::Return) => return finish(&state, &insn).map_err(fail),
                Err(why) => return Err(fail(format!("{}: {why}", describe(&insn)))),
            }
        };
        va = jumped_to;
    }
}

fn finish(state: &State, ret: &Instruction) -> Result<(u64, u64), String> {
    let at = describe(ret);
    if state.regs[RSP] != Value::Stack(0) {
        return Err(format!(
            "{at}: returns with the stack pointer not at its entry value"
        ));
    }
    let ptr = match state.ptr {
        None => {
            return Err(format!(
                "{at}: returns before storing the blob pointer to [rdi]"
            ));
        }
        Some(Value::Const(p)) => p,
        Some(v) => return Err(format!("{at}: the pointer stored to [rdi] is {}", what(v))),
    };
    let len = match state.len {
        None => return Err(format!("{at}: returns before storing the size to [rsi]")),
        Some(Value::Const(n)) if n <= i64::MAX as u64 => n,
        Some(Value::Const(_)) => return Err(format!("{at}: the size stored to [rsi] is negative")),
        Some(v) => return Err(format!("{at}: the size stored to [rsi] is {}", what(v))),
    };
    Ok((ptr, len))
}

fn what(v: Value) -> &'static str {
    match v {
        Value::Unknown => "not a constant",
        Value::Const(_) => "a constant",
        Value::Arg(..) => "derived from an argument",
        Value::Stack(_) => "a stack address",
        Value::Canary => "the stack canary",
    }
}

/// The constant addresses the code at `va` computes or loads, in code order, without
/// duplicates: a linear sweep of the same evaluator that follows no branch and never fails
/// (an instruction it cannot evaluate forgets the registers it writes). For finding the tables
/// a stripped library's resolver refers to.
pub(crate) fn constant_references(view: &dyn CodeView, code: &[u8], va: u64) -> Vec<u64> {
    let mut state = State::at_entry();
    let mut info = InstructionInfoFactory::new();
    let mut out = Vec::new();
    // The state at each forward branch, by target: code after a `ret` or `jmp` is reached
    // from there, not from the epilogue just swept.
    let mut at_target: HashMap<u64, State> = HashMap::new();
    let mut fell_off = false;
    let note = |v: Value, out: &mut Vec<u64>| {
        if let Value::Const(c) = v
            && !out.contains(&c)
        {
            out.push(c);
        }
    };
    for insn in Decoder::with_ip(64, code, va, DecoderOptions::NONE) {
        if insn.is_invalid() {
            continue;
        }
        if let Some(saved) = at_target.remove(&insn.ip())
            && fell_off
        {
            state = saved;
        }
        let padding = matches!(insn.mnemonic(), Mnemonic::Nop | Mnemonic::Int3);
        fell_off = (padding && fell_off)
            || matches!(
                insn.flow_control(),
                FlowControl::Return
                    | FlowControl::UnconditionalBranch
                    | FlowControl::IndirectBranch
                    | FlowControl::Interrupt
                    | FlowControl::Exception
            );
        if insn.flow_control() == FlowControl::ConditionalBranch
            && insn.near_branch_target() > insn.ip()
        {
            at_target
                .entry(insn.near_branch_target())
                .or_insert_with(|| state.clone());
        }
        // A memory operand whose address is partly constant (`[rbx + rdx]` with `rbx` the
        // table and `rdx` an index) refers to its constant part.
        if (0..insn.op_count()).any(|i| insn.op_kind(i) == OpKind::Memory)
            && insn.memory_segment() != Register::FS
        {
            let part = |r: Register| match r {
                Register::None => None,
                r => state.reg(r).constant(),
            };
            if insn.is_ip_rel_memory_operand() {
                note(Value::Const(insn.ip_rel_memory_address()), &mut out);
            } else if let Some(c) = part(insn.memory_base()).or(part(insn.memory_index())) {
                note(
                    Value::Const(c.wrapping_add(insn.memory_displacement64())),
                    &mut out,
                );
            }
        }
        let before = state.regs;
        let ok = match insn.flow_control() {
            FlowControl::Next => execute(&mut state, view, &insn).is_ok(),
            FlowControl::Call | FlowControl::IndirectCall => {
                for r in CALL_CLOBBERED {
                    state.regs[r] = Value::Unknown;
                }
                true
            }
            _ => true,
        };
        if !ok {
            for used in info.info(&insn).used_registers() {
                if matches!(
                    used.access(),
                    OpAccess::Write
                        | OpAccess::CondWrite
                        | OpAccess::ReadWrite
                        | OpAccess::ReadCondWrite
                ) && let Some(i) = gpr_index(used.register())
                {
                    state.regs[i] = Value::Unknown;
                }
            }
        }
        for (i, v) in state.regs.iter().enumerate() {
            if *v != before[i] {
                note(*v, &mut out);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const VA: u64 = 0x1000;

    fn run(code: &[u8]) -> Result<(u64, u64), CarveError> {
        run_getter(&BareCode { code, va: VA }, VA)
    }

    /// A library view with one GOT slot and named call targets, for the tests that need them.
    struct WithGot<'a> {
        code: BareCode<'a>,
        slots: &'a [(u64, u64)],
        names: &'a [(CallTarget, &'a str)],
    }

    impl CodeView for WithGot<'_> {
        fn code(&self, va: u64, max: u64) -> Result<&[u8], CarveError> {
            self.code.code(va, max)
        }
        fn pointer(&self, va: u64) -> Option<u64> {
            self.slots.iter().find(|s| s.0 == va).map(|s| s.1)
        }
        fn callee(&self, target: CallTarget) -> Option<String> {
            self.names
                .iter()
                .find(|n| n.0 == target)
                .map(|n| n.1.to_owned())
        }
    }

    #[test]
    fn the_vendor_stub() {
        // lea rax,[rip+0x100]; mov [rdi],rax; mov qword [rsi],0x400; ret
        let c = [
            0x48, 0x8d, 0x05, 0, 1, 0, 0, 0x48, 0x89, 0x07, 0x48, 0xc7, 0x06, 0, 4, 0, 0, 0xc3,
        ];
        assert_eq!(run(&c).unwrap(), (VA + 7 + 0x100, 0x400));
    }

    #[test]
    fn an_o0_frame_with_spills_and_reloads() {
        // push rbp; mov rbp,rsp; mov [rbp-8],rdi; mov [rbp-0x10],rsi; mov rax,[rbp-8];
        // lea rdx,[rip+0x1ec0]; mov [rax],rdx; mov rax,[rbp-0x10]; mov qword [rax],0x8f20;
        // nop; pop rbp; ret
        let c = [
            0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0x7d, 0xf8, 0x48, 0x89, 0x75, 0xf0, 0x48, 0x8b,
            0x45, 0xf8, 0x48, 0x8d, 0x15, 0xc0, 0x1e, 0, 0, 0x48, 0x89, 0x10, 0x48, 0x8b, 0x45,
            0xf0, 0x48, 0xc7, 0, 0x20, 0x8f, 0, 0, 0x90, 0x5d, 0xc3,
        ];
        assert_eq!(run(&c).unwrap(), (VA + 0x17 + 0x1ec0, 0x8f20));
    }

    #[test]
    fn the_stack_protector_check_is_evaluated() {
        // sub rsp,0x18; mov rax,fs:[0x28]; mov [rsp+8],rax; lea rax,[rip+0x10];
        // mov [rdi],rax; mov qword [rsi],0x20; mov rax,[rsp+8]; sub rax,fs:[0x28];
        // jne +4; add rsp,0x18; ret; (fail path:) ud2
        let mut c = vec![0x48, 0x83, 0xec, 0x18];
        c.extend([0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0]);
        c.extend([0x48, 0x89, 0x44, 0x24, 0x08]);
        c.extend([0x48, 0x8d, 0x05, 0x10, 0, 0, 0]);
        c.extend([0x48, 0x89, 0x07, 0x48, 0xc7, 0x06, 0x20, 0, 0, 0]);
        c.extend([0x48, 0x8b, 0x44, 0x24, 0x08]);
        c.extend([0x64, 0x48, 0x2b, 0x04, 0x25, 0x28, 0, 0, 0]);
        c.extend([0x75, 0x05, 0x48, 0x83, 0xc4, 0x18, 0xc3, 0x0f, 0x0b]);
        assert_eq!(run(&c).unwrap(), (VA + 25 + 0x10, 0x20));
        // The same with a corrupted reload (from another slot): the branch is undecidable.
        let mut bad = c.clone();
        bad[39] = 0x10;
        let e = run(&bad).unwrap_err().to_string();
        assert!(e.contains("jne") && e.contains("cannot decide"), "{e}");
    }

    #[test]
    fn profiling_hook_calls_preserve_the_arguments() {
        // call [rip+0x100] (__fentry__ through its GOT slot); lea rax,[rip+0]; mov [rdi],rax;
        // mov qword [rsi],8; ret
        let c = [
            0xff, 0x15, 0, 1, 0, 0, 0x48, 0x8d, 0x05, 0, 0, 0, 0, 0x48, 0x89, 0x07, 0x48, 0xc7,
            0x06, 8, 0, 0, 0, 0xc3,
        ];
        let slot = VA + 6 + 0x100;
        let names = [(CallTarget::Slot(slot), "__fentry__")];
        let view = WithGot {
            code: BareCode { code: &c, va: VA },
            slots: &[],
            names: &names,
        };
        assert_eq!(run_getter(&view, VA).unwrap(), (VA + 13, 8));
        let names = [(CallTarget::Slot(slot), "free")];
        let view = WithGot {
            names: &names,
            ..view
        };
        let e = run_getter(&view, VA).unwrap_err().to_string();
        assert!(e.contains("calls free"), "{e}");
        let e = run(&c).unwrap_err().to_string();
        assert!(e.contains("does not name"), "{e}");
    }

    #[test]
    fn the_large_code_model_adds_a_got_base_and_an_offset() {
        // lea rax,[rip-7]; movabs r11,0x2000; add rax,r11; movabs rcx,-0x100;
        // lea rax,[rax+rcx]; mov [rdi],rax; mov qword [rsi],0x10; ret
        let mut c = vec![0x48, 0x8d, 0x05, 0xf9, 0xff, 0xff, 0xff];
        c.extend([0x49, 0xbb, 0, 0x20, 0, 0, 0, 0, 0, 0]);
        c.extend([0x4c, 0x01, 0xd8]);
        c.extend([0x48, 0xb9]);
        c.extend((-0x100i64).to_le_bytes());
        c.extend([
            0x48, 0x8d, 0x04, 0x08, 0x48, 0x89, 0x07, 0x48, 0xc7, 0x06, 0x10, 0, 0, 0,
        ]);
        c.push(0xc3);
        assert_eq!(run(&c).unwrap(), (VA + 0x2000 - 0x100, 0x10));
    }

    #[test]
    fn a_got_load_reads_the_relocated_pointer() {
        // mov rax,[rip+0x100]; mov [rdi],rax; and qword [rsi],0; ret
        let c = [
            0x48, 0x8b, 0x05, 0, 1, 0, 0, 0x48, 0x89, 0x07, 0x48, 0x83, 0x26, 0, 0xc3,
        ];
        let view = WithGot {
            code: BareCode { code: &c, va: VA },
            slots: &[(VA + 7 + 0x100, 0x5000)],
            names: &[],
        };
        assert_eq!(run_getter(&view, VA).unwrap(), (0x5000, 0));
        let e = run(&c).unwrap_err().to_string();
        assert!(e.contains("not a relocated pointer slot"), "{e}");
    }

    #[test]
    fn a_jump_is_followed() {
        // jmp +2; ud2; (target:) the vendor stub with a zero size built in a register
        let c = [
            0xeb, 0x02, 0x0f, 0x0b, 0x48, 0x8d, 0x05, 0, 0, 0, 0, 0x48, 0x89, 0x07, 0x31, 0xc0,
            0x48, 0x89, 0x06, 0xc3,
        ];
        assert_eq!(run(&c).unwrap(), (VA + 11, 0));
    }

    #[test]
    fn what_cannot_be_accounted_for_is_an_error_naming_the_instruction() {
        for (code, needle) in [
            (&[0xc3][..], "before storing the blob pointer"),
            (&[0x48, 0x89, 0x07, 0xc3][..], "not a constant"),
            (&[0x48, 0x8d, 0x05, 0, 0, 0, 0][..], "code ends"),
            (&[0x55, 0xc3][..], "stack pointer"),
            (&[0x48, 0x89, 0x38, 0xc3][..], "writes memory other than"),
            (&[0x0f, 0xa2][..], "cpuid"),
            (&[0xeb, 0xfe][..], "no `ret` within"),
            (&[0x48, 0x89, 0x64, 0x24, 0x00][..], "return address"),
        ] {
            let e = run(code).unwrap_err();
            assert!(matches!(e, CarveError::NotAStub { va: VA, .. }), "{e}");
            assert!(e.to_string().contains(needle), "{needle}: {e}");
        }
        let e = run(&[0x55, 0x0f, 0xa2]).unwrap_err().to_string();
        assert!(e.contains("0x1001") && e.contains("cpuid"), "{e}");
    }

    #[test]
    fn the_sweep_lists_computed_and_loaded_addresses_in_code_order() {
        // lea rbx,[rip-7]; movabs r11,0x3000; add rbx,r11; movabs rax,-0x200;
        // lea rax,[rbx+rax]; mov rcx,[rip+0x40]; cpuid; ret
        let mut c = vec![0x48, 0x8d, 0x1d, 0xf9, 0xff, 0xff, 0xff];
        c.extend([0x49, 0xbb, 0, 0x30, 0, 0, 0, 0, 0, 0]);
        c.extend([0x4c, 0x01, 0xdb]);
        c.extend([0x48, 0xb8]);
        c.extend((-0x200i64).to_le_bytes());
        c.extend([0x48, 0x8d, 0x04, 0x03]);
        c.extend([0x48, 0x8b, 0x0d, 0x40, 0, 0, 0, 0x0f, 0xa2, 0xc3]);
        let slot = VA + 41 + 0x40;
        let view = WithGot {
            code: BareCode { code: &c, va: VA },
            slots: &[(slot, 0x7777)],
            names: &[],
        };
        let refs = constant_references(&view, &c, VA);
        let got = VA + 0x3000;
        for want in [got, got - 0x200, slot, 0x7777] {
            assert!(refs.contains(&want), "{want:#x} in {refs:x?}");
        }
        let pos = |v| refs.iter().position(|r| *r == v).unwrap();
        assert!(pos(got) < pos(got - 0x200) && pos(got - 0x200) < pos(0x7777));
    }
}
