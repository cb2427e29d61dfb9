//! The F16C conversions `fcvt_from_f16` and `fcvt_to_f16` on hand-derived
//! values: exact widening of normals, denormals, infinities and NaNs, and
//! narrowing at the edges of the f16 range in each rounding mode, with
//! the MXCSR flags. The JIT declines `fcvt_to_f16`, so its tests run on
//! the interpreter only (ignored on aarch64, where every executor must
//! take the region).

use super::{eval, eval_from, pack, state_with, vop};

/// `body` run from the named registers under `mxcsr`; its last value.
fn under(mxcsr: u32, regs: &[(&str, u128)], body: &str) -> u128 {
    let mut state = state_with(regs);
    state.mxcsr = mxcsr;
    eval_from(&state, body)
}

/// f16 patterns.
const H_ONE: u128 = 0x3c00;
const H_MAX: u128 = 0x7bff; // 65504
const H_INF: u128 = 0x7c00;
const H_MIN_NORMAL: u128 = 0x0400; // 2^-14
const H_MIN_DENORMAL: u128 = 0x0001; // 2^-24

/// f32 patterns.
const ONE: u128 = 0x3f80_0000;
const F_65504: u128 = 0x477f_e000;
const F_65520: u128 = 0x477f_f000;
const INF: u128 = 0x7f80_0000;
const TWO_TO_MINUS_14: u128 = 0x3880_0000;
const TWO_TO_MINUS_24: u128 = 0x3380_0000;

const DEFAULT: u32 = 0x1f80;
const IE: u128 = 0x01;
const OE: u128 = 0x08;
const UE: u128 = 0x10;
const PE: u128 = 0x20;

/// `fcvt_to_f16` of `lanes` with mode `imm` under `mxcsr`: the four
/// halves (the result's low 64 bits) and MXCSR after.
fn narrow(mxcsr: u32, imm: u16, lanes: [u128; 4]) -> (u128, u128) {
    let body = format!("v0 = get xmm0\n v1 = fcvt_to_f16.i16x8 v0, {imm}");
    let regs = [("xmm0", pack(32, lanes))];
    let value = under(mxcsr, &regs, &body);
    assert_eq!(value >> 64, 0, "the upper half is zero");
    (value, under(mxcsr, &regs, &format!("{body}\n v2 = get mxcsr")))
}

#[test]
fn widening_is_exact() {
    let halves = pack(16, [H_ONE, H_MAX, H_MIN_DENORMAL, 0x83ff, H_INF, 0xfc00, 0x8000, 0]);
    assert_eq!(
        vop("fcvt_from_f16.f32x4", &[halves]),
        pack(32, [ONE, F_65504, TWO_TO_MINUS_24, 0xb87f_c000]),
        "1, 65504, 2^-24, -(2^-14 - 2^-24)"
    );
    // The upper four halves are not read.
    assert_eq!(vop("fcvt_from_f16.f32x4", &[halves >> 64]), pack(32, [INF, 0xff80_0000, 0x8000_0000, 0]));
}

#[test]
fn widening_quiets_nans_and_ignores_daz() {
    let body = "v0 = get xmm0\n v1 = fcvt_from_f16.f32x4 v0";
    // A signalling NaN (payload 1) quieted with IE, a quiet one with its
    // sign and payload; a denormal half is no DAZ denormal.
    let halves = pack(16, [0x7c01, 0xfe05, H_MIN_DENORMAL, H_MIN_NORMAL, 0, 0, 0, 0]);
    let daz = DEFAULT | 0x40;
    let want = pack(32, [0x7fc0_2000, 0xffc0_a000, TWO_TO_MINUS_24, TWO_TO_MINUS_14]);
    assert_eq!(under(daz, &[("xmm0", halves)], body), want);
    let flags = under(daz, &[("xmm0", halves)], &format!("{body}\n v2 = get mxcsr"));
    assert_eq!(flags, u128::from(daz) | IE, "IE, and no DE");
}

#[test]
#[cfg_attr(target_arch = "aarch64", ignore = "the JIT declines fcvt_to_f16")]
fn narrowing_at_the_top_of_the_range() {
    let lanes = [F_65504, F_65520, ONE, 0x477f_efff];
    // Nearest: 65520 is the tie between 65504 and 65536 and goes to the
    // even one, infinity; just below it rounds down.
    assert_eq!(narrow(DEFAULT, 0, lanes), (pack(16, [H_MAX, H_INF, H_ONE, H_MAX, 0, 0, 0, 0]), 0x1f80 | OE | PE));
    // Toward zero (and down, for positive values): 65520 rounds to the
    // largest finite at f16's precision, no overflow; 65536 overflows to
    // the largest finite.
    let top = pack(16, [H_MAX, H_MAX, H_ONE, H_MAX, 0, 0, 0, 0]);
    assert_eq!(narrow(DEFAULT, 3, lanes), (top, 0x1f80 | PE));
    assert_eq!(narrow(DEFAULT, 1, lanes), (top, 0x1f80 | PE));
    assert_eq!(narrow(DEFAULT, 3, [0x4780_0000, 0, 0, 0]), (H_MAX, 0x1f80 | OE | PE));
    // Up: infinity beyond 65504.
    assert_eq!(narrow(DEFAULT, 2, lanes).0, pack(16, [H_MAX, H_INF, H_ONE, H_INF, 0, 0, 0, 0]));
    // Imm bit 2: MXCSR.RC (toward zero here).
    assert_eq!(narrow(DEFAULT | 0x6000, 4, lanes).0, top);
    // Infinity is exact.
    assert_eq!(narrow(DEFAULT, 0, [INF, 0, 0, 0]), (H_INF, 0x1f80));
}

#[test]
#[cfg_attr(target_arch = "aarch64", ignore = "the JIT declines fcvt_to_f16")]
fn narrowing_into_the_denormals() {
    // 2^-14 and 2^-24 exactly: no flags.
    let exact = [TWO_TO_MINUS_14, TWO_TO_MINUS_24, 0x8000_0000, 0];
    assert_eq!(narrow(DEFAULT, 0, exact), (pack(16, [H_MIN_NORMAL, H_MIN_DENORMAL, 0x8000, 0, 0, 0, 0, 0]), 0x1f80));
    // 2^-25 is the tie between 0 and 2^-24: nearest even gives 0, up
    // 2^-24; both underflow.
    assert_eq!(narrow(DEFAULT, 0, [0x3300_0000, 0, 0, 0]), (0, 0x1f80 | UE | PE));
    assert_eq!(narrow(DEFAULT, 2, [0x3300_0000, 0, 0, 0]), (H_MIN_DENORMAL, 0x1f80 | UE | PE));
    // 2^-14 - 2^-25 (exact at f16's precision, so tiny after rounding)
    // rounds as a denormal to 2^-14: UE. 2^-14 - 2^-26 rounds to 2^-14
    // at f16's precision: not tiny, PE only.
    assert_eq!(narrow(DEFAULT, 0, [0x387f_e000, 0, 0, 0]), (H_MIN_NORMAL, 0x1f80 | UE | PE));
    assert_eq!(narrow(DEFAULT, 0, [0x387f_f000, 0, 0, 0]), (H_MIN_NORMAL, 0x1f80 | PE));
    // FTZ does not flush the f16 denormal; DAZ reads an f32 denormal as zero.
    assert_eq!(narrow(DEFAULT | 0x8000, 0, [0x3340_0000, 0, 0, 0]).0, H_MIN_DENORMAL);
    assert_eq!(narrow(DEFAULT | 0x40, 2, [0x0000_0001, 0, 0, 0]), (0, u128::from(DEFAULT | 0x40)));
}

#[test]
#[cfg_attr(target_arch = "aarch64", ignore = "the JIT declines fcvt_to_f16")]
fn narrowing_quiets_and_truncates_nans() {
    // The top ten payload bits are kept, the quiet bit set; a signalling
    // NaN raises IE.
    let lanes = [0x7f80_2001, 0xffc0_0001, 0x7fbf_ffff, 0];
    let want = pack(16, [0x7e01, 0xfe00, 0x7fff, 0, 0, 0, 0, 0]);
    assert_eq!(narrow(DEFAULT, 0, lanes), (want, 0x1f80 | IE));
    // The conversion to f16 and back keeps 1.0 exactly.
    let body = "v0 = get xmm0\n v1 = fcvt_to_f16.i16x8 v0, 0\n v2 = fcvt_from_f16.f32x4 v1";
    assert_eq!(eval(&[("xmm0", pack(32, [ONE, 0, 0, 0]))], body), ONE);
}
