//! Stack, flag-register and system instructions: push/pop/leave,
//! pushf/popf, lahf/sahf, flag set/clear, syscall, cpuid, rdtsc, the
//! control-word loads and stores, fxsave/fxrstor, and the traps (ud2,
//! int3, hlt).

use aarchx_ir::cond::Helper;
use aarchx_ir::{ExitKind, Opcode, Reg, TrapKind, Type, Value};
use iced_x86::{Mnemonic, Register};

use super::lift::Outcome;
use super::operand::{int_type, L};

/// RFLAGS bit positions of cf, pf, af, zf, sf, of, df.
const FLAG_BITS: [(Reg, u32); 7] =
    [(Reg::CF, 0), (Reg::PF, 2), (Reg::AF, 4), (Reg::ZF, 6), (Reg::SF, 7), (Reg::OF, 11), (Reg::DF, 10)];

impl L<'_, '_> {
    /// The operand size of push/pop in bytes: 2 with the 0x66 prefix, else 8.
    fn stack_op_size(&self) -> usize {
        match self.i.op_kind(0) {
            iced_x86::OpKind::Immediate16 | iced_x86::OpKind::Immediate8to16 => 2,
            iced_x86::OpKind::Register | iced_x86::OpKind::Memory => self.op_size(0),
            _ => 8,
        }
    }

    pub fn push_op(&mut self) -> Outcome {
        let ty = int_type(self.stack_op_size());
        let v = self.read(0, ty);
        self.push_sized(ty, v);
        Outcome::Next
    }

    pub fn pop_op(&mut self) -> Outcome {
        let ty = int_type(self.stack_op_size());
        let v = self.pop_sized(ty);
        self.write(0, v);
        Outcome::Next
    }

    pub fn leave(&mut self) -> Outcome {
        let rbp = self.b.get(Reg::RBP);
        if self.i.code() == iced_x86::Code::Leavew {
            // rsp = rbp, then a 16-bit pop into bp (the rest of rbp stays).
            self.b.set(Reg::RSP, rbp);
            let v = self.pop_sized(Type::I16);
            self.gpr_set(Register::BP, v);
            return Outcome::Next;
        }
        self.b.set(Reg::RSP, rbp);
        let v = self.pop();
        self.b.set(Reg::RBP, v);
        Outcome::Next
    }

    /// The given flags packed into their RFLAGS bit positions, plus `base`.
    fn pack_flags(&mut self, ty: Type, which: &[(Reg, u32)], base: u64) -> Value {
        let mut acc = self.c(ty, base);
        for (reg, bit) in which {
            let f = self.b.get(*reg);
            let w = self.un(Opcode::Zext, ty, f);
            let s = self.c(Type::I8, u64::from(*bit));
            let placed = self.bin(Opcode::Shl, ty, w, s);
            acc = self.bin(Opcode::Or, ty, acc, placed);
        }
        acc
    }

    fn unpack_flags(&mut self, ty: Type, v: Value, which: &[(Reg, u32)]) {
        for (reg, bit) in which {
            let f = self.bit(ty, v, *bit);
            self.b.set(*reg, f);
        }
    }

    pub fn pushf(&mut self) -> Outcome {
        // Bit 1 is always set; IF (bit 9) reads as set in user mode.
        let v = self.pack_flags(Type::I64, &FLAG_BITS, 0x202);
        self.push(v);
        Outcome::Next
    }

    pub fn popf(&mut self) -> Outcome {
        let v = self.pop();
        self.unpack_flags(Type::I64, v, &FLAG_BITS);
        Outcome::Next
    }

    /// lahf: AH = SF ZF 0 AF 0 PF 1 CF.
    pub fn lahf(&mut self) -> Outcome {
        let v = self.pack_flags(Type::I8, &FLAG_BITS[..5], 2);
        self.gpr_set(Register::AH, v);
        Outcome::Next
    }

    pub fn sahf(&mut self) -> Outcome {
        let ah = self.gpr_get(Register::AH);
        self.unpack_flags(Type::I8, ah, &FLAG_BITS[..5]);
        Outcome::Next
    }

    /// clc, stc, cmc, cld, std.
    pub fn flag_op(&mut self, m: Mnemonic) -> Outcome {
        let (reg, v) = match m {
            Mnemonic::Clc => (Reg::CF, self.c(Type::I1, 0)),
            Mnemonic::Stc => (Reg::CF, self.c(Type::I1, 1)),
            Mnemonic::Cld => (Reg::DF, self.c(Type::I1, 0)),
            Mnemonic::Std => (Reg::DF, self.c(Type::I1, 1)),
            _ => {
                let cf = self.b.get(Reg::CF);
                (Reg::CF, self.un(Opcode::Not, Type::I1, cf))
            }
        };
        self.b.set(reg, v);
        Outcome::Next
    }

    pub fn syscall(&mut self) -> Outcome {
        self.b.exit(ExitKind::Syscall, self.i.next_ip());
        Outcome::End
    }

    pub fn helper(&mut self, h: Helper) -> Outcome {
        self.b.call(h);
        Outcome::Next
    }

    pub fn trap(&mut self, kind: TrapKind) -> Outcome {
        self.b.trap(kind, self.i.ip());
        Outcome::End
    }

    /// stmxcsr, fnstcw: store a control register to memory.
    pub fn store_control(&mut self, reg: Reg) -> Outcome {
        let v = self.b.get(reg);
        let ty = reg.ty().unwrap_or(Type::I32);
        let a = self.addr();
        self.b.store(ty, a, v);
        Outcome::Next
    }

    /// ldmxcsr, fldcw: load a control register from memory. Only the
    /// default rounding mode is implemented, so a value that changes it
    /// would silently compute wrong results: that is refused with SIGILL.
    pub fn load_control(&mut self, reg: Reg) -> Outcome {
        let ty = reg.ty().unwrap_or(Type::I32);
        let a = self.addr();
        let v = self.b.load(ty, a);
        let (mask, want) = if reg == Reg::MXCSR { (0x6000, 0) } else { (0x0c00, 0) };
        let m = self.c(ty, mask);
        let rc = self.bin(Opcode::And, ty, v, m);
        let w = self.c(ty, want);
        let bad = self.icmp(aarchx_ir::IntCond::Ne, ty, rc, w);
        let trap = self.b.create_block();
        let ok = self.b.create_block();
        self.b.brif(bad, trap, ok);
        self.b.switch_to(trap);
        self.b.trap(TrapKind::Ill, self.i.ip());
        self.b.switch_to(ok);
        self.b.set(reg, v);
        Outcome::Next
    }

    /// The address `off` bytes into the memory operand at `base`.
    fn offset(&mut self, base: Value, off: u64) -> Value {
        let o = self.c(Type::I64, off);
        self.bin(Opcode::Add, Type::I64, base, o)
    }

    /// fxsave, fxsave64: the x87, MXCSR and XMM state to the 512-byte
    /// area (bytes 0..416; the rest is not written). Of the x87 unit only
    /// the control word is modelled and the stack is always empty, so the
    /// status and tag words, last-instruction pointers and data registers
    /// are stored as zero. The 16-byte alignment #GP is not checked (as
    /// for movaps).
    pub fn fxsave(&mut self) -> Outcome {
        let base = self.addr();
        let fpcw = self.b.get(Reg::FPCW);
        self.b.store(Type::I16, base, fpcw);
        let zero16 = self.c(Type::I16, 0);
        let at = self.offset(base, 2);
        self.b.store(Type::I16, at, zero16);
        let zero32 = self.c(Type::I32, 0);
        let at = self.offset(base, 4);
        self.b.store(Type::I32, at, zero32);
        let mxcsr = self.b.get(Reg::MXCSR);
        let at = self.offset(base, 24);
        self.b.store(Type::I32, at, mxcsr);
        let mask = self.c(Type::I32, 0xffff);
        let at = self.offset(base, 28);
        self.b.store(Type::I32, at, mask);
        let zero64 = self.c(Type::I64, 0);
        for off in [8, 16].into_iter().chain((32..160).step_by(8)) {
            let at = self.offset(base, off);
            self.b.store(Type::I64, at, zero64);
        }
        for n in 0..16u8 {
            let x = self.b.get(Reg::xmm(n));
            let at = self.offset(base, 160 + 16 * u64::from(n));
            self.b.store(Type::V128, at, x);
        }
        Outcome::Next
    }

    /// fxrstor, fxrstor64: the control word, MXCSR and XMM registers from
    /// the area fxsave writes. A control word or MXCSR with a non-default
    /// rounding mode is refused with SIGILL, as by fldcw and ldmxcsr; the
    /// x87 stack stays empty.
    pub fn fxrstor(&mut self) -> Outcome {
        let base = self.addr();
        let fpcw = self.b.load(Type::I16, base);
        let at = self.offset(base, 24);
        let mxcsr = self.b.load(Type::I32, at);
        let rc_fpcw = {
            let m = self.c(Type::I16, 0x0c00);
            let rc = self.bin(Opcode::And, Type::I16, fpcw, m);
            let z = self.c(Type::I16, 0);
            self.icmp(aarchx_ir::IntCond::Ne, Type::I16, rc, z)
        };
        let rc_mxcsr = {
            let m = self.c(Type::I32, 0x6000);
            let rc = self.bin(Opcode::And, Type::I32, mxcsr, m);
            let z = self.c(Type::I32, 0);
            self.icmp(aarchx_ir::IntCond::Ne, Type::I32, rc, z)
        };
        let bad = self.bin(Opcode::Or, Type::I1, rc_fpcw, rc_mxcsr);
        let trap = self.b.create_block();
        let ok = self.b.create_block();
        self.b.brif(bad, trap, ok);
        self.b.switch_to(trap);
        self.b.trap(TrapKind::Ill, self.i.ip());
        self.b.switch_to(ok);
        self.b.set(Reg::FPCW, fpcw);
        self.b.set(Reg::MXCSR, mxcsr);
        for n in 0..16u8 {
            let at = self.offset(base, 160 + 16 * u64::from(n));
            let x = self.b.load(Type::V128, at);
            self.b.set(Reg::xmm(n), x);
        }
        Outcome::Next
    }
}
