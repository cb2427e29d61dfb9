//! The x87 FPU behind the `x87` and `x87_flags` helpers: executes the
//! operation the lifter described in `x87_op` (see `aarchx_ir::x87`) on
//! the x87 state of the guest state (registers R0-R7, status word with
//! TOP, abridged tags, control word), with memory operands at `x87_addr`
//! read and written through the executor's [`Machine`], so a bad address
//! faults exactly as the interpreter's own loads do.
//!
//! Every operation gives the masked response (the lifter refuses only
//! control words that select the reserved precision): an invalid
//! operation gives the indefinite NaN, a stack overflow or underflow sets
//! IE and SF, and the flags accumulate in the status word. A flag whose
//! exception the control word unmasks sets ES and B (the error summary):
//! the lifter raises SIGFPE at the next waiting x87 instruction, as the
//! CPU does, but the faulting operation's result is the masked one (the
//! CPU leaves the destination alone for IE, ZE and DE, and biases the
//! exponent for OE and UE). The control word's rounding mode and
//! precision (24, 53, 64 bits) are honoured.

pub(crate) mod arith;
mod image;
pub(crate) mod value;

use std::cmp::Ordering;

use aarchx_ir::x87::{Operand, X87Insn, X87Op};
use aarchx_ir::{GuestState, Type};

use crate::machine::Machine;
use arith::Bin;
use value::{Format, Res, F80, IE, INDEFINITE, SIGN};

/// Status word bits.
const SF: u16 = 0x40;
/// The error summary and its copy B: set while a flag's exception is unmasked.
const ES: u16 = 0x80;
const B: u16 = 0x8000;
const C0: u16 = 0x100;
const C1: u16 = 0x200;
const C2: u16 = 0x400;
const C3: u16 = 0x4000;
const TOP_SHIFT: u16 = 11;

/// fld1, fldl2t, fldl2e, fldpi, fldlg2, fldln2, fldz: the value
/// truncated to 64 significant bits and, for the irrational ones, whether
/// the rest is more than half an ulp (then round-to-nearest gives one
/// more); they are rounded by the control word.
const CONSTANTS: [(F80, Option<bool>); 7] = [
    (0x3fff_8000_0000_0000_0000, None),
    (0x4000_d49a_784b_cd1b_8afe, Some(false)),
    (0x3fff_b8aa_3b29_5c17_f0bb, Some(true)),
    (0x4000_c90f_daa2_2168_c234, Some(true)),
    (0x3ffd_9a20_9a84_fbcf_f798, Some(true)),
    (0x3ffe_b172_17f7_d1cf_79ab, Some(true)),
    (0, None),
];

/// Runs the x87 operation described in `state.x87_op`.
pub fn run(state: &mut GuestState, mem: &mut dyn Machine) {
    let insn = X87Insn::decode(state.x87_op).expect("the lifter passes a valid x87 operation");
    let c1 = state.fpsw & C1 != 0;
    let mut fpu = Fpu { s: state, flags: 0, c1 };
    fpu.exec(insn, mem);
    fpu.finish();
}

/// The x87 state during one operation: exception flags and C1 (kept by
/// the operations that do not define it) are collected and written to
/// the status word at the end.
struct Fpu<'s> {
    s: &'s mut GuestState,
    flags: u16,
    c1: bool,
}

impl Fpu<'_> {
    fn top(&self) -> usize {
        usize::from(self.s.fpsw >> TOP_SHIFT & 7)
    }

    fn set_top(&mut self, top: usize) {
        self.s.fpsw = self.s.fpsw & !(7 << TOP_SHIFT) | (top as u16 & 7) << TOP_SHIFT;
    }

    fn phys(&self, i: u8) -> usize {
        (self.top() + usize::from(i)) & 7
    }

    fn is_empty(&self, i: u8) -> bool {
        self.s.fptag & (1 << self.phys(i)) == 0
    }

    /// st(i), or the indefinite NaN after a stack underflow.
    fn read(&mut self, i: u8) -> F80 {
        if self.is_empty(i) {
            self.flags |= IE | SF;
            self.c1 = false;
            return INDEFINITE;
        }
        self.s.st[self.phys(i)]
    }

    fn write(&mut self, i: u8, v: F80) {
        let p = self.phys(i);
        self.s.st[p] = v & ((1 << 80) - 1);
        self.s.fptag |= 1 << p;
    }

    /// Pushes `v`; a full stack overflows and receives the indefinite NaN.
    fn push(&mut self, v: F80) {
        let top = (self.top() + 7) & 7;
        self.set_top(top);
        if self.s.fptag & (1 << top) != 0 {
            self.flags |= IE | SF;
            self.c1 = true;
            self.write(0, INDEFINITE);
        } else {
            self.write(0, v);
        }
    }

    fn pop(&mut self) {
        let top = self.top();
        self.s.fptag &= !(1 << top);
        self.set_top(top + 1);
    }

    fn take<T>(&mut self, r: Res<T>) -> T {
        self.flags |= r.flags;
        self.c1 = r.c1;
        r.value
    }

    fn set_cc(&mut self, c3: bool, c2: bool, c0: bool) {
        let bits = [(C3, c3), (C2, c2), (C0, c0)];
        for (bit, on) in bits {
            self.s.fpsw = if on { self.s.fpsw | bit } else { self.s.fpsw & !bit };
        }
    }

    /// Writes the flags and C1 to the status word, and the error summary.
    fn finish(&mut self) {
        let sw = self.s.fpsw & !C1 | self.flags | if self.c1 { C1 } else { 0 };
        let pending = sw & !self.s.fpcw & 0x3f != 0;
        self.s.fpsw = sw & !(ES | B) | if pending { ES | B } else { 0 };
    }

    fn addr(&self) -> u64 {
        self.s.x87_addr
    }

    /// Whether a stack underflow or overflow happened in this operation:
    /// then the result is the indefinite NaN and no other flag is raised.
    fn stack_fault(&self) -> bool {
        self.flags & SF != 0
    }

    /// The memory or register operand as an extended value (a NaN from
    /// memory still signalling, so the operation raises IE for it), with
    /// the flags its conversion raised.
    fn operand(&mut self, insn: X87Insn, mem: &mut dyn Machine) -> Res<F80> {
        let a = self.addr();
        match insn.operand {
            Operand::St => Res::exact(self.read(insn.index)),
            Operand::F32 => value::widen(mem.load(a, Type::I32) as u64, Format::F32),
            Operand::F64 => value::widen(mem.load(a, Type::I64) as u64, Format::F64),
            Operand::F80 => Res::exact(image::load_f80(mem, a)),
            Operand::I16 => Res::exact(value::from_int(i64::from(mem.load(a, Type::I16) as u16 as i16))),
            Operand::I32 => Res::exact(value::from_int(i64::from(mem.load(a, Type::I32) as u32 as i32))),
            Operand::I64 => Res::exact(value::from_int(mem.load(a, Type::I64) as u64 as i64)),
            Operand::None | Operand::Area => panic!("x87 operation {insn:?} has no value operand"),
        }
    }

    /// Takes `r` unless a stack fault already decided the result.
    fn result(&mut self, r: Res<F80>) -> F80 {
        if self.stack_fault() {
            INDEFINITE
        } else {
            self.take(r)
        }
    }

    fn exec(&mut self, insn: X87Insn, mem: &mut dyn Machine) {
        let cw = self.s.fpcw;
        let a = self.addr();
        match insn.op {
            X87Op::Load => {
                let r = match insn.operand {
                    Operand::F32 => value::load_float(mem.load(a, Type::I32) as u64, Format::F32),
                    Operand::F64 => value::load_float(mem.load(a, Type::I64) as u64, Format::F64),
                    _ => self.operand(insn, mem),
                };
                // A full stack overflows: the conversion raises nothing then.
                let v = if self.is_empty(7) { self.result(r) } else { INDEFINITE };
                self.c1 = false;
                self.push(v);
            }
            X87Op::LoadConst => {
                let (down, above_half) = CONSTANTS[usize::from(insn.index)];
                let up = match (cw >> 10 & 3, above_half) {
                    (_, None) => false,
                    (0, Some(half)) => half,
                    (rc, _) => rc == 2,
                };
                self.c1 = false;
                self.push(down + F80::from(up));
            }
            X87Op::Store => {
                self.c1 = false;
                let v = self.read(0);
                match insn.operand {
                    Operand::St => self.write(insn.index, v),
                    Operand::F80 => image::store_f80(mem, a, v),
                    Operand::F32 => {
                        let r = value::narrow(v, Format::F32, cw);
                        let bits = self.take(r);
                        mem.store(a, Type::I32, u128::from(bits));
                    }
                    _ => {
                        let r = value::narrow(v, Format::F64, cw);
                        let bits = self.take(r);
                        mem.store(a, Type::I64, u128::from(bits));
                    }
                }
            }
            X87Op::StoreInt | X87Op::StoreTrunc => {
                let v = self.read(0);
                let round =
                    if insn.op == X87Op::StoreTrunc { rustc_apfloat::Round::TowardZero } else { value::rounding(cw) };
                let (bits, ty) = match insn.operand {
                    Operand::I16 => (16, Type::I16),
                    Operand::I32 => (32, Type::I32),
                    _ => (64, Type::I64),
                };
                let r = value::to_int(v, bits, round);
                let n = self.take(r);
                mem.store(a, ty, u128::from(n));
            }
            X87Op::Move => {
                let v = self.read(insn.index);
                if a != 0 || self.stack_fault() {
                    self.write(0, v);
                }
            }
            X87Op::Add | X87Op::Mul | X87Op::Sub | X87Op::SubR | X87Op::Div | X87Op::DivR => {
                let st0 = self.read(0);
                // `x` is the destination's value, `y` the other operand.
                let (dst, x, y) = if insn.to_sti {
                    (insn.index, self.read(insn.index), Res::exact(st0))
                } else {
                    (0, st0, self.operand(insn, mem))
                };
                let (op, a, b) = match insn.op {
                    X87Op::Add => (Bin::Add, x, y.value),
                    X87Op::Mul => (Bin::Mul, x, y.value),
                    X87Op::Sub => (Bin::Sub, x, y.value),
                    X87Op::SubR => (Bin::Sub, y.value, x),
                    X87Op::Div => (Bin::Div, x, y.value),
                    _ => (Bin::Div, y.value, x),
                };
                let r = arith::binary(op, a, b, cw);
                // A denormal memory operand's DE counts unless a NaN, an
                // invalid operation or a division by zero took precedence.
                let de = if r.flags & (IE | value::ZE) == 0 && !value::is_nan(r.value) { y.flags } else { 0 };
                let v = self.result(Res { flags: r.flags | de, ..r });
                self.write(dst, v);
            }
            X87Op::Com | X87Op::Ucom | X87Op::Tst | X87Op::Comi | X87Op::Ucomi => {
                let x = self.read(0);
                let y = match insn.op {
                    X87Op::Tst => Res::exact(0),
                    X87Op::Comi | X87Op::Ucomi => Res::exact(self.read(insn.index)),
                    _ => self.operand(insn, mem),
                };
                let ord = if self.stack_fault() {
                    None
                } else {
                    let (ord, flags) = arith::compare(x, y.value, matches!(insn.op, X87Op::Ucom | X87Op::Ucomi));
                    let de = if ord.is_some() { y.flags } else { 0 };
                    self.flags |= flags | de;
                    ord
                };
                let (c3_zf, c2_pf, c0_cf) = cc_of(ord);
                if matches!(insn.op, X87Op::Comi | X87Op::Ucomi) {
                    let (zf, pf, cf) = (c3_zf, c2_pf, c0_cf);
                    self.s.flags = [u8::from(cf), u8::from(pf), 0, u8::from(zf), 0, 0, self.s.flags[6], 0];
                } else {
                    self.c1 = false;
                    self.set_cc(c3_zf, c2_pf, c0_cf);
                }
            }
            X87Op::Xam => {
                let p = self.phys(0);
                let v = self.s.st[p];
                self.c1 = value::is_negative(v);
                let (c3, c2, c0) = if self.is_empty(0) {
                    (true, false, true)
                } else {
                    match value::classify(v) {
                        value::Class::Unsupported => (false, false, false),
                        value::Class::Nan => (false, false, true),
                        value::Class::Normal => (false, true, false),
                        value::Class::Infinity => (false, true, true),
                        value::Class::Zero => (true, false, false),
                        value::Class::Denormal => (true, true, false),
                    }
                };
                self.set_cc(c3, c2, c0);
            }
            X87Op::Chs | X87Op::Abs => {
                let empty = self.is_empty(0);
                let v = self.read(0);
                let v = match (empty, insn.op) {
                    (true, _) => v,
                    (false, X87Op::Chs) => v ^ SIGN,
                    (false, _) => v & !SIGN,
                };
                self.c1 = false;
                self.write(0, v);
            }
            X87Op::Sqrt | X87Op::Rndint => {
                let v = self.read(0);
                let r = if insn.op == X87Op::Sqrt { arith::sqrt(v, cw) } else { arith::rndint(v, cw) };
                let v = self.result(r);
                self.write(0, v);
            }
            X87Op::Scale => {
                let (x, y) = (self.read(0), self.read(1));
                let r = arith::scale(x, y, cw);
                let v = self.result(r);
                self.write(0, v);
            }
            X87Op::Prem | X87Op::Prem1 => {
                let (x, y) = (self.read(0), self.read(1));
                let rem = arith::prem(x, y, insn.op == X87Op::Prem1);
                let v = self.result(rem.res);
                self.write(0, v);
                match rem.quotient {
                    Some(q) if !self.stack_fault() => {
                        self.c1 = q & 1 != 0;
                        self.set_cc(q & 2 != 0, rem.partial, q & 4 != 0);
                    }
                    _ => {
                        self.c1 = false;
                        self.s.fpsw &= !C2;
                    }
                }
            }
            X87Op::Xtract if !self.is_empty(7) => {
                // No room for the significand: both become the indefinite NaN.
                self.read(0);
                self.write(0, INDEFINITE);
                self.push(INDEFINITE);
            }
            X87Op::Xtract => {
                let v = self.read(0);
                let (exp, sig) = arith::xtract(v);
                let e = self.result(exp);
                self.write(0, e);
                self.c1 = false;
                self.push(sig);
            }
            X87Op::Xch => {
                let (x, y) = (self.read(0), self.read(insn.index));
                self.c1 = false;
                self.write(0, y);
                self.write(insn.index, x);
            }
            X87Op::Free => {
                self.c1 = false;
                let p = self.phys(insn.index);
                self.s.fptag &= !(1 << p);
            }
            X87Op::Init | X87Op::Reset => {
                self.s.fpcw = GuestState::FPCW_DEFAULT;
                self.s.fpsw = 0;
                self.s.fptag = 0;
                if insn.op == X87Op::Reset {
                    self.s.st = [0; 8];
                }
            }
            X87Op::Clex => self.s.fpsw &= 0x7f00,
            X87Op::DecStp | X87Op::IncStp => {
                let top = self.top();
                self.set_top(if insn.op == X87Op::DecStp { top + 7 } else { top + 1 });
                self.c1 = false;
            }
            X87Op::StoreEnv => image::store_env(self.s, mem, a),
            X87Op::LoadEnv => image::load_env(self.s, mem, a),
            X87Op::SaveImage => image::save(self.s, mem, a),
            X87Op::RestoreImage => image::restore(self.s, mem, a),
        }
        for _ in 0..insn.pops {
            self.pop();
        }
        if matches!(
            insn.op,
            X87Op::Init | X87Op::Reset | X87Op::Clex | X87Op::StoreEnv | X87Op::LoadEnv | X87Op::RestoreImage
        ) {
            // The whole status word was just defined: keep it as is.
            self.c1 = self.s.fpsw & C1 != 0;
        }
    }
}

/// (C3, C2, C0), or (ZF, PF, CF), of a comparison.
fn cc_of(ord: Option<Ordering>) -> (bool, bool, bool) {
    match ord {
        None => (true, true, true),
        Some(Ordering::Greater) => (false, false, false),
        Some(Ordering::Less) => (false, false, true),
        Some(Ordering::Equal) => (true, false, false),
    }
}
