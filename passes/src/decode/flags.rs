//! Status flag computation: the exact x86 definitions of CF, PF, AF, ZF,
//! SF and OF for each class of arithmetic. Every flag is computed and set;
//! dead-flag elimination removes what nothing reads.

use aarchx_ir::{IntCond, Opcode, Reg, Type, Value};

use super::operand::L;

/// Which arithmetic produced a result, for its flags.
#[derive(Clone, Copy)]
pub enum Arith {
    /// r = a + b (+ carry_in)
    Add,
    /// r = a - b (- borrow_in)
    Sub,
}

impl L<'_, '_> {
    /// Sets ZF, SF and PF from result `r`.
    pub fn flags_zsp(&mut self, ty: Type, r: Value) {
        let zero = self.c(ty, 0);
        let zf = self.icmp(IntCond::Eq, ty, r, zero);
        let sf = self.icmp(IntCond::Slt, ty, r, zero);
        let pf = self.un(Opcode::Parity, ty, r);
        self.b.set(Reg::ZF, zf);
        self.b.set(Reg::SF, sf);
        self.b.set(Reg::PF, pf);
    }

    /// Flags of a logical operation: CF = OF = 0; AF is undefined and
    /// cleared (as the processors this machine has do).
    pub fn flags_logic(&mut self, ty: Type, r: Value) {
        let f = self.c(Type::I1, 0);
        self.b.set(Reg::CF, f);
        self.b.set(Reg::OF, f);
        self.b.set(Reg::AF, f);
        self.flags_zsp(ty, r);
    }

    /// AF: carry out of bit 3, `((a ^ b ^ r) >> 4) & 1`.
    fn flag_af(&mut self, ty: Type, a: Value, b: Value, r: Value) {
        let x = self.bin(Opcode::Xor, ty, a, b);
        let x = self.bin(Opcode::Xor, ty, x, r);
        let af = self.bit(ty, x, 4);
        self.b.set(Reg::AF, af);
    }

    /// OF of an addition or subtraction.
    fn flag_of(&mut self, kind: Arith, ty: Type, a: Value, b: Value, r: Value) {
        // add: (a ^ r) & (b ^ r); sub: (a ^ b) & (a ^ r); sign bit.
        let (x, y) = match kind {
            Arith::Add => (self.bin(Opcode::Xor, ty, a, r), self.bin(Opcode::Xor, ty, b, r)),
            Arith::Sub => (self.bin(Opcode::Xor, ty, a, b), self.bin(Opcode::Xor, ty, a, r)),
        };
        let both = self.bin(Opcode::And, ty, x, y);
        let of = self.bit(ty, both, ty.bits() - 1);
        self.b.set(Reg::OF, of);
    }

    /// All six flags of `r = a ± b ± carry`, where `carry` is the incoming
    /// CF of adc/sbb (an i1) or `None`. `set_cf` is false for inc/dec.
    pub fn flags_arith(
        &mut self,
        kind: Arith,
        ty: Type,
        a: Value,
        b: Value,
        r: Value,
        carry: Option<Value>,
        set_cf: bool,
    ) {
        if set_cf {
            let cf = match kind {
                Arith::Add => {
                    let lt = self.icmp(IntCond::Ult, ty, r, a);
                    match carry {
                        None => lt,
                        Some(c) => {
                            let eq = self.icmp(IntCond::Eq, ty, r, a);
                            let eq_c = self.bin(Opcode::And, Type::I1, eq, c);
                            self.bin(Opcode::Or, Type::I1, lt, eq_c)
                        }
                    }
                }
                Arith::Sub => {
                    let lt = self.icmp(IntCond::Ult, ty, a, b);
                    match carry {
                        None => lt,
                        Some(c) => {
                            let eq = self.icmp(IntCond::Eq, ty, a, b);
                            let eq_c = self.bin(Opcode::And, Type::I1, eq, c);
                            self.bin(Opcode::Or, Type::I1, lt, eq_c)
                        }
                    }
                }
            };
            self.b.set(Reg::CF, cf);
        }
        self.flag_of(kind, ty, a, b, r);
        self.flag_af(ty, a, b, r);
        self.flags_zsp(ty, r);
    }
}
