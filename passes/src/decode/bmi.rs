//! x86-64-v3's scalar integer instructions: BMI1 (andn, bextr, blsi,
//! blsmsk, blsr; tzcnt is with bsf in `alu`), BMI2 (bzhi, mulx, pdep,
//! pext, rorx, sarx, shlx, shrx) and movbe. The VEX forms' operands are
//! numbered as the decoder gives them: the destination first, then
//! VEX.vvvv or ModRM.rm in the encoding's order.

use aarchx_ir::{IntCond, Opcode, Reg, Type, Value};
use iced_x86::{Mnemonic, Register};

use super::lift::Outcome;
use super::operand::L;

impl L<'_, '_> {
    /// Lifts a BMI1, BMI2 or movbe instruction.
    pub fn bmi(&mut self, m: Mnemonic) -> Outcome {
        use Mnemonic as M;
        let ty = self.op_type(0);
        match m {
            M::Andn => {
                // ~src1 & src2.
                let (a, b) = (self.read(1, ty), self.read(2, ty));
                let r = self.bin(Opcode::AndNot, ty, b, a);
                self.write(0, r);
                let f = self.c(Type::I1, 0);
                self.bmi_flags(ty, r, f);
            }
            M::Bextr => {
                // Bits start.. of src, len of them (control bits 7:0 and
                // 15:8); a start past the width gives 0.
                let (src, control) = (self.read(1, ty), self.read(2, ty));
                let start = self.un(Opcode::Trunc, Type::I8, control);
                let eight = self.c(Type::I8, 8);
                let len = self.bin(Opcode::Lshr, ty, control, eight);
                let len = self.un(Opcode::Trunc, Type::I8, len);
                let shifted = self.bin(Opcode::Lshr, ty, src, start);
                let r = self.low_bits(ty, shifted, len);
                self.write(0, r);
                let f = self.c(Type::I1, 0);
                self.bmi_flags(ty, r, f);
            }
            M::Blsi | M::Blsmsk | M::Blsr => {
                let src = self.read(1, ty);
                let zero = self.c(ty, 0);
                let one = self.c(ty, 1);
                let r = match m {
                    M::Blsi => {
                        let neg = self.bin(Opcode::Sub, ty, zero, src);
                        self.bin(Opcode::And, ty, neg, src)
                    }
                    _ => {
                        let less = self.bin(Opcode::Sub, ty, src, one);
                        self.bin(if m == M::Blsmsk { Opcode::Xor } else { Opcode::And }, ty, less, src)
                    }
                };
                self.write(0, r);
                // blsi: CF when the source is not zero; the others when it is.
                let cond = if m == M::Blsi { IntCond::Ne } else { IntCond::Eq };
                let cf = self.icmp(cond, ty, src, zero);
                self.bmi_flags(ty, r, cf);
                if m == M::Blsmsk {
                    let f = self.c(Type::I1, 0);
                    self.b.set(Reg::ZF, f);
                }
            }
            M::Bzhi => {
                // src with the bits from index (control bits 7:0) up cleared;
                // CF when the index is past the last bit.
                let (src, control) = (self.read(1, ty), self.read(2, ty));
                let n = self.un(Opcode::Trunc, Type::I8, control);
                let r = self.low_bits(ty, src, n);
                self.write(0, r);
                let last = self.c(Type::I8, u64::from(ty.bits() - 1));
                let cf = self.icmp(IntCond::Ugt, Type::I8, n, last);
                self.bmi_flags(ty, r, cf);
            }
            M::Mulx => {
                // rdx * src, unsigned: the low half to the second operand,
                // then the high half to the first (which wins if they are
                // the same register).
                let d = self.gpr_get(if ty == Type::I64 { Register::RDX } else { Register::EDX });
                let src = self.read(2, ty);
                let lo = self.bin(Opcode::Mul, ty, d, src);
                let hi = self.bin(Opcode::Umulh, ty, d, src);
                self.write(1, lo);
                self.write(0, hi);
            }
            M::Pdep | M::Pext => {
                let (src, mask) = (self.read(1, ty), self.read(2, ty));
                let r = self.bin(if m == M::Pdep { Opcode::Pdep } else { Opcode::Pext }, ty, src, mask);
                self.write(0, r);
            }
            M::Rorx => {
                let n = u64::from(self.i.immediate8()) & u64::from(ty.bits() - 1);
                let src = self.read(1, ty);
                let n = self.c(Type::I8, n);
                let r = self.bin(Opcode::Rotr, ty, src, n);
                self.write(0, r);
            }
            M::Sarx | M::Shlx | M::Shrx => {
                let (src, count) = (self.read(1, ty), self.read(2, ty));
                let width = self.c(ty, u64::from(ty.bits() - 1));
                let count = self.bin(Opcode::And, ty, count, width);
                let count = self.un(Opcode::Trunc, Type::I8, count);
                let op = match m {
                    M::Sarx => Opcode::Ashr,
                    M::Shlx => Opcode::Shl,
                    _ => Opcode::Lshr,
                };
                let r = self.bin(op, ty, src, count);
                self.write(0, r);
            }
            M::Movbe => {
                let x = self.read(1, ty);
                let r = self.un(Opcode::Bswap, ty, x);
                self.write(0, r);
            }
            _ => return Outcome::Unsupported,
        }
        Outcome::Next
    }

    /// The low `n` bits of `x` (all of them when `n` is the width or
    /// more): `x & ((1 << n) - 1)`, a shift by the width or more giving 0.
    fn low_bits(&mut self, ty: Type, x: Value, n: Value) -> Value {
        let one = self.c(ty, 1);
        let bit = self.bin(Opcode::Shl, ty, one, n);
        let mask = self.bin(Opcode::Sub, ty, bit, one);
        self.bin(Opcode::And, ty, x, mask)
    }

    /// The flags of andn, bextr, blsi, blsmsk, blsr and bzhi: ZF and SF
    /// from the result, CF as given, OF cleared; AF and PF are undefined
    /// (cleared here; the oracle does not compare them), and so is SF
    /// for bextr.
    fn bmi_flags(&mut self, ty: Type, r: Value, cf: Value) {
        let zero = self.c(ty, 0);
        let zf = self.icmp(IntCond::Eq, ty, r, zero);
        let sf = self.icmp(IntCond::Slt, ty, r, zero);
        let f = self.c(Type::I1, 0);
        self.b.set(Reg::ZF, zf);
        self.b.set(Reg::SF, sf);
        self.b.set(Reg::CF, cf);
        self.b.set(Reg::OF, f);
        self.b.set(Reg::AF, f);
        self.b.set(Reg::PF, f);
    }
}
