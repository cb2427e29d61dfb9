//! One test per family of lowered ops: hand-written inputs and expected
//! results (each run is also checked against the interpreter by
//! [`super::check`]).

use aarchx_ir::{ExitKind, GuestState, TrapKind};

use super::{check, eval, pack, region, state_with, vop, GuestMem};
use crate::interp::RegionExit;

/// `OP.i8 rax, rcx` on the low bytes of the two registers.
fn op8(op: &str, a: u128, b: u128) -> u128 {
    eval(
        &[("rax", a), ("rcx", b)],
        &format!("v0 = get rax\n v1 = get rcx\n v2 = trunc.i8 v0\n v3 = trunc.i8 v1\n v4 = {op}.i8 v2, v3"),
    )
}

/// `OP.i16` on the low halves.
fn op16(op: &str, a: u128, b: u128) -> u128 {
    eval(
        &[("rax", a), ("rcx", b)],
        &format!("v0 = get rax\n v1 = get rcx\n v2 = trunc.i16 v0\n v3 = trunc.i16 v1\n v4 = {op}.i16 v2, v3"),
    )
}

/// `OP.i32` on the low words.
fn op32(op: &str, a: u128, b: u128) -> u128 {
    eval(
        &[("rax", a), ("rcx", b)],
        &format!("v0 = get rax\n v1 = get rcx\n v2 = trunc.i32 v0\n v3 = trunc.i32 v1\n v4 = {op}.i32 v2, v3"),
    )
}

/// `OP.i64 rax, rcx`.
fn op64(op: &str, a: u128, b: u128) -> u128 {
    eval(&[("rax", a), ("rcx", b)], &format!("v0 = get rax\n v1 = get rcx\n v2 = {op}.i64 v0, v1"))
}

/// `OP.T` unary on rax truncated to T.
fn unary(op: &str, ty: &str, a: u128) -> u128 {
    let body = if ty == "i64" {
        format!("v0 = get rax\n v1 = {op}.i64 v0")
    } else {
        format!("v0 = get rax\n v9 = trunc.{ty} v0\n v1 = {op}.{ty} v9")
    };
    eval(&[("rax", a)], &body)
}

const MAX64: u128 = u64::MAX as u128;

#[test]
fn arithmetic_wraps_at_the_width() {
    assert_eq!(op8("add", 0xff, 0x02), 0x01);
    assert_eq!(op8("sub", 0x00, 0x01), 0xff);
    assert_eq!(op8("mul", 0x10, 0x11), 0x10);
    assert_eq!(op16("mul", 0x1234, 0x100), 0x3400);
    assert_eq!(op32("add", 0xffff_ffff, 2), 1);
    assert_eq!(op64("add", MAX64, 1), 0);
    assert_eq!(op64("sub", 0, 1), MAX64);
    assert_eq!(op64("mul", 0x1_0000_0001, 0x1_0000_0001), 0x2_0000_0001);
    assert_eq!(unary("neg", "i32", 1), 0xffff_ffff);
    assert_eq!(unary("not", "i32", 0x0f0f_0f0f), 0xf0f0_f0f0);
    assert_eq!(unary("not", "i1", 1), 0);
    assert_eq!(op64("and_not", 0xff, 0x0f), 0xf0);
    assert_eq!(op64("xor", 0xff, 0x0f), 0xf0);
    assert_eq!(op64("or", 0xf0, 0x0f), 0xff);
    assert_eq!(op8("and", 0x1ff, 0x0f), 0x0f);
}

#[test]
fn shifts_past_the_width() {
    assert_eq!(op8("shl", 0x81, 1), 0x02);
    assert_eq!(op8("shl", 0x81, 8), 0x00);
    assert_eq!(op8("lshr", 0x80, 7), 0x01);
    assert_eq!(op8("lshr", 0x80, 8), 0x00);
    assert_eq!(op8("ashr", 0x80, 3), 0xf0);
    assert_eq!(op8("ashr", 0x80, 200), 0xff);
    assert_eq!(op8("ashr", 0x40, 200), 0x00);
    assert_eq!(op16("shl", 0x8001, 15), 0x8000);
    assert_eq!(op32("ashr", 0x8000_0000, 31), 0xffff_ffff);
    assert_eq!(op32("shl", 1, 32), 0);
    assert_eq!(op64("shl", 1, 63), 0x8000_0000_0000_0000);
    assert_eq!(op64("shl", 1, 64), 0);
    assert_eq!(op64("lshr", 0x8000_0000_0000_0000, MAX64), 0);
    assert_eq!(op64("ashr", 0x8000_0000_0000_0000, 63), MAX64);
    assert_eq!(op64("ashr", 0x8000_0000_0000_0000, 1000), MAX64);
    // An amount of another type.
    let r =
        eval(&[("rax", 0x1234), ("rcx", 4)], "v0 = get rax\n v1 = get rcx\n v2 = trunc.i8 v1\n v3 = shl.i64 v0, v2");
    assert_eq!(r, 0x12340);
}

#[test]
fn rotates_modulo_the_width() {
    assert_eq!(op8("rotl", 0x81, 1), 0x03);
    assert_eq!(op8("rotl", 0x81, 9), 0x03);
    assert_eq!(op8("rotr", 0x81, 1), 0xc0);
    assert_eq!(op8("rotr", 0x81, 8), 0x81);
    assert_eq!(op16("rotl", 0x8001, 4), 0x0018);
    assert_eq!(op32("rotr", 1, 4), 0x1000_0000);
    assert_eq!(op32("rotl", 0x8000_0001, 33), 0x0000_0003);
    assert_eq!(op64("rotr", 1, 1), 0x8000_0000_0000_0000);
    assert_eq!(op64("rotl", 1, 0x1_0000_0001), 2);
}

#[test]
fn division_signed_and_unsigned() {
    assert_eq!(op8("udiv", 0xfe, 0x02), 0x7f);
    assert_eq!(op8("sdiv", 0xfe, 0x02), 0xff);
    assert_eq!(op8("sdiv", 0xf9, 0x02), 0xfd);
    assert_eq!(op8("srem", 0xf9, 0x02), 0xff);
    assert_eq!(op8("urem", 0xf9, 0x02), 0x01);
    assert_eq!(op32("sdiv", 0xffff_fff6, 3), 0xffff_fffd); // -10 / 3 = -3
    assert_eq!(op32("srem", 0xffff_fff6, 3), 0xffff_ffff); // -10 % 3 = -1
    assert_eq!(op64("udiv", MAX64, 2), 0x7fff_ffff_ffff_ffff);
    assert_eq!(op64("srem", 7, MAX64), 0); // 7 % -1
                                           // A zero divisor (the lifter traps first) gives 0, remainder too.
    assert_eq!(op8("udiv", 5, 0), 0);
    assert_eq!(op8("urem", 5, 0), 0);
    assert_eq!(op32("srem", 5, 0), 0);
    assert_eq!(op64("urem", 5, 0), 0);
}

#[test]
fn high_multiplies() {
    assert_eq!(op64("umulh", MAX64, MAX64), 0xffff_ffff_ffff_fffe);
    assert_eq!(op64("smulh", MAX64, MAX64), 0);
    assert_eq!(op64("smulh", MAX64, 2), MAX64);
    assert_eq!(op8("umulh", 0xff, 0xff), 0xfe);
    assert_eq!(op8("smulh", 0x80, 0x80), 0x40);
    assert_eq!(op16("smulh", 0xffff, 0x0002), 0xffff);
    assert_eq!(op32("umulh", 0xffff_ffff, 0x10), 0xf);
}

#[test]
fn min_max_average_saturation() {
    assert_eq!(op8("umin", 0x80, 0x7f), 0x7f);
    assert_eq!(op8("smin", 0x80, 0x7f), 0x80);
    assert_eq!(op8("umax", 0x80, 0x7f), 0x80);
    assert_eq!(op8("smax", 0x80, 0x7f), 0x7f);
    assert_eq!(op64("smin", MAX64, 1), MAX64);
    assert_eq!(op8("avg_u", 0xff, 0xfe), 0xff);
    assert_eq!(op64("avg_u", MAX64, MAX64), MAX64);
    assert_eq!(op8("add_sat_u", 0xf0, 0x20), 0xff);
    assert_eq!(op8("add_sat_s", 0x70, 0x20), 0x7f);
    assert_eq!(op8("add_sat_s", 0x90, 0x90), 0x80);
    assert_eq!(op8("sub_sat_u", 0x10, 0x20), 0x00);
    assert_eq!(op8("sub_sat_s", 0x80, 0x01), 0x80);
    assert_eq!(op16("sub_sat_s", 0x7fff, 0xffff), 0x7fff);
    assert_eq!(op64("add_sat_u", MAX64, 1), MAX64);
    assert_eq!(op64("add_sat_s", 0x7fff_ffff_ffff_ffff, 1), 0x7fff_ffff_ffff_ffff);
    assert_eq!(op64("sub_sat_s", 0x8000_0000_0000_0000, 1), 0x8000_0000_0000_0000);
    assert_eq!(op64("sub_sat_u", 3, 1), 2);
}

#[test]
fn bit_counts_and_swaps() {
    assert_eq!(unary("clz", "i32", 1), 31);
    assert_eq!(unary("clz", "i32", 0), 32);
    assert_eq!(unary("clz", "i8", 0x10), 3);
    assert_eq!(unary("clz", "i64", 0), 64);
    assert_eq!(unary("ctz", "i16", 0), 16);
    assert_eq!(unary("ctz", "i64", 0x100), 8);
    assert_eq!(unary("ctz", "i64", 0), 64);
    assert_eq!(unary("popcnt", "i64", 0xff00ff), 16);
    assert_eq!(unary("popcnt", "i8", 0x1ff), 8);
    assert_eq!(unary("bswap", "i32", 0x1122_3344), 0x4433_2211);
    assert_eq!(unary("bswap", "i16", 0x1122), 0x2211);
    assert_eq!(unary("bswap", "i64", 0x0102_0304_0506_0708), 0x0807_0605_0403_0201);
    assert_eq!(unary("parity", "i8", 0x03), 1);
    assert_eq!(unary("parity", "i64", 0x1_0000_0001), 0);
    assert_eq!(unary("parity", "i64", 0xff00), 1);
}

#[test]
fn compares_select_and_conversions() {
    let cmp = |cond: &str, ty: &str, a: u128, b: u128| {
        eval(
            &[("rax", a), ("rcx", b)],
            &format!(
                "v0 = get rax\n v1 = get rcx\n v2 = trunc.{ty} v0\n v3 = trunc.{ty} v1\n v4 = icmp.{ty} {cond} v2, v3"
            ),
        )
    };
    assert_eq!(cmp("slt", "i8", 0x80, 0x01), 1);
    assert_eq!(cmp("ult", "i8", 0x80, 0x01), 0);
    assert_eq!(cmp("sge", "i16", 0xffff, 0x0000), 0);
    assert_eq!(cmp("ugt", "i32", 0xffff_ffff, 1), 1);
    assert_eq!(cmp("eq", "i32", 0x1_0000_0005, 5), 1);
    assert_eq!(eval(&[("rax", 1), ("rcx", 2)], "v0 = get rax\n v1 = get rcx\n v2 = icmp.i64 sle v0, v1"), 1);
    assert_eq!(eval(&[("rax", 1), ("rcx", 2)], "v0 = get rax\n v1 = get rcx\n v2 = icmp.i64 ne v0, v0"), 0);
    let sel = "v0 = get rax\n v1 = get rcx\n v2 = get zf\n v3 = select.i64 v2, v0, v1";
    assert_eq!(eval(&[("rax", 7), ("rcx", 9), ("zf", 1)], sel), 7);
    assert_eq!(eval(&[("rax", 7), ("rcx", 9), ("zf", 0)], sel), 9);
    let vsel = "v0 = get xmm0\n v1 = get xmm1\n v2 = get cf\n v3 = select.v128 v2, v0, v1";
    assert_eq!(eval(&[("xmm0", 1 << 100), ("xmm1", 5), ("cf", 1)], vsel), 1 << 100);
    assert_eq!(eval(&[("rax", 0x80)], "v0 = get rax\n v1 = trunc.i8 v0\n v2 = sext.i64 v1"), 0xffff_ffff_ffff_ff80);
    assert_eq!(eval(&[("rax", 0x8000)], "v0 = get rax\n v1 = trunc.i16 v0\n v2 = sext.i32 v1"), 0xffff_8000);
    assert_eq!(eval(&[("rax", 0x1234)], "v0 = get rax\n v1 = trunc.i8 v0"), 0x34);
    assert_eq!(eval(&[("rax", 0xffff_ffff_ffff)], "v0 = get rax\n v1 = trunc.i32 v0\n v2 = zext.i64 v1"), 0xffff_ffff);
    assert_eq!(eval(&[("cf", 1)], "v0 = get cf\n v1 = sext.i16 v0"), 0xffff);
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

// f64 and f32 bit patterns used below.
const F64_ONE: u128 = 0x3ff0_0000_0000_0000;
const F64_QNAN_A: u128 = 0x7ff8_0000_0000_0001;
const F64_SNAN_B: u128 = 0x7ff0_0000_0000_0002;
const F64_DEFAULT_NAN: u128 = 0xfff8_0000_0000_0000;
const F32_DEFAULT_NAN: u128 = 0xffc0_0000;

/// `OP.f64` on the low lanes of xmm0 and xmm1.
fn f64op(op: &str, a: u128, b: u128) -> u128 {
    eval(
        &[("xmm0", a), ("xmm1", b)],
        &format!("v0 = get xmm0\n v1 = get xmm1\n v2 = extract_lane.f64x2 v0, 0\n v3 = extract_lane.f64x2 v1, 0\n v4 = {op}.f64 v2, v3"),
    )
}

fn f32op(op: &str, a: u128, b: u128) -> u128 {
    eval(
        &[("xmm0", a), ("xmm1", b)],
        &format!("v0 = get xmm0\n v1 = get xmm1\n v2 = extract_lane.f32x4 v0, 0\n v3 = extract_lane.f32x4 v1, 0\n v4 = {op}.f32 v2, v3"),
    )
}

#[test]
fn float_arithmetic_with_x86_nans() {
    assert_eq!(f64op("fadd", 0x3ff8_0000_0000_0000, 0x4002_0000_0000_0000), 0x400e_0000_0000_0000); // 1.5 + 2.25
    assert_eq!(f32op("fsub", 0x3f80_0000, 0x3f00_0000), 0x3f00_0000); // 1 - 0.5
    assert_eq!(f64op("fmul", 0x7ff0_0000_0000_0000, 0), F64_DEFAULT_NAN); // inf * 0
    assert_eq!(f32op("fdiv", 0, 0), F32_DEFAULT_NAN);
    assert_eq!(f64op("fadd", F64_QNAN_A, F64_ONE), F64_QNAN_A);
    assert_eq!(f64op("fadd", F64_ONE, F64_SNAN_B), 0x7ff8_0000_0000_0002);
    // x86 takes the first NaN even when the second is signalling.
    assert_eq!(f64op("fadd", F64_QNAN_A, F64_SNAN_B), F64_QNAN_A);
    assert_eq!(f32op("fmul", 0x7f80_0001, 0x7fc0_0002), 0x7fc0_0001);
    let sqrt = |a: u128| eval(&[("xmm0", a)], "v0 = get xmm0\n v1 = extract_lane.f64x2 v0, 0\n v2 = fsqrt.f64 v1");
    assert_eq!(sqrt(0x4010_0000_0000_0000), 0x4000_0000_0000_0000);
    assert_eq!(sqrt(0xbff0_0000_0000_0000), F64_DEFAULT_NAN);
    assert_eq!(sqrt(F64_SNAN_B), 0x7ff8_0000_0000_0002);
}

#[test]
fn float_min_max_compare() {
    assert_eq!(f64op("fmin", F64_QNAN_A, F64_ONE), F64_ONE);
    assert_eq!(f64op("fmin", F64_ONE, F64_QNAN_A), F64_QNAN_A);
    assert_eq!(f64op("fmin", 0x8000_0000_0000_0000, 0), 0);
    assert_eq!(f64op("fmax", 0, 0x8000_0000_0000_0000), 0x8000_0000_0000_0000);
    assert_eq!(f32op("fmax", 0x4000_0000, 0x3f80_0000), 0x4000_0000);
    assert_eq!(f32op("fmin", 0x4000_0000, 0x3f80_0000), 0x3f80_0000);
    let fcmp = |cond: &str, a: u128, b: u128| {
        eval(
            &[("xmm0", a), ("xmm1", b)],
            &format!("v0 = get xmm0\n v1 = get xmm1\n v2 = extract_lane.f64x2 v0, 0\n v3 = extract_lane.f64x2 v1, 0\n v4 = fcmp.f64 {cond} v2, v3"),
        )
    };
    let two = 0x4000_0000_0000_0000;
    assert_eq!(fcmp("lt", F64_ONE, two), 1);
    assert_eq!(fcmp("le", two, two), 1);
    assert_eq!(fcmp("eq", F64_QNAN_A, F64_QNAN_A), 0);
    assert_eq!(fcmp("uno", F64_QNAN_A, F64_ONE), 1);
    assert_eq!(fcmp("une", F64_QNAN_A, F64_QNAN_A), 1);
    assert_eq!(fcmp("nle", two, F64_ONE), 1);
    assert_eq!(fcmp("nlt", F64_ONE, two), 0);
    assert_eq!(fcmp("ord", F64_ONE, two), 1);
}

#[test]
fn float_conversions() {
    let to_i32 = |a: u128, imm: u16| {
        eval(
            &[("xmm0", a)],
            &format!("v0 = get xmm0\n v1 = extract_lane.f64x2 v0, 0\n v2 = fcvt_to_sint.i32 v1, {imm}"),
        )
    };
    assert_eq!(to_i32(0x41df_ffff_ffff_3333, 0), 0x7fff_ffff); // 2147483647.95 truncates
    assert_eq!(to_i32(0x41e0_0000_0000_0000, 0), 0x8000_0000); // 2^31
    assert_eq!(to_i32(F64_QNAN_A, 0), 0x8000_0000);
    assert_eq!(to_i32(0xc004_0000_0000_0000, 1), 0xffff_fffe); // -2.5 rounds to even
    assert_eq!(to_i32(0x4004_0000_0000_0000, 1), 2);
    assert_eq!(to_i32(0xc004_0000_0000_0000, 0), 0xffff_fffe); // -2.5 truncates to -2
    let to_i64 = |a: u128, imm: u16| {
        eval(
            &[("xmm0", a)],
            &format!("v0 = get xmm0\n v1 = extract_lane.f32x4 v0, 0\n v2 = fcvt_to_sint.i64 v1, {imm}"),
        )
    };
    assert_eq!(to_i64(0x5f00_0000, 0), 0x8000_0000_0000_0000); // 2^63 as f32
    assert_eq!(to_i64(0xbfc0_0000, 0), MAX64); // -1.5 truncates to -1
    assert_eq!(to_i64(0x7fc0_0000, 1), 0x8000_0000_0000_0000);
    assert_eq!(
        eval(&[("rax", 0xffff_ffff)], "v0 = get rax\n v1 = trunc.i32 v0\n v2 = sint_to_f.f64 v1"),
        0xbff0_0000_0000_0000
    );
    assert_eq!(eval(&[("rax", (1 << 53) + 1)], "v0 = get rax\n v1 = sint_to_f.f32 v0"), 0x5a00_0000);
    let conv = |ty: &str, from: &str, a: u128| {
        eval(&[("xmm0", a)], &format!("v0 = get xmm0\n v1 = extract_lane.{from} v0, 0\n v2 = fconvert.{ty} v1"))
    };
    assert_eq!(conv("f64", "f32x4", 0x3fc0_0000), 0x3ff8_0000_0000_0000);
    assert_eq!(conv("f32", "f64x2", 0x7ff4_0000_0000_0000), 0x7fe0_0000);
    assert_eq!(conv("f32", "f64x2", 0x3ff8_0000_0000_0000), 0x3fc0_0000);
}

#[test]
fn float_vectors() {
    let a = pack(32, [0x3f80_0000, 0x7f80_0001, 0x7f80_0000, 0xff80_0000]);
    let b = pack(32, [0x4000_0000, 0x3f80_0000, 0xff80_0000, 0xff80_0000]);
    assert_eq!(vop("fadd.f32x4", &[a, b]), pack(32, [0x4040_0000, 0x7fc0_0001, F32_DEFAULT_NAN, 0xff80_0000]));
    let a = pack(64, [F64_ONE, F64_QNAN_A]);
    let b = pack(64, [F64_SNAN_B, F64_ONE]);
    assert_eq!(vop("fmul.f64x2", &[a, b]), pack(64, [0x7ff8_0000_0000_0002, F64_QNAN_A]));
    assert_eq!(vop("fmin.f64x2", &[a, b]), pack(64, [F64_SNAN_B, F64_ONE]));
    assert_eq!(vop("fmax.f64x2", &[b, a]), pack(64, [F64_ONE, F64_QNAN_A]));
    assert_eq!(
        vop("fsqrt.f32x4", &[pack(32, [0x4080_0000, 0xbf80_0000, 0, 0x7f80_0000])]),
        pack(32, [0x4000_0000, F32_DEFAULT_NAN, 0, 0x7f80_0000])
    );
    assert_eq!(vop("fcmp.f64x2 lt", &[a, b]), 0);
    assert_eq!(vop("fcmp.f64x2 une", &[a, b]), u128::MAX);
    assert_eq!(vop("fcmp.f64x2 ord", &[a, pack(64, [F64_ONE, F64_ONE])]), pack(64, [MAX64, 0]));
    // Truncation with the integer indefinite for NaN and out of range.
    let f = pack(32, [0x3fc0_0000, 0xbfc0_0000, 0x4f80_0000, 0x7fc0_0000]);
    assert_eq!(vop("fcvt_to_sint.i32x4, 0", &[f]), pack(32, [1, 0xffff_ffff, 0x8000_0000, 0x8000_0000]));
    assert_eq!(vop("fcvt_to_sint.i32x4, 1", &[f]), pack(32, [2, 0xffff_fffe, 0x8000_0000, 0x8000_0000]));
    let d = pack(64, [0x41df_ffff_ffc0_0000, 0xc00d_9999_9999_999a]); // 2147483647.0, -3.7
    assert_eq!(vop("fcvt_to_sint.i32x4, 2", &[d]), pack(32, [0x7fff_ffff, 0xffff_fffd, 0, 0]));
    assert_eq!(
        vop("fcvt_to_sint.i32x4, 3", &[pack(64, [0x41e0_0000_0000_0000, F64_QNAN_A])]),
        pack(32, [0x8000_0000, 0x8000_0000, 0, 0])
    );
    let ints = pack(32, [1, 0xffff_ffff, 3, 0]);
    assert_eq!(vop("sint_to_f.f64x2", &[ints]), pack(64, [F64_ONE, 0xbff0_0000_0000_0000]));
    assert_eq!(vop("sint_to_f.f32x4", &[ints]), pack(32, [0x3f80_0000, 0xbf80_0000, 0x4040_0000, 0]));
    assert_eq!(
        vop("fconvert.f64x2", &[pack(32, [0x3fc0_0000, 0xbf80_0000, 5, 6])]),
        pack(64, [0x3ff8_0000_0000_0000, 0xbff0_0000_0000_0000])
    );
    assert_eq!(
        vop("fconvert.f32x4", &[pack(64, [0x3ff8_0000_0000_0000, F64_ONE])]),
        pack(32, [0x3fc0_0000, 0x3f80_0000, 0, 0])
    );
}

#[test]
fn integer_vectors() {
    let bytes = |f: fn(u128) -> u128| pack(8, core::array::from_fn::<u128, 16, _>(|i| f(i as u128)));
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
    assert_eq!(vop("not.v128", &[0]), u128::MAX);
    assert_eq!(
        vop("neg.i32x4", &[pack(32, [1, 0, 2, 0x8000_0000])]),
        pack(32, [0xffff_ffff, 0, 0xffff_fffe, 0x8000_0000])
    );
    assert_eq!(vop("popcnt.i8x16", &[bytes(|i| i)]), bytes(|i| u128::from((i as u8).count_ones())));
    assert_eq!(vop("clz.i32x4", &[pack(32, [0, 1, 0x8000_0000, 0x10])]), pack(32, [32, 31, 0, 27]));
    assert_eq!(
        vop("icmp.i32x4 sgt", &[pack(32, [1, 0xffff_ffff, 5, 5]), pack(32, [0, 0, 5, 4])]),
        pack(32, [0xffff_ffff, 0, 0, 0xffff_ffff])
    );
    assert_eq!(vop("icmp.i8x16 ne", &[bytes(|i| i), bytes(|_| 3)]), bytes(|i| if i == 3 { 0 } else { 0xff }));
    assert_eq!(vop("icmp.i64x2 ult", &[pack(64, [1, MAX64]), pack(64, [2, 0])]), pack(64, [MAX64, 0]));
}

#[test]
fn vector_shifts_by_scalar() {
    let shift = |op: &str, v: u128, n: u128| {
        eval(&[("xmm0", v), ("rcx", n)], &format!("v0 = get xmm0\n v1 = get rcx\n v2 = {op} v0, v1"))
    };
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
fn vector_shape_ops() {
    let bytes = |f: fn(u128) -> u128| pack(8, core::array::from_fn::<u128, 16, _>(|i| f(i as u128)));
    let lanes32 = pack(32, [0x8000_0000, 1, 0xffff_ffff, 0x7fff_ffff]);
    assert_eq!(vop("movmsk.i8x16", &[bytes(|i| if i % 3 == 0 { 0x80 } else { 0x7f })]), 0b1001_0010_0100_1001);
    assert_eq!(vop("movmsk.f32x4", &[lanes32]), 0b0101);
    assert_eq!(vop("movmsk.i16x8", &[pack(16, [0x8000, 0, 0, 0xffff, 0, 0, 0, 0x8001])]), 0b1000_1001);
    assert_eq!(vop("movmsk.f64x2", &[pack(64, [0, 1 << 63])]), 0b10);
    assert_eq!(vop("shuffle.i32x4, 0x1b", &[pack(32, [0, 1, 2, 3])]), pack(32, [3, 2, 1, 0]));
    assert_eq!(vop("shuffle.i16x8, 0x11b", &[pack(16, [0, 1, 2, 3, 4, 5, 6, 7])]), pack(16, [0, 1, 2, 3, 7, 6, 5, 4]));
    assert_eq!(vop("shuffle.i16x8, 0x1b", &[pack(16, [0, 1, 2, 3, 4, 5, 6, 7])]), pack(16, [3, 2, 1, 0, 4, 5, 6, 7]));
    assert_eq!(vop("shuffle2.f32x4, 0x4e", &[pack(32, [0, 1, 2, 3]), pack(32, [4, 5, 6, 7])]), pack(32, [2, 3, 4, 5]));
    assert_eq!(vop("shuffle2.f64x2, 1", &[pack(64, [0, 1]), pack(64, [2, 3])]), pack(64, [1, 2]));
    assert_eq!(
        vop("unpack_lo.i8x16", &[bytes(|i| i), bytes(|i| 0x10 + i)]),
        pack(8, [0, 0x10, 1, 0x11, 2, 0x12, 3, 0x13, 4, 0x14, 5, 0x15, 6, 0x16, 7, 0x17])
    );
    assert_eq!(vop("unpack_hi.i64x2", &[pack(64, [1, 2]), pack(64, [3, 4])]), pack(64, [2, 4]));
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
    assert_eq!(vop("byte_shl.v128, 3", &[bytes(|i| i + 1)]), bytes(|i| if i < 3 { 0 } else { i - 2 }));
    assert_eq!(vop("byte_shr.v128, 3", &[bytes(|i| i + 1)]), bytes(|i| if i > 12 { 0 } else { i + 4 }));
    assert_eq!(vop("byte_shr.v128, 16", &[u128::MAX]), 0);
    assert_eq!(vop("byte_shl.v128, 0", &[5]), 5);
    assert_eq!(
        vop(
            "mul_add_pairs.i32x4",
            &[pack(16, [1, 2, 3, 4, 0x8000, 0x8000, 0xffff, 1]), pack(16, [5, 6, 7, 8, 0x8000, 0x8000, 2, 3])]
        ),
        pack(32, [17, 53, 0x8000_0000, 1])
    );
    assert_eq!(
        vop("sum_abs_diff.i64x2", &[bytes(|i| i), bytes(|_| 8)]),
        pack(64, [8 + 7 + 6 + 5 + 4 + 3 + 2 + 1, 1 + 2 + 3 + 4 + 5 + 6 + 7])
    );
    assert_eq!(
        vop("mul_even_u.i64x2", &[pack(32, [0xffff_ffff, 9, 3, 9]), pack(32, [0xffff_ffff, 9, 4, 9])]),
        pack(64, [0xffff_fffe_0000_0001, 12])
    );
    assert_eq!(
        eval(&[("rax", 0x1234)], "v0 = get rax\n v1 = trunc.i16 v0\n v2 = splat.i16x8 v1"),
        pack(16, [0x1234; 8])
    );
    assert_eq!(eval(&[("rax", 7)], "v0 = get rax\n v1 = splat.i64x2 v0"), pack(64, [7, 7]));
    assert_eq!(eval(&[("xmm0", pack(32, [1, 2, 3, 4]))], "v0 = get xmm0\n v1 = extract_lane.i32x4 v0, 2"), 3);
    assert_eq!(eval(&[("xmm0", bytes(|i| i))], "v0 = get xmm0\n v1 = extract_lane.i8x16 v0, 15"), 15);
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
fn memory_and_atomics() {
    let mut mem = GuestMem::new();
    let base = mem.base();
    let r = region(
        "region 0x1000\nblock0:\n\
         v0 = get rdi\n v1 = get rax\n v2 = trunc.i8 v1\n v3 = trunc.i16 v1\n v4 = trunc.i32 v1\n\
         store.i8 v0, v2\n v5 = iconst.i64 0x10\n v6 = add.i64 v0, v5\n store.i16 ordered v6, v3\n\
         v7 = iconst.i64 0x20\n v8 = add.i64 v0, v7\n store.i32 v8, v4\n v9 = iconst.i64 0x30\n v10 = add.i64 v0, v9\n\
         store.i64 ordered v10, v1\n v11 = get xmm0\n v12 = iconst.i64 0x40\n v13 = add.i64 v0, v12\n store.v128 v13, v11\n\
         v14 = load.i32 ordered v8\n v15 = zext.i64 v14\n set rbx, v15\n v16 = load.v128 ordered v13\n set xmm1, v16\n\
         v17 = load.i8 v0\n v18 = zext.i64 v17\n set rdx, v18\n\
         v19 = atomic_rmw.i64 add v10, v1\n set rsi, v19\n\
         v20 = atomic_rmw.i32 and v8, v4\n v21 = atomic_rmw.i16 xchg v6, v3\n v22 = zext.i64 v21\n set r8, v22\n\
         v23 = iconst.i32 0x0\n v24 = atomic_cas.i32 v8, v4, v23\n v25 = zext.i64 v24\n set r9, v25\n\
         v26 = atomic_cas.i32 v8, v4, v23\n v27 = zext.i64 v26\n set r10, v27\n\
         v28 = atomic_rmw.i8 or v0, v2\n v29 = atomic_rmw.i64 xor v10, v1\n\
         exit jump 0x2000\n",
    );
    let state = state_with(&[("rdi", u128::from(base)), ("rax", 0x1122_3344_5566_7788), ("xmm0", 0xabcd << 64)]);
    let out = check(&r, &state, &mut mem);
    assert_eq!(out.exit, RegionExit::Jump { kind: ExitKind::Jump });
    assert_eq!(out.state.rip, 0x2000);
    assert_eq!(out.state.gpr[3], 0x5566_7788); // rbx: the i32 store read back
    assert_eq!(out.state.xmm[1], 0xabcd << 64);
    assert_eq!(out.state.gpr[2], 0x88); // rdx
    assert_eq!(out.state.gpr[6], 0x1122_3344_5566_7788); // rsi: old value of the add
    assert_eq!(out.state.gpr[8], 0x7788); // r8: old value of the xchg
    assert_eq!(out.state.gpr[9], 0x5566_7788); // r9: the cas found its expected value...
    assert_eq!(out.state.gpr[10], 0); // r10: ...and the second found the 0 it stored
    assert_eq!(mem.read(0, 1), 0x88);
    assert_eq!(mem.read(0x10, 2), 0x7788);
    assert_eq!(mem.read(0x20, 4), 0);
    let x = 0x1122_3344_5566_7788u64;
    assert_eq!(mem.read(0x30, 8), u128::from(x.wrapping_mul(2) ^ x)); // added to itself, then xor
    assert_eq!(mem.read(0x40, 16), 0xabcd << 64);
}

#[test]
fn state_registers_and_flags() {
    let r = region(
        "region 0x1000\nblock0:\n\
         v0 = get cf\n v1 = get zf\n v2 = xor.i1 v0, v1\n set of, v2\n set sf, v0\n\
         v3 = get mxcsr\n v4 = zext.i64 v3\n set rax, v4\n v5 = get fpcw\n v6 = zext.i64 v5\n set rcx, v6\n\
         v7 = get fs_base\n set gs_base, v7\n v8 = iconst.i32 0x1f80\n v9 = iconst.i32 0x3f80\n set mxcsr, v9\n\
         v10 = iconst.i16 0x27f\n set fpcw, v10\n v11 = get r15\n set r14, v11\n v12 = get xmm15\n set xmm14, v12\n\
         exit jump 0x1000\n",
    );
    let mut state = state_with(&[("cf", 1), ("zf", 0), ("fs_base", 0x7000_0000), ("r15", 5), ("xmm15", 1 << 127)]);
    state.flags[3] = 0xfe; // a stray high bit in zf's byte reads as 0
    let out = check(&r, &state, &mut GuestMem::new());
    assert_eq!(out.state.flags[5], 1); // of = cf ^ zf
    assert_eq!(out.state.flags[4], 1); // sf = cf
    assert_eq!(out.state.gpr[0], 0x1f80);
    assert_eq!(out.state.gpr[1], 0x37f);
    assert_eq!(out.state.gs_base, 0x7000_0000);
    assert_eq!(out.state.mxcsr, 0x3f80);
    assert_eq!(out.state.fpcw, 0x27f);
    assert_eq!(out.state.gpr[14], 5);
    assert_eq!(out.state.xmm[14], 1 << 127);
}

#[test]
fn control_flow_traps_and_helpers() {
    let text = "region 0x1000\nblock0:\n\
         insn 0x1000, 2\n v0 = get rax\n v1 = iconst.i64 0x0\n v2 = icmp.i64 eq v0, v1\n brif v2, block1, block2\n\
         block1:\n insn 0x1002, 1\n trap divzero 0x1002\n\
         block2:\n insn 0x1003, 2\n call cpuid\n v3 = get rbx\n v4 = iconst.i64 0x1\n v8 = get rax\n v5 = sub.i64 v8, v4\n set rax, v5\n\
         v6 = icmp.i64 eq v5, v1\n brif v6, block3, block2\n\
         block3:\n insn 0x1005, 1\n v7 = get rcx\n exit_indirect ret v7\n";
    let r = region(text);
    let trapped = check(&r, &state_with(&[("rax", 0)]), &mut GuestMem::new());
    assert_eq!(trapped.exit, RegionExit::Trap { kind: TrapKind::DivZero });
    assert_eq!(trapped.state.rip, 0x1002);
    let looped = check(&r, &state_with(&[("rax", 3), ("rcx", 0x4444)]), &mut GuestMem::new());
    assert_eq!(looped.exit, RegionExit::Jump { kind: ExitKind::Ret });
    assert_eq!(looped.state.rip, 0x4444);
    assert_eq!(looped.state.gpr[0], 0);
    assert_eq!(looped.state.gpr[3], 0x1234); // rbx, from the helper
                                             // The helper saw rip at its instruction each time round the loop.
    assert_eq!(looped.helpers.iter().map(|h| h.1).collect::<Vec<_>>(), [0x1003, 0x1003, 0x1003]);
    // A syscall exit is reported as such.
    let sys = region("region 0x1000\nblock0:\n exit syscall 0x1002\n");
    assert_eq!(
        check(&sys, &GuestState::default(), &mut GuestMem::new()).exit,
        RegionExit::Jump { kind: ExitKind::Syscall }
    );
}

#[test]
fn large_frames() {
    // Enough values that slots lie beyond the reach of every load/store
    // immediate and the frame needs a two-part stack adjustment.
    let mut text = String::from("region 0x1000\nblock0:\n v0 = get rax\n v1 = iconst.i64 0x3\n");
    let n = 5000;
    for i in 2..n {
        let prev = if i == 2 { 0 } else { i - 1 };
        text.push_str(&format!(" v{i} = add.i64 v{prev}, v1\n"));
    }
    text.push_str(&format!(
        " set rax, v{}\n v{n} = get xmm0\n v{} = fadd.f32x4 v{n}, v{n}\n set xmm0, v{}\n exit jump 0x1000\n",
        n - 1,
        n + 1,
        n + 1
    ));
    let out =
        check(&region(&text), &state_with(&[("rax", 1), ("xmm0", pack(32, [0x3f80_0000; 4]))]), &mut GuestMem::new());
    assert_eq!(out.state.gpr[0], 1 + 3 * (n as u64 - 2));
    assert_eq!(out.state.xmm[0], pack(32, [0x4000_0000; 4]));
}
