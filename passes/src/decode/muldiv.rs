//! Multiplication and division: mul, imul in its three forms, div and idiv
//! (a divide error, #DE, becomes `trap divzero`, which the runtime turns
//! into SIGFPE).

use aarchx_ir::{Block, IntCond, Opcode, Reg, TrapKind, Type, Value};
use iced_x86::Register;

use super::lift::Outcome;
use super::operand::{int_type, L};

/// The accumulator and data registers of a one-operand mul/div of `ty`:
/// (low half / quotient, high half / remainder).
fn acc_pair(ty: Type) -> (Register, Register) {
    match ty {
        Type::I8 => (Register::AL, Register::AH),
        Type::I16 => (Register::AX, Register::DX),
        Type::I32 => (Register::EAX, Register::EDX),
        _ => (Register::RAX, Register::RDX),
    }
}

fn double(ty: Type) -> Type {
    int_type(2 * ty.bits() as usize / 8)
}

impl L<'_, '_> {
    /// The low and high halves of the full product of `a` and `b`.
    fn full_product(&mut self, ty: Type, a: Value, b: Value, signed: bool) -> (Value, Value) {
        let lo = self.bin(Opcode::Mul, ty, a, b);
        let hi = if ty == Type::I64 {
            self.bin(if signed { Opcode::Smulh } else { Opcode::Umulh }, ty, a, b)
        } else {
            let wide = double(ty);
            let ext = if signed { Opcode::Sext } else { Opcode::Zext };
            let wa = self.un(ext, wide, a);
            let wb = self.un(ext, wide, b);
            let p = self.bin(Opcode::Mul, wide, wa, wb);
            let s = self.c(Type::I8, u64::from(ty.bits()));
            let h = self.bin(Opcode::Lshr, wide, p, s);
            self.un(Opcode::Trunc, ty, h)
        };
        (lo, hi)
    }

    /// CF = OF = `overflow`; SF, ZF, PF from the low half; AF cleared
    /// (SF, ZF, AF, PF are undefined after a multiply).
    fn mul_flags(&mut self, ty: Type, lo: Value, overflow: Value) {
        self.b.set(Reg::CF, overflow);
        self.b.set(Reg::OF, overflow);
        self.flags_zsp(ty, lo);
        let f = self.c(Type::I1, 0);
        self.b.set(Reg::AF, f);
    }

    /// mul r/m and the one-operand imul r/m.
    pub fn mul1(&mut self, signed: bool) -> Outcome {
        let ty = self.op_type(0);
        let (acc, data) = acc_pair(ty);
        let a = self.gpr_get(acc);
        let b = self.read(0, ty);
        let (lo, hi) = self.full_product(ty, a, b, signed);
        let overflow = if signed {
            let s = self.c(Type::I8, u64::from(ty.bits() - 1));
            let sign = self.bin(Opcode::Ashr, ty, lo, s);
            self.icmp(IntCond::Ne, ty, hi, sign)
        } else {
            let zero = self.c(ty, 0);
            self.icmp(IntCond::Ne, ty, hi, zero)
        };
        if ty == Type::I8 {
            let ax = self.bin(Opcode::Concat, Type::I16, hi, lo);
            self.gpr_set(Register::AX, ax);
        } else {
            self.gpr_set(acc, lo);
            self.gpr_set(data, hi);
        }
        self.mul_flags(ty, lo, overflow);
        Outcome::Next
    }

    /// imul r, r/m and imul r, r/m, imm.
    pub fn imul_n(&mut self) -> Outcome {
        let ty = self.op_type(0);
        let (a, b) = if self.i.op_count() == 3 {
            (self.read(1, ty), self.read(2, ty))
        } else {
            (self.read(0, ty), self.read(1, ty))
        };
        let (lo, hi) = self.full_product(ty, a, b, true);
        let s = self.c(Type::I8, u64::from(ty.bits() - 1));
        let sign = self.bin(Opcode::Ashr, ty, lo, s);
        let overflow = self.icmp(IntCond::Ne, ty, hi, sign);
        self.write(0, lo);
        self.mul_flags(ty, lo, overflow);
        Outcome::Next
    }

    /// Continues in a new block if `fault` is clear; otherwise raises #DE.
    fn divide_error_unless(&mut self, fault: Value) {
        let trap = self.b.create_block();
        let ok = self.b.create_block();
        self.b.brif(fault, trap, ok);
        self.b.switch_to(trap);
        self.b.trap(TrapKind::DivZero, self.i.ip());
        self.b.switch_to(ok);
    }

    /// div r/m and idiv r/m.
    pub fn div(&mut self, signed: bool) -> Outcome {
        let ty = self.op_type(0);
        let wide = double(ty);
        let (acc, data) = acc_pair(ty);
        let divisor = self.read(0, ty);
        let zero = self.c(ty, 0);
        let by_zero = self.icmp(IntCond::Eq, ty, divisor, zero);
        // 64-bit: a dividend that fits in rax is divided alone (below),
        // the double-width division on the other path.
        let narrow = (ty == Type::I64).then(|| {
            self.divide_error_unless(by_zero);
            self.branch_on_narrow_dividend(signed)
        });
        let dividend = if ty == Type::I8 {
            self.gpr_get(Register::AX)
        } else {
            let hi = self.gpr_get(data);
            let lo = self.gpr_get(acc);
            self.bin(Opcode::Concat, wide, hi, lo)
        };
        let mut fault = narrow.is_none().then_some(by_zero);
        if signed {
            // MIN / -1 overflows even the double-width division. Below 64
            // bits a double-width MIN overflows the quotient whatever the
            // divisor (|q| >= 2^(2n-1) / 2^(n-1)), so MIN alone is checked.
            let min = self.c_wide_min(wide);
            let is_min = self.icmp(IntCond::Eq, wide, dividend, min);
            let overflow = if ty == Type::I64 {
                let minus_one = self.c(ty, u64::MAX);
                let is_m1 = self.icmp(IntCond::Eq, ty, divisor, minus_one);
                self.bin(Opcode::And, Type::I1, is_m1, is_min)
            } else {
                is_min
            };
            fault = Some(match fault {
                Some(f) => self.bin(Opcode::Or, Type::I1, f, overflow),
                None => overflow,
            });
        }
        if let Some(fault) = fault {
            self.divide_error_unless(fault);
        }
        let ext = if signed { Opcode::Sext } else { Opcode::Zext };
        let wd = self.un(ext, wide, divisor);
        let (qop, rop) = if signed { (Opcode::Sdiv, Opcode::Srem) } else { (Opcode::Udiv, Opcode::Urem) };
        let q = self.bin(qop, wide, dividend, wd);
        let r = if wide == Type::I128 {
            self.bin(rop, wide, dividend, wd)
        } else {
            // The remainder of a division rounding toward zero, as both do:
            // one multiply instead of a second division.
            let back = self.bin(Opcode::Mul, wide, q, wd);
            self.bin(Opcode::Sub, wide, dividend, back)
        };
        // The quotient must fit in the operand size.
        let qn = self.un(Opcode::Trunc, ty, q);
        let back = self.un(ext, wide, qn);
        let out_of_range = self.icmp(IntCond::Ne, wide, back, q);
        self.divide_error_unless(out_of_range);
        let rn = self.un(Opcode::Trunc, ty, r);
        if ty == Type::I8 {
            let ax = self.bin(Opcode::Concat, Type::I16, rn, qn);
            self.gpr_set(Register::AX, ax);
        } else {
            self.gpr_set(acc, qn);
            self.gpr_set(data, rn);
        }
        if let Some(narrow) = narrow {
            // Both paths go on in the region: a region without superblocks
            // still runs every one of its instructions each time it runs.
            let join = self.b.create_block();
            self.b.jump(join);
            self.b.switch_to(narrow);
            self.divide_narrow(signed, divisor);
            self.b.jump(join);
            self.b.switch_to(join);
        }
        // All six flags are undefined after a division; leave them as they were.
        Outcome::Next
    }

    /// Branches on whether a 64-bit division's dividend fits in 64 bits
    /// (rdx zero, or for idiv the sign extension of rax, as after `xor
    /// edx, edx` or `cqo`: what compilers emit) and goes on in the block
    /// where it does not; returns the one where it does. (Unsigned, only
    /// rdx is read here: rax is not live across the branch.)
    fn branch_on_narrow_dividend(&mut self, signed: bool) -> Block {
        let hi = self.gpr_get(Register::RDX);
        let high_of_lo = if signed {
            let lo = self.gpr_get(Register::RAX);
            let sh = self.c(Type::I8, 63);
            self.bin(Opcode::Ashr, Type::I64, lo, sh)
        } else {
            self.c(Type::I64, 0)
        };
        let fits = self.icmp(IntCond::Eq, Type::I64, hi, high_of_lo);
        let (narrow, wide) = (self.b.create_block(), self.b.create_block());
        self.b.brif(fits, narrow, wide);
        self.b.switch_to(wide);
        narrow
    }

    /// rdx:rax / divisor when rdx:rax fits in rax: one host division. The
    /// divisor is not zero.
    fn divide_narrow(&mut self, signed: bool, divisor: Value) {
        let lo = self.gpr_get(Register::RAX);
        if signed {
            // MIN / -1: the quotient 2^63 does not fit.
            let min = self.c(Type::I64, 1 << 63);
            let minus_one = self.c(Type::I64, u64::MAX);
            let is_min = self.icmp(IntCond::Eq, Type::I64, lo, min);
            let is_m1 = self.icmp(IntCond::Eq, Type::I64, divisor, minus_one);
            let both = self.bin(Opcode::And, Type::I1, is_min, is_m1);
            self.divide_error_unless(both);
        }
        let q = self.bin(if signed { Opcode::Sdiv } else { Opcode::Udiv }, Type::I64, lo, divisor);
        // The remainder of a division rounding toward zero, as both do.
        let back = self.bin(Opcode::Mul, Type::I64, q, divisor);
        let r = self.bin(Opcode::Sub, Type::I64, lo, back);
        self.gpr_set(Register::RAX, q);
        self.gpr_set(Register::RDX, r);
    }

    /// The minimum signed value of a double-width type (up to i128).
    fn c_wide_min(&mut self, wide: Type) -> Value {
        if wide == Type::I128 {
            let hi = self.c(Type::I64, 1 << 63);
            let lo = self.c(Type::I64, 0);
            self.bin(Opcode::Concat, Type::I128, hi, lo)
        } else {
            self.c(wide, 1 << (wide.bits() - 1))
        }
    }
}
