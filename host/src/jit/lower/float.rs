//! Floating point with x86 SSE semantics, scalar (f32, f64) and vector
//! (f32x4, f64x2).
//!
//! For non-NaN results arm64's IEEE arithmetic under the FPCR the entry
//! trampoline sets from MXCSR (its rounding mode; FZ for FTZ with DAZ)
//! gives the x86 result; when a result is NaN, the lanes are rewritten by
//! the x86 rule in [`crate::jit::runtime::fix_nan`] (a slow path, taken
//! only then). Inside a run of [`super::nan_runs`] the ops go unchecked
//! and the run tests FPSR.IOC once at its end. Under
//! [`NanRules::Afp`] (FPCR.AH set) arm64's NaNs are x86's and no op is
//! checked (see [`nan_checked`]). `fmin`/`fmax` select as
//! `minss`/`maxss` do (`a < b ? a : b`, so NaNs and equal zeros give
//! `b`), the selected operand passed through a multiplication by one so
//! that FZ flushes it as DAZ does (under FPCR.AH arm64's `fmin`/`fmax`
//! are exactly that); conversions to integers turn arm's
//! saturation (and NaN's 0) into the integer indefinite, and the ones
//! that round by MXCSR.RC round by FPCR (`frintx`) before a truncating
//! conversion: arm64's rounding conversions name their mode.

use aarchx_ir::{FloatCond, InstData, Opcode, Type, Value};
use dynasmrt::{DynasmApi, DynasmLabelApi};

use super::frame::{Cc, Width, T0, T1, VT0, VT1, VT2};
use super::{a64, Decline, Lowerer, NanRules};
use crate::jit::context::OFF_FIX_NAN;
use crate::jit::runtime::nan_desc;

/// `$op` on scalar registers of the float type `$ty` (f32: S, f64: D).
macro_rules! fp3 {
    ($s:expr, $ty:expr, $op:ident, $d:expr, $a:expr, $b:expr) => {
        if $ty == Type::F32 {
            a64!($s.ops; $op S($d), S($a), S($b))
        } else {
            a64!($s.ops; $op D($d), D($a), D($b))
        }
    };
}

/// `$op` on vector registers of the float shape `$ty` (f32x4: 4S, f64x2: 2D).
macro_rules! vfp3 {
    ($s:expr, $ty:expr, $op:ident, $d:expr, $a:expr, $b:expr) => {
        if $ty.lane_bits() == 32 {
            a64!($s.ops; $op V($d).S4, V($a).S4, V($b).S4)
        } else {
            a64!($s.ops; $op V($d).D2, V($a).D2, V($b).D2)
        }
    };
}

/// The condition that holds after `fcmp a, b` for an SSE predicate
/// (unordered sets C and V, clears N and Z).
fn float_cc(cond: FloatCond) -> Cc {
    use FloatCond as C;
    match cond {
        C::Eq | C::EqS => Cc::Eq,
        C::Lt | C::LtQ => Cc::Mi,
        C::Le | C::LeQ => Cc::Ls,
        C::Uno | C::UnoS => Cc::Vs,
        C::Une => Cc::Ne,
        C::Nlt | C::NltQ => Cc::Pl,
        C::Nle | C::NleQ => Cc::Hi,
        C::Ord => Cc::Vc,
    }
}

fn is_float_vector(ty: Type) -> bool {
    matches!(ty, Type::F32X4 | Type::F64X2)
}

/// Whether `d` is arithmetic whose NaN results need the x86 rule under
/// `rules`: its check follows it, or ends its run (see
/// [`super::nan_runs`]). Under FEAT_AFP none does: with FPCR.AH set,
/// arm64 returns the first NaN operand (for `fma` the first of the two
/// multiplicands and the addend, x86's order), quieted, whether it
/// signals or not, negates no NaN, makes the negative default NaN, and
/// returns a NaN addend of inf * 0 without invalid, all as x86 does.
pub(super) fn nan_checked(d: &InstData, rules: NanRules) -> bool {
    rules == NanRules::Checked
        && matches!(d.op, Opcode::Fadd | Opcode::Fsub | Opcode::Fmul | Opcode::Fdiv | Opcode::Fsqrt | Opcode::Fma)
        && (d.ty.is_float() || is_float_vector(d.ty))
}

impl Lowerer<'_> {
    pub(super) fn float_op(&mut self, v: Value, d: &InstData) -> Result<(), Decline> {
        let ty = d.ty;
        let ok = match d.op {
            Opcode::Fadd | Opcode::Fsub | Opcode::Fmul | Opcode::Fdiv | Opcode::Fsqrt | Opcode::Fmin | Opcode::Fmax => {
                if ty.is_float() {
                    self.scalar_arith(v, d)
                } else if is_float_vector(ty) {
                    self.vector_arith(v, d)
                } else {
                    false
                }
            }
            Opcode::Fcmp => self.fcmp(v, d),
            Opcode::FcvtToSint => self.to_sint(v, d),
            Opcode::SintToF => self.from_sint(v, d),
            Opcode::Fconvert => self.fconvert(v, d),
            Opcode::Fround => self.fround(v, d),
            Opcode::FcvtFromF16 => self.fcvt_from_f16(v, d),
            Opcode::Fma if ty.is_float() => self.scalar_fma(v, d),
            Opcode::Fma if is_float_vector(ty) => self.vector_fma(v, d),
            // Declined (docs/codegen.md): `fcvt_to_f16`, since fcvtn rounds
            // by FPCR only and detects tininess before rounding, x86 after.
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(self.decline(d))
        }
    }

    /// `fround`: frintn, frintm, frintp or frintz by the mode (MXCSR.RC is
    /// nearest whenever translated code runs); a NaN comes out quieted, as
    /// on x86. With the precision exception wanted only nearest is
    /// lowered (frintx, whose IXC is x86's PE); the other modes decline.
    fn fround(&mut self, v: Value, d: &InstData) -> bool {
        let ty = d.ty;
        let mode = if d.aux & 4 != 0 { 0 } else { d.aux & 3 };
        let suppress = d.aux & 8 != 0;
        if (!suppress && mode != 0) || !(ty.is_float() || is_float_vector(ty)) {
            return false;
        }
        let a = self.vsrc(d.arg(0), 0);
        let r = self.vdst(v, 2);
        macro_rules! frint {
            ($op:ident) => {
                match ty {
                    Type::F32 => a64!(self.ops; $op S(r), S(a)),
                    Type::F64 => a64!(self.ops; $op D(r), D(a)),
                    Type::F32X4 => a64!(self.ops; $op V(r).S4, V(a).S4),
                    _ => a64!(self.ops; $op V(r).D2, V(a).D2),
                }
            };
        }
        match (mode, suppress) {
            (0, false) => frint!(frintx),
            (0, true) => frint!(frintn),
            (1, _) => frint!(frintm),
            (2, _) => frint!(frintp),
            _ => frint!(frintz),
        }
        self.vdone(v, r);
        true
    }

    fn scalar_arith(&mut self, v: Value, d: &InstData) -> bool {
        let ty = d.ty;
        let unary = d.op == Opcode::Fsqrt;
        let a = self.vsrc(d.arg(0), 0);
        let b = if unary { a } else { self.vsrc(d.arg(1), 1) };
        let r = self.vdst(v, 2);
        match d.op {
            Opcode::Fadd => fp3!(self, ty, fadd, r, a, b),
            Opcode::Fsub => fp3!(self, ty, fsub, r, a, b),
            Opcode::Fmul => fp3!(self, ty, fmul, r, a, b),
            Opcode::Fdiv => fp3!(self, ty, fdiv, r, a, b),
            Opcode::Fsqrt if ty == Type::F32 => a64!(self.ops; fsqrt S(r), S(a)),
            Opcode::Fsqrt => a64!(self.ops; fsqrt D(r), D(a)),
            // Under FPCR.AH fmin/fmax are minss/maxss: the second operand
            // unchanged for a NaN (invalid for a quiet one too) or two
            // zeros, an operand flushed by FIZ as DAZ reads it.
            Opcode::Fmin if self.nan_rules == NanRules::Afp => fp3!(self, ty, fmin, r, a, b),
            Opcode::Fmax if self.nan_rules == NanRules::Afp => fp3!(self, ty, fmax, r, a, b),
            // a < b ? a : b (mi: less, false when unordered); a > b ? a : b.
            // fcmpe: invalid on any NaN operand, as minss/maxss.
            Opcode::Fmin if ty == Type::F32 => a64!(self.ops; fcmpe S(a), S(b); fcsel S(r), S(a), S(b), mi),
            Opcode::Fmin => a64!(self.ops; fcmpe D(a), D(b); fcsel D(r), D(a), D(b), mi),
            Opcode::Fmax if ty == Type::F32 => a64!(self.ops; fcmpe S(a), S(b); fcsel S(r), S(a), S(b), gt),
            Opcode::Fmax => a64!(self.ops; fcmpe D(a), D(b); fcsel D(r), D(a), D(b), gt),
            _ => return false,
        }
        if matches!(d.op, Opcode::Fmin | Opcode::Fmax) && self.nan_rules == NanRules::Checked {
            // The selected operand times one: itself, but flushed under FZ
            // (DAZ gives the operand read as zero, also the second one
            // returned for a NaN first); a NaN is returned as it is.
            if ty == Type::F32 {
                a64!(self.ops
                    ; fmov S(VT0), #1.0
                    ; fmul S(VT0), S(r), S(VT0)
                    ; fcmp S(r), S(r)
                    ; fcsel S(r), S(VT0), S(r), vc
                );
            } else {
                a64!(self.ops
                    ; fmov D(VT0), #1.0
                    ; fmul D(VT0), D(r), D(VT0)
                    ; fcmp D(r), D(r)
                    ; fcsel D(r), D(VT0), D(r), vc
                );
            }
        }
        if nan_checked(d, self.nan_rules) && !self.batched {
            if ty == Type::F32 {
                a64!(self.ops; fcmp S(r), S(r); b.vc >ok);
            } else {
                a64!(self.ops; fcmp D(r), D(r); b.vc >ok);
            }
            self.nan_fixup(ty.bits(), 1, &[a, b][..if unary { 1 } else { 2 }], r);
            a64!(self.ops; ok:);
        }
        self.vdone(v, r);
        true
    }

    fn vector_arith(&mut self, v: Value, d: &InstData) -> bool {
        let ty = d.ty;
        let unary = d.op == Opcode::Fsqrt;
        let a = self.vsrc(d.arg(0), 0);
        let b = if unary { a } else { self.vsrc(d.arg(1), 1) };
        let r = self.vdst(v, 2);
        match d.op {
            Opcode::Fadd => vfp3!(self, ty, fadd, r, a, b),
            Opcode::Fsub => vfp3!(self, ty, fsub, r, a, b),
            Opcode::Fmul => vfp3!(self, ty, fmul, r, a, b),
            Opcode::Fdiv => vfp3!(self, ty, fdiv, r, a, b),
            Opcode::Fsqrt if ty.lane_bits() == 32 => a64!(self.ops; fsqrt V(r).S4, V(a).S4),
            Opcode::Fsqrt => a64!(self.ops; fsqrt V(r).D2, V(a).D2),
            // As for scalars: minps/maxps under FPCR.AH.
            Opcode::Fmin if self.nan_rules == NanRules::Afp => vfp3!(self, ty, fmin, r, a, b),
            Opcode::Fmax if self.nan_rules == NanRules::Afp => vfp3!(self, ty, fmax, r, a, b),
            Opcode::Fmin => {
                // Lanes where b > a (a < b, false on NaN) take a.
                vfp3!(self, ty, fcmgt, r, b, a);
                a64!(self.ops; bsl V(r).B16, V(a).B16, V(b).B16);
            }
            Opcode::Fmax => {
                vfp3!(self, ty, fcmgt, r, a, b);
                a64!(self.ops; bsl V(r).B16, V(a).B16, V(b).B16);
            }
            _ => return false,
        }
        if matches!(d.op, Opcode::Fmin | Opcode::Fmax) && self.nan_rules == NanRules::Checked {
            // As for scalars: the lanes that are not NaN times one.
            if ty.lane_bits() == 32 {
                a64!(self.ops; fmov V(VT0).S4, #1.0);
            } else {
                a64!(self.ops; fmov V(VT0).D2, #1.0);
            }
            vfp3!(self, ty, fmul, VT0, r, VT0);
            vfp3!(self, ty, fcmeq, VT1, r, r);
            a64!(self.ops; bit V(r).B16, V(VT0).B16, V(VT1).B16);
        }
        if nan_checked(d, self.nan_rules) && !self.batched {
            // Any NaN lane: a zero lane where the result is not equal to
            // itself, so the smallest 32-bit piece is zero (a 64-bit lane's
            // mask is two equal pieces).
            vfp3!(self, ty, fcmeq, VT0, r, r);
            a64!(self.ops
                ; uminv S(VT0), V(VT0).S4
                ; fmov W(T0), S(VT0)
                ; cbnz W(T0), >ok
            );
            self.nan_fixup(ty.lane_bits(), ty.lanes(), &[a, b][..if unary { 1 } else { 2 }], r);
            a64!(self.ops; ok:);
        }
        self.vdone(v, r);
        true
    }

    /// Scalar `fma`: when no operand is a NaN (fcmp + fccmp), the one
    /// fused arm64 op (fmadd a + n*m, fmsub a - n*m, fnmsub -a + n*m,
    /// fnmadd -a - n*m, the addend in the role of arm's `a`); else,
    /// before it, operands chosen as in [`Lowerer::vector_fma`] by fcmp +
    /// fcsel, and fmadd or fmsub on the addend fneg'd unless it is a NaN.
    fn scalar_fma(&mut self, v: Value, d: &InstData) -> bool {
        let ty = d.ty;
        let (a, b, c) = (self.vsrc(d.arg(0), 0), self.vsrc(d.arg(1), 1), self.vsrc(d.arg(2), 2));
        let r = self.vdst(v, VT0);
        let (negate_product, negate_addend) = (d.aux & 1 != 0, d.aux & 2 != 0);
        macro_rules! fused {
            ($R:ident) => {
                match (negate_product, negate_addend) {
                    (false, false) => a64!(self.ops; fmadd $R(r), $R(a), $R(b), $R(c)),
                    (true, false) => a64!(self.ops; fmsub $R(r), $R(a), $R(b), $R(c)),
                    (false, true) => a64!(self.ops; fnmsub $R(r), $R(a), $R(b), $R(c)),
                    (true, true) => a64!(self.ops; fnmadd $R(r), $R(a), $R(b), $R(c)),
                }
            };
        }
        macro_rules! choose {
            ($R:ident) => {{
                // V: a, b or c is a NaN (fccmp sets V when a, b are unordered).
                a64!(self.ops
                    ; fcmp $R(a), $R(b)
                    ; fccmp $R(c), $R(c), #1, vc
                    ; b.vc >numbers
                );
                // VT1 = a, or the addend where it is a NaN and a is not; r =
                // the addend (negated unless it is a NaN), or b where b is a
                // NaN, or a where a is.
                a64!(self.ops
                    ; fcmp $R(a), $R(a)
                    ; fcsel $R(VT1), $R(a), $R(c), vs
                    ; fcmp $R(c), $R(c)
                    ; fcsel $R(VT1), $R(VT1), $R(a), vs
                );
                if negate_addend {
                    a64!(self.ops; fneg $R(r), $R(c); fcsel $R(r), $R(c), $R(r), vs);
                } else {
                    a64!(self.ops; fmov $R(r), $R(c));
                }
                a64!(self.ops
                    ; fcmp $R(b), $R(b)
                    ; fcsel $R(r), $R(b), $R(r), vs
                    ; fcmp $R(a), $R(a)
                    ; fcsel $R(r), $R(a), $R(r), vs
                );
                if negate_product {
                    a64!(self.ops; fmsub $R(r), $R(VT1), $R(b), $R(r));
                } else {
                    a64!(self.ops; fmadd $R(r), $R(VT1), $R(b), $R(r));
                }
                a64!(self.ops; b >fused; numbers:);
                fused!($R);
                a64!(self.ops; fused:);
            }};
        }
        match (self.nan_rules, ty == Type::F32) {
            // FPCR.AH: the first NaN of a, b and the addend, quieted, no
            // NaN negated: x86's NaN (see `nan_checked`).
            (NanRules::Afp, true) => fused!(S),
            (NanRules::Afp, false) => fused!(D),
            (NanRules::Checked, true) => choose!(S),
            (NanRules::Checked, false) => choose!(D),
        }
        if nan_checked(d, self.nan_rules) && !self.batched {
            if ty == Type::F32 {
                a64!(self.ops; fcmp S(r), S(r); b.vc >ok);
            } else {
                a64!(self.ops; fcmp D(r), D(r); b.vc >ok);
            }
            self.nan_fixup(ty.bits(), 1, &[a, b, c], r);
            a64!(self.ops; ok:);
        }
        self.vdone(v, r);
        true
    }

    /// Vector `fma`: the addend negated as the op's aux says (fneg, or
    /// fneg of the even or odd lanes selected by a lane mask), then one
    /// fmla, or fmls for a negated product. The rounding is x86's; the
    /// NaNs are not by themselves: arm64 takes the first signalling NaN,
    /// then the first quiet one, in the order addend, a, b, and negates
    /// NaN operands, where x86 takes the first NaN of a, b, c; and it
    /// raises invalid for inf * 0 + QNaN, x86 does not. So the operands
    /// are chosen per lane (fcmeq masks, bif, bit): the addend is a where
    /// a is a NaN, else b where b is, else the addend (so a result from
    /// quiet NaNs is x86's; a NaN addend is never negated); a is the
    /// addend where the addend is a NaN and a is not (no infinity is
    /// multiplied then). That choice is made only when some lane of an
    /// operand is a NaN (fmax, fmaxv, fcmp); else the fused op alone. What
    /// is left differs only with IOC raised, exactly when x86 raises
    /// invalid (a signalling NaN, or an invalid op on numbers), so `fma`
    /// goes in the runs of [`super::nan_runs`] like the other arithmetic.
    fn vector_fma(&mut self, v: Value, d: &InstData) -> bool {
        let ty = d.ty;
        let (a, b, c) = (self.vsrc(d.arg(0), 0), self.vsrc(d.arg(1), 1), self.vsrc(d.arg(2), 2));
        let r = self.vdst(v, VT0);
        if self.nan_rules == NanRules::Afp {
            // FPCR.AH: the first NaN of a, b and the addend, quieted, and
            // fmla/fmls negate no NaN: x86's NaN (see `nan_checked`). A
            // NaN addend is put back after a negation: the vector fneg
            // flips a NaN's sign even under FPCR.AH (QEMU 10 does).
            self.fma_addend(ty, d.aux, r, c);
            if d.aux & 6 != 0 {
                vfp3!(self, ty, fcmeq, VT2, c, c);
                a64!(self.ops; bif V(r).B16, V(c).B16, V(VT2).B16);
            }
            self.fma_product(ty, d.aux, r, a, b);
            self.vdone(v, r);
            return true;
        }
        // V: a lane of a, b or c is a NaN (fmax keeps a NaN, raising
        // invalid only for a signalling one, which x86 raises too).
        vfp3!(self, ty, fmax, VT1, a, b);
        vfp3!(self, ty, fmax, VT1, VT1, c);
        if ty.lane_bits() == 32 {
            a64!(self.ops; fmaxv S(VT1), V(VT1).S4; fcmp S(VT1), S(VT1));
        } else {
            a64!(self.ops; fmaxp D(VT1), V(VT1).D2; fcmp D(VT1), D(VT1));
        }
        a64!(self.ops; b.vc >numbers);
        self.fma_addend(ty, d.aux, r, c);
        // A NaN addend is not negated.
        vfp3!(self, ty, fcmeq, VT2, c, c);
        if d.aux & 6 != 0 {
            a64!(self.ops; bif V(r).B16, V(c).B16, V(VT2).B16);
        }
        vfp3!(self, ty, fcmeq, VT1, b, b);
        a64!(self.ops; bif V(r).B16, V(b).B16, V(VT1).B16);
        vfp3!(self, ty, fcmeq, VT1, a, a);
        a64!(self.ops
            ; bif V(r).B16, V(a).B16, V(VT1).B16
            ; bic V(VT2).B16, V(VT1).B16, V(VT2).B16
            ; mov V(VT1).B16, V(a).B16
            ; bit V(VT1).B16, V(c).B16, V(VT2).B16
        );
        self.fma_product(ty, d.aux, r, VT1, b);
        a64!(self.ops; b >fused; numbers:);
        self.fma_addend(ty, d.aux, r, c);
        self.fma_product(ty, d.aux, r, a, b);
        a64!(self.ops; fused:);
        if nan_checked(d, self.nan_rules) && !self.batched {
            vfp3!(self, ty, fcmeq, VT1, r, r);
            a64!(self.ops
                ; uminv S(VT1), V(VT1).S4
                ; fmov W(T0), S(VT1)
                ; cbnz W(T0), >ok
            );
            self.nan_fixup(ty.lane_bits(), ty.lanes(), &[a, b, c], r);
            a64!(self.ops; ok:);
        }
        self.vdone(v, r);
        true
    }

    /// `V(r)` = the addend `V(c)` of a vector `fma` with negations `aux`:
    /// negated (fneg), or negated in the even or odd lanes only.
    fn fma_addend(&mut self, ty: Type, aux: u16, r: u8, c: u8) {
        a64!(self.ops; mov V(r).B16, V(c).B16);
        match aux & 6 {
            0 => {}
            6 => self.vfneg(ty, r, r),
            even_or_odd => {
                // The even lanes: the low half of each 64-bit piece for
                // f32x4, lane 0 for f64x2; the odd ones the rest.
                self.vfneg(ty, VT1, r);
                match (ty.lane_bits() == 32, even_or_odd == 2) {
                    (true, true) => a64!(self.ops; movi V(VT2).D2, #0x0000_0000_ffff_ffff),
                    (true, false) => a64!(self.ops; movi V(VT2).D2, #0xffff_ffff_0000_0000),
                    (false, true) => a64!(self.ops; movi D(VT2), #0xffff_ffff_ffff_ffff),
                    (false, false) => a64!(self.ops; movi D(VT2), #0xffff_ffff_ffff_ffff; mvn V(VT2).B16, V(VT2).B16),
                }
                a64!(self.ops; bit V(r).B16, V(VT1).B16, V(VT2).B16);
            }
        }
    }

    /// `V(r) += V(x) * V(y)` (fmla), or `-=` (fmls) when `aux` negates the
    /// product.
    fn fma_product(&mut self, ty: Type, aux: u16, r: u8, x: u8, y: u8) {
        if aux & 1 != 0 {
            vfp3!(self, ty, fmls, r, x, y);
        } else {
            vfp3!(self, ty, fmla, r, x, y);
        }
    }

    /// `V(dst) = -V(src)` lane-wise, for the float shape `ty`.
    fn vfneg(&mut self, ty: Type, dst: u8, src: u8) {
        if ty.lane_bits() == 32 {
            a64!(self.ops; fneg V(dst).S4, V(src).S4);
        } else {
            a64!(self.ops; fneg V(dst).D2, V(src).D2);
        }
    }

    /// Calls the NaN fix-up on the result in `V(r)`, computed by `d` from
    /// the operands in `V(operands[..])` (one to three): they go to a
    /// scratch area below the frame, 16 bytes apart and the result after
    /// them, the fix-up rewrites the result there and it comes back to its
    /// register.
    fn nan_fixup(&mut self, lane_bits: u32, lanes: u32, operands: &[u8], r: u8) {
        let count = operands.len() as u32;
        let desc = nan_desc(lane_bits, lanes, count);
        let (low, high) = (desc & 0xffff, desc >> 16);
        let (area, at_r) = ((count + 1) * 16, count * 16);
        a64!(self.ops; sub sp, sp, #area);
        for (k, &o) in operands.iter().enumerate() {
            let at = k as u32 * 16;
            a64!(self.ops; str Q(o), [sp, #at]);
        }
        a64!(self.ops
            ; str Q(r), [sp, #at_r]
            ; movz W(0), #low
            ; movk W(0), #high, lsl #16
            ; add x1, sp, #0
            ; add x2, sp, #at_r
        );
        self.call_ctx(OFF_FIX_NAN);
        a64!(self.ops
            ; ldr Q(r), [sp, #at_r]
            ; add sp, sp, #area
        );
    }

    /// Sets the flags for scalar `fcmp.ty cond a, b` and returns the
    /// condition that means true. `fcmpe` signals invalid (FPSR.IOC) on a
    /// quiet NaN as the signalling predicates do, `fcmp` only on a
    /// signalling NaN.
    pub fn float_compare(&mut self, cond: FloatCond, ty: Type, a: Value, b: Value) -> Cc {
        let a = self.vsrc(a, 0);
        let b = self.vsrc(b, 1);
        match (ty == Type::F32, cond.signals_on_qnan()) {
            (true, false) => a64!(self.ops; fcmp S(a), S(b)),
            (true, true) => a64!(self.ops; fcmpe S(a), S(b)),
            (false, false) => a64!(self.ops; fcmp D(a), D(b)),
            (false, true) => a64!(self.ops; fcmpe D(a), D(b)),
        }
        float_cc(cond)
    }

    fn fcmp(&mut self, v: Value, d: &InstData) -> bool {
        let ty = d.ty;
        let Some(cond) = FloatCond::from_u16(d.aux) else { return false };
        if ty.is_float() {
            let cc = self.float_compare(cond, ty, d.arg(0), d.arg(1));
            let r = self.xdst(v, 3);
            self.cset(r, cc);
            self.xdone(v, r);
            return true;
        }
        if !is_float_vector(ty) {
            return false;
        }
        self.ldq(0, d.arg(0));
        self.ldq(1, d.arg(1));
        // Lane masks; the negated predicates are their complements. fcmeq
        // is quiet, fcmgt and fcmge signal on any NaN, as cmpps's eq and
        // lt/le do. The quiet lt/le compare the operands with their NaN
        // lanes cleared (no exception there) and clear those lanes of the
        // result; the signalling eq is a >= b and b >= a, the signalling
        // uno the complement of a >= b or b > a.
        use FloatCond as C;
        let negate = matches!(cond, C::Une | C::Nlt | C::Nle | C::Uno | C::NltQ | C::NleQ | C::UnoS);
        match cond {
            C::Eq | C::Une => vfp3!(self, ty, fcmeq, 3, 0, 1),
            C::Lt | C::Nlt => vfp3!(self, ty, fcmgt, 3, 1, 0),
            C::Le | C::Nle => vfp3!(self, ty, fcmge, 3, 1, 0),
            C::Ord | C::Uno => {
                vfp3!(self, ty, fcmeq, VT0, 0, 0);
                vfp3!(self, ty, fcmeq, VT1, 1, 1);
                a64!(self.ops; and V(3).B16, V(VT0).B16, V(VT1).B16);
            }
            C::LtQ | C::NltQ | C::LeQ | C::NleQ => {
                vfp3!(self, ty, fcmeq, VT0, 0, 0);
                vfp3!(self, ty, fcmeq, VT1, 1, 1);
                a64!(self.ops
                    ; and V(VT0).B16, V(VT0).B16, V(VT1).B16
                    ; and V(VT1).B16, V(1).B16, V(VT0).B16
                    ; and V(3).B16, V(0).B16, V(VT0).B16
                );
                if matches!(cond, C::LtQ | C::NltQ) {
                    vfp3!(self, ty, fcmgt, 3, VT1, 3);
                } else {
                    vfp3!(self, ty, fcmge, 3, VT1, 3);
                }
                a64!(self.ops; and V(3).B16, V(3).B16, V(VT0).B16);
            }
            C::EqS => {
                vfp3!(self, ty, fcmge, VT0, 0, 1);
                vfp3!(self, ty, fcmge, VT1, 1, 0);
                a64!(self.ops; and V(3).B16, V(VT0).B16, V(VT1).B16);
            }
            C::UnoS => {
                vfp3!(self, ty, fcmge, VT0, 0, 1);
                vfp3!(self, ty, fcmgt, VT1, 1, 0);
                a64!(self.ops; orr V(3).B16, V(VT0).B16, V(VT1).B16);
            }
        }
        if negate {
            a64!(self.ops; mvn V(3).B16, V(3).B16);
        }
        self.stq(3, v);
        true
    }

    /// `fcvt_to_sint`: NaN and out-of-range give the integer indefinite.
    fn to_sint(&mut self, v: Value, d: &InstData) -> bool {
        let ty = d.ty;
        let src = self.ty_of(d.arg(0));
        let round = d.aux & 1 != 0;
        if ty == Type::I32X4 {
            return self.to_sint_vector(v, d, d.aux & 2 != 0, round);
        }
        if !matches!(ty, Type::I32 | Type::I64) || !src.is_float() {
            return false;
        }
        let w = Width::fp(src);
        self.load(w, 0, d.arg(0));
        if ty == Type::I32 {
            self.to_i32(src == Type::F32, round);
            self.stx(3, v);
            return true;
        }
        // Convert to 64 bits (saturating): high saturation gives i64::MAX,
        // never a valid result from a float (low saturation is i64::MIN,
        // the indefinite already); NaN converts to 0.
        // Rounding by FPCR: `frintx` raises IXC when inexact, which a float
        // beyond 2^52 never is, so only conversions in range do (as x86's
        // PE); the truncation of the integral value raises IOC when out of
        // range.
        match (src == Type::F32, round) {
            (true, false) => a64!(self.ops; fcvtzs X(3), S(0)),
            (true, true) => a64!(self.ops; frintx S(VT1), S(0); fcvtzs X(3), S(VT1)),
            (false, false) => a64!(self.ops; fcvtzs X(3), D(0)),
            (false, true) => a64!(self.ops; frintx D(VT1), D(0); fcvtzs X(3), D(VT1)),
        }
        self.mov64(T0, 1 << 63);
        a64!(self.ops
            ; sub XSP(T1), XSP(T0), #1
            ; cmp X(3), X(T1)
            ; csel X(3), X(T0), X(3), eq
        );
        if src == Type::F32 {
            a64!(self.ops; fcmp S(0), S(0));
        } else {
            a64!(self.ops; fcmp D(0), D(0));
        }
        a64!(self.ops; csel X(3), X(T0), X(3), vs);
        self.stx(3, v);
        true
    }

    /// `fcvt_to_sint.i32` of the float in `S(0)`/`D(0)` into `X(3)`, by a
    /// 32-bit conversion, so FPSR gets what x86 raises: IOC for NaN and
    /// out of range (IE), else IXC when inexact (PE). High saturation
    /// (0x7fffffff) is a valid result only below the first value that
    /// converts to 2^31: from there on, and for NaN (unordered), the
    /// indefinite (low saturation is the indefinite already). Rounding
    /// goes by FPCR: `frintx` first (IXC when inexact), then the exact
    /// truncation; a double may be inexact and out of range, where x86
    /// raises IE alone, so it is rounded without IXC (`frinti`), and
    /// `frintx` runs again only when the conversion was valid (the result
    /// converts back to the rounded value).
    fn to_i32(&mut self, from_f32: bool, round: bool) {
        if !from_f32 && round {
            a64!(self.ops
                ; frinti D(VT1), D(0)
                ; fcvtzs W(3), D(VT1)
                ; scvtf D(VT0), W(3)
                ; fcmp D(VT0), D(VT1)
                ; b.eq >valid
                ; movz X(3), #0x8000, lsl #16
                ; b >done
                ; valid:
                ; frintx D(VT1), D(0)
                ; done:
            );
            return;
        }
        let limit: u64 = if from_f32 { 0x4f00_0000 } else { 0x41e0_0000_0000_0000 }; // 2^31
        self.mov64(T1, limit);
        match (from_f32, round) {
            (true, false) => a64!(self.ops; fcvtzs W(3), S(0); fmov S(VT0), W(T1); fcmp S(0), S(VT0)),
            (true, true) => a64!(self.ops
                ; frintx S(VT1), S(0)
                ; fcvtzs W(3), S(VT1)
                ; fmov S(VT0), W(T1)
                ; fcmp S(VT1), S(VT0)
            ),
            (false, _) => a64!(self.ops; fcvtzs W(3), D(0); fmov D(VT0), X(T1); fcmp D(0), D(VT0)),
        }
        a64!(self.ops
            ; movz X(T0), #0x8000, lsl #16
            ; csel X(3), X(T0), X(3), pl
        );
    }

    /// `fcvt_to_sint.i32x4`: from f32x4 (four lanes) or f64x2 (two lanes,
    /// upper lanes zero).
    fn to_sint_vector(&mut self, v: Value, d: &InstData, from_f64: bool, round: bool) -> bool {
        self.ldq(0, d.arg(0));
        if !from_f64 {
            if round {
                // By FPCR, as the scalar conversion from f32.
                a64!(self.ops; frintx V(1).S4, V(0).S4; fcvtzs V(2).S4, V(1).S4);
            } else {
                a64!(self.ops; fcvtzs V(2).S4, V(0).S4);
            }
            // Bad lanes: NaN, or saturated high (0x7fffffff is never a
            // valid result from an f32; low saturation is the indefinite).
            a64!(self.ops
                ; fcmeq V(VT0).S4, V(0).S4, V(0).S4
                ; mvni V(VT1).S4, #0x80, lsl #24
                ; cmeq V(VT2).S4, V(2).S4, V(VT1).S4
                ; orn V(VT2).B16, V(VT2).B16, V(VT0).B16
                ; movi V(VT1).S4, #0x80, lsl #24
                ; bsl V(VT2).B16, V(VT1).B16, V(2).B16
            );
            self.stq(VT2, v);
        } else {
            // Lane by lane through the scalar 32-bit conversion, whose
            // flags are x86's (a 64-bit one would miss IE for lanes out of
            // the 32-bit range); `fmov` clears the upper lanes.
            self.to_i32(false, round);
            a64!(self.ops
                ; fmov S(2), W(3)
                ; mov V(0).D[0], V(0).D[1]
            );
            self.to_i32(false, round);
            a64!(self.ops; mov V(2).S[1], W(3));
            self.stq(2, v);
        }
        true
    }

    /// `sint_to_f`: scalar from a signed integer of any width up to 64;
    /// vector from i32 lanes.
    fn from_sint(&mut self, v: Value, d: &InstData) -> bool {
        let ty = d.ty;
        let src = self.ty_of(d.arg(0));
        if ty.is_float() {
            if !src.is_int() || src.bits() > 64 {
                return false;
            }
            // 32- and 64-bit operands convert straight from their register.
            let mut x = self.xsrc(d.arg(0), T0);
            if src.bits() < 32 {
                if x != T0 {
                    a64!(self.ops; mov X(T0), X(x));
                    x = T0;
                }
                self.sext(x, src.bits());
            }
            let r = self.vdst(v, 2);
            match (ty == Type::F32, src.bits() == 64) {
                (true, true) => a64!(self.ops; scvtf S(r), X(x)),
                (true, false) => a64!(self.ops; scvtf S(r), W(x)),
                (false, true) => a64!(self.ops; scvtf D(r), X(x)),
                (false, false) => a64!(self.ops; scvtf D(r), W(x)),
            }
            self.vdone(v, r);
            return true;
        }
        self.ldq(0, d.arg(0));
        match ty {
            Type::F32X4 => a64!(self.ops; scvtf V(2).S4, V(0).S4),
            Type::F64X2 => a64!(self.ops
                ; sxtl V(1).D2, V(0).S2
                ; scvtf V(2).D2, V(1).D2
            ),
            _ => return false,
        }
        self.stq(2, v);
        true
    }

    /// `fconvert`: f32 <-> f64; arm64 converts NaNs as x86 does (quieted,
    /// sign and top payload bits kept).
    fn fconvert(&mut self, v: Value, d: &InstData) -> bool {
        let src = self.ty_of(d.arg(0));
        match (d.ty, src) {
            (Type::F64, Type::F32) => {
                self.load(Width::S, 0, d.arg(0));
                a64!(self.ops; fcvt D(2), S(0));
                self.store(Width::D, 2, v);
            }
            (Type::F32, Type::F64) => {
                self.load(Width::D, 0, d.arg(0));
                a64!(self.ops; fcvt S(2), D(0));
                self.store(Width::S, 2, v);
            }
            (Type::F64X2, s) if s.is_vector() => {
                self.ldq(0, d.arg(0));
                a64!(self.ops; fcvtl V(2).D2, V(0).S2);
                self.stq(2, v);
            }
            (Type::F32X4, s) if s.is_vector() => {
                self.ldq(0, d.arg(0));
                a64!(self.ops; fcvtn V(2).S2, V(0).D2);
                self.stq(2, v);
            }
            _ => return false,
        }
        true
    }

    /// `fcvt_from_f16`: `fcvtl` from four halves, exact as on x86: a
    /// denormal half converts exactly (FZ does not flush halves, FZ16 is
    /// clear), a NaN keeps its sign and payload and is quieted, raising
    /// IOC (IE) when signalling; nothing else raises a flag.
    fn fcvt_from_f16(&mut self, v: Value, d: &InstData) -> bool {
        let a = self.vsrc(d.arg(0), 0);
        let r = self.vdst(v, 2);
        a64!(self.ops; fcvtl V(r).S4, V(a).H4);
        self.vdone(v, r);
        true
    }
}
