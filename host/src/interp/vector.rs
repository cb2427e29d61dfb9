//! Whole-vector ops, those that move data between lanes or change the lane
//! shape: splat, lane extract and insert, sign-bit masks, shuffles,
//! interleaves, saturating narrows, byte shifts and the widening
//! multiply-add, sum-of-differences and even-lane multiply of SSE2.
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

#[cfg(test)]
mod tests {
    use crate::interp::testing::{eval, pack, vop};

    const WORDS: u128 = 0x7777_6666_5555_4444_3333_2222_1111_0000;
    const BYTES: u128 = 0x0f0e_0d0c_0b0a_0908_0706_0504_0302_0100;

    #[test]
    fn pshufd_and_shufps() {
        let v = pack(32, [0, 0x1111_1111, 0x2222_2222, 0x3333_3333]);
        assert_eq!(vop("shuffle.i32x4, 0x1b", &[v]), pack(32, [0x3333_3333, 0x2222_2222, 0x1111_1111, 0]));
        assert_eq!(vop("shuffle.i32x4, 0xe4", &[v]), v);
        assert_eq!(vop("shuffle.f32x4, 0x00", &[v]), 0);
        assert_eq!(vop("shuffle.i32x4, 0x55", &[v]), pack(32, [0x1111_1111; 4]));
        let (a, b) = (pack(32, [0xa0, 0xa1, 0xa2, 0xa3]), pack(32, [0xb0, 0xb1, 0xb2, 0xb3]));
        assert_eq!(vop("shuffle2.f32x4, 0x4e", &[a, b]), pack(32, [0xa2, 0xa3, 0xb0, 0xb1]));
        assert_eq!(vop("shuffle2.f32x4, 0x1b", &[a, b]), pack(32, [0xa3, 0xa2, 0xb1, 0xb0]));
        let (a, b) = (pack(64, [0xa0, 0xa1]), pack(64, [0xb0, 0xb1]));
        assert_eq!(vop("shuffle2.f64x2, 1", &[a, b]), pack(64, [0xa1, 0xb0]));
        assert_eq!(vop("shuffle2.f64x2, 2", &[a, b]), pack(64, [0xa0, 0xb1]));
    }

    #[test]
    fn pshuflw_and_pshufhw() {
        assert_eq!(
            vop("shuffle.i16x8, 0x1b", &[WORDS]),
            pack(16, [0x3333, 0x2222, 0x1111, 0x0000, 0x4444, 0x5555, 0x6666, 0x7777])
        );
        assert_eq!(
            vop("shuffle.i16x8, 0x11b", &[WORDS]),
            pack(16, [0x0000, 0x1111, 0x2222, 0x3333, 0x7777, 0x6666, 0x5555, 0x4444])
        );
        assert_eq!(
            vop("shuffle.i16x8, 0x100", &[WORDS]),
            pack(16, [0x0000, 0x1111, 0x2222, 0x3333, 0x4444, 0x4444, 0x4444, 0x4444])
        );
    }

    #[test]
    fn unpacks_interleave() {
        let a = BYTES;
        let b = BYTES | 0x1010_1010_1010_1010_1010_1010_1010_1010;
        assert_eq!(vop("unpack_lo.i8x16", &[a, b]), 0x1707_1606_1505_1404_1303_1202_1101_1000);
        assert_eq!(vop("unpack_hi.i8x16", &[a, b]), 0x1f0f_1e0e_1d0d_1c0c_1b0b_1a0a_1909_1808);
        let (a, b) = (pack(32, [0xa0, 0xa1, 0xa2, 0xa3]), pack(32, [0xb0, 0xb1, 0xb2, 0xb3]));
        assert_eq!(vop("unpack_lo.i32x4", &[a, b]), pack(32, [0xa0, 0xb0, 0xa1, 0xb1]));
        assert_eq!(vop("unpack_hi.f32x4", &[a, b]), pack(32, [0xa2, 0xb2, 0xa3, 0xb3]));
        let (a, b) = (pack(64, [0xa0, 0xa1]), pack(64, [0xb0, 0xb1]));
        assert_eq!(vop("unpack_lo.i64x2", &[a, b]), pack(64, [0xa0, 0xb0]));
        assert_eq!(vop("unpack_hi.f64x2", &[a, b]), pack(64, [0xa1, 0xb1]));
        let b = WORDS | 0x8888_8888_8888_8888_8888_8888_8888_8888;
        assert_eq!(
            vop("unpack_hi.i16x8", &[WORDS, b]),
            pack(16, [0x4444, 0xcccc, 0x5555, 0xdddd, 0x6666, 0xeeee, 0x7777, 0xffff])
        );
    }

    #[test]
    fn packs_saturate() {
        let a = pack(16, [0, 1, 0xff, 0x100, 0xffff, 0x7fff, 0x8000, 0x80]);
        let b = pack(16, [0x42; 8]);
        assert_eq!(
            vop("narrow_u.i8x16", &[a, b]),
            pack(8, [0, 1, 0xff, 0xff, 0, 0xff, 0, 0x80, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42])
        );
        let a = pack(16, [0x80, 0xff80, 0xff7f, 0x7f, 0x8000, 0x7fff, 0xffff, 0]);
        assert_eq!(
            vop("narrow_s.i8x16", &[a, b]),
            pack(8, [0x7f, 0x80, 0x80, 0x7f, 0x80, 0x7f, 0xff, 0, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42])
        );
        let a = pack(32, [0x12345, 0xfffe_dcbb, 5, 0xffff_fffb]);
        let b = pack(32, [0x8000, 0x7fff, 0xffff_8000, 0xffff_7fff]);
        assert_eq!(
            vop("narrow_s.i16x8", &[a, b]),
            pack(16, [0x7fff, 0x8000, 5, 0xfffb, 0x7fff, 0x7fff, 0x8000, 0x8000])
        );
    }

    #[test]
    fn sign_bit_masks() {
        let v = pack(8, [0x80, 0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0, 0, 0, 0, 0x7f, 0x90]);
        assert_eq!(vop("movmsk.i8x16", &[v]), 0x8081);
        assert_eq!(vop("movmsk.f32x4", &[pack(32, [0, 0x8000_0000, 0x7fff_ffff, 0xbf80_0000])]), 0b1010);
        assert_eq!(vop("movmsk.f64x2", &[pack(64, [0x8000_0000_0000_0000, 1])]), 0b01);
    }

    #[test]
    fn psadbw_pmaddwd_pmuludq() {
        assert_eq!(vop("sum_abs_diff.i64x2", &[BYTES, pack(8, [8; 16])]), pack(64, [36, 28]));
        assert_eq!(vop("sum_abs_diff.i64x2", &[u128::MAX, 0]), pack(64, [2040, 2040]));
        let a = pack(16, [1, 2, 0xfffd, 4, 0x8000, 0x8000, 0x7fff, 0x7fff]);
        let b = pack(16, [5, 6, 7, 0xfff8, 0x8000, 0x8000, 0x7fff, 0x7fff]);
        assert_eq!(vop("mul_add_pairs.i32x4", &[a, b]), pack(32, [17, 0xffff_ffcb, 0x8000_0000, 0x7ffe_0002]));
        let a = pack(32, [0xffff_ffff, 0x1234_5678, 2, 0x9abc_def0]);
        let b = pack(32, [0xffff_ffff, 0x1111, 3, 0x2222]);
        assert_eq!(vop("mul_even_u.i64x2", &[a, b]), pack(64, [0xffff_fffe_0000_0001, 6]));
    }

    #[test]
    fn byte_shifts() {
        assert_eq!(vop("byte_shl.v128, 3", &[BYTES]), pack(8, [0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]));
        assert_eq!(vop("byte_shr.v128, 3", &[BYTES]), pack(8, [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 0, 0]));
        assert_eq!(vop("byte_shr.v128, 0", &[BYTES]), BYTES);
        assert_eq!(vop("byte_shl.v128, 16", &[BYTES]), 0);
        assert_eq!(vop("byte_shr.v128, 16", &[BYTES]), 0);
    }

    #[test]
    fn lanes_in_and_out() {
        let r = eval(&[("rax", 0x1_abcd)], "v0 = get rax\n v1 = trunc.i16 v0\n v2 = splat.i16x8 v1");
        assert_eq!(r, pack(16, [0xabcd; 8]));
        let r = eval(&[("rax", 0x3ff0_0000_0000_0000)], "v0 = get rax\n v1 = bitcast.f64 v0\n v2 = splat.f64x2 v1");
        assert_eq!(r, pack(64, [0x3ff0_0000_0000_0000; 2]));
        assert_eq!(vop("extract_lane.i16x8, 5", &[WORDS]), 0x5555);
        assert_eq!(vop("extract_lane.f32x4, 3", &[WORDS]), 0x7777_6666);
        assert_eq!(vop("extract_lane.i64x2, 1", &[WORDS]), 0x7777_6666_5555_4444);
        let r = eval(
            &[("xmm0", WORDS), ("rax", 0x1_dead_beef)],
            "v0 = get xmm0\n v1 = get rax\n v2 = trunc.i32 v1\n v3 = insert_lane.i32x4 v0, v2, 2",
        );
        assert_eq!(r, 0x7777_6666_dead_beef_3333_2222_1111_0000);
        let r = eval(
            &[("xmm0", BYTES), ("rax", 0xff)],
            "v0 = get xmm0\n v1 = get rax\n v2 = trunc.i8 v1\n v3 = insert_lane.i8x16 v0, v2, 15",
        );
        assert_eq!(r, 0xff0e_0d0c_0b0a_0908_0706_0504_0302_0100);
    }
}
