//! Float ops with x86 semantics, on scalars (the low lane of an xmm
//! register, as SSE scalar code has them) and on vectors: rounding, the
//! default NaN, NaN propagation (first operand first, quieted), min/max
//! returning the second operand, compare predicates and conversions.

use super::{eval, pack, table, vop};

// f64 and f32 bit patterns.
const ONE: u128 = 0x3ff0_0000_0000_0000;
const TWO: u128 = 0x4000_0000_0000_0000;
const MINUS_ONE: u128 = 0xbff0_0000_0000_0000;
const INF: u128 = 0x7ff0_0000_0000_0000;
const NEG_ZERO: u128 = 0x8000_0000_0000_0000;
const QNAN_A: u128 = 0x7ff8_0000_0000_0001;
const SNAN_B: u128 = 0x7ff0_0000_0000_0002;
const DEFAULT_NAN: u128 = 0xfff8_0000_0000_0000;
const F32_DEFAULT_NAN: u128 = 0xffc0_0000;
const MAX64: u128 = u64::MAX as u128;
const MINUS_TWO_F64: u128 = 0xc000_0000_0000_0000;

/// The vector type whose lanes are the scalar float type `ty`.
fn lanes_of(ty: &str) -> &'static str {
    match ty {
        "f64" => "f64x2",
        "f32" => "f32x4",
        _ => panic!("{ty} is not a float type"),
    }
}

/// `OP.T` on the low lanes of xmm0 and xmm1; `op` carries its type and
/// any condition (`fadd.f64`, `fcmp.f64 lt`).
fn binary(op: &str, inputs: (u128, u128)) -> u128 {
    binary_then(op, inputs, "")
}

/// As [`binary`], with the instructions `then` after the op (the value
/// of the last one is returned).
fn binary_then(op: &str, (a, b): (u128, u128), then: &str) -> u128 {
    let lanes = lanes_of(op.split(['.', ' ']).nth(1).expect("op.type"));
    eval(
        &[("xmm0", a), ("xmm1", b)],
        &format!(
            "v0 = get xmm0\n v1 = get xmm1\n v2 = extract_lane.{lanes} v0, 0\n v3 = extract_lane.{lanes} v1, 0\n \
             v4 = {op} v2, v3{then}"
        ),
    )
}

/// `OP.T` on the low lane of xmm0 (`fsqrt.f64`).
fn unary(op: &str, a: u128) -> u128 {
    let lanes = lanes_of(op.split('.').nth(1).expect("op.type"));
    eval(&[("xmm0", a)], &format!("v0 = get xmm0\n v1 = extract_lane.{lanes} v0, 0\n v2 = {op} v1"))
}

/// `fcvt_to_sint.TO` of the low `from` lane of xmm0, with rounding `imm`
/// (0 truncates, 1 rounds to nearest even).
fn to_sint(to: &str, from: &str, imm: u16, a: u128) -> u128 {
    eval(
        &[("xmm0", a)],
        &format!("v0 = get xmm0\n v1 = extract_lane.{} v0, 0\n v2 = fcvt_to_sint.{to} v1, {imm}", lanes_of(from)),
    )
}

#[test]
fn arithmetic_rounds_to_nearest() {
    table(
        binary,
        &[
            ("fadd.f64", (ONE, ONE), TWO),
            // 0.1 + 0.2 = 0.30000000000000004
            ("fadd.f64", (0x3fb9_9999_9999_999a, 0x3fc9_9999_9999_999a), 0x3fd3_3333_3333_3334),
            ("fadd.f64", (0x3ff8_0000_0000_0000, 0x4002_0000_0000_0000), 0x400e_0000_0000_0000), // 1.5 + 2.25
            ("fdiv.f64", (ONE, 0x4008_0000_0000_0000), 0x3fd5_5555_5555_5555),                   // 1/3
            ("fsub.f64", (ONE, TWO), MINUS_ONE),
            ("fmul.f64", (TWO, MINUS_ONE), 0xc000_0000_0000_0000),
            ("fdiv.f64", (ONE, 0), INF),
            ("fadd.f32", (0x3fc0_0000, 0x3fc0_0000), 0x4040_0000), // 1.5 + 1.5 = 3
            ("fdiv.f32", (0x3f80_0000, 0x4040_0000), 0x3eaa_aaab), // 1/3
            ("fsub.f32", (0x3f80_0000, 0x3f00_0000), 0x3f00_0000), // 1 - 0.5
        ],
    );
    table(unary, &[("fsqrt.f64", 0x4010_0000_0000_0000, TWO), ("fsqrt.f64", NEG_ZERO, NEG_ZERO)]);
}

#[test]
fn invalid_operations_give_the_default_nan() {
    table(
        binary,
        &[
            ("fdiv.f64", (0, 0), DEFAULT_NAN),
            ("fsub.f64", (INF, INF), DEFAULT_NAN),
            ("fadd.f64", (INF, 0xfff0_0000_0000_0000), DEFAULT_NAN),
            ("fmul.f64", (0, INF), DEFAULT_NAN),
            ("fmul.f64", (INF, 0), DEFAULT_NAN),
            ("fdiv.f32", (0, 0), F32_DEFAULT_NAN),
            ("fmul.f32", (0x7f80_0000, 0x8000_0000), F32_DEFAULT_NAN),
        ],
    );
    table(unary, &[("fsqrt.f64", MINUS_ONE, DEFAULT_NAN)]);
}

#[test]
fn nan_operands_propagate_first_operand_first_and_quieted() {
    table(
        binary,
        &[
            // x86 takes the first NaN even when the second is signalling.
            ("fadd.f64", (QNAN_A, SNAN_B), QNAN_A),
            ("fadd.f64", (SNAN_B, QNAN_A), 0x7ff8_0000_0000_0002),
            ("fadd.f64", (QNAN_A, ONE), QNAN_A),
            ("fadd.f64", (ONE, SNAN_B), 0x7ff8_0000_0000_0002),
            ("fmul.f64", (ONE, 0xfff0_0000_0000_0005), 0xfff8_0000_0000_0005),
            ("fdiv.f64", (0xfff0_0000_0000_0007, ONE), 0xfff8_0000_0000_0007),
            ("fsub.f64", (0, QNAN_A), QNAN_A),
            ("fadd.f32", (0x3f80_0000, 0x7f80_0001), 0x7fc0_0001),
            ("fadd.f32", (0xff80_0002, 0x7fc0_0001), 0xffc0_0002),
            ("fmul.f32", (0x7f80_0001, 0x7fc0_0002), 0x7fc0_0001),
        ],
    );
    table(
        unary,
        &[
            ("fsqrt.f64", 0x7ff0_0000_0000_0003, 0x7ff8_0000_0000_0003),
            ("fsqrt.f64", 0xfff8_0000_0000_0009, 0xfff8_0000_0000_0009),
            ("fsqrt.f64", SNAN_B, 0x7ff8_0000_0000_0002),
        ],
    );
}

/// A run of scalar f64 ops on the low lanes of xmm0-xmm2 (see
/// `jit/lower/nan_runs.rs`: the JIT checks their NaNs once, at the end):
/// `v6 = a * b; v7 = v6 + b; v8 = c - c; v9 = v8 + b; v10 = a + c`, with
/// lane 0 of the result `v7` and lane 1 `v9` (`v10` when `tail`).
/// `a`'s last read is early in the run, so a run executed again from
/// registers its own results had overwritten would show in `v7`.
fn f64_run((a, b, c): (u128, u128, u128), tail: bool) -> u128 {
    let lane1 = if tail { "v10" } else { "v9" };
    eval(
        &[("xmm0", a), ("xmm1", b), ("xmm2", c)],
        &format!(
            "v0 = get xmm0\n v1 = get xmm1\n v2 = get xmm2\n \
             v3 = extract_lane.f64x2 v0, 0\n v4 = extract_lane.f64x2 v1, 0\n v5 = extract_lane.f64x2 v2, 0\n \
             v6 = fmul.f64 v3, v4\n v7 = fadd.f64 v6, v4\n v8 = fsub.f64 v5, v5\n v9 = fadd.f64 v8, v4\n \
             v10 = fadd.f64 v3, v5\n v11 = insert_lane.f64x2 v1, v7, 0\n v12 = insert_lane.f64x2 v11, {lane1}, 1"
        ),
    )
}

#[test]
fn a_run_of_ops_gives_each_nan_by_the_x86_rule() {
    const THREE_HALVES: u128 = 0x3ff8_0000_0000_0000;
    // 1.5 * 2 + 2 = 5; inf - inf is the default NaN, which the next op
    // propagates as it is.
    assert_eq!(f64_run((THREE_HALVES, TWO, INF), false), pack(64, [0x4014_0000_0000_0000, DEFAULT_NAN]));
    // No invalid op: 1.5 * 2 + 2 = 5, 1 - 1 + 2 = 2.
    assert_eq!(f64_run((THREE_HALVES, TWO, ONE), false), pack(64, [0x4014_0000_0000_0000, TWO]));
    // A quiet NaN first and a signalling one second: x86 keeps the first.
    assert_eq!(f64_run((QNAN_A, TWO, SNAN_B), true), pack(64, [QNAN_A, QNAN_A]));
    // Four lanes at a time, the invalid op second.
    let f32x4 = |a: [u128; 4], b: [u128; 4]| {
        eval(
            &[("xmm0", pack(32, a)), ("xmm1", pack(32, b))],
            "v0 = get xmm0\n v1 = get xmm1\n v2 = fmul.f32x4 v0, v1\n v3 = fdiv.f32x4 v2, v2\n v4 = fadd.f32x4 v3, v0",
        )
    };
    let (one, two, inf) = (0x3f80_0000, 0x4000_0000, 0x7f80_0000);
    // (a * b) / (a * b) + a: 0/0 and inf/inf are invalid.
    assert_eq!(
        f32x4([one, 0, two, inf], [two, one, one, one]),
        pack(32, [0x4000_0000, F32_DEFAULT_NAN, 0x4040_0000, F32_DEFAULT_NAN])
    );
}

#[test]
fn min_and_max_return_the_second_operand_unless_strictly_ordered() {
    table(
        binary,
        &[
            ("fmin.f64", (ONE, TWO), ONE),
            ("fmin.f64", (TWO, ONE), ONE),
            ("fmax.f64", (ONE, TWO), TWO),
            ("fmax.f64", (TWO, ONE), TWO),
            ("fmin.f64", (0, NEG_ZERO), NEG_ZERO),
            ("fmin.f64", (NEG_ZERO, 0), 0),
            ("fmax.f64", (NEG_ZERO, 0), 0),
            ("fmax.f64", (0, NEG_ZERO), NEG_ZERO),
            ("fmin.f64", (QNAN_A, ONE), ONE),
            ("fmin.f64", (ONE, QNAN_A), QNAN_A),
            // The second operand as it is, even a signalling NaN.
            ("fmin.f64", (ONE, 0x7ff0_0000_0000_0001), 0x7ff0_0000_0000_0001),
            ("fmax.f64", (ONE, 0x7ff0_0000_0000_0001), 0x7ff0_0000_0000_0001),
            ("fmax.f32", (0x7fc0_0000, 0x3f80_0000), 0x3f80_0000),
            ("fmax.f32", (0x4000_0000, 0x3f80_0000), 0x4000_0000),
            ("fmin.f32", (0x4000_0000, 0x3f80_0000), 0x3f80_0000),
        ],
    );
}

#[test]
fn compare_predicates() {
    let nan = 0x7ff8_0000_0000_0000;
    let fcmp = |cond: &str, a, b| binary(&format!("fcmp.f64 {cond}"), (a, b));
    // (cond, 1 vs 2, 2 vs 1, 1 vs 1, 1 vs NaN, +0 vs -0)
    let predicates = [
        ("eq", 0, 0, 1, 0, 1),
        ("lt", 1, 0, 0, 0, 0),
        ("le", 1, 0, 1, 0, 1),
        ("uno", 0, 0, 0, 1, 0),
        ("une", 1, 1, 0, 1, 0),
        ("nlt", 0, 1, 1, 1, 1),
        ("nle", 0, 1, 0, 1, 0),
        ("ord", 1, 1, 1, 0, 1),
    ];
    for (cond, lt, gt, eq, uno, zeros) in predicates {
        assert_eq!(fcmp(cond, ONE, TWO), lt, "{cond} 1 2");
        assert_eq!(fcmp(cond, TWO, ONE), gt, "{cond} 2 1");
        assert_eq!(fcmp(cond, ONE, ONE), eq, "{cond} 1 1");
        assert_eq!(fcmp(cond, ONE, nan), uno, "{cond} 1 nan");
        assert_eq!(fcmp(cond, nan, ONE), uno, "{cond} nan 1");
        assert_eq!(fcmp(cond, 0, NEG_ZERO), zeros, "{cond} 0 -0");
    }
    table(
        binary,
        &[
            ("fcmp.f64 le", (TWO, TWO), 1),
            ("fcmp.f64 eq", (QNAN_A, QNAN_A), 0),
            ("fcmp.f64 uno", (QNAN_A, ONE), 1),
            ("fcmp.f64 une", (QNAN_A, QNAN_A), 1),
        ],
    );
}

#[test]
fn float_to_int_truncates_or_rounds_to_even() {
    let (two_and_half, three_and_half) = (0x4004_0000_0000_0000, 0x400c_0000_0000_0000);
    assert_eq!(to_sint("i64", "f64", 0, two_and_half), 2);
    assert_eq!(to_sint("i64", "f64", 0, three_and_half), 3);
    assert_eq!(to_sint("i64", "f64", 1, two_and_half), 2);
    assert_eq!(to_sint("i64", "f64", 1, three_and_half), 4);
    assert_eq!(to_sint("i64", "f64", 1, 0xc004_0000_0000_0000), 0xffff_ffff_ffff_fffe); // -2.5 -> -2
    assert_eq!(to_sint("i64", "f64", 1, 0xc00c_0000_0000_0000), 0xffff_ffff_ffff_fffc); // -3.5 -> -4
    assert_eq!(to_sint("i64", "f64", 0, 0xc00c_0000_0000_0000), 0xffff_ffff_ffff_fffd); // -3.5 -> -3
    assert_eq!(to_sint("i32", "f64", 0, MINUS_ONE), 0xffff_ffff);
    assert_eq!(to_sint("i32", "f64", 0, 0x41df_ffff_ffff_3333), 0x7fff_ffff); // 2147483647.95 truncates
    assert_eq!(to_sint("i32", "f64", 1, 0xc004_0000_0000_0000), 0xffff_fffe); // -2.5 rounds to even
    assert_eq!(to_sint("i32", "f64", 1, two_and_half), 2);
    assert_eq!(to_sint("i32", "f64", 0, 0xc004_0000_0000_0000), 0xffff_fffe); // -2.5 truncates to -2
}

#[test]
fn float_to_int_out_of_range_or_nan_is_indefinite() {
    let e20 = 0x4415_af1d_78b5_8c40; // 1e20
    assert_eq!(to_sint("i64", "f64", 0, e20), 0x8000_0000_0000_0000);
    assert_eq!(to_sint("i64", "f64", 1, e20 | NEG_ZERO), 0x8000_0000_0000_0000);
    assert_eq!(to_sint("i64", "f64", 0, 0x7ff8_0000_0000_0000), 0x8000_0000_0000_0000);
    assert_eq!(to_sint("i64", "f64", 1, INF), 0x8000_0000_0000_0000);
    assert_eq!(to_sint("i64", "f64", 0, 0x43e0_0000_0000_0000), 0x8000_0000_0000_0000); // 2^63
                                                                                        // The largest double below 2^63.
    assert_eq!(to_sint("i64", "f64", 0, 0x43df_ffff_ffff_ffff), 0x7fff_ffff_ffff_fc00);
    // 2147483647.5: truncation fits, rounding (to 2^31) does not.
    assert_eq!(to_sint("i32", "f64", 0, 0x41df_ffff_ffe0_0000), 0x7fff_ffff);
    assert_eq!(to_sint("i32", "f64", 1, 0x41df_ffff_ffe0_0000), 0x8000_0000);
    assert_eq!(to_sint("i32", "f64", 0, 0x7ff0_0000_0000_0001), 0x8000_0000);
    assert_eq!(to_sint("i32", "f64", 0, 0x41e0_0000_0000_0000), 0x8000_0000); // 2^31
    assert_eq!(to_sint("i32", "f64", 0, QNAN_A), 0x8000_0000);
}

#[test]
fn f32_to_int() {
    assert_eq!(to_sint("i32", "f32", 0, 0xbfc0_0000), 0xffff_ffff); // -1.5 -> -1
    assert_eq!(to_sint("i32", "f32", 1, 0xbfc0_0000), 0xffff_fffe); // -1.5 -> -2
    assert_eq!(to_sint("i32", "f32", 0, 0x4f00_0000), 0x8000_0000); // 2^31
    assert_eq!(to_sint("i64", "f32", 0, 0x5f00_0000), 0x8000_0000_0000_0000); // 2^63
    assert_eq!(to_sint("i64", "f32", 0, 0xbfc0_0000), MAX64); // -1.5 truncates to -1
    assert_eq!(to_sint("i64", "f32", 1, 0x7fc0_0000), 0x8000_0000_0000_0000);
}

#[test]
fn int_to_float_rounds_to_nearest_even() {
    let to64 = |x| eval(&[("rax", x)], "v0 = get rax\n v1 = sint_to_f.f64 v0");
    assert_eq!(to64(u64::MAX.into()), MINUS_ONE);
    assert_eq!(to64(0x20_0000_0000_0001), 0x4340_0000_0000_0000); // 2^53 + 1 -> 2^53
    assert_eq!(to64(0x20_0000_0000_0003), 0x4340_0000_0000_0002); // 2^53 + 3 -> 2^53 + 4
    let to32 = |x| eval(&[("rax", x)], "v0 = get rax\n v1 = sint_to_f.f32 v0");
    // 2^53 + 2^29 + 1: rounded once it is 2^53 + 2^30, not 2^53 as
    // rounding through f64 would give.
    assert_eq!(to32(0x20_0000_2000_0001), 0x5a00_0001);
    assert_eq!(to32((1 << 53) + 1), 0x5a00_0000);
    let i32_to32 = |x| eval(&[("rax", x)], "v0 = get rax\n v1 = trunc.i32 v0\n v2 = sint_to_f.f32 v1");
    assert_eq!(i32_to32(0x100_0001), 0x4b80_0000); // 2^24 + 1 -> 2^24
    assert_eq!(i32_to32(0xffff_fffe), 0xc000_0000); // -2
    assert_eq!(eval(&[("rax", 0xffff_ffff)], "v0 = get rax\n v1 = trunc.i32 v0\n v2 = sint_to_f.f64 v1"), MINUS_ONE);
}

#[test]
fn float_to_float() {
    let widen = |x| eval(&[("xmm0", x)], "v0 = get xmm0\n v1 = extract_lane.f32x4 v0, 0\n v2 = fconvert.f64 v1");
    assert_eq!(widen(0x3fc0_0000), 0x3ff8_0000_0000_0000);
    assert_eq!(widen(0x8000_0001), 0xb6a0_0000_0000_0000); // smallest negative subnormal: -2^-149
    assert_eq!(widen(0x7f80_0001), 0x7ff8_0000_2000_0000); // quieted, payload on top
    assert_eq!(widen(0xffc0_0001), 0xfff8_0000_2000_0000);
    let narrow = |x| eval(&[("xmm0", x)], "v0 = get xmm0\n v1 = extract_lane.f64x2 v0, 0\n v2 = fconvert.f32 v1");
    assert_eq!(narrow(0x3fd5_5555_5555_5555), 0x3eaa_aaab); // 1/3
    assert_eq!(narrow(0x7fef_ffff_ffff_ffff), 0x7f80_0000); // overflow to infinity
    assert_eq!(narrow(NEG_ZERO), 0x8000_0000);
    assert_eq!(narrow(0x7ff0_0000_0000_0001), 0x7fc0_0000); // low payload bits dropped
    assert_eq!(narrow(0xfff4_0000_2000_0000), 0xffe0_0001);
    assert_eq!(narrow(0x7ff4_0000_0000_0000), 0x7fe0_0000);
    assert_eq!(narrow(0x3ff8_0000_0000_0000), 0x3fc0_0000);
}

#[test]
fn vector_lanes() {
    let a = pack(32, [0x3f80_0000, 0x7f80_0001, 0x7f80_0000, 0xc000_0000]); // 1, sNaN, inf, -2
    let b = pack(32, [0x3f80_0000, 0x3f80_0000, 0xff80_0000, 0x4000_0000]); // 1, 1, -inf, 2
    assert_eq!(vop("fadd.f32x4", &[a, b]), pack(32, [0x4000_0000, 0x7fc0_0001, F32_DEFAULT_NAN, 0]));
    assert_eq!(vop("fcmp.f32x4 lt", &[a, b]), pack(32, [0, 0, 0, 0xffff_ffff]));
    assert_eq!(vop("fcmp.f32x4 une", &[a, b]), pack(32, [0, 0xffff_ffff, 0xffff_ffff, 0xffff_ffff]));
    assert_eq!(vop("fmin.f32x4", &[a, b]), pack(32, [0x3f80_0000, 0x3f80_0000, 0xff80_0000, 0xc000_0000]));
    let a = pack(32, [0x3f80_0000, 0x7f80_0001, 0x7f80_0000, 0xff80_0000]);
    let b = pack(32, [0x4000_0000, 0x3f80_0000, 0xff80_0000, 0xff80_0000]);
    assert_eq!(vop("fadd.f32x4", &[a, b]), pack(32, [0x4040_0000, 0x7fc0_0001, F32_DEFAULT_NAN, 0xff80_0000]));
    let d = pack(64, [ONE, 0xfff0_0000_0000_0001]);
    assert_eq!(vop("fmul.f64x2", &[d, d]), pack(64, [ONE, 0xfff8_0000_0000_0001]));
    let a = pack(64, [ONE, QNAN_A]);
    let b = pack(64, [SNAN_B, ONE]);
    assert_eq!(vop("fmul.f64x2", &[a, b]), pack(64, [0x7ff8_0000_0000_0002, QNAN_A]));
    assert_eq!(vop("fmin.f64x2", &[a, b]), pack(64, [SNAN_B, ONE]));
    assert_eq!(vop("fmax.f64x2", &[b, a]), pack(64, [ONE, QNAN_A]));
    assert_eq!(vop("fcmp.f64x2 lt", &[a, b]), 0);
    assert_eq!(vop("fcmp.f64x2 une", &[a, b]), u128::MAX);
    assert_eq!(vop("fcmp.f64x2 ord", &[a, pack(64, [ONE, ONE])]), pack(64, [MAX64, 0]));
    assert_eq!(vop("fsqrt.f64x2", &[pack(64, [0x4010_0000_0000_0000, MINUS_ONE])]), pack(64, [TWO, DEFAULT_NAN]));
    assert_eq!(
        vop("fsqrt.f32x4", &[pack(32, [0x4080_0000, 0xbf80_0000, 0, 0x7f80_0000])]),
        pack(32, [0x4000_0000, F32_DEFAULT_NAN, 0, 0x7f80_0000])
    );
}

#[test]
fn vector_conversions() {
    // cvttps2dq and cvtps2dq: 1.5, -1.5, NaN, 3e9; truncation with the
    // integer indefinite for NaN and out of range.
    let v = pack(32, [0x3fc0_0000, 0xbfc0_0000, 0x7fc0_0000, 0x4f32_d05e]);
    assert_eq!(vop("fcvt_to_sint.i32x4, 0", &[v]), pack(32, [1, 0xffff_ffff, 0x8000_0000, 0x8000_0000]));
    assert_eq!(vop("fcvt_to_sint.i32x4, 1", &[v]), pack(32, [2, 0xffff_fffe, 0x8000_0000, 0x8000_0000]));
    let f = pack(32, [0x3fc0_0000, 0xbfc0_0000, 0x4f80_0000, 0x7fc0_0000]);
    assert_eq!(vop("fcvt_to_sint.i32x4, 0", &[f]), pack(32, [1, 0xffff_ffff, 0x8000_0000, 0x8000_0000]));
    assert_eq!(vop("fcvt_to_sint.i32x4, 1", &[f]), pack(32, [2, 0xffff_fffe, 0x8000_0000, 0x8000_0000]));
    // cvttpd2dq and cvtpd2dq: 2.5, 3.5; the upper lanes are zeroed.
    let d = pack(64, [0x4004_0000_0000_0000, 0x400c_0000_0000_0000]);
    assert_eq!(vop("fcvt_to_sint.i32x4, 2", &[d]), pack(32, [2, 3, 0, 0]));
    assert_eq!(vop("fcvt_to_sint.i32x4, 3", &[d]), pack(32, [2, 4, 0, 0]));
    let d = pack(64, [0x41df_ffff_ffc0_0000, 0xc00d_9999_9999_999a]); // 2147483647.0, -3.7
    assert_eq!(vop("fcvt_to_sint.i32x4, 2", &[d]), pack(32, [0x7fff_ffff, 0xffff_fffd, 0, 0]));
    assert_eq!(
        vop("fcvt_to_sint.i32x4, 3", &[pack(64, [0x41e0_0000_0000_0000, QNAN_A])]),
        pack(32, [0x8000_0000, 0x8000_0000, 0, 0])
    );
    // cvtdq2pd and cvtdq2ps.
    let i = pack(32, [0xffff_ffff, 2, 0, 0x100_0001]);
    assert_eq!(vop("sint_to_f.f64x2", &[i]), pack(64, [MINUS_ONE, TWO]));
    assert_eq!(vop("sint_to_f.f32x4", &[i]), pack(32, [0xbf80_0000, 0x4000_0000, 0, 0x4b80_0000]));
    let ints = pack(32, [1, 0xffff_ffff, 3, 0]);
    assert_eq!(vop("sint_to_f.f64x2", &[ints]), pack(64, [ONE, MINUS_ONE]));
    assert_eq!(vop("sint_to_f.f32x4", &[ints]), pack(32, [0x3f80_0000, 0xbf80_0000, 0x4040_0000, 0]));
    // cvtps2pd and cvtpd2ps.
    let s = pack(32, [0x3fc0_0000, 0x8000_0000, 0x1234_5678, 0x1234_5678]);
    assert_eq!(vop("fconvert.f64x2", &[s]), pack(64, [0x3ff8_0000_0000_0000, NEG_ZERO]));
    assert_eq!(
        vop("fconvert.f64x2", &[pack(32, [0x3fc0_0000, 0xbf80_0000, 5, 6])]),
        pack(64, [0x3ff8_0000_0000_0000, MINUS_ONE])
    );
    let d = pack(64, [ONE, 0x7ff0_0000_0000_0001]);
    assert_eq!(vop("fconvert.f32x4", &[d]), pack(32, [0x3f80_0000, 0x7fc0_0000, 0, 0]));
    assert_eq!(
        vop("fconvert.f32x4", &[pack(64, [0x3ff8_0000_0000_0000, ONE])]),
        pack(32, [0x3fc0_0000, 0x3f80_0000, 0, 0])
    );
}

/// MXCSR after `op` (`fdiv.f64`, `fcmp.f64 lt`...) on the low lanes of
/// xmm0 and xmm1, from the default MXCSR: the op's exception flags (the
/// JIT's come from FPSR, see `jit::lower::fpsr_flags`).
fn mxcsr_after(op: &str, inputs: (u128, u128)) -> u128 {
    binary_then(op, inputs, "\n v5 = get mxcsr")
}

#[test]
fn exception_flags_reach_mxcsr() {
    const THREE: u128 = 0x4008_0000_0000_0000;
    const MAX: u128 = 0x7fef_ffff_ffff_ffff;
    const MIN_NORMAL: u128 = 0x0010_0000_0000_0000;
    table(
        mxcsr_after,
        &[
            ("fadd.f64", (ONE, TWO), 0x1f80),
            ("fdiv.f64", (ONE, THREE), 0x1fa0),
            ("fdiv.f64", (ONE, 0), 0x1f84),
            ("fdiv.f64", (0, 0), 0x1f81),
            ("fmul.f64", (MAX, TWO), 0x1fa8),
            ("fdiv.f64", (MIN_NORMAL, THREE), 0x1fb0),
            // (1 - 2^-53) * 2^-1022 rounds (a tie, to even) to 2^-1022, but
            // with an unbounded exponent it would stay below: tiny, UE.
            ("fmul.f64", (0x3fef_ffff_ffff_ffff, MIN_NORMAL), 0x1fb0),
            ("fadd.f64", (SNAN_B, ONE), 0x1f81),
            ("fadd.f64", (QNAN_A, ONE), 0x1f80),
            // Signalling and quiet compares, minsd.
            ("fcmp.f64 lt", (QNAN_A, ONE), 0x1f81),
            ("fcmp.f64 nle_q", (QNAN_A, ONE), 0x1f80),
            ("fcmp.f64 eq", (SNAN_B, ONE), 0x1f81),
            ("fcmp.f64 eq_s", (QNAN_A, ONE), 0x1f81),
            ("fmin.f64", (QNAN_A, ONE), 0x1f81),
            ("fmax.f64", (ONE, TWO), 0x1f80),
        ],
    );
}

/// `fround.T` on the low lane of xmm0 with mode `imm`, then MXCSR (from
/// the default): `(value, mxcsr)`.
fn round(ty: &str, imm: u16, a: u128) -> (u128, u128) {
    let lanes = lanes_of(ty);
    let body = format!("v0 = get xmm0\n v1 = extract_lane.{lanes} v0, 0\n v2 = fround.{ty} v1, {imm}");
    (eval(&[("xmm0", a)], &body), eval(&[("xmm0", a)], &format!("{body}\n v3 = get mxcsr")))
}

#[test]
fn round_to_integral_by_mode() {
    const ONE_HALF: u128 = 0x3ff8_0000_0000_0000; // 1.5
    const MINUS_ONE_HALF: u128 = 0xbff8_0000_0000_0000;
    // Modes 8-11 (nearest even, down, up, toward zero, no PE); 0 and 4
    // (MXCSR.RC, nearest under the default) raise PE when the value
    // changes, 12 does not. (Modes 1-3, directed with PE, the JIT leaves
    // to the interpreter; the oracle checks them against the CPU.)
    for (imm, a, r) in [
        (8, ONE_HALF, TWO),
        (9, ONE_HALF, ONE),
        (10, ONE_HALF, TWO),
        (11, ONE_HALF, ONE),
        (8, MINUS_ONE_HALF, MINUS_TWO_F64),
        (9, MINUS_ONE_HALF, MINUS_TWO_F64),
        (10, MINUS_ONE_HALF, MINUS_ONE),
        (11, MINUS_ONE_HALF, MINUS_ONE),
        (12, ONE_HALF, TWO),
        (11, 0xbfe0_0000_0000_0000, NEG_ZERO),
    ] {
        assert_eq!(round("f64", imm, a), (r, 0x1f80), "mode {imm} of {a:#x}");
    }
    for imm in [0, 4] {
        assert_eq!(round("f64", imm, ONE_HALF), (TWO, 0x1fa0));
        assert_eq!(round("f64", imm, TWO), (TWO, 0x1f80));
    }
    // NaNs: quieted, IE for a signalling one.
    assert_eq!(round("f64", 9, QNAN_A), (QNAN_A, 0x1f80));
    assert_eq!(round("f64", 9, SNAN_B), (0x7ff8_0000_0000_0002, 0x1f81));
    assert_eq!(round("f32", 10, 0x3fc0_0000), (0x4000_0000, 0x1f80));
    assert_eq!(round("f32", 0, 0x3fc0_0000), (0x4000_0000, 0x1fa0));
}

#[test]
fn round_vector_lanes() {
    // 1.5, -1.5, 2.5, -0.5 by each suppressed mode.
    let v = pack(32, [0x3fc0_0000, 0xbfc0_0000, 0x4020_0000, 0xbf00_0000]);
    assert_eq!(vop("fround.f32x4, 8", &[v]), pack(32, [0x4000_0000, 0xc000_0000, 0x4000_0000, 0x8000_0000]));
    assert_eq!(vop("fround.f32x4, 9", &[v]), pack(32, [0x3f80_0000, 0xc000_0000, 0x4000_0000, 0xbf80_0000]));
    assert_eq!(vop("fround.f32x4, 10", &[v]), pack(32, [0x4000_0000, 0xbf80_0000, 0x4040_0000, 0x8000_0000]));
    assert_eq!(vop("fround.f32x4, 11", &[v]), pack(32, [0x3f80_0000, 0xbf80_0000, 0x4000_0000, 0x8000_0000]));
    let d = pack(64, [0x4004_0000_0000_0000, 0xc004_0000_0000_0000]); // 2.5, -2.5
    assert_eq!(vop("fround.f64x2, 0", &[d]), pack(64, [TWO, MINUS_TWO_F64]));
}

/// `fma.f64x2` (negations `imm`) on xmm0 * xmm1 + xmm2, each lane pair
/// given, then the value or (`then_mxcsr`) MXCSR from the default.
fn fma_f64x2(imm: u16, [a, b, c]: [[u128; 2]; 3], then_mxcsr: bool) -> u128 {
    let tail = if then_mxcsr { "\n v4 = get mxcsr" } else { "" };
    eval(
        &[("xmm0", pack(64, a)), ("xmm1", pack(64, b)), ("xmm2", pack(64, c))],
        &format!("v0 = get xmm0\n v1 = get xmm1\n v2 = get xmm2\n v3 = fma.f64x2 v0, v1, v2, {imm}{tail}"),
    )
}

/// Scalar `fma.f64` (negations `imm`) on the low lanes of xmm0, xmm1,
/// xmm2, then the value or (`then_mxcsr`) MXCSR from the default.
fn fma_f64(imm: u16, [a, b, c]: [u128; 3], then_mxcsr: bool) -> u128 {
    let tail = if then_mxcsr { "\n v7 = get mxcsr" } else { "" };
    eval(
        &[("xmm0", a), ("xmm1", b), ("xmm2", c)],
        &format!(
            "v0 = get xmm0\n v1 = get xmm1\n v2 = get xmm2\n v3 = extract_lane.f64x2 v0, 0\n \
             v4 = extract_lane.f64x2 v1, 0\n v5 = extract_lane.f64x2 v2, 0\n v6 = fma.f64 v3, v4, v5, {imm}{tail}"
        ),
    )
}

#[test]
fn scalar_fused_multiply_add_nans() {
    const QUIET_B: u128 = SNAN_B | 0x0008_0000_0000_0000;
    const NEG_QNAN: u128 = QNAN_A | NEG_ZERO;
    // The first NaN of a, b, c, quieted, never negated, whatever the
    // negations (imm 3: vfnmsub); a negative NaN keeps its sign.
    for imm in [0, 1, 2, 3] {
        assert_eq!(fma_f64(imm, [ONE, QNAN_A, QUIET_B], false), QNAN_A, "imm {imm}");
        assert_eq!(fma_f64(imm, [ONE, TWO, NEG_QNAN], false), NEG_QNAN, "imm {imm}");
        assert_eq!(fma_f64(imm, [SNAN_B, ONE, QNAN_A], false), QUIET_B, "imm {imm}");
    }
    // Quiet NaNs raise nothing, a signalling one IE; inf * 0 + QNaN is the
    // QNaN without IE, inf * 0 + 1 the default NaN with IE.
    assert_eq!(fma_f64(3, [ONE, QNAN_A, QUIET_B], true), 0x1f80);
    assert_eq!(fma_f64(0, [ONE, ONE, SNAN_B], true), 0x1f81);
    assert_eq!(fma_f64(0, [INF, 0, QNAN_A], false), QNAN_A);
    assert_eq!(fma_f64(0, [INF, 0, QNAN_A], true), 0x1f80);
    assert_eq!(fma_f64(1, [INF, 0, ONE], false), DEFAULT_NAN);
    assert_eq!(fma_f64(1, [INF, 0, ONE], true), 0x1f81);
    // Numbers: 2 * 2 + 1, -(2 * 2) - 1.
    assert_eq!(fma_f64(0, [TWO, TWO, ONE], false), 0x4014_0000_0000_0000);
    assert_eq!(fma_f64(3, [TWO, TWO, ONE], false), 0xc014_0000_0000_0000);
}

#[test]
fn fused_multiply_add_rounds_once() {
    // (1 + 2^-30)(1 - 2^-30) = 1 - 2^-60 exactly: fused with -1 it is
    // -2^-60; the product alone rounds to 1 (2^-60 is below half an ulp
    // of 1), so an unfused multiply and add would give 0.
    const A: u128 = 0x3ff0_0000_0040_0000;
    const B: u128 = 0x3fef_ffff_ff80_0000;
    const TINY: u128 = 0x3c30_0000_0000_0000; // 2^-60
    assert_eq!(binary("fmul.f64", (A, B)), ONE, "the product alone rounds to 1");
    assert_eq!(fma_f64x2(0, [[A, A], [B, B], [MINUS_ONE, MINUS_ONE]], false), pack(64, [TINY | NEG_ZERO; 2]));
    // vfmaddsub: the even lane subtracts its addend, the odd one adds it.
    assert_eq!(fma_f64x2(2, [[A, A], [B, B], [ONE, MINUS_ONE]], false), pack(64, [TINY | NEG_ZERO; 2]));
    // vfnmadd: -(a * b) + c.
    assert_eq!(fma_f64x2(1, [[A, TWO], [B, TWO], [ONE, ONE]], false), pack(64, [TINY, 0xc008_0000_0000_0000]));
    // vfnmsub: -(2 * 2) - 1 = -5; vfmsubadd: 2 * 2 + 1 = 5, 2 * 2 - 1 = 3.
    let twice_two_and_one = [[TWO, TWO], [TWO, TWO], [ONE, ONE]];
    assert_eq!(fma_f64x2(7, twice_two_and_one, false), pack(64, [0xc014_0000_0000_0000; 2]));
    assert_eq!(fma_f64x2(4, twice_two_and_one, false), pack(64, [0x4014_0000_0000_0000, 0x4008_0000_0000_0000]));
}

#[test]
fn fused_multiply_add_nans() {
    const QUIET_B: u128 = SNAN_B | 0x0008_0000_0000_0000;
    // The first NaN of a, b, c, quieted, never negated (vfnmsub: imm 7).
    assert_eq!(fma_f64x2(7, [[ONE, SNAN_B], [QNAN_A, QNAN_A], [SNAN_B, ONE]], false), pack(64, [QNAN_A, QUIET_B]));
    // Quiet NaNs alone (no IE): a's, else b's, before the addend's, and
    // never negated (arm64 takes the addend's first and negates).
    let quiet = [[ONE, QNAN_A], [QNAN_A, ONE], [QUIET_B, QUIET_B]];
    assert_eq!(fma_f64x2(0, quiet, false), pack(64, [QNAN_A, QNAN_A]));
    assert_eq!(fma_f64x2(7, quiet, false), pack(64, [QNAN_A, QNAN_A]));
    assert_eq!(fma_f64x2(7, quiet, true), 0x1f80);
    assert_eq!(fma_f64x2(1, [[ONE, ONE], [ONE, ONE], [QUIET_B, QNAN_A]], false), pack(64, [QUIET_B, QNAN_A]));
    assert_eq!(fma_f64x2(6, [[ONE, ONE], [ONE, ONE], [QUIET_B, QNAN_A]], false), pack(64, [QUIET_B, QNAN_A]));
    assert_eq!(fma_f64x2(2, [[ONE, ONE], [ONE, ONE], [QUIET_B, QNAN_A]], false), pack(64, [QUIET_B, QNAN_A]));
    // inf * 0 is invalid (the default NaN), but a NaN addend is returned
    // as it is, without IE.
    assert_eq!(fma_f64x2(0, [[INF, INF], [0, 0], [ONE, QNAN_A]], false), pack(64, [DEFAULT_NAN, QNAN_A]));
    assert_eq!(fma_f64x2(0, [[INF, ONE], [0, ONE], [QNAN_A, ONE]], true), 0x1f80);
    assert_eq!(fma_f64x2(0, [[INF, ONE], [0, ONE], [ONE, ONE]], true), 0x1f81);
    assert_eq!(fma_f64x2(0, [[ONE, ONE], [ONE, ONE], [SNAN_B, ONE]], true), 0x1f81);
}
