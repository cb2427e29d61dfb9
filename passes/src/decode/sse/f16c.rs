//! F16C, the half-precision conversions of x86-64-v3: vcvtph2ps (four or
//! eight f16 to f32, `fcvt_from_f16` per 128-bit half) and vcvtps2ph (four
//! or eight f32 to f16, `fcvt_to_f16` per source half, rounded by imm8
//! bits 2:0), with their register and memory operands.

use aarchx_ir::{Opcode, Type};

use super::super::lift::Outcome;
use super::super::operand::L;

impl L<'_, '_> {
    /// vcvtph2ps xmm1, xmm2/m64 and ymm1, xmm2/m128: the upper half of the
    /// 256-bit form converts the source's upper 64 bits.
    pub(super) fn vcvtph2ps(&mut self) -> Outcome {
        self.vex.widen = 8;
        self.vlanes_with(|l| {
            let s = l.xget(1);
            let r = l.un(Opcode::FcvtFromF16, Type::F32X4, s);
            l.xset(0, r);
            Outcome::Next
        })
    }

    /// vcvtps2ph xmm1/m64, xmm2, imm8 and xmm1/m128, ymm2, imm8: each
    /// source half's four f16 in the next 64 bits of the destination; a
    /// register destination has the bits above them zeroed.
    pub(super) fn vcvtps2ph(&mut self) -> Outcome {
        let mode = self.ximm8().unwrap_or(0) & 7;
        let halves = if self.is_wide() { 2 } else { 1 };
        let mut r = None;
        for half in 0..halves {
            self.vex.half = half;
            let s = self.vget(1);
            let h = self.b.unary_imm(Opcode::FcvtToF16, Type::I16X8, s, mode);
            r = Some(match r {
                None => h,
                Some(low) => {
                    let high = self.b.unary_imm(Opcode::ByteShl, Type::V128, h, 8);
                    self.bin(Opcode::Or, Type::V128, low, high)
                }
            });
        }
        self.vex.half = 0;
        let r = r.expect("a half");
        if self.is_vreg(0) {
            self.xset(0, r);
        } else if halves == 2 {
            let a = self.addr();
            self.b.store(Type::V128, a, r);
        } else {
            let low = self.xlane(r, Type::I64, 0);
            let a = self.addr();
            self.b.store(Type::I64, a, low);
        }
        Outcome::Next
    }
}
