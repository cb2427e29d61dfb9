//! Float ops under MXCSR values other than the default, which translated
//! code runs under too: each rounding mode (the JIT's FPCR.RMode, set by
//! the entry trampoline) and FTZ with DAZ (its FPCR.FZ), on arithmetic,
//! square root, min/max, compares, conversions both ways and packed
//! forms. Expected values are worked out by hand; on aarch64 every run is
//! also the JIT's against the interpreter's, and a sweep of edge values
//! compares the two in every mode, results and MXCSR flags.

use super::{eval_from, pack, state_with};

/// MXCSR with every exception masked and rounding control `rc`.
const NEAREST: u32 = 0x1f80;
const DOWN: u32 = 0x3f80;
const UP: u32 = 0x5f80;
const ZERO: u32 = 0x7f80;
/// FTZ and DAZ, as crtfastmath sets them for `-Ofast`.
const FTZ_DAZ: u32 = 0x8040;
/// MXCSR's underflow and precision flags, which a flushed result raises.
const UE_PE: u32 = 0x30;

const ONE: u128 = 0x3ff0_0000_0000_0000;
const MINUS_ONE: u128 = 0xbff0_0000_0000_0000;
const THREE: u128 = 0x4008_0000_0000_0000;
const THIRD: u128 = 0x3fd5_5555_5555_5555;
const MINUS_THIRD: u128 = 0xbfd5_5555_5555_5555;
const TWO_AND_HALF: u128 = 0x4004_0000_0000_0000;
const MINUS_TWO_AND_HALF: u128 = 0xc004_0000_0000_0000;
const MAX: u128 = 0x7fef_ffff_ffff_ffff;
const INF: u128 = 0x7ff0_0000_0000_0000;
const MIN_NORMAL: u128 = 0x0010_0000_0000_0000;
/// 2^-1060, a double denormal, and its negative.
const DENORMAL: u128 = 0x4000;
const MINUS_DENORMAL: u128 = 0x8000_0000_0000_4000;
/// 2^-1000 and 2^-60: their product is `DENORMAL`.
const TINY: u128 = 0x0170_0000_0000_0000;
const TWO_M60: u128 = 0x3c30_0000_0000_0000;
const QNAN: u128 = 0x7ff8_0000_0000_0001;
const SNAN: u128 = 0x7ff0_0000_0000_0002;
/// 2147483647.5 and -2147483648.5: out of the i32 range or not, by mode.
const I32_MAX_AND_HALF: u128 = 0x41df_ffff_ffe0_0000;
const I32_MIN_AND_HALF: u128 = 0xc1e0_0000_0010_0000;

/// `body` run from the named registers under `mxcsr`; its last value.
fn under(mxcsr: u32, regs: &[(&str, u128)], body: &str) -> u128 {
    let mut state = state_with(regs);
    state.mxcsr = mxcsr;
    eval_from(&state, body)
}

/// The body of `OP.T` on the low lanes of xmm0 and xmm1 (`fsqrt` on
/// xmm0's, a conversion on xmm0's), then `get mxcsr` when `flags`.
fn scalar(op: &str, flags: bool) -> String {
    let (name, ty) = op.split_once('.').expect("op.type");
    let ty = ty.split([' ', ',']).next().expect("type");
    // The lane type of the operands: a conversion's source.
    let lanes = if op.contains(" from_f64") || (name, ty) == ("fconvert", "f32") {
        "f64x2"
    } else if ty == "f32" || matches!(name, "fconvert" | "fcvt_to_sint") {
        "f32x4"
    } else {
        "f64x2"
    };
    let op = op.replace(" from_f64", "");
    let unary = matches!(name, "fsqrt" | "fconvert" | "fcvt_to_sint");
    let args = if unary { "v2".to_string() } else { "v2, v3".to_string() };
    let (head, imm) = op.split_once(',').map_or((op.as_str(), String::new()), |(h, i)| (h, format!(",{i}")));
    let tail = if flags { "\n v5 = get mxcsr" } else { "" };
    format!(
        "v0 = get xmm0\n v1 = get xmm1\n v2 = extract_lane.{lanes} v0, 0\n v3 = extract_lane.{lanes} v1, 0\n \
         v4 = {head} {args}{imm}{tail}"
    )
}

/// Checks `op` on `inputs` in the four rounding modes (nearest, down, up,
/// toward zero) against `want`, and with FTZ and DAZ added, which change
/// nothing for operands and results that are not denormal.
fn in_each_mode(op: &str, inputs: (u128, u128), want: [u128; 4]) {
    for (rc, want) in [NEAREST, DOWN, UP, ZERO].into_iter().zip(want) {
        for mxcsr in [rc, rc | FTZ_DAZ] {
            let got = under(mxcsr, &[("xmm0", inputs.0), ("xmm1", inputs.1)], &scalar(op, false));
            assert_eq!(got, want, "{op} {inputs:x?} under {mxcsr:#x}: got {got:#x}, want {want:#x}");
        }
    }
}

#[test]
fn arithmetic_rounds_by_rc() {
    in_each_mode("fdiv.f64", (ONE, THREE), [THIRD, THIRD, THIRD + 1, THIRD]);
    in_each_mode("fdiv.f64", (MINUS_ONE, THREE), [MINUS_THIRD, MINUS_THIRD + 1, MINUS_THIRD, MINUS_THIRD]);
    in_each_mode("fdiv.f32", (0x3f80_0000, 0x4040_0000), [0x3eaa_aaab, 0x3eaa_aaaa, 0x3eaa_aaab, 0x3eaa_aaaa]);
    // sqrt(2) lies between 0x...3bcc and 0x...3bcd, nearer the second.
    let two = 0x4000_0000_0000_0000;
    let root = 0x3ff6_a09e_667f_3bcc;
    in_each_mode("fsqrt.f64", (two, 0), [root + 1, root, root + 1, root]);
    // 1 + 2^-24 in f32: halfway, to even (1) by nearest.
    in_each_mode("fadd.f32", (0x3f80_0000, 0x3380_0000), [0x3f80_0000, 0x3f80_0000, 0x3f80_0001, 0x3f80_0000]);
    in_each_mode("fsub.f32", (0xbf80_0000, 0x3380_0000), [0xbf80_0000, 0xbf80_0001, 0xbf80_0000, 0xbf80_0000]);
    // Overflow: infinity or the largest finite value, by direction.
    in_each_mode("fmul.f64", (MAX, 0x4000_0000_0000_0000), [INF, MAX, INF, MAX]);
    let (neg_max, neg_inf) = (MAX | 1 << 63, INF | 1 << 63);
    in_each_mode("fmul.f64", (neg_max, 0x4000_0000_0000_0000), [neg_inf, neg_inf, neg_max, neg_max]);
}

#[test]
fn conversions_round_by_rc() {
    let round = "fcvt_to_sint.i32 from_f64, 1";
    in_each_mode(round, (TWO_AND_HALF, 0), [2, 2, 3, 2]);
    in_each_mode(round, (MINUS_TWO_AND_HALF, 0), [0xffff_fffe, 0xffff_fffd, 0xffff_fffe, 0xffff_fffe]);
    // Truncation does not look at RC.
    in_each_mode("fcvt_to_sint.i32 from_f64, 0", (MINUS_TWO_AND_HALF, 0), [0xffff_fffe; 4]);
    // Out of range or not by the mode: the indefinite, or the edge.
    in_each_mode(round, (I32_MAX_AND_HALF, 0), [0x8000_0000, 0x7fff_ffff, 0x8000_0000, 0x7fff_ffff]);
    in_each_mode(round, (I32_MIN_AND_HALF, 0), [0x8000_0000; 4]);
    in_each_mode("fcvt_to_sint.i64, 1", (0x3fc0_0000, 0), [2, 1, 2, 1]); // 1.5
    in_each_mode("fcvt_to_sint.i32, 1", (0xbfc0_0000, 0), [0xffff_fffe, 0xffff_fffe, 0xffff_ffff, 0xffff_ffff]);
    in_each_mode("fcvt_to_sint.i64 from_f64, 1", (0xbfe0_0000_0000_0000, 0), [0, u64::MAX.into(), 0, 0]); // -0.5
                                                                                                          // cvtsd2ss of 1/3.
    in_each_mode("fconvert.f32", (THIRD, 0), [0x3eaa_aaab, 0x3eaa_aaaa, 0x3eaa_aaab, 0x3eaa_aaaa]);
    // cvtsi2ss of 2^24 + 1 and its negative.
    let to_f32 = |mxcsr, x| under(mxcsr, &[("rax", x)], "v0 = get rax\n v1 = sint_to_f.f32 v0");
    for (mxcsr, plus, minus) in [
        (NEAREST, 0x4b80_0000, 0xcb80_0000),
        (DOWN, 0x4b80_0000, 0xcb80_0001),
        (UP, 0x4b80_0001, 0xcb80_0000),
        (ZERO, 0x4b80_0000, 0xcb80_0000),
    ] {
        assert_eq!(to_f32(mxcsr, 0x100_0001), plus, "under {mxcsr:#x}");
        assert_eq!(to_f32(mxcsr, (-0x100_0001i64 as u64).into()), minus, "under {mxcsr:#x}");
    }
}

/// MXCSR after `op` on `inputs` under `mxcsr`.
fn flags_under(mxcsr: u32, op: &str, inputs: (u128, u128)) -> u128 {
    under(mxcsr, &[("xmm0", inputs.0), ("xmm1", inputs.1)], &scalar(op, true))
}

#[test]
fn rounding_conversions_raise_ie_or_pe() {
    // Out of range: IE alone; in range and inexact: PE.
    let round = "fcvt_to_sint.i32 from_f64, 1";
    for (mxcsr, flag) in [(NEAREST, 1), (DOWN, 0x20), (UP, 1), (ZERO, 0x20)] {
        assert_eq!(flags_under(mxcsr, round, (I32_MAX_AND_HALF, 0)), u128::from(mxcsr | flag), "{mxcsr:#x}");
    }
    for (mxcsr, flag) in [(NEAREST, 0x20), (DOWN, 1), (UP, 0x20), (ZERO, 0x20)] {
        assert_eq!(flags_under(mxcsr, round, (I32_MIN_AND_HALF, 0)), u128::from(mxcsr | flag), "{mxcsr:#x}");
    }
    assert_eq!(flags_under(UP, round, (QNAN, 0)), u128::from(UP | 1));
    assert_eq!(flags_under(DOWN, "fcvt_to_sint.i64 from_f64, 1", (0x4415_af1d_78b5_8c40, 0)), u128::from(DOWN | 1));
    assert_eq!(flags_under(DOWN, "fcvt_to_sint.i64 from_f64, 1", (TWO_AND_HALF, 0)), u128::from(DOWN | 0x20));
}

#[test]
fn packed_forms_round_by_rc() {
    let v = pack(32, [0x3fc0_0000, 0xbfc0_0000, 0x4020_0000, 0xbf00_0000]); // 1.5 -1.5 2.5 -0.5
    let d = pack(64, [TWO_AND_HALF, MINUS_TWO_AND_HALF]);
    let sum = pack(32, [0x3f80_0000, 0xbf80_0000, 0x3f80_0000, 0x4000_0000]);
    let half_ulp = pack(32, [0x3380_0000, 0xb380_0000, 0, 0x3f80_0000]);
    let m = 0xffff_ffff; // -1
    for (mxcsr, cvtps2dq, cvtpd2dq, addps) in [
        (NEAREST, [2, m - 1, 2, 0], [2, m - 1], [0x3f80_0000, 0xbf80_0000, 0x3f80_0000, 0x4040_0000]),
        (DOWN, [1, m - 1, 2, m], [2, m - 2], [0x3f80_0000, 0xbf80_0001, 0x3f80_0000, 0x4040_0000]),
        (UP, [2, m, 3, 0], [3, m - 1], [0x3f80_0001, 0xbf80_0000, 0x3f80_0000, 0x4040_0000]),
        (ZERO, [1, m, 2, 0], [2, m - 1], [0x3f80_0000, 0xbf80_0000, 0x3f80_0000, 0x4040_0000]),
    ] {
        for mxcsr in [mxcsr, mxcsr | FTZ_DAZ] {
            let vop = |op: &str, args: &[u128]| {
                let regs = [("xmm0", args[0]), ("xmm1", args.get(1).copied().unwrap_or(0))];
                under(mxcsr, &regs, &format!("v0 = get xmm0\n v1 = get xmm1\n v2 = {op}"))
            };
            assert_eq!(vop("fcvt_to_sint.i32x4 v0, 1", &[v]), pack(32, cvtps2dq), "cvtps2dq under {mxcsr:#x}");
            let [lo, hi] = cvtpd2dq;
            assert_eq!(vop("fcvt_to_sint.i32x4 v0, 3", &[d]), pack(32, [lo, hi, 0, 0]), "cvtpd2dq under {mxcsr:#x}");
            assert_eq!(vop("fadd.f32x4 v0, v1", &[sum, half_ulp]), pack(32, addps), "addps under {mxcsr:#x}");
        }
    }
}

#[test]
fn ftz_and_daz_flush_operands_and_results() {
    let ftz = NEAREST | FTZ_DAZ;
    let run = |op: &str, inputs: (u128, u128)| flags_under(ftz, op, inputs);
    let value =
        |op: &str, inputs: (u128, u128)| under(ftz, &[("xmm0", inputs.0), ("xmm1", inputs.1)], &scalar(op, false));
    // A denormal result is zero, with UE and PE; a denormal operand is a
    // zero of its sign, and raises nothing (no DE under DAZ).
    assert_eq!(value("fmul.f64", (TINY, TWO_M60)), 0);
    assert_eq!(run("fmul.f64", (TINY, TWO_M60)), u128::from(ftz | UE_PE));
    assert_eq!(value("fmul.f64", (TINY | 1 << 63, TWO_M60)), 1 << 63);
    assert_eq!(value("fadd.f64", (DENORMAL, 0)), 0);
    assert_eq!(run("fadd.f64", (DENORMAL, 0)), u128::from(ftz));
    assert_eq!(value("fmul.f64", (DENORMAL, ONE)), 0);
    assert_eq!(value("fsqrt.f64", (DENORMAL, 0)), 0);
    assert_eq!(value("fdiv.f64", (MIN_NORMAL, THREE)), 0);
    assert_eq!(run("fdiv.f64", (MIN_NORMAL, THREE)), u128::from(ftz | UE_PE));
    // minsd and maxsd return the operand as read: zero.
    assert_eq!(value("fmin.f64", (DENORMAL, ONE)), 0);
    assert_eq!(value("fmax.f64", (MINUS_DENORMAL, MINUS_ONE)), 1 << 63);
    assert_eq!(value("fmin.f64", (ONE, DENORMAL)), 0);
    // Compares read zero.
    assert_eq!(value("fcmp.f64 eq", (DENORMAL, 0)), 1);
    // Conversions: a denormal converts to zero, exactly.
    assert_eq!(value("fcvt_to_sint.i32 from_f64, 1", (DENORMAL, 0)), 0);
    assert_eq!(run("fcvt_to_sint.i32 from_f64, 1", (DENORMAL, 0)), u128::from(ftz));
    assert_eq!(value("fconvert.f32", (0x3730_0000_0000_0000, 0)), 0); // 2^-140
    assert_eq!(run("fconvert.f32", (0x3730_0000_0000_0000, 0)), u128::from(ftz | UE_PE));
    assert_eq!(value("fconvert.f64", (0x8000_0001, 0)), 1 << 63);
    // Rounding up does not keep a flushed result: it is zero.
    assert_eq!(under(UP | FTZ_DAZ, &[("xmm0", TINY), ("xmm1", TWO_M60)], &scalar("fmul.f64", false)), 0);
    // Without them, the same operations keep the denormals.
    assert_eq!(under(NEAREST, &[("xmm0", TINY), ("xmm1", TWO_M60)], &scalar("fmul.f64", false)), DENORMAL);
    assert_eq!(under(NEAREST, &[("xmm0", DENORMAL), ("xmm1", ONE)], &scalar("fmin.f64", false)), DENORMAL);
}

#[test]
fn ftz_and_daz_on_packed_min_and_max() {
    // minps lane by lane: a denormal read as zero, a NaN giving the
    // second operand untouched.
    let a = pack(32, [0x0000_0001, 0x7fc0_0001, 0x3f80_0000, 0x8000_0001]);
    let b = pack(32, [0x3f80_0000, 0x3f80_0000, 0x0000_0002, 0x3f80_0000]);
    let body = "v0 = get xmm0\n v1 = get xmm1\n v2 = fmin.f32x4 v0, v1";
    let flushed = pack(32, [0, 0x3f80_0000, 0, 0x8000_0000]);
    assert_eq!(under(NEAREST | FTZ_DAZ, &[("xmm0", a), ("xmm1", b)], body), flushed);
    let kept = pack(32, [0x0000_0001, 0x3f80_0000, 0x0000_0002, 0x8000_0001]);
    assert_eq!(under(NEAREST, &[("xmm0", a), ("xmm1", b)], body), kept);
    let body = "v0 = get xmm0\n v1 = get xmm1\n v2 = fmax.f64x2 v0, v1";
    let a = pack(64, [MINUS_DENORMAL, SNAN]);
    let b = pack(64, [MINUS_ONE, ONE]);
    assert_eq!(under(DOWN | FTZ_DAZ, &[("xmm0", a), ("xmm1", b)], body), pack(64, [1 << 63, ONE]));
}

/// MXCSR values translated code runs under: the four rounding modes, and
/// FTZ with DAZ in two of them.
#[cfg(target_arch = "aarch64")]
const MODES: [u32; 6] = [NEAREST, DOWN, UP, ZERO, NEAREST | FTZ_DAZ, UP | FTZ_DAZ];

/// Runs the region of `body` from each pair `(a, b)` of `pairs` in xmm0
/// and xmm1 (low lanes; the other lanes hold the pair swapped, so a
/// vector op sees `a op b` and `b op a`) and `a` in rax, in every mode of
/// [`MODES`]: `Prepared::check` fails unless the JIT and the interpreter
/// agree on the result (stored to memory) and MXCSR.
#[cfg(target_arch = "aarch64")]
fn sweep(body: &str, pairs: &[(u128, u128)], lane_bits: u32) {
    use super::{storing_last, GuestMem, Prepared};
    let mut mem = GuestMem::new();
    let (region, _) = storing_last(body, &mem);
    let mut prepared = Prepared::new(&region);
    let both = |x: u128, y: u128| x | y << lane_bits | x << (2 * lane_bits) % 128 | y << (3 * lane_bits) % 128;
    for mxcsr in MODES {
        for &(a, b) in pairs {
            let mut state = state_with(&[("xmm0", both(a, b)), ("xmm1", both(b, a)), ("rax", a)]);
            state.mxcsr = mxcsr;
            prepared.check(&state, &mut mem);
        }
    }
}

/// Every ordered pair of `values`, or with `ordered` false each pair once.
#[cfg(target_arch = "aarch64")]
fn pairs(values: &[u128], ordered: bool) -> Vec<(u128, u128)> {
    let mut out = Vec::new();
    for (i, &a) in values.iter().enumerate() {
        for (j, &b) in values.iter().enumerate() {
            if ordered || i <= j {
                out.push((a, b));
            }
        }
    }
    out
}

#[cfg(target_arch = "aarch64")]
#[test]
fn the_jit_agrees_with_the_interpreter_in_every_mode() {
    let f64s = [
        ONE,
        THIRD,
        MINUS_TWO_AND_HALF,
        MAX,
        MIN_NORMAL,
        DENORMAL,
        MINUS_DENORMAL,
        TINY,
        TWO_M60,
        0,
        INF,
        QNAN,
        SNAN,
        I32_MAX_AND_HALF,
        I32_MIN_AND_HALF,
    ];
    let f32s = [
        0x3f80_0000,
        0x3eaa_aaab,
        0xc020_0000,
        0x7f7f_ffff,
        0x0080_0000,
        0x0000_0003,
        0x8000_0003,
        0x0d80_0000, // 2^-100
        0x3080_0000, // 2^-30
        0,
        0x7f80_0000,
        0x7fc0_0001,
        0x7f80_0002,
        0x4f00_0000, // 2^31
    ];
    let once = |values: &[u128]| values.iter().map(|&a| (a, a)).collect::<Vec<_>>();
    for (values, ty, lanes) in [(&f64s[..], "f64", "f64x2"), (&f32s[..], "f32", "f32x4")] {
        let bits = if ty == "f64" { 64 } else { 32 };
        let (ordered, unordered, single) = (pairs(values, true), pairs(values, false), once(values));
        for op in ["fadd", "fsub", "fmul", "fdiv", "fmin", "fmax"] {
            sweep(&scalar(&format!("{op}.{ty}"), false), &ordered, bits);
            sweep(&format!("v0 = get xmm0\n v1 = get xmm1\n v2 = {op}.{lanes} v0, v1"), &unordered, bits);
        }
        sweep(&scalar(&format!("fcmp.{ty} lt"), false), &ordered, bits);
        sweep(&scalar(&format!("fsqrt.{ty}"), false), &single, bits);
        sweep(&format!("v0 = get xmm0\n v1 = fsqrt.{lanes} v0"), &single, bits);
        let from = if ty == "f64" { " from_f64" } else { "" };
        for conversion in ["i32, 0", "i32, 1", "i64, 0", "i64, 1"] {
            sweep(&scalar(&format!("fcvt_to_sint.{conversion}{from}"), false), &single, bits);
        }
        sweep(&scalar(if ty == "f64" { "fconvert.f32" } else { "fconvert.f64" }, false), &single, bits);
    }
    let (f64s, f32s) = (once(&f64s), once(&f32s));
    sweep("v0 = get xmm0\n v1 = fcvt_to_sint.i32x4 v0, 1", &f32s, 32);
    sweep("v0 = get xmm0\n v1 = fcvt_to_sint.i32x4 v0, 3", &f64s, 64);
    sweep("v0 = get xmm0\n v1 = fconvert.f32x4 v0", &f64s, 64);
    sweep("v0 = get xmm0\n v1 = fconvert.f64x2 v0", &f32s, 32);
    sweep("v0 = get rax\n v1 = sint_to_f.f32 v0", &f64s, 64);
    sweep("v0 = get rax\n v1 = sint_to_f.f64 v0", &f64s, 64);
    sweep("v0 = get xmm0\n v1 = sint_to_f.f32x4 v0", &f32s, 32);
}
