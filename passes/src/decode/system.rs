//! Stack, flag-register and system instructions: push/pop/leave,
//! pushf/popf, lahf/sahf, flag set/clear, syscall, cpuid, rdtsc, the
//! control-word loads and stores, fxsave/fxrstor, and the traps (ud2,
//! int3, hlt).

use aarchx_ir::cond::Helper;
use aarchx_ir::x87::{Operand, X87Insn, X87Op};
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

    /// stmxcsr, fnstcw: store a control register to memory (fstcw waits
    /// first, see `x87_pending`).
    pub fn store_control(&mut self, reg: Reg) -> Outcome {
        if reg == Reg::FPCW && self.x87_waits() {
            self.x87_pending();
        }
        let v = self.b.get(reg);
        let ty = reg.ty().unwrap_or(Type::I32);
        let a = self.addr();
        self.b.store(ty, a, v);
        Outcome::Next
    }

    /// ldmxcsr, fldcw: load a control register from memory. fldcw waits
    /// (see `x87_pending`), refuses the reserved precision (see
    /// `refuse_fpcw`) and sets the error summary by the new masks (see
    /// `x87_summary`). ldmxcsr raises #GP
    /// (SIGSEGV) for a reserved bit, and ends the region: the new MXCSR
    /// must reach the dispatcher (see `set_mxcsr`).
    pub fn load_control(&mut self, reg: Reg) -> Outcome {
        let ty = reg.ty().unwrap_or(Type::I32);
        let a = self.addr();
        let v = self.b.load(ty, a);
        if reg == Reg::MXCSR {
            self.refuse_mxcsr(v);
            return self.set_mxcsr(v);
        }
        self.x87_pending();
        self.refuse_fpcw(v);
        self.b.set(reg, v);
        self.x87_summary(v);
        Outcome::Next
    }

    /// Continues in a new block when `bad` is false; raises `kind` at this
    /// instruction when it is true.
    pub(super) fn trap_if(&mut self, bad: Value, kind: TrapKind) {
        let trap = self.b.create_block();
        let ok = self.b.create_block();
        self.b.brif(bad, trap, ok);
        self.b.switch_to(trap);
        self.b.trap(kind, self.i.ip());
        self.b.switch_to(ok);
    }

    /// Raises #GP (SIGSEGV) when the MXCSR value `v` sets a reserved bit
    /// (16-31), before anything of the instruction is written.
    fn refuse_mxcsr(&mut self, v: Value) {
        let reserved = self.c(Type::I32, 0xffff_0000);
        let high = self.bin(Opcode::And, Type::I32, v, reserved);
        let z = self.c(Type::I32, 0);
        let bad = self.icmp(aarchx_ir::IntCond::Ne, Type::I32, high, z);
        self.trap_if(bad, TrapKind::Privileged);
    }

    /// Writes `v` to MXCSR and leaves the region for the next instruction
    /// with `exit fenv`: float ops read MXCSR implicitly, and the JIT's
    /// code runs only under the default control bits, which the
    /// dispatcher checks between regions.
    fn set_mxcsr(&mut self, v: Value) -> Outcome {
        self.b.set(Reg::MXCSR, v);
        self.b.exit(ExitKind::Fenv, self.i.next_ip());
        Outcome::End
    }

    /// The x87 models every precision but the reserved one: a control
    /// word that selects it raises SIGILL.
    pub fn refuse_fpcw(&mut self, cw: Value) {
        let m = self.c(Type::I16, 0x0300);
        let pc = self.bin(Opcode::And, Type::I16, cw, m);
        let reserved = self.c(Type::I16, 0x0100);
        let bad = self.icmp(aarchx_ir::IntCond::Eq, Type::I16, pc, reserved);
        self.trap_if(bad, TrapKind::Ill);
    }

    /// A waiting x87 instruction: SIGFPE (`x87fp`) here, before anything
    /// of it, when an unmasked x87 exception is pending (the status
    /// word's ES, which the `x87` helper and fldcw keep).
    pub(super) fn x87_pending(&mut self) {
        let sw = self.b.get(Reg::FPSW);
        let es = self.c(Type::I16, 0x80);
        let pending = self.bin(Opcode::And, Type::I16, sw, es);
        let z = self.c(Type::I16, 0);
        let bad = self.icmp(aarchx_ir::IntCond::Ne, Type::I16, pending, z);
        self.trap_if(bad, TrapKind::X87Fp);
    }

    /// After the control word became `cw`: ES and B set when a flag of
    /// the status word is set whose exception `cw` unmasks, else clear
    /// (the rule the `x87` helper keeps after each operation).
    fn x87_summary(&mut self, cw: Value) {
        let sw = self.b.get(Reg::FPSW);
        let flags = self.c(Type::I16, 0x3f);
        let raised = self.bin(Opcode::And, Type::I16, sw, flags);
        let unmasked = self.bin(Opcode::AndNot, Type::I16, raised, cw);
        let z = self.c(Type::I16, 0);
        let pending = self.icmp(aarchx_ir::IntCond::Ne, Type::I16, unmasked, z);
        let keep = self.c(Type::I16, 0x7f7f);
        let kept = self.bin(Opcode::And, Type::I16, sw, keep);
        let summary = self.c(Type::I16, 0x8080);
        let es = self.select(Type::I16, pending, summary, z);
        let sw = self.bin(Opcode::Or, Type::I16, kept, es);
        self.b.set(Reg::FPSW, sw);
    }

    /// The address `off` bytes into the memory operand at `base`.
    fn offset(&mut self, base: Value, off: u64) -> Value {
        let o = self.c(Type::I64, off);
        self.bin(Opcode::Add, Type::I64, base, o)
    }

    /// fxsave, fxsave64: the x87, MXCSR and XMM state to the 512-byte
    /// area (bytes 0..416; the rest is not written). The x87 part is the
    /// `x87` helper's (its instruction and operand pointers are stored as
    /// zero). The 16-byte alignment #GP is not checked (as for movaps).
    pub fn fxsave(&mut self) -> Outcome {
        self.x87_call(X87Insn::new(X87Op::SaveImage, Operand::Area), Helper::X87);
        let base = self.addr();
        let mxcsr = self.b.get(Reg::MXCSR);
        let at = self.offset(base, 24);
        self.b.store(Type::I32, at, mxcsr);
        let mask = self.c(Type::I32, 0xffff);
        let at = self.offset(base, 28);
        self.b.store(Type::I32, at, mask);
        for n in 0..16u8 {
            let x = self.b.get(Reg::xmm(n));
            let at = self.offset(base, 160 + 16 * u64::from(n));
            self.b.store(Type::V128, at, x);
        }
        Outcome::Next
    }

    /// fxrstor, fxrstor64: the x87 state, MXCSR and XMM registers from
    /// the area fxsave writes. A control word outside the model is refused
    /// with SIGILL, as by fldcw; MXCSR is written as by ldmxcsr (a reserved
    /// bit raises #GP, and the region ends).
    pub fn fxrstor(&mut self) -> Outcome {
        let base = self.addr();
        let fpcw = self.b.load(Type::I16, base);
        let at = self.offset(base, 24);
        let mxcsr = self.b.load(Type::I32, at);
        self.refuse_mxcsr(mxcsr);
        self.refuse_fpcw(fpcw);
        self.x87_call(X87Insn::new(X87Op::RestoreImage, Operand::Area), Helper::X87);
        for n in 0..16u8 {
            let at = self.offset(base, 160 + 16 * u64::from(n));
            let x = self.b.load(Type::V128, at);
            self.b.set(Reg::xmm(n), x);
        }
        self.set_mxcsr(mxcsr)
    }

    /// Whether any of `bits` is set in the i64 `v`, as an i1.
    fn any_bit(&mut self, v: Value, bits: u64) -> Value {
        let m = self.c(Type::I64, bits);
        let x = self.bin(Opcode::And, Type::I64, v, m);
        let z = self.c(Type::I64, 0);
        self.icmp(aarchx_ir::IntCond::Ne, Type::I64, x, z)
    }

    /// The requested-feature bitmap of xsave and xrstor: edx:eax & XCR0.
    fn xsave_rfbm(&mut self) -> Value {
        let eax = self.gpr_get(Register::EAX);
        let edx = self.gpr_get(Register::EDX);
        let lo = self.un(Opcode::Zext, Type::I64, eax);
        let hi = self.un(Opcode::Zext, Type::I64, edx);
        let n = self.c(Type::I8, 32);
        let hi = self.bin(Opcode::Shl, Type::I64, hi, n);
        let mask = self.bin(Opcode::Or, Type::I64, lo, hi);
        let xcr0 = self.c(Type::I64, XCR0);
        self.bin(Opcode::And, Type::I64, mask, xcr0)
    }

    /// xgetbv: XCR0 into edx:eax for ecx = 0; any other ecx raises #GP
    /// (this CPU reports no XINUSE read, CPUID.(0xd, 1):eax bit 2).
    pub fn xgetbv(&mut self) -> Outcome {
        let ecx = self.gpr_get(Register::ECX);
        let z = self.c(Type::I32, 0);
        let bad = self.icmp(aarchx_ir::IntCond::Ne, Type::I32, ecx, z);
        self.trap_if(bad, TrapKind::Privileged);
        let lo = self.c(Type::I32, XCR0);
        let hi = self.c(Type::I32, XCR0 >> 32);
        self.gpr_set(Register::EAX, lo);
        self.gpr_set(Register::EDX, hi);
        Outcome::Next
    }

    /// xsave, xsave64: the components of the requested-feature bitmap to
    /// the XSAVE area in the standard format: the x87 part of the legacy
    /// region (bit 0, fxsave's), MXCSR and its mask (bit 1 or 2), the XMM
    /// registers (bit 1), the upper halves of the YMM registers at 576
    /// (bit 2), and those bits set in the header's XSTATE_BV (this CPU
    /// counts every component as in use; the header's other bytes are
    /// not written). The 64-byte alignment #GP is not checked.
    pub fn xsave(&mut self) -> Outcome {
        let rfbm = self.xsave_rfbm();
        let base = self.addr();
        let x87 = self.any_bit(rfbm, 1);
        self.when(x87, |l| {
            l.x87_call(X87Insn::new(X87Op::SaveImage, Operand::Area), Helper::X87);
        });
        let mx = self.any_bit(rfbm, 6);
        self.when(mx, |l| {
            let mxcsr = l.b.get(Reg::MXCSR);
            let at = l.offset(base, 24);
            l.b.store(Type::I32, at, mxcsr);
            let mask = l.c(Type::I32, 0xffff);
            let at = l.offset(base, 28);
            l.b.store(Type::I32, at, mask);
        });
        for (bit, first, regs) in [(2, 160, Reg::xmm as fn(u8) -> Reg), (4, AVX_AREA, Reg::ymm_hi)] {
            let saved = self.any_bit(rfbm, bit);
            self.when(saved, |l| {
                for n in 0..16u8 {
                    let x = l.b.get(regs(n));
                    let at = l.offset(base, first + 16 * u64::from(n));
                    l.b.store(Type::V128, at, x);
                }
            });
        }
        let at = self.offset(base, XSAVE_HEADER);
        let bv = self.b.load(Type::I64, at);
        let bv = self.bin(Opcode::Or, Type::I64, bv, rfbm);
        self.b.store(Type::I64, at, bv);
        Outcome::Next
    }

    /// xrstor, xrstor64 (standard format): each component of the
    /// requested-feature bitmap loaded from the area where XSTATE_BV has
    /// it, else put in its initial configuration (x87: fninit's and every
    /// data register +0; XMM and YMM upper halves zero); MXCSR loaded when
    /// bit 1 or 2 is requested. #GP (SIGSEGV), before anything is
    /// written, for an XSTATE_BV bit outside XCR0, a nonzero XCOMP_BV or
    /// next eight header bytes (a compacted area: this CPU has no
    /// XSAVEC), or a reserved MXCSR bit; a control word outside the x87
    /// model is refused with SIGILL, as by fxrstor. Ends the region, as
    /// ldmxcsr does.
    pub fn xrstor(&mut self) -> Outcome {
        let rfbm = self.xsave_rfbm();
        let base = self.addr();
        let at = self.offset(base, XSAVE_HEADER);
        let bv = self.b.load(Type::I64, at);
        let foreign = self.any_bit(bv, !XCR0);
        let at = self.offset(base, XSAVE_HEADER + 8);
        let comp = self.b.load(Type::I64, at);
        let at = self.offset(base, XSAVE_HEADER + 16);
        let reserved = self.b.load(Type::I64, at);
        let header = self.bin(Opcode::Or, Type::I64, comp, reserved);
        let compacted = self.any_bit(header, u64::MAX);
        let bad = self.bin(Opcode::Or, Type::I1, foreign, compacted);
        self.trap_if(bad, TrapKind::Privileged);
        // Which components load from memory and which are reset.
        let load = self.bin(Opcode::And, Type::I64, rfbm, bv);
        let reset = self.bin(Opcode::AndNot, Type::I64, rfbm, bv);
        let mx = self.any_bit(rfbm, 6);
        let at = self.offset(base, 24);
        let stored = self.b.load(Type::I32, at);
        let current = self.b.get(Reg::MXCSR);
        let mxcsr = self.select(Type::I32, mx, stored, current);
        self.refuse_mxcsr(mxcsr);
        let x87 = self.any_bit(load, 1);
        let stored = self.b.load(Type::I16, base);
        let default = self.c(Type::I16, u64::from(aarchx_ir::GuestState::FPCW_DEFAULT));
        let fpcw = self.select(Type::I16, x87, stored, default);
        self.refuse_fpcw(fpcw);
        self.when(x87, |l| {
            l.x87_call(X87Insn::new(X87Op::RestoreImage, Operand::Area), Helper::X87);
        });
        let x87_reset = self.any_bit(reset, 1);
        self.when(x87_reset, |l| {
            l.x87_call(X87Insn::new(X87Op::Reset, Operand::None), Helper::X87);
        });
        for (bit, first, regs) in [(2, 160, Reg::xmm as fn(u8) -> Reg), (4, AVX_AREA, Reg::ymm_hi)] {
            let loaded = self.any_bit(load, bit);
            self.when(loaded, |l| {
                for n in 0..16u8 {
                    let at = l.offset(base, first + 16 * u64::from(n));
                    let x = l.b.load(Type::V128, at);
                    l.b.set(regs(n), x);
                }
            });
            let zeroed = self.any_bit(reset, bit);
            self.when(zeroed, |l| {
                let z = l.c(Type::I64, 0);
                let zero = l.un(Opcode::Splat, Type::I64X2, z);
                for n in 0..16u8 {
                    l.b.set(regs(n), zero);
                }
            });
        }
        self.set_mxcsr(mxcsr)
    }
}

/// The state components this CPU supports and enables (XCR0): x87, SSE
/// and AVX.
pub const XCR0: u64 = 0b111;
/// Where the XSAVE header starts in the area (standard format).
pub const XSAVE_HEADER: u64 = 512;
/// Where the AVX component (the YMM upper halves) starts (standard format).
pub const AVX_AREA: u64 = 576;
/// The size of the XSAVE area for XCR0 (standard format): the legacy
/// region, the header and the AVX component's 256 bytes.
pub const XSAVE_AREA: u64 = AVX_AREA + 256;
