//! x87 floating point: every instruction becomes a call of the `x87` (or,
//! for fcomi and fucomi, `x87_flags`) helper with the operation described
//! in `x87_op` and the memory operand's address in `x87_addr` (see
//! `aarchx_ir::x87`); the runtime executes it on the 80-bit registers.
//! Only fnstsw (a read of `fpsw`) is plain IR. Transcendental instructions
//! (fsin, fcos, fptan, fpatan, f2xm1, fyl2x, fyl2xp1, fsincos), BCD
//! (fbld, fbstp) and fnsave/frstor are not implemented and raise SIGILL.

use aarchx_ir::cond::Helper;
use aarchx_ir::x87::{Operand, X87Insn, X87Op};
use aarchx_ir::{Opcode, Reg, Type};
use iced_x86::{ConditionCode, MemorySize, Mnemonic, OpKind, Register};

use super::lift::Outcome;
use super::operand::L;

impl L<'_, '_> {
    /// The `st(i)` operand: the register that is not st(0) (st(0) when
    /// both are, st(1) when the form names none).
    fn sti(&self) -> u8 {
        let regs: Vec<u8> = (0..self.i.op_count())
            .filter(|n| self.i.op_kind(*n) == OpKind::Register)
            .map(|n| (self.i.op_register(n) as u32 - Register::ST0 as u32) as u8)
            .collect();
        match regs.as_slice() {
            [] => 1,
            [r] => *r,
            [r, s, ..] => {
                if *r != 0 {
                    *r
                } else {
                    *s
                }
            }
        }
    }

    /// The form writes `st(i)` (`fadd st(i), st(0)`), not st(0).
    fn to_sti(&self) -> bool {
        self.i.op_count() == 2 && self.i.op_kind(0) == OpKind::Register && self.i.op_register(0) != Register::ST0
    }

    /// The instruction's value operand: memory by its format, or st(i).
    fn x87_operand(&self) -> Option<Operand> {
        if !self.is_mem(0) {
            return Some(Operand::St);
        }
        Some(match self.i.memory_size() {
            MemorySize::Float32 => Operand::F32,
            MemorySize::Float64 => Operand::F64,
            MemorySize::Float80 => Operand::F80,
            MemorySize::Int16 => Operand::I16,
            MemorySize::Int32 => Operand::I32,
            MemorySize::Int64 => Operand::I64,
            _ => return None,
        })
    }

    /// Emits the helper call for `insn`, passing the memory operand's
    /// address when it has one; a waiting instruction first raises a
    /// pending exception (see `x87_pending`).
    pub(super) fn x87_call(&mut self, insn: X87Insn, helper: Helper) -> Outcome {
        if self.x87_waits() {
            self.x87_pending();
        }
        if !matches!(insn.operand, Operand::None | Operand::St) {
            let a = self.addr();
            self.b.set(Reg::X87_ADDR, a);
        }
        let op = self.c(Type::I32, u64::from(insn.encode()));
        self.b.set(Reg::X87_OP, op);
        self.b.call(helper);
        Outcome::Next
    }

    /// An operation on st(0) and the instruction's operand.
    fn x87_binary(&mut self, op: X87Op, pops: u8) -> Outcome {
        let Some(operand) = self.x87_operand() else { return Outcome::Unsupported };
        let insn = X87Insn { op, operand, index: self.sti(), to_sti: self.to_sti(), pops };
        self.x87_call(insn, Helper::X87)
    }

    /// An operation without operands.
    fn x87_plain(&mut self, op: X87Op, pops: u8) -> Outcome {
        let insn = X87Insn { pops, ..X87Insn::new(op, Operand::None) };
        self.x87_call(insn, Helper::X87)
    }

    /// An operation on `st(i)` only.
    fn x87_reg(&mut self, op: X87Op, pops: u8) -> Outcome {
        let insn = X87Insn { index: self.sti(), pops, ..X87Insn::new(op, Operand::St) };
        self.x87_call(insn, Helper::X87)
    }

    /// fcmovcc: st(0) = st(i) when the condition holds (passed in `x87_addr`).
    fn fcmov(&mut self, cc: ConditionCode) -> Outcome {
        let c = self.condition(cc);
        let wide = self.un(Opcode::Zext, Type::I64, c);
        self.b.set(Reg::X87_ADDR, wide);
        self.x87_reg(X87Op::Move, 0)
    }

    /// Whether this instruction checks for a pending unmasked exception
    /// before it runs: every x87 instruction but the no-wait forms (and
    /// fxsave, fxrstor).
    pub(super) fn x87_waits(&self) -> bool {
        use Mnemonic as M;
        !matches!(
            self.i.mnemonic(),
            M::Fninit
                | M::Fnclex
                | M::Fnstenv
                | M::Fnstsw
                | M::Fnstcw
                | M::Fxsave
                | M::Fxsave64
                | M::Fxrstor
                | M::Fxrstor64
                | M::Xsave
                | M::Xsave64
                | M::Xrstor
                | M::Xrstor64
        )
    }

    /// fnstsw ax, fnstsw m16 (and fstsw, which waits first).
    fn fnstsw(&mut self) -> Outcome {
        if self.x87_waits() {
            self.x87_pending();
        }
        let v = self.b.get(Reg::FPSW);
        if self.is_mem(0) {
            let a = self.addr();
            self.b.store(Type::I16, a, v);
        } else {
            self.gpr_set(Register::AX, v);
        }
        Outcome::Next
    }

    /// Lifts an x87 instruction; `None` when `m` is not one.
    pub fn x87(&mut self, m: Mnemonic) -> Option<Outcome> {
        use Mnemonic as M;
        use X87Op as O;
        let constant = |k: u8| X87Insn { index: k, ..X87Insn::new(O::LoadConst, Operand::None) };
        Some(match m {
            M::Fld | M::Fild => self.x87_binary(O::Load, 0),
            M::Fst => self.x87_binary(O::Store, 0),
            M::Fstp => self.x87_binary(O::Store, 1),
            M::Fist => self.x87_binary(O::StoreInt, 0),
            M::Fistp => self.x87_binary(O::StoreInt, 1),
            M::Fisttp => self.x87_binary(O::StoreTrunc, 1),
            M::Fld1 => self.x87_call(constant(0), Helper::X87),
            M::Fldl2t => self.x87_call(constant(1), Helper::X87),
            M::Fldl2e => self.x87_call(constant(2), Helper::X87),
            M::Fldpi => self.x87_call(constant(3), Helper::X87),
            M::Fldlg2 => self.x87_call(constant(4), Helper::X87),
            M::Fldln2 => self.x87_call(constant(5), Helper::X87),
            M::Fldz => self.x87_call(constant(6), Helper::X87),
            M::Fadd | M::Fiadd => self.x87_binary(O::Add, 0),
            M::Faddp => self.x87_binary(O::Add, 1),
            M::Fmul | M::Fimul => self.x87_binary(O::Mul, 0),
            M::Fmulp => self.x87_binary(O::Mul, 1),
            M::Fsub | M::Fisub => self.x87_binary(O::Sub, 0),
            M::Fsubp => self.x87_binary(O::Sub, 1),
            M::Fsubr | M::Fisubr => self.x87_binary(O::SubR, 0),
            M::Fsubrp => self.x87_binary(O::SubR, 1),
            M::Fdiv | M::Fidiv => self.x87_binary(O::Div, 0),
            M::Fdivp => self.x87_binary(O::Div, 1),
            M::Fdivr | M::Fidivr => self.x87_binary(O::DivR, 0),
            M::Fdivrp => self.x87_binary(O::DivR, 1),
            M::Fcom | M::Ficom => self.x87_binary(O::Com, 0),
            M::Fcomp | M::Ficomp => self.x87_binary(O::Com, 1),
            M::Fcompp => self.x87_binary(O::Com, 2),
            M::Fucom => self.x87_binary(O::Ucom, 0),
            M::Fucomp => self.x87_binary(O::Ucom, 1),
            M::Fucompp => self.x87_binary(O::Ucom, 2),
            M::Fcomi | M::Fcomip | M::Fucomi | M::Fucomip => {
                let op = if matches!(m, M::Fcomi | M::Fcomip) { O::Comi } else { O::Ucomi };
                let pops = u8::from(matches!(m, M::Fcomip | M::Fucomip));
                let insn = X87Insn { index: self.sti(), pops, ..X87Insn::new(op, Operand::St) };
                self.x87_call(insn, Helper::X87Flags)
            }
            M::Ftst => self.x87_plain(O::Tst, 0),
            M::Fxam => self.x87_plain(O::Xam, 0),
            M::Fchs => self.x87_plain(O::Chs, 0),
            M::Fabs => self.x87_plain(O::Abs, 0),
            M::Fsqrt => self.x87_plain(O::Sqrt, 0),
            M::Frndint => self.x87_plain(O::Rndint, 0),
            M::Fscale => self.x87_plain(O::Scale, 0),
            M::Fprem => self.x87_plain(O::Prem, 0),
            M::Fprem1 => self.x87_plain(O::Prem1, 0),
            M::Fxtract => self.x87_plain(O::Xtract, 0),
            M::Fxch => self.x87_reg(O::Xch, 0),
            M::Ffree => self.x87_reg(O::Free, 0),
            M::Ffreep => self.x87_reg(O::Free, 1),
            M::Fincstp => self.x87_plain(O::IncStp, 0),
            M::Fdecstp => self.x87_plain(O::DecStp, 0),
            M::Fninit | M::Finit => self.x87_plain(O::Init, 0),
            M::Fnclex | M::Fclex => self.x87_plain(O::Clex, 0),
            M::Fnstenv | M::Fstenv => self.x87_call(X87Insn::new(O::StoreEnv, Operand::Area), Helper::X87),
            M::Fldenv => self.fldenv(),
            M::Fnstsw | M::Fstsw => self.fnstsw(),
            M::Wait | M::Fnop => {
                self.x87_pending();
                Outcome::Next
            }
            M::Fcmovb => self.fcmov(ConditionCode::b),
            M::Fcmove => self.fcmov(ConditionCode::e),
            M::Fcmovbe => self.fcmov(ConditionCode::be),
            M::Fcmovu => self.fcmov(ConditionCode::p),
            M::Fcmovnb => self.fcmov(ConditionCode::ae),
            M::Fcmovne => self.fcmov(ConditionCode::ne),
            M::Fcmovnbe => self.fcmov(ConditionCode::a),
            M::Fcmovnu => self.fcmov(ConditionCode::np),
            _ => return None,
        })
    }

    /// fldenv: the control word in the environment is checked first (see
    /// `refuse_fpcw`).
    fn fldenv(&mut self) -> Outcome {
        let a = self.addr();
        let cw = self.b.load(Type::I16, a);
        self.refuse_fpcw(cw);
        self.x87_call(X87Insn::new(X87Op::LoadEnv, Operand::Area), Helper::X87)
    }
}
