//! SSE4.2's packed string compares: pcmpistri, pcmpistrm (strings ended
//! by a null element) and pcmpestri, pcmpestrm (lengths in rax and rdx),
//! composed of the IR's lane-wise ops. The imm8 is a constant, so only
//! the element format, aggregation, polarity and output it names are
//! lifted. Lane j of every vector below stands for element j of the
//! second operand (the string searched); the first operand is the set,
//! the ranges or the pattern.

use aarchx_ir::{InstData, IntCond, Opcode, Reg, Type, Value};
use iced_x86::Register;

use super::super::operand::L;
use super::shape;

/// The imm8 fields (Intel SDM vol. 2, 4.1).
#[derive(Clone, Copy)]
struct Control {
    /// Elements are words (else bytes).
    words: bool,
    /// Elements are signed (ranges compare them so).
    signed: bool,
    /// 0 equal any, 1 ranges, 2 equal each, 3 equal ordered.
    aggregation: u16,
    /// 0 and 2 positive, 1 negate, 3 negate the valid elements only.
    polarity: u16,
    /// Index: the most significant set bit (else the least); mask: the
    /// result expanded to element lanes (else a bit mask).
    bit6: bool,
}

impl Control {
    fn new(imm: u16) -> Control {
        Control {
            words: imm & 1 != 0,
            signed: imm & 2 != 0,
            aggregation: imm >> 2 & 3,
            polarity: imm >> 4 & 3,
            bit6: imm & 0x40 != 0,
        }
    }

    /// The element type.
    fn lane(self) -> Type {
        if self.words {
            Type::I16
        } else {
            Type::I8
        }
    }

    /// Elements per operand.
    fn n(self) -> u16 {
        if self.words {
            8
        } else {
            16
        }
    }
}

impl L<'_, '_> {
    /// pcmpXstrX: `explicit` the type of the e forms' lengths (i32: eax
    /// and edx; i64 with REX.W: rax and rdx), `index` for the i forms (ecx)
    /// rather than the m forms (xmm0).
    pub(super) fn xstring_compare(&mut self, explicit: Option<Type>, index: bool) {
        let k = Control::new(self.ximm8().unwrap_or(0));
        let (a, b) = self.xpair();
        let (valid_a, short_a) = self.xvalid(k, explicit, a, Register::RAX);
        let (valid_b, short_b) = self.xvalid(k, explicit, b, Register::RDX);
        let res = match k.aggregation {
            0 => self.xequal_any(k, a, b, valid_a),
            1 => self.xranges(k, a, b, valid_a),
            2 => self.xequal_each(k, a, b, valid_a, valid_b),
            _ => self.xequal_ordered(k, a, b, valid_a, valid_b),
        };
        // Equal any and ranges are false where b is invalid; equal each
        // and equal ordered have decided those lanes themselves.
        let res = if k.aggregation < 2 { self.bin(Opcode::And, Type::V128, res, valid_b) } else { res };
        let res = match k.polarity {
            1 => self.un(Opcode::Not, Type::V128, res),
            3 => self.bin(Opcode::Xor, Type::V128, res, valid_b),
            _ => res,
        };
        let bits = self.xelement_bits(k, res);
        if index {
            let i = self.xfirst_or_last(k, bits);
            self.gpr_set(Register::ECX, i);
        } else {
            let m = if k.bit6 { res } else { self.xzero_ext(bits, Type::I32) };
            self.xset_xmm(0, m);
        }
        let zero = self.c(Type::I32, 0);
        let cf = self.icmp(IntCond::Ne, Type::I32, bits, zero);
        let of = self.un(Opcode::Trunc, Type::I1, bits);
        self.b.set(Reg::CF, cf);
        self.b.set(Reg::ZF, short_b);
        self.b.set(Reg::SF, short_a);
        self.b.set(Reg::OF, of);
        let clear = self.c(Type::I1, 0);
        self.b.set(Reg::AF, clear);
        self.b.set(Reg::PF, clear);
    }

    /// Which elements of `v` are valid (all-ones lanes) and whether any
    /// is not (an i1): those before the first null element, or the first
    /// `|len|` (at most all), `len` being `reg` (eax/edx, or rax/rdx with
    /// REX.W).
    fn xvalid(&mut self, k: Control, explicit: Option<Type>, v: Value, reg: Register) -> (Value, Value) {
        let (ty, n) = (shape(k.lane()), k.n());
        let Some(t) = explicit else {
            let zero = self.xsplat(ty, 0);
            let null = self.xlanes_cmp(IntCond::Eq, ty, v, zero);
            // Lane j: a null at or below j (a prefix OR, doubling the reach).
            let mut seen = null;
            let mut reach = 1;
            while reach < n {
                let up = self.b.unary_imm(Opcode::ByteShl, Type::V128, seen, reach * k.lane().bits() as u16 / 8);
                seen = self.bin(Opcode::Or, Type::V128, seen, up);
                reach *= 2;
            }
            let valid = self.un(Opcode::Not, Type::V128, seen);
            let none = self.xis_zero(null);
            let short = self.un(Opcode::Not, Type::I1, none);
            return (valid, short);
        };
        let reg = if t == Type::I64 { reg } else { reg.full_register32() };
        let x = self.gpr_get(reg);
        let zero = self.c(t, 0);
        let neg = self.bin(Opcode::Sub, t, zero, x);
        let is_neg = self.icmp(IntCond::Slt, t, x, zero);
        let abs = self.select(t, is_neg, neg, x);
        let count = self.c(t, u64::from(n));
        let len = self.bin(Opcode::Umin, t, abs, count);
        let short = self.icmp(IntCond::Ult, t, len, count);
        let len = self.un(Opcode::Trunc, k.lane(), len);
        let len = self.un(Opcode::Splat, ty, len);
        let bits = k.lane().bits();
        let iota = self.xconst((0..u128::from(n)).fold(0, |acc, i| acc | i << (i * u128::from(bits))));
        let valid = self.xlanes_cmp(IntCond::Ult, ty, iota, len);
        (valid, short)
    }

    /// The lane-wise compare `a cond b` of shape `ty`: all-ones where it holds.
    fn xlanes_cmp(&mut self, cond: IntCond, ty: Type, a: Value, b: Value) -> Value {
        self.b.push(InstData { op: Opcode::Icmp, ty, aux: cond as u16, args: [a.0, b.0, 0] })
    }

    /// Element `i` of `v` in every lane.
    fn xbroadcast(&mut self, k: Control, v: Value, i: u16) -> Value {
        let x = self.xlane(v, k.lane(), i);
        self.un(Opcode::Splat, shape(k.lane()), x)
    }

    /// Equal any: b[j] equals some valid a[i]; b[j] itself valid.
    fn xequal_any(&mut self, k: Control, a: Value, b: Value, valid_a: Value) -> Value {
        let ty = shape(k.lane());
        let mut any = self.xsplat(Type::I64X2, 0);
        for i in 0..k.n() {
            let ai = self.xbroadcast(k, a, i);
            let eq = self.xlanes_cmp(IntCond::Eq, ty, b, ai);
            let vi = self.xbroadcast(k, valid_a, i);
            let hit = self.bin(Opcode::And, Type::V128, eq, vi);
            any = self.bin(Opcode::Or, Type::V128, any, hit);
        }
        any
    }

    /// Ranges: a[2p] <= b[j] <= a[2p+1] for some pair p of valid
    /// elements; b[j] itself valid.
    fn xranges(&mut self, k: Control, a: Value, b: Value, valid_a: Value) -> Value {
        let ty = shape(k.lane());
        let (ge, le) = if k.signed { (IntCond::Sge, IntCond::Sle) } else { (IntCond::Uge, IntCond::Ule) };
        let mut any = self.xsplat(Type::I64X2, 0);
        for p in 0..k.n() / 2 {
            let lo = self.xbroadcast(k, a, 2 * p);
            let hi = self.xbroadcast(k, a, 2 * p + 1);
            let above = self.xlanes_cmp(ge, ty, b, lo);
            let below = self.xlanes_cmp(le, ty, b, hi);
            let inside = self.bin(Opcode::And, Type::V128, above, below);
            // The valid elements are a prefix: a[2p+1] valid covers a[2p].
            let vp = self.xbroadcast(k, valid_a, 2 * p + 1);
            let hit = self.bin(Opcode::And, Type::V128, inside, vp);
            any = self.bin(Opcode::Or, Type::V128, any, hit);
        }
        any
    }

    /// Equal each: a[j] == b[j] where both are valid, true where neither
    /// is, false where one is.
    fn xequal_each(&mut self, k: Control, a: Value, b: Value, valid_a: Value, valid_b: Value) -> Value {
        let eq = self.xlanes_cmp(IntCond::Eq, shape(k.lane()), a, b);
        let both = self.bin(Opcode::And, Type::V128, valid_a, valid_b);
        let hit = self.bin(Opcode::And, Type::V128, eq, both);
        let either = self.bin(Opcode::Or, Type::V128, valid_a, valid_b);
        let neither = self.un(Opcode::Not, Type::V128, either);
        self.bin(Opcode::Or, Type::V128, hit, neither)
    }

    /// Equal ordered: the valid elements of a occur in b from j on, for
    /// each i: a[i] invalid, or j + i past the last element, or b[j + i]
    /// valid and equal to a[i].
    fn xequal_ordered(&mut self, k: Control, a: Value, b: Value, valid_a: Value, valid_b: Value) -> Value {
        let ty = shape(k.lane());
        let bytes = k.lane().bits() as u16 / 8;
        let invalid_a = self.un(Opcode::Not, Type::V128, valid_a);
        let mut all = self.xsplat(Type::I64X2, u64::MAX);
        for i in 0..k.n() {
            let ai = self.xbroadcast(k, a, i);
            let bi = self.b.unary_imm(Opcode::ByteShr, Type::V128, b, i * bytes);
            let vbi = self.b.unary_imm(Opcode::ByteShr, Type::V128, valid_b, i * bytes);
            let eq = self.xlanes_cmp(IntCond::Eq, ty, bi, ai);
            let mut term = self.bin(Opcode::And, Type::V128, eq, vbi);
            let skip = self.xbroadcast(k, invalid_a, i);
            term = self.bin(Opcode::Or, Type::V128, term, skip);
            if i > 0 {
                let past = self.xconst(!0u128 << (128 - 8 * u32::from(i * bytes)));
                term = self.bin(Opcode::Or, Type::V128, term, past);
            }
            all = self.bin(Opcode::And, Type::V128, all, term);
        }
        all
    }

    /// The result's elements as the bits of an i32 (bit j: element j).
    fn xelement_bits(&mut self, k: Control, res: Value) -> Value {
        let bytes = if k.words {
            let zero = self.xsplat(Type::I64X2, 0);
            self.bin(Opcode::NarrowS, Type::I16X8, res, zero)
        } else {
            res
        };
        self.un(Opcode::Movmsk, Type::I8X16, bytes)
    }

    /// The index of the least (most, with imm8 bit 6) significant set bit
    /// of `bits`, or the element count when none is set.
    fn xfirst_or_last(&mut self, k: Control, bits: Value) -> Value {
        let n = u64::from(k.n());
        if !k.bit6 {
            let stop = self.c(Type::I32, 1 << n);
            let stopped = self.bin(Opcode::Or, Type::I32, bits, stop);
            return self.un(Opcode::Ctz, Type::I32, stopped);
        }
        let lz = self.un(Opcode::Clz, Type::I32, bits);
        let top = self.c(Type::I32, 31);
        let last = self.bin(Opcode::Sub, Type::I32, top, lz);
        let zero = self.c(Type::I32, 0);
        let none = self.icmp(IntCond::Eq, Type::I32, bits, zero);
        let count = self.c(Type::I32, n);
        self.select(Type::I32, none, count, last)
    }
}
