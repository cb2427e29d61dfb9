//! Guest state and guest memory: `get`/`set` are loads and stores at the
//! register's offset from x28; `load`/`store` are host accesses at the
//! guest address (identity mapping). Ordered accesses (x86-TSO, set by
//! the memory-order lowering) use `ldar`/`stlr` for scalars and a plain
//! vector access fenced by `dmb` for 128-bit ones. `atomic_rmw` and
//! `atomic_cas` use the LSE instructions with acquire-release order.
//!
//! x86 allows every access, locked ones included, at any alignment;
//! `ldar`, `stlr` and the LSE atomics fault on a misaligned address. Each
//! such access therefore tests the address first and takes a fenced plain
//! access when it is misaligned (a later optimisation can patch the fast
//! path in from a SIGBUS handler instead, as FEX does).
//! In journal mode every store is preceded by a journal record.

use aarchx_ir::{GuestState, InstData, MemFlags, Opcode, RmwOp, Type, Value};
use dynasmrt::{DynasmApi, DynasmLabelApi};

use super::frame::T0;
use super::{a64, Decline, Lowerer};
use crate::jit::context::{OFF_JOURNAL_CUR, OFF_JOURNAL_END, OFF_JOURNAL_GROW};
use crate::jit::journal::ENTRY_SIZE;
use crate::jit::regs::{CTX_REG, STATE_REG};

impl Lowerer<'_> {
    pub(super) fn mem_op(&mut self, v: Value, d: &InstData) -> Result<(), Decline> {
        let ok = match d.op {
            Opcode::Get => self.get(v, d),
            Opcode::Set => self.set(d),
            Opcode::Load => self.guest_load(v, d),
            Opcode::Store => self.guest_store(d),
            Opcode::AtomicRmw => self.atomic_rmw(v, d),
            Opcode::AtomicCas => self.atomic_cas(v, d),
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(self.decline(d))
        }
    }

    fn get(&mut self, v: Value, d: &InstData) -> bool {
        let reg = d.reg();
        let Some(ty) = reg.ty() else { return false };
        let off = GuestState::offset_of(reg) as u32;
        match ty {
            Type::I64 => a64!(self.ops; ldr X(3), [X(STATE_REG), #off]),
            Type::I1 => a64!(self.ops
                ; ldrb W(3), [X(STATE_REG), #off]
                ; and WSP(3), W(3), #1
            ),
            Type::I32 => a64!(self.ops; ldr W(3), [X(STATE_REG), #off]),
            Type::I16 => a64!(self.ops; ldrh W(3), [X(STATE_REG), #off]),
            Type::V128 => {
                a64!(self.ops; ldr Q(3), [X(STATE_REG), #off]);
                self.stq(3, v);
                return true;
            }
            _ => return false,
        }
        self.stx(3, v);
        true
    }

    fn set(&mut self, d: &InstData) -> bool {
        let reg = d.reg();
        let Some(ty) = reg.ty() else { return false };
        let off = GuestState::offset_of(reg) as u32;
        if ty == Type::V128 {
            self.ldq(0, d.arg(0));
            a64!(self.ops; str Q(0), [X(STATE_REG), #off]);
            return true;
        }
        self.ldx(0, d.arg(0));
        match ty {
            Type::I64 => a64!(self.ops; str X(0), [X(STATE_REG), #off]),
            // An i1 is 0 or 1 already, as the flag byte must be.
            Type::I1 => a64!(self.ops; strb W(0), [X(STATE_REG), #off]),
            Type::I32 => a64!(self.ops; str W(0), [X(STATE_REG), #off]),
            Type::I16 => a64!(self.ops; strh W(0), [X(STATE_REG), #off]),
            _ => return false,
        }
        true
    }

    fn ordered(d: &InstData) -> Option<bool> {
        MemFlags::from_u16(d.aux).map(|f| f == MemFlags::Ordered)
    }

    fn guest_load(&mut self, v: Value, d: &InstData) -> bool {
        let Some(ordered) = Self::ordered(d) else { return false };
        let bits = d.ty.bits();
        self.ldx(0, d.arg(0));
        if bits == 128 {
            a64!(self.ops; ldr Q(3), [X(0)]);
            if ordered {
                a64!(self.ops; dmb ishld);
            }
            self.stq(3, v);
            return true;
        }
        if !matches!(bits, 8 | 16 | 32 | 64) {
            return false;
        }
        if ordered && bits > 8 {
            // ldar needs an aligned address; x86 does not. An unaligned
            // access takes a plain load followed by a barrier.
            self.branch_if_unaligned(bits);
            match bits {
                16 => a64!(self.ops; ldarh W(3), [X(0)]),
                32 => a64!(self.ops; ldar W(3), [X(0)]),
                _ => a64!(self.ops; ldar X(3), [X(0)]),
            }
            a64!(self.ops; b >done; unaligned:);
            self.plain_load(bits);
            a64!(self.ops; dmb ishld; done:);
        } else if ordered {
            a64!(self.ops; ldarb W(3), [X(0)]);
        } else {
            self.plain_load(bits);
        }
        self.stx(3, v);
        true
    }

    /// `X(3)` = the `bits`-bit value at `[X(0)]`, zero-extended.
    fn plain_load(&mut self, bits: u32) {
        match bits {
            8 => a64!(self.ops; ldrb W(3), [X(0)]),
            16 => a64!(self.ops; ldrh W(3), [X(0)]),
            32 => a64!(self.ops; ldr W(3), [X(0)]),
            _ => a64!(self.ops; ldr X(3), [X(0)]),
        }
    }

    /// `[X(0)]` = the low `bits` of `X(r)`.
    fn plain_store(&mut self, bits: u32, r: u8) {
        match bits {
            8 => a64!(self.ops; strb W(r), [X(0)]),
            16 => a64!(self.ops; strh W(r), [X(0)]),
            32 => a64!(self.ops; str W(r), [X(0)]),
            _ => a64!(self.ops; str X(r), [X(0)]),
        }
    }

    /// Branches to the next `unaligned:` label when the address in `X(0)`
    /// is not aligned to `bits` (16, 32 or 64).
    fn branch_if_unaligned(&mut self, bits: u32) {
        match bits {
            16 => a64!(self.ops; tst X(0), #1),
            32 => a64!(self.ops; tst X(0), #3),
            _ => a64!(self.ops; tst X(0), #7),
        }
        a64!(self.ops; b.ne >unaligned);
    }

    fn guest_store(&mut self, d: &InstData) -> bool {
        let Some(ordered) = Self::ordered(d) else { return false };
        let bits = d.ty.bits();
        if !matches!(bits, 8 | 16 | 32 | 64 | 128) {
            return false;
        }
        if self.options.journal {
            self.journal(d.arg(0), bits / 8);
        }
        self.ldx(0, d.arg(0));
        if bits == 128 {
            self.ldq(1, d.arg(1));
            if ordered {
                a64!(self.ops; dmb ish);
            }
            a64!(self.ops; str Q(1), [X(0)]);
            return true;
        }
        self.ldx(1, d.arg(1));
        if ordered && bits > 8 {
            self.branch_if_unaligned(bits);
            match bits {
                16 => a64!(self.ops; stlrh W(1), [X(0)]),
                32 => a64!(self.ops; stlr W(1), [X(0)]),
                _ => a64!(self.ops; stlr X(1), [X(0)]),
            }
            a64!(self.ops; b >done; unaligned: ; dmb ish);
            self.plain_store(bits, 1);
            a64!(self.ops; done:);
        } else if ordered {
            a64!(self.ops; stlrb W(1), [X(0)]);
        } else {
            self.plain_store(bits, 1);
        }
        true
    }

    fn atomic_rmw(&mut self, v: Value, d: &InstData) -> bool {
        let bits = d.ty.bits();
        let Some(op) = RmwOp::from_u16(d.aux) else { return false };
        if !matches!(bits, 8 | 16 | 32 | 64) {
            return false;
        }
        if self.options.journal {
            self.journal(d.arg(0), bits / 8);
        }
        self.ldx(0, d.arg(0));
        self.ldx(1, d.arg(1));
        if op == RmwOp::And {
            // ldclr clears the operand's bits: and with its complement.
            a64!(self.ops; mvn X(1), X(1));
        }
        macro_rules! sized {
            ($b:ident, $h:ident, $w:ident) => {
                match bits {
                    8 => a64!(self.ops; $b W(1), W(3), [X(0)]),
                    16 => a64!(self.ops; $h W(1), W(3), [X(0)]),
                    32 => a64!(self.ops; $w W(1), W(3), [X(0)]),
                    _ => a64!(self.ops; $w X(1), X(3), [X(0)]),
                }
            };
        }
        if bits > 8 {
            self.branch_if_unaligned(bits);
        }
        match op {
            RmwOp::Add => sized!(ldaddalb, ldaddalh, ldaddal),
            RmwOp::And => sized!(ldclralb, ldclralh, ldclral),
            RmwOp::Or => sized!(ldsetalb, ldsetalh, ldsetal),
            RmwOp::Xor => sized!(ldeoralb, ldeoralh, ldeoral),
            RmwOp::Xchg => sized!(swpalb, swpalh, swpal),
        }
        if bits > 8 {
            // The LSE instructions need an aligned address. x86 allows a
            // locked access across any boundary; here it becomes a plain
            // read-modify-write between full barriers, atomic only with
            // respect to this thread (split locks are rare and slow on
            // x86 too).
            a64!(self.ops; b >done; unaligned: ; dmb ish);
            self.plain_load(bits);
            match op {
                RmwOp::Add => a64!(self.ops; add X(T0), X(3), X(1)),
                RmwOp::And => a64!(self.ops; bic X(T0), X(3), X(1)),
                RmwOp::Or => a64!(self.ops; orr X(T0), X(3), X(1)),
                RmwOp::Xor => a64!(self.ops; eor X(T0), X(3), X(1)),
                RmwOp::Xchg => a64!(self.ops; mov X(T0), X(1)),
            }
            self.plain_store(bits, T0);
            a64!(self.ops; dmb ish; done:);
        }
        self.stx(3, v);
        true
    }

    fn atomic_cas(&mut self, v: Value, d: &InstData) -> bool {
        let bits = d.ty.bits();
        if !matches!(bits, 8 | 16 | 32 | 64) {
            return false;
        }
        if self.options.journal {
            self.journal(d.arg(0), bits / 8);
        }
        self.ldx(0, d.arg(0));
        self.ldx(3, d.arg(1));
        self.ldx(2, d.arg(2));
        // casal compares with and returns the old value in its first register.
        if bits > 8 {
            self.branch_if_unaligned(bits);
        }
        match bits {
            8 => a64!(self.ops; casalb W(3), W(2), [X(0)]),
            16 => a64!(self.ops; casalh W(3), W(2), [X(0)]),
            32 => a64!(self.ops; casal W(3), W(2), [X(0)]),
            _ => a64!(self.ops; casal X(3), X(2), [X(0)]),
        }
        if bits > 8 {
            // Unaligned: a plain compare-and-store between barriers, as
            // for `atomic_rmw`.
            a64!(self.ops
                ; b >done
                ; unaligned:
                ; dmb ish
                ; mov X(T0), X(3)
            );
            self.plain_load(bits);
            a64!(self.ops
                ; cmp X(3), X(T0)
                ; b.ne >differ
            );
            self.plain_store(bits, 2);
            a64!(self.ops
                ; differ:
                ; dmb ish
                ; done:
            );
        }
        self.stx(3, v);
        true
    }

    /// Appends (address, size, old bytes) of the store about to be made at
    /// the address `addr` to the journal, growing it through Rust when
    /// full. Clobbers x0, x1, x16, v1 and every caller-saved register on
    /// the slow path; the store loads its operands afterwards.
    fn journal(&mut self, addr: Value, size: u32) {
        a64!(self.ops
            ; ldr x16, [X(CTX_REG), #OFF_JOURNAL_CUR]
            ; ldr X(T0), [X(CTX_REG), #OFF_JOURNAL_END]
            ; cmp x16, X(T0)
            ; b.lo >room
            ; mov x0, X(CTX_REG)
        );
        self.call_ctx(OFF_JOURNAL_GROW);
        a64!(self.ops
            ; ldr x16, [X(CTX_REG), #OFF_JOURNAL_CUR]
            ; room:
        );
        self.ldx(0, addr);
        a64!(self.ops
            ; str x0, [x16]
            ; movz x1, #size
            ; str x1, [x16, #8]
        );
        match size {
            1 => a64!(self.ops; ldrb w1, [x0]; str x1, [x16, #16]),
            2 => a64!(self.ops; ldrh w1, [x0]; str x1, [x16, #16]),
            4 => a64!(self.ops; ldr w1, [x0]; str x1, [x16, #16]),
            8 => a64!(self.ops; ldr x1, [x0]; str x1, [x16, #16]),
            _ => a64!(self.ops; ldr q1, [x0]; str q1, [x16, #16]),
        }
        a64!(self.ops
            ; add x16, x16, #ENTRY_SIZE
            ; str x16, [X(CTX_REG), #OFF_JOURNAL_CUR]
        );
    }
}
