//! Floating-point ops with x86 SSE semantics, independent of the host's NaN
//! behaviour: arithmetic with x86 NaN propagation, minimum and maximum,
//! comparison, and the float/integer and float/float conversions (scalar
//! and vector forms). Rounding is to nearest even; MXCSR rounding control
//! and exception flags are not modelled.
//!
//! For non-NaN operands the host's IEEE operations give the exact x86
//! result; every NaN produced is chosen here from the operands' bits.

use core::cmp::Ordering;
use core::ops::{Add, Div, Mul, Sub};

use aarchx_ir::{FloatCond, Opcode, Type};

use super::lanes::{from_lanes, lane, mask, sext};

/// A host float the arithmetic is computed in, seen through its raw bits.
trait Ieee: Copy + PartialOrd + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self> {
    fn from_raw(raw: u128) -> Self;
    fn raw(self) -> u128;
    fn root(self) -> Self;
}

impl Ieee for f32 {
    fn from_raw(raw: u128) -> f32 {
        f32::from_bits(raw as u32)
    }
    fn raw(self) -> u128 {
        u128::from(self.to_bits())
    }
    fn root(self) -> f32 {
        self.sqrt()
    }
}

impl Ieee for f64 {
    fn from_raw(raw: u128) -> f64 {
        f64::from_bits(raw as u64)
    }
    fn raw(self) -> u128 {
        u128::from(self.to_bits())
    }
    fn root(self) -> f64 {
        self.sqrt()
    }
}

/// Explicit trailing-significand bits of the float type `ty`.
fn mantissa_bits(ty: Type) -> u32 {
    match ty {
        Type::F32 => 23,
        Type::F64 => 52,
        _ => not_float(ty),
    }
}

fn not_float(ty: Type) -> ! {
    panic!("{ty} is not a float type (the verifier should have refused this region)")
}

fn exponent_mask(ty: Type) -> u128 {
    mask(ty.bits() - 1) & !mask(mantissa_bits(ty))
}

fn quiet_bit(ty: Type) -> u128 {
    1 << (mantissa_bits(ty) - 1)
}

fn is_nan(ty: Type, raw: u128) -> bool {
    raw & exponent_mask(ty) == exponent_mask(ty) && raw & mask(mantissa_bits(ty)) != 0
}

/// The x86 default NaN ("QNaN floating-point indefinite"): sign set,
/// exponent all ones, only the quiet bit of the significand.
fn default_nan(ty: Type) -> u128 {
    mask(ty.bits()) & !mask(mantissa_bits(ty) - 1)
}

/// The ordering of two floats of type `ty`; `None` when either is NaN.
fn order(ty: Type, a: u128, b: u128) -> Option<Ordering> {
    match ty {
        Type::F32 => f32::from_raw(a).partial_cmp(&f32::from_raw(b)),
        Type::F64 => f64::from_raw(a).partial_cmp(&f64::from_raw(b)),
        _ => not_float(ty),
    }
}

/// The host's result of `op` (`b` unused by `fsqrt`), NaNs not yet fixed.
fn compute<F: Ieee>(op: Opcode, a: u128, b: u128) -> u128 {
    let (x, y) = (F::from_raw(a), F::from_raw(b));
    match op {
        Opcode::Fadd => x + y,
        Opcode::Fsub => x - y,
        Opcode::Fmul => x * y,
        Opcode::Fdiv => x / y,
        Opcode::Fsqrt => x.root(),
        _ => unreachable!("{op} is not a float arithmetic op"),
    }
    .raw()
}

/// `fadd fsub fmul fdiv fsqrt fmin fmax` on floats of type `ty`; `fsqrt`
/// ignores `b` (pass 0, which is no NaN).
pub fn arith(op: Opcode, ty: Type, a: u128, b: u128) -> u128 {
    match op {
        Opcode::Fmin if order(ty, a, b) == Some(Ordering::Less) => a,
        Opcode::Fmax if order(ty, a, b) == Some(Ordering::Greater) => a,
        Opcode::Fmin | Opcode::Fmax => b,
        _ => {
            let r = match ty {
                Type::F32 => compute::<f32>(op, a, b),
                Type::F64 => compute::<f64>(op, a, b),
                _ => not_float(ty),
            };
            if !is_nan(ty, r) {
                r
            } else if is_nan(ty, a) {
                a | quiet_bit(ty)
            } else if is_nan(ty, b) {
                b | quiet_bit(ty)
            } else {
                default_nan(ty)
            }
        }
    }
}

/// `a COND b` for floats of type `ty` (the SSE compare predicates).
pub fn compare(cond: FloatCond, ty: Type, a: u128, b: u128) -> bool {
    let o = order(ty, a, b);
    let less_or_equal = matches!(o, Some(Ordering::Less | Ordering::Equal));
    match cond {
        FloatCond::Eq => o == Some(Ordering::Equal),
        FloatCond::Lt => o == Some(Ordering::Less),
        FloatCond::Le => less_or_equal,
        FloatCond::Uno => o.is_none(),
        FloatCond::Une => o != Some(Ordering::Equal),
        FloatCond::Nlt => o != Some(Ordering::Less),
        FloatCond::Nle => !less_or_equal,
        FloatCond::Ord => o.is_some(),
    }
}

/// A float of type `ty` widened exactly to an f64 (a NaN stays a NaN, its
/// payload unspecified).
fn to_f64(ty: Type, raw: u128) -> f64 {
    match ty {
        Type::F32 => f64::from(f32::from_raw(raw)),
        Type::F64 => f64::from_raw(raw),
        _ => not_float(ty),
    }
}

/// `fcvt_to_sint.T a, imm`: `ty` is i32, i64 or i32x4 and `operand` the
/// type of `a`. imm bit 0 rounds to nearest even instead of truncating;
/// for i32x4, imm bit 1 says the source is f64x2 (two results, upper
/// lanes zero), else f32x4.
pub fn to_sint(ty: Type, operand: Type, a: u128, imm: u16) -> u128 {
    let (src, count) = match (ty.is_vector(), imm & 2 != 0) {
        (true, true) => (Type::F64, 2),
        (true, false) => (Type::F32, 4),
        (false, _) => (operand.lane_type(), 1),
    };
    let bits = ty.lane_bits();
    let round = imm & 1 != 0;
    from_lanes(bits, (0..count).map(|i| float_to_int(src, lane(a, src.bits(), i), round, bits)))
}

/// One float of type `src` to a signed integer of `bits` (32 or 64) bits;
/// NaN and out-of-range give the integer indefinite, the minimum value.
fn float_to_int(src: Type, raw: u128, round: bool, bits: u32) -> u128 {
    let x = to_f64(src, raw);
    let r = if round { x.round_ties_even() } else { x.trunc() };
    let limit = (1u64 << (bits - 1)) as f64;
    if (-limit..limit).contains(&r) {
        r as i64 as u128
    } else {
        1 << (bits - 1)
    }
}

/// `sint_to_f.T a`: scalar, the signed integer `a` of type `operand` to
/// the float `ty`; vector, i32 lanes 0.. of `a` to the float lanes of `ty`
/// (f64x2: lanes 0 and 1, f32x4: all four).
pub fn from_sint(ty: Type, operand: Type, a: u128) -> u128 {
    let (src_bits, count) = if ty.is_vector() { (32, ty.lanes()) } else { (operand.bits(), 1) };
    let dst = ty.lane_type();
    from_lanes(dst.bits(), (0..count).map(|i| int_to_float(dst, sext(lane(a, src_bits, i), src_bits) as i64)))
}

/// A signed integer to the float type `dst`, rounded to nearest even.
fn int_to_float(dst: Type, x: i64) -> u128 {
    match dst {
        Type::F32 => (x as f32).raw(),
        Type::F64 => (x as f64).raw(),
        _ => not_float(dst),
    }
}

/// `fconvert.T a`: f32 <-> f64 to the float lanes of `ty`. Scalar, one
/// value; vector, lanes 0 and 1 of the other float shape (f64x2: cvtps2pd;
/// f32x4: cvtpd2ps, upper lanes zero).
pub fn convert(ty: Type, a: u128) -> u128 {
    let dst = ty.lane_type();
    let src = if dst == Type::F64 { Type::F32 } else { Type::F64 };
    let count = if ty.is_vector() { 2 } else { 1 };
    from_lanes(dst.bits(), (0..count).map(|i| convert_one(src, dst, lane(a, src.bits(), i))))
}

/// One float from `src` to `dst`. A NaN keeps its sign and the top of its
/// payload, and is quieted.
fn convert_one(src: Type, dst: Type, raw: u128) -> u128 {
    if !is_nan(src, raw) {
        let x = to_f64(src, raw);
        return match dst {
            Type::F32 => (x as f32).raw(),
            Type::F64 => x.raw(),
            _ => not_float(dst),
        };
    }
    let (from, to) = (mantissa_bits(src), mantissa_bits(dst));
    let payload = raw & mask(from);
    let payload = if to > from { payload << (to - from) } else { payload >> (from - to) };
    let sign = (raw >> (src.bits() - 1)) << (dst.bits() - 1);
    sign | exponent_mask(dst) | quiet_bit(dst) | payload
}

#[cfg(test)]
mod tests {
    use crate::interp::testing::{eval, pack, vop};

    const ONE: u128 = 0x3ff0_0000_0000_0000;
    const TWO: u128 = 0x4000_0000_0000_0000;
    const MINUS_ONE: u128 = 0xbff0_0000_0000_0000;
    const INF: u128 = 0x7ff0_0000_0000_0000;
    const NEG_ZERO: u128 = 0x8000_0000_0000_0000;
    const DEFAULT_NAN: u128 = 0xfff8_0000_0000_0000;

    /// `OP.f64 rax, rcx` on the registers' bits; `op` may carry a
    /// condition (`fcmp lt`).
    fn f64_op(op: &str, a: u128, b: u128) -> u128 {
        let (name, cond) = op.split_once(' ').unwrap_or((op, ""));
        eval(
            &[("rax", a), ("rcx", b)],
            &format!(
                "v0 = get rax\n v1 = get rcx\n v2 = bitcast.f64 v0\n v3 = bitcast.f64 v1\n \
                 v4 = {name}.f64 {cond} v2, v3"
            ),
        )
    }

    /// `OP.f32 eax, ecx`.
    fn f32_op(op: &str, a: u128, b: u128) -> u128 {
        eval(
            &[("rax", a), ("rcx", b)],
            &format!(
                "v0 = get rax\n v1 = get rcx\n v2 = trunc.i32 v0\n v3 = trunc.i32 v1\n v4 = bitcast.f32 v2\n \
                 v5 = bitcast.f32 v3\n v6 = {op}.f32 v4, v5"
            ),
        )
    }

    fn sqrt64(a: u128) -> u128 {
        eval(&[("rax", a)], "v0 = get rax\n v1 = bitcast.f64 v0\n v2 = fsqrt.f64 v1")
    }

    #[test]
    fn arithmetic_rounds_to_nearest() {
        assert_eq!(f64_op("fadd", ONE, ONE), TWO);
        // 0.1 + 0.2 = 0.30000000000000004
        assert_eq!(f64_op("fadd", 0x3fb9_9999_9999_999a, 0x3fc9_9999_9999_999a), 0x3fd3_3333_3333_3334);
        assert_eq!(f64_op("fdiv", ONE, 0x4008_0000_0000_0000), 0x3fd5_5555_5555_5555); // 1/3
        assert_eq!(f64_op("fsub", ONE, TWO), MINUS_ONE);
        assert_eq!(f64_op("fmul", TWO, MINUS_ONE), 0xc000_0000_0000_0000);
        assert_eq!(f64_op("fdiv", ONE, 0), INF);
        assert_eq!(sqrt64(0x4010_0000_0000_0000), TWO);
        assert_eq!(sqrt64(NEG_ZERO), NEG_ZERO);
        assert_eq!(f32_op("fadd", 0x3fc0_0000, 0x3fc0_0000), 0x4040_0000); // 1.5 + 1.5 = 3
        assert_eq!(f32_op("fdiv", 0x3f80_0000, 0x4040_0000), 0x3eaa_aaab); // 1/3
    }

    #[test]
    fn invalid_operations_give_the_default_nan() {
        assert_eq!(f64_op("fdiv", 0, 0), DEFAULT_NAN);
        assert_eq!(f64_op("fsub", INF, INF), DEFAULT_NAN);
        assert_eq!(f64_op("fadd", INF, 0xfff0_0000_0000_0000), DEFAULT_NAN);
        assert_eq!(f64_op("fmul", 0, INF), DEFAULT_NAN);
        assert_eq!(sqrt64(MINUS_ONE), DEFAULT_NAN);
        assert_eq!(f32_op("fdiv", 0, 0), 0xffc0_0000);
        assert_eq!(f32_op("fmul", 0x7f80_0000, 0x8000_0000), 0xffc0_0000);
    }

    #[test]
    fn nan_operands_propagate_first_operand_first_and_quieted() {
        let qnan = 0x7ff8_0000_0000_0001;
        let snan = 0x7ff0_0000_0000_0002;
        assert_eq!(f64_op("fadd", qnan, snan), qnan);
        assert_eq!(f64_op("fadd", snan, qnan), 0x7ff8_0000_0000_0002);
        assert_eq!(f64_op("fmul", ONE, 0xfff0_0000_0000_0005), 0xfff8_0000_0000_0005);
        assert_eq!(f64_op("fdiv", 0xfff0_0000_0000_0007, ONE), 0xfff8_0000_0000_0007);
        assert_eq!(f64_op("fsub", 0, qnan), qnan);
        assert_eq!(sqrt64(0x7ff0_0000_0000_0003), 0x7ff8_0000_0000_0003);
        assert_eq!(sqrt64(0xfff8_0000_0000_0009), 0xfff8_0000_0000_0009);
        assert_eq!(f32_op("fadd", 0x3f80_0000, 0x7f80_0001), 0x7fc0_0001);
        assert_eq!(f32_op("fadd", 0xff80_0002, 0x7fc0_0001), 0xffc0_0002);
    }

    #[test]
    fn min_and_max_return_the_second_operand_unless_strictly_ordered() {
        assert_eq!(f64_op("fmin", ONE, TWO), ONE);
        assert_eq!(f64_op("fmin", TWO, ONE), ONE);
        assert_eq!(f64_op("fmax", ONE, TWO), TWO);
        assert_eq!(f64_op("fmax", TWO, ONE), TWO);
        assert_eq!(f64_op("fmin", 0, NEG_ZERO), NEG_ZERO);
        assert_eq!(f64_op("fmin", NEG_ZERO, 0), 0);
        assert_eq!(f64_op("fmax", NEG_ZERO, 0), 0);
        assert_eq!(f64_op("fmax", 0, NEG_ZERO), NEG_ZERO);
        assert_eq!(f64_op("fmin", 0x7ff8_0000_0000_0001, ONE), ONE);
        // The second operand as it is, even a signalling NaN.
        assert_eq!(f64_op("fmin", ONE, 0x7ff0_0000_0000_0001), 0x7ff0_0000_0000_0001);
        assert_eq!(f64_op("fmax", ONE, 0x7ff0_0000_0000_0001), 0x7ff0_0000_0000_0001);
        assert_eq!(f32_op("fmax", 0x7fc0_0000, 0x3f80_0000), 0x3f80_0000);
    }

    #[test]
    fn compare_predicates() {
        let nan = 0x7ff8_0000_0000_0000;
        let fcmp = |cond: &str, a, b| f64_op(&format!("fcmp {cond}"), a, b);
        // (cond, 1 vs 2, 2 vs 1, 1 vs 1, 1 vs NaN, +0 vs -0)
        let table = [
            ("eq", 0, 0, 1, 0, 1),
            ("lt", 1, 0, 0, 0, 0),
            ("le", 1, 0, 1, 0, 1),
            ("uno", 0, 0, 0, 1, 0),
            ("une", 1, 1, 0, 1, 0),
            ("nlt", 0, 1, 1, 1, 1),
            ("nle", 0, 1, 0, 1, 0),
            ("ord", 1, 1, 1, 0, 1),
        ];
        for (cond, lt, gt, eq, uno, zeros) in table {
            assert_eq!(fcmp(cond, ONE, TWO), lt, "{cond} 1 2");
            assert_eq!(fcmp(cond, TWO, ONE), gt, "{cond} 2 1");
            assert_eq!(fcmp(cond, ONE, ONE), eq, "{cond} 1 1");
            assert_eq!(fcmp(cond, ONE, nan), uno, "{cond} 1 nan");
            assert_eq!(fcmp(cond, nan, ONE), uno, "{cond} nan 1");
            assert_eq!(fcmp(cond, 0, NEG_ZERO), zeros, "{cond} 0 -0");
        }
    }

    /// `fcvt_to_sint.T rax (as f64), imm`.
    fn cvt(to: &str, a: u128, imm: u16) -> u128 {
        eval(&[("rax", a)], &format!("v0 = get rax\n v1 = bitcast.f64 v0\n v2 = fcvt_to_sint.{to} v1, {imm}"))
    }

    #[test]
    fn float_to_int_truncates_or_rounds_to_even() {
        let (two_and_half, three_and_half) = (0x4004_0000_0000_0000, 0x400c_0000_0000_0000);
        assert_eq!(cvt("i64", two_and_half, 0), 2);
        assert_eq!(cvt("i64", three_and_half, 0), 3);
        assert_eq!(cvt("i64", two_and_half, 1), 2);
        assert_eq!(cvt("i64", three_and_half, 1), 4);
        assert_eq!(cvt("i64", 0xc004_0000_0000_0000, 1), 0xffff_ffff_ffff_fffe); // -2.5 -> -2
        assert_eq!(cvt("i64", 0xc00c_0000_0000_0000, 1), 0xffff_ffff_ffff_fffc); // -3.5 -> -4
        assert_eq!(cvt("i64", 0xc00c_0000_0000_0000, 0), 0xffff_ffff_ffff_fffd); // -3.5 -> -3
        assert_eq!(cvt("i32", MINUS_ONE, 0), 0xffff_ffff);
    }

    #[test]
    fn float_to_int_out_of_range_or_nan_is_indefinite() {
        let e20 = 0x4415_af1d_78b5_8c40; // 1e20
        assert_eq!(cvt("i64", e20, 0), 0x8000_0000_0000_0000);
        assert_eq!(cvt("i64", e20 | NEG_ZERO, 1), 0x8000_0000_0000_0000);
        assert_eq!(cvt("i64", 0x7ff8_0000_0000_0000, 0), 0x8000_0000_0000_0000);
        assert_eq!(cvt("i64", INF, 1), 0x8000_0000_0000_0000);
        assert_eq!(cvt("i64", 0x43e0_0000_0000_0000, 0), 0x8000_0000_0000_0000); // 2^63
                                                                                 // The largest double below 2^63.
        assert_eq!(cvt("i64", 0x43df_ffff_ffff_ffff, 0), 0x7fff_ffff_ffff_fc00);
        // 2147483647.5: truncation fits, rounding (to 2^31) does not.
        assert_eq!(cvt("i32", 0x41df_ffff_ffe0_0000, 0), 0x7fff_ffff);
        assert_eq!(cvt("i32", 0x41df_ffff_ffe0_0000, 1), 0x8000_0000);
        assert_eq!(cvt("i32", 0x7ff0_0000_0000_0001, 0), 0x8000_0000);
    }

    #[test]
    fn f32_to_int() {
        let body =
            |imm| format!("v0 = get rax\n v1 = trunc.i32 v0\n v2 = bitcast.f32 v1\n v3 = fcvt_to_sint.i32 v2, {imm}");
        assert_eq!(eval(&[("rax", 0xbfc0_0000)], &body(0)), 0xffff_ffff); // -1.5 -> -1
        assert_eq!(eval(&[("rax", 0xbfc0_0000)], &body(1)), 0xffff_fffe); // -1.5 -> -2
        assert_eq!(eval(&[("rax", 0x4f00_0000)], &body(0)), 0x8000_0000); // 2^31
    }

    #[test]
    fn int_to_float_rounds_to_nearest_even() {
        let to64 = |x| eval(&[("rax", x)], "v0 = get rax\n v1 = sint_to_f.f64 v0");
        assert_eq!(to64(u64::MAX.into()), MINUS_ONE);
        assert_eq!(to64(0x20_0000_0000_0001), 0x4340_0000_0000_0000); // 2^53 + 1 -> 2^53
        assert_eq!(to64(0x20_0000_0000_0003), 0x4340_0000_0000_0002); // 2^53 + 3 -> 2^53 + 4
        let to32 = |x| eval(&[("rax", x)], "v0 = get rax\n v1 = sint_to_f.f32 v0");
        // 2^53 + 2^29 + 1: rounded once it is 2^53 + 2^30, not 2^53 as
        // rounding through f64 would give.
        assert_eq!(to32(0x20_0000_2000_0001), 0x5a00_0001);
        let i32_to32 = |x| eval(&[("rax", x)], "v0 = get rax\n v1 = trunc.i32 v0\n v2 = sint_to_f.f32 v1");
        assert_eq!(i32_to32(0x100_0001), 0x4b80_0000); // 2^24 + 1 -> 2^24
        assert_eq!(i32_to32(0xffff_fffe), 0xc000_0000); // -2
    }

    #[test]
    fn float_to_float() {
        let widen =
            |x| eval(&[("rax", x)], "v0 = get rax\n v1 = trunc.i32 v0\n v2 = bitcast.f32 v1\n v3 = fconvert.f64 v2");
        assert_eq!(widen(0x3fc0_0000), 0x3ff8_0000_0000_0000);
        assert_eq!(widen(0x8000_0001), 0xb6a0_0000_0000_0000); // smallest negative subnormal: -2^-149
        assert_eq!(widen(0x7f80_0001), 0x7ff8_0000_2000_0000); // quieted, payload on top
        assert_eq!(widen(0xffc0_0001), 0xfff8_0000_2000_0000);
        let narrow = |x| eval(&[("rax", x)], "v0 = get rax\n v1 = bitcast.f64 v0\n v2 = fconvert.f32 v1");
        assert_eq!(narrow(0x3fd5_5555_5555_5555), 0x3eaa_aaab); // 1/3
        assert_eq!(narrow(0x7fef_ffff_ffff_ffff), 0x7f80_0000); // overflow to infinity
        assert_eq!(narrow(NEG_ZERO), 0x8000_0000);
        assert_eq!(narrow(0x7ff0_0000_0000_0001), 0x7fc0_0000); // low payload bits dropped
        assert_eq!(narrow(0xfff4_0000_2000_0000), 0xffe0_0001);
    }

    #[test]
    fn vector_lanes() {
        let a = pack(32, [0x3f80_0000, 0x7f80_0001, 0x7f80_0000, 0xc000_0000]); // 1, sNaN, inf, -2
        let b = pack(32, [0x3f80_0000, 0x3f80_0000, 0xff80_0000, 0x4000_0000]); // 1, 1, -inf, 2
        assert_eq!(vop("fadd.f32x4", &[a, b]), pack(32, [0x4000_0000, 0x7fc0_0001, 0xffc0_0000, 0]));
        assert_eq!(vop("fcmp.f32x4 lt", &[a, b]), pack(32, [0, 0, 0, 0xffff_ffff]));
        assert_eq!(vop("fcmp.f32x4 une", &[a, b]), pack(32, [0, 0xffff_ffff, 0xffff_ffff, 0xffff_ffff]));
        assert_eq!(vop("fmin.f32x4", &[a, b]), pack(32, [0x3f80_0000, 0x3f80_0000, 0xff80_0000, 0xc000_0000]));
        let d = pack(64, [ONE, 0xfff0_0000_0000_0001]);
        assert_eq!(vop("fmul.f64x2", &[d, d]), pack(64, [ONE, 0xfff8_0000_0000_0001]));
        assert_eq!(vop("fsqrt.f64x2", &[pack(64, [0x4010_0000_0000_0000, MINUS_ONE])]), pack(64, [TWO, DEFAULT_NAN]));
    }

    #[test]
    fn vector_conversions() {
        // cvttps2dq and cvtps2dq: 1.5, -1.5, NaN, 3e9.
        let v = pack(32, [0x3fc0_0000, 0xbfc0_0000, 0x7fc0_0000, 0x4f32_d05e]);
        let cvt = |imm| eval(&[("xmm0", v)], &format!("v0 = get xmm0\n v1 = fcvt_to_sint.i32x4 v0, {imm}"));
        assert_eq!(cvt(0), pack(32, [1, 0xffff_ffff, 0x8000_0000, 0x8000_0000]));
        assert_eq!(cvt(1), pack(32, [2, 0xffff_fffe, 0x8000_0000, 0x8000_0000]));
        // cvttpd2dq and cvtpd2dq: 2.5, 3.5; the upper lanes are zeroed.
        let d = pack(64, [0x4004_0000_0000_0000, 0x400c_0000_0000_0000]);
        let cvt = |imm| eval(&[("xmm0", d)], &format!("v0 = get xmm0\n v1 = fcvt_to_sint.i32x4 v0, {imm}"));
        assert_eq!(cvt(2), pack(32, [2, 3, 0, 0]));
        assert_eq!(cvt(3), pack(32, [2, 4, 0, 0]));
        // cvtdq2pd and cvtdq2ps.
        let i = pack(32, [0xffff_ffff, 2, 0, 0x100_0001]);
        assert_eq!(eval(&[("xmm0", i)], "v0 = get xmm0\n v1 = sint_to_f.f64x2 v0"), pack(64, [MINUS_ONE, TWO]));
        assert_eq!(
            eval(&[("xmm0", i)], "v0 = get xmm0\n v1 = sint_to_f.f32x4 v0"),
            pack(32, [0xbf80_0000, 0x4000_0000, 0, 0x4b80_0000])
        );
        // cvtps2pd and cvtpd2ps.
        let s = pack(32, [0x3fc0_0000, 0x8000_0000, 0x1234_5678, 0x1234_5678]);
        assert_eq!(
            eval(&[("xmm0", s)], "v0 = get xmm0\n v1 = fconvert.f64x2 v0"),
            pack(64, [0x3ff8_0000_0000_0000, NEG_ZERO])
        );
        let d = pack(64, [ONE, 0x7ff0_0000_0000_0001]);
        assert_eq!(
            eval(&[("xmm0", d)], "v0 = get xmm0\n v1 = fconvert.f32x4 v0"),
            pack(32, [0x3f80_0000, 0x7fc0_0000, 0, 0])
        );
    }
}
