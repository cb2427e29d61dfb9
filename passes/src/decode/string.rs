//! String instructions: movs, stos, lods, cmps, scas, with rep, repe and
//! repne prefixes. A repeated instruction becomes a loop inside the region;
//! the direction flag picks the step's sign.

use aarchx_ir::{IntCond, Opcode, Reg, Type};
use iced_x86::Register;

use super::flags::Arith;
use super::lift::Outcome;
use super::operand::{int_type, L};

/// The string operations.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum StrOp {
    Movs,
    Stos,
    Lods,
    Cmps,
    Scas,
}

fn accumulator(ty: Type) -> Register {
    match ty {
        Type::I8 => Register::AL,
        Type::I16 => Register::AX,
        Type::I32 => Register::EAX,
        _ => Register::RAX,
    }
}

impl L<'_, '_> {
    pub fn string(&mut self, op: StrOp) -> Outcome {
        let ty = int_type(self.i.memory_size().size());
        let rep = self.i.has_rep_prefix() || self.i.has_repne_prefix();
        if !rep {
            self.string_step(op, ty);
            return Outcome::Next;
        }
        let head = self.b.create_block();
        let body = self.b.create_block();
        let done = self.b.create_block();
        self.b.jump(head);
        self.b.switch_to(head);
        let rcx = self.b.get(Reg::RCX);
        let zero = self.c(Type::I64, 0);
        let empty = self.icmp(IntCond::Eq, Type::I64, rcx, zero);
        self.b.brif(empty, done, body);
        self.b.switch_to(body);
        self.string_step(op, ty);
        let rcx = self.b.get(Reg::RCX);
        let one = self.c(Type::I64, 1);
        let n = self.bin(Opcode::Sub, Type::I64, rcx, one);
        self.b.set(Reg::RCX, n);
        if matches!(op, StrOp::Cmps | StrOp::Scas) {
            // repe continues while ZF is set, repne while it is clear.
            let zf = self.b.get(Reg::ZF);
            let go = if self.i.has_repne_prefix() { self.un(Opcode::Not, Type::I1, zf) } else { zf };
            self.b.brif(go, head, done);
        } else {
            self.b.jump(head);
        }
        self.b.switch_to(done);
        Outcome::Next
    }

    /// One iteration: the access, then rsi/rdi stepped by ±size.
    fn string_step(&mut self, op: StrOp, ty: Type) {
        let rsi = self.b.get(Reg::RSI);
        let rdi = self.b.get(Reg::RDI);
        match op {
            StrOp::Movs => {
                let v = self.b.load(ty, rsi);
                self.b.store(ty, rdi, v);
            }
            StrOp::Stos => {
                let v = self.gpr_get(accumulator(ty));
                self.b.store(ty, rdi, v);
            }
            StrOp::Lods => {
                let v = self.b.load(ty, rsi);
                self.gpr_set(accumulator(ty), v);
            }
            StrOp::Cmps => {
                let a = self.b.load(ty, rsi);
                let b = self.b.load(ty, rdi);
                let r = self.bin(Opcode::Sub, ty, a, b);
                self.flags_arith(Arith::Sub, ty, a, b, r, None, true);
            }
            StrOp::Scas => {
                let a = self.gpr_get(accumulator(ty));
                let b = self.b.load(ty, rdi);
                let r = self.bin(Opcode::Sub, ty, a, b);
                self.flags_arith(Arith::Sub, ty, a, b, r, None, true);
            }
        }
        let df = self.b.get(Reg::DF);
        let size = u64::from(ty.bits() / 8);
        let up = self.c(Type::I64, size);
        let down = self.c(Type::I64, size.wrapping_neg());
        let step = self.select(Type::I64, df, down, up);
        if matches!(op, StrOp::Movs | StrOp::Lods | StrOp::Cmps) {
            let n = self.bin(Opcode::Add, Type::I64, rsi, step);
            self.b.set(Reg::RSI, n);
        }
        if op != StrOp::Lods {
            let n = self.bin(Opcode::Add, Type::I64, rdi, step);
            self.b.set(Reg::RDI, n);
        }
    }
}
