//! The instruction forms the oracle runs: generated from iced-x86's table
//! of encodings (`Code`) for every mnemonic the lifter implements, in each
//! operand size and operand kind the table has (reg,reg / reg,mem /
//! mem,reg / reg,imm8 / reg,imm32 / mem,imm / cl and 1 shifts / implicit
//! operands), with several register choices (legacy, REX r8-r15, the
//! high-byte registers ah..bh, spl..dil, the same register twice) and
//! addressing forms ([base+index*scale+disp8], [rip+disp32], REX base and
//! index with disp32, 32-bit address size, [rsp+disp8], [disp32], moffs64,
//! lock prefixes), plus the string instructions with and without
//! rep/repe/repne. Also the list of forms known not to be lifted yet.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use iced_x86::{
    Code, Decoder, DecoderOptions, Encoder, EncodingKind, Formatter, Instruction, IntelFormatter, Mnemonic,
    OpCodeOperandKind as K, OpKind, Register,
};

use crate::layout::Layout;
use crate::states::{hash, Rng};

/// One instruction encoding placed at the arena's instruction address.
pub struct Form {
    /// Intel-syntax disassembly.
    pub text: String,
    pub bytes: Vec<u8>,
    /// The decoded instruction (at its real address).
    pub insn: Instruction,
    /// iced's name of the encoding, e.g. `Add_rm8_r8`.
    pub code: String,
    /// Required alignment of the memory operand (16 for aligned m128).
    pub align: u64,
    /// A string instruction (movs, stos, lods, cmps, scas).
    pub string: bool,
}

impl Form {
    /// Whether the instruction reads or writes a ModRM/moffs memory operand
    /// (lea and nop-like forms do not).
    pub fn accesses_memory(&self) -> bool {
        !self.string
            && self.insn.mnemonic() != Mnemonic::Lea
            && (0..self.insn.op_count()).any(|n| self.insn.op_kind(n) == OpKind::Memory)
    }

    pub fn hex(&self) -> String {
        self.bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ")
    }
}

/// Forms the lifter does not implement yet (it raises SIGILL for them):
/// printed, not failed. Each entry says why that is acceptable for now.
/// Each entry is a substring of the disassembly and the reason.
pub static NOT_YET: &[(&str, &str)] = &[
    ("[esi]", "string instructions with 32-bit addresses (0x67) are refused by the lifter"),
    ("[edi]", "string instructions with 32-bit addresses (0x67) are refused by the lifter"),
];

/// Why `form` is allowed to be unsupported, if it is.
pub fn not_yet(form: &Form) -> Option<&'static str> {
    NOT_YET.iter().find(|(text, _)| form.text.contains(text)).map(|(_, why)| *why)
}

/// The integer mnemonics (besides setcc/cmovcc, added below).
pub const INTEGER: &[Mnemonic] = {
    use Mnemonic as M;
    &[
        M::Mov,
        M::Movzx,
        M::Movsx,
        M::Movsxd,
        M::Lea,
        M::Add,
        M::Adc,
        M::Sub,
        M::Sbb,
        M::Cmp,
        M::And,
        M::Or,
        M::Xor,
        M::Test,
        M::Inc,
        M::Dec,
        M::Neg,
        M::Not,
        M::Shl,
        M::Sal,
        M::Shr,
        M::Sar,
        M::Rol,
        M::Ror,
        M::Rcl,
        M::Rcr,
        M::Shld,
        M::Shrd,
        M::Xchg,
        M::Xadd,
        M::Cmpxchg,
        M::Bswap,
        M::Bt,
        M::Bts,
        M::Btr,
        M::Btc,
        M::Bsf,
        M::Bsr,
        M::Tzcnt,
        M::Lzcnt,
        M::Popcnt,
        M::Cbw,
        M::Cwde,
        M::Cdqe,
        M::Cwd,
        M::Cdq,
        M::Cqo,
        M::Mul,
        M::Imul,
        M::Div,
        M::Idiv,
        M::Push,
        M::Pop,
        M::Leave,
        M::Pushfq,
        M::Popfq,
        M::Lahf,
        M::Sahf,
        M::Clc,
        M::Stc,
        M::Cmc,
        M::Cld,
        M::Std,
    ]
};

pub const SETCC: &[Mnemonic] = {
    use Mnemonic as M;
    &[
        M::Seto,
        M::Setno,
        M::Setb,
        M::Setae,
        M::Sete,
        M::Setne,
        M::Setbe,
        M::Seta,
        M::Sets,
        M::Setns,
        M::Setp,
        M::Setnp,
        M::Setl,
        M::Setge,
        M::Setle,
        M::Setg,
    ]
};

pub const CMOVCC: &[Mnemonic] = {
    use Mnemonic as M;
    &[
        M::Cmovo,
        M::Cmovno,
        M::Cmovb,
        M::Cmovae,
        M::Cmove,
        M::Cmovne,
        M::Cmovbe,
        M::Cmova,
        M::Cmovs,
        M::Cmovns,
        M::Cmovp,
        M::Cmovnp,
        M::Cmovl,
        M::Cmovge,
        M::Cmovle,
        M::Cmovg,
    ]
};

/// SSE and SSE2 (legacy encodings; their MMX forms too, see [`MMX`]).
pub const SSE: &[Mnemonic] = {
    use Mnemonic as M;
    &[
        M::Movd,
        M::Movq,
        M::Movdqa,
        M::Movdqu,
        M::Movaps,
        M::Movups,
        M::Movapd,
        M::Movupd,
        M::Movss,
        M::Movsd,
        M::Movhps,
        M::Movlps,
        M::Movhpd,
        M::Movlpd,
        M::Movlhps,
        M::Movhlps,
        M::Pxor,
        M::Por,
        M::Pand,
        M::Pandn,
        M::Paddb,
        M::Paddw,
        M::Paddd,
        M::Paddq,
        M::Paddsb,
        M::Paddsw,
        M::Paddusb,
        M::Paddusw,
        M::Psubb,
        M::Psubw,
        M::Psubd,
        M::Psubq,
        M::Psubsb,
        M::Psubsw,
        M::Psubusb,
        M::Psubusw,
        M::Pcmpeqb,
        M::Pcmpeqw,
        M::Pcmpeqd,
        M::Pcmpgtb,
        M::Pcmpgtw,
        M::Pcmpgtd,
        M::Pminub,
        M::Pmaxub,
        M::Pminsw,
        M::Pmaxsw,
        M::Pavgb,
        M::Pavgw,
        M::Pmullw,
        M::Pmulhw,
        M::Pmulhuw,
        M::Pmuludq,
        M::Pmaddwd,
        M::Psadbw,
        M::Pmovmskb,
        M::Pshufd,
        M::Pshuflw,
        M::Pshufhw,
        M::Punpcklbw,
        M::Punpcklwd,
        M::Punpckldq,
        M::Punpcklqdq,
        M::Punpckhbw,
        M::Punpckhwd,
        M::Punpckhdq,
        M::Punpckhqdq,
        M::Packsswb,
        M::Packssdw,
        M::Packuswb,
        M::Psllw,
        M::Pslld,
        M::Psllq,
        M::Psrlw,
        M::Psrld,
        M::Psrlq,
        M::Psraw,
        M::Psrad,
        M::Pslldq,
        M::Psrldq,
        M::Xorps,
        M::Xorpd,
        M::Andps,
        M::Andpd,
        M::Andnps,
        M::Andnpd,
        M::Orps,
        M::Orpd,
        M::Addss,
        M::Addsd,
        M::Addps,
        M::Addpd,
        M::Subss,
        M::Subsd,
        M::Subps,
        M::Subpd,
        M::Mulss,
        M::Mulsd,
        M::Mulps,
        M::Mulpd,
        M::Divss,
        M::Divsd,
        M::Divps,
        M::Divpd,
        M::Sqrtss,
        M::Sqrtsd,
        M::Sqrtps,
        M::Sqrtpd,
        M::Minss,
        M::Minsd,
        M::Minps,
        M::Minpd,
        M::Maxss,
        M::Maxsd,
        M::Maxps,
        M::Maxpd,
        M::Cmpss,
        M::Cmpsd,
        M::Cmpps,
        M::Cmppd,
        M::Ucomiss,
        M::Ucomisd,
        M::Comiss,
        M::Comisd,
        M::Shufps,
        M::Shufpd,
        M::Unpcklps,
        M::Unpckhps,
        M::Unpcklpd,
        M::Unpckhpd,
        M::Movmskps,
        M::Movmskpd,
        M::Cvtsi2sd,
        M::Cvtsi2ss,
        M::Cvtsd2si,
        M::Cvtss2si,
        M::Cvttsd2si,
        M::Cvttss2si,
        M::Cvtsd2ss,
        M::Cvtss2sd,
        M::Cvtdq2pd,
        M::Cvtdq2ps,
        M::Cvtpd2dq,
        M::Cvtps2dq,
        M::Cvttpd2dq,
        M::Cvttps2dq,
        M::Cvtpd2ps,
        M::Cvtps2pd,
    ]
};

/// The x86-64-v2 vector instructions: SSE3, SSSE3, SSE4.1 and SSE4.2
/// (legacy encodings with XMM operands), cmpxchg16b, and AES-NI and
/// pclmulqdq (which the V2 CPU reports too).
pub const V2: &[Mnemonic] = {
    use Mnemonic as M;
    &[
        M::Lddqu,
        M::Movddup,
        M::Movshdup,
        M::Movsldup,
        M::Haddps,
        M::Haddpd,
        M::Hsubps,
        M::Hsubpd,
        M::Addsubps,
        M::Addsubpd,
        M::Pabsb,
        M::Pabsw,
        M::Pabsd,
        M::Psignb,
        M::Psignw,
        M::Psignd,
        M::Palignr,
        M::Phaddw,
        M::Phaddd,
        M::Phaddsw,
        M::Phsubw,
        M::Phsubd,
        M::Phsubsw,
        M::Pmaddubsw,
        M::Pmulhrsw,
        M::Pshufb,
        M::Pblendw,
        M::Blendps,
        M::Blendpd,
        M::Pblendvb,
        M::Blendvps,
        M::Blendvpd,
        M::Ptest,
        M::Pextrb,
        M::Pextrw,
        M::Pextrd,
        M::Pextrq,
        M::Extractps,
        M::Pinsrb,
        M::Pinsrd,
        M::Pinsrq,
        M::Insertps,
        M::Pmovzxbw,
        M::Pmovzxbd,
        M::Pmovzxbq,
        M::Pmovzxwd,
        M::Pmovzxwq,
        M::Pmovzxdq,
        M::Pmovsxbw,
        M::Pmovsxbd,
        M::Pmovsxbq,
        M::Pmovsxwd,
        M::Pmovsxwq,
        M::Pmovsxdq,
        M::Pmuldq,
        M::Pmulld,
        M::Pminsb,
        M::Pminsd,
        M::Pminuw,
        M::Pminud,
        M::Pmaxsb,
        M::Pmaxsd,
        M::Pmaxuw,
        M::Pmaxud,
        M::Pcmpeqq,
        M::Pcmpgtq,
        M::Packusdw,
        M::Movntdqa,
        M::Dpps,
        M::Dppd,
        M::Phminposuw,
        M::Mpsadbw,
        M::Cmpxchg16b,
        M::Crc32,
        M::Pcmpistri,
        M::Pcmpistrm,
        M::Pcmpestri,
        M::Pcmpestrm,
        M::Pcmpestri64,
        M::Pcmpestrm64,
        M::Roundss,
        M::Roundsd,
        M::Roundps,
        M::Roundpd,
        M::Aesenc,
        M::Aesenclast,
        M::Aesdec,
        M::Aesdeclast,
        M::Aesimc,
        M::Aeskeygenassist,
        M::Pclmulqdq,
    ]
};

/// x86-64-v3's scalar integer instructions (VEX-encoded but for movbe):
/// BMI1, BMI2, movbe.
pub const V3_SCALAR: &[Mnemonic] = {
    use Mnemonic as M;
    &[
        M::Andn,
        M::Bextr,
        M::Blsi,
        M::Blsmsk,
        M::Blsr,
        M::Bzhi,
        M::Mulx,
        M::Pdep,
        M::Pext,
        M::Rorx,
        M::Sarx,
        M::Shlx,
        M::Shrx,
        M::Movbe,
    ]
};

/// AVX and AVX2 instructions with no SSE counterpart. The VEX forms of
/// the SSE and V2 mnemonics above join them through [`vex_forms`].
pub const AVX_ONLY: &[Mnemonic] = {
    use Mnemonic as M;
    &[
        M::Vzeroupper,
        M::Vzeroall,
        M::Vbroadcastss,
        M::Vbroadcastsd,
        M::Vbroadcastf128,
        M::Vbroadcasti128,
        M::Vpbroadcastb,
        M::Vpbroadcastw,
        M::Vpbroadcastd,
        M::Vpbroadcastq,
        M::Vinsertf128,
        M::Vinserti128,
        M::Vextractf128,
        M::Vextracti128,
        M::Vperm2f128,
        M::Vperm2i128,
        M::Vpermq,
        M::Vpermpd,
        M::Vpermd,
        M::Vpermps,
        M::Vpermilps,
        M::Vpermilpd,
        M::Vpblendd,
        M::Vpsllvd,
        M::Vpsllvq,
        M::Vpsrlvd,
        M::Vpsrlvq,
        M::Vpsravd,
        M::Vtestps,
        M::Vtestpd,
        M::Vmaskmovps,
        M::Vmaskmovpd,
        M::Vpmaskmovd,
        M::Vpmaskmovq,
        M::Vgatherdps,
        M::Vgatherdpd,
        M::Vgatherqps,
        M::Vgatherqpd,
        M::Vpgatherdd,
        M::Vpgatherdq,
        M::Vpgatherqd,
        M::Vpgatherqq,
        // FMA3.
        M::Vfmadd132ps,
        M::Vfmadd132pd,
        M::Vfmadd132ss,
        M::Vfmadd132sd,
        M::Vfmadd213ps,
        M::Vfmadd213pd,
        M::Vfmadd213ss,
        M::Vfmadd213sd,
        M::Vfmadd231ps,
        M::Vfmadd231pd,
        M::Vfmadd231ss,
        M::Vfmadd231sd,
        M::Vfmsub132ps,
        M::Vfmsub132pd,
        M::Vfmsub132ss,
        M::Vfmsub132sd,
        M::Vfmsub213ps,
        M::Vfmsub213pd,
        M::Vfmsub213ss,
        M::Vfmsub213sd,
        M::Vfmsub231ps,
        M::Vfmsub231pd,
        M::Vfmsub231ss,
        M::Vfmsub231sd,
        M::Vfnmadd132ps,
        M::Vfnmadd132pd,
        M::Vfnmadd132ss,
        M::Vfnmadd132sd,
        M::Vfnmadd213ps,
        M::Vfnmadd213pd,
        M::Vfnmadd213ss,
        M::Vfnmadd213sd,
        M::Vfnmadd231ps,
        M::Vfnmadd231pd,
        M::Vfnmadd231ss,
        M::Vfnmadd231sd,
        M::Vfnmsub132ps,
        M::Vfnmsub132pd,
        M::Vfnmsub132ss,
        M::Vfnmsub132sd,
        M::Vfnmsub213ps,
        M::Vfnmsub213pd,
        M::Vfnmsub213ss,
        M::Vfnmsub213sd,
        M::Vfnmsub231ps,
        M::Vfnmsub231pd,
        M::Vfnmsub231ss,
        M::Vfnmsub231sd,
        M::Vfmaddsub132ps,
        M::Vfmaddsub132pd,
        M::Vfmaddsub213ps,
        M::Vfmaddsub213pd,
        M::Vfmaddsub231ps,
        M::Vfmaddsub231pd,
        M::Vfmsubadd132ps,
        M::Vfmsubadd132pd,
        M::Vfmsubadd213ps,
        M::Vfmsubadd213pd,
        M::Vfmsubadd231ps,
        M::Vfmsubadd231pd,
        // F16C.
        M::Vcvtph2ps,
        M::Vcvtps2ph,
    ]
};

/// The mnemonics only MMX forms have (the MMX forms of the SSE and V2
/// mnemonics come with them: every encoding of a wanted mnemonic is a
/// form), with maskmovdqu, which shares maskmovq's lifting.
pub const MMX: &[Mnemonic] = {
    use Mnemonic as M;
    &[
        M::Emms,
        M::Movq2dq,
        M::Movdq2q,
        M::Movntq,
        M::Pshufw,
        M::Pinsrw,
        M::Maskmovq,
        M::Maskmovdqu,
        M::Cvtpi2ps,
        M::Cvtps2pi,
        M::Cvttps2pi,
        M::Cvtpi2pd,
        M::Cvtpd2pi,
        M::Cvttpd2pi,
    ]
};

/// The XSAVE family (x86-64-v3 with AVX) that the oracle can run: xgetbv
/// reads the host's XCR0, which is not this CPU model's, and is tested
/// apart (host/src/exec_tests).
pub const XSAVE: &[Mnemonic] = {
    use Mnemonic as M;
    &[M::Xsave, M::Xsave64, M::Xrstor, M::Xrstor64]
};

/// The size of the XSAVE area of this CPU model (x87, SSE and AVX, in
/// the standard format): what CPUID.(0xd, 0):ebx reports.
pub const XSAVE_AREA: u64 = 832;

/// The bytes a memory operand of `size` covers (iced gives the XSAVE
/// area no size: it depends on the CPU).
pub fn memory_bytes(size: iced_x86::MemorySize) -> u64 {
    match size {
        iced_x86::MemorySize::Xsave => XSAVE_AREA,
        s => s.size() as u64,
    }
}

/// The VEX forms of the SSE and V2 mnemonics, by iced's naming (vpaddd:
/// paddd): VEX mnemonic to SSE mnemonic.
fn vex_forms() -> &'static HashMap<Mnemonic, Mnemonic> {
    static FORMS: OnceLock<HashMap<Mnemonic, Mnemonic>> = OnceLock::new();
    FORMS.get_or_init(|| {
        let by_name: HashMap<String, Mnemonic> =
            Mnemonic::values().map(|v| (format!("{v:?}").to_lowercase(), v)).collect();
        SSE.iter()
            .chain(V2)
            .chain(MMX)
            .filter_map(|&m| by_name.get(&format!("v{}", format!("{m:?}").to_lowercase())).map(|&v| (v, m)))
            .collect()
    })
}

/// Whether `m` is an AVX, AVX2 or FMA3 vector instruction the lifter implements.
pub fn is_avx(m: Mnemonic) -> bool {
    AVX_ONLY.contains(&m) || vex_forms().contains_key(&m)
}

/// The SSE mnemonic whose VEX form `m` is, if any (vpaddd: paddd).
fn sse_of(m: Mnemonic) -> Option<Mnemonic> {
    vex_forms().get(&m).copied()
}

/// Whether an encoding's CPUID features are those of AVX, AVX2, FMA3 and
/// F16C (with the 128-bit VEX forms of AES-NI and pclmulqdq), not VAES
/// and others.
fn avx_features(code: Code) -> bool {
    use iced_x86::CpuidFeature as F;
    code.cpuid_features().iter().all(|f| matches!(f, F::AVX | F::AVX2 | F::FMA | F::AES | F::PCLMULQDQ | F::F16C))
}

/// Encodings left out on purpose: their result is undefined, or they are
/// not what the mnemonic list means.
const EXCLUDED: &[Code] = &[
    // bswap r16: the result is undefined (SDM).
    Code::Bswap_r16,
];

/// An operand slot of an encoding.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Slot {
    /// A GPR of this many bytes.
    Gpr(usize),
    /// A GPR or memory operand of this many bytes.
    Rm(usize),
    Xmm,
    RmXmm,
    Ymm,
    RmYmm,
    /// An mm register.
    Mm,
    /// An mm register or m64.
    RmMm,
    /// The implicit [rdi] of maskmovq and maskmovdqu.
    Rdi,
    /// A VSIB memory operand (a gather's): a GPR base and an XMM or YMM
    /// register (the first of its kind) of indexes.
    Vsib(Register),
    /// Memory only (lea, movhps...).
    Mem,
    /// moffs64 (`mov al, [abs64]`).
    MemOffs,
    Fixed(Register),
    Imm(OpKind, u32),
}

fn slot(kind: K) -> Option<Slot> {
    use Slot as S;
    Some(match kind {
        K::r8_or_mem => S::Rm(1),
        K::r16_or_mem => S::Rm(2),
        K::r32_or_mem => S::Rm(4),
        K::r64_or_mem => S::Rm(8),
        K::r8_reg | K::r8_opcode => S::Gpr(1),
        K::r16_reg | K::r16_rm | K::r16_opcode => S::Gpr(2),
        K::r32_reg | K::r32_rm | K::r32_opcode | K::r32_vvvv => S::Gpr(4),
        K::r64_reg | K::r64_rm | K::r64_opcode | K::r64_vvvv => S::Gpr(8),
        K::xmm_reg | K::xmm_rm | K::xmm_vvvv | K::xmm_is4 => S::Xmm,
        K::xmm_or_mem => S::RmXmm,
        K::ymm_reg | K::ymm_rm | K::ymm_vvvv | K::ymm_is4 => S::Ymm,
        K::ymm_or_mem => S::RmYmm,
        K::mm_reg | K::mm_rm => S::Mm,
        K::mm_or_mem => S::RmMm,
        K::seg_rDI => S::Rdi,
        K::mem_vsib32x | K::mem_vsib64x => S::Vsib(Register::XMM0),
        K::mem_vsib32y | K::mem_vsib64y => S::Vsib(Register::YMM0),
        K::mem => S::Mem,
        K::mem_offs => S::MemOffs,
        K::al => S::Fixed(Register::AL),
        K::cl => S::Fixed(Register::CL),
        K::ax => S::Fixed(Register::AX),
        K::eax => S::Fixed(Register::EAX),
        K::rax => S::Fixed(Register::RAX),
        K::imm8 => S::Imm(OpKind::Immediate8, 8),
        K::imm8_const_1 => S::Imm(OpKind::Immediate8, 0),
        K::imm8sex16 => S::Imm(OpKind::Immediate8to16, 8),
        K::imm8sex32 => S::Imm(OpKind::Immediate8to32, 8),
        K::imm8sex64 => S::Imm(OpKind::Immediate8to64, 8),
        K::imm16 => S::Imm(OpKind::Immediate16, 16),
        K::imm32 => S::Imm(OpKind::Immediate32, 32),
        K::imm32sex64 => S::Imm(OpKind::Immediate32to64, 32),
        K::imm64 => S::Imm(OpKind::Immediate64, 64),
        _ => return None,
    })
}

/// How registers are chosen for a variant.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Regs {
    /// rax..rdi (8-bit: al..bl and spl..dil), xmm0-7.
    Low,
    /// r8-r15, xmm8-15.
    Rex,
    /// ah..bh for byte operands; no REX anywhere.
    High,
    /// One register for every register operand.
    Same,
}

/// How the memory operand is addressed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Addr {
    /// [rbx/rbp/rsi/rdi + index*scale + disp8]
    BaseIndex,
    /// [rip + disp32] into the buffer.
    Rip,
    /// [r8-r15 + r8-r15*scale + disp32]
    RexBaseIndex,
    /// [e?x + e?x*scale + disp8], 32-bit address size.
    Addr32,
    /// [rbx/rsi/rdi/rbp + disp8], no REX (for ah..bh operands).
    BaseOnly,
    /// [rsp + disp8]
    Rsp,
    /// [disp32] (SIB, no base, no index).
    Abs,
    /// [index*scale + disp32] (lea only).
    IndexOnly,
    /// moffs64.
    Offs,
    /// [base + vector index*scale + disp8] (gathers).
    Vsib,
}

struct Variant {
    regs: Regs,
    addr: Option<Addr>,
    lock: bool,
}

fn reg_at(first: Register, n: usize) -> Register {
    Register::values().nth(first as usize + n).expect("register in range")
}

/// The GPR with number `n` (0..16) at `size` bytes (1: al..bl, spl..dil, r8l..).
fn gpr(n: usize, size: usize) -> Register {
    match size {
        1 if n < 4 => reg_at(Register::AL, n),
        1 => reg_at(Register::SPL, n - 4),
        2 => reg_at(Register::AX, n),
        4 => reg_at(Register::EAX, n),
        _ => reg_at(Register::RAX, n),
    }
}

/// Whether `m` writes memory and takes a lock prefix.
fn lockable(m: Mnemonic) -> bool {
    use Mnemonic as M;
    matches!(
        m,
        M::Add
            | M::Adc
            | M::Sub
            | M::Sbb
            | M::And
            | M::Or
            | M::Xor
            | M::Inc
            | M::Dec
            | M::Neg
            | M::Not
            | M::Xadd
            | M::Cmpxchg
            | M::Bts
            | M::Btr
            | M::Btc
    )
}

fn is_shift(m: Mnemonic) -> bool {
    matches!(
        m,
        Mnemonic::Shl
            | Mnemonic::Sal
            | Mnemonic::Shr
            | Mnemonic::Sar
            | Mnemonic::Rol
            | Mnemonic::Ror
            | Mnemonic::Rcl
            | Mnemonic::Rcr
    )
}

/// Immediates to try for an immediate slot of `bits` (0: the constant 1)
/// in an instruction of mnemonic `m` whose first operand has `width` bits.
fn immediates(m: Mnemonic, vex: bool, bits: u32, width: u32, rng: &mut Rng) -> Vec<i64> {
    use Mnemonic as M;
    let w = i64::from(width);
    let random = |rng: &mut Rng| -> i64 {
        let v = rng.next() as i64;
        match bits {
            8 => v as i8 as i64,
            16 => v as i16 as i64,
            32 => v as i32 as i64,
            _ => v,
        }
    };
    let mut v: Vec<i64> = match m {
        _ if bits == 0 => vec![1],
        _ if is_shift(m) => vec![0, 1, 3, w - 1, w, w + 1, 31, 33, 63],
        M::Shld | M::Shrd if width == 16 => vec![0, 1, 9, 15, 16],
        M::Shld | M::Shrd => vec![0, 1, w / 2 + 1, w - 1, 33],
        M::Bt | M::Bts | M::Btr | M::Btc => vec![0, 5, w - 1, w + 3, 0xff],
        M::Imul => vec![random(rng), -1, 2],
        // VEX compares have 32 predicates.
        M::Cmpss | M::Cmpsd | M::Cmpps | M::Cmppd if vex => (0..32).collect(),
        M::Cmpss | M::Cmpsd | M::Cmpps | M::Cmppd => (0..8).collect(),
        M::Vperm2f128 | M::Vperm2i128 => vec![0x00, 0x01, 0x20, 0x31, 0x13, 0x08, 0x80, 0x32, random(rng) & 0xff],
        M::Vpermq | M::Vpermpd | M::Vpermilps | M::Vpermilpd | M::Vpblendd => {
            vec![random(rng) & 0xff, 0x1b, 0xe4, 0x4e]
        }
        M::Vinsertf128 | M::Vinserti128 | M::Vextractf128 | M::Vextracti128 => vec![0, 1, 0xfe],
        M::Pshufd | M::Pshuflw | M::Pshufhw | M::Shufps | M::Shufpd => vec![random(rng) & 0xff, 0x1b],
        M::Psllw | M::Psrlw | M::Psraw => vec![0, 1, 9, 15, 16, 0xc8],
        M::Pslld | M::Psrld | M::Psrad => vec![0, 1, 17, 31, 32, 0xc8],
        M::Psllq | M::Psrlq => vec![0, 1, 33, 63, 64, 0xc8],
        M::Pslldq | M::Psrldq => vec![0, 1, 7, 15, 16, 0xff],
        M::Palignr => vec![0, 1, 8, 15, 16, 17, 31, 32, 0xff],
        M::Rorx => vec![0, 1, 7, 31, 33, 63, 0xff],
        M::Roundss | M::Roundsd | M::Roundps | M::Roundpd => (0..16).collect(),
        // Every rounding selection (bits 1:0, bit 2 for MXCSR.RC), and
        // bits above them, which vcvtps2ph ignores.
        M::Vcvtps2ph => vec![0, 1, 2, 3, 4, 5, 6, 7, 0x08, 0xfb, 0xf4, random(rng) & 0xff],
        // Each pair of halves, and bits pclmulqdq ignores.
        M::Pclmulqdq => vec![0x00, 0x01, 0x10, 0x11, 0xee, 0xff],
        M::Aeskeygenassist => vec![0x00, 0x01, 0x1b, 0x36, 0x80, 0xff, random(rng) & 0xff],
        // Every combination of format, aggregation, polarity and output;
        // bit 7 (reserved) once.
        M::Pcmpistri | M::Pcmpistrm | M::Pcmpestri | M::Pcmpestrm | M::Pcmpestri64 | M::Pcmpestrm64 => {
            (0..128).chain([0xb9]).collect()
        }
        M::Pblendw | M::Blendps | M::Blendpd | M::Insertps | M::Dpps | M::Dppd | M::Mpsadbw => {
            vec![random(rng) & 0xff, 0xff, 0x31, 0xa5, 0x0f, 0xf0]
        }
        _ => {
            let boundary = match bits {
                8 => {
                    if rng.one_in(2) {
                        0x7f
                    } else {
                        -0x80
                    }
                }
                16 => -0x8000,
                32 => i64::from(i32::MIN),
                _ => i64::MIN + 1,
            };
            vec![random(rng), boundary]
        }
    };
    if bits == 8 {
        for x in v.iter_mut() {
            *x = *x as i8 as i64;
        }
    }
    let mut seen = HashSet::new();
    v.retain(|x| seen.insert(*x));
    v
}

/// Generates every form for the arena at `layout`.
pub fn all(layout: &Layout) -> Vec<Form> {
    let mut forms = Vec::new();
    let mut seen = HashSet::new();
    let wanted: HashSet<Mnemonic> = INTEGER
        .iter()
        .chain(SETCC)
        .chain(CMOVCC)
        .chain(SSE)
        .chain(V2)
        .chain(MMX)
        .chain(V3_SCALAR)
        .chain(XSAVE)
        .copied()
        .collect();
    for code in Code::values() {
        let op = code.op_code();
        let encoding_ok = match op.encoding() {
            EncodingKind::Legacy => true,
            EncodingKind::VEX => V3_SCALAR.contains(&code.mnemonic()) || avx_features(code),
            _ => false,
        };
        if !encoding_ok || !op.mode64() || !op.is_instruction() || EXCLUDED.contains(&code) {
            continue;
        }
        if !wanted.contains(&code.mnemonic()) && !is_avx(code.mnemonic()) {
            continue;
        }
        let Some(slots) = op.op_kinds().iter().map(|k| slot(*k)).collect::<Option<Vec<_>>>() else {
            continue; // Segment, string or other operand kinds.
        };
        for form in code_forms(code, &slots, layout) {
            if seen.insert(form.bytes.clone()) {
                forms.push(form);
            }
        }
    }
    forms.extend(string_forms(layout));
    forms.extend(crate::x87::forms(layout));
    forms
}

fn code_forms(code: Code, slots: &[Slot], layout: &Layout) -> Vec<Form> {
    let m = code.mnemonic();
    let has_rm = slots.iter().any(|s| matches!(s, Slot::Rm(_) | Slot::RmXmm | Slot::RmYmm | Slot::RmMm));
    let mem_only = slots.iter().any(|s| matches!(s, Slot::Mem | Slot::MemOffs));
    let byte_regs = slots.iter().any(|s| matches!(s, Slot::Gpr(1) | Slot::Rm(1)));
    let reg_count = slots
        .iter()
        .filter(|s| {
            matches!(
                s,
                Slot::Gpr(_) | Slot::Rm(_) | Slot::Xmm | Slot::RmXmm | Slot::Ymm | Slot::RmYmm | Slot::Mm | Slot::RmMm
            )
        })
        .count();
    let mut variants = Vec::new();
    let v = |regs, addr| Variant { regs, addr, lock: false };
    if !mem_only {
        variants.push(v(Regs::Low, None));
        if reg_count > 0 {
            variants.push(v(Regs::Rex, None));
        }
        if byte_regs {
            variants.push(v(Regs::High, None));
        }
        if reg_count >= 2 {
            variants.push(v(Regs::Same, None));
        }
    }
    if slots.iter().any(|s| matches!(s, Slot::Vsib(_))) {
        // A gather's registers must all differ (else #UD): no Same variant.
        variants = vec![v(Regs::Low, Some(Addr::Vsib)), v(Regs::Rex, Some(Addr::Vsib))];
    } else if slots.contains(&Slot::MemOffs) {
        variants.push(v(Regs::Low, Some(Addr::Offs)));
    } else if has_rm || mem_only {
        variants.push(v(Regs::Low, Some(Addr::BaseIndex)));
        variants.push(v(Regs::Rex, Some(Addr::Rip)));
        variants.push(v(Regs::Low, Some(Addr::RexBaseIndex)));
        variants.push(v(Regs::Rex, Some(Addr::Addr32)));
        if byte_regs {
            variants.push(v(Regs::High, Some(Addr::BaseOnly)));
        }
        if matches!(m, Mnemonic::Push | Mnemonic::Pop | Mnemonic::Mov | Mnemonic::Lea | Mnemonic::Add) {
            variants.push(v(Regs::Low, Some(Addr::Rsp)));
        }
        if matches!(m, Mnemonic::Mov | Mnemonic::Lea | Mnemonic::Movdqu | Mnemonic::Cmp) {
            variants.push(v(Regs::Low, Some(Addr::Abs)));
        }
        if m == Mnemonic::Lea {
            variants.push(v(Regs::Rex, Some(Addr::IndexOnly)));
        }
        let mem_first = matches!(slots.first(), Some(Slot::Rm(_)));
        if lockable(m) && mem_first {
            variants.push(Variant { regs: Regs::Low, addr: Some(Addr::BaseIndex), lock: true });
            variants.push(Variant { regs: Regs::Rex, addr: Some(Addr::RexBaseIndex), lock: true });
        }
    }
    let width = slots
        .iter()
        .find_map(|s| match s {
            Slot::Gpr(b) | Slot::Rm(b) => Some(*b as u32 * 8),
            Slot::Fixed(r) => Some(r.size() as u32 * 8),
            _ => None,
        })
        .unwrap_or(64);
    let mut forms = Vec::new();
    for (vi, variant) in variants.iter().enumerate() {
        let mut rng = Rng::new(hash(format!("{code:?}/{vi}").as_bytes()));
        let imm_slot = slots.iter().find_map(|s| match s {
            Slot::Imm(_, bits) => Some(*bits),
            _ => None,
        });
        let imms = match imm_slot {
            Some(bits) => {
                let vex = code.op_code().encoding() == EncodingKind::VEX;
                let all = immediates(sse_of(m).unwrap_or(m), vex, bits, width, &mut rng);
                if vi == 0 || all.len() <= 2 {
                    all
                } else {
                    // Other variants take two of them, rotating.
                    vec![all[vi % all.len()], all[(vi + 3) % all.len()]]
                }
            }
            None => vec![0],
        };
        for imm in imms {
            if let Some(form) = build(code, slots, variant, imm, layout, &mut rng) {
                forms.push(form);
            }
        }
    }
    forms
}

/// Builds, encodes and decodes one form; `None` if the combination cannot
/// be encoded (e.g. ah with a REX prefix).
fn build(code: Code, slots: &[Slot], variant: &Variant, imm: i64, layout: &Layout, rng: &mut Rng) -> Option<Form> {
    let m = code.mnemonic();
    // `Instruction::with` is for operand-less codes (it debug-asserts so);
    // the operands are set below.
    let mut insn = Instruction::default();
    insn.set_code(code);
    // Registers the memory operand must not use: implicit operands.
    let mut used: Vec<Register> = vec![Register::RAX, Register::RCX, Register::RDX, Register::RSP];
    let same = rng.below(16) as usize;
    let mut regs = Vec::new();
    // Distinct vector registers, drawn without replacement (a gather's
    // destination, mask and index must differ).
    let first_vec = if variant.regs == Regs::Rex { 8 } else { 0 };
    let mut vec_pool: Vec<usize> = (first_vec..first_vec + 8).collect();
    let mut draw_vec = |rng: &mut Rng| vec_pool.swap_remove(rng.below(vec_pool.len() as u64) as usize);
    let reg_slot_is_mem =
        |s: &Slot| variant.addr.is_some() && matches!(s, Slot::Rm(_) | Slot::RmXmm | Slot::RmYmm | Slot::RmMm);
    for (n, s) in slots.iter().enumerate() {
        let n = n as u32;
        let r = match *s {
            Slot::Gpr(size) | Slot::Rm(size) if !reg_slot_is_mem(s) => {
                let k = pick_gpr(m, variant.regs, size, same, n, rng);
                if size == 1 && variant.regs == Regs::High {
                    reg_at(Register::AH, k)
                } else {
                    gpr(k, size)
                }
            }
            Slot::Xmm | Slot::RmXmm | Slot::Ymm | Slot::RmYmm if !reg_slot_is_mem(s) => {
                let k = match variant.regs {
                    _ if variant.addr == Some(Addr::Vsib) => draw_vec(rng),
                    Regs::Rex => 8 + rng.below(8) as usize,
                    Regs::Same => same,
                    _ => rng.below(8) as usize,
                };
                let first = if matches!(s, Slot::Ymm | Slot::RmYmm) { Register::YMM0 } else { Register::XMM0 };
                reg_at(first, k)
            }
            // REX.R and REX.B do not extend mm register numbers.
            Slot::Mm | Slot::RmMm if !reg_slot_is_mem(s) => {
                reg_at(Register::MM0, if variant.regs == Regs::Same { same % 8 } else { rng.below(8) as usize })
            }
            Slot::Fixed(r) => r,
            Slot::Rdi => {
                insn.set_op_kind(n, OpKind::MemorySegRDI);
                used.push(Register::RDI);
                continue;
            }
            _ => continue,
        };
        insn.set_op_kind(n, OpKind::Register);
        insn.set_op_register(n, r);
        if !r.is_xmm() && !r.is_ymm() && !r.is_mm() {
            used.push(r.full_register());
            regs.push(r);
        }
    }
    let mut align = 1;
    for (n, s) in slots.iter().enumerate() {
        let n = n as u32;
        match *s {
            Slot::Imm(kind, _) => {
                insn.set_op_kind(n, kind);
                insn.set_immediate_i64(n, imm);
            }
            Slot::Vsib(first) => {
                insn.set_op_kind(n, OpKind::Memory);
                let legacy = [Register::RBX, Register::RBP, Register::RSI, Register::RDI];
                let rex: Vec<Register> = (8..16).map(|k| gpr(k, 8)).collect();
                let base = if variant.regs == Regs::Rex { rng.pick(&rex) } else { rng.pick(&legacy) };
                insn.set_memory_base(base);
                insn.set_memory_index(reg_at(first, draw_vec(rng)));
                insn.set_memory_index_scale(1 << rng.below(4));
                insn.set_memory_displ_size(1);
                insn.set_memory_displacement64((rng.below(256) as i64 - 128) as u64);
                insn.set_segment_prefix(Register::None);
            }
            Slot::Rm(_) | Slot::RmXmm | Slot::RmYmm | Slot::RmMm | Slot::Mem | Slot::MemOffs
                if variant.addr.is_some() =>
            {
                insn.set_op_kind(n, OpKind::Memory);
                let size = code_memory_size(code);
                align = memory_alignment(code, slots, size);
                set_memory(&mut insn, variant.addr.expect("memory variant"), &used, size.max(1), align, layout, rng)?;
            }
            _ => {}
        }
    }
    if variant.lock {
        insn.set_has_lock_prefix(true);
    }
    // 16-bit operand size can't have a high-byte register with a REX
    // prefix; the encoder refuses what is impossible.
    let mut enc = Encoder::new(64);
    enc.encode(&insn, layout.insn).ok()?;
    let bytes = enc.take_buffer();
    let decoded = decode(&bytes, layout.insn)?;
    let string = false;
    Some(Form { text: format_insn(&decoded), bytes, insn: decoded, code: format!("{code:?}"), align, string })
}

/// The alignment an encoding's memory operand of `size` bytes needs (a
/// misaligned one faults): m128 of the legacy SSE forms but the unaligned
/// moves, and cmpxchg16b; of the VEX forms only the aligned moves'; the
/// XSAVE area 64 bytes.
fn memory_alignment(code: Code, slots: &[Slot], size: u64) -> u64 {
    use Mnemonic as M;
    let m = code.mnemonic();
    if XSAVE.contains(&m) {
        return 64;
    }
    if code.op_code().encoding() == EncodingKind::VEX {
        let aligned = [M::Vmovaps, M::Vmovapd, M::Vmovdqa, M::Vmovntps, M::Vmovntpd, M::Vmovntdq, M::Vmovntdqa];
        return if aligned.contains(&m) { size } else { 1 };
    }
    let unaligned = matches!(m, M::Movdqu | M::Movups | M::Movupd | M::Lddqu);
    let xmm = slots.iter().any(|s| matches!(s, Slot::Xmm | Slot::RmXmm));
    if size == 16 && (m == M::Cmpxchg16b || (xmm && !unaligned)) {
        16
    } else {
        1
    }
}

/// The size of an encoding's memory operand.
fn code_memory_size(code: Code) -> u64 {
    memory_bytes(code.op_code().memory_size())
}

/// Picks a GPR number for register slot `n`.
fn pick_gpr(m: Mnemonic, regs: Regs, size: usize, same: usize, n: u32, rng: &mut Rng) -> usize {
    use Mnemonic as M;
    // div rdx / div ah always fault: the divisor is part of the dividend.
    let avoid =
        |k: usize| matches!(m, M::Div | M::Idiv) && n == 0 && (k == 2 || (size == 1 && regs == Regs::High && k == 0));
    loop {
        let k = match regs {
            Regs::Low => rng.below(8) as usize,
            Regs::Rex => 8 + rng.below(8) as usize,
            Regs::High if size == 1 => rng.below(4) as usize,
            Regs::High => rng.below(8) as usize,
            Regs::Same => same,
        };
        if !avoid(k) {
            return k;
        }
        if regs == Regs::Same {
            return 3;
        }
    }
}

/// Fills in the memory operand for an addressing form. Base and index
/// registers avoid every register operand and the implicit rax, rcx, rdx
/// and rsp; their values are set per state (see `states::memory_registers`).
fn set_memory(
    insn: &mut Instruction,
    addr: Addr,
    used: &[Register],
    size: u64,
    align: u64,
    layout: &Layout,
    rng: &mut Rng,
) -> Option<()> {
    let legacy = [Register::RBX, Register::RBP, Register::RSI, Register::RDI];
    let rex: Vec<Register> = (8..16).map(|k| gpr(k, 8)).collect();
    let free = |pool: &[Register], rng: &mut Rng, also: Register| -> Option<Register> {
        let ok: Vec<Register> = pool.iter().copied().filter(|r| !used.contains(r) && *r != also).collect();
        (!ok.is_empty()).then(|| rng.pick(&ok))
    };
    let scale = 1u32 << rng.below(4);
    let disp8 = rng.below(256) as i64 - 128;
    let disp32 = (rng.next() as i32) as i64;
    // A fixed address in the buffer for RIP-relative and absolute forms.
    let fixed = (layout.buf + 1024 + rng.below(2048 - size))
        & !(align.max(if rng.one_in(2) { size.next_power_of_two().min(16) } else { 1 }) - 1);
    let (base, index, scale, disp, displ_size) = match addr {
        Addr::BaseIndex => {
            let b = free(&legacy, rng, Register::None)?;
            (b, free(&legacy, rng, b)?, scale, disp8, 1)
        }
        Addr::RexBaseIndex => {
            let b = free(&rex, rng, Register::None)?;
            (b, free(&rex, rng, b)?, scale, disp32, 4)
        }
        Addr::Addr32 => {
            let b = free(&legacy, rng, Register::None)?;
            let i = free(&legacy, rng, b)?;
            (gpr(b.number(), 4), gpr(i.number(), 4), scale, disp8, 1)
        }
        Addr::BaseOnly => (free(&legacy, rng, Register::None)?, Register::None, 1, disp8, 1),
        Addr::Rsp => (Register::RSP, Register::None, 1, disp8 & !7, 1),
        Addr::Rip => (Register::RIP, Register::None, 1, fixed as i64, 8),
        Addr::Abs => (Register::None, Register::None, 1, fixed as i64, 4),
        Addr::IndexOnly => (Register::None, free(&rex, rng, Register::None)?, scale, disp32, 4),
        Addr::Offs => (Register::None, Register::None, 1, fixed as i64, 8),
        Addr::Vsib => unreachable!("VSIB operands are built by `build`"),
    };
    insn.set_memory_base(base);
    insn.set_memory_index(index);
    insn.set_memory_index_scale(scale);
    insn.set_memory_displ_size(displ_size);
    insn.set_memory_displacement64(disp as u64);
    insn.set_segment_prefix(Register::None);
    Some(())
}

fn decode(bytes: &[u8], ip: u64) -> Option<Instruction> {
    let mut d = Decoder::with_ip(64, bytes, ip, DecoderOptions::NONE);
    let i = d.decode();
    (!i.is_invalid() && i.len() == bytes.len()).then_some(i)
}

pub fn format_insn(i: &Instruction) -> String {
    let mut f = IntelFormatter::new();
    f.options_mut().set_rip_relative_addresses(true);
    let mut s = String::new();
    f.format(i, &mut s);
    s
}

/// Listed mnemonics for which no form was generated (a sign that iced's
/// table or the operand kinds changed under the generator).
pub fn uncovered(forms: &[Form]) -> Vec<Mnemonic> {
    let have: HashSet<Mnemonic> = forms.iter().map(|f| f.insn.mnemonic()).collect();
    let strings = [Mnemonic::Movsb, Mnemonic::Stosb, Mnemonic::Lodsb, Mnemonic::Cmpsb, Mnemonic::Scasb];
    INTEGER
        .iter()
        .chain(SETCC)
        .chain(CMOVCC)
        .chain(SSE)
        .chain(V2)
        .chain(AVX_ONLY)
        .chain(XSAVE)
        .chain(&strings)
        .copied()
        .filter(|m| !have.contains(m))
        .collect()
}

/// The form of raw instruction bytes (for the oracle's self-test).
pub fn from_bytes(bytes: &[u8], layout: &Layout) -> Form {
    let insn = decode(bytes, layout.insn).expect("the bytes decode to one instruction");
    let string = (0..insn.op_count()).any(|n| {
        matches!(
            insn.op_kind(n),
            OpKind::MemorySegRSI | OpKind::MemoryESRDI | OpKind::MemorySegESI | OpKind::MemoryESEDI
        )
    });
    Form { text: format_insn(&insn), code: format!("{:?}", insn.code()), bytes: bytes.to_vec(), insn, align: 1, string }
}

/// movs, stos, lods (with and without rep) and cmps, scas (with and
/// without repe and repne) at each element size, with 64-bit addresses
/// and, for a smaller set, with the 0x67 prefix (esi, edi, ecx).
fn string_forms(layout: &Layout) -> Vec<Form> {
    let mut forms = Vec::new();
    // (opcode for bytes, takes repe/repne)
    let ops = [(0xa4u8, false), (0xaa, false), (0xac, false), (0xa6, true), (0xae, true)];
    for addr32 in [false, true] {
        for (opcode, compares) in ops {
            for size in [1usize, 2, 4, 8] {
                let reps: &[Option<u8>] = match (compares, addr32) {
                    (true, false) => &[None, Some(0xf3), Some(0xf2)],
                    (false, false) => &[None, Some(0xf3)],
                    (true, true) => &[Some(0xf3), Some(0xf2)],
                    (false, true) => &[Some(0xf3)],
                };
                for rep in reps {
                    let mut bytes = Vec::new();
                    bytes.extend(rep);
                    if addr32 {
                        bytes.push(0x67);
                    }
                    if size == 2 {
                        bytes.push(0x66);
                    }
                    if size == 8 {
                        bytes.push(0x48);
                    }
                    bytes.push(if size == 1 { opcode } else { opcode + 1 });
                    forms.push(from_bytes(&bytes, layout));
                }
            }
        }
    }
    forms
}
