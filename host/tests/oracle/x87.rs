//! The oracle's x87 layer: the forms of every x87 instruction the lifter
//! implements (each encoding in iced's table, with st(1), st(3) and st(7)
//! for register operands and [rbx+disp8] for memory ones), random x87
//! states for them (TOP, tags, register values from interesting long
//! doubles, rounding mode, condition codes) and memory operands holding
//! interesting values of their format, and which x87 status bits the SDM
//! leaves undefined after each instruction.
//!
//! The native side loads and saves the x87 state with fxrstor/fxsave (see
//! `native`), so TOP, the tags, the status and control words and all
//! eight registers are compared. fnstenv, fldenv, fxsave and fxrstor are
//! not among the forms: their images hold instruction pointers the
//! runtime does not model (the real programs exercise them).

use iced_x86::{Code, Encoder, EncodingKind, Instruction, MemoryOperand, Mnemonic, OpCodeOperandKind as K, Register};

use crate::forms::{from_bytes, Form};
use crate::layout::Layout;
use crate::states::{effective_address, write_mem, Case, Rng};

/// The x87 mnemonics under test.
const X87: &[Mnemonic] = {
    use Mnemonic as M;
    &[
        M::Fld,
        M::Fild,
        M::Fst,
        M::Fstp,
        M::Fist,
        M::Fistp,
        M::Fisttp,
        M::Fld1,
        M::Fldl2t,
        M::Fldl2e,
        M::Fldpi,
        M::Fldlg2,
        M::Fldln2,
        M::Fldz,
        M::Fadd,
        M::Faddp,
        M::Fiadd,
        M::Fmul,
        M::Fmulp,
        M::Fimul,
        M::Fsub,
        M::Fsubp,
        M::Fisub,
        M::Fsubr,
        M::Fsubrp,
        M::Fisubr,
        M::Fdiv,
        M::Fdivp,
        M::Fidiv,
        M::Fdivr,
        M::Fdivrp,
        M::Fidivr,
        M::Fcom,
        M::Fcomp,
        M::Fcompp,
        M::Ficom,
        M::Ficomp,
        M::Fucom,
        M::Fucomp,
        M::Fucompp,
        M::Fcomi,
        M::Fcomip,
        M::Fucomi,
        M::Fucomip,
        M::Ftst,
        M::Fxam,
        M::Fchs,
        M::Fabs,
        M::Fsqrt,
        M::Frndint,
        M::Fscale,
        M::Fprem,
        M::Fprem1,
        M::Fxtract,
        M::Fxch,
        M::Ffree,
        M::Fincstp,
        M::Fdecstp,
        M::Fninit,
        M::Fnclex,
        M::Fnstsw,
        M::Fnstcw,
        M::Fcmovb,
        M::Fcmove,
        M::Fcmovbe,
        M::Fcmovu,
        M::Fcmovnb,
        M::Fcmovne,
        M::Fcmovnbe,
        M::Fcmovnu,
    ]
};

pub fn is_x87(m: Mnemonic) -> bool {
    X87.contains(&m)
}

/// Every form of the x87 mnemonics.
pub fn forms(layout: &Layout) -> Vec<Form> {
    let mut out = Vec::new();
    for code in Code::values() {
        let op = code.op_code();
        if op.encoding() != EncodingKind::Legacy || !op.mode64() || !op.is_instruction() || !is_x87(code.mnemonic()) {
            continue;
        }
        let kinds = op.op_kinds();
        for i in [1u32, 3, 7] {
            let mem = MemoryOperand::with_base_displ(Register::RBX, 0x10);
            let sti = Register::ST0 as u32 + i;
            let sti = Register::values().nth(sti as usize).expect("an x87 register");
            let insn = match kinds {
                [] => Ok(Instruction::with(code)),
                [K::mem] => Instruction::with1(code, mem),
                [K::sti_opcode] => Instruction::with1(code, sti),
                [K::st0, K::sti_opcode] => Instruction::with2(code, Register::ST0, sti),
                [K::sti_opcode, K::st0] => Instruction::with2(code, sti, Register::ST0),
                [K::ax] => Instruction::with1(code, Register::AX),
                _ => continue,
            };
            let Ok(insn) = insn else { continue };
            let mut enc = Encoder::new(64);
            let Ok(_) = enc.encode(&insn, layout.insn) else { continue };
            let form = from_bytes(&enc.take_buffer(), layout);
            if !out.iter().any(|f: &Form| f.bytes == form.bytes) {
                out.push(form);
            }
        }
    }
    out
}

/// A long double that is often special: zeros, ones, infinities, NaNs,
/// denormals, extremes, integers and halfway cases, or random.
fn f80(rng: &mut Rng) -> u128 {
    const SPECIAL: [u128; 18] = [
        0,
        0x3fff_8000_0000_0000_0000, // 1
        0x4000_c000_0000_0000_0000, // 3
        0x4000_a000_0000_0000_0000, // 2.5
        0x3ffe_8000_0000_0000_0000, // 0.5
        0x7fff_8000_0000_0000_0000, // inf
        0x7fff_c000_0000_0000_0000, // QNaN
        0x7fff_a000_0000_0000_1234, // SNaN
        0xffff_c000_0000_0000_0000, // indefinite
        0x0000_0000_0000_0000_0001, // smallest denormal
        0x0000_7fff_ffff_ffff_ffff, // largest denormal
        0x0001_8000_0000_0000_0000, // smallest normal
        0x7ffe_ffff_ffff_ffff_ffff, // largest
        0x403e_ffff_ffff_ffff_ffff, // 2^64 - 1
        0x401d_8000_0000_0000_0000, // 2^30
        0x3fff_ffff_ffff_ffff_ffff, // 2 - ulp
        0x4000_8000_0000_0000_0001, // 2 + ulp
        0x3fff_0000_0000_0000_0001, // an unnormal
    ];
    let sign = u128::from(rng.one_in(2)) << 79;
    match rng.below(8) {
        0..=2 => SPECIAL[rng.below(SPECIAL.len() as u64) as usize] | sign,
        3 => {
            // A small integer or half-integer.
            let v = rng.below(2000) as f64 / 2.0 - 500.0;
            from_f64(v)
        }
        4 => {
            // Anywhere in the exponent range.
            let e = u128::from(rng.below(0x7fff));
            sign | e << 64 | u128::from(rng.next() | 1 << 63)
        }
        _ => {
            // Near 1, so sums and differences cancel and round.
            let e = 0x3fff - 40 + u128::from(rng.below(80));
            sign | e << 64 | u128::from(rng.next() | 1 << 63)
        }
    }
}

/// `v` widened to extended (exact), through its bits.
fn from_f64(v: f64) -> u128 {
    let bits = v.to_bits();
    let sign = u128::from(bits >> 63) << 79;
    if v == 0.0 {
        return sign;
    }
    let e = (bits >> 52 & 0x7ff) as i64 - 1023 + 16383;
    let m = (bits & ((1 << 52) - 1) | 1 << 52) << 11;
    sign | (e as u128) << 64 | u128::from(m)
}

/// A random x87 state for an x87 form, and a value of the memory
/// operand's format at its address.
pub fn steer(form: &Form, layout: &Layout, rng: &mut Rng, case: &mut Case) {
    let insn = &form.insn;
    if !is_x87(insn.mnemonic()) {
        return;
    }
    let st = &mut case.state;
    // Any rounding mode; 64-bit precision mostly, else 53 or 24 bits.
    let pc = [3u16, 3, 2, 0][rng.below(4) as usize];
    st.fpcw = 0x007f | pc << 8 | (rng.below(4) as u16) << 10;
    let top = rng.below(8) as u16;
    let cc = (rng.next() as u16) & 0x4700;
    st.fpsw = top << 11 | cc | if rng.one_in(4) { rng.next() as u16 & 0x3f } else { 0 };
    // Mostly a stack with its first few entries valid.
    let depth = if rng.one_in(8) { rng.below(9) } else { 2 + rng.below(5) };
    st.fptag = 0;
    for i in 0..8u16 {
        let p = ((top + i) & 7) as usize;
        st.st[p] = f80(rng);
        if u64::from(i) < depth {
            st.fptag |= 1 << p;
        }
    }
    if form.accesses_memory() {
        let addr = effective_address(insn, &case.state);
        let size = insn.memory_size().size();
        let v = match insn.memory_size() {
            iced_x86::MemorySize::Float32 => u128::from(crate::states::f32_bits(rng)),
            iced_x86::MemorySize::Float64 => u128::from(crate::states::f64_bits(rng)),
            iced_x86::MemorySize::Float80 => f80(rng),
            _ => u128::from(crate::states::interesting_u64(rng)),
        };
        if size <= 16 && layout.in_buf(addr, size as u64) {
            write_mem(case, layout, addr, size, v);
        }
    }
}

/// The status word bits the SDM leaves undefined after `m` (C0, C2 and
/// C3 after everything but the comparisons, fxam and the remainders).
pub fn undefined_fpsw(m: Mnemonic) -> u16 {
    use Mnemonic as M;
    match m {
        M::Fcom | M::Fcomp | M::Fcompp | M::Ficom | M::Ficomp | M::Fucom | M::Fucomp | M::Fucompp | M::Ftst => 0,
        M::Fxam | M::Fprem | M::Fprem1 => 0,
        M::Fnstsw | M::Fnstcw | M::Fninit | M::Fnclex => 0,
        _ => 0x4500,
    }
}
