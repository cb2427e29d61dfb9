//! Scalar integer ops up to 64 bits (computed in X registers on
//! zero-extended values, results masked back to their width), the i128
//! subset the lifter produces (concatenation, extension, truncation,
//! compare, bitwise, add/sub/mul and shifts inline, division through a
//! Rust helper), and the type-generic `select` and `bitcast`.
//!
//! Semantics follow the interpreter exactly, edge cases included: shift
//! amounts of the width or more give 0 (or the sign), rotates are modulo
//! the width, a zero divisor gives 0 for both quotient and remainder, and
//! so does a signed quotient that overflows the width.

use aarchx_ir::{FloatCond, InstData, IntCond, Opcode, Type, Value};
use dynasmrt::{DynasmApi, DynasmLabelApi};

use super::alloc::{self, Fold, Home};
use super::frame::{Cc, Width, T0, T1, T2};
use super::{a64, Decline, Lowerer};
use crate::jit::context::{OFF_INT128, OFF_PARITY};
use crate::jit::regs::CTX_REG;

// Parity reads the table as `[x27, byte]`.
const _: () = assert!(OFF_PARITY == 0);
use crate::jit::runtime::Int128Op;

/// The arm64 condition of an integer compare (after `cmp a, b`).
pub fn int_cc(cond: IntCond) -> Cc {
    match cond {
        IntCond::Eq => Cc::Eq,
        IntCond::Ne => Cc::Ne,
        IntCond::Ult => Cc::Lo,
        IntCond::Ule => Cc::Ls,
        IntCond::Ugt => Cc::Hi,
        IntCond::Uge => Cc::Hs,
        IntCond::Slt => Cc::Lt,
        IntCond::Sle => Cc::Le,
        IntCond::Sgt => Cc::Gt,
        IntCond::Sge => Cc::Ge,
    }
}

/// `-c` at the width `bits` (zero-extended).
fn neg_at(c: u64, bits: u32) -> u64 {
    let neg = c.wrapping_neg();
    if bits == 64 {
        neg
    } else {
        neg & ((1 << bits) - 1)
    }
}

fn is_signed(cond: IntCond) -> bool {
    matches!(cond, IntCond::Slt | IntCond::Sle | IntCond::Sgt | IntCond::Sge)
}

/// What a `cmp` emitted by [`Lowerer::compare`] compared: two values at
/// a width, the narrow signed compares on sign-extended copies. Any
/// condition of the same operands reads the same NZCV.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Compared {
    a: Value,
    b: Value,
    bits: u32,
    signed_narrow: bool,
}

impl Lowerer<'_> {
    /// `iconst.T IMM`: nothing to emit, its users materialise or fold
    /// the constant (see [`super::alloc`]).
    pub(super) fn iconst(&mut self, v: Value, d: &InstData) -> Result<(), Decline> {
        match self.alloc.home[v.index()] {
            Home::Const(_) => Ok(()),
            // A wide constant read more than once, built in its register.
            Home::X(x) => {
                let c = alloc::const_of(d).ok_or_else(|| self.decline(d))?;
                self.mov64(x, c);
                Ok(())
            }
            _ => Err(self.decline(d)),
        }
    }

    /// A scalar integer op on types up to 64 bits, on the values'
    /// registers (x0-x2 and x3 stand in for values kept in memory).
    pub(super) fn int_op(&mut self, v: Value, d: &InstData) -> Result<(), Decline> {
        let ty = d.ty;
        // Parity reads the low byte whatever the width.
        let bits = if d.op == Opcode::Parity { ty.bits().min(64) } else { ty.bits() };
        if !ty.is_int() || bits > 64 {
            return Err(self.decline(d));
        }
        let binary = d.op.format() == aarchx_ir::Format::Binary;
        if binary && self.ty_of(d.arg(1)).bits() > 64 {
            return Err(self.decline(d));
        }
        let dst = self.xdst(v, 3);
        match d.op {
            Opcode::Trunc if self.alloc.fold[d.arg(0).index()] == Fold::BitField => {
                // trunc(lshr(x, n)): the bits from n up, at most `bits` of them.
                let shr = *self.r.inst(d.arg(0));
                let n = self.const_value(shr.arg(1)).expect("a folded shift amount") as u32;
                let width = bits.min(shr.ty.bits() - n);
                let x = self.xsrc(shr.arg(0), 0);
                a64!(self.ops; ubfx X(dst), X(x), #n, #width);
            }
            Opcode::Zext => {
                // Zero-extended already: a copy, or nothing where the
                // allocator gave the result the operand's register.
                let a = self.xsrc(d.arg(0), 0);
                if dst != a {
                    a64!(self.ops; mov X(dst), X(a));
                }
            }
            Opcode::Trunc => {
                let a = self.xsrc(d.arg(0), 0);
                match bits {
                    64 => a64!(self.ops; mov X(dst), X(a)),
                    32 => a64!(self.ops; mov W(dst), W(a)),
                    _ => a64!(self.ops; ubfx X(dst), X(a), #0, #bits),
                }
            }
            Opcode::Sext => {
                let from = self.ty_of(d.arg(0)).bits();
                let a = self.xsrc(d.arg(0), 0);
                match from {
                    1 => a64!(self.ops; sbfx X(dst), X(a), #0, #1),
                    8 => a64!(self.ops; sxtb X(dst), W(a)),
                    16 => a64!(self.ops; sxth X(dst), W(a)),
                    32 => a64!(self.ops; sxtw X(dst), W(a)),
                    _ => a64!(self.ops; mov X(dst), X(a)),
                }
                self.mask(dst, bits);
            }
            Opcode::Concat => {
                let a = self.xsrc(d.arg(0), 0);
                let b = self.xsrc(d.arg(1), 1);
                match bits {
                    16 => a64!(self.ops; orr X(dst), X(b), X(a), lsl #8),
                    32 => a64!(self.ops; orr X(dst), X(b), X(a), lsl #16),
                    64 => a64!(self.ops; orr X(dst), X(b), X(a), lsl #32),
                    _ => return Err(self.decline(d)),
                }
            }
            Opcode::Icmp => {
                let cond = IntCond::from_u16(d.aux).ok_or_else(|| self.decline(d))?;
                if cond == IntCond::Slt && self.const_value(d.arg(1)) == Some(0) && bits > 1 {
                    // The sign bit (SF), one extract instead of cmp + cset.
                    let a = self.xsrc(d.arg(0), 0);
                    let top = bits - 1;
                    a64!(self.ops; ubfx X(dst), X(a), #top, #1);
                } else {
                    let cc = self.compare(cond, bits, d.arg(0), d.arg(1));
                    self.cset(dst, cc);
                }
            }
            Opcode::Not | Opcode::Neg | Opcode::Clz | Opcode::Ctz | Opcode::Popcnt | Opcode::Bswap | Opcode::Parity => {
                let a = self.xsrc(d.arg(0), 0);
                if !self.int_unary(d.op, bits, dst, a) {
                    return Err(self.decline(d));
                }
            }
            _ if binary => {
                if !self.binary_folded(d, bits, dst) {
                    let a = self.xsrc(d.arg(0), 0);
                    let b = self.xsrc(d.arg(1), 1);
                    if !self.int_binary(d.op, bits, dst, a, b) {
                        return Err(self.decline(d));
                    }
                }
            }
            _ => return Err(self.decline(d)),
        }
        self.xdone(v, dst);
        Ok(())
    }

    /// `crc32c`: arm64's crc32c of the data width (the same CRC, also
    /// without inversion).
    pub(super) fn crc32c(&mut self, v: Value, d: &InstData) -> Result<(), Decline> {
        let a = self.xsrc(d.arg(0), 0);
        let b = self.xsrc(d.arg(1), 1);
        let dst = self.xdst(v, 3);
        match d.aux {
            1 => a64!(self.ops; crc32cb W(dst), W(a), W(b)),
            2 => a64!(self.ops; crc32ch W(dst), W(a), W(b)),
            4 => a64!(self.ops; crc32cw W(dst), W(a), W(b)),
            _ => a64!(self.ops; crc32cx W(dst), W(a), X(b)),
        }
        self.xdone(v, dst);
        Ok(())
    }

    /// Sets the flags for `icmp cond a, b` at `bits` and returns the
    /// condition to test: a constant `b` in `cmp`'s 12-bit immediate
    /// (or `cmn`'s), 32-bit compares on W registers, 8- and 16-bit signed
    /// ones on sign-extended copies.
    pub fn compare(&mut self, cond: IntCond, bits: u32, a: Value, b: Value) -> Cc {
        let cc = int_cc(cond);
        let signed_narrow = is_signed(cond) && bits < 32;
        let compared = Compared { a, b, bits, signed_narrow };
        if self.nzcv == Some(compared) {
            // NZCV still holds this compare (see `Lowerer::inst`).
            return cc;
        }
        self.nzcv = Some(compared);
        let ra = self.xsrc(a, 0);
        let ra = if signed_narrow {
            self.sext_to(T0, ra, bits);
            T0
        } else {
            ra
        };
        let c = self.const_value(b).filter(|_| !signed_narrow);
        match c {
            Some(c) if c <= 0xfff && bits == 32 => a64!(self.ops; cmp WSP(ra), #c as u32),
            Some(c) if c <= 0xfff => a64!(self.ops; cmp XSP(ra), #c as u32),
            Some(c) if bits == 64 && c.wrapping_neg() <= 0xfff => {
                let n = c.wrapping_neg() as u32;
                a64!(self.ops; cmn XSP(ra), #n);
            }
            _ => {
                let rb = self.xsrc(b, 1);
                if signed_narrow {
                    self.sext_to(T1, rb, bits);
                    a64!(self.ops; cmp X(ra), X(T1));
                } else if bits == 32 {
                    a64!(self.ops; cmp W(ra), W(rb));
                } else {
                    a64!(self.ops; cmp X(ra), X(rb));
                }
            }
        }
        cc
    }

    /// A binary op whose second operand is a constant the instruction can
    /// take as an immediate: add/sub imm12, logical bitmask immediates,
    /// shifts and 32/64-bit rotates by a constant. False (nothing emitted) otherwise.
    fn binary_folded(&mut self, d: &InstData, bits: u32, dst: u8) -> bool {
        let Some(c) = self.const_value(d.arg(1)) else { return false };
        let op = d.op;
        let logical = matches!(op, Opcode::And | Opcode::Or | Opcode::Xor);
        let fits = match op {
            Opcode::Add | Opcode::Sub => c <= 0xfff || neg_at(c, bits) <= 0xfff,
            _ if logical => c != 0 && c != u64::MAX && dynasmrt::aarch64::encode_logical_immediate_64bit(c).is_some(),
            Opcode::Shl | Opcode::Lshr | Opcode::Ashr => matches!(bits, 8 | 16 | 32 | 64),
            Opcode::Rotl | Opcode::Rotr => matches!(bits, 32 | 64),
            _ => false,
        };
        if !fits {
            return false;
        }
        let a = self.xsrc(d.arg(0), 0);
        match op {
            Opcode::Add | Opcode::Sub => {
                // a + c is a - (-c) at the width: pick whichever fits.
                let (sub, imm) = if c <= 0xfff { (op == Opcode::Sub, c) } else { (op == Opcode::Add, neg_at(c, bits)) };
                let imm = imm as u32;
                match (sub, bits == 32) {
                    (false, true) => a64!(self.ops; add WSP(dst), WSP(a), #imm),
                    (true, true) => a64!(self.ops; sub WSP(dst), WSP(a), #imm),
                    (false, false) => a64!(self.ops; add XSP(dst), XSP(a), #imm),
                    (true, false) => a64!(self.ops; sub XSP(dst), XSP(a), #imm),
                }
                if bits != 32 {
                    self.mask(dst, bits);
                }
            }
            Opcode::And => a64!(self.ops; and XSP(dst), X(a), #c),
            Opcode::Or => a64!(self.ops; orr XSP(dst), X(a), #c),
            Opcode::Xor => a64!(self.ops; eor XSP(dst), X(a), #c),
            Opcode::Rotl | Opcode::Rotr => {
                // A rotate right by the amount modulo the width (extr of
                // the register with itself).
                let n = (c % u64::from(bits)) as u32;
                let right = if op == Opcode::Rotr { n } else { (bits - n) % bits };
                if bits == 32 {
                    a64!(self.ops; extr W(dst), W(a), W(a), #right);
                } else {
                    a64!(self.ops; extr X(dst), X(a), X(a), #right);
                }
            }
            _ => {
                // Shift amounts of the width or more give 0 (or the sign).
                let n = c.min(u64::from(bits)) as u32;
                match op {
                    Opcode::Shl | Opcode::Lshr if n == bits => a64!(self.ops; movz X(dst), #0),
                    Opcode::Shl => {
                        let width = bits - n;
                        a64!(self.ops; ubfiz X(dst), X(a), #n, #width);
                    }
                    Opcode::Lshr => a64!(self.ops; lsr X(dst), X(a), #n),
                    _ => {
                        let n = n.min(bits - 1);
                        let width = bits - n;
                        a64!(self.ops; sbfx X(dst), X(a), #n, #width);
                        self.mask(dst, bits);
                    }
                }
            }
        }
        true
    }

    /// `X(dst) = X(a) OP X(b)` at `bits` (operands zero-extended). False
    /// if `op` is not a binary integer op this lowers.
    pub fn int_binary(&mut self, op: Opcode, bits: u32, dst: u8, a: u8, b: u8) -> bool {
        let d = dst;
        match op {
            // 32-bit ops zero the upper half: no mask.
            Opcode::Add if bits == 32 => a64!(self.ops; add W(d), W(a), W(b)),
            Opcode::Add => {
                a64!(self.ops; add X(d), X(a), X(b));
                self.mask(d, bits);
            }
            // 32-bit ops zero the upper half: no mask.
            Opcode::Sub if bits == 32 => a64!(self.ops; sub W(d), W(a), W(b)),
            Opcode::Sub => {
                a64!(self.ops; sub X(d), X(a), X(b));
                self.mask(d, bits);
            }
            // 32-bit ops zero the upper half: no mask.
            Opcode::Mul if bits == 32 => a64!(self.ops; mul W(d), W(a), W(b)),
            Opcode::Mul => {
                a64!(self.ops; mul X(d), X(a), X(b));
                self.mask(d, bits);
            }
            Opcode::And => a64!(self.ops; and X(d), X(a), X(b)),
            Opcode::Or => a64!(self.ops; orr X(d), X(a), X(b)),
            Opcode::Xor => a64!(self.ops; eor X(d), X(a), X(b)),
            Opcode::AndNot => a64!(self.ops; bic X(d), X(a), X(b)),
            Opcode::Umulh if bits == 64 => a64!(self.ops; umulh X(d), X(a), X(b)),
            Opcode::Umulh => a64!(self.ops
                ; mul X(d), X(a), X(b)
                ; lsr X(d), X(d), #bits
            ),
            Opcode::Pdep | Opcode::Pext => self.deposit_extract(op == Opcode::Pdep, d, a, b),
            Opcode::Smulh if bits == 64 => a64!(self.ops; smulh X(d), X(a), X(b)),
            Opcode::Smulh => {
                self.sext_to(T0, a, bits);
                self.sext_to(T1, b, bits);
                a64!(self.ops
                    ; mul X(d), X(T0), X(T1)
                    ; asr X(d), X(d), #bits
                );
                self.mask(d, bits);
            }
            // arm64 division by zero gives 0, as the interpreter does.
            Opcode::Udiv => a64!(self.ops; udiv X(d), X(a), X(b)),
            // A quotient that does not fit the width (MIN / -1) gives 0,
            // as in the interpreter.
            Opcode::Sdiv if bits == 64 => {
                self.mov64(T2, 1 << 63);
                a64!(self.ops
                    ; sdiv X(d), X(a), X(b)
                    ; cmn XSP(b), #1
                    ; ccmp X(a), X(T2), #0, eq
                    ; csel X(d), xzr, X(d), eq
                );
            }
            Opcode::Sdiv => {
                self.sext_to(T0, a, bits);
                self.sext_to(T1, b, bits);
                a64!(self.ops; sdiv X(d), X(T0), X(T1));
                self.sext_to(T2, d, bits);
                a64!(self.ops
                    ; cmp X(d), X(T2)
                    ; csel X(d), X(d), xzr, eq
                );
                self.mask(d, bits);
            }
            Opcode::Urem => a64!(self.ops
                ; udiv X(T0), X(a), X(b)
                ; msub X(d), X(T0), X(b), X(a)
                ; cmp XSP(b), #0
                ; csel X(d), X(d), xzr, ne
            ),
            Opcode::Srem => {
                self.sext_to(T1, a, bits);
                self.sext_to(T2, b, bits);
                a64!(self.ops
                    ; sdiv X(T0), X(T1), X(T2)
                    ; msub X(d), X(T0), X(T2), X(T1)
                    ; cmp XSP(T2), #0
                    ; csel X(d), X(d), xzr, ne
                );
                self.mask(d, bits);
            }
            Opcode::Umin | Opcode::Umax => {
                a64!(self.ops; cmp X(a), X(b));
                self.csel(d, a, b, if op == Opcode::Umin { Cc::Lo } else { Cc::Hi });
            }
            Opcode::Smin | Opcode::Smax => {
                self.sext_to(T0, a, bits);
                self.sext_to(T1, b, bits);
                a64!(self.ops; cmp X(T0), X(T1));
                self.csel(d, a, b, if op == Opcode::Smin { Cc::Lt } else { Cc::Gt });
            }
            Opcode::AvgU => a64!(self.ops
                ; lsr X(T0), X(a), #1
                ; lsr X(T1), X(b), #1
                ; add X(d), X(T0), X(T1)
                ; orr X(T0), X(a), X(b)
                ; and XSP(T0), X(T0), #1
                ; add X(d), X(d), X(T0)
            ),
            Opcode::AddSatU if bits == 64 => a64!(self.ops
                ; adds X(d), X(a), X(b)
                ; csinv X(d), X(d), xzr, lo
            ),
            Opcode::AddSatU => {
                self.mov64(T0, (1 << bits) - 1);
                a64!(self.ops
                    ; add X(d), X(a), X(b)
                    ; cmp X(d), X(T0)
                    ; csel X(d), X(d), X(T0), ls
                );
            }
            Opcode::SubSatU => a64!(self.ops
                ; subs X(d), X(a), X(b)
                ; csel X(d), X(d), xzr, hs
            ),
            Opcode::AddSatS | Opcode::SubSatS if bits == 64 => {
                if op == Opcode::AddSatS {
                    a64!(self.ops; adds X(d), X(a), X(b));
                } else {
                    a64!(self.ops; subs X(d), X(a), X(b));
                }
                // On overflow the result saturates toward a's sign.
                a64!(self.ops
                    ; asr X(T0), X(a), #63
                    ; eor XSP(T0), X(T0), #0x7fff_ffff_ffff_ffff
                    ; csel X(d), X(T0), X(d), vs
                );
            }
            Opcode::AddSatS | Opcode::SubSatS => {
                self.sext_to(T1, a, bits);
                self.sext_to(T2, b, bits);
                if op == Opcode::AddSatS {
                    a64!(self.ops; add X(d), X(T1), X(T2));
                } else {
                    a64!(self.ops; sub X(d), X(T1), X(T2));
                }
                let max = (1u64 << (bits - 1)) - 1;
                self.mov64(T0, max);
                a64!(self.ops
                    ; cmp X(d), X(T0)
                    ; csel X(d), X(T0), X(d), gt
                );
                self.mov64(T0, !max);
                a64!(self.ops
                    ; cmp X(d), X(T0)
                    ; csel X(d), X(T0), X(d), lt
                );
                self.mask(d, bits);
            }
            Opcode::Shl => {
                a64!(self.ops
                    ; lsl X(d), X(a), X(b)
                    ; cmp XSP(b), #bits
                    ; csel X(d), X(d), xzr, lo
                );
                self.mask(d, bits);
            }
            Opcode::Lshr => a64!(self.ops
                ; lsr X(d), X(a), X(b)
                ; cmp XSP(b), #bits
                ; csel X(d), X(d), xzr, lo
            ),
            Opcode::Ashr => {
                self.sext_to(T0, a, bits);
                let top = bits - 1;
                a64!(self.ops
                    ; movz X(T1), #top
                    ; cmp X(b), X(T1)
                    ; csel X(T1), X(b), X(T1), ls
                    ; asr X(d), X(T0), X(T1)
                );
                self.mask(d, bits);
            }
            Opcode::Rotl | Opcode::Rotr => {
                if bits == 1 {
                    a64!(self.ops; mov X(d), X(a));
                    return true;
                }
                // Repeat the value through the register so a 64-bit rotate
                // by any amount is the width's rotate by that amount
                // modulo the width (the width divides 64).
                a64!(self.ops; mov X(T0), X(a));
                if bits <= 8 {
                    a64!(self.ops; orr X(T0), X(T0), X(T0), lsl #8);
                }
                if bits <= 16 {
                    a64!(self.ops; orr X(T0), X(T0), X(T0), lsl #16);
                }
                if bits <= 32 {
                    a64!(self.ops; orr X(T0), X(T0), X(T0), lsl #32);
                }
                if op == Opcode::Rotl {
                    a64!(self.ops
                        ; neg X(T1), X(b)
                        ; ror X(d), X(T0), X(T1)
                    );
                } else {
                    a64!(self.ops; ror X(d), X(T0), X(b));
                }
                self.mask(d, bits);
            }
            _ => return false,
        }
        true
    }

    /// `X(dst) = OP X(a)` at `bits`. False if not lowered.
    pub fn int_unary(&mut self, op: Opcode, bits: u32, dst: u8, a: u8) -> bool {
        let d = dst;
        match op {
            Opcode::Not if bits == 32 => a64!(self.ops; mvn W(d), W(a)),
            Opcode::Not => {
                a64!(self.ops; mvn X(d), X(a));
                self.mask(d, bits);
            }
            Opcode::Neg if bits == 32 => a64!(self.ops; neg W(d), W(a)),
            Opcode::Neg => {
                a64!(self.ops; neg X(d), X(a));
                self.mask(d, bits);
            }
            Opcode::Clz if bits == 64 => a64!(self.ops; clz X(d), X(a)),
            Opcode::Clz => {
                let excess = 32 - bits;
                a64!(self.ops
                    ; clz W(d), W(a)
                    ; sub XSP(d), XSP(d), #excess
                );
            }
            Opcode::Ctz => {
                if bits == 64 {
                    a64!(self.ops; rbit X(d), X(a));
                } else {
                    // A stop bit at the width makes zero count as the width.
                    self.mov64(T0, 1 << bits);
                    a64!(self.ops
                        ; orr X(d), X(a), X(T0)
                        ; rbit X(d), X(d)
                    );
                }
                a64!(self.ops; clz X(d), X(d));
            }
            Opcode::Popcnt => self.popcount(d, a),
            Opcode::Bswap => match bits {
                64 => a64!(self.ops; rev X(d), X(a)),
                32 => a64!(self.ops; rev W(d), W(a)),
                16 => a64!(self.ops; rev16 W(d), W(a)),
                8 => a64!(self.ops; mov X(d), X(a)),
                _ => return false,
            },
            // The low byte's entry in the context's parity table.
            Opcode::Parity => {
                if bits < 8 {
                    a64!(self.ops; and XSP(T0), X(a), #1);
                } else {
                    a64!(self.ops; and XSP(T0), X(a), #0xff);
                }
                a64!(self.ops; ldrb W(d), [X(CTX_REG), X(T0)]);
            }
            _ => return false,
        }
        true
    }

    /// `X(d) = popcount(X(a))` through the vector unit.
    /// `pdep` (`deposit`) or `pext` of X(a) at the set bits of X(b) into
    /// X(d): a loop over the mask's set bits, lowest first (arm64 has no
    /// such instruction), ten instructions per set bit. x4 serves as a
    /// fourth temporary: outside i128 ops it is no one's (see `frame`).
    fn deposit_extract(&mut self, deposit: bool, d: u8, a: u8, b: u8) {
        const LOW: u8 = 4;
        let (top, done) = (self.ops.new_dynamic_label(), self.ops.new_dynamic_label());
        // T0: the mask bits left; T1: the source shifted down (pdep) or
        // the next result bit (pext); T2: the result.
        a64!(self.ops; mov X(T0), X(b));
        if deposit {
            a64!(self.ops; mov X(T1), X(a));
        } else {
            a64!(self.ops; movz X(T1), #1);
        }
        a64!(self.ops
            ; movz X(T2), #0
            ; =>top
            ; cbz X(T0), =>done
            ; neg X(LOW), X(T0)
            ; and X(LOW), X(LOW), X(T0)
        );
        if deposit {
            a64!(self.ops
                ; tst X(T1), #1
                ; csel X(LOW), X(LOW), xzr, ne
                ; orr X(T2), X(T2), X(LOW)
                ; lsr X(T1), X(T1), #1
            );
        } else {
            a64!(self.ops
                ; tst X(a), X(LOW)
                ; csel X(LOW), X(T1), xzr, ne
                ; orr X(T2), X(T2), X(LOW)
                ; lsl X(T1), X(T1), #1
            );
        }
        a64!(self.ops
            ; sub XSP(LOW), XSP(T0), #1
            ; and X(T0), X(T0), X(LOW)
            ; b =>top
            ; =>done
            ; mov X(d), X(T2)
        );
    }

    fn popcount(&mut self, d: u8, a: u8) {
        use super::frame::VT0;
        a64!(self.ops
            ; fmov D(VT0), X(a)
            ; cnt V(VT0).B8, V(VT0).B8
            ; addv B(VT0), V(VT0).B8
            ; fmov W(d), S(VT0)
        );
    }

    /// Ops with an i128 result or operand: pairs (lo, hi) in x0/x1 and
    /// x2/x3, result in x4/x5.
    pub(super) fn int128_op(&mut self, v: Value, d: &InstData) -> Result<(), Decline> {
        let wide = d.ty == Type::I128;
        match d.op {
            Opcode::Trunc | Opcode::Parity => return self.int_op(v, d),
            Opcode::Zext if wide => {
                self.ldx(4, d.arg(0));
                self.stx(4, v);
                self.stx_hi(31, v);
            }
            Opcode::Sext if wide => {
                let from = self.ty_of(d.arg(0)).bits();
                self.ldx(4, d.arg(0));
                self.sext(4, from);
                a64!(self.ops; asr X(5), X(4), #63);
                self.stx(4, v);
                self.stx_hi(5, v);
            }
            Opcode::Concat if wide => {
                self.ldx(4, d.arg(1));
                self.ldx(5, d.arg(0));
                self.stx(4, v);
                self.stx_hi(5, v);
            }
            Opcode::Not | Opcode::Neg if wide => {
                self.load_pair(0, d.arg(0));
                if d.op == Opcode::Not {
                    a64!(self.ops
                        ; mvn X(4), X(0)
                        ; mvn X(5), X(1)
                    );
                } else {
                    a64!(self.ops
                        ; negs X(4), X(0)
                        ; ngc X(5), X(1)
                    );
                }
                self.store_pair(4, v);
            }
            Opcode::Add | Opcode::Sub | Opcode::Mul | Opcode::And | Opcode::Or | Opcode::Xor | Opcode::AndNot
                if wide =>
            {
                self.load_pair(0, d.arg(0));
                self.load_pair(2, d.arg(1));
                match d.op {
                    Opcode::Add => a64!(self.ops; adds X(4), X(0), X(2); adc X(5), X(1), X(3)),
                    Opcode::Sub => a64!(self.ops; subs X(4), X(0), X(2); sbc X(5), X(1), X(3)),
                    Opcode::Mul => a64!(self.ops
                        ; umulh X(T0), X(0), X(2)
                        ; madd X(T0), X(0), X(3), X(T0)
                        ; madd X(5), X(1), X(2), X(T0)
                        ; mul X(4), X(0), X(2)
                    ),
                    Opcode::And => a64!(self.ops; and X(4), X(0), X(2); and X(5), X(1), X(3)),
                    Opcode::Or => a64!(self.ops; orr X(4), X(0), X(2); orr X(5), X(1), X(3)),
                    Opcode::Xor => a64!(self.ops; eor X(4), X(0), X(2); eor X(5), X(1), X(3)),
                    _ => a64!(self.ops; bic X(4), X(0), X(2); bic X(5), X(1), X(3)),
                }
                self.store_pair(4, v);
            }
            Opcode::Shl | Opcode::Lshr | Opcode::Ashr if wide => {
                if self.ty_of(d.arg(1)).bits() > 64 {
                    return Err(self.decline(d));
                }
                self.load_pair(0, d.arg(0));
                self.ldx(2, d.arg(1));
                self.shift128(d.op);
                self.store_pair(4, v);
            }
            Opcode::Icmp if wide => {
                let cond = IntCond::from_u16(d.aux).ok_or_else(|| self.decline(d))?;
                self.load_pair(0, d.arg(0));
                self.load_pair(2, d.arg(1));
                match cond {
                    IntCond::Eq | IntCond::Ne => a64!(self.ops
                        ; cmp X(0), X(2)
                        ; ccmp X(1), X(3), #0, eq
                    ),
                    // a < b (or a >= b) from the borrow of a - b; the
                    // other two by swapping the operands.
                    IntCond::Ult | IntCond::Uge | IntCond::Slt | IntCond::Sge => a64!(self.ops
                        ; cmp X(0), X(2)
                        ; sbcs xzr, X(1), X(3)
                    ),
                    _ => a64!(self.ops
                        ; cmp X(2), X(0)
                        ; sbcs xzr, X(3), X(1)
                    ),
                }
                let cc = match cond {
                    IntCond::Eq => Cc::Eq,
                    IntCond::Ne => Cc::Ne,
                    IntCond::Ult | IntCond::Ugt => Cc::Lo,
                    IntCond::Uge | IntCond::Ule => Cc::Hs,
                    IntCond::Slt | IntCond::Sgt => Cc::Lt,
                    IntCond::Sge | IntCond::Sle => Cc::Ge,
                };
                self.cset(4, cc);
                self.stx(4, v);
            }
            Opcode::Udiv | Opcode::Sdiv | Opcode::Urem | Opcode::Srem if wide => {
                let op = match d.op {
                    Opcode::Udiv => Int128Op::Udiv,
                    Opcode::Sdiv => Int128Op::Sdiv,
                    Opcode::Urem => Int128Op::Urem,
                    _ => Int128Op::Srem,
                } as u32;
                a64!(self.ops; movz W(0), #op);
                self.addr_of(1, d.arg(0));
                self.addr_of(2, d.arg(1));
                self.addr_of(3, v);
                self.call_ctx(OFF_INT128);
            }
            _ => return Err(self.decline(d)),
        }
        Ok(())
    }

    /// x4/x5 = the i128 in x0/x1 shifted by the amount in x2 (any
    /// unsigned value: 128 or more gives 0, or the sign for `ashr`).
    fn shift128(&mut self, op: Opcode) {
        if op == Opcode::Ashr {
            // Clamp to 127: the same as any larger amount.
            a64!(self.ops
                ; movz X(T0), #127
                ; cmp X(2), X(T0)
                ; csel X(2), X(2), X(T0), ls
            );
        } else {
            a64!(self.ops
                ; cmp XSP(2), #128
                ; b.hs >zero
            );
        }
        a64!(self.ops
            ; cmp XSP(2), #64
            ; b.hs >big
            ; cbz X(2), >same
            // 0 < n < 64: bits cross between the halves (register shifts
            // take the amount modulo 64, so -n is 64 - n).
            ; neg X(T0), X(2)
        );
        match op {
            Opcode::Shl => a64!(self.ops
                ; lsr X(T0), X(0), X(T0)
                ; lsl X(5), X(1), X(2)
                ; orr X(5), X(5), X(T0)
                ; lsl X(4), X(0), X(2)
                ; b >done
                ; big:
                ; lsl X(5), X(0), X(2)
                ; mov X(4), xzr
                ; b >done
                ; zero:
                ; mov X(4), xzr
                ; mov X(5), xzr
                ; b >done
            ),
            Opcode::Lshr => a64!(self.ops
                ; lsl X(T0), X(1), X(T0)
                ; lsr X(4), X(0), X(2)
                ; orr X(4), X(4), X(T0)
                ; lsr X(5), X(1), X(2)
                ; b >done
                ; big:
                ; lsr X(4), X(1), X(2)
                ; mov X(5), xzr
                ; b >done
                ; zero:
                ; mov X(4), xzr
                ; mov X(5), xzr
                ; b >done
            ),
            _ => a64!(self.ops
                ; lsl X(T0), X(1), X(T0)
                ; lsr X(4), X(0), X(2)
                ; orr X(4), X(4), X(T0)
                ; asr X(5), X(1), X(2)
                ; b >done
                ; big:
                ; asr X(4), X(1), X(2)
                ; asr X(5), X(1), #63
                ; b >done
            ),
        }
        a64!(self.ops
            ; same:
            ; mov X(4), X(0)
            ; mov X(5), X(1)
            ; done:
        );
    }

    fn load_pair(&mut self, r: u8, v: Value) {
        self.ldx(r, v);
        self.ldx_hi(r + 1, v);
    }

    fn store_pair(&mut self, r: u8, v: Value) {
        self.stx(r, v);
        self.stx_hi(r + 1, v);
    }

    /// Sets the flags for a `select` or `brif` on `cond` and returns the
    /// condition that means true: the folded `icmp`'s or `fcmp`'s own
    /// compare, or a test of the i1 (then `ne`; non-folded conditions
    /// always give `ne`).
    pub fn select_cc(&mut self, cond: Value) -> Cc {
        let d = *self.r.inst(cond);
        if self.alloc.fold[cond.index()] == Fold::Compare && d.op == Opcode::Fcmp {
            let c = FloatCond::from_u16(d.aux).expect("a verified fcmp");
            return self.float_compare(c, d.ty, d.arg(0), d.arg(1));
        }
        if self.alloc.fold[cond.index()] == Fold::Compare {
            let c = IntCond::from_u16(d.aux).expect("a verified icmp");
            return self.compare(c, d.ty.bits(), d.arg(0), d.arg(1));
        }
        let c = self.xsrc(cond, 0);
        a64!(self.ops; tst X(c), #1);
        Cc::Ne
    }

    /// `select` (any type, as bits) and `bitcast` (a copy at the width).
    pub(super) fn generic_op(&mut self, v: Value, d: &InstData) -> Result<(), Decline> {
        match d.op {
            Opcode::Select if d.ty == Type::I128 => {
                self.ldx(0, d.arg(0));
                a64!(self.ops; tst X(0), #1);
                for half in [false, true] {
                    if half {
                        self.ldx_hi(1, d.arg(1));
                        self.ldx_hi(2, d.arg(2));
                    } else {
                        self.ldx(1, d.arg(1));
                        self.ldx(2, d.arg(2));
                    }
                    a64!(self.ops; csel X(3), X(1), X(2), ne);
                    if half {
                        self.stx_hi(3, v);
                    } else {
                        self.stx(3, v);
                    }
                }
            }
            Opcode::Select if d.ty.bits() > 64 => {
                self.select_cc(d.arg(0));
                let (t, f, dst) = (self.vsrc(d.arg(1), 1), self.vsrc(d.arg(2), 2), self.vdst(v, 3));
                a64!(self.ops
                    ; csetm X(T0), ne
                    ; dup V(dst).D2, X(T0)
                    ; bsl V(dst).B16, V(t).B16, V(f).B16
                );
                self.vdone(v, dst);
            }
            Opcode::Select if d.ty.is_int() => {
                // Loads and constants leave the flags alone.
                let cc = self.select_cc(d.arg(0));
                let (t, f, dst) = (self.xsrc_zr(d.arg(1), 1), self.xsrc_zr(d.arg(2), 2), self.xdst(v, 3));
                self.csel(dst, t, f, cc);
                self.xdone(v, dst);
            }
            Opcode::Select => {
                self.select_cc(d.arg(0));
                self.ldx(1, d.arg(1));
                self.ldx(2, d.arg(2));
                a64!(self.ops; csel X(3), X(1), X(2), ne);
                self.stx(3, v);
            }
            Opcode::Bitcast => match d.ty.bits() {
                32 => {
                    self.load(Width::W, 3, d.arg(0));
                    self.stx(3, v);
                }
                64 => {
                    self.ldx(3, d.arg(0));
                    self.stx(3, v);
                }
                128 => {
                    self.ldq(3, d.arg(0));
                    self.stq(3, v);
                }
                _ => {
                    self.ldx(3, d.arg(0));
                    self.mask(3, d.ty.bits());
                    self.stx(3, v);
                }
            },
            _ => return Err(self.decline(d)),
        }
        Ok(())
    }
}
