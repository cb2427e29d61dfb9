//! x87 arithmetic on 80-bit values: the four operations, square root,
//! round to integer, scale, partial remainders, exponent extraction and
//! comparison, each with the x87's special cases and exception flags.
//! The square root and the remainders are exact integer algorithms (the
//! IEEE library has neither in the x87's form).

use std::cmp::Ordering;

use rustc_apfloat::{Float, Round, Status};

use super::value::{
    self, classify, denormal_flag, exponent, is_negative, nan_operand, nan_operands, rounded, significand, Class, Res,
    F80, IE, INDEFINITE, SIGN, X, ZE,
};

/// The two-operand arithmetic operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bin {
    Add,
    Sub,
    Mul,
    Div,
}

/// `a OP b`, rounded by the control word.
pub fn binary(op: Bin, a: F80, b: F80, fpcw: u16) -> Res<F80> {
    if let Some(n) = nan_operands(a, b) {
        return n;
    }
    let de = denormal_flag(a) | denormal_flag(b);
    let (x, y) = (X::from_bits(a), X::from_bits(b));
    let r = value::rounded_pc(fpcw, |rm| match op {
        Bin::Add => x.add_r(y, rm),
        Bin::Sub => x.sub_r(y, rm),
        Bin::Mul => x.mul_r(y, rm),
        Bin::Div => x.div_r(y, rm),
    });
    if r.flags & IE != 0 {
        return r;
    }
    let quarter = |v: X| v.scalbn(-2);
    let oe = value::missed_overflow(&r, fpcw, || match op {
        Bin::Add => quarter(x).add_r(quarter(y), Round::TowardZero).value,
        Bin::Sub => quarter(x).sub_r(quarter(y), Round::TowardZero).value,
        Bin::Mul => quarter(x).mul_r(y, Round::TowardZero).value,
        Bin::Div => quarter(x).div_r(y, Round::TowardZero).value,
    });
    // Dividing by zero raises ZE alone (no DE for a denormal dividend).
    let de = if r.flags & ZE != 0 { 0 } else { de };
    Res { flags: r.flags | de | if oe { value::OE } else { 0 }, ..r }
}

/// A finite non-zero value as `m * 2^e` with the integer `m`'s top bit set.
fn unpack(x: F80) -> (u64, i32) {
    let m = significand(x);
    let e = i32::from(exponent(x).max(1)) - 16383 - 63;
    let z = m.leading_zeros();
    (m << z, e - z as i32)
}

/// `m * 2^e` rounded to extended in the control word's mode, with
/// `sticky` standing for nonzero bits below `m`, and negated when
/// `negative`. The magnitude is rounded with the mirrored mode, then
/// scaled; the scaling rounds only when the result overflows or is
/// denormal, and the status says so. `precision_control`: the control
/// word's precision applies (fsqrt, not fscale).
fn pack(m: u128, e: i32, sticky: bool, fpcw: u16, negative: bool, precision_control: bool) -> Res<F80> {
    let f = |rm: Round| {
        let rm = if negative { -rm } else { rm };
        let v = X::from_u128_r(m | u128::from(sticky), rm);
        let s = v.value.scalbn_r(e, rm);
        let mut status = v.status;
        let scale = v.value.ilogb() + e;
        if scale > 16383 {
            status |= Status::OVERFLOW | Status::INEXACT;
        } else if s.scalbn(-e).to_bits() != v.value.to_bits() {
            status |= Status::UNDERFLOW | Status::INEXACT;
        } else if scale < -16382 && status.contains(Status::INEXACT) {
            status |= Status::UNDERFLOW;
        }
        status.and(if negative { -s } else { s })
    };
    if precision_control {
        value::rounded_pc(fpcw, f)
    } else {
        rounded(fpcw, f)
    }
}

/// fsqrt: correctly rounded, by the bit-by-bit integer square root of
/// the significand shifted left far enough for 67 result bits.
pub fn sqrt(a: F80, fpcw: u16) -> Res<F80> {
    if let Some(n) = nan_operand(a) {
        return n;
    }
    match classify(a) {
        Class::Zero => return Res::exact(a),
        _ if is_negative(a) => return Res::invalid(INDEFINITE),
        Class::Infinity => return Res::exact(a),
        _ => {}
    }
    let de = denormal_flag(a);
    let (m, e) = unpack(a);
    // N = m * 2^s with e - s even and N of 64 + s bits; its root has
    // (64 + s) / 2 >= 67 bits.
    let s = if (e - 70).rem_euclid(2) == 0 { 70 } else { 71 };
    let total = 64 + s as u32;
    let pairs = total.div_ceil(2);
    let bit = |k: u32| -> u128 {
        // Bit k of N (m shifted left by s).
        if k < s as u32 || k - s as u32 >= 64 {
            0
        } else {
            u128::from(m >> (k - s as u32) & 1)
        }
    };
    let (mut root, mut rem) = (0u128, 0u128);
    for p in (0..pairs).rev() {
        rem = rem << 2 | bit(2 * p + 1) << 1 | bit(2 * p);
        let trial = root << 2 | 1;
        root <<= 1;
        if rem >= trial {
            rem -= trial;
            root |= 1;
        }
    }
    let r = pack(root, (e - s) / 2, rem != 0, fpcw, false, true);
    Res { flags: r.flags | de, ..r }
}

/// frndint: round to an integer in the control word's mode.
pub fn rndint(a: F80, fpcw: u16) -> Res<F80> {
    if let Some(n) = nan_operand(a) {
        return n;
    }
    let de = denormal_flag(a);
    let r = rounded(fpcw, |rm| X::from_bits(a).round_to_integral(rm));
    Res { flags: r.flags | de, ..r }
}

/// fscale: `a * 2^trunc(b)`.
pub fn scale(a: F80, b: F80, fpcw: u16) -> Res<F80> {
    if let Some(n) = nan_operands(a, b) {
        return n;
    }
    let de = denormal_flag(a) | denormal_flag(b);
    let (ca, cb) = (classify(a), classify(b));
    if cb == Class::Infinity {
        // a * 2^(+inf) is infinite unless a is zero; a * 2^(-inf) is zero
        // unless a is infinite.
        let (invalid, value) = if is_negative(b) {
            (ca == Class::Infinity, a & SIGN)
        } else {
            (ca == Class::Zero, a & SIGN | 0x7fff_8000_0000_0000_0000)
        };
        if invalid {
            return Res::invalid(INDEFINITE);
        }
        return Res { value, flags: de, c1: false };
    }
    if matches!(ca, Class::Zero | Class::Infinity) {
        return Res { value: a, flags: de, c1: false };
    }
    let n = X::from_bits(b).round_to_integral(Round::TowardZero).value.to_i128(32).value;
    let n = n.clamp(-70_000, 70_000) as i32;
    let (m, e) = unpack(a);
    let r = pack(u128::from(m), e + n, false, fpcw, is_negative(a), false);
    Res { flags: r.flags | de, ..r }
}

/// fxtract: (exponent, significand) of `a`, the significand with `a`'s
/// sign in [1, 2).
pub fn xtract(a: F80) -> (Res<F80>, F80) {
    if let Some(n) = nan_operand(a) {
        return (n, n.value);
    }
    match classify(a) {
        Class::Zero => {
            let ninf = SIGN | 0x7fff_8000_0000_0000_0000;
            (Res { value: ninf, flags: ZE, c1: false }, a)
        }
        Class::Infinity => (Res::exact(a & !SIGN), a),
        _ => {
            let de = denormal_flag(a);
            let (m, e) = unpack(a);
            let exp = X::from_i128(i128::from(e + 63)).value.to_bits();
            let sig = a & SIGN | 0x3fff << 64 | F80::from(m);
            (Res { value: exp, flags: de, c1: false }, sig)
        }
    }
}

/// The outcome of fprem/fprem1: the (partial) remainder, whether the
/// reduction is partial (C2), and otherwise the quotient (its low three
/// bits go to C0, C3 and C1); no quotient for a NaN or invalid result.
pub struct Rem {
    pub res: Res<F80>,
    pub partial: bool,
    pub quotient: Option<u64>,
}

/// fprem (`nearest` false: truncated quotient) and fprem1 (quotient
/// rounded to nearest even). An exponent difference of 64 or more is
/// reduced partially, by a quotient of 32 to 63 bits.
pub fn prem(a: F80, b: F80, nearest: bool) -> Rem {
    let done = |res, quotient| Rem { res, partial: false, quotient };
    if let Some(n) = nan_operands(a, b) {
        return done(n, None);
    }
    let de = denormal_flag(a) | denormal_flag(b);
    let (ca, cb) = (classify(a), classify(b));
    if ca == Class::Infinity || cb == Class::Zero {
        return done(Res::invalid(INDEFINITE), None);
    }
    if ca == Class::Zero || cb == Class::Infinity {
        return done(Res { value: a, flags: de, c1: false }, Some(0));
    }
    let (ma, ea) = unpack(a);
    let (mb, mut eb) = unpack(b);
    let diff = ea - eb;
    let partial = diff >= 64;
    if partial {
        // Reduce by a truncated quotient of 32 + diff % 32 bits.
        eb += diff - (32 + diff % 32);
    }
    let d = ea - eb;
    let (q, r, er) = if d < 0 {
        (0u128, u128::from(ma), ea)
    } else {
        let n = u128::from(ma) << d;
        (n / u128::from(mb), n % u128::from(mb), eb)
    };
    // r * 2^er is the truncated remainder, below |b| = bb * 2^er. When
    // b's exponent is 2 or more above a's, 2|a| < |b| and nothing rounds.
    let (mut q, mut r, mut negate) = (q, r, false);
    let bb = match d {
        0.. => Some(u128::from(mb)),
        -1 => Some(u128::from(mb) << 1),
        _ => None,
    };
    if let (true, false, Some(bb)) = (nearest, partial, bb) {
        let twice = r << 1;
        if twice > bb || (twice == bb && q & 1 == 1) {
            q += 1;
            r = bb - r;
            negate = true;
        }
    }
    let sign = is_negative(a) != negate;
    let value = if r == 0 {
        a & SIGN
    } else {
        // Exact: r has at most 64 significant bits.
        let v = X::from_u128(r).value.scalbn(er);
        let v = if sign { -v } else { v };
        v.to_bits()
    };
    let res = Res { value, flags: de, c1: false };
    Rem { res, partial, quotient: Some(if partial { 0 } else { q as u64 }) }
}

/// Compares `a` with `b`: `None` when unordered. `quiet_nan_ok` (fucom)
/// makes only a signalling NaN invalid.
pub fn compare(a: F80, b: F80, quiet_nan_ok: bool) -> (Option<Ordering>, u16) {
    let (ca, cb) = (classify(a), classify(b));
    if ca == Class::Unsupported || cb == Class::Unsupported {
        return (None, IE);
    }
    if ca == Class::Nan || cb == Class::Nan {
        let snan = super::value::is_snan(a) || super::value::is_snan(b);
        return (None, if snan || !quiet_nan_ok { IE } else { 0 });
    }
    let de = denormal_flag(a) | denormal_flag(b);
    (X::from_bits(a).partial_cmp(&X::from_bits(b)), de)
}
