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
