//! Scalar integer ops: tables of `(op.type, inputs, expected)` for
//! arithmetic, shifts, rotates, division, high multiplies, min/max and
//! saturation, bit counts and compares, then width changes, select and
//! the i128 ops the lifter emits for wide division.

use super::{eval, table};

const MAX64: u128 = u64::MAX as u128;

/// `OP.T rax, rcx` on the registers truncated to T; `op` is the op with
/// its type and any condition (`add.i8`, `icmp.i16 ult`).
fn binary(op: &str, (a, b): (u128, u128)) -> u128 {
    let ty = op.split(['.', ' ']).nth(1).expect("op.type");
    let body = if ty == "i64" {
        format!("v0 = get rax\n v1 = get rcx\n v2 = {op} v0, v1")
    } else {
        format!("v0 = get rax\n v1 = get rcx\n v2 = trunc.{ty} v0\n v3 = trunc.{ty} v1\n v4 = {op} v2, v3")
    };
    eval(&[("rax", a), ("rcx", b)], &body)
}

/// `OP.T rax` on the register truncated to T (`neg.i32`).
fn unary(op: &str, a: u128) -> u128 {
    let ty = op.split('.').nth(1).expect("op.type");
    let body = if ty == "i64" {
        format!("v0 = get rax\n v1 = {op} v0")
    } else {
        format!("v0 = get rax\n v1 = trunc.{ty} v0\n v2 = {op} v1")
    };
    eval(&[("rax", a)], &body)
}

#[test]
fn arithmetic_wraps_at_the_width() {
    table(
        binary,
        &[
            ("add.i8", (0xff, 0x02), 0x01),
            ("sub.i8", (0x00, 0x01), 0xff),
            ("mul.i8", (0x10, 0x11), 0x10),
            ("mul.i16", (0x1234, 0x100), 0x3400),
            ("add.i32", (0xffff_ffff, 2), 1),
            ("add.i64", (MAX64, 1), 0),
            ("sub.i64", (0, 1), MAX64),
            ("mul.i64", (0x1_0000_0001, 0x1_0000_0001), 0x2_0000_0001),
            ("and_not.i64", (0xff, 0x0f), 0xf0),
            ("xor.i64", (0xff, 0x0f), 0xf0),
            ("or.i64", (0xf0, 0x0f), 0xff),
            ("and.i8", (0x1ff, 0x0f), 0x0f),
        ],
    );
    table(unary, &[("neg.i32", 1, 0xffff_ffff), ("not.i32", 0x0f0f_0f0f, 0xf0f0_f0f0), ("not.i1", 1, 0)]);
}

#[test]
fn shifts_past_the_width() {
    table(
        binary,
        &[
            ("shl.i8", (0x81, 1), 0x02),
            ("shl.i8", (0x81, 8), 0x00),
            ("lshr.i8", (0x80, 7), 0x01),
            ("lshr.i8", (0x80, 8), 0x00),
            ("ashr.i8", (0x80, 3), 0xf0),
            ("ashr.i8", (0x80, 200), 0xff),
            ("ashr.i8", (0x40, 200), 0x00),
            ("shl.i16", (0x8001, 15), 0x8000),
            ("ashr.i32", (0x8000_0000, 31), 0xffff_ffff),
            ("shl.i32", (1, 32), 0),
            ("shl.i64", (1, 63), 0x8000_0000_0000_0000),
            ("shl.i64", (1, 64), 0),
            // The amount is unsigned: a huge one is past the width, not negative.
            ("lshr.i64", (0x8000_0000_0000_0000, MAX64), 0),
            ("ashr.i64", (0x8000_0000_0000_0000, 63), MAX64),
            ("ashr.i64", (0x8000_0000_0000_0000, 1000), MAX64),
        ],
    );
}

#[test]
fn shift_amount_of_another_type() {
    let r =
        eval(&[("rax", 0x1234), ("rcx", 4)], "v0 = get rax\n v1 = get rcx\n v2 = trunc.i8 v1\n v3 = shl.i64 v0, v2");
    assert_eq!(r, 0x12340);
}

#[test]
fn rotates_modulo_the_width() {
    table(
        binary,
        &[
            ("rotl.i8", (0x81, 1), 0x03),
            ("rotl.i8", (0x81, 9), 0x03),
            ("rotr.i8", (0x81, 1), 0xc0),
            ("rotr.i8", (0x81, 8), 0x81),
            ("rotl.i16", (0x8001, 4), 0x0018),
            ("rotr.i32", (1, 4), 0x1000_0000),
            ("rotl.i32", (0x8000_0001, 33), 0x0000_0003),
            ("rotr.i64", (1, 1), 0x8000_0000_0000_0000),
            ("rotl.i64", (1, 0x1_0000_0001), 2),
        ],
    );
}

#[test]
fn division_signed_and_unsigned() {
    table(
        binary,
        &[
            ("udiv.i8", (0xfe, 0x02), 0x7f),
            ("sdiv.i8", (0xfe, 0x02), 0xff), // -2 / 2 = -1
            ("sdiv.i8", (0xf9, 0x02), 0xfd), // -7 / 2 = -3 (toward zero)
            ("srem.i8", (0xf9, 0x02), 0xff), // -7 % 2 = -1
            ("urem.i8", (0xf9, 0x02), 0x01),
            ("sdiv.i32", (0xffff_fff6, 3), 0xffff_fffd), // -10 / 3 = -3
            ("srem.i32", (0xffff_fff6, 3), 0xffff_ffff), // -10 % 3 = -1
            ("udiv.i64", (MAX64, 2), 0x7fff_ffff_ffff_ffff),
            ("srem.i64", (7, MAX64), 0), // 7 % -1
            // Impossible after the lifter's checks (it traps first), but
            // no panic: a zero divisor or a signed overflow gives 0.
            ("udiv.i8", (5, 0), 0),
            ("urem.i8", (5, 0), 0),
            ("srem.i32", (5, 0), 0),
            ("urem.i64", (5, 0), 0),
            ("sdiv.i8", (0x80, 0xff), 0),
        ],
    );
}

#[test]
fn high_multiplies() {
    table(
        binary,
        &[
            ("umulh.i64", (MAX64, MAX64), 0xffff_ffff_ffff_fffe),
            ("smulh.i64", (MAX64, MAX64), 0), // -1 * -1 = 1
            ("smulh.i64", (MAX64, 2), MAX64), // -1 * 2 = -2
            ("umulh.i8", (0x80, 0x04), 0x02),
            ("smulh.i8", (0x80, 0x04), 0xfe), // -128 * 4 = -512 = 0xfe00
            ("umulh.i8", (0xff, 0xff), 0xfe),
            ("smulh.i8", (0x80, 0x80), 0x40),
            ("smulh.i16", (0xffff, 0x0002), 0xffff),
            ("umulh.i32", (0xffff_ffff, 0x10), 0xf),
        ],
    );
}

#[test]
fn min_max_average_saturation() {
    table(
        binary,
        &[
            ("umin.i8", (0x80, 0x7f), 0x7f),
            ("smin.i8", (0x80, 0x7f), 0x80),
            ("umax.i8", (0x80, 0x7f), 0x80),
            ("smax.i8", (0x80, 0x7f), 0x7f),
            ("smin.i64", (MAX64, 1), MAX64),
            ("avg_u.i8", (0xff, 0xfe), 0xff),
            ("avg_u.i8", (0x01, 0x02), 0x02),
            ("avg_u.i64", (MAX64, MAX64), MAX64),
            ("add_sat_u.i8", (0xf0, 0x20), 0xff),
            ("sub_sat_u.i8", (0x10, 0x20), 0x00),
            ("add_sat_s.i8", (0x70, 0x20), 0x7f),
            ("add_sat_s.i8", (0x90, 0xe0), 0x80),
            ("add_sat_s.i8", (0x90, 0x90), 0x80),
            ("add_sat_s.i8", (0x10, 0xf0), 0x00),
            ("sub_sat_s.i8", (0x90, 0x20), 0x80),
            ("sub_sat_s.i8", (0x70, 0xe0), 0x7f),
            ("sub_sat_s.i8", (0x80, 0x01), 0x80),
            ("sub_sat_s.i16", (0x7fff, 0xffff), 0x7fff),
            ("add_sat_u.i64", (MAX64, 1), MAX64),
            ("add_sat_s.i64", (0x7fff_ffff_ffff_ffff, 1), 0x7fff_ffff_ffff_ffff),
            ("sub_sat_s.i64", (0x8000_0000_0000_0000, 1), 0x8000_0000_0000_0000),
            ("sub_sat_u.i64", (3, 1), 2),
        ],
    );
}

#[test]
fn bit_counts_and_swaps() {
    table(
        unary,
        &[
            ("clz.i32", 0, 32),
            ("clz.i32", 1, 31),
            ("clz.i32", 0x8000_0000, 0),
            ("clz.i8", 0x10, 3),
            ("clz.i64", 0, 64),
            ("ctz.i32", 0, 32),
            ("ctz.i32", 0x100, 8),
            ("ctz.i16", 0, 16),
            ("ctz.i64", 0x100, 8),
            ("ctz.i64", 0, 64),
            ("popcnt.i32", 0xf0f0_0001, 9),
            ("popcnt.i64", 0xff00ff, 16),
            ("popcnt.i8", 0x1ff, 8),
            ("bswap.i32", 0x1122_3344, 0x4433_2211),
            ("bswap.i16", 0x1122, 0x2211),
            ("bswap.i64", 0x0102_0304_0506_0708, 0x0807_0605_0403_0201),
        ],
    );
}

#[test]
fn parity_of_the_low_byte() {
    table(
        unary,
        &[
            ("parity.i64", 0, 1),
            ("parity.i64", 0x03, 1),
            ("parity.i64", 0x07, 0),
            ("parity.i64", 0x0100, 1), // only the low byte counts
            ("parity.i64", 0xfe, 0),
            ("parity.i64", 0x1_0000_0001, 0),
            ("parity.i64", 0xff00, 1),
            ("parity.i8", 0x03, 1),
        ],
    );
}

#[test]
fn compares_signed_and_unsigned() {
    table(
        binary,
        &[
            ("icmp.i16 ult", (0x0001, 0xffff), 1),
            ("icmp.i16 slt", (0x0001, 0xffff), 0),
            ("icmp.i16 sgt", (0x0001, 0xffff), 1),
            ("icmp.i16 uge", (0xffff, 0xffff), 1),
            ("icmp.i16 sle", (0x8000, 0x7fff), 1),
            ("icmp.i16 eq", (0x1_0005, 0x5), 1), // compared at 16 bits
            ("icmp.i16 ne", (0x5, 0x5), 0),
            ("icmp.i16 ugt", (0x8000, 0x7fff), 1),
            ("icmp.i16 ule", (0x8000, 0x7fff), 0),
            ("icmp.i16 sge", (0x8000, 0x7fff), 0),
            ("icmp.i16 sge", (0xffff, 0x0000), 0),
            ("icmp.i8 slt", (0x80, 0x01), 1),
            ("icmp.i8 ult", (0x80, 0x01), 0),
            ("icmp.i32 ugt", (0xffff_ffff, 1), 1),
            ("icmp.i32 eq", (0x1_0000_0005, 5), 1),
            ("icmp.i64 sle", (1, 2), 1),
        ],
    );
    assert_eq!(eval(&[("rax", 1), ("rcx", 2)], "v0 = get rax\n v1 = get rcx\n v2 = icmp.i64 ne v0, v0"), 0);
}

#[test]
fn widths_change() {
    assert_eq!(eval(&[("rax", 0x80)], "v0 = get rax\n v1 = trunc.i8 v0\n v2 = sext.i64 v1"), 0xffff_ffff_ffff_ff80);
    assert_eq!(eval(&[("rax", 0x8000)], "v0 = get rax\n v1 = trunc.i16 v0\n v2 = sext.i32 v1"), 0xffff_8000);
    assert_eq!(eval(&[("rax", 0xffff_ffff_ffff_ff7f)], "v0 = get rax\n v1 = trunc.i8 v0\n v2 = sext.i16 v1"), 0x007f);
    assert_eq!(eval(&[("cf", 1)], "v0 = get cf\n v1 = sext.i16 v0"), 0xffff);
    assert_eq!(eval(&[("rax", 0x1234)], "v0 = get rax\n v1 = trunc.i8 v0"), 0x34);
    assert_eq!(eval(&[("rax", 0x1_8000_0080)], "v0 = get rax\n v1 = trunc.i32 v0\n v2 = zext.i64 v1"), 0x8000_0080);
    assert_eq!(eval(&[("rax", 0xffff_ffff_ffff)], "v0 = get rax\n v1 = trunc.i32 v0\n v2 = zext.i64 v1"), 0xffff_ffff);
    assert_eq!(
        eval(
            &[("rax", 0x1111_2222_3333_4444), ("rcx", 0x5555_6666_7777_8888)],
            "v0 = get rax\n v1 = get rcx\n v2 = concat.i128 v0, v1",
        ),
        0x1111_2222_3333_4444_5555_6666_7777_8888
    );
    assert_eq!(
        eval(&[("rax", 0xabcd)], "v0 = get rax\n v1 = trunc.i8 v0\n v2 = trunc.i8 v0\n v3 = concat.i16 v1, v2"),
        0xcdcd
    );
    assert_eq!(
        eval(
            &[("rax", 0x12), ("rcx", 0x34)],
            "v0 = get rax\n v1 = get rcx\n v2 = trunc.i8 v0\n v3 = trunc.i8 v1\n v4 = concat.i16 v2, v3"
        ),
        0x1234
    );
    assert_eq!(
        eval(
            &[("rax", 0x1122_3344), ("rcx", 0x5566_7788)],
            "v0 = get rax\n v1 = get rcx\n v2 = trunc.i32 v0\n v3 = trunc.i32 v1\n v4 = concat.i64 v2, v3"
        ),
        0x1122_3344_5566_7788
    );
    assert_eq!(
        eval(
            &[("rax", 0x8000_0000_0000_0001), ("rcx", 64)],
            "v0 = get rax\n v1 = get rcx\n v2 = sext.i128 v0\n v3 = lshr.i128 v2, v1\n v4 = trunc.i64 v3",
        ),
        0xffff_ffff_ffff_ffff
    );
    assert_eq!(eval(&[], "v0 = iconst.i8 0x1ff"), 0xff);
    assert_eq!(eval(&[], "v0 = iconst.i64 0xfffffffffffffff0"), 0xffff_ffff_ffff_fff0);
    assert_eq!(
        eval(
            &[("xmm0", 0x3ff0_0000_0000_0000)],
            "v0 = get xmm0\n v1 = extract_lane.i64x2 v0, 0\n v2 = bitcast.f64 v1\n v3 = bitcast.i64 v2"
        ),
        0x3ff0_0000_0000_0000
    );
}

#[test]
fn select_picks_by_the_condition() {
    let body = "v0 = get rax\n v1 = get rcx\n v2 = get zf\n v3 = select.i64 v2, v0, v1";
    assert_eq!(eval(&[("rax", 1), ("rcx", 2), ("zf", 1)], body), 1);
    assert_eq!(eval(&[("rax", 1), ("rcx", 2), ("zf", 0)], body), 2);
    assert_eq!(eval(&[("rax", 7), ("rcx", 9), ("zf", 1)], body), 7);
    assert_eq!(eval(&[("rax", 7), ("rcx", 9), ("zf", 0)], body), 9);
    let vsel = "v0 = get xmm0\n v1 = get xmm1\n v2 = get cf\n v3 = select.v128 v2, v0, v1";
    assert_eq!(eval(&[("xmm0", 1 << 100), ("xmm1", 5), ("cf", 1)], vsel), 1 << 100);
}

#[test]
fn i128_for_wide_division() {
    // rdx:rax / rcx as the lifter emits it for div r64.
    let div = |op: &str, ext: &str, hi: u128, lo: u128, d: u128| {
        eval(
            &[("rdx", hi), ("rax", lo), ("rcx", d)],
            &format!("v0 = get rdx\n v1 = get rax\n v2 = get rcx\n v3 = concat.i128 v0, v1\n v4 = {ext}.i128 v2\n v5 = {op}.i128 v3, v4\n v6 = trunc.i64 v5"),
        )
    };
    assert_eq!(div("udiv", "zext", 1, 0, 2), 0x8000_0000_0000_0000);
    assert_eq!(div("urem", "zext", 1, 1, 2), 1);
    assert_eq!(div("sdiv", "sext", MAX64, 0xffff_ffff_ffff_fff6, 3), 0xffff_ffff_ffff_fffd);
    assert_eq!(div("srem", "sext", MAX64, 0xffff_ffff_ffff_fff6, 3), MAX64);
    assert_eq!(div("udiv", "zext", 5, 5, 0), 0);
    let cmp = |cond: &str, a: (u128, u128), b: (u128, u128)| {
        eval(
            &[("rax", a.0), ("rcx", a.1), ("rdx", b.0), ("rbx", b.1)],
            &format!("v0 = get rax\n v1 = get rcx\n v2 = get rdx\n v3 = get rbx\n v4 = concat.i128 v0, v1\n v5 = concat.i128 v2, v3\n v6 = icmp.i128 {cond} v4, v5"),
        )
    };
    assert_eq!(cmp("eq", (1, 2), (1, 2)), 1);
    assert_eq!(cmp("ne", (1, 2), (1, 3)), 1);
    assert_eq!(cmp("ult", (0, MAX64), (1, 0)), 1);
    assert_eq!(cmp("slt", (MAX64, 0), (0, 0)), 1);
    assert_eq!(cmp("sgt", (MAX64, 0), (0, 0)), 0);
    assert_eq!(cmp("uge", (1, 0), (1, 0)), 1);
    let arith = |op: &str, a: (u128, u128), b: (u128, u128)| {
        let hi = |lo: &str| {
            format!("v0 = get rax\n v1 = get rcx\n v2 = get rdx\n v3 = get rbx\n v4 = concat.i128 v0, v1\n v5 = concat.i128 v2, v3\n v6 = {op}.i128 v4, v5\n v7 = bitcast.v128 v6\n v8 = extract_lane.i64x2 v7, {lo}")
        };
        let regs = [("rax", a.0), ("rcx", a.1), ("rdx", b.0), ("rbx", b.1)];
        (eval(&regs, &hi("1")), eval(&regs, &hi("0")))
    };
    assert_eq!(arith("add", (0, MAX64), (0, 1)), (1, 0));
    assert_eq!(arith("sub", (1, 0), (0, 1)), (0, MAX64));
    assert_eq!(arith("mul", (0, 1 << 32), (0, 1 << 32)), (1, 0));
    assert_eq!(arith("xor", (3, 3), (1, 1)), (2, 2));
}

#[test]
fn crc32c_of_each_width() {
    // CRC-32C check values: "123456789" with the usual initial value and
    // final inversion gives 0xe3069283; the op does neither, so invert
    // around it, byte by byte and by eight bytes then one.
    let crc = |acc: u128, data: u128, bytes: u16| {
        eval(
            &[("rax", acc), ("rcx", data)],
            &format!("v0 = get rax\n v1 = trunc.i32 v0\n v2 = get rcx\n v3 = crc32c.i32 v1, v2, {bytes}"),
        )
    };
    let text = b"123456789";
    let by_byte = text.iter().fold(0xffff_ffff, |c, b| crc(c, u128::from(*b), 1));
    assert_eq!(by_byte ^ 0xffff_ffff, 0xe306_9283);
    let head = u64::from_le_bytes(text[..8].try_into().unwrap());
    assert_eq!(crc(crc(0xffff_ffff, u128::from(head), 8), u128::from(text[8]), 1) ^ 0xffff_ffff, 0xe306_9283);
    let words = crc(crc(0xffff_ffff, 0x3433_3231, 4), 0x3635, 2);
    assert_eq!(words, text[..6].iter().fold(0xffff_ffff, |c, b| crc(c, u128::from(*b), 1)));
}
