//! Whole-vector ops, those that move data between lanes or change the lane
//! shape: splat, lane extract and insert, sign-bit masks, shuffles,
//! interleaves, saturating narrows, byte shifts and the widening
//! multiply-add, sum-of-differences and even-lane multiply of SSE2, the
//! byte table lookup of SSSE3.
//! `ty` is always the op's type, which names the lane shape.

use aarchx_ir::Type;

use super::int::saturate_signed;
use super::lanes::{from_lanes, lane, mask, sext};

/// `splat.T x`: every lane set to `x`.
pub fn splat(ty: Type, x: u128) -> u128 {
    from_lanes(ty.lane_bits(), (0..ty.lanes()).map(|_| x))
}

/// `insert_lane.T v, x, i`: `v` with lane `i` replaced by `x`.
pub fn insert_lane(ty: Type, v: u128, x: u128, i: u32) -> u128 {
    let bits = ty.lane_bits();
    let at = bits * i;
    (v & !(mask(bits) << at)) | ((x & mask(bits)) << at)
}

/// `movmsk.T v`: bit i is the top bit of lane i.
pub fn movmsk(ty: Type, v: u128) -> u128 {
    let bits = ty.lane_bits();
    from_lanes(1, (0..ty.lanes()).map(|i| lane(v, bits, i) >> (bits - 1)))
}

/// `shuffle.T v, imm`: a four-lane group permuted by the 2-bit fields of
/// imm, lane j of the group taking lane `imm >> 2j & 3`. Four-lane shapes
/// permute the whole vector (pshufd); i16x8 permutes its high four lanes
/// if imm bit 8 is set (pshufhw), else its low four (pshuflw), and keeps
/// the other four.
pub fn shuffle(ty: Type, v: u128, imm: u16) -> u128 {
    let (bits, n) = (ty.lane_bits(), ty.lanes());
    assert!(n == 4 || n == 8, "shuffle.{ty}: no such shuffle");
    let base = if n == 8 && imm & 0x100 != 0 { 4 } else { 0 };
    from_lanes(
        bits,
        (0..n).map(|j| match j.checked_sub(base) {
            Some(k) if k < 4 => lane(v, bits, base + u32::from(imm >> (2 * k)) % 4),
            _ => lane(v, bits, j),
        }),
    )
}

/// `shuffle2.T a, b, imm`: the low half of the lanes from `a`, the high
/// half from `b`, lane j picked by field j of imm (2-bit fields for four
/// lanes, shufps; 1-bit fields for two, shufpd).
pub fn shuffle2(ty: Type, a: u128, b: u128, imm: u16) -> u128 {
    let (bits, n) = (ty.lane_bits(), ty.lanes());
    assert!(n == 2 || n == 4, "shuffle2.{ty}: no such shuffle");
    let field = n.trailing_zeros();
    from_lanes(
        bits,
        (0..n).map(|j| {
            let from = if j < n / 2 { a } else { b };
            lane(from, bits, u32::from(imm >> (field * j)) % n)
        }),
    )
}

/// `unpack_lo.T` / `unpack_hi.T a, b`: the low (or high) halves of `a` and
/// `b` interleaved, `a`'s lane first.
pub fn unpack(ty: Type, a: u128, b: u128, high: bool) -> u128 {
    let (bits, n) = (ty.lane_bits(), ty.lanes());
    let base = if high { n / 2 } else { 0 };
    from_lanes(bits, (0..n).map(|j| lane(if j % 2 == 0 { a } else { b }, bits, base + j / 2)))
}

/// `narrow_s.T` / `narrow_u.T a, b`: the signed lanes of twice T's lane
/// width, `a`'s then `b`'s, saturated to T's lanes as signed (packss*) or
/// unsigned (packus*) numbers.
pub fn narrow(ty: Type, a: u128, b: u128, signed: bool) -> u128 {
    let bits = ty.lane_bits();
    let wide = 2 * bits;
    let half = 128 / wide;
    from_lanes(
        bits,
        (0..2 * half).map(|j| {
            let x = sext(lane(if j < half { a } else { b }, wide, j % half), wide);
            if signed {
                saturate_signed(x, bits)
            } else {
                x.clamp(0, mask(bits) as i128) as u128
            }
        }),
    )
}

/// `byte_shl` / `byte_shr v, n`: the whole register shifted by `n` bytes
/// (16 or more give 0).
pub fn byte_shift(v: u128, n: u16, left: bool) -> u128 {
    match (n >= 16, left) {
        (true, _) => 0,
        (false, true) => v << (8 * n),
        (false, false) => v >> (8 * n),
    }
}

/// `mul_add_pairs.T a, b` (pmaddwd): signed lanes of half T's lane width
/// multiplied, adjacent products summed into T's lanes, wrapping.
pub fn mul_add_pairs(ty: Type, a: u128, b: u128) -> u128 {
    let half = ty.lane_bits() / 2;
    let product = |i: u32| sext(lane(a, half, i), half) * sext(lane(b, half, i), half);
    from_lanes(ty.lane_bits(), (0..ty.lanes()).map(|i| product(2 * i).wrapping_add(product(2 * i + 1)) as u128))
}

/// `sum_abs_diff.T a, b` (psadbw): per lane of T, the sum of the absolute
/// differences of the unsigned bytes it covers.
pub fn sum_abs_diff(ty: Type, a: u128, b: u128) -> u128 {
    let per_lane = ty.lane_bits() / 8;
    from_lanes(
        ty.lane_bits(),
        (0..ty.lanes())
            .map(|i| (i * per_lane..(i + 1) * per_lane).map(|j| lane(a, 8, j).abs_diff(lane(b, 8, j))).sum()),
    )
}

/// `mul_even_u.T a, b` (pmuludq): the even unsigned lanes of half T's lane
/// width multiplied into T's lanes.
pub fn mul_even_u(ty: Type, a: u128, b: u128) -> u128 {
    let half = ty.lane_bits() / 2;
    from_lanes(ty.lane_bits(), (0..ty.lanes()).map(|i| lane(a, half, 2 * i) * lane(b, half, 2 * i)))
}

/// `shuffle_bytes a, b` (pshufb): byte i is byte `b[i] & 15` of `a`, or
/// zero when the top bit of `b[i]` is set.
pub fn shuffle_bytes(a: u128, b: u128) -> u128 {
    from_lanes(
        8,
        (0..16).map(|i| {
            let sel = lane(b, 8, i);
            if sel & 0x80 != 0 {
                0
            } else {
                lane(a, 8, (sel & 15) as u32)
            }
        }),
    )
}
