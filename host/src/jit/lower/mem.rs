//! Guest state and guest memory: `get`/`set` are loads and stores at the
//! register's offset from x28, or moves from and to the host register of
//! a pinned guest register (nothing at all for a `get` the allocator made
//! that register's alias); `load`/`store` are host accesses at the
//! guest address (identity mapping). Ordered accesses (x86-TSO, set by
//! the memory-order lowering) use `ldar`/`stlr` for scalars and a plain
//! vector access fenced by `dmb` for 128-bit ones. `atomic_rmw` and
//! `atomic_cas` use the LSE instructions with acquire-release order.
//!
//! x86 allows every access, locked ones included, at any alignment;
//! `ldar`, `stlr` and the LSE atomics fault on a misaligned address. An
//! ordered load or store is the bare `ldar`/`stlr`: its fenced plain
//! version is placed after the region's blocks ([`Lowerer::misaligned_paths`]),
//! and the SIGBUS handler resumes a misaligned one there, from where it
//! branches back (`crate::signals`; FEX-Emu does the same). The atomics
//! test the address first and take a fenced plain sequence when it is
//! misaligned.
//! In journal mode every store is preceded by a journal record.

use aarchx_ir::{GuestState, InstData, MemFlags, Opcode, Reg, RmwOp, Type, Value};
use dynasmrt::{DynasmApi, DynasmLabelApi};

use super::alloc::Fold;
use super::frame::{T0, T1};
use super::{a64, fpsr_flags, Decline, Lowerer, FPSR};
use crate::jit::context::{OFF_JOURNAL_CUR, OFF_JOURNAL_END, OFF_JOURNAL_GROW};
use crate::jit::journal::ENTRY_SIZE;
use crate::jit::regs::{pinned, pinned_v, CTX_REG, STATE_REG};

/// How a plain guest access addresses memory (registers by number).
#[derive(Clone, Copy, Debug)]
enum Addr {
    /// `[base]`.
    Base(u8),
    /// `[base, #offset]`, the offset a multiple of the access size.
    Imm(u8, u32),
    /// `[base, #offset]` for -256..=255 (`ldur`/`stur`).
    Unscaled(u8, i32),
    /// `[base, index]`.
    Reg(u8, u8),
    /// `[base, index, lsl #log2(size)]`.
    Scaled(u8, u8),
}

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
        if let Some(host) = pinned(reg) {
            // Nothing to do when the value's home is the register itself.
            self.stx(host, v);
            return true;
        }
        if let Some(host) = pinned_v(reg) {
            // Nothing to do when the value's home is the register itself.
            self.vdone(v, host);
            return true;
        }
        let Some(ty) = reg.ty() else { return false };
        let off = GuestState::offset_of(reg) as u32;
        if ty == Type::V128 {
            let q = self.vdst(v, 3);
            a64!(self.ops; ldr Q(q), [X(STATE_REG), #off]);
            self.vdone(v, q);
            return true;
        }
        let x = self.xdst(v, 3);
        match ty {
            Type::I64 => a64!(self.ops; ldr X(x), [X(STATE_REG), #off]),
            Type::I1 => a64!(self.ops
                ; ldrb W(x), [X(STATE_REG), #off]
                ; and WSP(x), W(x), #1
            ),
            Type::I32 => a64!(self.ops; ldr W(x), [X(STATE_REG), #off]),
            Type::I16 => a64!(self.ops; ldrh W(x), [X(STATE_REG), #off]),
            Type::I8 => a64!(self.ops; ldrb W(x), [X(STATE_REG), #off]),
            _ => return false,
        }
        if reg == Reg::MXCSR {
            // With the flags raised since entry (see `fpsr_flags`).
            fpsr_flags(&mut self.ops, T0, T1);
            a64!(self.ops; orr W(x), W(x), W(T0));
        }
        self.xdone(v, x);
        true
    }

    fn set(&mut self, d: &InstData) -> bool {
        let reg = d.reg();
        if let Some(host) = pinned(reg) {
            self.ldx(host, d.arg(0));
            return true;
        }
        if let Some(host) = pinned_v(reg) {
            self.ldq(host, d.arg(0));
            return true;
        }
        let Some(ty) = reg.ty() else { return false };
        let off = GuestState::offset_of(reg) as u32;
        if ty == Type::V128 {
            let q = self.vsrc(d.arg(0), 0);
            a64!(self.ops; str Q(q), [X(STATE_REG), #off]);
            return true;
        }
        let x = self.xsrc_zr(d.arg(0), 0);
        match ty {
            Type::I64 => a64!(self.ops; str X(x), [X(STATE_REG), #off]),
            // An i1 is 0 or 1 already, as the flag byte must be.
            Type::I1 => a64!(self.ops; strb W(x), [X(STATE_REG), #off]),
            Type::I32 => a64!(self.ops; str W(x), [X(STATE_REG), #off]),
            Type::I16 => a64!(self.ops; strh W(x), [X(STATE_REG), #off]),
            Type::I8 => a64!(self.ops; strb W(x), [X(STATE_REG), #off]),
            _ => return false,
        }
        if reg == Reg::MXCSR {
            // The flags are the new value's (see `fpsr_flags`).
            a64!(self.ops; msr #FPSR, xzr);
        }
        true
    }

    fn ordered(d: &InstData) -> Option<bool> {
        MemFlags::from_u16(d.aux).map(|f| f == MemFlags::Ordered)
    }

    /// The addressing of a plain access of `bits` at `addr`: an address
    /// `iadd` folded into it (see [`super::alloc`]) becomes base plus
    /// immediate, base plus register or base plus scaled index; x0 and x1
    /// stand in for values kept in memory.
    fn guest_addr(&mut self, addr: Value, bits: u32) -> Addr {
        if self.alloc.fold[addr.index()] != Fold::Address {
            return Addr::Base(self.xsrc(addr, 0));
        }
        let ad = *self.r.inst(addr);
        let base = self.xsrc(ad.arg(0), 0);
        let y = ad.arg(1);
        if self.alloc.fold[y.index()] == Fold::Index {
            let index = self.xsrc(self.r.inst(y).arg(0), 1);
            return Addr::Scaled(base, index);
        }
        let size = u64::from(bits / 8);
        match self.const_value(y) {
            Some(c) if c % size == 0 && c / size <= 4095 => Addr::Imm(base, c as u32),
            Some(c) if (c as i64) >= -256 && (c as i64) <= 255 => Addr::Unscaled(base, c as i32),
            _ => Addr::Reg(base, self.xsrc(y, 1)),
        }
    }

    /// The register holding the address `addr` of an acquire/release
    /// access (only an `iadd` of 0 is folded into those).
    fn guest_base(&mut self, addr: Value) -> u8 {
        match self.guest_addr(addr, 8) {
            Addr::Base(b) | Addr::Imm(b, 0) => b,
            at => panic!("an acquire/release access cannot take {at:?}"),
        }
    }

    fn guest_load(&mut self, v: Value, d: &InstData) -> bool {
        let Some(ordered) = Self::ordered(d) else { return false };
        let bits = d.ty.bits();
        if bits == 128 {
            let a = self.xsrc(d.arg(0), 0);
            let q = self.vdst(v, 3);
            a64!(self.ops; ldr Q(q), [X(a)]);
            if ordered {
                a64!(self.ops; dmb ishld);
            }
            self.vdone(v, q);
            return true;
        }
        if !matches!(bits, 8 | 16 | 32 | 64) {
            return false;
        }
        let x = self.xdst(v, 3);
        if ordered {
            let a = self.guest_base(d.arg(0));
            if bits > 8 {
                let at = self.ops.offset().0 as u32;
                match bits {
                    16 => a64!(self.ops; ldarh W(x), [X(a)]),
                    32 => a64!(self.ops; ldar W(x), [X(a)]),
                    _ => a64!(self.ops; ldar X(x), [X(a)]),
                }
                self.may_be_misaligned(at, bits, x, a, false);
            } else {
                a64!(self.ops; ldarb W(x), [X(a)]);
            }
        } else {
            let at = self.guest_addr(d.arg(0), bits);
            self.plain_load(bits, x, at);
        }
        self.xdone(v, x);
        true
    }

    /// `X(x)` = the `bits`-bit value at `at`, zero-extended.
    fn plain_load(&mut self, bits: u32, x: u8, at: Addr) {
        macro_rules! ld {
            ($op:ident, $r:ident, $shift:literal) => {
                match at {
                    Addr::Base(b) => a64!(self.ops; $op $r(x), [X(b)]),
                    Addr::Imm(b, o) => a64!(self.ops; $op $r(x), [X(b), #o]),
                    Addr::Unscaled(b, o) => a64!(self.ops; ldur $r(x), [X(b), #o]),
                    Addr::Reg(b, i) => a64!(self.ops; $op $r(x), [X(b), X(i)]),
                    Addr::Scaled(b, i) => a64!(self.ops; $op $r(x), [X(b), X(i), lsl #$shift]),
                }
            };
        }
        match bits {
            8 => match at {
                Addr::Unscaled(b, o) => a64!(self.ops; ldurb W(x), [X(b), #o]),
                _ => ld!(ldrb, W, 0),
            },
            16 => match at {
                Addr::Unscaled(b, o) => a64!(self.ops; ldurh W(x), [X(b), #o]),
                _ => ld!(ldrh, W, 1),
            },
            32 => ld!(ldr, W, 2),
            _ => ld!(ldr, X, 3),
        }
    }

    /// The `bits`-bit value at `at` = the low `bits` of `X(r)`.
    fn plain_store(&mut self, bits: u32, r: u8, at: Addr) {
        macro_rules! st {
            ($op:ident, $w:ident, $shift:literal) => {
                match at {
                    Addr::Base(b) => a64!(self.ops; $op $w(r), [X(b)]),
                    Addr::Imm(b, o) => a64!(self.ops; $op $w(r), [X(b), #o]),
                    Addr::Unscaled(b, o) => a64!(self.ops; stur $w(r), [X(b), #o]),
                    Addr::Reg(b, i) => a64!(self.ops; $op $w(r), [X(b), X(i)]),
                    Addr::Scaled(b, i) => a64!(self.ops; $op $w(r), [X(b), X(i), lsl #$shift]),
                }
            };
        }
        match bits {
            8 => match at {
                Addr::Unscaled(b, o) => a64!(self.ops; sturb W(r), [X(b), #o]),
                _ => st!(strb, W, 0),
            },
            16 => match at {
                Addr::Unscaled(b, o) => a64!(self.ops; sturh W(r), [X(b), #o]),
                _ => st!(strh, W, 1),
            },
            32 => st!(str, W, 2),
            _ => st!(str, X, 3),
        }
    }

    /// Records the bare acquire/release access just emitted at offset `at`
    /// (of `bits`, data register `X(x)`, address `X(a)`) for
    /// [`Lowerer::misaligned_paths`], which branches back to here.
    fn may_be_misaligned(&mut self, at: u32, bits: u32, x: u8, a: u8, store: bool) {
        let back = self.ops.new_dynamic_label();
        a64!(self.ops; =>back);
        self.misaligned.push(super::Misaligned { at, back, bits, x, a, store });
    }

    /// Emits, after the region's blocks, the plain fenced version of each
    /// ordered access emitted bare, branching back after it; returns the
    /// (access, fixup) offsets the SIGBUS handler resumes a misaligned
    /// access by (see `crate::signals`).
    pub(super) fn misaligned_paths(&mut self) -> Vec<(u32, u32)> {
        let pending = std::mem::take(&mut self.misaligned);
        pending
            .into_iter()
            .map(|m| {
                let fixup = self.ops.offset().0 as u32;
                if m.store {
                    a64!(self.ops; dmb ish);
                    self.plain_store(m.bits, m.x, Addr::Base(m.a));
                } else {
                    self.plain_load(m.bits, m.x, Addr::Base(m.a));
                    a64!(self.ops; dmb ishld);
                }
                let back = m.back;
                a64!(self.ops; b =>back);
                (m.at, fixup)
            })
            .collect()
    }

    /// Branches to the next `unaligned:` label when the address in `X(a)`
    /// is not aligned to `bits` (16, 32 or 64).
    fn branch_if_unaligned(&mut self, bits: u32, a: u8) {
        match bits {
            16 => a64!(self.ops; tst X(a), #1),
            32 => a64!(self.ops; tst X(a), #3),
            _ => a64!(self.ops; tst X(a), #7),
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
        if bits == 128 {
            let a = self.xsrc(d.arg(0), 0);
            let q = self.vsrc(d.arg(1), 1);
            if ordered {
                a64!(self.ops; dmb ish);
            }
            a64!(self.ops; str Q(q), [X(a)]);
            return true;
        }
        if !ordered {
            let at = self.guest_addr(d.arg(0), bits);
            let x = self.xsrc_zr(d.arg(1), 2);
            self.plain_store(bits, x, at);
            return true;
        }
        let a = self.guest_base(d.arg(0));
        let x = self.xsrc_zr(d.arg(1), 1);
        if bits > 8 {
            let at = self.ops.offset().0 as u32;
            match bits {
                16 => a64!(self.ops; stlrh W(x), [X(a)]),
                32 => a64!(self.ops; stlr W(x), [X(a)]),
                _ => a64!(self.ops; stlr X(x), [X(a)]),
            }
            self.may_be_misaligned(at, bits, x, a, true);
        } else {
            a64!(self.ops; stlrb W(x), [X(a)]);
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
            self.branch_if_unaligned(bits, 0);
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
            self.plain_load(bits, 3, Addr::Base(0));
            match op {
                RmwOp::Add => a64!(self.ops; add X(T0), X(3), X(1)),
                RmwOp::And => a64!(self.ops; bic X(T0), X(3), X(1)),
                RmwOp::Or => a64!(self.ops; orr X(T0), X(3), X(1)),
                RmwOp::Xor => a64!(self.ops; eor X(T0), X(3), X(1)),
                RmwOp::Xchg => a64!(self.ops; mov X(T0), X(1)),
            }
            self.plain_store(bits, T0, Addr::Base(0));
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
            self.branch_if_unaligned(bits, 0);
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
            self.plain_load(bits, 3, Addr::Base(0));
            a64!(self.ops
                ; cmp X(3), X(T0)
                ; b.ne >differ
            );
            self.plain_store(bits, 2, Addr::Base(0));
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
