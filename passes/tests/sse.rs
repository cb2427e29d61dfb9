//! The SSE/SSE2 lifter: every supported form lifts to a region the
//! verifier accepts, with the expected IR ops; unsupported forms (later
//! extensions) and forms above the CPU level (SSSE3's MMX forms too)
//! become `trap ill` with nothing else emitted. The semantics are checked against the
//! CPU by the oracle tests.

mod common;

use aarchx_ir::print::print;
use aarchx_ir::verify::verify;
use aarchx_ir::Region;
use aarchx_pass::{CpuLevel, MemoryModel, Pass, PassContext, TranslationConfig};
use aarchx_passes::decode::Decode;
use common::{Bytes, BASE};
use iced_x86::code_asm::*;
use iced_x86::IcedError;

type Asm = fn(&mut CodeAssembler) -> Result<(), IcedError>;

fn assemble(f: Asm) -> Vec<u8> {
    let mut a = CodeAssembler::new(64).unwrap();
    f(&mut a).unwrap();
    a.assemble(BASE).unwrap()
}

/// Lifts `code` into one region of up to `max_insns` instructions and verifies it.
fn lift_region(code: Vec<u8>, max_insns: usize) -> Region {
    lift_at(code, max_insns, CpuLevel::V3)
}

/// As [`lift_region`], for a CPU of `cpu_level`.
fn lift_at(code: Vec<u8>, max_insns: usize, cpu_level: CpuLevel) -> Region {
    let config =
        TranslationConfig { memory_model: MemoryModel::Plain, tso_vector: false, cpu_level, superblocks: true };
    let guest = Bytes(code);
    let context = PassContext { code: &guest, config: &config };
    let mut region = Region::new(BASE);
    Decode { max_insns, follow: false }.run(&context, &mut region).unwrap();
    verify(&region).unwrap_or_else(|e| panic!("{e}\n{}", print(&region)));
    region
}

/// The text of the region lifted from `code`.
fn lift(code: Vec<u8>) -> String {
    print(&lift_region(code, 64))
}

/// One instruction and ops its IR must contain.
const SUPPORTED: &[(Asm, &[&str])] = &[
    // Moves.
    (|a| a.movd(xmm1, eax), &["trunc.i32", "splat.i32x4", "insert_lane.i32x4", "set xmm1"]),
    (|a| a.movd(xmm1, dword_ptr(rax)), &["load.i32", "splat.i32x4"]),
    (|a| a.movd(ecx, xmm2), &["extract_lane.i32x4 v0, 0", "zext.i64", "set rcx"]),
    (|a| a.movd(dword_ptr(rax), xmm2), &["store.i32"]),
    (|a| a.movq(xmm1, rax), &["splat.i64x2", "insert_lane.i64x2"]),
    (|a| a.movq(rcx, xmm1), &["extract_lane.i64x2 v0, 0", "set rcx"]),
    (|a| a.movq(xmm1, xmm2), &["get xmm2", "extract_lane.i64x2", "splat.i64x2", "set xmm1"]),
    (|a| a.movq(xmm1, qword_ptr(rax)), &["load.i64", "splat.i64x2"]),
    (|a| a.movq(qword_ptr(rax), xmm1), &["store.i64"]),
    (|a| a.movdqa(xmm1, xmmword_ptr(rax + 16)), &["load.v128", "set xmm1"]),
    (|a| a.movdqu(xmmword_ptr(rax), xmm3), &["store.v128"]),
    (|a| a.movaps(xmm1, xmm2), &["get xmm2", "set xmm1"]),
    (|a| a.movups(xmm1, xmmword_ptr(rsi)), &["load.v128"]),
    (|a| a.movapd(xmmword_ptr(rsp), xmm0), &["store.v128"]),
    (|a| a.movupd(xmm7, xmmword_ptr(rdi + rcx * 8)), &["load.v128"]),
    (|a| a.movss(xmm1, xmm2), &["extract_lane.i32x4", "insert_lane.i32x4", "set xmm1"]),
    (|a| a.movss(xmm1, dword_ptr(rax)), &["load.i32", "splat.i32x4"]),
    (|a| a.movss(dword_ptr(rax), xmm1), &["store.i32"]),
    (|a| a.movsd_2(xmm1, xmm2), &["extract_lane.i64x2", "insert_lane.i64x2"]),
    (|a| a.movsd_2(xmm1, qword_ptr(rax)), &["load.i64", "splat.i64x2"]),
    (|a| a.movsd_2(qword_ptr(rax), xmm1), &["store.i64"]),
    (|a| a.movhps(xmm1, qword_ptr(rax)), &["load.i64", "insert_lane.i64x2 v4, v3, 1"]),
    (|a| a.movhps(qword_ptr(rax), xmm1), &["extract_lane.i64x2 v0, 1", "store.i64"]),
    (|a| a.movlps(xmm1, qword_ptr(rax)), &["insert_lane.i64x2 v4, v3, 0"]),
    (|a| a.movhpd(xmm1, qword_ptr(rax)), &["insert_lane.i64x2 v4, v3, 1"]),
    (|a| a.movlpd(qword_ptr(rax), xmm1), &["extract_lane.i64x2 v0, 0", "store.i64"]),
    (|a| a.movlhps(xmm1, xmm2), &["extract_lane.i64x2 v0, 0", "insert_lane.i64x2 v2, v1, 1"]),
    (|a| a.movhlps(xmm1, xmm2), &["extract_lane.i64x2 v0, 1", "insert_lane.i64x2 v2, v1, 0"]),
    (|a| a.movntdq(xmmword_ptr(rdi), xmm0), &["store.v128"]),
    (|a| a.movntps(xmmword_ptr(rdi), xmm0), &["store.v128"]),
    (|a| a.movnti(qword_ptr(rdi), rax), &["store.i64"]),
    (|a| a.movnti(dword_ptr(rdi), eax), &["store.i32"]),
    // Integer.
    (|a| a.pxor(xmm0, xmm0), &["xor.v128 v1, v0", "set xmm0"]),
    (|a| a.por(xmm0, xmmword_ptr(rax)), &["load.v128", "or.v128"]),
    (|a| a.pand(xmm0, xmm1), &["and.v128"]),
    (|a| a.pandn(xmm0, xmm1), &["v0 = get xmm1", "v1 = get xmm0", "and_not.v128 v0, v1"]),
    (|a| a.paddb(xmm0, xmm1), &["add.i8x16"]),
    (|a| a.paddw(xmm0, xmm1), &["add.i16x8"]),
    (|a| a.paddd(xmm0, xmm1), &["add.i32x4"]),
    (|a| a.paddq(xmm0, xmm1), &["add.i64x2"]),
    (|a| a.psubb(xmm0, xmm1), &["sub.i8x16"]),
    (|a| a.psubw(xmm0, xmm1), &["sub.i16x8"]),
    (|a| a.psubd(xmm0, xmm1), &["sub.i32x4"]),
    (|a| a.psubq(xmm0, xmm1), &["sub.i64x2"]),
    (|a| a.paddusb(xmm0, xmm1), &["add_sat_u.i8x16"]),
    (|a| a.paddusw(xmm0, xmm1), &["add_sat_u.i16x8"]),
    (|a| a.psubusb(xmm0, xmm1), &["sub_sat_u.i8x16"]),
    (|a| a.psubusw(xmm0, xmm1), &["sub_sat_u.i16x8"]),
    (|a| a.paddsb(xmm0, xmm1), &["add_sat_s.i8x16"]),
    (|a| a.paddsw(xmm0, xmm1), &["add_sat_s.i16x8"]),
    (|a| a.psubsb(xmm0, xmm1), &["sub_sat_s.i8x16"]),
    (|a| a.psubsw(xmm0, xmm1), &["sub_sat_s.i16x8"]),
    (|a| a.pcmpeqb(xmm0, xmmword_ptr(rdi)), &["icmp.i8x16 eq"]),
    (|a| a.pcmpeqw(xmm0, xmm1), &["icmp.i16x8 eq"]),
    (|a| a.pcmpeqd(xmm0, xmm1), &["icmp.i32x4 eq"]),
    (|a| a.pcmpgtb(xmm0, xmm1), &["icmp.i8x16 sgt v1, v0"]),
    (|a| a.pcmpgtw(xmm0, xmm1), &["icmp.i16x8 sgt"]),
    (|a| a.pcmpgtd(xmm0, xmm1), &["icmp.i32x4 sgt"]),
    (|a| a.pminub(xmm0, xmm1), &["umin.i8x16"]),
    (|a| a.pmaxub(xmm0, xmm1), &["umax.i8x16"]),
    (|a| a.pminsw(xmm0, xmm1), &["smin.i16x8"]),
    (|a| a.pmaxsw(xmm0, xmm1), &["smax.i16x8"]),
    (|a| a.pavgb(xmm0, xmm1), &["avg_u.i8x16"]),
    (|a| a.pavgw(xmm0, xmm1), &["avg_u.i16x8"]),
    (|a| a.pmullw(xmm0, xmm1), &["mul.i16x8"]),
    (|a| a.pmulhw(xmm0, xmm1), &["smulh.i16x8"]),
    (|a| a.pmulhuw(xmm0, xmm1), &["umulh.i16x8"]),
    (|a| a.pmuludq(xmm0, xmm1), &["mul_even_u.i64x2"]),
    (|a| a.pmaddwd(xmm0, xmm1), &["mul_add_pairs.i32x4"]),
    (|a| a.psadbw(xmm0, xmm1), &["sum_abs_diff.i64x2"]),
    (|a| a.pmovmskb(eax, xmm1), &["movmsk.i8x16", "zext.i64", "set rax"]),
    (|a| a.pmovmskb(rax, xmm1), &["movmsk.i8x16", "zext.i64", "set rax"]),
    (|a| a.pshufd(xmm0, xmm1, 0x1b), &["shuffle.i32x4 v0, 27"]),
    (|a| a.pshufd(xmm0, xmmword_ptr(rax), 0), &["load.v128", "shuffle.i32x4 v3, 0"]),
    (|a| a.pshuflw(xmm0, xmm1, 0xe4), &["shuffle.i16x8 v0, 228"]),
    (|a| a.pshufhw(xmm0, xmm1, 0xe4), &["shuffle.i16x8 v0, 484"]),
    (|a| a.punpcklbw(xmm0, xmm1), &["unpack_lo.i8x16 v1, v0"]),
    (|a| a.punpcklwd(xmm0, xmm1), &["unpack_lo.i16x8"]),
    (|a| a.punpckldq(xmm0, xmm1), &["unpack_lo.i32x4"]),
    (|a| a.punpcklqdq(xmm0, xmm1), &["unpack_lo.i64x2"]),
    (|a| a.punpckhbw(xmm0, xmm1), &["unpack_hi.i8x16"]),
    (|a| a.punpckhwd(xmm0, xmm1), &["unpack_hi.i16x8"]),
    (|a| a.punpckhdq(xmm0, xmm1), &["unpack_hi.i32x4"]),
    (|a| a.punpckhqdq(xmm0, xmm1), &["unpack_hi.i64x2"]),
    (|a| a.packuswb(xmm0, xmm1), &["narrow_u.i8x16 v1, v0"]),
    (|a| a.packsswb(xmm0, xmm1), &["narrow_s.i8x16"]),
    (|a| a.packssdw(xmm0, xmm1), &["narrow_s.i16x8"]),
    (|a| a.psllw(xmm0, 3), &["iconst.i8 0x3", "shl.i16x8"]),
    (|a| a.pslld(xmm0, xmm1), &["extract_lane.i64x2 v0, 0", "shl.i32x4 v2, v1"]),
    (|a| a.psllq(xmm0, xmmword_ptr(rax)), &["load.v128", "shl.i64x2"]),
    (|a| a.psrlw(xmm0, 200), &["iconst.i8 0xc8", "lshr.i16x8"]),
    (|a| a.psrld(xmm0, 1), &["lshr.i32x4"]),
    (|a| a.psrlq(xmm0, xmm1), &["lshr.i64x2"]),
    (|a| a.psraw(xmm0, 15), &["ashr.i16x8"]),
    (|a| a.psrad(xmm0, xmm1), &["ashr.i32x4"]),
    (|a| a.pslldq(xmm0, 4), &["byte_shl.v128 v0, 4"]),
    (|a| a.psrldq(xmm0, 20), &["byte_shr.v128 v0, 16"]),
    (|a| a.pextrw(eax, xmm1, 9), &["extract_lane.i16x8 v0, 1", "zext.i32", "set rax"]),
    (|a| a.pinsrw(xmm1, eax, 7), &["trunc.i16", "insert_lane.i16x8 v3, v2, 7"]),
    (|a| a.pinsrw(xmm1, word_ptr(rax), 2), &["load.i16", "insert_lane.i16x8"]),
    // Float.
    (|a| a.xorps(xmm0, xmm1), &["xor.v128"]),
    (|a| a.xorpd(xmm0, xmm1), &["xor.v128"]),
    (|a| a.andps(xmm0, xmm1), &["and.v128"]),
    (|a| a.andpd(xmm0, xmm1), &["and.v128"]),
    (|a| a.andnps(xmm0, xmm1), &["and_not.v128 v0, v1"]),
    (|a| a.andnpd(xmm0, xmm1), &["and_not.v128 v0, v1"]),
    (|a| a.orps(xmm0, xmm1), &["or.v128"]),
    (|a| a.orpd(xmm0, xmm1), &["or.v128"]),
    (|a| a.addss(xmm0, xmm1), &["extract_lane.f32x4", "fadd.f32 v3, v1", "insert_lane.f32x4 v2, v4, 0"]),
    (|a| a.addsd(xmm0, qword_ptr(rax)), &["load.f64", "fadd.f64"]),
    (|a| a.subss(xmm0, xmm1), &["fsub.f32"]),
    (|a| a.subsd(xmm0, xmm1), &["fsub.f64"]),
    (|a| a.mulss(xmm0, xmm1), &["fmul.f32"]),
    (|a| a.mulsd(xmm0, xmm1), &["fmul.f64"]),
    (|a| a.divss(xmm0, dword_ptr(rax)), &["load.f32", "fdiv.f32"]),
    (|a| a.divsd(xmm0, xmm1), &["fdiv.f64"]),
    (|a| a.sqrtss(xmm0, xmm1), &["fsqrt.f32 v1", "insert_lane.f32x4 v2, v3, 0"]),
    (|a| a.sqrtsd(xmm0, xmm1), &["fsqrt.f64"]),
    (|a| a.minss(xmm0, xmm1), &["fmin.f32"]),
    (|a| a.minsd(xmm0, xmm1), &["fmin.f64"]),
    (|a| a.maxss(xmm0, xmm1), &["fmax.f32"]),
    (|a| a.maxsd(xmm0, xmm1), &["fmax.f64 v3, v1"]),
    (|a| a.addps(xmm0, xmm1), &["fadd.f32x4 v1, v0"]),
    (|a| a.addpd(xmm0, xmmword_ptr(rax)), &["fadd.f64x2"]),
    (|a| a.subps(xmm0, xmm1), &["fsub.f32x4"]),
    (|a| a.subpd(xmm0, xmm1), &["fsub.f64x2"]),
    (|a| a.mulps(xmm0, xmm1), &["fmul.f32x4"]),
    (|a| a.mulpd(xmm0, xmm1), &["fmul.f64x2"]),
    (|a| a.divps(xmm0, xmm1), &["fdiv.f32x4"]),
    (|a| a.divpd(xmm0, xmm1), &["fdiv.f64x2"]),
    (|a| a.sqrtps(xmm0, xmm1), &["fsqrt.f32x4 v0"]),
    (|a| a.sqrtpd(xmm0, xmm1), &["fsqrt.f64x2"]),
    (|a| a.minps(xmm0, xmm1), &["fmin.f32x4"]),
    (|a| a.minpd(xmm0, xmm1), &["fmin.f64x2"]),
    (|a| a.maxps(xmm0, xmm1), &["fmax.f32x4"]),
    (|a| a.maxpd(xmm0, xmm1), &["fmax.f64x2"]),
    (|a| a.cmpss(xmm0, xmm1, 0), &["fcmp.f32 eq", "sext.i32", "insert_lane.i32x4"]),
    (|a| a.cmpsd_3(xmm0, qword_ptr(rax), 7), &["fcmp.f64 ord", "sext.i64", "insert_lane.i64x2"]),
    (|a| a.cmpps(xmm0, xmm1, 1), &["fcmp.f32x4 lt v1, v0"]),
    (|a| a.cmppd(xmm0, xmm1, 6), &["fcmp.f64x2 nle"]),
    (|a| a.cmpps(xmm0, xmm1, 0x0b), &["fcmp.f32x4 uno"]),
    (
        |a| a.ucomiss(xmm0, xmm1),
        &["fcmp.f32 uno", "fcmp.f32 eq", "fcmp.f32 nle", "set zf", "set pf", "set cf", "set of", "set sf", "set af"],
    ),
    (|a| a.ucomisd(xmm0, qword_ptr(rax)), &["load.f64", "fcmp.f64 uno"]),
    (|a| a.comiss(xmm0, dword_ptr(rax)), &["load.f32", "fcmp.f32 uno"]),
    (|a| a.comisd(xmm0, xmm1), &["fcmp.f64 nle"]),
    (|a| a.shufps(xmm0, xmm1, 0x4e), &["shuffle2.f32x4 v1, v0, 78"]),
    (|a| a.shufpd(xmm0, xmm1, 1), &["shuffle2.f64x2 v1, v0, 1"]),
    (|a| a.unpcklps(xmm0, xmm1), &["unpack_lo.i32x4"]),
    (|a| a.unpckhps(xmm0, xmm1), &["unpack_hi.i32x4"]),
    (|a| a.unpcklpd(xmm0, xmm1), &["unpack_lo.i64x2"]),
    (|a| a.unpckhpd(xmm0, xmm1), &["unpack_hi.i64x2"]),
    (|a| a.movmskps(eax, xmm1), &["movmsk.i32x4"]),
    (|a| a.movmskpd(rax, xmm1), &["movmsk.i64x2"]),
    // Conversions.
    (|a| a.cvtsi2sd(xmm0, eax), &["trunc.i32", "sint_to_f.f64", "insert_lane.f64x2"]),
    (|a| a.cvtsi2sd(xmm0, rax), &["sint_to_f.f64 v0"]),
    (|a| a.cvtsi2sd(xmm0, qword_ptr(rax)), &["load.i64", "sint_to_f.f64"]),
    (|a| a.cvtsi2ss(xmm0, dword_ptr(rax)), &["load.i32", "sint_to_f.f32", "insert_lane.f32x4"]),
    (|a| a.cvttsd2si(eax, xmm1), &["fcvt_to_sint.i32 v1, 0", "set rax"]),
    (|a| a.cvttsd2si(rax, qword_ptr(rdi)), &["load.f64", "fcvt_to_sint.i64 v3, 0"]),
    (|a| a.cvtsd2si(rax, xmm1), &["fcvt_to_sint.i64 v1, 1"]),
    (|a| a.cvttss2si(eax, xmm1), &["extract_lane.f32x4", "fcvt_to_sint.i32 v1, 0"]),
    (|a| a.cvtss2si(rax, dword_ptr(rdi)), &["load.f32", "fcvt_to_sint.i64 v3, 1"]),
    (|a| a.cvtss2sd(xmm0, xmm1), &["extract_lane.f32x4", "fconvert.f64", "insert_lane.f64x2"]),
    (|a| a.cvtsd2ss(xmm0, qword_ptr(rax)), &["load.f64", "fconvert.f32", "insert_lane.f32x4"]),
    (|a| a.cvtdq2pd(xmm0, xmm1), &["sint_to_f.f64x2 v0"]),
    (|a| a.cvtdq2pd(xmm0, qword_ptr(rax)), &["load.i64", "splat.i64x2", "sint_to_f.f64x2"]),
    (|a| a.cvtdq2ps(xmm0, xmm1), &["sint_to_f.f32x4"]),
    (|a| a.cvttpd2dq(xmm0, xmm1), &["fcvt_to_sint.i32x4 v0, 2"]),
    (|a| a.cvtpd2dq(xmm0, xmm1), &["fcvt_to_sint.i32x4 v0, 3"]),
    (|a| a.cvttps2dq(xmm0, xmm1), &["fcvt_to_sint.i32x4 v0, 0"]),
    (|a| a.cvtps2dq(xmm0, xmmword_ptr(rax)), &["load.v128", "fcvt_to_sint.i32x4 v3, 1"]),
    (|a| a.cvtps2pd(xmm0, qword_ptr(rax)), &["load.i64", "fconvert.f64x2"]),
    (|a| a.cvtpd2ps(xmm0, xmm1), &["fconvert.f32x4 v0"]),
    // FMA3: the roles of 132 (op0 * op2 + op1), 213, 231; the negations.
    (
        |a| a.vfmadd132ps(xmm0, xmm1, xmm2),
        &["v0 = get xmm0", "v1 = get xmm2", "v2 = get xmm1", "fma.f32x4 v0, v1, v2, 0"],
    ),
    (|a| a.vfmadd213pd(ymm0, ymm1, ymmword_ptr(rax)), &["fma.f64x2 v0, v1, v5, 0", "set ymmh0"]),
    (|a| a.vfnmsub231ss(xmm3, xmm4, dword_ptr(rax)), &["load.i32", "fma.f32 ", ", 7", "insert_lane.f32x4"]),
    (|a| a.vfmaddsub132pd(xmm0, xmm1, xmm2), &["fma.f64x2 v0, v1, v2, 2"]),
    (|a| a.vfmsubadd231ps(xmm0, xmm1, xmm2), &["fma.f32x4 v0, v1, v2, 4"]),
    (|a| a.vfnmadd213sd(xmm0, xmm1, xmm2), &["fma.f64 ", ", 1"]),
    (|a| a.vfmsub132ss(xmm0, xmm1, xmm2), &["fma.f32 ", ", 6"]),
];

#[test]
fn supported_forms_lift_and_verify() {
    let mut failures = String::new();
    for (i, (f, want)) in SUPPORTED.iter().enumerate() {
        let text = lift(assemble(*f));
        for w in want.iter().filter(|w| !text.contains(*w)) {
            failures += &format!("case {i}: no `{w}` in\n{text}\n");
        }
        if text.contains("trap") {
            failures += &format!("case {i} traps:\n{text}\n");
        }
    }
    assert!(failures.is_empty(), "{failures}");
}

#[test]
fn supported_forms_run_on_in_one_region() {
    let code: Vec<u8> = SUPPORTED.iter().flat_map(|(f, _)| assemble(*f)).collect();
    let region = lift_region(code, 1024);
    assert_eq!(region.guest_insns().count(), SUPPORTED.len());
    assert!(!print(&region).contains("trap"));
}

#[test]
fn unsupported_forms_trap_with_nothing_emitted() {
    let cases: &[Asm] = &[
        // VAES: not x86-64-v3.
        |a| a.vaesenc(ymm0, ymm1, ymm2),
    ];
    assert_traps(cases, CpuLevel::V3);
}

/// Each of `cases` lifts at `level` to `trap ill` and nothing else.
fn assert_traps(cases: &[Asm], level: CpuLevel) {
    for (i, f) in cases.iter().enumerate() {
        let text = print(&lift_at(assemble(*f), 64, level));
        let body: Vec<&str> = text.lines().skip_while(|l| !l.contains("trap")).collect();
        assert_eq!(body.len(), 1, "case {i}:\n{text}");
        assert!(body[0].contains("trap ill"), "case {i}:\n{text}");
        // Nothing but the instruction mark precedes the trap.
        let before = text.lines().rev().nth(1).unwrap();
        assert!(before.trim_start().starts_with("insn"), "case {i}:\n{text}");
    }
}

#[test]
fn forms_above_the_level_trap() {
    let v2: &[Asm] = &[
        |a| a.pextrw(word_ptr(rax), xmm0, 1),
        |a| a.movddup(xmm0, xmm1),
        |a| a.addsubpd(xmm0, xmm1),
        |a| a.pshufb(xmm0, xmm1),
        |a| a.ptest(xmm0, xmm1),
        |a| a.lddqu(xmm0, xmmword_ptr(rax)),
        |a| a.pcmpgtq(xmm0, xmm1),
        |a| a.popcnt(eax, ecx),
        |a| a.cmpxchg16b(xmmword_ptr(rsi)),
        |a| a.pshufb(mm0, mm1),
        |a| a.palignr(mm0, qword_ptr(rax), 3),
        |a| a.phaddw(mm2, mm3),
    ];
    assert_traps(v2, CpuLevel::V1);
    for (i, f) in v2.iter().enumerate() {
        let text = print(&lift_at(assemble(*f), 64, CpuLevel::V2));
        assert!(!text.contains("trap ill"), "case {i} at V2:\n{text}");
    }
}

#[test]
fn avx_forms_trap_below_v3() {
    let v3: &[Asm] = &[
        |a| a.vpxor(xmm0, xmm1, xmm2),
        |a| a.vpaddd(ymm0, ymm1, ymmword_ptr(rax)),
        |a| a.vzeroupper(),
        |a| a.vpermq(ymm0, ymm1, 0x1b),
        |a| a.vbroadcastss(ymm0, dword_ptr(rax)),
        |a| a.xgetbv(),
    ];
    assert_traps(v3, CpuLevel::V2);
    for (i, f) in v3.iter().enumerate() {
        let text = print(&lift_at(assemble(*f), 64, CpuLevel::V3));
        assert!(!text.contains("trap ill"), "case {i} at V3:\n{text}");
    }
}

#[test]
fn tzcnt_and_lzcnt_below_v3_are_bsf_and_bsr() {
    // A CPU without BMI1/LZCNT ignores the 0xf3 prefix: the same IR as the
    // plain bsf/bsr but for the instruction's length.
    let body = |code: Vec<u8>, level| {
        let text = print(&lift_at(code, 1, level));
        text.lines().filter(|l| !l.contains("insn") && !l.contains("exit")).collect::<Vec<_>>().join("\n")
    };
    for (prefixed, plain) in
        [([0xf3, 0x0f, 0xbc, 0xc1], [0x0f, 0xbc, 0xc1]), ([0xf3, 0x0f, 0xbd, 0xc1], [0x0f, 0xbd, 0xc1])]
    {
        for level in [CpuLevel::V1, CpuLevel::V2] {
            assert_eq!(body(prefixed.to_vec(), level), body(plain.to_vec(), level));
        }
        assert_ne!(body(prefixed.to_vec(), CpuLevel::V3), body(plain.to_vec(), CpuLevel::V3));
    }
}

#[test]
fn scalar_merge_versus_load_zeroing() {
    // Register to register: lane 0 replaced, the rest of xmm1 kept.
    let merge = lift(assemble(|a| a.movss(xmm1, xmm2)));
    assert!(merge.contains("get xmm1") && !merge.contains("splat"), "{merge}");
    // From memory: the rest zeroed, xmm1 not read.
    let load = lift(assemble(|a| a.movsd_2(xmm1, qword_ptr(rax))));
    assert!(!load.contains("get xmm1") && load.contains("splat.i64x2"), "{load}");
    // Scalar arithmetic keeps the destination's other lanes.
    let add = lift(assemble(|a| a.addsd(xmm3, xmm4)));
    assert!(
        add.contains("v0 = get xmm4") && add.contains("v2 = get xmm3") && add.contains("insert_lane.f64x2 v2"),
        "{add}"
    );
}

#[test]
fn mmx_forms_lift_through_the_64_bit_view_with_the_x87_transition() {
    let cases: &[(Asm, &[&str])] = &[
        (|a| a.paddb(mm0, mm1), &["get mm1", "get mm0", "add.i8x16", "set mm0", "set fpexp0", "set fptag"]),
        (|a| a.pxor(mm2, qword_ptr(rax)), &["load.i64", "xor.v128", "set mm2"]),
        (|a| a.movq(rax, mm1), &["get mm1", "set rax"]),
        (|a| a.movq2dq(xmm3, mm1), &["get mm1", "set xmm3"]),
        (|a| a.packsswb(mm0, mm1), &["unpack_lo.i64x2", "narrow_s.i8x16"]),
        (|a| a.pshufw(mm0, mm1, 0x1b), &["shuffle.i16x8"]),
        (|a| a.pextrw(eax, mm0, 5), &["extract_lane.i16x8 v6, 1"]),
        (|a| a.emms(), &["iconst.i8 0x0", "set fptag"]),
    ];
    let mut failures = String::new();
    for (i, (f, want)) in cases.iter().enumerate() {
        let text = lift(assemble(*f));
        // A pending x87 exception first, then TOP cleared (and tags set).
        let expected = ["trap x87fp", "iconst.i16 0xc7ff", "set fpsw"];
        for w in want.iter().chain(&expected).filter(|w| !text.contains(*w)) {
            failures += &format!("case {i}: no `{w}` in\n{text}\n");
        }
        if text.contains("trap ill") {
            failures += &format!("case {i} is unsupported:\n{text}\n");
        }
    }
    // From memory, cvtpi2ps is an SSE instruction: no x87 state change.
    let text = lift(assemble(|a| a.cvtpi2ps(xmm0, qword_ptr(rax))));
    if text.contains("fptag") || text.contains("fpsw") || !text.contains("sint_to_f.f32x4") {
        failures += &format!("cvtpi2ps xmm0, [rax]:\n{text}\n");
    }
    assert!(failures.is_empty(), "{failures}");
}
