//! The lifter's dispatch: which method lifts which mnemonic. Anything not
//! listed here (or refused by its method) is unsupported and raises SIGILL.

use aarchx_ir::cond::Helper;
use aarchx_ir::{Builder, Reg, TrapKind, Value};
use aarchx_pass::CpuLevel;
use iced_x86::{ConditionCode, CpuidFeature, Instruction, Mnemonic, OpKind};

use super::operand::{Vex, L};
use super::string::StrOp;

/// What lifting one instruction did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Lifted; the region may continue with the next instruction.
    Next,
    /// Lifted up to its transfer to a direct target (a `jmp`): the decode
    /// pass continues there or ends the region with an exit to it.
    Jump(u64),
    /// Lifted up to the transfer of a direct `call` (the return address
    /// pushed): the decode pass continues at `target` or exits to it.
    Call { target: u64, ret: u64 },
    /// Lifted up to the transfer of a `ret` to the popped address: the
    /// decode pass ends the region with an indirect exit to it, or checks
    /// it against the return address of a call it followed.
    Ret(Value),
    /// Lifted up to a conditional branch: the block leaves for the taken
    /// target when the condition holds, and the builder is in the block
    /// of the fall-through, where the decode pass continues or exits to
    /// the next instruction.
    Branch,
    /// Lifted, and it ended the region (a branch, syscall or trap).
    End,
    /// Not implemented: the region ends with SIGILL at this instruction.
    Unsupported,
}

/// The lowest x86-64 level whose CPUs have the instruction: from the CPUID
/// features the decoder names for its encoding (an encoding fact, like its
/// length; what it reads and writes is the lifted IR's). Features of no
/// level here are baseline ones or never lifted.
fn level_of(i: &Instruction) -> CpuLevel {
    use CpuidFeature as F;
    let feature_level = |f: &CpuidFeature| match f {
        // V2 has AES-NI and PCLMULQDQ too, as the CPUs of that level
        // (Westmere on) do; see `host/src/cpuid.rs`.
        F::SSE3 | F::SSSE3 | F::SSE4_1 | F::SSE4_2 | F::POPCNT | F::CMPXCHG16B | F::AES | F::PCLMULQDQ => CpuLevel::V2,
        F::AVX | F::AVX2 | F::FMA | F::F16C | F::BMI1 | F::BMI2 | F::LZCNT | F::MOVBE | F::XSAVE => CpuLevel::V3,
        _ => CpuLevel::V1,
    };
    i.cpuid_features().iter().map(feature_level).max().unwrap_or(CpuLevel::V1)
}

/// Lifts one decoded instruction into the builder's current block, for a
/// CPU of `level`: an instruction above it is unsupported (SIGILL), but
/// tzcnt and lzcnt, which a CPU without BMI1 or LZCNT runs as bsf and bsr
/// (it ignores their 0xf3 prefix).
pub fn lift(b: &mut Builder<'_>, i: &Instruction, level: CpuLevel) -> Outcome {
    let mut l = L { b, i, vex: Vex::default() };
    use Mnemonic as M;
    let m = i.mnemonic();
    if level_of(i) > level {
        return match m {
            M::Tzcnt => l.bit_scan(M::Bsf),
            M::Lzcnt => l.bit_scan(M::Bsr),
            _ => Outcome::Unsupported,
        };
    }
    let kinds = || (0..i.op_count()).map(|n| i.op_kind(n));
    if kinds().any(|k| matches!(k, OpKind::MemoryESEDI | OpKind::MemorySegESI | OpKind::MemorySegEDI)) {
        // String operations with 32-bit addresses (0x67 prefix).
        return Outcome::Unsupported;
    }
    if kinds().any(|k| matches!(k, OpKind::MemoryESRDI | OpKind::MemorySegRSI)) {
        return match m {
            M::Movsb | M::Movsw | M::Movsd | M::Movsq => l.string(StrOp::Movs),
            M::Stosb | M::Stosw | M::Stosd | M::Stosq => l.string(StrOp::Stos),
            M::Lodsb | M::Lodsw | M::Lodsd | M::Lodsq => l.string(StrOp::Lods),
            M::Cmpsb | M::Cmpsw | M::Cmpsd | M::Cmpsq => l.string(StrOp::Cmps),
            M::Scasb | M::Scasw | M::Scasd | M::Scasq => l.string(StrOp::Scas),
            _ => Outcome::Unsupported,
        };
    }
    match m {
        M::Nop
        | M::Endbr64
        | M::Pause
        | M::Lfence
        | M::Sfence
        | M::Mfence
        | M::Prefetchnta
        | M::Prefetcht0
        | M::Prefetcht1
        | M::Prefetcht2
        | M::Prefetchw => Outcome::Next,
        M::Mov if i.op_count() == 2 && is_gpr_or_mem(i) => l.mov(),
        M::Movzx => l.extend(false),
        M::Movsx | M::Movsxd => l.extend(true),
        M::Lea => l.lea(),
        M::Add | M::Adc | M::Sub | M::Sbb | M::Cmp | M::And | M::Or | M::Xor | M::Test => l.alu2(m),
        M::Inc | M::Dec | M::Neg | M::Not => l.alu1(m),
        M::Shl | M::Sal | M::Shr | M::Sar | M::Rol | M::Ror => l.shift(m),
        M::Rcl => l.rotate_through_carry(true),
        M::Rcr => l.rotate_through_carry(false),
        M::Shld => l.shift_double(true),
        M::Shrd => l.shift_double(false),
        M::Xchg => l.xchg(),
        M::Xadd => l.xadd(),
        M::Cmpxchg => l.cmpxchg(),
        M::Cmpxchg16b => l.cmpxchg16b(),
        M::Crc32 => l.crc32(),
        M::Andn
        | M::Bextr
        | M::Blsi
        | M::Blsmsk
        | M::Blsr
        | M::Bzhi
        | M::Mulx
        | M::Pdep
        | M::Pext
        | M::Rorx
        | M::Sarx
        | M::Shlx
        | M::Shrx
        | M::Movbe => l.bmi(m),
        M::Bswap => l.bswap(),
        M::Bt | M::Bts | M::Btr | M::Btc => l.bit_test(m),
        M::Bsf | M::Bsr | M::Tzcnt | M::Lzcnt | M::Popcnt => l.bit_scan(m),
        M::Cbw | M::Cwde | M::Cdqe | M::Cwd | M::Cdq | M::Cqo => l.sign_extend_acc(m),
        M::Mul => l.mul1(false),
        M::Imul if i.op_count() == 1 => l.mul1(true),
        M::Imul => l.imul_n(),
        M::Div => l.div(false),
        M::Idiv => l.div(true),
        M::Jmp => l.jmp(),
        M::Call => l.call(),
        M::Ret => l.ret(),
        M::Loop => l.loop_(ConditionCode::None),
        M::Loope => l.loop_(ConditionCode::e),
        M::Loopne => l.loop_(ConditionCode::ne),
        M::Jrcxz | M::Jecxz => l.jrcxz(),
        _ if i.condition_code() != ConditionCode::None && is_jcc(m) => l.jcc(),
        _ if is_setcc(m) => l.setcc(),
        _ if is_cmovcc(m) => l.cmovcc(),
        M::Push => l.push_op(),
        M::Pop => l.pop_op(),
        M::Leave => l.leave(),
        M::Pushfq => l.pushf(),
        M::Popfq => l.popf(),
        M::Lahf => l.lahf(),
        M::Sahf => l.sahf(),
        M::Clc | M::Stc | M::Cmc | M::Cld | M::Std => l.flag_op(m),
        M::Syscall => l.syscall(),
        M::Cpuid => l.helper(Helper::Cpuid),
        M::Rdtsc => l.helper(Helper::Rdtsc),
        M::Ud0 | M::Ud1 | M::Ud2 => l.trap(TrapKind::Ill),
        M::Int3 => l.trap(TrapKind::Breakpoint),
        M::Hlt => l.trap(TrapKind::Privileged),
        M::Stmxcsr => l.store_control(Reg::MXCSR),
        M::Ldmxcsr => l.load_control(Reg::MXCSR),
        M::Fnstcw | M::Fstcw => l.store_control(Reg::FPCW),
        M::Fldcw => l.load_control(Reg::FPCW),
        M::Fxsave | M::Fxsave64 => l.fxsave(),
        M::Fxrstor | M::Fxrstor64 => l.fxrstor(),
        M::Xsave | M::Xsave64 => l.xsave(),
        M::Xrstor | M::Xrstor64 => l.xrstor(),
        M::Xgetbv => l.xgetbv(),
        _ => l.x87(m).unwrap_or_else(|| l.sse(m)),
    }
}

/// `mov` between GPRs, memory and immediates (not segment or control registers).
fn is_gpr_or_mem(i: &Instruction) -> bool {
    (0..2).all(|n| match i.op_kind(n) {
        OpKind::Register => i.op_register(n).is_gpr(),
        _ => true,
    })
}

fn is_jcc(m: Mnemonic) -> bool {
    use Mnemonic as M;
    matches!(
        m,
        M::Jo
            | M::Jno
            | M::Jb
            | M::Jae
            | M::Je
            | M::Jne
            | M::Jbe
            | M::Ja
            | M::Js
            | M::Jns
            | M::Jp
            | M::Jnp
            | M::Jl
            | M::Jge
            | M::Jle
            | M::Jg
    )
}

fn is_setcc(m: Mnemonic) -> bool {
    use Mnemonic as M;
    matches!(
        m,
        M::Seto
            | M::Setno
            | M::Setb
            | M::Setae
            | M::Sete
            | M::Setne
            | M::Setbe
            | M::Seta
            | M::Sets
            | M::Setns
            | M::Setp
            | M::Setnp
            | M::Setl
            | M::Setge
            | M::Setle
            | M::Setg
    )
}

fn is_cmovcc(m: Mnemonic) -> bool {
    use Mnemonic as M;
    matches!(
        m,
        M::Cmovo
            | M::Cmovno
            | M::Cmovb
            | M::Cmovae
            | M::Cmove
            | M::Cmovne
            | M::Cmovbe
            | M::Cmova
            | M::Cmovs
            | M::Cmovns
            | M::Cmovp
            | M::Cmovnp
            | M::Cmovl
            | M::Cmovge
            | M::Cmovle
            | M::Cmovg
    )
}
