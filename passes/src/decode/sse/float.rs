//! Float instructions: the tables of packed (`dst = op.T(dst, src)`, with
//! the packed conversions and shuffles) and scalar (`dst[0] = op.T(dst[0],
//! src)`, with the scalar conversions into XMM) forms, the ordered and
//! unordered compares into flags, and the float to GPR conversions.

use aarchx_ir::{FloatCond, Opcode, Reg, Type, Value};
use iced_x86::Mnemonic;

use super::super::lift::Outcome;
use super::super::operand::L;

/// Opcode, lane shape and aux (a conversion's mode) of a packed float
/// instruction. Compare predicates and shuffle selectors come from imm8.
pub(super) fn packed_op(m: Mnemonic) -> Option<(Opcode, Type, u16)> {
    use Mnemonic as M;
    use Opcode as O;
    use Type as T;
    let (op, ty) = match m {
        M::Addps => (O::Fadd, T::F32X4),
        M::Addpd => (O::Fadd, T::F64X2),
        M::Subps => (O::Fsub, T::F32X4),
        M::Subpd => (O::Fsub, T::F64X2),
        M::Mulps => (O::Fmul, T::F32X4),
        M::Mulpd => (O::Fmul, T::F64X2),
        M::Divps => (O::Fdiv, T::F32X4),
        M::Divpd => (O::Fdiv, T::F64X2),
        M::Sqrtps => (O::Fsqrt, T::F32X4),
        M::Sqrtpd => (O::Fsqrt, T::F64X2),
        M::Minps => (O::Fmin, T::F32X4),
        M::Minpd => (O::Fmin, T::F64X2),
        M::Maxps => (O::Fmax, T::F32X4),
        M::Maxpd => (O::Fmax, T::F64X2),
        M::Cmpps => (O::Fcmp, T::F32X4),
        M::Cmppd => (O::Fcmp, T::F64X2),
        M::Shufps => (O::Shuffle2, T::F32X4),
        M::Shufpd => (O::Shuffle2, T::F64X2),
        M::Cvtdq2ps => (O::SintToF, T::F32X4),
        M::Cvtdq2pd => (O::SintToF, T::F64X2),
        M::Cvtps2pd => (O::Fconvert, T::F64X2),
        M::Cvtpd2ps => (O::Fconvert, T::F32X4),
        // fcvt_to_sint.i32x4 mode: bit 0 rounds, bit 1 takes f64x2.
        M::Roundps => (O::Fround, T::F32X4),
        M::Roundpd => (O::Fround, T::F64X2),
        M::Cvttps2dq => return Some((O::FcvtToSint, T::I32X4, 0)),
        M::Cvtps2dq => return Some((O::FcvtToSint, T::I32X4, 1)),
        M::Cvttpd2dq => return Some((O::FcvtToSint, T::I32X4, 2)),
        M::Cvtpd2dq => return Some((O::FcvtToSint, T::I32X4, 3)),
        _ => return None,
    };
    Some((op, ty, 0))
}

/// Opcode and result type of a scalar instruction writing lane 0 of an
/// XMM register.
pub(super) fn scalar_op(m: Mnemonic) -> Option<(Opcode, Type)> {
    use Mnemonic as M;
    use Opcode as O;
    use Type as T;
    Some(match m {
        M::Addss => (O::Fadd, T::F32),
        M::Addsd => (O::Fadd, T::F64),
        M::Subss => (O::Fsub, T::F32),
        M::Subsd => (O::Fsub, T::F64),
        M::Mulss => (O::Fmul, T::F32),
        M::Mulsd => (O::Fmul, T::F64),
        M::Divss => (O::Fdiv, T::F32),
        M::Divsd => (O::Fdiv, T::F64),
        M::Sqrtss => (O::Fsqrt, T::F32),
        M::Sqrtsd => (O::Fsqrt, T::F64),
        M::Minss => (O::Fmin, T::F32),
        M::Minsd => (O::Fmin, T::F64),
        M::Maxss => (O::Fmax, T::F32),
        M::Maxsd => (O::Fmax, T::F64),
        M::Cmpss => (O::Fcmp, T::F32),
        M::Cmpsd => (O::Fcmp, T::F64),
        M::Cvtsi2ss => (O::SintToF, T::F32),
        M::Cvtsi2sd => (O::SintToF, T::F64),
        M::Cvtsd2ss => (O::Fconvert, T::F32),
        M::Cvtss2sd => (O::Fconvert, T::F64),
        M::Roundss => (O::Fround, T::F32),
        M::Roundsd => (O::Fround, T::F64),
        _ => return None,
    })
}

impl L<'_, '_> {
    /// cmpps/cmpss predicate `p` on `a` and `b` (of `ty`): 0-7 are the
    /// SSE predicates, one `fcmp` each; VEX adds 8-31: 8-15 are the
    /// remaining outcomes (operands swapped, or two compares combined)
    /// and 16-31 repeat 0-15 with the other exception behaviour (quiet
    /// where signalling, signalling where quiet).
    pub(super) fn xfcmp(&mut self, ty: Type, p: u16, a: Value, b: Value) -> Value {
        use FloatCond as C;
        let mask = if ty.lanes() > 1 { Type::V128 } else { Type::I1 };
        let one = |l: &mut Self, c: C, x: Value, y: Value| l.b.fcmp(c, ty, x, y);
        let not = |l: &mut Self, v: Value| l.un(Opcode::Not, mask, v);
        // The condition of predicates 0-15, or its counterpart for 16-31.
        let pick = |low: C, high: C| if p & 16 == 0 { low } else { high };
        match p & 15 {
            0 => one(self, pick(C::Eq, C::EqS), a, b),
            1 => one(self, pick(C::Lt, C::LtQ), a, b),
            2 => one(self, pick(C::Le, C::LeQ), a, b),
            3 => one(self, pick(C::Uno, C::UnoS), a, b),
            5 => one(self, pick(C::Nlt, C::NltQ), a, b),
            6 => one(self, pick(C::Nle, C::NleQ), a, b),
            // neq_uq / neq_us, ord_q / ord_s: quiet ones direct, signalling ones negated.
            4 if p & 16 == 0 => one(self, C::Une, a, b),
            4 => {
                let e = one(self, C::EqS, a, b);
                not(self, e)
            }
            7 if p & 16 == 0 => one(self, C::Ord, a, b),
            7 => {
                let u = one(self, C::UnoS, a, b);
                not(self, u)
            }
            // nge, ngt, ge, gt: nle, nlt, le, lt with the operands swapped.
            9 => one(self, pick(C::Nle, C::NleQ), b, a),
            10 => one(self, pick(C::Nlt, C::NltQ), b, a),
            13 => one(self, pick(C::Le, C::LeQ), b, a),
            14 => one(self, pick(C::Lt, C::LtQ), b, a),
            // eq_uq / eq_us: equal or unordered.
            8 => {
                let (eq, uno) = (pick(C::Eq, C::EqS), pick(C::Uno, C::UnoS));
                let e = one(self, eq, a, b);
                let u = one(self, uno, a, b);
                self.bin(Opcode::Or, mask, e, u)
            }
            // neq_oq / neq_os: ordered and not equal: less or greater.
            12 => {
                let lt = pick(C::LtQ, C::Lt);
                let l = one(self, lt, a, b);
                let g = one(self, lt, b, a);
                self.bin(Opcode::Or, mask, l, g)
            }
            // false / true: a compare for its exceptions, and its result with its negation.
            _ => {
                let e = one(self, pick(C::Eq, C::EqS), a, b);
                let n = not(self, e);
                let op = if p & 15 == 11 { Opcode::And } else { Opcode::Or };
                self.bin(op, mask, e, n)
            }
        }
    }

    /// ucomiss/ucomisd/comiss/comisd: ZF PF CF = 111 unordered, 000
    /// greater, 001 less, 100 equal; OF SF AF cleared. The two differ in
    /// their exceptions: comi signals invalid on any NaN, ucomi only on a
    /// signalling one; each compare of one instruction raises the same
    /// (so any of them left after dead-flag removal raises them all).
    pub(super) fn xucomi(&mut self, ty: Type, signalling: bool) -> Outcome {
        use FloatCond as C;
        let (uno, eq, nle) = if signalling { (C::UnoS, C::EqS, C::Nle) } else { (C::Uno, C::Eq, C::NleQ) };
        let a = self.xlow(0, ty);
        let b = self.xlow(1, ty);
        let unordered = self.b.fcmp(uno, ty, a, b);
        let equal = self.b.fcmp(eq, ty, a, b);
        let zf = self.bin(Opcode::Or, Type::I1, equal, unordered);
        // CF: less or unordered, that is b not <= a.
        let cf = self.b.fcmp(nle, ty, b, a);
        let clear = self.c(Type::I1, 0);
        self.b.set(Reg::ZF, zf);
        self.b.set(Reg::PF, unordered);
        self.b.set(Reg::CF, cf);
        for f in [Reg::OF, Reg::SF, Reg::AF] {
            self.b.set(f, clear);
        }
        Outcome::Next
    }

    /// cvt(t)ss2si, cvt(t)sd2si: a float of type `ty` (lane 0 or memory) to
    /// a 32- or 64-bit GPR, truncated or (`round`) rounded by MXCSR.RC.
    pub(super) fn xcvt_to_int(&mut self, ty: Type, round: bool) -> Outcome {
        let v = self.xlow(1, ty);
        let r = self.b.unary_imm(Opcode::FcvtToSint, self.op_type(0), v, u16::from(round));
        self.write(0, r);
        Outcome::Next
    }
}
