//! Integer vector ops, written lane by lane: lane arithmetic that wraps,
//! saturates and compares per lane, shifts by a scalar amount, and the
//! shape ops SSE needs (shuffles, unpacks, packs, sign masks, byte
//! shifts, the pairwise multiplies and lane moves).

use super::{eval, pack, vop};

const MAX64: u128 = u64::MAX as u128;
const WORDS: u128 = 0x7777_6666_5555_4444_3333_2222_1111_0000;
const BYTES: u128 = 0x0f0e_0d0c_0b0a_0908_0706_0504_0302_0100;

/// Byte lanes with `low` in lanes 0 to 3 and zero above.
fn low_bytes(low: [u128; 4]) -> u128 {
    pack(8, [low[0], low[1], low[2], low[3], 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
}

/// Byte lanes whose lane `i` is `f(i)`.
fn bytes(f: fn(u128) -> u128) -> u128 {
    pack(8, core::array::from_fn::<u128, 16, _>(|i| f(i as u128)))
}

/// `OP xmm0, rcx`: a shift of every lane by one scalar amount.
fn shift(op: &str, v: u128, amount: u128) -> u128 {
    eval(&[("xmm0", v), ("rcx", amount)], &format!("v0 = get xmm0\n v1 = get rcx\n v2 = {op} v0, v1"))
}

#[test]
fn byte_lanes_wrap_saturate_and_compare() {
    let (a, b) = (low_bytes([0xff, 0x7f, 0x80, 0x10]), low_bytes([0x01, 0x01, 0x80, 0x20]));
    assert_eq!(vop("add.i8x16", &[a, b]), low_bytes([0x00, 0x80, 0x00, 0x30]));
    assert_eq!(vop("add_sat_u.i8x16", &[a, b]), low_bytes([0xff, 0x80, 0xff, 0x30]));
    assert_eq!(vop("add_sat_s.i8x16", &[a, b]), low_bytes([0x00, 0x7f, 0x80, 0x30]));
    assert_eq!(vop("sub_sat_u.i8x16", &[a, b]), low_bytes([0xfe, 0x7e, 0x00, 0x00]));
    assert_eq!(vop("avg_u.i8x16", &[a, b]), low_bytes([0x80, 0x40, 0x80, 0x18]));
    assert_eq!(
        vop("icmp.i8x16 eq", &[a, b]),
        pack(8, [0, 0, 0xff, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])
    );
    assert_eq!(vop("icmp.i8x16 sgt", &[a, b]), low_bytes([0, 0xff, 0, 0]));
    assert_eq!(vop("icmp.i8x16 ugt", &[a, b]), low_bytes([0xff, 0xff, 0, 0]));
}

#[test]
fn word_lanes_multiply() {
    let a = pack(16, [0xffff, 0x8000, 0x0100, 3, 0, 0, 0, 0]);
    let b = pack(16, [0xffff, 2, 0x0100, 0xfffe, 0, 0, 0, 0]);
    assert_eq!(vop("mul.i16x8", &[a, b]), pack(16, [1, 0, 0, 0xfffa, 0, 0, 0, 0]));
    assert_eq!(vop("umulh.i16x8", &[a, b]), pack(16, [0xfffe, 1, 1, 2, 0, 0, 0, 0]));
    assert_eq!(vop("smulh.i16x8", &[a, b]), pack(16, [0, 0xffff, 1, 0xffff, 0, 0, 0, 0]));
    assert_eq!(vop("smin.i16x8", &[a, b]), pack(16, [0xffff, 0x8000, 0x0100, 0xfffe, 0, 0, 0, 0]));
    assert_eq!(vop("umax.i16x8", &[a, b]), pack(16, [0xffff, 0x8000, 0x0100, 0xfffe, 0, 0, 0, 0]));
}

#[test]
fn wide_lanes_do_not_carry() {
    let (a, b) = (pack(64, [MAX64, 1]), pack(64, [1, 1]));
    assert_eq!(vop("add.v128", &[a, b]), pack(64, [0, 2]));
    assert_eq!(vop("sub.i64x2", &[b, a]), pack(64, [2, 0]));
    assert_eq!(vop("and_not.v128", &[a, b]), pack(64, [0xffff_ffff_ffff_fffe, 0]));
    assert_eq!(vop("icmp.i32x4 slt", &[pack(32, [0xffff_ffff, 1, 2, 3]), 0]), pack(32, [0xffff_ffff, 0, 0, 0]));
    assert_eq!(vop("neg.i32x4", &[pack(32, [1, 0, 0xffff_ffff, 5])]), pack(32, [0xffff_ffff, 0, 1, 0xffff_fffb]));
    assert_eq!(vop("not.v128", &[0]), u128::MAX);
}

#[test]
fn lanes_of_every_width() {
    assert_eq!(vop("add.i8x16", &[bytes(|i| (i + 0xf8) & 0xff), bytes(|_| 0x10)]), bytes(|i| (i + 0x08) & 0xff));
    assert_eq!(
        vop("sub.i16x8", &[pack(16, [0, 1, 2, 3, 4, 5, 6, 7]), pack(16, [1; 8])]),
        pack(16, [0xffff, 0, 1, 2, 3, 4, 5, 6])
    );
    assert_eq!(vop("mul.i32x4", &[pack(32, [2, 3, 0x8000_0000, 7]), pack(32, [5, 5, 2, 0])]), pack(32, [10, 15, 0, 0]));
    assert_eq!(vop("mul.i64x2", &[pack(64, [1 << 32, 3]), pack(64, [1 << 32, 5])]), pack(64, [0, 15]));
    assert_eq!(
        vop("umulh.i16x8", &[pack(16, [0xffff; 8]), pack(16, [0xffff, 2, 0, 1, 1, 1, 1, 1])]),
        pack(16, [0xfffe, 1, 0, 0, 0, 0, 0, 0])
    );
    assert_eq!(
        vop("smulh.i16x8", &[pack(16, [0x8000; 8]), pack(16, [0x8000, 2, 0, 1, 1, 1, 1, 1])]),
        pack(16, [0x4000, 0xffff, 0, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff])
    );
    assert_eq!(vop("umulh.i64x2", &[pack(64, [MAX64, 2]), pack(64, [MAX64, 3])]), pack(64, [0xffff_ffff_ffff_fffe, 0]));
    assert_eq!(vop("smin.i8x16", &[bytes(|_| 0x80), bytes(|_| 0x7f)]), bytes(|_| 0x80));
    assert_eq!(vop("umax.i64x2", &[pack(64, [1, MAX64]), pack(64, [2, 0])]), pack(64, [2, MAX64]));
    assert_eq!(vop("smax.i64x2", &[pack(64, [1, MAX64]), pack(64, [2, 0])]), pack(64, [2, 0]));
    assert_eq!(vop("avg_u.i8x16", &[bytes(|_| 0xff), bytes(|_| 0xfe)]), bytes(|_| 0xff));
    assert_eq!(vop("add_sat_u.i8x16", &[bytes(|_| 0xf0), bytes(|_| 0x20)]), bytes(|_| 0xff));
    assert_eq!(vop("sub_sat_s.i16x8", &[pack(16, [0x8000; 8]), pack(16, [1; 8])]), pack(16, [0x8000; 8]));
    assert_eq!(vop("and_not.v128", &[u128::MAX, 0xff]), u128::MAX - 0xff);
    assert_eq!(vop("xor.v128", &[u128::MAX, 1]), u128::MAX - 1);
    assert_eq!(
        vop("neg.i32x4", &[pack(32, [1, 0, 2, 0x8000_0000])]),
        pack(32, [0xffff_ffff, 0, 0xffff_fffe, 0x8000_0000])
    );
    assert_eq!(vop("popcnt.i8x16", &[bytes(|i| i)]), pack(8, [0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4]));
    assert_eq!(vop("clz.i32x4", &[pack(32, [0, 1, 0x8000_0000, 0x10])]), pack(32, [32, 31, 0, 27]));
    assert_eq!(
        vop("icmp.i32x4 sgt", &[pack(32, [1, 0xffff_ffff, 5, 5]), pack(32, [0, 0, 5, 4])]),
        pack(32, [0xffff_ffff, 0, 0, 0xffff_ffff])
    );
    assert_eq!(vop("icmp.i8x16 ne", &[bytes(|i| i), bytes(|_| 3)]), bytes(|i| if i == 3 { 0 } else { 0xff }));
    assert_eq!(vop("icmp.i64x2 ult", &[pack(64, [1, MAX64]), pack(64, [2, 0])]), pack(64, [MAX64, 0]));
}

#[test]
fn shifts_by_a_scalar_amount() {
    let v = pack(16, [0x8001, 0x7fff, 1, 0xffff, 0, 0, 0, 0]);
    assert_eq!(shift("shl.i16x8", v, 1), pack(16, [0x0002, 0xfffe, 2, 0xfffe, 0, 0, 0, 0]));
    assert_eq!(shift("shl.i16x8", v, 16), 0);
    assert_eq!(shift("lshr.i16x8", v, 15), pack(16, [1, 0, 0, 1, 0, 0, 0, 0]));
    assert_eq!(shift("ashr.i16x8", v, 20), pack(16, [0xffff, 0, 0, 0xffff, 0, 0, 0, 0]));
    assert_eq!(shift("ashr.i16x8", v, 1), pack(16, [0xc000, 0x3fff, 0, 0xffff, 0, 0, 0, 0]));
    let h = pack(16, [0x8001, 1, 2, 3, 4, 5, 6, 0xffff]);
    assert_eq!(shift("shl.i16x8", h, 4), pack(16, [0x0010, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0xfff0]));
    assert_eq!(shift("shl.i16x8", h, 16), 0);
    assert_eq!(shift("lshr.i16x8", h, 15), pack(16, [1, 0, 0, 0, 0, 0, 0, 1]));
    assert_eq!(shift("ashr.i16x8", h, 20), pack(16, [0xffff, 0, 0, 0, 0, 0, 0, 0xffff]));
    assert_eq!(shift("lshr.i64x2", pack(64, [MAX64, 1 << 63]), 63), pack(64, [1, 1]));
    assert_eq!(shift("lshr.i64x2", pack(64, [MAX64, 1 << 63]), 64), 0);
    assert_eq!(
        shift("ashr.i32x4", pack(32, [0x8000_0000, 0x4000_0000, 0, 0xffff_ffff]), MAX64),
        pack(32, [0xffff_ffff, 0, 0, 0xffff_ffff])
    );
}

#[test]
fn pshufd_and_shufps() {
    let v = pack(32, [0, 0x1111_1111, 0x2222_2222, 0x3333_3333]);
    assert_eq!(vop("shuffle.i32x4, 0x1b", &[v]), pack(32, [0x3333_3333, 0x2222_2222, 0x1111_1111, 0]));
    assert_eq!(vop("shuffle.i32x4, 0xe4", &[v]), v);
    assert_eq!(vop("shuffle.f32x4, 0x00", &[v]), 0);
    assert_eq!(vop("shuffle.i32x4, 0x55", &[v]), pack(32, [0x1111_1111; 4]));
    assert_eq!(vop("shuffle.i32x4, 0x1b", &[pack(32, [0, 1, 2, 3])]), pack(32, [3, 2, 1, 0]));
    let (a, b) = (pack(32, [0xa0, 0xa1, 0xa2, 0xa3]), pack(32, [0xb0, 0xb1, 0xb2, 0xb3]));
    assert_eq!(vop("shuffle2.f32x4, 0x4e", &[a, b]), pack(32, [0xa2, 0xa3, 0xb0, 0xb1]));
    assert_eq!(vop("shuffle2.f32x4, 0x1b", &[a, b]), pack(32, [0xa3, 0xa2, 0xb1, 0xb0]));
    assert_eq!(vop("shuffle2.f32x4, 0x4e", &[pack(32, [0, 1, 2, 3]), pack(32, [4, 5, 6, 7])]), pack(32, [2, 3, 4, 5]));
    let (a, b) = (pack(64, [0xa0, 0xa1]), pack(64, [0xb0, 0xb1]));
    assert_eq!(vop("shuffle2.f64x2, 1", &[a, b]), pack(64, [0xa1, 0xb0]));
    assert_eq!(vop("shuffle2.f64x2, 2", &[a, b]), pack(64, [0xa0, 0xb1]));
    assert_eq!(vop("shuffle2.f64x2, 1", &[pack(64, [0, 1]), pack(64, [2, 3])]), pack(64, [1, 2]));
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
    let w = pack(16, [0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(vop("shuffle.i16x8, 0x11b", &[w]), pack(16, [0, 1, 2, 3, 7, 6, 5, 4]));
    assert_eq!(vop("shuffle.i16x8, 0x1b", &[w]), pack(16, [3, 2, 1, 0, 4, 5, 6, 7]));
}

#[test]
fn unpacks_interleave() {
    let a = BYTES;
    let b = BYTES | 0x1010_1010_1010_1010_1010_1010_1010_1010;
    assert_eq!(vop("unpack_lo.i8x16", &[a, b]), 0x1707_1606_1505_1404_1303_1202_1101_1000);
    assert_eq!(vop("unpack_hi.i8x16", &[a, b]), 0x1f0f_1e0e_1d0d_1c0c_1b0b_1a0a_1909_1808);
    assert_eq!(
        vop("unpack_lo.i8x16", &[bytes(|i| i), bytes(|i| 0x10 + i)]),
        pack(8, [0, 0x10, 1, 0x11, 2, 0x12, 3, 0x13, 4, 0x14, 5, 0x15, 6, 0x16, 7, 0x17])
    );
    let (a, b) = (pack(32, [0xa0, 0xa1, 0xa2, 0xa3]), pack(32, [0xb0, 0xb1, 0xb2, 0xb3]));
    assert_eq!(vop("unpack_lo.i32x4", &[a, b]), pack(32, [0xa0, 0xb0, 0xa1, 0xb1]));
    assert_eq!(vop("unpack_hi.f32x4", &[a, b]), pack(32, [0xa2, 0xb2, 0xa3, 0xb3]));
    let (a, b) = (pack(64, [0xa0, 0xa1]), pack(64, [0xb0, 0xb1]));
    assert_eq!(vop("unpack_lo.i64x2", &[a, b]), pack(64, [0xa0, 0xb0]));
    assert_eq!(vop("unpack_hi.f64x2", &[a, b]), pack(64, [0xa1, 0xb1]));
    assert_eq!(vop("unpack_hi.i64x2", &[pack(64, [1, 2]), pack(64, [3, 4])]), pack(64, [2, 4]));
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
    assert_eq!(vop("narrow_s.i16x8", &[a, b]), pack(16, [0x7fff, 0x8000, 5, 0xfffb, 0x7fff, 0x7fff, 0x8000, 0x8000]));
    let wide = pack(16, [300, 0xfed4, 5, 0x80, 0xff80, 0x7fff, 0x8000, 0]); // 300, -300, 5, 128, -128, ...
    assert_eq!(
        vop("narrow_s.i8x16", &[wide, 0]),
        pack(8, [0x7f, 0x80, 5, 0x7f, 0x80, 0x7f, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    );
    assert_eq!(vop("narrow_u.i8x16", &[0, wide]), pack(8, [0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0, 5, 0x80, 0, 0xff, 0, 0]));
    assert_eq!(
        vop("narrow_s.i16x8", &[pack(32, [0x10000, 0xffff_0000, 7, 0]), 0]),
        pack(16, [0x7fff, 0x8000, 7, 0, 0, 0, 0, 0])
    );
}

#[test]
fn sign_bit_masks() {
    let v = pack(8, [0x80, 0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0, 0, 0, 0, 0x7f, 0x90]);
    assert_eq!(vop("movmsk.i8x16", &[v]), 0x8081);
    assert_eq!(vop("movmsk.i8x16", &[bytes(|i| if i % 3 == 0 { 0x80 } else { 0x7f })]), 0b1001_0010_0100_1001);
    assert_eq!(vop("movmsk.i16x8", &[pack(16, [0x8000, 0, 0, 0xffff, 0, 0, 0, 0x8001])]), 0b1000_1001);
    assert_eq!(vop("movmsk.f32x4", &[pack(32, [0, 0x8000_0000, 0x7fff_ffff, 0xbf80_0000])]), 0b1010);
    assert_eq!(vop("movmsk.f32x4", &[pack(32, [0x8000_0000, 1, 0xffff_ffff, 0x7fff_ffff])]), 0b0101);
    assert_eq!(vop("movmsk.f64x2", &[pack(64, [0x8000_0000_0000_0000, 1])]), 0b01);
    assert_eq!(vop("movmsk.f64x2", &[pack(64, [0, 1 << 63])]), 0b10);
}

#[test]
fn psadbw_pmaddwd_pmuludq() {
    assert_eq!(vop("sum_abs_diff.i64x2", &[BYTES, pack(8, [8; 16])]), pack(64, [36, 28]));
    assert_eq!(vop("sum_abs_diff.i64x2", &[u128::MAX, 0]), pack(64, [2040, 2040]));
    let a = pack(16, [1, 2, 0xfffd, 4, 0x8000, 0x8000, 0x7fff, 0x7fff]);
    let b = pack(16, [5, 6, 7, 0xfff8, 0x8000, 0x8000, 0x7fff, 0x7fff]);
    assert_eq!(vop("mul_add_pairs.i32x4", &[a, b]), pack(32, [17, 0xffff_ffcb, 0x8000_0000, 0x7ffe_0002]));
    assert_eq!(
        vop(
            "mul_add_pairs.i32x4",
            &[pack(16, [1, 2, 3, 4, 0x8000, 0x8000, 0xffff, 1]), pack(16, [5, 6, 7, 8, 0x8000, 0x8000, 2, 3])]
        ),
        pack(32, [17, 53, 0x8000_0000, 1])
    );
    let a = pack(32, [0xffff_ffff, 0x1234_5678, 2, 0x9abc_def0]);
    let b = pack(32, [0xffff_ffff, 0x1111, 3, 0x2222]);
    assert_eq!(vop("mul_even_u.i64x2", &[a, b]), pack(64, [0xffff_fffe_0000_0001, 6]));
    assert_eq!(
        vop("mul_even_u.i64x2", &[pack(32, [0xffff_ffff, 9, 3, 9]), pack(32, [0xffff_ffff, 9, 4, 9])]),
        pack(64, [0xffff_fffe_0000_0001, 12])
    );
}

#[test]
fn byte_shifts() {
    assert_eq!(vop("byte_shl.v128, 3", &[BYTES]), pack(8, [0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]));
    assert_eq!(vop("byte_shr.v128, 3", &[BYTES]), pack(8, [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 0, 0]));
    assert_eq!(vop("byte_shr.v128, 0", &[BYTES]), BYTES);
    assert_eq!(vop("byte_shl.v128, 16", &[BYTES]), 0);
    assert_eq!(vop("byte_shr.v128, 16", &[BYTES]), 0);
    assert_eq!(vop("byte_shl.v128, 3", &[bytes(|i| i + 1)]), bytes(|i| if i < 3 { 0 } else { i - 2 }));
    assert_eq!(vop("byte_shr.v128, 3", &[bytes(|i| i + 1)]), bytes(|i| if i > 12 { 0 } else { i + 4 }));
    assert_eq!(vop("byte_shr.v128, 16", &[u128::MAX]), 0);
    assert_eq!(vop("byte_shl.v128, 0", &[5]), 5);
}

#[test]
fn lanes_in_and_out() {
    let r = eval(&[("rax", 0x1_abcd)], "v0 = get rax\n v1 = trunc.i16 v0\n v2 = splat.i16x8 v1");
    assert_eq!(r, pack(16, [0xabcd; 8]));
    let r = eval(&[("rax", 0x1234)], "v0 = get rax\n v1 = trunc.i16 v0\n v2 = splat.i16x8 v1");
    assert_eq!(r, pack(16, [0x1234; 8]));
    assert_eq!(eval(&[("rax", 7)], "v0 = get rax\n v1 = splat.i64x2 v0"), pack(64, [7, 7]));
    let r = eval(&[("rax", 0x3ff0_0000_0000_0000)], "v0 = get rax\n v1 = bitcast.f64 v0\n v2 = splat.f64x2 v1");
    assert_eq!(r, pack(64, [0x3ff0_0000_0000_0000; 2]));
    assert_eq!(vop("extract_lane.i16x8, 5", &[WORDS]), 0x5555);
    assert_eq!(vop("extract_lane.f32x4, 3", &[WORDS]), 0x7777_6666);
    assert_eq!(vop("extract_lane.i64x2, 1", &[WORDS]), 0x7777_6666_5555_4444);
    assert_eq!(vop("extract_lane.i32x4, 2", &[pack(32, [1, 2, 3, 4])]), 3);
    assert_eq!(vop("extract_lane.i8x16, 15", &[BYTES]), 15);
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
    assert_eq!(
        eval(
            &[("xmm0", 0), ("rax", 0xab)],
            "v0 = get xmm0\n v1 = get rax\n v2 = trunc.i8 v1\n v3 = insert_lane.i8x16 v0, v2, 9"
        ),
        0xab << 72
    );
    assert_eq!(
        eval(&[("xmm0", 0), ("rax", 5)], "v0 = get xmm0\n v1 = get rax\n v3 = insert_lane.i64x2 v0, v1, 1"),
        5 << 64
    );
}

#[test]
fn shuffle_bytes_picks_by_the_low_four_bits_or_clears() {
    // Selectors: reversed, then with bits 4-6 set (ignored) and bit 7 set (zero).
    let sel = pack(8, [15, 14, 13, 12, 0x10, 0x21, 0x42, 0x73, 0x80, 0xff, 0x8f, 3, 3, 3, 0x7f, 0]);
    assert_eq!(
        vop("shuffle_bytes.i8x16", &[BYTES, sel]),
        pack(8, [15, 14, 13, 12, 0, 1, 2, 3, 0, 0, 0, 3, 3, 3, 15, 0])
    );
}
