//! Real x86-64 code, assembled with iced-x86 and lifted by the decode
//! pass, run through the JIT and the interpreter from random states
//! (see [`super::diff`]): the IR the lifter actually produces, under both
//! memory models.

use aarchx_ir::Region;
use aarchx_pass::{CpuLevel, GuestCode, MemoryModel, Pass, PassContext, TranslationConfig};
use aarchx_passes::decode::Decode;
use iced_x86::code_asm::*;
use iced_x86::{Code as Encoding, Instruction, MemoryOperand, Register};

use super::diff::run_regions;

/// Where the programs are placed (only the lifter reads them).
const CODE: u64 = 0x40_1000;

struct Code(Vec<u8>);

impl GuestCode for Code {
    fn read(&self, addr: u64, buf: &mut [u8]) -> usize {
        let Some(off) = addr.checked_sub(CODE).map(|o| o as usize).filter(|o| *o < self.0.len()) else { return 0 };
        let n = buf.len().min(self.0.len() - off);
        buf[..n].copy_from_slice(&self.0[off..off + n]);
        n
    }
}

type Program = fn(&mut CodeAssembler) -> Result<(), IcedError>;

/// Lifts `program` (up to 64 instructions, to its first branch) under
/// `model`; also returns how many instructions the program has.
fn lift(program: Program, model: MemoryModel) -> (Region, usize) {
    let mut a = CodeAssembler::new(64).expect("64-bit");
    program(&mut a).expect("assembles");
    let count = a.instructions().len();
    a.int3().expect("assembles");
    let code = Code(a.assemble(CODE).expect("assembles"));
    let config =
        TranslationConfig { memory_model: model, tso_vector: true, cpu_level: CpuLevel::V3, superblocks: true };
    let context = PassContext { code: &code, config: &config };
    let mut region = Region::new(CODE);
    Decode { max_insns: 64, follow: false }.run(&context, &mut region).expect("lifts");
    aarchx_ir::verify::verify(&region).expect("verifies");
    (region, count)
}

/// Integer arithmetic, flags and condition codes.
fn alu(a: &mut CodeAssembler) -> Result<(), IcedError> {
    a.add(rax, rcx)?;
    a.adc(rdx, rbx)?;
    a.setb(r8b)?;
    a.sub(ecx, edx)?;
    a.sbb(bx, ax)?;
    a.seto(r9b)?;
    a.imul_3(rsi, rax, 12345)?;
    a.cmovl(r10, rsi)?;
    a.xor(r11d, r11d)?;
    a.neg(rdx)?;
    a.inc(r12w)?;
    a.dec(r13b)?;
    a.not(r14)?;
    a.test(al, 0x81)?;
    a.setp(r15b)?;
    a.cmp(rax, rcx)?;
    a.setg(al)?;
    a.cmova(rbx, rdx)?;
    a.lea(rbp, qword_ptr(rax + rcx * 4 + 0x77))?;
    a.movzx(esi, cl)?;
    a.movsx(rdx, dx)?;
    a.movsxd(rcx, ebx)?;
    a.cqo()?;
    a.cbw()?;
    a.bswap(r8)?;
    a.bswap(r9d)?;
    a.lahf()?;
    a.cmc()?;
    Ok(())
}

/// Shifts, rotates, bit scans and double shifts.
fn shifts(a: &mut CodeAssembler) -> Result<(), IcedError> {
    a.shl(rax, cl)?;
    a.shr(edx, cl)?;
    a.sar(bx, cl)?;
    a.rol(r8b, cl)?;
    a.ror(r9, 13)?;
    a.sar(r10d, 31)?;
    a.shld(r11, r12, cl)?;
    a.shrd(r13d, r14d, 5)?;
    a.bsf(rsi, rax)?;
    a.bsr(ebp, edx)?;
    a.bt(rax, rcx)?;
    a.bts(rdx, 7)?;
    a.btr(rbx, rcx)?;
    a.popcnt(r15, rax)?;
    a.lzcnt(rcx, rdx)?;
    a.tzcnt(rax, rbx)?;
    Ok(())
}

/// Multiplication and division, widths 8 to 64 (a divide error traps).
fn muldiv(a: &mut CodeAssembler) -> Result<(), IcedError> {
    a.mul(rcx)?;
    a.imul(ebx)?;
    a.imul_2(r8w, r9w)?;
    a.mul(r10b)?;
    a.or(rcx, 1)?;
    a.xor(edx, edx)?;
    a.div(rcx)?;
    a.mov(r11, rax)?;
    a.cqo()?;
    a.or(r12, 3)?;
    a.idiv(r12)?;
    a.cdq()?;
    a.or(ebx, 1)?;
    a.idiv(ebx)?;
    Ok(())
}

/// Loads, stores, locked operations and string instructions on the
/// buffer at rdi.
fn memory(a: &mut CodeAssembler) -> Result<(), IcedError> {
    a.mov(qword_ptr(rdi + 8), rax)?;
    a.mov(dword_ptr(rdi + 0x13), ecx)?;
    a.add(word_ptr(rdi + 0x21), dx)?;
    a.mov(bl, byte_ptr(rdi + 9))?;
    a.movzx(esi, word_ptr(rdi + 0x13))?;
    a.xchg(qword_ptr(rdi + 0x40), r8)?;
    a.lock().add(qword_ptr(rdi + 0x48), r9)?;
    a.lock().xadd(dword_ptr(rdi + 0x51), r10d)?;
    a.lock().cmpxchg(qword_ptr(rdi + 0x60), r11)?;
    a.lock().or(byte_ptr(rdi + 0x33), 0x11)?;
    a.inc(dword_ptr(rdi + 0x70))?;
    a.lea(rsp, qword_ptr(rdi + 0x300))?;
    a.push(rax)?;
    a.push(qword_ptr(rdi + 8))?;
    a.pop(rcx)?;
    a.pop(rdx)?;
    a.lea(rsi, qword_ptr(rdi + 0x100))?;
    a.lea(r12, qword_ptr(rdi))?;
    a.mov(ecx, 9)?;
    a.cld()?;
    a.rep().movsb()?;
    a.mov(ecx, 3)?;
    a.rep().stosq()?;
    a.stosb()?;
    Ok(())
}

/// SSE arithmetic, compares, conversions and shuffles.
fn sse(a: &mut CodeAssembler) -> Result<(), IcedError> {
    a.addps(xmm0, xmm1)?;
    a.mulsd(xmm2, xmm3)?;
    a.subss(xmm4, xmm5)?;
    a.divpd(xmm6, xmm7)?;
    a.sqrtsd(xmm8, xmm9)?;
    a.minps(xmm10, xmm11)?;
    a.maxsd(xmm12, xmm13)?;
    a.cmpps(xmm14, xmm15, 3)?;
    a.cmpsd_3(xmm1, xmm0, 1)?;
    a.ucomisd(xmm2, xmm3)?;
    a.setb(al)?;
    a.comiss(xmm4, xmm5)?;
    a.seta(bl)?;
    a.cvttsd2si(rcx, xmm6)?;
    a.cvtss2si(edx, xmm7)?;
    a.cvtsi2sd(xmm8, rax)?;
    a.cvtsi2ss(xmm9, ebx)?;
    a.cvtps2pd(xmm10, xmm11)?;
    a.cvtpd2ps(xmm12, xmm13)?;
    a.cvttps2dq(xmm14, xmm15)?;
    a.cvtpd2dq(xmm0, xmm1)?;
    a.cvtdq2ps(xmm2, xmm3)?;
    a.cvtsd2ss(xmm4, xmm5)?;
    a.cvtss2sd(xmm6, xmm7)?;
    a.shufps(xmm8, xmm9, 0x4e)?;
    a.unpcklpd(xmm10, xmm11)?;
    a.andnps(xmm12, xmm13)?;
    a.xorps(xmm14, xmm14)?;
    Ok(())
}

/// SSE2 integer operations and moves.
fn sse_int(a: &mut CodeAssembler) -> Result<(), IcedError> {
    a.paddb(xmm0, xmm1)?;
    a.psubw(xmm2, xmm3)?;
    a.pmullw(xmm4, xmm5)?;
    a.pmulhw(xmm6, xmm7)?;
    a.pmulhuw(xmm8, xmm9)?;
    a.pmuludq(xmm10, xmm11)?;
    a.pmaddwd(xmm12, xmm13)?;
    a.psadbw(xmm14, xmm15)?;
    a.pcmpeqb(xmm0, xmm2)?;
    a.pcmpgtd(xmm1, xmm3)?;
    a.pmovmskb(eax, xmm0)?;
    a.pshufd(xmm4, xmm6, 0x1b)?;
    a.pshuflw(xmm5, xmm7, 0xb1)?;
    a.pshufhw(xmm8, xmm10, 0x4e)?;
    a.punpcklbw(xmm9, xmm11)?;
    a.punpckhqdq(xmm12, xmm14)?;
    a.packsswb(xmm13, xmm15)?;
    a.packuswb(xmm0, xmm1)?;
    a.psllw(xmm2, 3)?;
    a.psrad(xmm3, 31)?;
    a.psrlq(xmm4, xmm5)?;
    a.pslldq(xmm6, 5)?;
    a.psrldq(xmm7, 9)?;
    a.pminub(xmm8, xmm9)?;
    a.pmaxsw(xmm10, xmm11)?;
    a.pavgb(xmm12, xmm13)?;
    a.paddusb(xmm14, xmm15)?;
    a.psubsw(xmm0, xmm3)?;
    a.movd(ecx, xmm4)?;
    a.movq(xmm5, rdx)?;
    a.movdqu(xmmword_ptr(rdi + 0x23), xmm6)?;
    a.movdqa(xmm7, xmmword_ptr(rdi + 0x80))?;
    a.movss(dword_ptr(rdi + 0x91), xmm8)?;
    a.movsd_2(xmm9, qword_ptr(rdi + 0xa0))?;
    a.pinsrw(xmm10, ebx, 3)?;
    a.pextrw(esi, xmm11, 6)?;
    Ok(())
}

/// The x86-64-v2 instructions (SSE3, SSSE3, SSE4.1, SSE4.2's pcmpgtq and
/// crc32, popcnt), whose lifts compose the IR's vector ops.
fn v2(a: &mut CodeAssembler) -> Result<(), IcedError> {
    a.movddup(xmm0, xmm1)?;
    a.movshdup(xmm2, xmm3)?;
    a.movsldup(xmm4, xmmword_ptr(rdi + 0x40))?;
    a.haddps(xmm5, xmm6)?;
    a.hsubpd(xmm7, xmm8)?;
    a.addsubps(xmm9, xmm10)?;
    a.addsubpd(xmm11, xmm12)?;
    a.pabsb(xmm13, xmm14)?;
    a.pabsd(xmm15, xmm0)?;
    a.psignw(xmm1, xmm2)?;
    a.palignr(xmm3, xmm4, 5)?;
    a.palignr(xmm5, xmm6, 20)?;
    a.phaddw(xmm7, xmm8)?;
    a.phsubsw(xmm9, xmm10)?;
    a.phaddd(xmm11, xmm12)?;
    a.pmaddubsw(xmm13, xmm14)?;
    a.pmulhrsw(xmm15, xmm1)?;
    a.pshufb(xmm2, xmm3)?;
    a.pblendw(xmm4, xmm5, 0xa5)?;
    a.blendps(xmm6, xmm7, 0x6)?;
    a.blendvpd(xmm8, xmm9)?;
    a.pblendvb(xmm10, xmm11)?;
    a.ptest(xmm12, xmm13)?;
    a.setb(al)?;
    a.sete(bl)?;
    a.pextrb(ecx, xmm14, 13)?;
    a.pextrq(rdx, xmm15, 1)?;
    a.extractps(dword_ptr(rdi + 0x64), xmm0, 2)?;
    a.pinsrb(xmm1, esi, 9)?;
    a.pinsrq(xmm2, rax, 1)?;
    a.insertps(xmm3, xmm4, 0x9c)?;
    a.pmovzxbw(xmm5, xmm6)?;
    a.pmovsxbd(xmm7, dword_ptr(rdi + 0x13))?;
    a.pmovsxwq(xmm8, xmm9)?;
    a.pmovzxdq(xmm10, xmm11)?;
    a.pmuldq(xmm12, xmm13)?;
    a.pmulld(xmm14, xmm15)?;
    a.pminsb(xmm0, xmm1)?;
    a.pmaxud(xmm2, xmm3)?;
    a.pcmpeqq(xmm4, xmm5)?;
    a.pcmpgtq(xmm6, xmm7)?;
    a.packusdw(xmm8, xmm9)?;
    a.dpps(xmm10, xmm11, 0xf1)?;
    a.dppd(xmm12, xmm13, 0x33)?;
    a.phminposuw(xmm14, xmm15)?;
    a.mpsadbw(xmm0, xmm1, 5)?;
    a.roundsd(xmm2, xmm3, 9)?;
    a.roundps(xmm4, xmm5, 4)?;
    a.roundpd(xmm6, xmm7, 0)?;
    a.popcnt(rcx, rdx)?;
    a.crc32(eax, bl)?;
    a.crc32(rsi, rdx)?;
    a.crc32(edi, word_ptr(rdi + 0x30))?;
    Ok(())
}

/// AVX and AVX2 (both halves of the YMM registers), the masked moves and
/// gathers (their per-element blocks), and xsave (first: the MXCSR it
/// stores would hold the denormal flag the interpreter raises and the JIT
/// does not, see docs/architecture.md).
fn avx(a: &mut CodeAssembler) -> Result<(), IcedError> {
    a.mov(eax, 7)?;
    a.xor(edx, edx)?;
    a.xsave64(ptr(rdi + 0x200))?;
    a.vpaddd(ymm0, ymm1, ymm2)?;
    a.vaddps(ymm3, ymm4, ymmword_ptr(rdi + 0x20))?;
    a.vmovdqu(ymmword_ptr(rdi + 0x40), ymm5)?;
    a.vpermd(ymm6, ymm7, ymm8)?;
    a.vpermq(ymm9, ymm10, 0x1b)?;
    a.vperm2i128(ymm11, ymm12, ymm13, 0x31)?;
    a.vpshufb(ymm14, ymm15, ymm0)?;
    a.vpmovmskb(eax, ymm1)?;
    a.vptest(ymm2, ymm3)?;
    a.setb(bl)?;
    a.vpsllvd(ymm4, ymm5, ymm6)?;
    a.vcmpps(ymm7, ymm8, ymm9, 0x11)?;
    a.vpbroadcastd(ymm10, xmm11)?;
    a.vinserti128(ymm12, ymm13, xmm14, 1)?;
    a.vextracti128(xmm15, ymm0, 1)?;
    a.vaddsd(xmm1, xmm2, xmm3)?;
    a.vpsrld(ymm1, ymm2, 27)?;
    a.vpcmpeqd(ymm3, ymm3, ymm3)?;
    // code_asm's gathers are the EVEX ones: the VEX forms by Code.
    let vsib = |index, scale, displ| MemoryOperand::new(Register::RDI, index, scale, displ, 1, false, Register::None);
    a.add_instruction(Instruction::with3(
        Encoding::VEX_Vpgatherdd_ymm_vm32y_ymm,
        Register::YMM4,
        vsib(Register::YMM1, 4, 0),
        Register::YMM3,
    )?)?;
    a.vpsrlq(ymm5, ymm6, 59)?;
    a.add_instruction(Instruction::with3(
        Encoding::VEX_Vgatherqpd_ymm_vm64y_ymm,
        Register::YMM7,
        vsib(Register::YMM5, 8, 8),
        Register::YMM8,
    )?)?;
    a.vmaskmovps(ymm9, ymm10, ymmword_ptr(rdi + 0x60))?;
    a.vmaskmovpd(ymmword_ptr(rdi + 0x80), ymm11, ymm12)?;
    a.vzeroupper()?;
    Ok(())
}

const PROGRAMS: [(&str, Program); 8] = [
    ("alu", alu),
    ("shifts", shifts),
    ("muldiv", muldiv),
    ("memory", memory),
    ("sse", sse),
    ("sse_int", sse_int),
    ("v2", v2),
    ("avx", avx),
];

#[test]
fn lifted_programs_plain_and_ordered() {
    let mut regions = Vec::new();
    for (name, program) in PROGRAMS {
        for model in [MemoryModel::Plain, MemoryModel::Ordered] {
            let (r, count) = lift(program, model);
            // The whole program was lifted, up to the int3 after it (an
            // instruction the lifter does not know would end the region
            // with `trap ill` short of that).
            let ends_in_int3 = r.blocks.iter().flat_map(|b| b.insts.last()).any(|v| {
                let d = r.inst(*v);
                d.op == aarchx_ir::Opcode::Trap && d.aux == aarchx_ir::TrapKind::Breakpoint as u16
            });
            assert!(ends_in_int3, "{name}: not all {count} instructions lifted\n{}", aarchx_ir::print::print(&r));
            regions.push(r);
        }
    }
    run_regions("lifted", &regions);
}
