//! Integer data movement and arithmetic: mov and its extensions, lea, the
//! two-operand ALU group, inc/dec/neg/not, shifts and rotates, exchange
//! and atomic forms, bit tests and scans, byte swap, sign extensions.

use aarchx_ir::{IntCond, Opcode, Reg, RmwOp, Type, Value};
use iced_x86::{Mnemonic, OpKind};

use super::flags::Arith;
use super::lift::Outcome;
use super::operand::{int_type, L};

impl L<'_, '_> {
    pub fn mov(&mut self) -> Outcome {
        let ty = self.op_type(0);
        let v = self.read(1, ty);
        self.write(0, v);
        Outcome::Next
    }

    /// movzx, movsx, movsxd (and mov r32, r/m32 via movsxd's 32-bit form).
    pub fn extend(&mut self, signed: bool) -> Outcome {
        let src = self.op_type(1);
        let dst = self.op_type(0);
        let v = self.read(1, src);
        let w = if src == dst {
            v
        } else if signed {
            self.un(Opcode::Sext, dst, v)
        } else {
            self.un(Opcode::Zext, dst, v)
        };
        self.write(0, w);
        Outcome::Next
    }

    pub fn lea(&mut self) -> Outcome {
        let ty = self.op_type(0);
        let a = self.addr();
        let v = self.resize(a, Type::I64, ty);
        self.write(0, v);
        Outcome::Next
    }

    /// add, adc, sub, sbb, cmp, and, or, xor, test.
    pub fn alu2(&mut self, m: Mnemonic) -> Outcome {
        let ty = self.op_type(0);
        let lock = self.i.has_lock_prefix() && self.is_mem(0);
        let b = self.read(1, ty);
        if lock {
            if let Some(rmw) = match m {
                Mnemonic::Add | Mnemonic::Sub => Some(RmwOp::Add),
                Mnemonic::And => Some(RmwOp::And),
                Mnemonic::Or => Some(RmwOp::Or),
                Mnemonic::Xor => Some(RmwOp::Xor),
                _ => None,
            } {
                let addr = self.addr();
                let operand = if m == Mnemonic::Sub { self.un(Opcode::Neg, ty, b) } else { b };
                let a = self.b.atomic_rmw(ty, rmw, addr, operand);
                self.alu2_result(m, ty, a, b, None);
                return Outcome::Next;
            }
        }
        let (a, addr) = self.read_rmw(0);
        let carry = self.carry_in(m);
        if let Some(r) = self.alu2_result(m, ty, a, b, carry) {
            self.write_at(0, addr, r);
        }
        Outcome::Next
    }

    fn carry_in(&mut self, m: Mnemonic) -> Option<Value> {
        matches!(m, Mnemonic::Adc | Mnemonic::Sbb).then(|| self.b.get(Reg::CF))
    }

    /// Computes an ALU result and its flags; `None` for cmp and test, which
    /// write no result.
    fn alu2_result(&mut self, m: Mnemonic, ty: Type, a: Value, b: Value, carry: Option<Value>) -> Option<Value> {
        let with_carry = |s: &mut Self, op: Opcode, r: Value| match carry {
            Some(c) => {
                let cw = s.un(Opcode::Zext, ty, c);
                s.bin(op, ty, r, cw)
            }
            None => r,
        };
        match m {
            Mnemonic::Add | Mnemonic::Adc => {
                let r = self.bin(Opcode::Add, ty, a, b);
                let r = with_carry(self, Opcode::Add, r);
                self.flags_arith(Arith::Add, ty, a, b, r, carry, true);
                Some(r)
            }
            Mnemonic::Sub | Mnemonic::Sbb | Mnemonic::Cmp => {
                let r = self.bin(Opcode::Sub, ty, a, b);
                let r = with_carry(self, Opcode::Sub, r);
                self.flags_arith(Arith::Sub, ty, a, b, r, carry, true);
                (m != Mnemonic::Cmp).then_some(r)
            }
            _ => {
                let op = match m {
                    Mnemonic::And | Mnemonic::Test => Opcode::And,
                    Mnemonic::Or => Opcode::Or,
                    _ => Opcode::Xor,
                };
                let r = self.bin(op, ty, a, b);
                self.flags_logic(ty, r);
                (m != Mnemonic::Test).then_some(r)
            }
        }
    }

    /// inc, dec (CF unchanged), neg, not (no flags).
    pub fn alu1(&mut self, m: Mnemonic) -> Outcome {
        let ty = self.op_type(0);
        if self.i.has_lock_prefix() && self.is_mem(0) && matches!(m, Mnemonic::Inc | Mnemonic::Dec) {
            let one = self.c(ty, if m == Mnemonic::Inc { 1 } else { u64::MAX });
            let addr = self.addr();
            let a = self.b.atomic_rmw(ty, RmwOp::Add, addr, one);
            let r = self.bin(Opcode::Add, ty, a, one);
            let (kind, b) = self.inc_dec_operands(m, ty);
            self.flags_arith(kind, ty, a, b, r, None, false);
            return Outcome::Next;
        }
        let (a, addr) = self.read_rmw(0);
        let r = match m {
            Mnemonic::Inc | Mnemonic::Dec => {
                let (kind, b) = self.inc_dec_operands(m, ty);
                let op = if m == Mnemonic::Inc { Opcode::Add } else { Opcode::Sub };
                let r = self.bin(op, ty, a, b);
                self.flags_arith(kind, ty, a, b, r, None, false);
                r
            }
            Mnemonic::Neg => {
                let zero = self.c(ty, 0);
                let r = self.un(Opcode::Neg, ty, a);
                self.flags_arith(Arith::Sub, ty, zero, a, r, None, true);
                r
            }
            _ => self.un(Opcode::Not, ty, a),
        };
        self.write_at(0, addr, r);
        Outcome::Next
    }

    fn inc_dec_operands(&mut self, m: Mnemonic, ty: Type) -> (Arith, Value) {
        let one = self.c(ty, 1);
        (if m == Mnemonic::Inc { Arith::Add } else { Arith::Sub }, one)
    }

    /// The masked count of a shift whose count is operand `n` (cl or an
    /// immediate; an implicit 1 when absent), and whether it is zero (then
    /// no flag changes): `None` when it is a constant that is not zero.
    fn shift_count(&mut self, n: u32, ty: Type) -> (Value, Option<Value>) {
        let width_mask: u64 = if ty.bits() == 64 { 63 } else { 31 };
        let constant = if self.i.op_count() <= n {
            Some(1)
        } else if self.i.op_kind(n) == OpKind::Register {
            None
        } else {
            Some(self.i.immediate(n))
        };
        if let Some(c) = constant.map(|c| c & width_mask).filter(|c| *c != 0) {
            return (self.c(Type::I8, c), None);
        }
        let raw = match constant {
            Some(c) => self.c(Type::I8, c),
            None => {
                let cl = self.gpr_get(self.i.op_register(n));
                self.resize(cl, self.op_type(n), Type::I8)
            }
        };
        let mask = self.c(Type::I8, width_mask);
        let count = self.bin(Opcode::And, Type::I8, raw, mask);
        let zero8 = self.c(Type::I8, 0);
        let none = self.icmp(IntCond::Eq, Type::I8, count, zero8);
        (count, Some(none))
    }

    /// A flag a shift writes: `v`, unless the count is zero (`none`).
    fn shift_flag(&mut self, reg: Reg, none: Option<Value>, v: Value) {
        let v = match none {
            Some(none) => {
                let old = self.b.get(reg);
                self.select(reg.ty().unwrap_or(Type::I1), none, old, v)
            }
            None => v,
        };
        self.b.set(reg, v);
    }

    /// A shift's flags: CF and OF as given, and unless `rotate`, ZF SF PF
    /// from the result and AF (undefined) cleared; all unchanged when the
    /// count is zero (`none`).
    fn shift_flags(&mut self, ty: Type, none: Option<Value>, r: Value, cf: Value, of: Value, rotate: bool) {
        self.shift_flag(Reg::CF, none, cf);
        self.shift_flag(Reg::OF, none, of);
        if !rotate {
            let zero = self.c(ty, 0);
            let zf = self.icmp(IntCond::Eq, ty, r, zero);
            let sf = self.icmp(IntCond::Slt, ty, r, zero);
            let pf = self.un(Opcode::Parity, ty, r);
            self.shift_flag(Reg::ZF, none, zf);
            self.shift_flag(Reg::SF, none, sf);
            self.shift_flag(Reg::PF, none, pf);
            let af = self.c(Type::I1, 0);
            self.shift_flag(Reg::AF, none, af);
        }
    }

    /// shl/sal, shr, sar, rol, ror with an immediate, cl or implicit 1 count.
    pub fn shift(&mut self, m: Mnemonic) -> Outcome {
        let ty = self.op_type(0);
        let bits = ty.bits();
        let (count, none) = self.shift_count(1, ty);
        let (a, addr) = self.read_rmw(0);
        let one8 = self.c(Type::I8, 1);
        let cm1 = self.bin(Opcode::Sub, Type::I8, count, one8);
        let (r, cf, of) = match m {
            Mnemonic::Shl | Mnemonic::Sal => {
                let r = self.bin(Opcode::Shl, ty, a, count);
                // CF: the last bit shifted out, bit (bits - count) of a.
                let before = self.bin(Opcode::Shl, ty, a, cm1);
                let cf = self.bit(ty, before, bits - 1);
                let msb = self.bit(ty, r, bits - 1);
                let of = self.bin(Opcode::Xor, Type::I1, msb, cf);
                (r, cf, of)
            }
            Mnemonic::Shr => {
                let r = self.bin(Opcode::Lshr, ty, a, count);
                let before = self.bin(Opcode::Lshr, ty, a, cm1);
                let cf = self.bit(ty, before, 0);
                let of = self.bit(ty, a, bits - 1);
                (r, cf, of)
            }
            Mnemonic::Sar => {
                let r = self.bin(Opcode::Ashr, ty, a, count);
                let before = self.bin(Opcode::Ashr, ty, a, cm1);
                let cf = self.bit(ty, before, 0);
                let of = self.c(Type::I1, 0);
                (r, cf, of)
            }
            Mnemonic::Rol => {
                let r = self.bin(Opcode::Rotl, ty, a, count);
                let cf = self.bit(ty, r, 0);
                let msb = self.bit(ty, r, bits - 1);
                let of = self.bin(Opcode::Xor, Type::I1, msb, cf);
                (r, cf, of)
            }
            _ => {
                let r = self.bin(Opcode::Rotr, ty, a, count);
                let cf = self.bit(ty, r, bits - 1);
                let next = self.bit(ty, r, bits - 2);
                let of = self.bin(Opcode::Xor, Type::I1, cf, next);
                (r, cf, of)
            }
        };
        self.write_at(0, addr, r);
        self.shift_flags(ty, none, r, cf, of, matches!(m, Mnemonic::Rol | Mnemonic::Ror));
        Outcome::Next
    }

    /// rcl / rcr: rotates through CF, of the width + 1 bits CF:dest. The
    /// count is masked as for the other rotates, then taken modulo
    /// width + 1 (which matters for 8 and 16 bits only); a masked count of
    /// zero changes no flag. CF is the last bit rotated out; OF (defined
    /// for a count of 1) is the result's sign xor CF after rcl, and before
    /// rcr the operand's sign xor CF.
    pub fn rotate_through_carry(&mut self, left: bool) -> Outcome {
        let ty = self.op_type(0);
        let bits = ty.bits();
        let wide = int_type(2 * bits as usize / 8);
        let (count, none) = self.shift_count(1, ty);
        let (a, addr) = self.read_rmw(0);
        let cf = self.b.get(Reg::CF);
        let t = if bits < 32 {
            let modulus = self.c(Type::I8, u64::from(bits) + 1);
            self.bin(Opcode::Urem, Type::I8, count, modulus)
        } else {
            count
        };
        // w = CF:a, width + 1 bits, in a type twice a's width.
        let cf_wide = self.un(Opcode::Zext, wide, cf);
        let at = self.c(Type::I8, u64::from(bits));
        let cf_top = self.bin(Opcode::Shl, wide, cf_wide, at);
        let a_wide = self.un(Opcode::Zext, wide, a);
        let w = self.bin(Opcode::Or, wide, cf_top, a_wide);
        let width1 = self.c(Type::I8, u64::from(bits) + 1);
        let back = self.bin(Opcode::Sub, Type::I8, width1, t);
        let (toward, away) = if left { (Opcode::Shl, Opcode::Lshr) } else { (Opcode::Lshr, Opcode::Shl) };
        let moved = self.bin(toward, wide, w, t);
        let wrapped = self.bin(away, wide, w, back);
        let rotated = self.bin(Opcode::Or, wide, moved, wrapped);
        let r = self.un(Opcode::Trunc, ty, rotated);
        let new_cf = self.bit(wide, rotated, bits);
        self.write_at(0, addr, r);
        let sign = self.bit(ty, if left { r } else { a }, bits - 1);
        let of = self.bin(Opcode::Xor, Type::I1, sign, if left { new_cf } else { cf });
        self.shift_flag(Reg::CF, none, new_cf);
        self.shift_flag(Reg::OF, none, of);
        Outcome::Next
    }

    /// shld / shrd: double-precision shifts through a double-width value.
    pub fn shift_double(&mut self, left: bool) -> Outcome {
        let ty = self.op_type(0);
        let bits = ty.bits();
        let wide = int_type(2 * ty.bits() as usize / 8);
        let (count, none) = self.shift_count(2, ty);
        let (a, addr) = self.read_rmw(0);
        let src = self.read(1, ty);
        let shift_bits = self.c(Type::I8, u64::from(bits));
        let one8 = self.c(Type::I8, 1);
        let cm1 = self.bin(Opcode::Sub, Type::I8, count, one8);
        let (r, cf) = if left {
            let w = self.bin(Opcode::Concat, wide, a, src);
            let shifted = self.bin(Opcode::Shl, wide, w, count);
            let hi = self.bin(Opcode::Lshr, wide, shifted, shift_bits);
            let r = self.un(Opcode::Trunc, ty, hi);
            let before = self.bin(Opcode::Shl, ty, a, cm1);
            (r, self.bit(ty, before, bits - 1))
        } else {
            let w = self.bin(Opcode::Concat, wide, src, a);
            let shifted = self.bin(Opcode::Lshr, wide, w, count);
            let r = self.un(Opcode::Trunc, ty, shifted);
            let before = self.bin(Opcode::Lshr, ty, a, cm1);
            (r, self.bit(ty, before, 0))
        };
        self.write_at(0, addr, r);
        let sa = self.bit(ty, a, bits - 1);
        let sr = self.bit(ty, r, bits - 1);
        let of = self.bin(Opcode::Xor, Type::I1, sa, sr);
        self.shift_flags(ty, none, r, cf, of, false);
        Outcome::Next
    }

    /// xchg: with a memory operand it is always atomic.
    pub fn xchg(&mut self) -> Outcome {
        let ty = self.op_type(0);
        if self.is_mem(0) || self.is_mem(1) {
            let r = if self.is_mem(0) { 1 } else { 0 };
            let v = self.read(r, ty);
            let addr = self.addr();
            let old = self.b.atomic_rmw(ty, RmwOp::Xchg, addr, v);
            self.write(r, old);
        } else {
            let a = self.read(0, ty);
            let b = self.read(1, ty);
            self.write(0, b);
            self.write(1, a);
        }
        Outcome::Next
    }

    /// xadd: dst = dst + src, src = old dst.
    pub fn xadd(&mut self) -> Outcome {
        let ty = self.op_type(0);
        let b = self.read(1, ty);
        let a = if self.is_mem(0) {
            let addr = self.addr();
            self.b.atomic_rmw(ty, RmwOp::Add, addr, b)
        } else {
            self.read(0, ty)
        };
        let r = self.bin(Opcode::Add, ty, a, b);
        self.flags_arith(Arith::Add, ty, a, b, r, None, true);
        self.write(1, a);
        if !self.is_mem(0) {
            self.write(0, r);
        }
        Outcome::Next
    }

    /// cmpxchg: compare the accumulator with dst; if equal dst = src, else
    /// the accumulator = dst. Flags as `cmp acc, dst`.
    pub fn cmpxchg(&mut self) -> Outcome {
        let ty = self.op_type(0);
        let acc_reg = match ty {
            Type::I8 => iced_x86::Register::AL,
            Type::I16 => iced_x86::Register::AX,
            Type::I32 => iced_x86::Register::EAX,
            _ => iced_x86::Register::RAX,
        };
        let acc = self.gpr_get(acc_reg);
        let src = self.read(1, ty);
        let old = if self.is_mem(0) {
            let addr = self.addr();
            self.b.ternary(Opcode::AtomicCas, ty, addr, acc, src)
        } else {
            self.read(0, ty)
        };
        let r = self.bin(Opcode::Sub, ty, acc, old);
        self.flags_arith(Arith::Sub, ty, acc, old, r, None, true);
        let eq = self.icmp(IntCond::Eq, ty, old, acc);
        // Failure: the accumulator receives the old value; success: it is
        // not written (a 32-bit accumulator keeps its upper half).
        self.gpr_set_unless(acc_reg, eq, old);
        // A register destination receives the source on success and is not
        // written at all on failure (not even zero-extended). After the
        // accumulator, so `cmpxchg ax, bx` (always equal) ends with bx.
        if !self.is_mem(0) {
            let ne = self.un(Opcode::Not, Type::I1, eq);
            self.gpr_set_unless(self.i.op_register(0), ne, src);
        }
        Outcome::Next
    }

    /// crc32 r32/r64, r/m8..64: the low 32 bits of the destination updated
    /// with the source's bytes (CRC-32C), zero-extended; no flags.
    pub fn crc32(&mut self) -> Outcome {
        let src_ty = self.op_type(1);
        let data = self.read(1, src_ty);
        let data = self.resize(data, src_ty, Type::I64);
        let acc = self.read(0, Type::I32);
        let bytes = (src_ty.bits() / 8) as u16;
        let r = self.b.binary_imm(Opcode::Crc32c, Type::I32, acc, data, bytes);
        let r = self.resize(r, Type::I32, self.op_type(0));
        self.write(0, r);
        Outcome::Next
    }

    /// cmpxchg16b m128: rdx:rax compared with the memory, rcx:rbx stored
    /// when equal (atomically, locked or not), rdx:rax loaded when not;
    /// only ZF is written. The 16-byte alignment #GP is not checked (as
    /// for movdqa). cmpxchg8b (no REX.W) is not lifted.
    pub fn cmpxchg16b(&mut self) -> Outcome {
        if self.i.memory_size().size() != 16 {
            return Outcome::Unsupported;
        }
        use iced_x86::Register as R;
        let pair = |l: &mut Self, hi: R, lo: R| {
            let h = l.gpr_get(hi);
            let lo = l.gpr_get(lo);
            l.bin(Opcode::Concat, Type::I128, h, lo)
        };
        let expected = pair(self, R::RDX, R::RAX);
        let new = pair(self, R::RCX, R::RBX);
        let addr = self.addr();
        let old = self.b.ternary(Opcode::AtomicCas, Type::I128, addr, expected, new);
        let eq = self.icmp(IntCond::Eq, Type::I128, old, expected);
        self.b.set(Reg::ZF, eq);
        let lo = self.un(Opcode::Trunc, Type::I64, old);
        let sixty_four = self.c(Type::I8, 64);
        let hi = self.bin(Opcode::Lshr, Type::I128, old, sixty_four);
        let hi = self.un(Opcode::Trunc, Type::I64, hi);
        self.gpr_set_unless(R::RAX, eq, lo);
        self.gpr_set_unless(R::RDX, eq, hi);
        Outcome::Next
    }

    /// Writes `v` to a GPR at its width, or leaves the whole 64-bit
    /// register untouched when `keep` (an i1) holds.
    fn gpr_set_unless(&mut self, reg: iced_x86::Register, keep: Value, v: Value) {
        let slot = Reg::gpr(reg.full_register().number() as u8);
        let before = self.b.get(slot);
        self.gpr_set(reg, v);
        let after = self.b.get(slot);
        let r = self.select(Type::I64, keep, before, after);
        self.b.set(slot, r);
    }

    pub fn bswap(&mut self) -> Outcome {
        let ty = self.op_type(0);
        let a = self.read(0, ty);
        let r = self.un(Opcode::Bswap, ty, a);
        self.write(0, r);
        Outcome::Next
    }

    /// bt, bts, btr, btc. With a register bit offset and a memory operand,
    /// the offset addresses memory beyond the operand (signed).
    pub fn bit_test(&mut self, m: Mnemonic) -> Outcome {
        let ty = self.op_type(0);
        let bits = u64::from(ty.bits());
        let reg_offset = self.i.op_kind(1) == OpKind::Register;
        let off = self.read(1, ty);
        let (a, addr) = if self.is_mem(0) && reg_offset {
            // Address = ea + (offset >> log2(bits)) * (bits / 8), signed.
            let ea = self.addr();
            let off64 = self.sext(off, ty, Type::I64);
            let sh = self.c(Type::I8, u64::from(bits.trailing_zeros()));
            let word = self.bin(Opcode::Ashr, Type::I64, off64, sh);
            let sc = self.c(Type::I8, u64::from((bits / 8).trailing_zeros()));
            let bytes = self.bin(Opcode::Shl, Type::I64, word, sc);
            let at = self.bin(Opcode::Add, Type::I64, ea, bytes);
            (self.b.load(ty, at), Some(at))
        } else {
            self.read_rmw(0)
        };
        let mask = self.c(ty, bits - 1);
        let n = self.bin(Opcode::And, ty, off, mask);
        let shifted = self.bin(Opcode::Lshr, ty, a, n);
        let cf = self.un(Opcode::Trunc, Type::I1, shifted);
        self.b.set(Reg::CF, cf);
        let one = self.c(ty, 1);
        let bit = self.bin(Opcode::Shl, ty, one, n);
        let r = match m {
            Mnemonic::Bts => Some(self.bin(Opcode::Or, ty, a, bit)),
            Mnemonic::Btr => Some(self.bin(Opcode::AndNot, ty, a, bit)),
            Mnemonic::Btc => Some(self.bin(Opcode::Xor, ty, a, bit)),
            _ => None,
        };
        if let Some(r) = r {
            match addr {
                Some(at) => self.b.store(ty, at, r),
                None => self.write(0, r),
            }
        }
        Outcome::Next
    }

    /// bsf, bsr (destination unchanged and ZF set for a zero source),
    /// tzcnt, lzcnt, popcnt.
    pub fn bit_scan(&mut self, m: Mnemonic) -> Outcome {
        let ty = self.op_type(0);
        let src = self.read(1, ty);
        let zero = self.c(ty, 0);
        let is_zero = self.icmp(IntCond::Eq, ty, src, zero);
        let f = self.c(Type::I1, 0);
        match m {
            Mnemonic::Bsf | Mnemonic::Bsr => {
                let idx = if m == Mnemonic::Bsf {
                    self.un(Opcode::Ctz, ty, src)
                } else {
                    let lz = self.un(Opcode::Clz, ty, src);
                    let top = self.c(ty, u64::from(ty.bits() - 1));
                    self.bin(Opcode::Sub, ty, top, lz)
                };
                // A zero source leaves the whole register unchanged (a
                // 32-bit destination is not zero-extended either).
                self.gpr_set_unless(self.i.op_register(0), is_zero, idx);
                self.b.set(Reg::ZF, is_zero);
                // CF, OF, SF, AF, PF are undefined: these CPUs clear them
                // except as computed below, which the oracle masks.
                self.b.set(Reg::CF, f);
                self.b.set(Reg::OF, f);
                self.b.set(Reg::SF, f);
                self.b.set(Reg::AF, f);
                let pf = self.un(Opcode::Parity, ty, idx);
                self.b.set(Reg::PF, pf);
            }
            Mnemonic::Tzcnt | Mnemonic::Lzcnt => {
                let r = self.un(if m == Mnemonic::Tzcnt { Opcode::Ctz } else { Opcode::Clz }, ty, src);
                self.write(0, r);
                self.b.set(Reg::CF, is_zero);
                let rz = self.icmp(IntCond::Eq, ty, r, zero);
                self.b.set(Reg::ZF, rz);
                self.b.set(Reg::OF, f);
                self.b.set(Reg::SF, f);
                self.b.set(Reg::AF, f);
                self.b.set(Reg::PF, f);
            }
            _ => {
                let r = self.un(Opcode::Popcnt, ty, src);
                self.write(0, r);
                self.b.set(Reg::ZF, is_zero);
                for reg in [Reg::CF, Reg::OF, Reg::SF, Reg::AF, Reg::PF] {
                    self.b.set(reg, f);
                }
            }
        }
        Outcome::Next
    }

    /// cbw/cwde/cdqe (sign-extend the accumulator in place) and
    /// cwd/cdq/cqo (into the data register).
    pub fn sign_extend_acc(&mut self, m: Mnemonic) -> Outcome {
        use iced_x86::Register as R;
        let (src, dst) = match m {
            Mnemonic::Cbw => (R::AL, R::AX),
            Mnemonic::Cwde => (R::AX, R::EAX),
            Mnemonic::Cdqe => (R::EAX, R::RAX),
            Mnemonic::Cwd => (R::AX, R::DX),
            Mnemonic::Cdq => (R::EAX, R::EDX),
            _ => (R::RAX, R::RDX),
        };
        let v = self.gpr_get(src);
        let sty = int_type(src.size());
        let dty = int_type(dst.size());
        let r = if matches!(m, Mnemonic::Cwd | Mnemonic::Cdq | Mnemonic::Cqo) {
            let s = self.c(Type::I8, u64::from(sty.bits() - 1));
            self.bin(Opcode::Ashr, sty, v, s)
        } else {
            self.un(Opcode::Sext, dty, v)
        };
        self.gpr_set(dst, r);
        Outcome::Next
    }
}
