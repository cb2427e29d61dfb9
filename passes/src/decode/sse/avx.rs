//! AVX and AVX2: the VEX encodings. A VEX form of an SSE instruction (iced
//! names it `V` + the SSE name: vpaddd, vaddps, vmovdqu) is lifted by that
//! instruction's own code in this module's siblings, through [`Vex`], the
//! view of its operands: a second source (vvvv) moves the legacy operands
//! by one ([`L::src_op`]); a 256-bit form runs the code once per 128-bit
//! half, the YMM registers' upper halves being the `ymmh` registers; every
//! XMM register a VEX form writes has its upper half zeroed; and all the
//! writes land after both halves are computed, so the upper half reads
//! the sources as they were. The instructions with no SSE counterpart
//! (broadcasts, 128-bit lane moves, cross-lane permutes, per-element
//! shifts, masked moves, gathers, vzeroupper) are lifted here, FMA3 in
//! [`fma`].

use aarchx_ir::{IntCond, Opcode, Reg, TrapKind, Type, Value};
use iced_x86::{CpuidFeature, Mnemonic, OpCodeOperandKind, OpKind};

use super::super::lift::Outcome;
use super::super::operand::{vec_num, L};
use super::{fma, shape};

/// How the SSE code sees a VEX instruction's operands: the view's state
/// while one instruction is lifted.
#[derive(Default)]
pub struct Vex {
    /// VEX-encoded: XMM writes zero the upper half.
    encoded: bool,
    /// A second source operand (vvvv) sits before the legacy source.
    pub(super) nds: bool,
    /// The half being lifted (1: the upper 128 bits).
    pub(super) half: u8,
    /// The upper half reads imm8 shifted right by this many bits (the
    /// blends and shufpd give each lane its own selector bits).
    imm_shift: u8,
    /// A widening form: the upper half reads its XMM or narrower source
    /// this many bytes further on.
    pub(super) widen: u16,
    /// A narrowing form (256-bit source, XMM result): the upper half's
    /// result lands in the destination's upper 64 bits.
    narrow: bool,
    /// The writes of this instruction: slot, value, and whether the slot
    /// is an XMM register written as one (its upper half then zeroed).
    writes: Vec<(Reg, Value, bool)>,
    /// An MMX form (see [`super::mmx`]): mm registers are operands of 64
    /// bits, read into both halves of a 128-bit vector.
    pub(super) mmx: bool,
    /// What legacy operands 0 and 1 read instead of the operands
    /// themselves: an MMX form's operands arranged for its 128-bit form.
    pub(super) reads: Option<[Value; 2]>,
}

impl Vex {
    /// The slot of vector register `n` for the current half.
    pub(super) fn slot(&self, n: u8) -> Reg {
        if self.half == 0 {
            Reg::xmm(n)
        } else {
            Reg::ymm_hi(n)
        }
    }

    /// An imm8 as the current half reads it.
    pub(super) fn imm(&self, imm: u8) -> u16 {
        u16::from(imm >> (self.half * self.imm_shift))
    }
}

/// The SSE instruction whose VEX form `m` is (vpaddd: paddd), if any.
fn legacy(m: Mnemonic) -> Option<Mnemonic> {
    use std::sync::OnceLock;
    static TABLE: OnceLock<rustc_hash::FxHashMap<Mnemonic, Mnemonic>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let by_name: rustc_hash::FxHashMap<String, Mnemonic> =
            Mnemonic::values().map(|m| (format!("{m:?}"), m)).collect();
        Mnemonic::values()
            .filter_map(|v| {
                let name = format!("{v:?}");
                let rest = name.strip_prefix('V')?;
                let mut chars = rest.chars();
                let first = chars.next()?.to_ascii_uppercase();
                by_name.get(&format!("{first}{}", chars.as_str())).map(|&m| (v, m))
            })
            .collect()
    });
    table.get(&m).copied()
}

/// How a 256-bit form of an SSE instruction splits into halves: the imm8
/// shift of its upper half, its widening step in bytes, and whether it
/// narrows. `None` for one whose halves are not independent (handled in
/// [`L::avx`] itself).
fn halves(m: Mnemonic) -> Option<(u8, u16, bool)> {
    use Mnemonic as M;
    Some(match m {
        M::Blendps => (4, 0, false),
        M::Blendpd | M::Shufpd => (2, 0, false),
        M::Mpsadbw => (3, 0, false),
        M::Cvtdq2pd
        | M::Cvtps2pd
        | M::Pmovzxbw
        | M::Pmovsxbw
        | M::Pmovzxwd
        | M::Pmovsxwd
        | M::Pmovzxdq
        | M::Pmovsxdq => (0, 8, false),
        M::Pmovzxbd | M::Pmovsxbd | M::Pmovzxwq | M::Pmovsxwq => (0, 4, false),
        M::Pmovzxbq | M::Pmovsxbq => (0, 2, false),
        M::Cvtpd2ps | M::Cvttpd2dq | M::Cvtpd2dq => (0, 0, true),
        M::Pmovmskb | M::Movmskps | M::Movmskpd | M::Ptest => return None,
        _ => (0, 0, false),
    })
}

impl L<'_, '_> {
    /// Lifts a VEX-encoded vector instruction of AVX, AVX2, FMA3 or F16C
    /// (with AES-NI and pclmulqdq, their 128-bit VEX forms); anything else,
    /// such as the 256-bit VAES forms, is unsupported.
    pub(super) fn avx(&mut self, m: Mnemonic) -> Outcome {
        use CpuidFeature as F;
        use Mnemonic as M;
        use Type as T;
        let known = |f: &CpuidFeature| matches!(f, F::AVX | F::AVX2 | F::FMA | F::AES | F::PCLMULQDQ | F::F16C);
        if !self.i.cpuid_features().iter().all(known) || !self.xoperands_ok() {
            return Outcome::Unsupported;
        }
        let code = self.i.op_code();
        let nds = (0..code.op_count())
            .any(|k| matches!(code.op_kind(k), OpCodeOperandKind::xmm_vvvv | OpCodeOperandKind::ymm_vvvv));
        self.vex = Vex { encoded: true, nds, ..Vex::default() };
        let wide = self.is_wide();
        let out = match m {
            M::Vzeroupper => self.vzero(false),
            M::Vzeroall => self.vzero(true),
            M::Vldmxcsr => return self.load_control(Reg::MXCSR),
            M::Vstmxcsr => return self.store_control(Reg::MXCSR),
            M::Vbroadcastss | M::Vpbroadcastd => self.vbroadcast(T::I32),
            M::Vbroadcastsd | M::Vpbroadcastq => self.vbroadcast(T::I64),
            M::Vpbroadcastb => self.vbroadcast(T::I8),
            M::Vpbroadcastw => self.vbroadcast(T::I16),
            M::Vbroadcastf128 | M::Vbroadcasti128 => self.vbroadcast(T::I128),
            M::Vinsertf128 | M::Vinserti128 => self.vinsert128(),
            M::Vextractf128 | M::Vextracti128 => self.vextract128(),
            M::Vperm2f128 | M::Vperm2i128 => self.vperm2x128(),
            M::Vpermq | M::Vpermpd => self.vpermq(),
            M::Vpermd | M::Vpermps => self.vpermd(),
            M::Vpermilps if self.ximm8().is_some() => self.vlanes(M::Pshufd),
            M::Vpermilpd if self.ximm8().is_some() => {
                self.vex.imm_shift = 2;
                self.vlanes_with(|l| l.vpermilpd_imm())
            }
            M::Vpermilps => self.vlanes_with(|l| l.vpermil_var(T::I32)),
            M::Vpermilpd => self.vlanes_with(|l| l.vpermil_var(T::I64)),
            M::Vpblendd => {
                self.vex.imm_shift = 4;
                self.vlanes_with(|l| {
                    l.xblend_imm(32);
                    Outcome::Next
                })
            }
            M::Vpsllvd => self.vlanes_with(|l| l.vshift_var(Opcode::Shl, T::I32)),
            M::Vpsllvq => self.vlanes_with(|l| l.vshift_var(Opcode::Shl, T::I64)),
            M::Vpsrlvd => self.vlanes_with(|l| l.vshift_var(Opcode::Lshr, T::I32)),
            M::Vpsrlvq => self.vlanes_with(|l| l.vshift_var(Opcode::Lshr, T::I64)),
            M::Vpsravd => self.vlanes_with(|l| l.vshift_var(Opcode::Ashr, T::I32)),
            M::Vptest => self.vtest(None),
            M::Vtestps => self.vtest(Some(T::I32)),
            M::Vtestpd => self.vtest(Some(T::I64)),
            M::Vmaskmovps | M::Vpmaskmovd => self.vmaskmov(T::I32),
            M::Vmaskmovpd | M::Vpmaskmovq => self.vmaskmov(T::I64),
            M::Vgatherdps | M::Vpgatherdd => self.vgather(T::I32, T::I32),
            M::Vgatherdpd | M::Vpgatherdq => self.vgather(T::I64, T::I32),
            M::Vgatherqps | M::Vpgatherqd => self.vgather(T::I32, T::I64),
            M::Vgatherqpd | M::Vpgatherqq => self.vgather(T::I64, T::I64),
            M::Vcvtph2ps => self.vcvtph2ps(),
            M::Vcvtps2ph => self.vcvtps2ph(),
            M::Vpmovmskb if wide => self.vmovmsk(T::I8X16),
            M::Vmovmskps if wide => self.vmovmsk(T::I32X4),
            M::Vmovmskpd if wide => self.vmovmsk(T::I64X2),
            _ => match (fma::form(m), legacy(m)) {
                (Some(f), _) => self.fma(f),
                (None, Some(l)) => self.vlanes(l),
                (None, None) => Outcome::Unsupported,
            },
        };
        if out == Outcome::Next {
            for (slot, v, zero_upper) in std::mem::take(&mut self.vex.writes) {
                self.b.set(slot, v);
                if let Some(n) = slot.as_xmm().filter(|_| zero_upper) {
                    let zero = self.xconst(0);
                    self.b.set(Reg::ymm_hi(n as u8), zero);
                }
            }
        }
        out
    }

    /// Whether the instruction works on 256 bits (a YMM or m256 operand).
    pub(super) fn is_wide(&self) -> bool {
        (0..self.i.op_count()).any(|k| match self.i.op_kind(k) {
            OpKind::Register => self.i.op_register(k).is_ymm(),
            OpKind::Memory => self.i.memory_size().size() == 32,
            _ => false,
        })
    }

    /// The SSE instruction `legacy` through the VEX view, per half when
    /// the form is 256 bits wide.
    fn vlanes(&mut self, legacy: Mnemonic) -> Outcome {
        if self.is_wide() {
            let Some((imm_shift, widen, narrow)) = halves(legacy) else { return Outcome::Unsupported };
            self.vex.imm_shift = imm_shift;
            self.vex.widen = widen;
            self.vex.narrow = narrow;
        }
        self.vlanes_with(|l| l.xlift(legacy))
    }

    /// Runs `lift` once, or once per half of a 256-bit form.
    pub(super) fn vlanes_with(&mut self, mut lift: impl FnMut(&mut Self) -> Outcome) -> Outcome {
        let halves = if self.is_wide() { 2 } else { 1 };
        for half in 0..halves {
            self.vex.half = half;
            let out = lift(self);
            if out != Outcome::Next {
                return out;
            }
        }
        self.vex.half = 0;
        Outcome::Next
    }

    /// The address of the instruction's memory operand of `size` bytes,
    /// for the current half (the upper half of m256 is 16 bytes on).
    pub(super) fn vex_addr(&mut self, size: usize) -> Value {
        let a = self.addr();
        if size == 32 && self.vex.half == 1 {
            let sixteen = self.c(Type::I64, 16);
            return self.bin(Opcode::Add, Type::I64, a, sixteen);
        }
        a
    }

    /// A widening form's XMM or narrower source `v` as the current half
    /// reads it (the upper half: the bytes after the lower half's).
    pub(super) fn xwiden_half(&mut self, v: Value) -> Value {
        if self.vex.half == 1 && self.vex.widen > 0 {
            return self.b.unary_imm(Opcode::ByteShr, Type::V128, v, self.vex.widen);
        }
        v
    }

    /// Writes XMM register `n` as an XMM destination: directly for an SSE
    /// instruction, else once the instruction is lifted, the upper half
    /// then zeroed (a narrowing form's upper half fills its high 64 bits).
    pub(super) fn xset_xmm(&mut self, n: u8, v: Value) {
        let slot = Reg::xmm(n);
        if !self.vex.encoded {
            self.b.set(slot, v);
            return;
        }
        if self.vex.narrow && self.vex.half == 1 {
            let low = self.vex.writes.iter().rposition(|w| w.0 == slot).map(|i| self.vex.writes.remove(i).1);
            let high = self.b.unary_imm(Opcode::ByteShl, Type::V128, v, 8);
            let v = match low {
                Some(low) => self.bin(Opcode::Or, Type::V128, low, high),
                None => high,
            };
            self.vex.writes.push((slot, v, true));
            return;
        }
        self.vex.writes.push((slot, v, true));
    }

    /// Records the write of `v` to `slot`, a YMM register's half.
    pub(super) fn vdefer(&mut self, slot: Reg, v: Value) {
        self.vex.writes.push((slot, v, false));
    }

    /// The selector of pblendvb/blendvps/blendvpd: xmm0, or the VEX form's
    /// fourth operand (in the current half).
    pub(super) fn xblend_selector(&mut self) -> Value {
        if self.vex.encoded {
            self.vget(3)
        } else {
            self.b.get(Reg::xmm(0))
        }
    }

    /// vzeroupper (`all`: vzeroall): the upper halves of every YMM
    /// register (and with `all` the lower ones) zeroed.
    fn vzero(&mut self, all: bool) -> Outcome {
        let zero = self.xconst(0);
        for n in 0..16 {
            self.b.set(Reg::ymm_hi(n), zero);
            if all {
                self.b.set(Reg::xmm(n), zero);
            }
        }
        Outcome::Next
    }

    /// vbroadcastss/sd/f128, vpbroadcastb/w/d/q, vbroadcasti128: the low
    /// element (of `ty`, i128: the 128 bits) of an XMM register or memory
    /// in every element of the destination.
    fn vbroadcast(&mut self, ty: Type) -> Outcome {
        let v = if ty == Type::I128 {
            self.vget(1)
        } else {
            let x = self.xlow(1, ty);
            self.un(Opcode::Splat, shape(ty), x)
        };
        self.vlanes_with(|l| {
            l.xset(0, v);
            Outcome::Next
        })
    }

    /// vinsertf128/vinserti128 ymm1, ymm2, xmm3/m128, imm8: ymm2 with the
    /// half imm[0] replaced by the 128-bit source.
    fn vinsert128(&mut self) -> Outcome {
        let at = self.ximm8().unwrap_or(0) & 1;
        self.vlanes_with(|l| {
            let v = if u16::from(l.vex.half) == at { l.vget(2) } else { l.vget(1) };
            l.xset(0, v);
            Outcome::Next
        })
    }

    /// vextractf128/vextracti128 xmm1/m128, ymm2, imm8: half imm[0] of ymm2.
    fn vextract128(&mut self) -> Outcome {
        self.vex.half = (self.ximm8().unwrap_or(0) & 1) as u8;
        let v = self.vget(1);
        self.vex.half = 0;
        self.xset(0, v);
        Outcome::Next
    }

    /// vperm2f128/vperm2i128 ymm1, ymm2, ymm3/m256, imm8: each half of
    /// the result is the half of ymm2:ymm3 its imm nibble selects (bits
    /// 1:0), or zero (bit 3).
    fn vperm2x128(&mut self) -> Outcome {
        let imm = self.ximm8().unwrap_or(0);
        let mut picked = [None; 2];
        for (h, p) in picked.iter_mut().enumerate() {
            let sel = imm >> (4 * h);
            if sel & 8 == 0 {
                self.vex.half = (sel & 1) as u8;
                *p = Some(self.vget(if sel & 2 == 0 { 1 } else { 2 }));
            }
        }
        self.vlanes_with(|l| {
            let v = match picked[usize::from(l.vex.half)] {
                Some(v) => v,
                None => l.xconst(0),
            };
            l.xset(0, v);
            Outcome::Next
        })
    }

    /// The eight 32-bit (`lane` i32) or four 64-bit elements of the 256-bit
    /// operand `k`, as the two halves' vectors.
    fn vboth(&mut self, k: u32) -> [Value; 2] {
        let mut out = [Value(0); 2];
        for (h, v) in out.iter_mut().enumerate() {
            self.vex.half = h as u8;
            *v = self.vget(k);
        }
        self.vex.half = 0;
        out
    }

    /// vpermq/vpermpd ymm1, ymm2/m256, imm8: qword i of the result is
    /// qword imm[2i+1:2i] of the source.
    fn vpermq(&mut self) -> Outcome {
        let imm = self.ximm8().unwrap_or(0);
        let src = self.vboth(1);
        let q: Vec<Value> = (0..4).map(|i| self.xlane(src[i / 2], Type::I64, (i % 2) as u16)).collect();
        self.vlanes_with(|l| {
            let h = u16::from(l.vex.half);
            let pick = |i: u16| q[usize::from(imm >> (2 * (2 * h + i)) & 3)];
            let v = l.un(Opcode::Splat, Type::I64X2, pick(0));
            let v = l.xset_lane(v, pick(1), 1);
            l.xset(0, v);
            Outcome::Next
        })
    }

    /// The pshufb indices that pick, in each `lane`-sized element, the
    /// bytes of element `sel` (already masked to the 128-bit half) of
    /// the table.
    fn xelement_bytes(&mut self, lane: Type, sel: Value) -> Value {
        let bytes = lane.bits() / 8;
        let first = self.xshift_by(Opcode::Shl, shape(lane), sel, bytes.trailing_zeros());
        // Each element's first byte index copied to all its bytes, plus 0, 1, ...
        let spread: u128 = (0..16).map(|b| u128::from(b / bytes * bytes) << (8 * b)).sum();
        let offsets: u128 = (0..16).map(|b| u128::from(b % bytes) << (8 * b)).sum();
        let spread = self.xconst(spread);
        let offsets = self.xconst(offsets);
        let firsts = self.bin(Opcode::ShuffleBytes, Type::I8X16, first, spread);
        self.bin(Opcode::Add, Type::I8X16, firsts, offsets)
    }

    /// vpermd/vpermps ymm1, ymm2, ymm3/m256: dword i of the result is
    /// dword ymm2[i] & 7 of ymm3.
    fn vpermd(&mut self) -> Outcome {
        let table = self.vboth(2);
        self.vlanes_with(|l| {
            let idx = l.vget(1);
            let three = l.xsplat(Type::I32X4, 3);
            let within = l.bin(Opcode::And, Type::V128, idx, three);
            let bytes = l.xelement_bytes(Type::I32, within);
            let lo = l.bin(Opcode::ShuffleBytes, Type::I8X16, table[0], bytes);
            let hi = l.bin(Opcode::ShuffleBytes, Type::I8X16, table[1], bytes);
            let four = l.xsplat(Type::I32X4, 4);
            let upper = l.bin(Opcode::And, Type::V128, idx, four);
            let zero = l.xsplat(Type::I32X4, 0);
            let from_hi = l.icmp(IntCond::Ne, Type::I32X4, upper, zero);
            let v = l.xblend(lo, hi, from_hi);
            l.xset(0, v);
            Outcome::Next
        })
    }

    /// vpermilpd with imm8: qword i of each half is the half's qword imm[i]
    /// (the upper half reads imm bits 3:2).
    fn vpermilpd_imm(&mut self) -> Outcome {
        let imm = self.ximm8().unwrap_or(0);
        let s = self.xget(1);
        let pick = |i: u16| {
            let dwords: u16 = if imm >> i & 1 == 0 { 0x4 } else { 0xe };
            dwords << (4 * i)
        };
        let r = self.b.unary_imm(Opcode::Shuffle, Type::I32X4, s, pick(0) | pick(1));
        self.xset(0, r);
        Outcome::Next
    }

    /// vpermilps/vpermilpd with a selector vector: element i of each half
    /// is the half's element sel[i] (bits 1:0 of a dword; bit 1 of a qword).
    fn vpermil_var(&mut self, lane: Type) -> Outcome {
        let (table, sel) = self.xpair();
        let within = if lane == Type::I32 {
            let three = self.xsplat(Type::I32X4, 3);
            self.bin(Opcode::And, Type::V128, sel, three)
        } else {
            let down = self.xshift_by(Opcode::Lshr, Type::I64X2, sel, 1);
            let one = self.xsplat(Type::I64X2, 1);
            self.bin(Opcode::And, Type::V128, down, one)
        };
        let bytes = self.xelement_bytes(lane, within);
        let r = self.bin(Opcode::ShuffleBytes, Type::I8X16, table, bytes);
        self.xset(0, r);
        Outcome::Next
    }

    /// vpsllv/vpsrlv/vpsrav: each element shifted by the unsigned count in
    /// the same element of the second source; a count of the width or more
    /// gives zero (arithmetic: the sign).
    fn vshift_var(&mut self, op: Opcode, lane: Type) -> Outcome {
        let (a, counts) = self.xpair();
        let r = self.bin(op, shape(lane), a, counts);
        self.xset(0, r);
        Outcome::Next
    }

    /// ptest (`signs` None) and vtestps/vtestpd (`signs` the element type:
    /// only the sign bits count), over 128 or 256 bits: ZF when dst & src
    /// is zero, CF when !dst & src is; OF, SF, AF, PF cleared.
    pub(super) fn vtest(&mut self, signs: Option<Type>) -> Outcome {
        let mut both = None;
        let mut src_only = None;
        let halves = if self.is_wide() { 2 } else { 1 };
        for h in 0..halves {
            self.vex.half = h;
            let (a, b) = self.xpair();
            let mut x = self.bin(Opcode::And, Type::V128, a, b);
            let mut y = self.bin(Opcode::AndNot, Type::V128, b, a);
            if let Some(lane) = signs {
                let sign = self.xsplat(shape(lane), 1 << (lane.bits() - 1));
                x = self.bin(Opcode::And, Type::V128, x, sign);
                y = self.bin(Opcode::And, Type::V128, y, sign);
            }
            both = Some(both.map_or(x, |p| self.bin(Opcode::Or, Type::V128, p, x)));
            src_only = Some(src_only.map_or(y, |p| self.bin(Opcode::Or, Type::V128, p, y)));
        }
        self.vex.half = 0;
        let zf = self.xis_zero(both.expect("a half"));
        let cf = self.xis_zero(src_only.expect("a half"));
        self.b.set(Reg::ZF, zf);
        self.b.set(Reg::CF, cf);
        let clear = self.c(Type::I1, 0);
        for f in [Reg::OF, Reg::SF, Reg::AF, Reg::PF] {
            self.b.set(f, clear);
        }
        Outcome::Next
    }

    /// vpmovmskb, vmovmskps, vmovmskpd of a YMM register: the sign bits of
    /// both halves' `ty` lanes, the upper half's above the lower's.
    fn vmovmsk(&mut self, ty: Type) -> Outcome {
        let [lo, hi] = self.vboth(1);
        let lo = self.un(Opcode::Movmsk, ty, lo);
        let hi = self.un(Opcode::Movmsk, ty, hi);
        let lanes = self.c(Type::I8, u64::from(ty.lanes()));
        let hi = self.bin(Opcode::Shl, Type::I32, hi, lanes);
        let m = self.bin(Opcode::Or, Type::I32, lo, hi);
        let r = self.resize(m, Type::I32, self.op_type(0));
        self.write(0, r);
        Outcome::Next
    }

    /// Whether the sign bit of element `e` (of `lane` type, counted over
    /// both halves) of vector register `reg` is set, as an i1.
    fn velement_sign(&mut self, reg: iced_x86::Register, lane: Type, e: u16) -> Value {
        let (slot, k) = self.velement_slot(reg, lane, e);
        let v = self.b.get(slot);
        let x = self.xlane(v, lane, k);
        let zero = self.c(lane, 0);
        self.icmp(IntCond::Slt, lane, x, zero)
    }

    /// The slot (XMM register or YMM upper half) and lane within it of
    /// element `e` of `lane` type of vector register `reg`.
    fn velement_slot(&self, reg: iced_x86::Register, lane: Type, e: u16) -> (Reg, u16) {
        let per_half = (128 / lane.bits()) as u16;
        let n = vec_num(reg);
        let slot = if e < per_half { Reg::xmm(n) } else { Reg::ymm_hi(n) };
        (slot, e % per_half)
    }

    /// Element `e` of vector register `reg` replaced by `x` (of `lane` type).
    fn vset_element(&mut self, reg: iced_x86::Register, lane: Type, e: u16, x: Value) {
        let (slot, k) = self.velement_slot(reg, lane, e);
        let v = self.b.get(slot);
        let v = self.xset_lane(v, x, k);
        self.b.set(slot, v);
    }

    /// The upper half of YMM register `reg` zeroed when it was written as
    /// an XMM register (a VEX.128 form).
    fn vzero_upper_of(&mut self, reg: iced_x86::Register) {
        if reg.is_xmm() {
            let zero = self.xconst(0);
            self.b.set(Reg::ymm_hi(vec_num(reg)), zero);
        }
    }

    /// vmaskmovps/pd, vpmaskmovd/q: the elements (of `lane`) whose mask
    /// element (the vvvv operand) has its sign bit set are loaded, the
    /// others zero, or stored, the others left in memory; an element left
    /// out is never accessed, so it cannot fault. A fault part way leaves
    /// the destination register with the elements loaded before it (the
    /// CPU leaves it unchanged).
    fn vmaskmov(&mut self, lane: Type) -> Outcome {
        let load = self.i.op_kind(0) == OpKind::Register;
        let (reg, mask) = (self.i.op_register(if load { 0 } else { 2 }), self.i.op_register(1));
        let elements = (reg.size() * 8 / lane.bits() as usize) as u16;
        let conds: Vec<Value> = (0..elements).map(|e| self.velement_sign(mask, lane, e)).collect();
        let base = self.addr();
        let bytes = u64::from(lane.bits() / 8);
        if load {
            let zero = self.xconst(0);
            self.b.set(Reg::xmm(vec_num(reg)), zero);
            if reg.is_ymm() {
                self.b.set(Reg::ymm_hi(vec_num(reg)), zero);
            }
        }
        for (e, cond) in (0..elements).zip(conds) {
            let data = (!load).then(|| {
                let (slot, k) = self.velement_slot(reg, lane, e);
                let v = self.b.get(slot);
                self.xlane(v, lane, k)
            });
            self.when(cond, |l| {
                let off = l.c(Type::I64, u64::from(e) * bytes);
                let at = l.bin(Opcode::Add, Type::I64, base, off);
                match data {
                    Some(x) => l.b.store(lane, at, x),
                    None => {
                        let x = l.b.load(lane, at);
                        l.vset_element(reg, lane, e, x);
                    }
                }
            });
        }
        if load {
            self.vzero_upper_of(reg);
        }
        Outcome::Next
    }

    /// vgather*/vpgather*: for each element (of `lane`, indexed by the
    /// `index`-typed elements of the VSIB operand's vector register) whose
    /// mask element (operand 2) has its sign bit set, in element order,
    /// the element is loaded from base + index * scale + disp into the
    /// destination and its mask element cleared; the mask register ends
    /// zero. A fault stops at that element, with the earlier ones loaded
    /// and cleared, as on the CPU; destination elements beyond the indexes
    /// are zeroed. Destination, index and mask registers that are not all
    /// different are #UD.
    fn vgather(&mut self, lane: Type, index: Type) -> Outcome {
        let (dst, mask, vindex) = (self.i.op_register(0), self.i.op_register(2), self.i.memory_index());
        let numbers = [vec_num(dst), vec_num(mask), vec_num(vindex)];
        if numbers[0] == numbers[1] || numbers[0] == numbers[2] || numbers[1] == numbers[2] {
            self.b.trap(TrapKind::Ill, self.i.ip());
            return Outcome::End;
        }
        let elements = (vindex.size() * 8 / index.bits() as usize).min(dst.size() * 8 / lane.bits() as usize) as u16;
        for e in 0..elements {
            let (slot, k) = self.velement_slot(vindex, index, e);
            let v = self.b.get(slot);
            let i = self.xlane(v, index, k);
            let i = self.sext(i, index, Type::I64);
            let at = self.addr_indexed(Some(i));
            let cond = self.velement_sign(mask, lane, e);
            self.when(cond, |l| {
                let x = l.b.load(lane, at);
                l.vset_element(dst, lane, e, x);
                let zero = l.c(lane, 0);
                l.vset_element(mask, lane, e, zero);
            });
        }
        // Destination elements no index reaches (two qword indexes into
        // four dwords) are zeroed, like the upper half of an XMM one.
        for e in elements..(dst.size() * 8 / lane.bits() as usize) as u16 {
            let zero = self.c(lane, 0);
            self.vset_element(dst, lane, e, zero);
        }
        let zero = self.xconst(0);
        self.b.set(Reg::xmm(vec_num(mask)), zero);
        self.b.set(Reg::ymm_hi(vec_num(mask)), zero);
        self.vzero_upper_of(dst);
        Outcome::Next
    }
}
