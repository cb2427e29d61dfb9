//! Operand access for the lifter: guest registers at every width
//! (including the high-byte registers and 32-bit zero-extension), memory
//! effective addresses, immediates, and small IR-building shorthands.

use aarchx_ir::{Builder, IntCond, Opcode, Reg, Type, Value};

pub use super::sse::Vex;
use iced_x86::{Instruction, OpKind, Register};

/// The lifter's context for one guest instruction.
pub struct L<'a, 'r> {
    pub b: &'a mut Builder<'r>,
    pub i: &'a Instruction,
    /// How the vector instructions see their operands (VEX forms).
    pub vex: Vex,
}

/// The integer type of an operand of `bytes` bytes.
pub fn int_type(bytes: usize) -> Type {
    match bytes {
        1 => Type::I8,
        2 => Type::I16,
        4 => Type::I32,
        8 => Type::I64,
        _ => Type::I128,
    }
}

/// The guest register slot and bit offset of an x86 GPR of any width.
fn gpr_slot(reg: Register) -> (Reg, u32) {
    let high = matches!(reg, Register::AH | Register::CH | Register::DH | Register::BH);
    let full = if high {
        [Register::RAX, Register::RCX, Register::RDX, Register::RBX][reg as usize - Register::AH as usize]
    } else {
        reg.full_register()
    };
    (Reg::gpr((full as usize - Register::RAX as usize) as u8), if high { 8 } else { 0 })
}

/// The number of an XMM or YMM register (xmm3 and ymm3: 3).
pub fn vec_num(reg: Register) -> u8 {
    let first = if reg.is_ymm() { Register::YMM0 } else { Register::XMM0 };
    (reg as usize - first as usize) as u8
}

impl L<'_, '_> {
    // Shorthands for building IR.

    pub fn c(&mut self, ty: Type, imm: u64) -> Value {
        self.b.iconst(ty, imm)
    }

    pub fn bin(&mut self, op: Opcode, ty: Type, a: Value, b: Value) -> Value {
        self.b.binary(op, ty, a, b)
    }

    pub fn un(&mut self, op: Opcode, ty: Type, a: Value) -> Value {
        self.b.unary(op, ty, a)
    }

    pub fn icmp(&mut self, cond: IntCond, ty: Type, a: Value, b: Value) -> Value {
        self.b.icmp(cond, ty, a, b)
    }

    pub fn select(&mut self, ty: Type, c: Value, a: Value, b: Value) -> Value {
        self.b.ternary(Opcode::Select, ty, c, a, b)
    }

    /// `v` (of type `from`) converted to `to` by zero-extension or truncation.
    pub fn resize(&mut self, v: Value, from: Type, to: Type) -> Value {
        match from.bits().cmp(&to.bits()) {
            core::cmp::Ordering::Less => self.un(Opcode::Zext, to, v),
            core::cmp::Ordering::Greater => self.un(Opcode::Trunc, to, v),
            core::cmp::Ordering::Equal => v,
        }
    }

    /// Sign-extends `v` of type `from` to `to` (no-op when equal).
    pub fn sext(&mut self, v: Value, from: Type, to: Type) -> Value {
        if from == to {
            v
        } else {
            self.un(Opcode::Sext, to, v)
        }
    }

    /// Bit `k` of `v` as an i1.
    pub fn bit(&mut self, ty: Type, v: Value, k: u32) -> Value {
        let shifted = if k == 0 {
            v
        } else {
            let amount = self.c(Type::I8, u64::from(k));
            self.bin(Opcode::Lshr, ty, v, amount)
        };
        if ty == Type::I1 {
            shifted
        } else {
            self.un(Opcode::Trunc, Type::I1, shifted)
        }
    }

    /// Runs `body` in a block entered when `cond` (an i1) holds, and goes
    /// on after it either way.
    pub fn when(&mut self, cond: Value, body: impl FnOnce(&mut Self)) {
        let then = self.b.create_block();
        let join = self.b.create_block();
        self.b.brif(cond, then, join);
        self.b.switch_to(then);
        body(self);
        self.b.jump(join);
        self.b.switch_to(join);
    }

    // Registers.

    /// Reads a GPR at its own width (al, ah, ax, eax, rax...).
    pub fn gpr_get(&mut self, reg: Register) -> Value {
        let (slot, shift) = gpr_slot(reg);
        let full = self.b.get(slot);
        let ty = int_type(reg.size());
        if ty == Type::I64 {
            return full;
        }
        let v = if shift == 0 {
            full
        } else {
            let s = self.c(Type::I8, u64::from(shift));
            self.bin(Opcode::Lshr, Type::I64, full, s)
        };
        self.un(Opcode::Trunc, ty, v)
    }

    /// Writes a GPR at its own width: 32-bit writes zero the upper half,
    /// 8- and 16-bit writes keep the other bits.
    pub fn gpr_set(&mut self, reg: Register, v: Value) {
        let (slot, shift) = gpr_slot(reg);
        let size = reg.size();
        let merged = match size {
            8 => v,
            4 => self.un(Opcode::Zext, Type::I64, v),
            _ => {
                let old = self.b.get(slot);
                let mask = ((1u64 << (8 * size)) - 1) << shift;
                let keep = self.c(Type::I64, !mask);
                let kept = self.bin(Opcode::And, Type::I64, old, keep);
                let wide = self.un(Opcode::Zext, Type::I64, v);
                let placed = if shift == 0 {
                    wide
                } else {
                    let s = self.c(Type::I8, u64::from(shift));
                    self.bin(Opcode::Shl, Type::I64, wide, s)
                };
                self.bin(Opcode::Or, Type::I64, kept, placed)
            }
        };
        self.b.set(slot, merged);
    }

    // Memory.

    /// The effective address of the instruction's memory operand, with the
    /// FS or GS base added for those segments.
    pub fn addr(&mut self) -> Value {
        let index = self.i.memory_index();
        let iv = (index != Register::None).then(|| self.gpr_get64(index));
        self.addr_indexed(iv)
    }

    /// The effective address with `index` (64 bits, before scaling) as the
    /// index's value: the index register's, or an element of a VSIB
    /// operand's vector register.
    pub fn addr_indexed(&mut self, index_value: Option<Value>) -> Value {
        let i = self.i;
        let base = i.memory_base();
        let addr = if base == Register::RIP {
            // A guest address: it moves with the code (`Region::relocate`).
            self.b.guest_addr(i.memory_displacement64())
        } else if base == Register::EIP {
            // The sum wraps at 4 GiB: the full one is the guest address.
            let disp = (i.memory_displacement64() as u32).wrapping_sub(i.next_ip() as u32) as i32;
            let full = self.b.guest_addr(i.next_ip().wrapping_add(disp as i64 as u64));
            let low = self.un(Opcode::Trunc, Type::I32, full);
            self.un(Opcode::Zext, Type::I64, low)
        } else {
            let disp = self.c(Type::I64, i.memory_displacement64());
            let mut a = disp;
            if base != Register::None {
                let bv = self.gpr_get64(base);
                a = self.bin(Opcode::Add, Type::I64, bv, a);
            }
            let index = i.memory_index();
            if let Some(iv) = index_value {
                let scaled = match i.memory_index_scale() {
                    1 => iv,
                    s => {
                        let sh = self.c(Type::I8, u64::from(s.trailing_zeros()));
                        self.bin(Opcode::Shl, Type::I64, iv, sh)
                    }
                };
                a = self.bin(Opcode::Add, Type::I64, a, scaled);
            }
            if base.size() == 4 || index.size() == 4 {
                // 32-bit address size (0x67 prefix): the sum wraps at 4 GiB.
                a = self.un(Opcode::Trunc, Type::I32, a);
                a = self.un(Opcode::Zext, Type::I64, a);
            }
            a
        };
        self.segment_base(addr)
    }

    /// `addr` plus the base of the memory operand's segment (fs or gs;
    /// the others are flat).
    pub fn segment_base(&mut self, addr: Value) -> Value {
        let seg = match self.i.memory_segment() {
            Register::FS => Some(Reg::FS_BASE),
            Register::GS => Some(Reg::GS_BASE),
            _ => None,
        };
        match seg {
            Some(s) => {
                let sb = self.b.get(s);
                self.bin(Opcode::Add, Type::I64, addr, sb)
            }
            None => addr,
        }
    }

    /// A GPR used in an address, zero-extended to 64 bits.
    fn gpr_get64(&mut self, reg: Register) -> Value {
        let v = self.gpr_get(reg);
        self.resize(v, int_type(reg.size()), Type::I64)
    }

    // Operands.

    /// Size in bytes of operand `n`. Immediates take the size of operand 0,
    /// or the stack slot's 8 bytes when they are the only operand (push).
    pub fn op_size(&self, n: u32) -> usize {
        match self.i.op_kind(n) {
            OpKind::Register => self.i.op_register(n).size(),
            OpKind::Memory => self.i.memory_size().size(),
            _ if n > 0 => self.op_size(0),
            _ => 8,
        }
    }

    pub fn op_type(&self, n: u32) -> Type {
        int_type(self.op_size(n))
    }

    /// Reads operand `n` as an integer of type `ty` (registers and memory at
    /// their own size must match `ty`; immediates are sign-extended by the
    /// decoder and truncated to `ty`).
    pub fn read(&mut self, n: u32, ty: Type) -> Value {
        match self.i.op_kind(n) {
            OpKind::Register => {
                let v = self.gpr_get(self.i.op_register(n));
                self.resize(v, int_type(self.i.op_register(n).size()), ty)
            }
            OpKind::Memory => {
                let a = self.addr();
                self.b.load(ty, a)
            }
            _ => {
                let imm = self.i.immediate(n);
                self.c(ty, imm)
            }
        }
    }

    /// Reads operand `n` at its own size.
    pub fn read_op(&mut self, n: u32) -> Value {
        let ty = self.op_type(n);
        self.read(n, ty)
    }

    /// Writes `v` (of operand `n`'s type) to operand `n`.
    pub fn write(&mut self, n: u32, v: Value) {
        match self.i.op_kind(n) {
            OpKind::Register => self.gpr_set(self.i.op_register(n), v),
            OpKind::Memory => {
                let ty = self.op_type(n);
                let a = self.addr();
                self.b.store(ty, a, v);
            }
            k => unreachable!("write to operand kind {k:?}"),
        }
    }

    /// Writes `v` to operand `n`, reusing an already computed address.
    pub fn write_at(&mut self, n: u32, addr: Option<Value>, v: Value) {
        match addr {
            Some(a) => {
                let ty = self.op_type(n);
                self.b.store(ty, a, v)
            }
            None => self.write(n, v),
        }
    }

    /// Reads operand `n` at its own size, returning the address used if it
    /// is memory, so a read-modify-write computes the address once.
    pub fn read_rmw(&mut self, n: u32) -> (Value, Option<Value>) {
        if self.i.op_kind(n) == OpKind::Memory {
            let a = self.addr();
            let ty = self.op_type(n);
            (self.b.load(ty, a), Some(a))
        } else {
            (self.read_op(n), None)
        }
    }

    pub fn is_mem(&self, n: u32) -> bool {
        self.i.op_kind(n) == OpKind::Memory
    }

    // Stack.

    /// Pushes `v`, a value of `ty` (i64, or i16 with the 0x66 prefix).
    pub fn push_sized(&mut self, ty: Type, v: Value) {
        let sp = self.b.get(Reg::RSP);
        let size = self.c(Type::I64, u64::from(ty.bits() / 8));
        let nsp = self.bin(Opcode::Sub, Type::I64, sp, size);
        self.b.store(ty, nsp, v);
        self.b.set(Reg::RSP, nsp);
    }

    /// Pops a value of `ty`.
    pub fn pop_sized(&mut self, ty: Type) -> Value {
        let sp = self.b.get(Reg::RSP);
        let v = self.b.load(ty, sp);
        let size = self.c(Type::I64, u64::from(ty.bits() / 8));
        let nsp = self.bin(Opcode::Add, Type::I64, sp, size);
        self.b.set(Reg::RSP, nsp);
        v
    }

    pub fn push(&mut self, v: Value) {
        self.push_sized(Type::I64, v)
    }

    pub fn pop(&mut self) -> Value {
        self.pop_sized(Type::I64)
    }
}
