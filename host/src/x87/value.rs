//! 80-bit extended values as the x87 keeps them: classification, the
//! x87's NaN rules, and conversions between the register format and the
//! memory formats (f32, f64, integers), rounded by the control word.
//! Finite arithmetic is `rustc_apfloat`'s `X87DoubleExtended`, which
//! rounds correctly in every IEEE mode and reports the IEEE exceptions.

use rustc_apfloat::ieee::{Double, Single, X87DoubleExtended};
use rustc_apfloat::{Float, FloatConvert, Round, Status, StatusAnd};

/// An 80-bit extended value in the low bits.
pub type F80 = u128;
/// The arithmetic type.
pub type X = X87DoubleExtended;

pub const SIGN: F80 = 1 << 79;
const INT_BIT: u64 = 1 << 63;
const QUIET: u64 = 1 << 62;
/// The "real indefinite" QNaN the x87 produces for a masked invalid operation.
pub const INDEFINITE: F80 = 0xffff_c000_0000_0000_0000;

/// Exception flags of the status word.
pub const IE: u16 = 0x01;
pub const DE: u16 = 0x02;
pub const ZE: u16 = 0x04;
pub const OE: u16 = 0x08;
pub const UE: u16 = 0x10;
pub const PE: u16 = 0x20;

/// The classes of fxam (and of every operation's special cases).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Encodings the x87 does not support (unnormals, pseudo-NaNs and
    /// pseudo-infinities): an invalid operand.
    Unsupported,
    Nan,
    Normal,
    Infinity,
    Zero,
    Denormal,
}

pub fn exponent(x: F80) -> u16 {
    (x >> 64) as u16 & 0x7fff
}

pub fn significand(x: F80) -> u64 {
    x as u64
}

pub fn is_negative(x: F80) -> bool {
    x & SIGN != 0
}

pub fn classify(x: F80) -> Class {
    let (e, m) = (exponent(x), significand(x));
    match e {
        0 if m == 0 => Class::Zero,
        0 => Class::Denormal,
        0x7fff if m & INT_BIT == 0 => Class::Unsupported,
        0x7fff if m << 1 == 0 => Class::Infinity,
        0x7fff => Class::Nan,
        _ if m & INT_BIT == 0 => Class::Unsupported,
        _ => Class::Normal,
    }
}

pub fn is_nan(x: F80) -> bool {
    classify(x) == Class::Nan
}

pub fn is_snan(x: F80) -> bool {
    is_nan(x) && significand(x) & QUIET == 0
}

fn quiet(x: F80) -> F80 {
    x | F80::from(QUIET)
}

/// DE when `x` is a denormal operand.
pub fn denormal_flag(x: F80) -> u16 {
    if classify(x) == Class::Denormal {
        DE
    } else {
        0
    }
}

/// The x87 rounding mode of a control word.
pub fn rounding(fpcw: u16) -> Round {
    match fpcw >> 10 & 3 {
        0 => Round::NearestTiesToEven,
        1 => Round::TowardNegative,
        2 => Round::TowardPositive,
        _ => Round::TowardZero,
    }
}

/// An operation's result: value, exception flags, and C1 (set when the
/// result was rounded up in magnitude).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Res<T> {
    pub value: T,
    pub flags: u16,
    pub c1: bool,
}

impl<T> Res<T> {
    pub fn exact(value: T) -> Res<T> {
        Res { value, flags: 0, c1: false }
    }

    pub fn invalid(value: T) -> Res<T> {
        Res { value, flags: IE, c1: false }
    }
}

/// The exception flags of an apfloat status.
pub fn status_flags(s: Status) -> u16 {
    let mut f = 0;
    if s.contains(Status::INVALID_OP) {
        f |= IE;
    }
    if s.contains(Status::DIV_BY_ZERO) {
        f |= ZE;
    }
    if s.contains(Status::OVERFLOW) {
        f |= OE;
    }
    if s.contains(Status::UNDERFLOW) {
        f |= UE;
    }
    if s.contains(Status::INEXACT) {
        f |= PE;
    }
    f
}

/// Runs a rounded computation `f` in the control word's mode and turns
/// it into a result: an invalid operation gives the indefinite NaN, an
/// inexact one sets C1 when the value is larger in magnitude than the
/// same computation truncated toward zero.
pub fn rounded(fpcw: u16, f: impl Fn(Round) -> StatusAnd<X>) -> Res<F80> {
    let r = f(rounding(fpcw));
    if r.status.contains(Status::INVALID_OP) {
        return Res::invalid(INDEFINITE);
    }
    let value = r.value.to_bits();
    let c1 = r.status.contains(Status::INEXACT) && f(Round::TowardZero).value.to_bits() != value;
    Res { value, flags: status_flags(r.status), c1 }
}

/// As [`rounded`], for the operations the control word's precision
/// control applies to (add, subtract, multiply, divide, square root):
/// with 24- or 53-bit precision the result is rounded once to that many
/// significant bits (the exponent range stays extended). The result
/// truncated toward zero at 64 bits, with "inexact" as the sticky bit,
/// holds every bit that rounding needs. A denormal result is rounded at
/// the same bit of the significand field (as the hardware does).
pub fn rounded_pc(fpcw: u16, f: impl Fn(Round) -> StatusAnd<X>) -> Res<F80> {
    let bits = match fpcw >> 8 & 3 {
        0 => 24,
        2 => 53,
        _ => return rounded(fpcw, f),
    };
    let tz = f(Round::TowardZero);
    if tz.status.contains(Status::INVALID_OP) {
        return Res::invalid(INDEFINITE);
    }
    let t = tz.value.to_bits();
    let tiny = match classify(t) {
        Class::Normal => false,
        Class::Denormal => true,
        // Underflowed below the smallest extended denormal.
        Class::Zero if tz.status.contains(Status::INEXACT) => true,
        _ => return rounded(fpcw, f),
    };
    let negative = is_negative(t);
    let sticky = tz.status.contains(Status::INEXACT);
    let drop = 64 - bits;
    let m = significand(t);
    let (kept, rest, half) = (m >> drop, m & ((1 << drop) - 1), 1u64 << (drop - 1));
    let up = match fpcw >> 10 & 3 {
        0 => rest > half || (rest == half && (sticky || kept & 1 == 1)),
        1 => negative && (rest != 0 || sticky),
        2 => !negative && (rest != 0 || sticky),
        _ => false,
    };
    let inexact = rest != 0 || sticky;
    let (mut kept, mut exp) = (kept + u64::from(up), exponent(t));
    if kept >> bits != 0 {
        kept >>= 1;
        exp += 1;
    } else if tiny && kept >> (bits - 1) != 0 {
        // A denormal rounded up to the smallest normal.
        exp = 1;
    }
    let sign = t & SIGN;
    // Underflow: inexact and still denormal after rounding.
    let mut flags = match (inexact, exp == 0) {
        (false, _) => 0,
        (true, false) => PE,
        (true, true) => PE | UE,
    };
    let value = if exp >= 0x7fff {
        flags |= OE | PE;
        // Overflow: infinity, or the largest value of this precision when
        // rounding toward zero or away from the result's sign.
        let to_infinity = match fpcw >> 10 & 3 {
            0 => true,
            1 => negative,
            2 => !negative,
            _ => false,
        };
        if to_infinity {
            sign | 0x7fff_8000_0000_0000_0000
        } else {
            sign | 0x7ffe << 64 | F80::from(u64::MAX << drop)
        }
    } else {
        sign | F80::from(exp) << 64 | F80::from(kept << drop)
    };
    let c1 = inexact && value & !SIGN > t & !SIGN;
    Res { value, flags, c1 }
}

/// Whether a result that rounded to the largest finite value overflowed:
/// apfloat reports such an overflow (toward zero, or against the rounding
/// direction) as inexact only, and so does a reduced-precision rounding
/// of its result. `scaled_toward_zero` is the operation on
/// operands scaled by 2^-2, truncated: it overflowed when that is at least
/// 2^16382.
pub fn missed_overflow(r: &Res<F80>, fpcw: u16, scaled_toward_zero: impl Fn() -> X) -> bool {
    let drop = match fpcw >> 8 & 3 {
        0 => 40,
        2 => 11,
        _ => 0,
    };
    let largest = 0x7ffe << 64 | F80::from(u64::MAX << drop);
    r.flags & PE != 0 && r.flags & OE == 0 && r.value & !SIGN == largest && {
        let s = scaled_toward_zero();
        s.is_finite() && s.ilogb() >= 16382 || s.is_infinite()
    }
}

/// The x87 rule for operations with a NaN or unsupported operand: an
/// unsupported one is invalid (indefinite result); a signalling NaN is
/// invalid and quieted; of two NaNs a quiet one wins over a signalling
/// one, else the larger significand, else the positive one. `None` when
/// neither operand is one.
pub fn nan_operands(a: F80, b: F80) -> Option<Res<F80>> {
    if classify(a) == Class::Unsupported || classify(b) == Class::Unsupported {
        return Some(Res::invalid(INDEFINITE));
    }
    let flags = if is_snan(a) || is_snan(b) { IE } else { 0 };
    let value = match (is_nan(a), is_nan(b)) {
        (false, false) => return None,
        (true, false) => a,
        (false, true) => b,
        // A quiet NaN wins over a signalling one.
        _ if is_snan(a) != is_snan(b) => {
            if is_snan(a) {
                b
            } else {
                a
            }
        }
        // Else the larger significand, and on a tie the positive one.
        _ => match significand(a).cmp(&significand(b)) {
            core::cmp::Ordering::Less => b,
            core::cmp::Ordering::Greater => a,
            core::cmp::Ordering::Equal if is_negative(a) => b,
            core::cmp::Ordering::Equal => a,
        },
    };
    Some(Res { value: quiet(value), flags, c1: false })
}

/// The single-operand version of [`nan_operands`].
pub fn nan_operand(a: F80) -> Option<Res<F80>> {
    match classify(a) {
        Class::Unsupported => Some(Res::invalid(INDEFINITE)),
        Class::Nan => Some(Res { value: quiet(a), flags: if is_snan(a) { IE } else { 0 }, c1: false }),
        _ => None,
    }
}

/// A memory float format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    F32,
    F64,
}

impl Format {
    fn fraction_bits(self) -> u32 {
        match self {
            Format::F32 => 23,
            Format::F64 => 52,
        }
    }

    fn exponent_mask(self) -> u64 {
        match self {
            Format::F32 => 0xff,
            Format::F64 => 0x7ff,
        }
    }

    fn bits(self) -> u32 {
        match self {
            Format::F32 => 32,
            Format::F64 => 64,
        }
    }
}

/// A memory float widened to extended, exactly. A NaN keeps its payload
/// and stays signalling (the operation decides what that raises); DE is
/// set for a denormal.
pub fn widen(bits: u64, fmt: Format) -> Res<F80> {
    let fb = fmt.fraction_bits();
    let sign = bits >> (fmt.bits() - 1) & 1;
    let exp = bits >> fb & fmt.exponent_mask();
    let frac = bits & ((1 << fb) - 1);
    if exp == fmt.exponent_mask() && frac != 0 {
        let m = INT_BIT | frac << (63 - fb);
        return Res::exact(F80::from(sign) << 79 | 0x7fff << 64 | F80::from(m));
    }
    let x: X = match fmt {
        Format::F32 => Single::from_bits(u128::from(bits)).convert(&mut false).value,
        Format::F64 => Double::from_bits(u128::from(bits)).convert(&mut false).value,
    };
    let flags = if exp == 0 && frac != 0 { DE } else { 0 };
    Res { value: x.to_bits(), flags, c1: false }
}

/// fld m32/m64: as [`widen`], a signalling NaN raising IE and quieted.
pub fn load_float(bits: u64, fmt: Format) -> Res<F80> {
    let w = widen(bits, fmt);
    match nan_operand(w.value) {
        Some(n) => n,
        None => w,
    }
}

/// st(0) narrowed to a memory float, rounded by the control word.
pub fn narrow(x: F80, fmt: Format, fpcw: u16) -> Res<u64> {
    let fb = fmt.fraction_bits();
    let default_nan = (fmt.exponent_mask() << fb | 1 << (fb - 1)) | 1 << (fmt.bits() - 1);
    match classify(x) {
        Class::Unsupported => return Res::invalid(default_nan),
        Class::Nan => {
            let sign = u64::from(is_negative(x)) << (fmt.bits() - 1);
            let frac = (significand(x) >> (63 - fb)) & ((1 << fb) - 1) | 1 << (fb - 1);
            let flags = if is_snan(x) { IE } else { 0 };
            return Res { value: sign | fmt.exponent_mask() << fb | frac, flags, c1: false };
        }
        _ => {}
    }
    // A denormal source raises no DE here (as the hardware does).
    let ext = X::from_bits(x);
    match fmt {
        Format::F32 => narrow_to::<Single>(ext, fpcw),
        Format::F64 => narrow_to::<Double>(ext, fpcw),
    }
}

fn narrow_to<T: Float>(ext: X, fpcw: u16) -> Res<u64>
where
    X: FloatConvert<T>,
{
    let r: StatusAnd<T> = ext.convert_r(rounding(fpcw), &mut false);
    let value = r.value.to_bits() as u64;
    let toward_zero: StatusAnd<T> = ext.convert_r(Round::TowardZero, &mut false);
    let c1 = r.status.contains(Status::INEXACT) && toward_zero.value.to_bits() as u64 != value;
    let mut flags = status_flags(r.status);
    // An overflow that rounds to the largest finite value is only
    // "inexact" to apfloat: beyond the format's largest binade it is one.
    if ext.is_finite() && ext.ilogb() > T::largest().ilogb() {
        flags |= OE | PE;
    }
    Res { value, flags, c1 }
}

/// st(0) to a signed integer of `bits` bits, rounded by `round`. NaN,
/// infinity or a value out of range is invalid and gives the integer
/// indefinite (only the sign bit set). A denormal raises no DE here.
pub fn to_int(x: F80, bits: u32, round: Round) -> Res<u64> {
    let indefinite = 1u64 << (bits - 1);
    if !matches!(classify(x), Class::Normal | Class::Zero | Class::Denormal) {
        return Res::invalid(indefinite);
    }
    let r = X::from_bits(x).round_to_integral(round);
    let (lo, hi) = (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1);
    let v = r.value.to_i128(128).value;
    if v < lo || v > hi {
        return Res::invalid(indefinite);
    }
    let inexact = r.status.contains(Status::INEXACT);
    let c1 = inexact && r.value.abs().to_bits() > X::from_bits(x).abs().to_bits();
    Res { value: v as u64 & (u64::MAX >> (64 - bits)), flags: if inexact { PE } else { 0 }, c1 }
}

/// An integer, exactly.
pub fn from_int(v: i64) -> F80 {
    X::from_i128(i128::from(v)).value.to_bits()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f64_round_trip_is_exact() {
        for v in [1.0f64, -0.1, f64::MIN_POSITIVE / 4.0, f64::MAX, f64::INFINITY, -0.0] {
            let w = widen(v.to_bits(), Format::F64);
            assert_eq!(narrow(w.value, Format::F64, 0x37f).value, v.to_bits(), "{v}");
        }
    }

    #[test]
    fn one_is_the_textbook_encoding() {
        // 1.0 in the x87 format: biased exponent 0x3fff, integer bit set.
        assert_eq!(widen(1.0f64.to_bits(), Format::F64).value, 0x3fff_8000_0000_0000_0000);
    }
}
