//! MMX: the instructions with an mm register operand (and emms). The
//! eight mm registers are the x87 data registers' significands (IR
//! registers `mm0`-`mm7`, see `aarchx_ir::Reg::mm`); every MMX
//! instruction but emms first raises a pending x87 exception (#MF) as a
//! waiting x87 instruction does, and once done sets TOP to 0 and every
//! tag valid; a write of mm`n` also sets bits 64-79 of R`n` to all ones
//! (`fpexp`n``). emms empties every tag, and sets TOP to 0 too (the CPU
//! the oracle runs on does; the SDM names only the tags).
//!
//! An MMX form is its SSE form's own lifting through the 64-bit operand
//! view (`Vex::mmx`): an mm operand reads as the 128-bit vector holding
//! its value in both halves (one `splat`; an m64 operand reads
//! zero-extended, as for SSE) and is written from the result's low 64
//! bits. The low half of a lane-wise operation's result depends only on
//! the low halves of its operands, so those forms need nothing more, and
//! pshufb, which indexes its table with 3 bits where the 128-bit form
//! uses 4, finds the table repeated as it needs. The forms whose 64-bit
//! lanes do not line up with the 128-bit form's get, through
//! `Vex::reads`, operand vectors arranged so that the 128-bit form's low
//! half is the MMX result: dst:src as one vector for the packs and the
//! horizontal adds and subtracts, the high halves moved to bytes 8-11 for
//! the high interleaves, src:dst after zero for palignr; and the zero-
//! extended value for the forms that read every lane (pmovmskb, and the
//! conversions, which would raise exceptions for the upper lanes).

use aarchx_ir::{Opcode, Reg, Type, Value};
use iced_x86::{Mnemonic, OpKind, Register};

use super::super::lift::Outcome;
use super::super::operand::L;

/// The number of an mm register (mm3: 3).
fn mm_num(r: Register) -> u8 {
    (r as usize - Register::MM0 as usize) as u8
}

impl L<'_, '_> {
    /// Whether an operand is an mm register: the instruction is an MMX form.
    pub(super) fn has_mm_operand(&self) -> bool {
        (0..self.i.op_count()).any(|k| self.i.op_kind(k) == OpKind::Register && self.i.op_register(k).is_mm())
    }

    /// Lifts emms or an MMX form of an SSE instruction; cvtpi2ps and
    /// cvtpi2pd from memory (no mm operand) as the SSE instructions they
    /// then are, with no x87 state change.
    pub(super) fn mmx(&mut self, m: Mnemonic) -> Outcome {
        use Mnemonic as M;
        let transition = self.has_mm_operand() || m == M::Emms;
        if transition {
            self.x87_pending();
        }
        if m == M::Emms {
            self.mmx_enter(0);
            return Outcome::Next;
        }
        self.vex.mmx = true;
        let out = match m {
            M::Movq2dq | M::Movdq2q | M::Movntq => self.xmov_low(Type::I64),
            M::Pshufw => self.xlift(M::Pshuflw),
            M::Cvtpi2pd => self.xlift(M::Cvtdq2pd),
            M::Cvtpd2pi => self.xlift(M::Cvtpd2dq),
            M::Cvttpd2pi => self.xlift(M::Cvttpd2dq),
            M::Cvtps2pi | M::Cvttps2pi | M::Pmovmskb => {
                let s = self.mm_zero_ext(1);
                self.vex.reads = Some([s, s]);
                self.xlift(match m {
                    M::Cvtps2pi => M::Cvtps2dq,
                    M::Cvttps2pi => M::Cvttps2dq,
                    _ => m,
                })
            }
            M::Cvtpi2ps => self.cvtpi2ps(),
            M::Packsswb
            | M::Packssdw
            | M::Packuswb
            | M::Phaddw
            | M::Phaddd
            | M::Phaddsw
            | M::Phsubw
            | M::Phsubd
            | M::Phsubsw => {
                let (d, s) = (self.xget(0), self.xget(1));
                let joined = self.bin(Opcode::UnpackLo, Type::I64X2, d, s);
                self.vex.reads = Some([joined, joined]);
                self.xlift(m)
            }
            M::Punpckhbw | M::Punpckhwd | M::Punpckhdq => {
                let [d, s] = [0, 1].map(|n| {
                    let v = self.xget(n);
                    self.b.unary_imm(Opcode::ByteShl, Type::V128, v, 4)
                });
                self.vex.reads = Some([d, s]);
                self.xlift(m)
            }
            M::Palignr => {
                let (d, s) = (self.xget(0), self.xget(1));
                let joined = self.bin(Opcode::UnpackLo, Type::I64X2, s, d);
                let zero = self.xconst(0);
                self.vex.reads = Some([zero, joined]);
                self.xlift(m)
            }
            _ => self.xlift(m),
        };
        if out == Outcome::Next && transition {
            self.mmx_enter(0xff);
        }
        out
    }

    /// Legacy operand `n` as the 128-bit vector of its low 64 bits, the
    /// upper half zero.
    fn mm_zero_ext(&mut self, n: u32) -> Value {
        if !self.is_xreg(n) {
            return self.xget(n);
        }
        let r = self.i.op_register(self.src_op(n));
        let low = if r.is_mm() {
            self.b.get(Reg::mm(mm_num(r)))
        } else {
            let v = self.xget(n);
            self.xlane(v, Type::I64, 0)
        };
        self.xzero_ext(low, Type::I64)
    }

    /// The x87 state after an MMX instruction: TOP 0, the abridged tags
    /// `tags` (every one valid, or for emms empty).
    fn mmx_enter(&mut self, tags: u64) {
        let sw = self.b.get(Reg::FPSW);
        let keep = self.c(Type::I16, !0x3800u16 as u64);
        let sw = self.bin(Opcode::And, Type::I16, sw, keep);
        self.b.set(Reg::FPSW, sw);
        let tags = self.c(Type::I8, tags);
        self.b.set(Reg::FPTAG, tags);
    }

    /// mm register `r` as a 128-bit vector, its value in both halves.
    pub(super) fn mm_get(&mut self, r: Register) -> Value {
        let v = self.b.get(Reg::mm(mm_num(r)));
        self.un(Opcode::Splat, Type::I64X2, v)
    }

    /// Writes the low 64 bits of `v` to mm register `r`, the sign and
    /// exponent of its x87 register to all ones.
    pub(super) fn mm_set(&mut self, r: Register, v: Value) {
        let n = mm_num(r);
        let low = self.xlane(v, Type::I64, 0);
        self.b.set(Reg::mm(n), low);
        let ones = self.c(Type::I16, 0xffff);
        self.b.set(Reg::fpexp(n), ones);
    }

    /// cvtpi2ps xmm, mm/m64: two i32 to f32 (rounded under MXCSR) into
    /// the low two lanes of dst, its upper two kept.
    fn cvtpi2ps(&mut self) -> Outcome {
        let s = self.mm_zero_ext(1);
        let f = self.un(Opcode::SintToF, Type::F32X4, s);
        let low = self.xlane(f, Type::I64, 0);
        let d = self.xget(0);
        let r = self.xset_lane(d, low, 0);
        self.xset(0, r);
        Outcome::Next
    }

    /// maskmovq mm1, mm2 (maskmovdqu xmm1, xmm2): the bytes of mm1 whose
    /// byte in mm2 has its top bit set, stored to [rdi] (plus an fs or gs
    /// base; the 0x67 form's [edi] is unsupported, see `lift`), the others
    /// left as they were: a load, a blend and a store of all 8 (16)
    /// bytes. An unselected byte is written back with the value it had,
    /// which differs from the CPU only when another thread stores to it
    /// in between, or when it lies on a page the selected ones do not
    /// (which must then be writable).
    pub(super) fn maskmov(&mut self) -> Outcome {
        let ty = match self.i.memory_size().size() {
            8 => Type::I64,
            16 => Type::V128,
            _ => return Outcome::Unsupported,
        };
        let rdi = self.b.get(Reg::RDI);
        let a = self.segment_base(rdi);
        let data = self.vget(1);
        let mask = self.vget(2);
        let zero = self.xconst(0);
        let select = self.b.binary_imm(Opcode::Icmp, Type::I8X16, mask, zero, aarchx_ir::IntCond::Slt as u16);
        let old = self.b.load(ty, a);
        let old = if ty == Type::I64 { self.xzero_ext(old, ty) } else { old };
        let r = self.xblend(old, data, select);
        let r = if ty == Type::I64 { self.xlane(r, ty, 0) } else { r };
        self.b.store(ty, a, r);
        Outcome::Next
    }
}
