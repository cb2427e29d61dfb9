//! Data movement between XMM registers, GPRs and memory: whole-register
//! moves, the low-lane moves (movd/movq, movss/movsd) with their zeroing
//! and merging rules, the 64-bit half moves (movlps, movhps, movlhps,
//! movhlps...), sign-bit masks and the word insert.

use aarchx_ir::{Opcode, Type};

use super::super::lift::Outcome;
use super::super::operand::L;

impl L<'_, '_> {
    /// movdqa, movdqu, mova/movu ps/pd, movnt ps/pd/dq: 128 bits between
    /// an XMM register and an XMM register or m128.
    pub(super) fn xmov128(&mut self) -> Outcome {
        let v = self.xget(1);
        self.xset(0, v);
        Outcome::Next
    }

    /// movd/movq (`ty` i32/i64): the low `ty` of an XMM register, a GPR or
    /// memory; written to an XMM register it zeroes the rest.
    pub(super) fn xmov_low(&mut self, ty: Type) -> Outcome {
        let v = self.xlow(1, ty);
        if self.is_xreg(0) {
            let z = self.xzero_ext(v, ty);
            self.xset(0, z);
        } else {
            self.write(0, v);
        }
        Outcome::Next
    }

    /// Moves lane `src` (of `ty` lanes) of an XMM source, or memory, to
    /// lane `dst` of an XMM destination, keeping its other lanes, or to
    /// memory. `zero`: a load from memory zeroes the other lanes instead
    /// (movss, movsd).
    pub(super) fn xmov_lane(&mut self, ty: Type, dst: u16, src: u16, zero: bool) -> Outcome {
        let v = if self.is_xreg(1) {
            let s = self.xget(1);
            self.xlane(s, ty, src)
        } else {
            self.read(self.src_op(1), ty)
        };
        if !self.is_xreg(0) {
            self.write(0, v);
        } else {
            let r = if zero && !self.is_xreg(1) {
                self.xzero_ext(v, ty)
            } else {
                let d = self.xget(0);
                self.xset_lane(d, v, dst)
            };
            self.xset(0, r);
        }
        Outcome::Next
    }

    /// pmovmskb, movmskps, movmskpd: the sign bits of the `ty` lanes into
    /// a GPR, zero-extended.
    pub(super) fn xmovmsk(&mut self, ty: Type) -> Outcome {
        let v = self.xget(1);
        let m = self.un(Opcode::Movmsk, ty, v);
        let r = self.resize(m, Type::I32, self.op_type(0));
        self.write(0, r);
        Outcome::Next
    }

    /// pinsrw xmm (or mm), r32/m16, imm8.
    pub(super) fn xpinsrw(&mut self) -> Outcome {
        let n = self.ximm8().unwrap_or(0) % self.xlanes(Type::I16);
        let w = self.read(self.src_op(1), Type::I16);
        let d = self.xget(0);
        let r = self.xset_lane(d, w, n);
        self.xset(0, r);
        Outcome::Next
    }
}
