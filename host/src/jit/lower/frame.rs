//! The block frame and the small emitters every family uses: loading and
//! storing value slots, materialising constants, masking and sign
//! extension at a width, condition codes, and calls into Rust.
//!
//! Register use of the slot layer: operands go in x0-x2 / v0-v2 and
//! results in x3 / v3 (i128 operands in the pairs x0/x1 and x2/x3, results
//! in x4/x5); the op emitters' own temporaries are x9-x11 ([`T0`]-[`T2`])
//! and v16-v18 ([`VT0`]-[`VT2`]); x16 holds a helper's address for `blr`
//! (and the journal cursor), x17 a slot address when an offset is out of
//! an instruction's reach.

use aarchx_ir::{Type, Value};
use dynasmrt::DynasmApi;

use super::{a64, Lowerer, NO_SLOT};
use crate::jit::regs::CTX_REG;

/// Integer temporaries of the op emitters.
pub const T0: u8 = 9;
pub const T1: u8 = 10;
pub const T2: u8 = 11;
/// Vector temporaries of the op emitters.
pub const VT0: u8 = 16;
pub const VT1: u8 = 17;
pub const VT2: u8 = 18;

/// The register a slot is accessed through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// 64-bit integer register.
    X,
    /// 32-bit integer register (zero-extends on load).
    W,
    /// 32-bit float register.
    S,
    /// 64-bit float register.
    D,
    /// 128-bit vector register.
    Q,
}

impl Width {
    fn bytes(self) -> u32 {
        match self {
            Width::W | Width::S => 4,
            Width::X | Width::D => 8,
            Width::Q => 16,
        }
    }

    /// The width a value of `ty` is loaded into a float/vector register with.
    pub fn fp(ty: Type) -> Width {
        match ty.bits() {
            32 => Width::S,
            64 => Width::D,
            _ => Width::Q,
        }
    }
}

/// An arm64 condition code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cc {
    Eq,
    Ne,
    Hs,
    Lo,
    Mi,
    Pl,
    Vs,
    Vc,
    Hi,
    Ls,
    Ge,
    Lt,
    Gt,
    Le,
}

impl Lowerer<'_> {
    /// Frame offset of `v`'s slot.
    pub fn off(&self, v: Value) -> u32 {
        let o = self.slot[v.index()];
        assert_ne!(o, NO_SLOT, "value {} has no slot", v.0);
        o
    }

    /// Loads (`store` false) or stores register `r` of width `w` at frame
    /// offset `off`.
    pub fn slot_access(&mut self, store: bool, w: Width, r: u8, off: u32) {
        let direct = off % w.bytes() == 0 && off / w.bytes() <= 4095;
        let off = if direct {
            off
        } else {
            self.slot_addr(17, off);
            0
        };
        let base = if direct { 31 } else { 17 };
        // Register 31 as a base is sp.
        match (store, w) {
            (false, Width::X) => a64!(self.ops; ldr X(r), [XSP(base), #off]),
            (false, Width::W) => a64!(self.ops; ldr W(r), [XSP(base), #off]),
            (false, Width::S) => a64!(self.ops; ldr S(r), [XSP(base), #off]),
            (false, Width::D) => a64!(self.ops; ldr D(r), [XSP(base), #off]),
            (false, Width::Q) => a64!(self.ops; ldr Q(r), [XSP(base), #off]),
            (true, Width::X) => a64!(self.ops; str X(r), [XSP(base), #off]),
            (true, Width::W) => a64!(self.ops; str W(r), [XSP(base), #off]),
            (true, Width::S) => a64!(self.ops; str S(r), [XSP(base), #off]),
            (true, Width::D) => a64!(self.ops; str D(r), [XSP(base), #off]),
            (true, Width::Q) => a64!(self.ops; str Q(r), [XSP(base), #off]),
        }
    }

    /// `X(r) = sp + off`.
    pub fn slot_addr(&mut self, r: u8, off: u32) {
        if off <= 0xfff {
            a64!(self.ops; add XSP(r), sp, #off);
        } else {
            let (upper, lower) = (off >> 12, off & 0xfff);
            a64!(self.ops
                ; add XSP(r), sp, #upper, lsl #12
                ; add XSP(r), XSP(r), #lower
            );
        }
    }

    /// `X(r) = &slot(v)`.
    pub fn addr_of(&mut self, r: u8, v: Value) {
        let off = self.off(v);
        self.slot_addr(r, off);
    }

    pub fn load(&mut self, w: Width, r: u8, v: Value) {
        let off = self.off(v);
        self.slot_access(false, w, r, off);
    }

    pub fn store(&mut self, w: Width, r: u8, v: Value) {
        let off = self.off(v);
        self.slot_access(true, w, r, off);
    }

    /// Loads the low 8 bytes of `v` into `X(r)`.
    pub fn ldx(&mut self, r: u8, v: Value) {
        self.load(Width::X, r, v);
    }

    pub fn stx(&mut self, r: u8, v: Value) {
        self.store(Width::X, r, v);
    }

    /// Loads the high 8 bytes of a 16-byte slot.
    pub fn ldx_hi(&mut self, r: u8, v: Value) {
        let off = self.off(v) + 8;
        self.slot_access(false, Width::X, r, off);
    }

    pub fn stx_hi(&mut self, r: u8, v: Value) {
        let off = self.off(v) + 8;
        self.slot_access(true, Width::X, r, off);
    }

    pub fn ldq(&mut self, r: u8, v: Value) {
        self.load(Width::Q, r, v);
    }

    pub fn stq(&mut self, r: u8, v: Value) {
        self.store(Width::Q, r, v);
    }

    /// `X(r) = imm`, in one to four instructions.
    pub fn mov64(&mut self, r: u8, imm: u64) {
        if imm == 0 {
            a64!(self.ops; movz X(r), #0);
            return;
        }
        if (!imm) >> 16 == 0 {
            let part = (!imm) as u32;
            a64!(self.ops; movn X(r), #part);
            return;
        }
        let mut first = true;
        for i in 0..4u32 {
            let part = ((imm >> (16 * i)) & 0xffff) as u32;
            if part == 0 {
                continue;
            }
            match (first, i) {
                (true, 0) => a64!(self.ops; movz X(r), #part),
                (true, 1) => a64!(self.ops; movz X(r), #part, lsl #16),
                (true, 2) => a64!(self.ops; movz X(r), #part, lsl #32),
                (true, _) => a64!(self.ops; movz X(r), #part, lsl #48),
                (false, 0) => a64!(self.ops; movk X(r), #part),
                (false, 1) => a64!(self.ops; movk X(r), #part, lsl #16),
                (false, 2) => a64!(self.ops; movk X(r), #part, lsl #32),
                (false, _) => a64!(self.ops; movk X(r), #part, lsl #48),
            }
            first = false;
        }
    }

    /// Zero-extends the low `bits` of `X(r)` in place (no-op at 64).
    pub fn mask(&mut self, r: u8, bits: u32) {
        match bits {
            1 => a64!(self.ops; and XSP(r), X(r), #1),
            8 => a64!(self.ops; and XSP(r), X(r), #0xff),
            16 => a64!(self.ops; and XSP(r), X(r), #0xffff),
            32 => a64!(self.ops; mov W(r), W(r)),
            64 => {}
            _ => panic!("no integer width {bits}"),
        }
    }

    /// Sign-extends the low `bits` of `X(r)` to 64 bits in place.
    pub fn sext(&mut self, r: u8, bits: u32) {
        match bits {
            1 => a64!(self.ops; sbfx X(r), X(r), #0, #1),
            8 => a64!(self.ops; sxtb X(r), W(r)),
            16 => a64!(self.ops; sxth X(r), W(r)),
            32 => a64!(self.ops; sxtw X(r), W(r)),
            64 => {}
            _ => panic!("no integer width {bits}"),
        }
    }

    /// `X(d) = X(s)` sign-extended from `bits`.
    pub fn sext_to(&mut self, d: u8, s: u8, bits: u32) {
        a64!(self.ops; mov X(d), X(s));
        self.sext(d, bits);
    }

    /// `X(d) = cc ? 1 : 0`.
    pub fn cset(&mut self, d: u8, cc: Cc) {
        match cc {
            Cc::Eq => a64!(self.ops; cset X(d), eq),
            Cc::Ne => a64!(self.ops; cset X(d), ne),
            Cc::Hs => a64!(self.ops; cset X(d), hs),
            Cc::Lo => a64!(self.ops; cset X(d), lo),
            Cc::Mi => a64!(self.ops; cset X(d), mi),
            Cc::Pl => a64!(self.ops; cset X(d), pl),
            Cc::Vs => a64!(self.ops; cset X(d), vs),
            Cc::Vc => a64!(self.ops; cset X(d), vc),
            Cc::Hi => a64!(self.ops; cset X(d), hi),
            Cc::Ls => a64!(self.ops; cset X(d), ls),
            Cc::Ge => a64!(self.ops; cset X(d), ge),
            Cc::Lt => a64!(self.ops; cset X(d), lt),
            Cc::Gt => a64!(self.ops; cset X(d), gt),
            Cc::Le => a64!(self.ops; cset X(d), le),
        }
    }

    /// `X(d) = cc ? X(a) : X(b)`.
    pub fn csel(&mut self, d: u8, a: u8, b: u8, cc: Cc) {
        match cc {
            Cc::Eq => a64!(self.ops; csel X(d), X(a), X(b), eq),
            Cc::Ne => a64!(self.ops; csel X(d), X(a), X(b), ne),
            Cc::Hs => a64!(self.ops; csel X(d), X(a), X(b), hs),
            Cc::Lo => a64!(self.ops; csel X(d), X(a), X(b), lo),
            Cc::Mi => a64!(self.ops; csel X(d), X(a), X(b), mi),
            Cc::Pl => a64!(self.ops; csel X(d), X(a), X(b), pl),
            Cc::Vs => a64!(self.ops; csel X(d), X(a), X(b), vs),
            Cc::Vc => a64!(self.ops; csel X(d), X(a), X(b), vc),
            Cc::Hi => a64!(self.ops; csel X(d), X(a), X(b), hi),
            Cc::Ls => a64!(self.ops; csel X(d), X(a), X(b), ls),
            Cc::Ge => a64!(self.ops; csel X(d), X(a), X(b), ge),
            Cc::Lt => a64!(self.ops; csel X(d), X(a), X(b), lt),
            Cc::Gt => a64!(self.ops; csel X(d), X(a), X(b), gt),
            Cc::Le => a64!(self.ops; csel X(d), X(a), X(b), le),
        }
    }

    /// Calls the Rust function whose address is at `ctx_off` in the JIT
    /// context, with arguments already in x0-x3. Clobbers every
    /// caller-saved register.
    pub fn call_ctx(&mut self, ctx_off: u32) {
        a64!(self.ops
            ; ldr x16, [X(CTX_REG), #ctx_off]
            ; blr x16
        );
    }

    /// Allocates the frame: the first code of the region (and the target
    /// of chained branches).
    pub fn prologue(&mut self) {
        let frame = self.frame;
        self.adjust_sp(frame, false);
    }

    /// Frees the frame before leaving the region.
    pub fn pop_frame(&mut self) {
        let frame = self.frame;
        self.adjust_sp(frame, true);
    }

    fn adjust_sp(&mut self, bytes: u32, up: bool) {
        let (upper, lower) = (bytes >> 12, bytes & 0xfff);
        if upper != 0 {
            if up {
                a64!(self.ops; add sp, sp, #upper, lsl #12);
            } else {
                a64!(self.ops; sub sp, sp, #upper, lsl #12);
            }
        }
        if lower != 0 {
            if up {
                a64!(self.ops; add sp, sp, #lower);
            } else {
                a64!(self.ops; sub sp, sp, #lower);
            }
        }
    }
}
