//! Control flow: condition codes, jcc/setcc/cmovcc, jmp, call, ret, loop
//! forms. An indirect branch ends the region with an exit the dispatcher
//! (or the target cache) follows; a conditional branch leaves for its
//! taken target with an exit (block chaining follows it) and hands the
//! fall-through, like a direct `jmp` or `call` and a `ret` their transfer,
//! to the decode pass, which may follow it within the region (see
//! `super::Decode`).

use aarchx_ir::{ExitKind, IntCond, Opcode, Reg, Type, Value};
use iced_x86::{ConditionCode, OpKind, Register};

use super::lift::Outcome;
use super::operand::L;

impl L<'_, '_> {
    /// The instruction's condition code evaluated on the flags, as an i1.
    pub fn condition(&mut self, cc: ConditionCode) -> Value {
        use ConditionCode as C;
        let get = |s: &mut Self, r: Reg| s.b.get(r);
        let (v, negate) = match cc {
            C::o | C::no => (get(self, Reg::OF), cc == C::no),
            C::b | C::ae => (get(self, Reg::CF), cc == C::ae),
            C::e | C::ne => (get(self, Reg::ZF), cc == C::ne),
            C::be | C::a => {
                let cf = get(self, Reg::CF);
                let zf = get(self, Reg::ZF);
                (self.bin(Opcode::Or, Type::I1, cf, zf), cc == C::a)
            }
            C::s | C::ns => (get(self, Reg::SF), cc == C::ns),
            C::p | C::np => (get(self, Reg::PF), cc == C::np),
            C::l | C::ge => {
                let sf = get(self, Reg::SF);
                let of = get(self, Reg::OF);
                (self.bin(Opcode::Xor, Type::I1, sf, of), cc == C::ge)
            }
            C::le | C::g => {
                let sf = get(self, Reg::SF);
                let of = get(self, Reg::OF);
                let zf = get(self, Reg::ZF);
                let lt = self.bin(Opcode::Xor, Type::I1, sf, of);
                (self.bin(Opcode::Or, Type::I1, zf, lt), cc == C::g)
            }
            C::None => (self.c(Type::I1, 1), false),
        };
        if negate {
            self.un(Opcode::Not, Type::I1, v)
        } else {
            v
        }
    }

    /// Leaves for `taken` if `cond` holds; the fall-through goes on in a
    /// block of its own.
    fn branch(&mut self, cond: Value, taken: u64) -> Outcome {
        let t = self.b.create_block();
        let f = self.b.create_block();
        self.b.brif(cond, t, f);
        self.b.switch_to(t);
        self.b.exit(ExitKind::Jump, taken);
        self.b.switch_to(f);
        Outcome::Branch
    }

    pub fn jcc(&mut self) -> Outcome {
        let c = self.condition(self.i.condition_code());
        self.branch(c, self.i.near_branch_target())
    }

    pub fn setcc(&mut self) -> Outcome {
        let c = self.condition(self.i.condition_code());
        let v = self.un(Opcode::Zext, Type::I8, c);
        self.write(0, v);
        Outcome::Next
    }

    /// cmovcc: the destination is written either way (so a 32-bit
    /// destination is zero-extended even when the condition fails).
    pub fn cmovcc(&mut self) -> Outcome {
        let ty = self.op_type(0);
        let c = self.condition(self.i.condition_code());
        let src = self.read(1, ty);
        let old = self.read(0, ty);
        let v = self.select(ty, c, src, old);
        self.write(0, v);
        Outcome::Next
    }

    /// The target of an indirect jmp or call, or `None` for a direct one.
    fn indirect_target(&mut self) -> Option<Value> {
        match self.i.op_kind(0) {
            OpKind::NearBranch64 | OpKind::NearBranch32 | OpKind::NearBranch16 => None,
            _ => Some(self.read(0, Type::I64)),
        }
    }

    pub fn jmp(&mut self) -> Outcome {
        match self.indirect_target() {
            Some(t) => {
                self.b.exit_indirect(ExitKind::Jump, t);
                Outcome::End
            }
            None => Outcome::Jump(self.i.near_branch_target()),
        }
    }

    pub fn call(&mut self) -> Outcome {
        let target = self.indirect_target();
        let ret = self.b.guest_addr(self.i.next_ip());
        self.push(ret);
        match target {
            Some(t) => {
                self.b.exit_indirect(ExitKind::Call, t);
                Outcome::End
            }
            None => Outcome::Call { target: self.i.near_branch_target(), ret: self.i.next_ip() },
        }
    }

    /// ret and ret imm16.
    pub fn ret(&mut self) -> Outcome {
        let target = self.pop();
        if self.i.op_count() == 1 {
            let sp = self.b.get(Reg::RSP);
            let n = self.c(Type::I64, self.i.immediate(0));
            let nsp = self.bin(Opcode::Add, Type::I64, sp, n);
            self.b.set(Reg::RSP, nsp);
        }
        Outcome::Ret(target)
    }

    /// loop, loope, loopne: decrement rcx (no flags) and branch.
    pub fn loop_(&mut self, cc: ConditionCode) -> Outcome {
        let rcx = self.b.get(Reg::RCX);
        let one = self.c(Type::I64, 1);
        let n = self.bin(Opcode::Sub, Type::I64, rcx, one);
        self.b.set(Reg::RCX, n);
        let zero = self.c(Type::I64, 0);
        let mut c = self.icmp(IntCond::Ne, Type::I64, n, zero);
        if cc != ConditionCode::None {
            let z = self.condition(cc);
            c = self.bin(Opcode::And, Type::I1, c, z);
        }
        self.branch(c, self.i.near_branch_target())
    }

    /// jrcxz / jecxz.
    pub fn jrcxz(&mut self) -> Outcome {
        let reg = if self.i.mnemonic() == iced_x86::Mnemonic::Jecxz { Register::ECX } else { Register::RCX };
        let v = self.gpr_get(reg);
        let ty = if reg == Register::ECX { Type::I32 } else { Type::I64 };
        let zero = self.c(ty, 0);
        let c = self.icmp(IntCond::Eq, ty, v, zero);
        self.branch(c, self.i.near_branch_target())
    }
}
