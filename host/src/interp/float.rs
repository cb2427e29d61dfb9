//! Floating-point ops with x86 SSE semantics under MXCSR, independent of
//! the host's FPU: arithmetic (fused multiply-add included) with x86 NaN
//! propagation, minimum and
//! maximum, comparison, rounding to integral values, and the float/integer
//! and float/float conversions
//! (scalar and vector forms), each rounded by MXCSR.RC, with DAZ, FTZ and
//! the exception flags it raises, computed exactly in software.
//!
//! Finite arithmetic is `rustc_apfloat`'s IEEE single and double (correct
//! rounding in every mode, with the IEEE status); the square root, the
//! narrowing conversion and the conversions to integers are the x87
//! unit's exact routines on the widened value (`crate::x87::arith`,
//! `crate::x87::value`). Every NaN produced is chosen here from the
//! operands' bits. Each lane's flags are gathered in an [`Env`], which
//! decides at the op's end whether an unmasked exception traps.

use core::cmp::Ordering;

use aarchx_ir::{FloatCond, Opcode, Type};
use rustc_apfloat::ieee::{Double, Single};
use rustc_apfloat::{Float, FloatConvert, Round, Status, StatusAnd};

use super::lanes::{from_lanes, lane, mask, sext};
use crate::x87::arith as x87_arith;
use crate::x87::value::{self as x87_value, status_flags, Format, X};

/// MXCSR's exception flags (bits 0-5); the mask of each is 7 bits above.
pub(super) const IE: u32 = 0x01;
pub(super) const DE: u32 = 0x02;
const ZE: u32 = 0x04;
pub(super) const UE: u32 = 0x10;
const PE: u32 = 0x20;
/// The exceptions detected before the operation: when one of them is
/// unmasked, the instruction traps without looking at the result.
const PRE: u32 = IE | DE | ZE;
/// Denormal operands read as zero.
const DAZ: u32 = 1 << 6;
/// Tiny results flushed to zero (when underflow is masked).
const FTZ: u32 = 1 << 15;

/// The MXCSR an SSE op runs under and the flags its lanes raised.
pub struct Env {
    mxcsr: u32,
    flags: u32,
}

impl Env {
    pub fn new(mxcsr: u32) -> Env {
        Env { mxcsr, flags: 0 }
    }

    /// The exceptions that are unmasked.
    pub(super) fn unmasked(&self) -> u32 {
        !(self.mxcsr >> 7) & 0x3f
    }

    /// MXCSR.RC as an x87 control word's rounding field (the encodings
    /// agree), with every x87 exception masked and precision `pc`.
    fn fpcw(&self, pc: u16) -> u16 {
        ((self.mxcsr >> 13 & 3) as u16) << 10 | pc << 8 | 0x3f
    }

    pub(super) fn round(&self) -> Round {
        x87_value::rounding(self.fpcw(3))
    }

    /// `raw` as the op reads it: zero of its sign when it is a denormal
    /// and DAZ is set.
    pub(super) fn operand(&self, ty: Type, raw: u128) -> u128 {
        if self.mxcsr & DAZ != 0 && is_denormal(ty, raw) {
            raw & sign_bit(ty)
        } else {
            raw
        }
    }

    /// A finite result and its flags after tininess: with underflow
    /// unmasked a tiny result is an underflow even when exact; masked,
    /// FTZ makes it a zero of its sign with UE and PE.
    fn result(&self, ty: Type, raw: u128, flags: u32) -> (u128, u32) {
        let tiny = flags & UE != 0 || is_denormal(ty, raw);
        if !tiny {
            (raw, flags)
        } else if self.unmasked() & UE != 0 {
            (raw, flags | UE)
        } else if self.mxcsr & FTZ != 0 {
            (raw & sign_bit(ty), flags | UE | PE)
        } else {
            (raw, flags)
        }
    }

    /// Gathers one lane's flags, returning its value.
    pub(super) fn raise(&mut self, (value, flags): (u128, u32)) -> u128 {
        self.flags |= flags;
        value
    }

    /// Ends the op: ORs its flags into `mxcsr` and says whether it traps.
    /// An unmasked exception detected before the operation (invalid,
    /// denormal, divide by zero) traps with only those flags set; else
    /// every flag is set and any unmasked one traps.
    pub fn finish(self, mxcsr: &mut u32) -> bool {
        let unmasked = self.unmasked();
        let pre = self.flags & PRE;
        let raised = if pre & unmasked != 0 { pre } else { self.flags };
        *mxcsr |= raised;
        raised & unmasked != 0
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

fn sign_bit(ty: Type) -> u128 {
    1 << (ty.bits() - 1)
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

fn is_snan(ty: Type, raw: u128) -> bool {
    is_nan(ty, raw) && raw & quiet_bit(ty) == 0
}

fn is_denormal(ty: Type, raw: u128) -> bool {
    raw & exponent_mask(ty) == 0 && raw & mask(mantissa_bits(ty)) != 0
}

/// DE for operands of which one is a denormal.
fn denormal_flag(ty: Type, operands: &[u128]) -> u32 {
    if operands.iter().any(|&x| is_denormal(ty, x)) {
        DE
    } else {
        0
    }
}

/// The x86 default NaN ("QNaN floating-point indefinite"): sign set,
/// exponent all ones, only the quiet bit of the significand.
fn default_nan(ty: Type) -> u128 {
    mask(ty.bits()) & !mask(mantissa_bits(ty) - 1)
}

/// The ordering of two non-NaN floats of type `ty`; `None` when either is NaN.
fn order(ty: Type, a: u128, b: u128) -> Option<Ordering> {
    match ty {
        Type::F32 => Single::from_bits(a).partial_cmp(&Single::from_bits(b)),
        Type::F64 => Double::from_bits(a).partial_cmp(&Double::from_bits(b)),
        _ => not_float(ty),
    }
}

/// The SSE rule for an op with NaN operands: the first NaN, quieted; IE
/// when either is signalling. `None` when neither is a NaN.
fn nan_operands(ty: Type, operands: &[u128]) -> Option<(u128, u32)> {
    let first = operands.iter().copied().find(|&x| is_nan(ty, x))?;
    let ie = if operands.iter().any(|&x| is_snan(ty, x)) { IE } else { 0 };
    Some((first | quiet_bit(ty), ie))
}

/// `op` on `x` and `y` (and the addend `z` for `fma`) in the IEEE type
/// `F`, rounded by `round`.
fn apply<F: Float>(op: Opcode, x: F, y: F, z: F, round: Round) -> StatusAnd<F> {
    match op {
        Opcode::Fadd => x.add_r(y, round),
        Opcode::Fsub => x.sub_r(y, round),
        Opcode::Fmul => x.mul_r(y, round),
        Opcode::Fdiv => x.div_r(y, round),
        Opcode::Fma => x.mul_add_r(y, z, round),
        _ => unreachable!("{op} is not an IEEE arithmetic op"),
    }
}

/// `op` on finite or infinite `a`, `b` (and `c` for `fma`) in the IEEE
/// type `T`, rounded by `round`, with its flags (no DE: the caller adds it).
fn ieee<T: Float + FloatConvert<X>>(op: Opcode, [a, b, c]: [u128; 3], round: Round) -> (u128, u32)
where
    X: FloatConvert<T>,
{
    let (x, y, z) = (T::from_bits(a), T::from_bits(b), T::from_bits(c));
    let r = apply(op, x, y, z, round);
    let mut flags = u32::from(status_flags(r.status));
    // The exact result rounded to odd in the wider format (truncated, its
    // last bit set when that was inexact): 64 bits, enough for a second
    // rounding to the type's precision to be the correct one.
    let wide = |v: T| -> X { v.convert_r(Round::NearestTiesToEven, &mut false).value };
    let exact = || {
        let t = apply(op, wide(x), wide(y), wide(z), Round::TowardZero);
        if t.status.contains(Status::INEXACT) {
            X::from_bits(t.value.to_bits() | 1)
        } else {
            t.value
        }
    };
    if r.status == Status::INEXACT {
        let magnitude = r.value.abs().to_bits();
        // apfloat reports an overflow that rounds to the largest finite
        // value as inexact only: the exact result is beyond the type's
        // largest binade.
        if magnitude == T::largest().to_bits() && exact().ilogb() > T::largest().ilogb() {
            flags |= u32::from(x87_value::OE);
        }
        // x86 detects tininess after rounding to the type's precision with
        // an unbounded exponent, apfloat with the type's exponent range: a
        // result of the smallest normal magnitude is tiny when the exact
        // one, so rounded (scaled into the normal range), is below it.
        let smallest = T::smallest_normalized();
        if magnitude == smallest.to_bits() {
            const SCALE: i32 = 64;
            let unbounded: T = exact().scalbn(SCALE).convert_r(round, &mut false).value;
            if unbounded.abs() < smallest.scalbn(SCALE) {
                flags |= UE;
            }
        }
    }
    if flags & IE != 0 {
        return (0, IE);
    }
    (r.value.to_bits(), flags)
}

/// The finite or infinite result of `op` on `operands` (already read
/// under DAZ, none a NaN) and its flags, DE, tininess and FTZ included;
/// x86's default NaN for an invalid operation.
fn finite_lane(env: &Env, op: Opcode, ty: Type, operands: [u128; 3], used: usize) -> (u128, u32) {
    let (r, flags) = match ty {
        Type::F32 => ieee::<Single>(op, operands, env.round()),
        Type::F64 => ieee::<Double>(op, operands, env.round()),
        _ => not_float(ty),
    };
    if flags & IE != 0 {
        return (default_nan(ty), IE);
    }
    // Divide by zero takes precedence over a denormal dividend.
    if flags & ZE != 0 {
        return (r, ZE);
    }
    env.result(ty, r, flags | denormal_flag(ty, &operands[..used]))
}

/// One lane of `fadd fsub fmul fdiv fsqrt` (`fsqrt` ignores `b`).
fn arith_lane(env: &Env, op: Opcode, ty: Type, a: u128, b: u128) -> (u128, u32) {
    let (a, b) = (env.operand(ty, a), env.operand(ty, b));
    let operands: &[u128] = if op == Opcode::Fsqrt { &[a] } else { &[a, b] };
    if let Some(n) = nan_operands(ty, operands) {
        return n;
    }
    if op == Opcode::Fsqrt {
        return sqrt_lane(env, ty, a);
    }
    finite_lane(env, op, ty, [a, b, 0], 2)
}

/// `fma` on lane `i` of type `ty` (see the op for `imm`): with a NaN
/// operand, the first of `a`, `b`, `c` quieted (the negations do not
/// touch it); else `a * b + c` with the product and the addend negated
/// as `imm` says, rounded once.
pub fn fma(env: &mut Env, ty: Type, [a, b, c]: [u128; 3], imm: u16, i: u32) -> u128 {
    let operands = [a, b, c].map(|x| env.operand(ty, x));
    let r = match nan_operands(ty, &operands) {
        Some(n) => n,
        None => {
            let negate = |x: u128, yes: bool| if yes { x ^ sign_bit(ty) } else { x };
            let addend_bit = if i % 2 == 0 { 2 } else { 4 };
            let [a, b, c] = operands;
            let (na, nc) = (negate(a, imm & 1 != 0), negate(c, imm & addend_bit != 0));
            finite_lane(env, Opcode::Fma, ty, [na, b, nc], 3)
        }
    };
    env.raise(r)
}

/// sqrtss/sqrtsd of a non-NaN `a`: the x87's exact square root at the
/// type's precision (the root of a float is never tiny, nor too large).
fn sqrt_lane(env: &Env, ty: Type, a: u128) -> (u128, u32) {
    let negative = a & sign_bit(ty) != 0;
    if a & !sign_bit(ty) == 0 || (!negative && a & !sign_bit(ty) == exponent_mask(ty)) {
        return (a, 0);
    }
    if negative {
        return (default_nan(ty), IE);
    }
    let (format, pc) = if ty == Type::F32 { (Format::F32, 0) } else { (Format::F64, 2) };
    let root = x87_arith::sqrt(x87_value::widen(a as u64, format).value, env.fpcw(pc));
    let narrow = x87_value::narrow(root.value, format, env.fpcw(3));
    (u128::from(narrow.value), u32::from(root.flags) | denormal_flag(ty, &[a]))
}

/// `fround` on one lane of type `ty` (see the op for `imm`): the value
/// rounded to an integral one, PE when that changed it (unless imm bit 3
/// suppresses it); a NaN as for arithmetic.
pub fn round(env: &mut Env, ty: Type, a: u128, imm: u16) -> u128 {
    let a = env.operand(ty, a);
    let r = match nan_operands(ty, &[a]) {
        Some(n) => n,
        None => {
            let mode = if imm & 4 != 0 {
                env.round()
            } else {
                [Round::NearestTiesToEven, Round::TowardNegative, Round::TowardPositive, Round::TowardZero]
                    [usize::from(imm & 3)]
            };
            let (value, status) = match ty {
                Type::F32 => {
                    let r = Single::from_bits(a).round_to_integral(mode);
                    (r.value.to_bits(), r.status)
                }
                Type::F64 => {
                    let r = Double::from_bits(a).round_to_integral(mode);
                    (r.value.to_bits(), r.status)
                }
                _ => not_float(ty),
            };
            let pe = if imm & 8 == 0 { u32::from(status_flags(status)) & PE } else { 0 };
            (value, pe)
        }
    };
    env.raise(r)
}

/// `fadd fsub fmul fdiv fsqrt fmin fmax` on one lane of type `ty`;
/// `fsqrt` ignores `b` (pass 0, which is no NaN).
pub fn arith(env: &mut Env, op: Opcode, ty: Type, a: u128, b: u128) -> u128 {
    let r = match op {
        Opcode::Fmin | Opcode::Fmax => min_max_lane(env, op, ty, a, b),
        _ => arith_lane(env, op, ty, a, b),
    };
    env.raise(r)
}

/// minss/maxss: `a` when it is less (greater) than `b`, else `b`; any
/// NaN operand is invalid.
fn min_max_lane(env: &Env, op: Opcode, ty: Type, a: u128, b: u128) -> (u128, u32) {
    let (a, b) = (env.operand(ty, a), env.operand(ty, b));
    if is_nan(ty, a) || is_nan(ty, b) {
        return (b, IE);
    }
    let wanted = if op == Opcode::Fmin { Ordering::Less } else { Ordering::Greater };
    let r = if order(ty, a, b) == Some(wanted) { a } else { b };
    (r, denormal_flag(ty, &[a, b]))
}

/// `a COND b` for one lane of type `ty` (the SSE compare predicates).
pub fn compare(env: &mut Env, cond: FloatCond, ty: Type, a: u128, b: u128) -> bool {
    use FloatCond as C;
    let (a, b) = (env.operand(ty, a), env.operand(ty, b));
    let signalling = cond.signals_on_qnan();
    let flags = match (is_snan(ty, a) || is_snan(ty, b), is_nan(ty, a) || is_nan(ty, b)) {
        (true, _) => IE,
        (false, true) if signalling => IE,
        (false, true) => 0,
        (false, false) => denormal_flag(ty, &[a, b]),
    };
    env.raise((0, flags));
    let o = order(ty, a, b);
    let less_or_equal = matches!(o, Some(Ordering::Less | Ordering::Equal));
    match cond {
        C::Eq | C::EqS => o == Some(Ordering::Equal),
        C::Lt | C::LtQ => o == Some(Ordering::Less),
        C::Le | C::LeQ => less_or_equal,
        C::Uno | C::UnoS => o.is_none(),
        C::Une => o != Some(Ordering::Equal),
        C::Nlt | C::NltQ => o != Some(Ordering::Less),
        C::Nle | C::NleQ => !less_or_equal,
        C::Ord => o.is_some(),
    }
}

/// The x87 memory format of the float type `ty`.
fn format(ty: Type) -> Format {
    match ty {
        Type::F32 => Format::F32,
        Type::F64 => Format::F64,
        _ => not_float(ty),
    }
}

/// `fcvt_to_sint.T a, imm`: `ty` is i32, i64 or i32x4 and `operand` the
/// type of `a`. imm bit 0 rounds by MXCSR.RC instead of truncating; for
/// i32x4, imm bit 1 says the source is f64x2 (two results, upper lanes
/// zero), else f32x4.
pub fn to_sint(env: &mut Env, ty: Type, operand: Type, a: u128, imm: u16) -> u128 {
    let (src, count) = match (ty.is_vector(), imm & 2 != 0) {
        (true, true) => (Type::F64, 2),
        (true, false) => (Type::F32, 4),
        (false, _) => (operand.lane_type(), 1),
    };
    let bits = ty.lane_bits();
    let round = if imm & 1 != 0 { env.round() } else { Round::TowardZero };
    let lanes: Vec<u128> = (0..count)
        .map(|i| {
            let x = env.operand(src, lane(a, src.bits(), i));
            let r = x87_value::to_int(x87_value::widen(x as u64, format(src)).value, bits, round);
            env.raise((u128::from(r.value), u32::from(r.flags)))
        })
        .collect();
    from_lanes(bits, lanes)
}

/// `sint_to_f.T a`: scalar, the signed integer `a` of type `operand` to
/// the float `ty`; vector, i32 lanes 0.. of `a` to the float lanes of `ty`
/// (f64x2: lanes 0 and 1, f32x4: all four). Rounded by MXCSR.RC.
pub fn from_sint(env: &mut Env, ty: Type, operand: Type, a: u128) -> u128 {
    let (src_bits, count) = if ty.is_vector() { (32, ty.lanes()) } else { (operand.bits(), 1) };
    let dst = ty.lane_type();
    let round = env.round();
    let lanes: Vec<u128> = (0..count)
        .map(|i| {
            let x = i128::from(sext(lane(a, src_bits, i), src_bits) as i64);
            let r = match dst {
                Type::F32 => with_flags(Single::from_i128_r(x, round)),
                Type::F64 => with_flags(Double::from_i128_r(x, round)),
                _ => not_float(dst),
            };
            env.raise(r)
        })
        .collect();
    from_lanes(dst.bits(), lanes)
}

fn with_flags<T: Float>(r: StatusAnd<T>) -> (u128, u32) {
    (r.value.to_bits(), u32::from(status_flags(r.status)))
}

/// `fconvert.T a`: f32 <-> f64 to the float lanes of `ty`. Scalar, one
/// value; vector, lanes 0 and 1 of the other float shape (f64x2: cvtps2pd;
/// f32x4: cvtpd2ps, upper lanes zero).
pub fn convert(env: &mut Env, ty: Type, a: u128) -> u128 {
    let dst = ty.lane_type();
    let src = if dst == Type::F64 { Type::F32 } else { Type::F64 };
    let count = if ty.is_vector() { 2 } else { 1 };
    let lanes: Vec<u128> = (0..count)
        .map(|i| {
            let r = convert_one(env, src, dst, lane(a, src.bits(), i));
            env.raise(r)
        })
        .collect();
    from_lanes(dst.bits(), lanes)
}

/// One float from `src` to `dst`. A NaN keeps its sign and the top of its
/// payload, and is quieted (IE when it was signalling).
fn convert_one(env: &Env, src: Type, dst: Type, raw: u128) -> (u128, u32) {
    let raw = env.operand(src, raw);
    if is_nan(src, raw) {
        let (from, to) = (mantissa_bits(src), mantissa_bits(dst));
        let payload = raw & mask(from);
        let payload = if to > from { payload << (to - from) } else { payload >> (from - to) };
        let sign = (raw >> (src.bits() - 1)) << (dst.bits() - 1);
        let ie = if is_snan(src, raw) { IE } else { 0 };
        return (sign | exponent_mask(dst) | quiet_bit(dst) | payload, ie);
    }
    let de = denormal_flag(src, &[raw]);
    let wide = x87_value::widen(raw as u64, format(src)).value;
    let r = x87_value::narrow(wide, format(dst), env.fpcw(3));
    env.result(dst, u128::from(r.value), u32::from(r.flags) | de)
}
