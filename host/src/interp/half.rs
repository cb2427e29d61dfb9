//! The F16C conversions between IEEE half precision (f16) and single
//! precision under MXCSR (`fcvt_from_f16`, `fcvt_to_f16`), exact in
//! software: finite values through `rustc_apfloat`'s IEEE half and single
//! (correct rounding in every mode, with the IEEE status), NaNs by the
//! x86 rule (sign and the top of the payload kept, quieted). Their flags
//! go to the op's [`Env`] as the other SSE ops' do.

use aarchx_ir::Type;
use rustc_apfloat::ieee::{Half, Single};
use rustc_apfloat::{Float, FloatConvert, Round, StatusAnd};

use super::float::{Env, DE, IE, UE};
use super::lanes::{from_lanes, lane};
use crate::x87::value::{status_flags, OE, PE};

const F16_SIGN: u32 = 0x8000;
const F16_EXPONENT: u32 = 0x7c00;
const F16_FRACTION: u32 = 0x03ff;
const F16_QUIET: u32 = 0x0200;
const F32_SIGN: u32 = 0x8000_0000;
const F32_EXPONENT: u32 = 0x7f80_0000;
const F32_FRACTION: u32 = 0x007f_ffff;
const F32_QUIET: u32 = 0x0040_0000;
/// How far [`is_tiny`] scales its value up (in powers of two).
const TINY_SCALE: i32 = 10;
/// How many more fraction bits an f32 has than an f16.
const EXTRA_FRACTION: u32 = 13;

/// `fcvt_from_f16.f32x4 a` (see the op).
pub fn from_f16(env: &mut Env, a: u128) -> u128 {
    let lanes: Vec<u128> = (0..4).map(|i| env.raise(widen(lane(a, 16, i) as u32))).collect();
    from_lanes(32, lanes)
}

/// One f16 to f32. MXCSR does not matter: the value is exact, DAZ
/// leaves an f16 denormal as it is and DE is not raised.
fn widen(h: u32) -> (u128, u32) {
    let sign = (h & F16_SIGN) << 16;
    if h & F16_EXPONENT == F16_EXPONENT && h & F16_FRACTION != 0 {
        let ie = if h & F16_QUIET == 0 { IE } else { 0 };
        return (u128::from(sign | F32_EXPONENT | F32_QUIET | (h & F16_FRACTION) << EXTRA_FRACTION), ie);
    }
    let r: Single = Half::from_bits(u128::from(h)).convert(&mut false).value;
    (r.to_bits(), 0)
}

/// `fcvt_to_f16.i16x8 a, imm` (see the op).
pub fn to_f16(env: &mut Env, a: u128, imm: u16) -> u128 {
    let round = if imm & 4 != 0 {
        env.round()
    } else {
        [Round::NearestTiesToEven, Round::TowardNegative, Round::TowardPositive, Round::TowardZero]
            [usize::from(imm & 3)]
    };
    let lanes: Vec<u128> = (0..4)
        .map(|i| {
            let r = narrow(env, lane(a, 32, i) as u32, round);
            env.raise(r)
        })
        .collect();
    from_lanes(16, lanes)
}

/// One f32 to f16, rounded by `round`: an f32 denormal raises DE, or is
/// read as zero under DAZ. A tiny result underflows when inexact, or with
/// underflow unmasked even when exact; FTZ does not flush it.
fn narrow(env: &Env, x: u32, round: Round) -> (u128, u32) {
    let x = env.operand(Type::F32, u128::from(x)) as u32;
    let sign = (x & F32_SIGN) >> 16;
    if x & F32_EXPONENT == F32_EXPONENT && x & F32_FRACTION != 0 {
        let ie = if x & F32_QUIET == 0 { IE } else { 0 };
        return (u128::from(sign | F16_EXPONENT | F16_QUIET | (x & F32_FRACTION) >> EXTRA_FRACTION), ie);
    }
    let de = if x & F32_EXPONENT == 0 && x & F32_FRACTION != 0 { DE } else { 0 };
    let single = Single::from_bits(u128::from(x));
    let r: StatusAnd<Half> = single.convert_r(round, &mut false);
    let mut flags = u32::from(status_flags(r.status)) & !UE | de;
    // An overflow that rounds to the largest finite value is only
    // "inexact" to apfloat: beyond the largest binade it is one.
    if single.is_finite() && single.ilogb() > Half::largest().ilogb() {
        flags |= u32::from(OE | PE);
    }
    if is_tiny(single, round) && (flags & u32::from(PE) != 0 || env.unmasked() & UE != 0) {
        flags |= UE;
    }
    (r.value.to_bits(), flags)
}

/// Whether `x` is tiny as x86 detects it, after rounding: non-zero and,
/// rounded to f16's precision with an unbounded exponent, below the
/// smallest normal f16. apfloat rounds with the exponent bounded (a value
/// just below the smallest normal that is exact at 11 bits rounds to a
/// normal as a denormal, yet is tiny), so the value is rounded scaled up
/// by 2^10 into f16's normal range, where the two agree.
fn is_tiny(x: Single, round: Round) -> bool {
    let scaled: StatusAnd<Half> = x.scalbn(TINY_SCALE).convert_r(round, &mut false);
    let smallest_normal = Half::smallest_normalized().scalbn(TINY_SCALE);
    !x.is_zero() && x.is_finite() && scaled.value.abs() < smallest_normal
}
